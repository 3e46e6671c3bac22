import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post, withQuery } from './client';

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
  [key: string]: unknown;
}

export interface TimelineItem {
  at: string;
  kind: string;
  [key: string]: unknown;
}

export type PaymentFilters = Record<string, string | undefined>;

export function usePayments(filters: PaymentFilters) {
  return useQuery({
    queryKey: ['payments', filters],
    queryFn: () => get<{ payments: PaymentView[]; total: number }>('/admin/v1/payments', filters),
    refetchInterval: 15_000,
  });
}

/** The same filtered list as a CSV file, downloaded by the browser with the session cookie. */
export function paymentsCsvPath(filters: PaymentFilters): string {
  const { offset: _offset, limit: _limit, ...rest } = filters;
  return withQuery('/admin/v1/payments', { ...rest, format: 'csv' });
}

export function usePayment(id: string) {
  return useQuery({ queryKey: ['payments', 'one', id], queryFn: () => get<PaymentView>(`/admin/v1/payments/${id}`) });
}

export function usePaymentTimeline(id: string) {
  return useQuery({
    queryKey: ['payments', 'timeline', id],
    queryFn: () => get<{ timeline?: TimelineItem[]; events?: TimelineItem[] }>(`/admin/v1/payments/${id}/timeline`),
  });
}

export function useCancelPayment() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => post(`/admin/v1/payments/${id}/cancel`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['payments'] }),
  });
}
