import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { RiskFlag } from '../components/RiskFlagBadge';
import { useApiBase } from './area';
import { get, post, withQuery } from './client';
import { useMoneyMutation } from './idempotency';

export interface PaymentView {
  id: string;
  ext_id: string;
  amount: number;
  currency: string;
  method: string;
  status: string;
  merchant_id: string;
  created_at: string;
  requisites?: Record<string, unknown> | null;
  client_id?: string | null;
  cancel_reason?: string | null;
  /** The words of whoever cancelled it or rejected its dispute (the operator's view only). */
  cancel_note?: string | null;
  /** A test terminal's payment (test mode): test requisites, no money moved. */
  is_test?: boolean;
  /** What the evidence checks flagged (the operator's view only; issue 36 item 4). */
  risk_flags?: RiskFlag[];
  [key: string]: unknown;
}

export interface TimelineItem {
  at: string;
  kind: string;
  [key: string]: unknown;
}

export type PaymentFilters = Record<string, string | undefined>;

export function usePayments(filters: PaymentFilters) {
  const base = useApiBase();
  return useQuery({
    queryKey: ['payments', base, filters],
    queryFn: () => get<{ payments: PaymentView[]; total: number }>(`${base}/payments`, filters),
    refetchInterval: 15_000,
  });
}

/** The same filtered list as a CSV file, downloaded by the browser with the session cookie. */
export function paymentsCsvPath(base: string, filters: PaymentFilters): string {
  const { offset: _offset, limit: _limit, ...rest } = filters;
  return withQuery(`${base}/payments`, { ...rest, format: 'csv' });
}

export function usePayment(id: string) {
  const base = useApiBase();
  return useQuery({ queryKey: ['payments', 'one', id], queryFn: () => get<PaymentView>(`${base}/payments/${id}`) });
}

export function usePaymentTimeline(id: string) {
  const base = useApiBase();
  return useQuery({
    queryKey: ['payments', 'timeline', id],
    queryFn: () => get<{ timeline?: TimelineItem[]; events?: TimelineItem[] }>(`${base}/payments/${id}/timeline`),
  });
}

/** Cancels a PENDING payment with the person's reason (the screen confirms first); the hold it releases is money, so it is sent once per intended cancellation. */
export function useCancelPayment() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; reason: string }, headers) => post(`/admin/v1/payments/${input.id}/cancel`, { reason: input.reason }, headers),
    {
      onSuccess: () => client.invalidateQueries({ queryKey: ['payments'] }),
    },
  );
}
