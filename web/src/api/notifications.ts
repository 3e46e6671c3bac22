import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from './client';
import { useMoneyMutation } from './idempotency';

export interface NotificationView {
  id: string;
  executor_id: string;
  requisite_id: string | null;
  amount: number | null;
  text: string;
  received_at: string | null;
  parsed_bank: string | null;
  status: 'matched' | 'unmatched' | 'late' | 'resolved';
  payment_id: string | null;
  candidate_payment_id: string | null;
  resolved_note: string | null;
  created_at: string;
}

export function useNotifications(filters: { status?: string; limit?: number; offset?: number }) {
  return useQuery({
    queryKey: ['notifications', filters],
    queryFn: () => get<{ notifications: NotificationView[] }>('/admin/v1/notifications', { ...filters }),
    refetchInterval: 15_000,
  });
}

/** Linking completes the payment (money moves): one Idempotency-Key per intended link, one request at a time. */
export function useLinkNotification() {
  const client = useQueryClient();
  return useMoneyMutation(
    (input: { id: string; paymentId: string }, headers) => post(`/admin/v1/notifications/${input.id}/link`, { payment_id: input.paymentId }, headers),
    { onSuccess: () => client.invalidateQueries({ queryKey: ['notifications'] }) },
  );
}

export function useResolveNotification() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; note: string }) => post(`/admin/v1/notifications/${input.id}/resolve`, { note: input.note }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['notifications'] }),
  });
}
