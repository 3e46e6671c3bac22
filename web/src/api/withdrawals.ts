import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';
import { useMoneyMutation } from './idempotency';

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

/** Completing or failing a withdrawal moves money: one Idempotency-Key per intended action, one request at a time. */
export function useWithdrawalAction() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; event: 'complete' | 'fail'; tx_hash?: string; reason?: string }, headers) =>
      post<WithdrawalView>(
        `/admin/v1/withdrawals/${input.id}/${input.event}`,
        input.event === 'complete' ? (input.tx_hash ? { tx_hash: input.tx_hash } : {}) : { reason: input.reason },
        headers,
      ),
    { onSuccess: () => client.invalidateQueries({ queryKey: ['withdrawals'] }) },
  );
}
