import type { AppContext } from '../context.js';
import type { Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { scheduleDispatch } from './outbox.js';
import * as repo from './webhooks.repo.js';
import { toWebhookEvent, toWebhookEventDetail, type WebhookEvent, type WebhookEventDetail } from './webhooks.schemas.js';

/** A status, or `failing` (pending after a failed attempt) or `attention` (failing or failed). */
const STATUSES = ['pending', 'delivered', 'failed', 'failing', 'attention'];

/** The delivery log, newest first: all events, or one resource's, or those in one status (or failing, or needing attention). */
export async function listWebhookEvents(
  ctx: AppContext,
  filter: { resourceId?: string; status?: string; merchantId?: string; limit: number; offset: number },
): Promise<WebhookEvent[]> {
  if (filter.resourceId !== undefined && !/^[0-9a-f-]{36}$/i.test(filter.resourceId)) throw new DomainError('VALIDATION', 'resource_id must be a UUID');
  if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
    throw new DomainError('VALIDATION', 'status must be one of pending, delivered, failed, failing, attention');
  }
  return (await repo.listEvents(ctx.db, filter)).map(toWebhookEvent);
}

/** One event with its attempts; with `merchantId`, only that merchant's (another's is not found). */
export async function getWebhookEvent(ctx: AppContext, id: string, merchantId?: string): Promise<WebhookEventDetail> {
  const row = await repo.findEvent(ctx.db, id, merchantId);
  if (!row) throw new DomainError('NOT_FOUND', `Webhook event ${id} not found`);
  return toWebhookEventDetail(row, await repo.listAttempts(ctx.db, id));
}

/**
 * Makes an event due again now, whatever became of it (same event id, so the merchant can
 * deduplicate), and schedules a dispatch, in the caller's transaction; returns the status it had.
 */
export async function resendWebhookEvent(tx: Tx, id: string, merchantId?: string): Promise<{ id: string; status: string }> {
  const row = await repo.markForResend(tx, id, merchantId);
  if (!row) throw new DomainError('NOT_FOUND', `Webhook event ${id} not found`);
  await scheduleDispatch(tx);
  return { id: row.id, status: row.status };
}
