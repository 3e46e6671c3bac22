import { Type } from 'typebox';

/**
 * What the routes of webhooks.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A webhook delivery as the operator's list shows it (`attempts`: how many were made). */
const WebhookDelivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  resource_type: Type.String(),
  resource_id: Type.String({ format: 'uuid' }),
  event: Type.String(),
  url: Type.String(),
  status: Type.String(),
  attempts: Type.Number(),
  next_attempt_at: Type.String({ format: 'date-time' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  failing: Type.Boolean({ description: 'pending, but its last attempt failed: retried at next_attempt_at until given up (failed)' }),
});

/** GET /admin/v1/webhooks */
export const AdminListWebhooksAnswer = Type.Object({
  webhooks: Type.Array(WebhookDelivery),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/webhooks/{id}: the delivery with each attempt, whose it is and what it sends. */
export const AdminGetWebhookAnswer = Type.Object({
  ...WebhookDelivery.properties,
  attempts: Type.Array(
    Type.Object({
      attempt: Type.Number(),
      started_at: Type.String({ format: 'date-time' }),
      status_code: Type.Union([Type.Number(), Type.Null()]),
      latency_ms: Type.Number(),
      error: Type.Union([Type.String(), Type.Null()]),
      response_snippet: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  payload: Type.Object({
    id: Type.String({ format: 'uuid' }),
    rate: Type.Number(),
    amount: Type.Number(),
    ext_id: Type.String(),
    method: Type.String(),
    status: Type.String(),
    currency: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    payin_rate: Type.Number(),
    requisites: Type.Object({
      bank: Type.Union([Type.String(), Type.Null()]),
      type: Type.String(),
      value: Type.String(),
      holder: Type.String(),
      bank_code: Type.Union([Type.String(), Type.Null()]),
      bank_name: Type.String(),
    }),
    payment_url: Type.String(),
    terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    terminal_name: Type.Union([Type.String(), Type.Null()]),
  }),
});

/** POST /admin/v1/webhooks/{id}/resend */
export const AdminResendWebhookAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String(),
});
