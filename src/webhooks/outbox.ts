import type { Queryable, Tx } from '../db/pool.js';
import * as repo from './webhooks.repo.js';

/** The graphile-worker task that delivers due webhook events (webhooks/webhooks.jobs.ts). */
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
  const withUrl = events.filter((e): e is OutboxEvent & { url: string } => e.url !== null && e.url !== '');
  if (withUrl.length === 0) return;
  await repo.insertEvents(tx, withUrl);
}

/**
 * Schedules a dispatch of the events due by then: now (an operator's re-send), or at a failed
 * delivery's next attempt under a key of its resource's own, so that retries of different
 * resources do not push each other back.
 */
export async function scheduleDispatch(db: Queryable, options: { runAt?: Date; key?: string } = {}): Promise<void> {
  await repo.addJob(db, DISPATCH_TASK, options.key ?? DISPATCH_KEY, options.runAt ?? null);
}

/** The job key of a resource's next retry. */
export function retryKey(resourceId: string): string {
  return `webhooks_retry:${resourceId}`;
}
