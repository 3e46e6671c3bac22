import { prepared, type Queryable, type Tx } from '../db/pool.js';

/** The graphile-worker task that delivers due webhook events (webhooks/dispatch.ts). */
export const DISPATCH_TASK = 'webhooks_dispatch';
/** The job key of "dispatch now": one such job waits at a time, however many ask for it. */
export const DISPATCH_KEY = 'webhooks_dispatch';
/** The channel migration 013 announces new events on. */
export const WEBHOOK_CHANNEL = 'kassir_webhooks';

export interface OutboxEvent {
  merchantId: string;
  resourceType: 'payment' | 'payout';
  resourceId: string;
  /** `payment.<status lower-case>` or `payout.<status>` (DESIGN.md decision 9). */
  event: string;
  /** The resource as GET returns it. */
  payload: unknown;
  url: string | null;
  notificationToken: string | null;
}

/**
 * Writes webhook events into the outbox, inside the caller's transaction: an event exists if and
 * only if its status change committed. Delivery happens later, from the job queue, never inline:
 * the insert announces itself at COMMIT (migration 013) and a dispatch job delivers the events,
 * a resource's one at a time, in order. Events without a URL are not written.
 */
export async function enqueueWebhooks(tx: Tx, events: OutboxEvent[]): Promise<void> {
  const withUrl = events.filter((e) => e.url);
  if (withUrl.length === 0) return;
  await tx.query(
    prepared(
      `INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, notification_token)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::jsonb[], $6::text[], $7::text[])`,
      [
        withUrl.map((e) => e.merchantId),
        withUrl.map((e) => e.resourceType),
        withUrl.map((e) => e.resourceId),
        withUrl.map((e) => e.event),
        withUrl.map((e) => JSON.stringify(e.payload)),
        withUrl.map((e) => e.url),
        withUrl.map((e) => e.notificationToken),
      ],
    ),
  );
}

/**
 * Schedules a dispatch of the events due by then: now (an operator's re-send), or at a failed
 * delivery's next attempt under a key of its resource's own, so that retries of different
 * resources do not push each other back.
 */
export async function scheduleDispatch(db: Queryable, options: { runAt?: Date; key?: string } = {}): Promise<void> {
  await db.query(`SELECT graphile_worker.add_job($1, '{}'::json, job_key => $2, run_at => coalesce($3, now()))`, [
    DISPATCH_TASK,
    options.key ?? DISPATCH_KEY,
    options.runAt ?? null,
  ]);
}

/** The job key of a resource's next retry. */
export function retryKey(resourceId: string): string {
  return `webhooks_retry:${resourceId}`;
}
