import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';

export interface WithdrawalView {
  id: string;
  amount: number;
  address: string;
  status: string;
  created_at: string;
  merchant_id: string | null;
  executor_id: string | null;
  send_amount: number;
  tx_hash: string | null;
  failure_reason: string | null;
}

export function useWithdrawals(filters: { status?: string; owner?: string; limit?: number; offset?: number }) {
  return useQuery({
    queryKey: ['withdrawals', filters],
    queryFn: () => get<{ withdrawals: WithdrawalView[]; total?: number }>('/admin/v1/withdrawals', { ...filters }),
    refetchInterval: 15_000,
  });
}

export function useWithdrawalAction() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; event: 'complete' | 'fail'; tx_hash?: string; reason?: string }) =>
      post<WithdrawalView>(
        `/admin/v1/withdrawals/${input.id}/${input.event}`,
        input.event === 'complete' ? (input.tx_hash ? { tx_hash: input.tx_hash } : {}) : { reason: input.reason },
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['withdrawals'] }),
  });
}
