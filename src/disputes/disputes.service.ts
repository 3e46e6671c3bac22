import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { checkDecimal, minorUnits } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { changePayment } from '../payments/lifecycle.js';
import { findMerchantPayment, lockPayment, type PaymentRow } from '../payments/payments.repo.js';
import { enqueueProviderAction } from '../providers/providers.jobs.js';
import type { ReceiptRow } from '../receipts/receipts.repo.js';
import { receiptLink, receiptUrl, saveReceipt, withUpload } from '../receipts/receipts.service.js';
import type { UploadInput } from '../receipts/upload.js';
import * as repo from './disputes.repo.js';

/** Statuses that take a receipt (spec "POST /v1/payments/{id}/receipt"). */
const RECEIPT_STATUSES = new Set(['PENDING', 'DISPUTE', 'CANCELLED', 'CANCELLED_APPEAL']);

async function lockOwnPayment(tx: Parameters<typeof lockPayment>[0], merchantId: string | null, id: string): Promise<PaymentRow> {
  const payment = isUuid(id) ? await lockPayment(tx, merchantId, id) : undefined;
  if (!payment) throw new DomainError('PAY_006', `Payment ${id} not found`);
  return payment;
}

/**
 * Attaches a receipt, independent of confirmation: file or link, in PENDING, DISPUTE, CANCELLED
 * or CANCELLED_APPEAL. In dispute it also goes onto the dispute card, unless the card already has
 * one. The status never changes.
 */
export async function attachReceipt(
  ctx: AppContext,
  merchantId: string,
  paymentId: string,
  upload: UploadInput,
): Promise<{ payment: PaymentRow; receipt: ReceiptRow }> {
  return withUpload(ctx, upload, async (tx) => {
    // Inside withUpload: a bad link must not leave the uploaded file behind in the store.
    const link = receiptLink(upload);
    if (!upload.file && !link) {
      throw new DomainError('PAY_002', 'Send a receipt file (receipt, attachment, file or proof) or a receipt_url');
    }
    const payment = await lockOwnPayment(tx, merchantId, paymentId);
    if (!RECEIPT_STATUSES.has(payment.status)) {
      throw new DomainError('PAY_008', `A receipt cannot be attached to a ${payment.status} payment`, { status: payment.status });
    }
    const receipt = (await saveReceipt(tx, payment, upload, link, 'receipt'))!;
    if (payment.status === 'DISPUTE') {
      await repo.attachReceiptIfNone(tx, payment.id, receipt.id);
      // Spec: "For a payment in dispute executed by an external provider the receipt is forwarded to the provider."
      await enqueueProviderAction(tx, payment, 'send_receipt', { receiptId: receipt.id });
    }
    return { payment, receipt };
  });
}

export interface DisputeView {
  id: string;
  ext_id: string;
  amount: number;
  currency: string;
  status: 'dispute';
  method: string;
  dispute: { amount: number | null; receipt_url: string | null; comment: string | null; created_at: string };
  created_at: string;
}

/** Reads the dispute's parameters from the JSON body or the multipart `data` part. */
function disputeParams(upload: UploadInput, currency: string): { amount: string | null; comment: string | null } {
  const source = { ...upload.data, ...withoutData(upload.fields) };
  let amount: string | null = null;
  if (source.amount !== undefined && source.amount !== null) {
    const checked = checkDecimal(source.amount, { field: 'amount', places: minorUnits(currency), min: 0, minExclusive: true, max: '1e15', maxExclusive: true });
    if (typeof checked === 'string') throw new DomainError('PAY_002', checked);
    amount = checked.toFixed(2);
  }
  let comment: string | null = null;
  if (source.comment !== undefined && source.comment !== null) {
    if (typeof source.comment !== 'string' || source.comment.length > 2000)
      throw new DomainError('PAY_002', 'comment must be a string of at most 2000 characters');
    comment = source.comment;
  }
  return { amount, comment };
}

function withoutData(fields: Record<string, unknown>): Record<string, unknown> {
  const { data: _data, ...rest } = fields;
  return rest;
}

/**
 * Opens a dispute (spec "POST /v1/payments/{id}/dispute"): only from CANCELLED or
 * CANCELLED_APPEAL (DIS_001); DIS_002 while one is open; re-opening after a cancel works.
 */
export async function openDispute(
  ctx: AppContext,
  merchantId: string,
  paymentId: string,
  upload: UploadInput,
  /** A person's opening (the merchant cabinet) is audited in the dispute's transaction. */
  record?: AuditRecorder,
): Promise<DisputeView> {
  return withUpload(ctx, upload, async (tx) => {
    // Inside withUpload: a bad link must not leave the uploaded file behind in the store.
    const link = receiptLink(upload);
    const payment = await lockOwnPayment(tx, merchantId, paymentId);
    const params = disputeParams(upload, payment.currency);
    if (payment.status === 'DISPUTE') throw new DomainError('DIS_002', 'A dispute is already open for this payment', { status: payment.status });
    if (!(await changePayment(tx, ctx, payment.id, 'openDispute'))) {
      throw new DomainError('DIS_001', `A dispute can be opened only for a CANCELLED or CANCELLED_APPEAL payment; this one is ${payment.status}`, {
        status: payment.status,
      });
    }
    const receipt = await saveReceipt(tx, payment, upload, link, 'dispute');
    const dispute = await repo.insertDispute(tx, {
      paymentId: payment.id,
      merchantId: payment.merchant_id,
      amount: params.amount,
      comment: params.comment,
      receiptId: receipt?.id ?? null,
    });
    await record?.(tx, 'dispute.open', 'payment', payment.id, { status: payment.status }, { status: 'DISPUTE' });
    // Spec: "If the payment was executed by an external provider, the dispute is opened there
    // automatically with the receipt."
    await enqueueProviderAction(tx, payment, 'open_dispute', {
      receiptId: receipt?.id ?? null,
      params: { ...(params.amount ? { amount: Number(params.amount) } : {}), ...(params.comment ? { comment: params.comment } : {}) },
    });
    return {
      id: payment.id,
      ext_id: payment.ext_id,
      amount: Number(payment.amount),
      currency: payment.currency,
      status: 'dispute',
      method: payment.method,
      dispute: {
        amount: dispute.amount === null ? null : Number(dispute.amount),
        receipt_url: receipt ? receiptUrl(ctx, receipt) : null,
        comment: dispute.comment,
        created_at: dispute.created_at.toISOString(),
      },
      created_at: payment.created_at.toISOString(),
    };
  });
}

/** Cancels the open dispute (spec "…/dispute/cancel"): only from DISPUTE (DIS_003), to CANCELLED_APPEAL. */
export async function cancelDispute(
  ctx: AppContext,
  merchantId: string,
  paymentId: string,
): Promise<{ id: string; ext_id: string; status: 'cancelled_appeal' }> {
  return transaction(ctx.db, async (tx) => {
    const payment = await lockOwnPayment(tx, merchantId, paymentId);
    if (!(await changePayment(tx, ctx, payment.id, 'cancelDispute'))) {
      throw new DomainError('DIS_003', `A dispute can be cancelled only from DISPUTE; this payment is ${payment.status}`, { status: payment.status });
    }
    await repo.closeDispute(tx, payment.id, { status: 'cancelled', decidedBy: 'merchant' });
    await enqueueProviderAction(tx, payment, 'cancel_dispute');
    return { id: payment.id, ext_id: payment.ext_id, status: 'cancelled_appeal' };
  });
}

/**
 * The operator's decision (DESIGN.md decision 7). Approve with the amount actually received:
 * equal to the order amount → COMPLETED, otherwise COMPLETED_APPEAL credited for the received
 * amount — through the same ledger posting as any completion, so at most once. Reject →
 * CANCELLED. Either way the merchant's webhook follows from the status change.
 */
export async function decideDispute(
  ctx: AppContext,
  paymentId: string,
  decision: { approve: true; amount: unknown } | { approve: false; reason?: string },
  operator: string,
  onDecided: (tx: Parameters<Parameters<typeof transaction>[1]>[0], before: PaymentRow, after: string) => Promise<void>,
): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    const payment = await lockOwnPayment(tx, null, paymentId);
    if (payment.provider_id) {
      throw new DomainError('CONFLICT', 'This payment is executed by a provider: its dispute is decided there, and the decision arrives by callback');
    }
    if (payment.status !== 'DISPUTE') {
      throw new DomainError('DIS_003', `Only a payment in DISPUTE can be decided; this one is ${payment.status}`, { status: payment.status });
    }
    if (decision.approve) {
      const amount = checkDecimal(decision.amount, {
        field: 'amount',
        places: minorUnits(payment.currency),
        min: 0,
        minExclusive: true,
        max: '1e15',
        maxExclusive: true,
      });
      if (typeof amount === 'string') throw new DomainError('VALIDATION', amount);
      const to = amount.eq(payment.amount) ? 'COMPLETED' : 'COMPLETED_APPEAL';
      if (!(await changePayment(tx, ctx, payment.id, 'approveDispute', { to, receivedAmount: amount.toFixed(2) }))) {
        throw new DomainError('DIS_003', 'The payment left DISPUTE while it was being decided', { status: payment.status });
      }
      await repo.closeDispute(tx, payment.id, { status: 'approved', decidedAmount: amount.toFixed(2), decidedBy: operator });
      await onDecided(tx, payment, to);
    } else {
      // The person's reason goes on the dispute and, as for a manual cancellation, on the payment.
      if (!(await changePayment(tx, ctx, payment.id, 'rejectDispute', { reason: 'dispute_rejected', note: decision.reason }))) {
        throw new DomainError('DIS_003', 'The payment left DISPUTE while it was being decided', { status: payment.status });
      }
      await repo.closeDispute(tx, payment.id, { status: 'rejected', decidedBy: operator, reason: decision.reason });
      await onDecided(tx, payment, 'CANCELLED');
    }
  });
}

/**
 * The merchant cabinet's decision on a dispute of its own test payment (issue 33 item 4): no
 * executor or operator looks at test money, so the merchant plays their part to try the outcome's
 * webhook — through decideDispute, the operator's one way (approve with the amount received,
 * the order amount when none is given; or reject). Another merchant's payment is not found
 * (PAY_006); a live one is refused (LIVE_OBJECT). The audit row names the person.
 */
export async function decideTestDispute(
  ctx: AppContext,
  merchantId: string,
  paymentId: string,
  decision: { approve: true; amount?: unknown } | { approve: false },
  record: AuditRecorder,
): Promise<{ id: string; status: string }> {
  // Owner and test flag never change once the payment exists: read them before deciding.
  const payment = isUuid(paymentId) ? await findMerchantPayment(ctx.db, merchantId, paymentId) : undefined;
  if (!payment) throw new DomainError('PAY_006', `Payment ${paymentId} not found`);
  if (!payment.is_test) {
    throw new DomainError('LIVE_OBJECT', 'This payment is live: its dispute is decided by the operator', { is_test: false });
  }
  let status = '';
  await decideDispute(
    ctx,
    payment.id,
    decision.approve
      ? { approve: true, amount: decision.amount ?? Number(payment.amount) }
      : { approve: false, reason: 'test dispute rejected in the merchant cabinet' },
    'merchant',
    async (tx, before, after) => {
      status = after;
      await record(tx, decision.approve ? 'dispute.test_approve' : 'dispute.test_reject', 'payment', payment.id, { status: before.status }, { status: after });
    },
  );
  return { id: payment.id, status };
}
