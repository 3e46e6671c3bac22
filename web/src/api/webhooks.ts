import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApiBase } from './area';
import { get, post } from './client';

// Webhook events and their delivery attempts, on the area's API (the operator's or the merchant's).

export interface WebhookView {
  id: string;
  resource_type: string;
  resource_id: string;
  event: string;
  url: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  /** Pending, but its last attempt failed: retried at next_attempt_at until it is given up. */
  failing: boolean;
}

export function useWebhooks(filters: { status?: string; resource_id?: string; limit: number; offset: number }) {
  const base = useApiBase();
  return useQuery({
    queryKey: ['webhooks', base, filters],
    queryFn: () => get<{ webhooks: WebhookView[] }>(`${base}/webhooks`, filters),
    refetchInterval: 10_000,
  });
}

export interface WebhookAttempt {
  attempt: number;
  started_at: string;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  response_snippet: string | null;
}

/** One webhook event with its payload and every delivery attempt (fetched when the row is opened). */
export function useWebhook(id: string | undefined) {
  const base = useApiBase();
  return useQuery({
    queryKey: ['webhooks', 'one', id],
    queryFn: () => get<WebhookView & { payload: unknown; attempts: WebhookAttempt[] }>(`${base}/webhooks/${id}`),
    enabled: id !== undefined,
  });
}

export function useResendWebhook() {
  const client = useQueryClient();
  const base = useApiBase();
  return useMutation({
    mutationFn: (id: string) => post(`${base}/webhooks/${id}/resend`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['webhooks'] }),
  });
}
