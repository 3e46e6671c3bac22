import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, patch, post } from './client';

// The directory of banks and mobile operators that requisites name.

export interface BankView {
  code: string;
  name: string;
  country: string;
  kind: 'bank' | 'operator';
  is_active: boolean;
  operator_code: string | null;
}

export function useBanks() {
  return useQuery({ queryKey: ['banks'], queryFn: () => get<{ banks: BankView[] }>('/admin/v1/banks') });
}

export function useCreateBank() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { code: string; name: string; country: string; kind: 'bank' | 'operator' }) => post<BankView>('/admin/v1/banks', input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['banks'] }),
  });
}

export function useUpdateBank() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { code: string; is_active: boolean }) => patch<BankView>(`/admin/v1/banks/${input.code}`, { is_active: input.is_active }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['banks'] }),
  });
}

/** The public directory (code → display name), which every area may read: screens name banks by it, never by code. */
export function useBankDirectory() {
  return useQuery({
    queryKey: ['banks', 'public'],
    queryFn: () => get<{ banks: { code: string; name: string }[] }>('/v1/public/banks'),
    staleTime: 10 * 60_000,
  });
}
