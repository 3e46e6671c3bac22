import type { Task } from 'graphile-worker';
import { fileTypeFromBuffer } from 'file-type';
import type { AppContext } from '../context.js';
import { transaction, type Queryable, type Tx } from '../db/pool.js';
import { lockPayment } from '../payments/payments.repo.js';
import { findReceipt } from '../receipts/receipts.repo.js';
import { MAX_RECEIPT_BYTES } from '../receipts/upload.js';
import { fetchGuarded } from '../webhooks/sender.js';
import { applyProviderStatus } from './apply.js';
import { ProviderError, type ReceiptFile } from './provider.js';
import { findProvider } from './providers.repo.js';
import { adapterFor } from './providers.service.js';

export const ACTIONS_TASK = 'providers_actions';
export const POLL_TASK = 'providers_poll';

/**
 * Queues work at the provider for a provider-executed payment, in the caller's transaction:
 * opening a dispute, forwarding a receipt, cancelling a dispute. A job carries them out in order.
 */
export async function enqueueProviderAction(
  tx: Tx,
  payment: { id: string; provider_id: string | null },
  action: 'open_dispute' | 'send_receipt' | 'cancel_dispute',
  details: { receiptId?: string | null; params?: Record<string, unknown> } = {},
): Promise<void> {
  if (!payment.provider_id) return;
  await tx.query(
    `INSERT INTO provider_actions (provider_id, payment_id, action, receipt_id, params) VALUES ($1, $2, $3, $4, $5)`,
    [payment.provider_id, payment.id, action, details.receiptId ?? null, JSON.stringify(details.params ?? {})],
  );
  await scheduleActions(tx, payment.id);
}

async function scheduleActions(db: Queryable, paymentId: string, runAt: Date | null = null): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job($1, json_build_object('payment_id', $2::text), queue_name => $3, job_key => $3, run_at => coalesce($4, now()))`,
    [ACTIONS_TASK, paymentId, `provider-actions:${paymentId}`, runAt],
  );
}

/**
 * The receipt to hand to the provider: our stored file, or the file behind the merchant's link,
 * downloaded under the webhook SSRF guard and the receipt size limit.
 */
async function receiptFile(ctx: AppContext, receiptId: string | null): Promise<ReceiptFile | undefined> {
  if (!receiptId) return undefined;
  const receipt = await findReceipt(ctx.db, receiptId);
  if (!receipt) return undefined;
  if (receipt.storage_key) {
    const chunks: Buffer[] = [];
    for await (const chunk of await ctx.files.get(receipt.storage_key)) chunks.push(chunk as Buffer);
    return { content: Buffer.concat(chunks), contentType: receipt.content_type!, filename: `receipt-${receipt.id}` };
  }
  const fetched = await fetchGuarded(receipt.url!, { allowPrivate: ctx.config.webhookAllowPrivate, maxBytes: MAX_RECEIPT_BYTES });
  if (!fetched.ok) throw new Error(`cannot fetch the receipt at ${receipt.url}: ${fetched.error}`);
  const type = await fileTypeFromBuffer(fetched.body);
  if (!type || !['png', 'jpg', 'webp', 'heic', 'pdf'].includes(type.ext)) {
    throw new Error(`the receipt at ${receipt.url} is not a png, jpg, webp, heic or pdf file`);
  }
  return { content: fetched.body, contentType: type.mime, filename: `receipt.${type.ext}` };
}

/** Carries out a payment's pending provider actions, oldest first; a failure is retried by the queue. */
export function actionsTask(ctx: AppContext): Task {
  return async (payload) => {
    const paymentId = (payload as { payment_id: string }).payment_id;
    for (;;) {
      const { rows } = await ctx.db.query<{ id: string; provider_id: string; action: string; receipt_id: string | null; params: Record<string, unknown>; provider_payment_id: string }>(
        `SELECT a.id, a.provider_id, a.action, a.receipt_id, a.params, p.provider_payment_id
           FROM provider_actions a JOIN payments p ON p.id = a.payment_id
          WHERE a.payment_id = $1 AND a.status = 'pending' ORDER BY a.seq LIMIT 1`,
        [paymentId],
      );
      const action = rows[0];
      if (!action) return;
      const provider = await findProvider(ctx.db, action.provider_id);
      const adapter = adapterFor(ctx, provider!);
      try {
        if (action.action === 'open_dispute') {
          const params = action.params as { amount?: number; comment?: string };
          await adapter.openDispute(action.provider_payment_id, { ...params, receipt: await receiptFile(ctx, action.receipt_id) });
        } else if (action.action === 'send_receipt') {
          const file = await receiptFile(ctx, action.receipt_id);
          if (file) await adapter.sendReceipt(action.provider_payment_id, file);
        } else {
          await adapter.cancelDispute(action.provider_payment_id);
        }
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        // The provider refusing the action outright will not change on a retry.
        const final = err instanceof ProviderError && err.kind === 'rejected';
        await ctx.db.query(
          `UPDATE provider_actions SET attempts = attempts + 1, last_error = $2, status = CASE WHEN $3 THEN 'failed' ELSE status END WHERE id = $1`,
          [action.id, message, final],
        );
        ctx.log.warn({ payment: paymentId, action: action.action, error: message, final }, 'provider action failed');
        if (final) continue;
        throw err;
      }
      await ctx.db.query(`UPDATE provider_actions SET status = 'done', attempts = attempts + 1, done_at = now() WHERE id = $1`, [action.id]);
    }
  };
}

/**
 * A missed callback is not a lost payment: open provider-executed payments that have not changed
 * for a poll interval are read back from their provider and brought up to date.
 */
export function pollTask(ctx: AppContext): Task {
  return async () => {
    const { rows } = await ctx.db.query<{ id: string; provider_id: string; provider_payment_id: string }>(
      `SELECT id, provider_id, provider_payment_id FROM payments
        WHERE provider_id IS NOT NULL AND status IN ('PENDING', 'PROCESSING', 'DISPUTE')
          AND updated_at < now() - make_interval(secs => $1)
        ORDER BY updated_at LIMIT 200`,
      [ctx.config.providerPollSeconds],
    );
    for (const row of rows) {
      const provider = await findProvider(ctx.db, row.provider_id);
      if (!provider?.is_active) continue;
      let upstream;
      try {
        upstream = await adapterFor(ctx, provider).getPayment(row.provider_payment_id);
      } catch (err) {
        ctx.log.warn({ payment: row.id, provider: row.provider_id, error: err instanceof Error ? err.message : String(err) }, 'provider status poll failed');
        continue;
      }
      await transaction(ctx.db, async (tx) => {
        const payment = await lockPayment(tx, null, row.id);
        if (!payment) return;
        const change = await applyProviderStatus(ctx, tx, payment, upstream);
        // Touched even when unchanged, so the next poll looks at other payments first.
        if (!change) await tx.query('UPDATE payments SET updated_at = now() WHERE id = $1', [row.id]);
        else ctx.log.info({ payment: row.id, change }, 'provider status recovered by polling');
      });
    }
  };
}
