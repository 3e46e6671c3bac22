import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { RiskFlag } from '../components/RiskFlagBadge';
import { get, post } from './client';
import { useMoneyMutation } from './idempotency';

export interface Receipt {
  id: string;
  source: string;
  url: string;
  content_type: string | null;
  size_bytes: number | null;
  created_at: string;
}

export interface DisputeCard {
  id: string;
  status: string;
  amount: number | null;
  comment: string | null;
  receipt: Receipt | null;
  decided_amount: number | null;
  decided_by: string | null;
  decided_at: string | null;
  /** Why the person rejected it, in their words. */
  decision_reason: string | null;
  created_at: string;
  /** While open: awaiting_executor, contested or escalated (null for a provider's payment). */
  stage: 'awaiting_executor' | 'contested' | 'escalated' | null;
  answer_due_at: string | null;
  support_due_at: string | null;
  overdue: boolean;
  hold: number | null;
  uncovered: boolean;
  timed_out: string | null;
  executor_answer: {
    kind: 'accepted' | 'contested';
    amount: number | null;
    comment: string | null;
    file: { url: string; content_type: string | null; size_bytes: number | null } | null;
    at: string;
    late: boolean;
  } | null;
  payment: {
    id: string;
    ext_id: string;
    amount: number;
    currency: string;
    method: string;
    status: string;
    merchant_id: string;
    created_at: string;
    is_test?: boolean;
  };
  receipts: Receipt[];
  confirmations: { source: string; receipt_id: string | null; created_at: string }[];
  notifications: { id: string; amount: number; status: string; text: string; received_at: string | null; created_at: string }[];
  /** What the evidence checks flagged on the dispute or its payment (issue 36 item 4). */
  risk_flags?: RiskFlag[];
}

export interface DisputeFilters {
  status?: string;
  /** Open ones in one stage: awaiting_executor, contested, escalated, or overdue. */
  stage?: string;
  /** 'true': only those with a risk flag no person settled yet. */
  flagged?: string;
  limit?: number;
  offset?: number;
}

export function useDisputes(filters: DisputeFilters) {
  return useQuery({
    queryKey: ['disputes', filters],
    queryFn: () => get<{ disputes: DisputeCard[]; limit: number; offset: number }>('/admin/v1/disputes', { ...filters }),
    refetchInterval: 15_000,
  });
}

/**
 * Approve with the amount received, or reject with the person's reason (the screen confirms
 * either first). A decision moves money: one Idempotency-Key per intended decision, one request
 * at a time; the queue refreshes.
 */
export function useDecideDispute() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { paymentId: string; approve: true; amount: number } | { paymentId: string; approve: false; reason: string }, headers) =>
      input.approve
        ? post(`/admin/v1/payments/${input.paymentId}/dispute/approve`, { amount: input.amount }, headers)
        : post(`/admin/v1/payments/${input.paymentId}/dispute/reject`, { reason: input.reason }, headers),
    { onSuccess: () => client.invalidateQueries({ queryKey: ['disputes'] }) },
  );
}

/** A receipt the merchant gave as a link to elsewhere, not a file Kassir stores. */
export function isExternalReceipt(receipt: Receipt): boolean {
  return receipt.content_type === null;
}

/** A receipt's address: a stored file on this origin (the API answers absolute URLs under PUBLIC_BASE_URL), or the merchant's link. */
export function receiptPath(receipt: Receipt): string {
  return isExternalReceipt(receipt) ? receipt.url : `/admin/v1/receipts/${receipt.id}?inline=true`;
}
