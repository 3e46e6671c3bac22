import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';
import { useMoneyMutation } from './idempotency';

export interface PayoutView {
  id: string;
  ext_id: string;
  amount: number;
  currency: string;
  method: string;
  requisites: string;
  holder_name: string | null;
  bank: string | null;
  status: string;
  created_at: string;
  completed_at: string | null;
  merchant_id: string;
  executor_id: string | null;
  failure_reason: string | null;
  /** A test terminal's payout (test mode): reserved nothing, offered to no executor. */
  is_test?: boolean;
  has_proof?: boolean;
  /** Who paid a completed payout (null until then). */
  paid_by?: { executor: string | null; provider: string | null; person: string | null } | null;
}

/** The proof a completed payout was paid with, shown in the browser. */
export function payoutProofPath(id: string): string {
  return `/admin/v1/payouts/${id}/proof`;
}

export function usePayouts(filters: { status?: string; limit?: number; offset?: number }) {
  return useQuery({
    queryKey: ['payouts', filters],
    queryFn: () => get<{ payouts: PayoutView[]; total?: number }>('/admin/v1/payouts', { ...filters }),
    refetchInterval: 15_000,
  });
}

/** Completing or failing a payout moves money: one Idempotency-Key per intended action, one request at a time. */
export function usePayoutAction() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; event: 'complete' | 'fail' | 'cancel'; reason?: string }, headers) =>
      post<PayoutView>(`/admin/v1/payouts/${input.id}/${input.event}`, input.reason ? { reason: input.reason } : {}, headers),
    { onSuccess: () => client.invalidateQueries({ queryKey: ['payouts'] }) },
  );
}
