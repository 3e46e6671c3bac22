import { prepared, type Tx } from '../db/pool.js';

/** The graphile-worker task that delivers a resource's pending webhook events in order. */
export const DELIVER_TASK = 'webhooks_deliver';

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
 * Writes webhook events into the outbox and schedules their delivery, inside the caller's
 * transaction: an event exists if and only if its status change committed. Delivery happens
 * later, from the job queue, never inline. One job key and one queue per resource: a resource's
 * events are delivered one at a time, in order. Events without a URL are not written.
 */
export async function enqueueWebhooks(tx: Tx, events: OutboxEvent[]): Promise<void> {
  const withUrl = events.filter((e) => e.url);
  if (withUrl.length === 0) return;
  await tx.query(
    prepared(
      `WITH event AS (
         INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, notification_token)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::jsonb[], $6::text[], $7::text[])
         RETURNING resource_id
       )
       SELECT graphile_worker.add_job($8, json_build_object('resource_id', r.resource_id::text),
                                      queue_name => 'webhooks:' || r.resource_id, job_key => 'webhooks:' || r.resource_id, run_at => now())
         FROM (SELECT DISTINCT resource_id FROM event) r`,
      [
        withUrl.map((e) => e.merchantId),
        withUrl.map((e) => e.resourceType),
        withUrl.map((e) => e.resourceId),
        withUrl.map((e) => e.event),
        withUrl.map((e) => JSON.stringify(e.payload)),
        withUrl.map((e) => e.url),
        withUrl.map((e) => e.notificationToken),
        DELIVER_TASK,
      ],
    ),
  );
}

/** Schedules delivery of a resource's pending events (after an operator re-send, or a retry). */
export async function scheduleDelivery(db: Tx | import('../db/pool.js').Db, resourceId: string, runAt: Date | null = null): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job($1, json_build_object('resource_id', $2::text), queue_name => $3, job_key => $3, run_at => coalesce($4, now()))`,
    [DELIVER_TASK, resourceId, deliveryKey(resourceId), runAt],
  );
}

export function deliveryKey(resourceId: string): string {
  return `webhooks:${resourceId}`;
}
