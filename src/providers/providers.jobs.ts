import { fileTypeFromBuffer } from 'file-type';
import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import type { Tx } from '../db/pool.js';
import { findReceipt } from '../receipts/receipts.repo.js';
import { MAX_RECEIPT_BYTES } from '../receipts/upload.js';
import { fetchGuarded } from '../webhooks/sender.js';
import { ProviderError, type ReceiptFile } from './provider.js';
import {
  addProviderActionsJob,
  findProvider,
  insertProviderAction,
  nextProviderAction,
  type ProviderActionKind,
  recordActionDone,
  recordActionFailure,
} from './providers.repo.js';
import { adapterFor } from './providers.service.js';

export const ACTIONS_TASK = 'providers_actions';

/**
 * Queues work at the provider for a provider-executed payment, in the caller's transaction:
 * opening a dispute, forwarding a receipt, cancelling a dispute. A job carries them out in order.
 */
export async function enqueueProviderAction(
  tx: Tx,
  payment: { id: string; provider_id: string | null },
  action: ProviderActionKind,
  details: { receiptId?: string | null; params?: Record<string, unknown> } = {},
): Promise<void> {
  if (!payment.provider_id) return;
  await insertProviderAction(tx, {
    providerId: payment.provider_id,
    paymentId: payment.id,
    action,
    receiptId: details.receiptId ?? null,
    params: details.params ?? {},
  });
  await addProviderActionsJob(tx, ACTIONS_TASK, payment.id);
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
      const action = await nextProviderAction(ctx.db, paymentId);
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
        await recordActionFailure(ctx.db, action.id, message, final);
        ctx.log.warn({ payment: paymentId, action: action.action, error: message, final }, 'provider action failed');
        if (final) continue;
        throw err;
      }
      await recordActionDone(ctx.db, action.id);
    }
  };
}
