import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { hmacSha1Base64 } from '../lib/crypto.js';
import { scheduleDelivery } from './outbox.js';
import { sendWebhook } from './sender.js';

interface EventRow {
  id: string;
  merchant_id: string;
  event: string;
  payload: unknown;
  url: string;
  notification_token: string | null;
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
}

/** The exact bytes sent for an event: the same on every attempt, so the signature is too. */
export function webhookBody(event: Pick<EventRow, 'id' | 'event' | 'payload' | 'created_at'>): string {
  return JSON.stringify({ event: event.event, id: event.id, created_at: event.created_at.toISOString(), data: event.payload });
}

/** Exponential backoff with full jitter in [½, 1½) of the step, capped at two hours. */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  const step = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 2 * 3600_000);
  // floor, not round: rounding could reach 1½ × step itself when random() is close to 1.
  return Math.floor(step * (0.5 + random()));
}

/**
 * Delivers the pending webhook events of one resource, oldest first (DESIGN.md decision 9:
 * "Deliveries of one resource go out in order"). A 2xx ends an event's delivery; anything else
 * records the attempt and schedules the next one with backoff, leaving later events waiting
 * behind it; after `webhookRetryHours` the event is marked failed and the next one proceeds.
 * The queue runs one job per resource at a time, so an event is never sent by two workers at once.
 */
export function deliverTask(ctx: AppContext): Task {
  return async (payload) => {
    const resourceId = (payload as { resource_id: string }).resource_id;
    for (;;) {
      const { rows } = await ctx.db.query<EventRow>(
        `SELECT id, merchant_id, event, payload, url, notification_token, attempts, next_attempt_at, created_at
           FROM webhook_events WHERE resource_id = $1 AND status = 'pending' ORDER BY seq LIMIT 1`,
        [resourceId],
      );
      const event = rows[0];
      if (!event) return;
      if (event.next_attempt_at.getTime() > Date.now()) {
        await scheduleDelivery(ctx.db, resourceId, event.next_attempt_at);
        return;
      }
      const body = webhookBody(event);
      const secret = await signingSecret(ctx, event.merchant_id);
      const headers: Record<string, string> = {
        'x-event-id': event.id,
        'x-signature': hmacSha1Base64(secret, body),
        'user-agent': 'Kassir-Webhooks/1',
      };
      if (event.notification_token) headers['x-notification-token'] = event.notification_token;
      const startedAt = new Date();
      const result = await sendWebhook({
        url: event.url,
        body,
        headers,
        timeoutMs: ctx.config.webhookTimeoutMs,
        allowPrivate: ctx.config.webhookAllowPrivate,
      });
      const attempt = event.attempts + 1;
      const givingUp = !result.ok && Date.now() - event.created_at.getTime() >= ctx.config.webhookRetryHours * 3600_000;
      const nextAttemptAt = new Date(Date.now() + retryDelayMs(attempt, ctx.config.webhookRetryBaseMs));
      await ctx.db.query(
        `WITH attempt AS (
           INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms, error, response_snippet)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
         )
         UPDATE webhook_events SET attempts = $2, last_error = $6,
                status = CASE WHEN $8 THEN 'delivered' WHEN $9 THEN 'failed' ELSE 'pending' END,
                delivered_at = CASE WHEN $8 THEN now() ELSE NULL END,
                next_attempt_at = $10
          WHERE id = $1`,
        [event.id, attempt, startedAt, result.status, Math.round(result.latencyMs), result.error ?? null,
          result.responseSnippet ?? null, result.ok, givingUp, nextAttemptAt],
      );
      if (!result.ok) {
        ctx.log.warn({ event_id: event.id, attempt, status: result.status, error: result.error, gave_up: givingUp }, 'webhook delivery failed');
        if (!givingUp) {
          await scheduleDelivery(ctx.db, resourceId, nextAttemptAt);
          return;
        }
      }
    }
  };
}

/** The merchant's newest valid Secret Key signs its webhooks. */
async function signingSecret(ctx: AppContext, merchantId: string): Promise<string> {
  const { rows } = await ctx.db.query<{ secret_enc: string }>(
    `SELECT secret_enc FROM merchant_secrets WHERE merchant_id = $1 AND (expires_at IS NULL OR expires_at > now())
      ORDER BY created_at DESC LIMIT 1`,
    [merchantId],
  );
  if (!rows[0]) throw new Error(`merchant ${merchantId} has no valid secret key to sign webhooks with`);
  return ctx.box.open(rows[0].secret_enc);
}
