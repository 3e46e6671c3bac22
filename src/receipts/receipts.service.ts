import type { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError, type ErrorKey } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import * as repo from './receipts.repo.js';
import type { UploadInput } from './upload.js';

/** What a receipt points to, as the merchant sees it: our storage path, or their own link. */
export function receiptUrl(ctx: AppContext, receipt: repo.ReceiptRow): string {
  return receipt.url ?? `${ctx.config.publicBaseUrl}/v1/receipts/${receipt.id}`;
}

/** The merchant's `receipt_url` from the JSON body or the `data` part, checked; undefined when absent. */
export function receiptLink(upload: UploadInput, code: ErrorKey = 'PAY_002'): string | undefined {
  const value = upload.fields.receipt_url ?? upload.data.receipt_url;
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 2048) throw new DomainError(code, 'receipt_url must be a URL of at most 2048 characters');
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new DomainError(code, 'receipt_url must be an absolute http(s) URL');
  }
  return value;
}

/** Records the receipt of an upload (file or link), if it carried one. */
export async function saveReceipt(
  tx: Tx,
  payment: { id: string; merchant_id: string },
  upload: UploadInput,
  link: string | undefined,
  source: repo.ReceiptRow['source'],
): Promise<repo.ReceiptRow | undefined> {
  if (!upload.file && !link) return undefined;
  return repo.insertReceipt(tx, { merchantId: payment.merchant_id, paymentId: payment.id, source, file: upload.file, url: upload.file ? undefined : link });
}

/**
 * Runs `work` in a transaction; if it fails, the file the upload stored is deleted, so a refused
 * request leaves nothing behind in the store.
 */
export async function withUpload<T>(ctx: AppContext, upload: UploadInput, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await transaction(ctx.db, work);
  } catch (err) {
    if (upload.file) await ctx.files.discard(upload.file.key, 'a request that failed');
    throw err;
  }
}

/** The file of a receipt for download, for its merchant (or the operator when merchantId is null). */
export async function openReceiptFile(ctx: AppContext, merchantId: string | null, id: string): Promise<{ receipt: repo.ReceiptRow; content: Readable }> {
  const receipt = !isUuid(id) ? undefined : merchantId ? await repo.findMerchantReceipt(ctx.db, merchantId, id) : await repo.findReceipt(ctx.db, id);
  if (!receipt) throw new DomainError('NOT_FOUND', `Receipt ${id} not found`);
  if (!receipt.storage_key) {
    throw new DomainError('NOT_FOUND', `Receipt ${id} is an external link, not a stored file: ${receipt.url}`);
  }
  return { receipt, content: await ctx.files.get(receipt.storage_key) };
}
