import type { WebhookAttemptRow, WebhookEventDetailRow, WebhookEventRow } from './webhooks.repo.js';

/**
 * An event of the operator's delivery log (`GET /admin/v1/webhooks`): the outbox row's fields
 * named here, so a column added to the table is not answered until it is listed.
 */
export type WebhookEvent = Pick<
  WebhookEventRow,
  'id' | 'resource_type' | 'resource_id' | 'event' | 'url' | 'status' | 'attempts' | 'next_attempt_at' | 'last_error' | 'created_at' | 'delivered_at'
> & {
  /** Still pending, but its last attempt failed: retried at `next_attempt_at` until it is given up (`failed`). */
  failing: boolean;
};

/** One attempt at delivering an event: what the receiver answered, and how fast. */
export type WebhookAttempt = Pick<WebhookAttemptRow, 'attempt' | 'started_at' | 'status_code' | 'latency_ms' | 'error' | 'response_snippet'>;

/** An event with its merchant, what it carries and every attempt (`GET /admin/v1/webhooks/:id`). */
export interface WebhookEventDetail extends Omit<WebhookEvent, 'attempts'> {
  merchant_id: string;
  payload: unknown;
  attempts: WebhookAttempt[];
}

export function toWebhookEvent(row: WebhookEventRow): WebhookEvent {
  return {
    id: row.id,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    event: row.event,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    failing: row.status === 'pending' && row.attempts > 0 && row.last_error !== null,
  };
}

export function toWebhookAttempt(row: WebhookAttemptRow): WebhookAttempt {
  return {
    attempt: row.attempt,
    started_at: row.started_at,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    error: row.error,
    response_snippet: row.response_snippet,
  };
}

export function toWebhookEventDetail(row: WebhookEventDetailRow, attempts: WebhookAttemptRow[]): WebhookEventDetail {
  return { ...toWebhookEvent(row), merchant_id: row.merchant_id, payload: row.payload, attempts: attempts.map(toWebhookAttempt) };
}
