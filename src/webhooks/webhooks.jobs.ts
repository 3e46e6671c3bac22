import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { hmacSha1Base64 } from '../lib/crypto.js';
import { maskUrl } from '../lib/mask.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import { readAlertSettings } from '../settings.js';
import { DeliveryRecords } from './deliveries.js';
import { retryKey, scheduleDispatch } from './outbox.js';
import { sendWebhook } from './sender.js';
import { type AttemptOutcome, countEndpointFailure, type DueEventRow, leaseDueEvents, recordAttempt, recordDeliveries } from './webhooks.repo.js';

/** Deliveries one dispatch keeps in flight at most. */
const PARALLEL = 32;
/** A dispatch hands over to a fresh job after this long, so that one job never runs for ever. */
const RUN_MS = 30_000;
/** How long past its time limit an attempt's lease lasts: the lease must outlive the attempt. */
const LEASE_MARGIN_MS = 60_000;

/** The exact bytes sent for an event: the same on every attempt, so the signature is too. */
export function webhookBody(event: Pick<DueEventRow, 'id' | 'event' | 'payload' | 'created_at'>): string {
  return JSON.stringify({ event: event.event, id: event.id, created_at: event.created_at.toISOString(), data: event.payload });
}

/** Exponential backoff with full jitter in [½, 1½) of the step, capped at two hours. */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  const step = Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 2 * 3600_000);
  // floor, not round: rounding could reach 1½ × step itself when random() is close to 1.
  return Math.floor(step * (0.5 + random()));
}

/** The dispatch job: delivers what is due; past RUN_MS, queues a fresh dispatch for the rest. */
export function dispatchTask(ctx: AppContext): Task {
  // One for the instance: the deliveries of all its dispatches are recorded together.
  const records = new DeliveryRecords(ctx.db, ctx.metrics);
  return async () => {
    if (await dispatchDue(ctx, records, RUN_MS)) await scheduleDispatch(ctx.db);
  };
}

/**
 * Delivers the due webhook events (DESIGN.md decision 9) until none is left, or until `maxMs` has
 * passed (then returns true). Events are leased a batch at a time and delivered concurrently, up
 * to PARALLEL at once; each outcome is recorded as soon as it is known, which makes the next
 * event of that resource due. Any number of dispatches may run at once, on any instances: a
 * lease is taken with SKIP LOCKED, so an event is never sent by two of them (unless its lease
 * ran out, its dispatcher having died: delivery is at least once).
 */
async function dispatchDue(ctx: AppContext, records: DeliveryRecords, maxMs: number): Promise<boolean> {
  const started = Date.now();
  const leaseSeconds = (2 * ctx.config.webhookTimeoutMs + LEASE_MARGIN_MS) / 1000;
  const inFlight = new Set<Promise<void>>();
  for (;;) {
    const overtime = Date.now() - started >= maxMs;
    // Leases are taken in batches: only once half the slots are free again.
    if (!overtime && inFlight.size <= PARALLEL / 2) {
      for (const event of await leaseDueEvents(ctx.db, PARALLEL - inFlight.size, leaseSeconds)) {
        const delivery: Promise<void> = deliver(ctx, records, event)
          .catch((err: unknown) => ctx.log.error({ err, event_id: event.id }, 'webhook delivery could not be recorded; it is retried when its lease runs out'))
          .finally(() => inFlight.delete(delivery));
        inFlight.add(delivery);
      }
    }
    if (inFlight.size === 0) return overtime;
    await Promise.race(inFlight);
  }
}

/**
 * One attempt at one leased event. A 2xx ends its delivery; anything else is recorded and the
 * next attempt scheduled with backoff, later events of the resource waiting behind it; after
 * `webhookRetryHours` the event is marked failed and the next one proceeds.
 */
async function deliver(ctx: AppContext, records: DeliveryRecords, event: DueEventRow): Promise<void> {
  if (!event.secret_enc) throw new Error(`merchant ${event.merchant_id} has no valid secret key to sign webhooks with`);
  const body = webhookBody(event);
  const headers: Record<string, string> = {
    'x-event-id': event.id,
    'x-signature': hmacSha1Base64(ctx.box.open(event.secret_enc), body),
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
  await recordOutcome(
    ctx,
    event,
    {
      eventId: event.id,
      attempt,
      startedAt,
      statusCode: result.status,
      latencyMs: Math.round(result.latencyMs),
      error: result.error ?? null,
      responseSnippet: result.responseSnippet ?? null,
      delivered: result.ok,
      givingUp,
      nextAttemptAt,
    },
    records,
  );
  // Counted once recorded: an attempt whose outcome could not be recorded is made again.
  ctx.metrics.webhookAttempt(
    result.ok ? 'delivered' : givingUp ? 'failed' : 'retrying',
    result.ok ? (Date.now() - event.created_at.getTime()) / 1000 : undefined,
  );
  if (!result.ok) {
    ctx.log.warn({ event_id: event.id, attempt, status: result.status, error: result.error, gave_up: givingUp }, 'webhook delivery failed');
    if (!givingUp) await scheduleDispatch(ctx.db, { runAt: nextAttemptAt, key: retryKey(event.resource_id) });
  }
}

/**
 * Records an attempt and what it says of the merchant's endpoint (issue 37): a delivery ends its
 * run of failures; a failure counts, and the one that reaches the operator's `webhook_failures`
 * (GET /admin/v1/alerts, default 3) tells the merchant, in the transaction that counted it, once per run.
 * A delivery is recorded in one statement, with the others of `records` that end meanwhile.
 */
export async function recordOutcome(ctx: AppContext, event: DueEventRow, outcome: AttemptOutcome, records?: DeliveryRecords): Promise<void> {
  if (outcome.delivered) {
    const delivery = { outcome, merchantId: event.merchant_id, url: event.url };
    await (records ? records.record(delivery) : recordDeliveries(ctx.db, [delivery]));
    return;
  }
  const { webhook_failures: threshold } = await readAlertSettings(ctx.db);
  await transaction(ctx.db, async (tx) => {
    await recordAttempt(tx, outcome);
    const endpoint = await countEndpointFailure(tx, event.merchant_id, event.url);
    if (endpoint.failures !== threshold) return;
    await enqueuePersonMessage(
      tx,
      { merchantId: event.merchant_id },
      {
        kind: 'webhook_failing',
        eventKey: `webhook_failing:${event.merchant_id}:${endpoint.failing_since.getTime()}:${event.url}`,
        data: {
          // Masked as the log masks it: a card or phone number in a URL never leaves in clear.
          url: maskUrl(event.url),
          failures: endpoint.failures,
          status: outcome.statusCode,
          error: outcome.error,
        },
      },
    );
  });
}
