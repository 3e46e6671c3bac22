import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import { insertConfirmation } from '../receipts/receipts.repo.js';
import { receiptLink, saveReceipt, withUpload } from '../receipts/receipts.service.js';
import type { UploadInput } from '../receipts/upload.js';
import { flagReusedFile } from './evidence.js';
import { lockPayment, type PaymentRow, startVerification } from './payments.repo.js';

export const CONFIRM_MESSAGE = 'Confirmation received; the transfer is awaiting verification';

/**
 * "The payer has transferred" (spec POST /v1/payments/{id}/confirm): PENDING only, status
 * unchanged. The signal and the receipt, if any, are kept for the operator and a dispute
 * reviewer. The first confirm starts verification: without a matching notification within
 * CONFIRM_VERIFY_SECONDS the payment is CANCELLED by the expiry sweep ("transfer not found");
 * later confirms do not push that deadline back.
 */
export async function confirmPayment(
  ctx: AppContext,
  merchantId: string,
  paymentId: string,
  upload: UploadInput,
  source: 'merchant' | 'page',
): Promise<PaymentRow> {
  return withUpload(ctx, upload, async (tx) => {
    // Inside withUpload: a bad link must not leave the uploaded file behind in the store.
    const link = receiptLink(upload);
    const payment = isUuid(paymentId) ? await lockPayment(tx, merchantId, paymentId) : undefined;
    if (!payment) throw new DomainError('PAY_006', `Payment ${paymentId} not found`);
    if (payment.status !== 'PENDING') {
      throw new DomainError('PAY_008', `Only a PENDING payment can be confirmed; this one is ${payment.status}`, { status: payment.status });
    }
    const receipt = await saveReceipt(tx, payment, upload, link, source === 'page' ? 'page' : 'confirm');
    await insertConfirmation(tx, { paymentId: payment.id, merchantId: payment.merchant_id, source, receiptId: receipt?.id ?? null });
    // A file already sent for another payment flags this one for a person; it decides nothing.
    await flagReusedFile(tx, receipt?.sha256, payment, source === 'page' ? 'payment page receipt' : 'merchant confirm receipt');
    return { ...payment, verify_until: await startVerification(tx, payment.id, ctx.config.confirmVerifySeconds) };
  });
}
