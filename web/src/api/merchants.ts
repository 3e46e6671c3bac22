import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';
import type { TerminalView } from './terminals';

// Merchants as the operator sees them, each with its terminals (api/terminals.ts).

export interface MerchantView {
  id: string;
  name: string;
  terminals: number;
  created_at: string;
}

export function useMerchants() {
  return useQuery({ queryKey: ['merchants'], queryFn: () => get<{ merchants: MerchantView[] }>('/admin/v1/merchants') });
}

export function useMerchant(id: string) {
  return useQuery({ queryKey: ['merchants', id], queryFn: () => get<MerchantView & { terminals: TerminalView[] }>(`/admin/v1/merchants/${id}`) });
}

export function useCreateMerchant() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => post<{ id: string; name: string; secret_key: string }>('/admin/v1/merchants', { name }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['merchants'] }),
  });
}
