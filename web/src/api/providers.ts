import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, patch, post } from './client';

// Outside providers a terminal's route can send payments to, with their circuit breakers.

export interface ProviderView {
  id: string;
  name: string;
  kind: string;
  base_url: string;
  is_active: boolean;
  callback_url: string;
  breaker: { failures: number; open_until: string | null };
  created_at: string;
}

export function useProviders() {
  return useQuery({ queryKey: ['providers'], queryFn: () => get<{ providers: ProviderView[] }>('/admin/v1/providers') });
}

export function useCreateProvider() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { name: string; kind: string; base_url: string; api_key: string; secret_key: string }) =>
      post<{ id: string; callback_url: string }>('/admin/v1/providers', input),
    onSuccess: () => client.invalidateQueries({ queryKey: ['providers'] }),
  });
}

export function useUpdateProvider() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; is_active: boolean }) => patch<ProviderView>(`/admin/v1/providers/${input.id}`, { is_active: input.is_active }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['providers'] }),
  });
}
