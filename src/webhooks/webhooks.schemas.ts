import type { WebhookAttemptRow, WebhookEventDetailRow, WebhookEventRow } from './webhooks.repo.js';

/** An event of the operator's delivery log (`GET /admin/v1/webhooks`). */
export interface WebhookEvent {
  id: string;
  resource_type: 'payment' | 'payout';
  resource_id: string;
  event: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  /** How many attempts were made. */
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** One attempt at delivering an event: what the receiver answered, and how fast. */
export interface WebhookAttempt {
  attempt: number;
  started_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_snippet: string | null;
}

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
  return {
    id: row.id,
    merchant_id: row.merchant_id,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    event: row.event,
    payload: row.payload,
    url: row.url,
    status: row.status,
    attempts: attempts.map(toWebhookAttempt),
    next_attempt_at: row.next_attempt_at,
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
  };
}
