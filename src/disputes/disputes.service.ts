import type { Decimal } from 'decimal.js';
import { type AuditRecorder, systemAudit } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { resolveNotification } from '../incoming/notifications.repo.js';
import { payinHold } from '../ledger/credit.js';
import { isDepositShort, reserve } from '../ledger/holds.js';
import { checkDecimal, minorUnits, money, toNumber } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import { flagReusedFile } from '../payments/evidence.js';
import { changePayment, type DisputeHold } from '../payments/lifecycle.js';
import { findMerchantPayment, findPayments, lockPayment, type PaymentRow } from '../payments/payments.repo.js';
import { enqueueProviderAction } from '../providers/providers.jobs.js';
import { listPaymentReceipts, type ReceiptRow } from '../receipts/receipts.repo.js';
import { openReceiptFile, receiptLink, receiptUrl, saveReceipt, withUpload } from '../receipts/receipts.service.js';
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
    const open = payment.status === 'DISPUTE' ? await repo.lockOpenDispute(tx, payment.id) : undefined;
    // A file already sent for another payment flags this one (and its open dispute) for a person.
    await flagReusedFile(tx, receipt.sha256, { ...payment, disputeId: open?.id }, 'receipt', repo.firstExecutorFileWith);
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
    // The executor's row and requisites before any ledger row (see lockExecutorAndRequisites).
    if (payment.executor_id) await repo.lockExecutorAndRequisites(tx, payment.executor_id);
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
      executorId: payment.executor_id,
      terminalId: payment.terminal_id,
      answerSeconds: ctx.config.disputes.answerSeconds,
      timezone: ctx.config.disputes.timezone,
    });
    // The dispute's proof, already sent for another payment, flags the dispute for a person.
    await flagReusedFile(tx, receipt?.sha256, { ...payment, disputeId: dispute.id }, 'dispute proof', repo.firstExecutorFileWith);
    const frozen = await freezeClaim(tx, payment, dispute);
    const opened = {
      payment_id: payment.id,
      amount: dispute.amount,
      executor_id: dispute.executor_id,
      answer_due_at: dispute.answer_due_at,
      ...frozen,
    };
    // The executor whose card took the payment is told in the dispute's transaction (issue 37):
    // the message exists exactly when the dispute does, with the deadline it must answer by.
    if (dispute.executor_id && dispute.answer_due_at) {
      await enqueuePersonMessage(
        tx,
        { executorId: dispute.executor_id },
        {
          kind: 'dispute_opened',
          eventKey: `dispute:${dispute.id}`,
          data: {
            dispute_id: dispute.id,
            payment_id: payment.id,
            amount: dispute.amount ?? payment.amount,
            currency: payment.currency,
            answer_due_at: dispute.answer_due_at.toISOString(),
            // The deadline is told on the clock of DISPUTE_TIMEZONE, as the dispute's hours are counted.
            timezone: ctx.config.disputes.timezone,
          },
        },
      );
    }
    // One audit row: the person when one opened it in the cabinet, else the merchant's API key.
    if (record) await record(tx, 'dispute.open', 'payment', payment.id, { status: payment.status }, { status: 'DISPUTE', dispute_id: dispute.id, ...opened });
    else await systemAudit(`merchant:${merchantId}`)(tx, 'dispute.open', 'dispute', dispute.id, null, opened);
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
    const closed = await closeWith(tx, ctx, payment, { event: 'cancelDispute', status: 'cancelled', decidedBy: 'merchant' });
    if (!closed) {
      throw new DomainError('DIS_003', `A dispute can be cancelled only from DISPUTE; this payment is ${payment.status}`, { status: payment.status });
    }
    await systemAudit(`merchant:${merchantId}`)(tx, 'dispute.cancel', 'dispute', closed.id, { status: 'open' }, { status: 'cancelled' });
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
      const to = await approve(tx, ctx, payment, amount, operator);
      await onDecided(tx, payment, to);
    } else {
      // The person's reason goes on the dispute and, as for a manual cancellation, on the payment.
      const closed = await closeWith(tx, ctx, payment, { event: 'rejectDispute', status: 'rejected', decidedBy: operator, reason: decision.reason });
      if (!closed) throw new DomainError('DIS_003', 'The payment left DISPUTE while it was being decided', { status: payment.status });
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

/**
 * Freezes the value the merchant claims (`amount / rate`, the dispute's amount or the order's)
 * on the payment's executor while the dispute is open (issue 35 item 3), so that an approval is
 * always covered. A deposit that cannot cover it does not stop the dispute (the merchant's
 * right): nothing is frozen, the dispute is `uncovered`, and the executor takes no hand-outs
 * until it closes. Either way the dispute counts towards the executor's cap (max_open_disputes).
 * The caller locked the executor's row and requisites first.
 */
async function freezeClaim(tx: Tx, payment: PaymentRow, dispute: repo.DisputeRow): Promise<{ hold?: string; uncovered?: boolean }> {
  if (!dispute.executor_id) return {};
  const value = payinHold(dispute.amount ?? payment.amount, payment.rate);
  let uncovered = false;
  await tx.query('SAVEPOINT dispute_freeze');
  try {
    await reserve(tx, { kind: 'dispute', refId: dispute.id, amount: value, executorId: dispute.executor_id });
    await tx.query('RELEASE SAVEPOINT dispute_freeze');
  } catch (err) {
    if (!isDepositShort(err)) throw err;
    await tx.query('ROLLBACK TO SAVEPOINT dispute_freeze');
    uncovered = true;
  }
  const hold = uncovered ? '0' : value.toFixed();
  await repo.setDisputeHold(tx, dispute.id, hold, uncovered);
  await repo.countOpenDispute(tx, dispute.executor_id, { open: 1, uncovered: uncovered ? 1 : 0 });
  return { hold, uncovered };
}

/**
 * Closes the payment's open dispute with `event` (the payment's change, its postings and webhook
 * through lifecycle.ts): the executor's freeze is released (rejected, cancelled) or settled by the
 * pay-in (approved), and the dispute leaves the executor's cap. Undefined when the payment was
 * not in DISPUTE. The executor's row and requisites are locked before any ledger row.
 */
async function closeWith(
  tx: Tx,
  ctx: AppContext,
  payment: PaymentRow,
  close:
    | { event: 'approveDispute'; to: 'COMPLETED' | 'COMPLETED_APPEAL'; amount: string; status: 'approved'; decidedBy: string }
    | { event: 'rejectDispute'; status: 'rejected'; decidedBy: string; reason?: string }
    | { event: 'cancelDispute'; status: 'cancelled'; decidedBy: string },
): Promise<repo.DisputeRow | undefined> {
  const open = await repo.lockOpenDispute(tx, payment.id);
  if (open?.executor_id) await repo.lockExecutorAndRequisites(tx, open.executor_id);
  const disputeHold: DisputeHold | undefined = open?.executor_id ? { disputeId: open.id, executorId: open.executor_id, amount: open.hold ?? '0' } : undefined;
  const changed =
    close.event === 'approveDispute'
      ? await changePayment(tx, ctx, payment.id, 'approveDispute', { to: close.to, receivedAmount: close.amount, disputeHold })
      : close.event === 'rejectDispute'
        ? await changePayment(tx, ctx, payment.id, 'rejectDispute', { reason: 'dispute_rejected', note: close.reason, disputeHold })
        : await changePayment(tx, ctx, payment.id, 'cancelDispute', { disputeHold });
  if (!changed) return undefined;
  const closed = await repo.closeDispute(tx, payment.id, {
    status: close.status,
    decidedAmount: close.event === 'approveDispute' ? close.amount : undefined,
    decidedBy: close.decidedBy,
    reason: close.event === 'rejectDispute' ? close.reason : undefined,
  });
  if (closed?.executor_id) await repo.countOpenDispute(tx, closed.executor_id, { open: -1, uncovered: closed.uncovered ? -1 : 0 });
  return closed;
}

/** Approves the payment's open dispute for `amount` received (decision 7); returns the payment's new status. */
async function approve(tx: Tx, ctx: AppContext, payment: PaymentRow, amount: Decimal, decidedBy: string): Promise<'COMPLETED' | 'COMPLETED_APPEAL'> {
  const to = amount.eq(payment.amount) ? 'COMPLETED' : 'COMPLETED_APPEAL';
  const closed = await closeWith(tx, ctx, payment, { event: 'approveDispute', to, amount: amount.toFixed(2), status: 'approved', decidedBy });
  if (!closed) throw new DomainError('DIS_003', 'The payment left DISPUTE while it was being decided', { status: payment.status });
  return to;
}

/** The dispute's status as the executor sees it (DESIGN.md): its stage while open, else how it closed. */
export function executorStatus(row: repo.DisputeRow): string {
  return row.status === 'open' ? (row.stage ?? 'escalated') : row.status;
}

/** The executor's dispute, its payment locked, then the dispute (the order every path takes); another executor's is not found. */
async function lockExecutorDispute(tx: Tx, executorId: string, id: string): Promise<{ dispute: repo.DisputeRow; payment: PaymentRow }> {
  const found = isUuid(id) ? await repo.findExecutorDispute(tx, executorId, id) : undefined;
  if (!found) throw new DomainError('NOT_FOUND', `Dispute ${id} not found`);
  const payment = (await lockPayment(tx, null, found.payment_id))!;
  const dispute = (await repo.lockOpenDispute(tx, payment.id)) ?? found;
  if (dispute.id !== found.id) throw notOpen(found);
  return { dispute, payment };
}

function notOpen(dispute: repo.DisputeRow): DomainError {
  return new DomainError('CONFLICT', `This dispute is ${executorStatus(dispute)}; it can no longer be answered`, { status: executorStatus(dispute) });
}

/**
 * The executor accepts a dispute on its own payment (DESIGN.md): approved exactly as the
 * operator's approval is — the amount received (`amount`, else the amount the merchant claims, or
 * the late bank message's amount when it names one: issue 35 item 6), the same postings (the
 * freeze settles the pay-in), COMPLETED or COMPLETED_APPEAL, the merchant's webhook. Possible
 * while it awaits the executor, or after its deadline escalated it; not once contested.
 */
export async function acceptDispute(
  ctx: AppContext,
  executorId: string,
  id: string,
  body: { amount?: unknown; notification_id?: unknown },
  record: AuditRecorder,
  who: string,
): Promise<repo.DisputeRow> {
  return transaction(ctx.db, async (tx) => {
    const { dispute, payment } = await lockExecutorDispute(tx, executorId, id);
    if (dispute.status !== 'open' || dispute.stage === 'contested') throw notOpen(dispute);
    let amount: Decimal;
    let lateId: string | null = null;
    if (body.notification_id !== undefined && body.notification_id !== null) {
      const late = (await repo.lateMoneyFor(tx, [dispute])).find((n) => n.id === body.notification_id);
      if (!late) throw new DomainError('VALIDATION', 'notification_id is not a late bank message of yours for this dispute’s amount');
      lateId = late.id;
      // The bank message is in the requisite's currency: the order's own amount unless cross-border.
      amount = payment.cross_border ? money(dispute.amount ?? payment.amount) : money(late.amount);
      await resolveNotification(tx, late.id, {
        status: 'matched',
        paymentId: payment.id,
        note: `the disputed payment's money, said by the executor (dispute ${dispute.id})`,
      });
    } else if (body.amount !== undefined && body.amount !== null) {
      const checked = checkDecimal(body.amount, {
        field: 'amount',
        places: minorUnits(payment.currency),
        min: 0,
        minExclusive: true,
        max: '1e15',
        maxExclusive: true,
      });
      if (typeof checked === 'string') throw new DomainError('VALIDATION', checked);
      amount = checked;
    } else {
      amount = money(dispute.amount ?? payment.amount);
    }
    await repo.recordAcceptance(tx, dispute.id, amount.toFixed(2), lateId);
    const to = await approve(tx, ctx, payment, amount, who);
    await record(
      tx,
      'dispute.accept',
      'dispute',
      dispute.id,
      { status: executorStatus(dispute) },
      { status: 'approved', amount: amount.toFixed(2), payment_status: to, late_notification_id: lateId },
    );
    return (await repo.findExecutorDispute(tx, executorId, dispute.id))!;
  });
}

/**
 * The executor contests a dispute on its own payment, with a comment and/or a file (a screenshot
 * of its bank's history, judged by content as receipts are): it goes to support, with support's
 * own deadline; from then on only a person decides. An executor never rejects a dispute.
 */
export async function contestDispute(ctx: AppContext, executorId: string, id: string, upload: UploadInput, record: AuditRecorder): Promise<repo.DisputeRow> {
  return withUpload(ctx, upload, async (tx) => {
    const source = { ...upload.data, ...withoutData(upload.fields) };
    const comment = source.comment;
    if (comment !== undefined && comment !== null && (typeof comment !== 'string' || comment.length > 2000)) {
      throw new DomainError('VALIDATION', 'comment must be a string of at most 2000 characters');
    }
    const text = typeof comment === 'string' && comment.trim() ? comment.trim() : null;
    if (!text && !upload.file) throw new DomainError('VALIDATION', 'Say why in `comment`, or attach your bank’s history as `file`');
    const { dispute, payment } = await lockExecutorDispute(tx, executorId, id);
    if (dispute.status !== 'open' || dispute.stage === 'contested') throw notOpen(dispute);
    const contested = await repo.contest(tx, dispute.id, { comment: text, file: upload.file, supportSeconds: ctx.config.disputes.supportSeconds });
    if (!contested) throw notOpen(dispute);
    // The executor's file, already used for another payment, flags the dispute for the person deciding it.
    await flagReusedFile(tx, upload.file?.sha256, { ...payment, disputeId: dispute.id }, 'executor contest file', repo.firstExecutorFileWith);
    await record(
      tx,
      'dispute.contest',
      'dispute',
      dispute.id,
      { status: executorStatus(dispute) },
      { status: 'contested', comment: text, file: upload.file?.key ?? null },
    );
    return contested;
  });
}

/**
 * The clock (issue 35 item 2): every dispute whose executor has not answered by `answer_due_at`
 * is decided by its terminal's `dispute_timeout` — approved with the merchant's claimed amount, or
 * escalated to support with support's own deadline. Safe with any number of instances: each
 * dispute is taken with its payment locked (others skip it), re-read under the lock, and decided
 * by a guarded change, so once. An approval its executor's deposit cannot cover (an uncovered
 * dispute) is escalated instead. Returns how many it decided.
 */
export async function decideOverdue(ctx: AppContext, limit = 500): Promise<{ approved: number; escalated: number }> {
  const done = { approved: 0, escalated: 0 };
  const seen: string[] = [];
  for (let n = 0; n < limit; n++) {
    let picked: string | undefined;
    let outcome: 'approved' | 'escalated' | 'none' | undefined;
    try {
      outcome = await transaction(ctx.db, (tx) =>
        decideOne(tx, ctx, { exclude: seen }, (id) => {
          picked = id;
        }),
      );
    } catch (err) {
      if (!(err instanceof DomainError && err.key === 'DEPOSIT_SHORT') || !picked) throw err;
      const only = picked;
      outcome = await transaction(ctx.db, (tx) => decideOne(tx, ctx, { exclude: [], only, escalateOnly: true }, () => {}));
    }
    if (outcome === undefined) break;
    if (picked) seen.push(picked);
    if (outcome !== 'none') done[outcome] += 1;
  }
  return done;
}

async function decideOne(
  tx: Tx,
  ctx: AppContext,
  pick: { exclude: string[]; only?: string; escalateOnly?: boolean },
  picked: (id: string) => void,
): Promise<'approved' | 'escalated' | 'none' | undefined> {
  const due = await repo.lockOverdue(tx, pick.exclude, pick.only);
  if (!due) return undefined;
  picked(due.id);
  const payment = (await lockPayment(tx, null, due.payment_id))!;
  const dispute = await repo.lockOpenDispute(tx, payment.id);
  // Another instance decided it (or the executor answered) between the pick and the lock.
  if (!dispute || dispute.id !== due.id || dispute.stage !== 'awaiting_executor') return 'none';
  const audit = systemAudit('system:dispute_deadline');
  if (due.dispute_timeout === 'approve' && !pick.escalateOnly) {
    await repo.markTimedOutApproved(tx, dispute.id);
    const amount = money(dispute.amount ?? payment.amount);
    const to = await approve(tx, ctx, payment, amount, 'deadline');
    await audit(
      tx,
      'dispute.timeout',
      'dispute',
      dispute.id,
      { status: 'awaiting_executor' },
      { status: 'approved', amount: amount.toFixed(2), payment_status: to },
    );
    return 'approved';
  }
  const escalated = await repo.escalate(tx, dispute.id, ctx.config.disputes.supportSeconds);
  if (!escalated) return 'none';
  await audit(tx, 'dispute.timeout', 'dispute', dispute.id, { status: 'awaiting_executor' }, { status: 'escalated', support_due_at: escalated.support_due_at });
  return 'escalated';
}

/** A dispute as its executor sees it (GET /executor/v1/disputes): see ExecutorDispute. */
export async function executorDisputes(ctx: AppContext, rows: repo.DisputeRow[]) {
  if (rows.length === 0) return [];
  const [payments, receipts, late] = await Promise.all([
    findPayments(ctx.db, [...new Set(rows.map((d) => d.payment_id))]),
    listPaymentReceipts(ctx.db, [...new Set(rows.map((d) => d.payment_id))]),
    repo.lateMoneyFor(
      ctx.db,
      rows.filter((d) => d.status === 'open'),
    ),
  ]);
  return rows.map((d) => {
    const payment = payments.find((p) => p.id === d.payment_id)!;
    const receipt = receipts.find((r) => r.id === d.receipt_id);
    return {
      id: d.id,
      payment_id: d.payment_id,
      status: executorStatus(d),
      amount: Number(d.amount ?? payment.amount),
      order_amount: Number(payment.amount),
      currency: payment.currency,
      payer_amount: Number(payment.payer_amount),
      payer_currency: payment.req_currency,
      requisite: { id: payment.requisite_id, type: payment.req_type, value: payment.req_value, bank: payment.req_bank_name ?? payment.req_bank_code },
      comment: d.comment,
      receipt: receipt ? { url: receipt.url ?? `${ctx.config.publicBaseUrl}/executor/v1/disputes/${d.id}/receipt`, content_type: receipt.content_type } : null,
      opened_at: d.created_at,
      answer_due_at: d.answer_due_at,
      support_due_at: d.support_due_at,
      hold: Number(d.hold ?? 0),
      uncovered: d.uncovered,
      answer:
        d.executor_answer && d.answered_at
          ? {
              kind: d.executor_answer,
              amount: toNumber(d.executor_amount),
              comment: d.executor_comment,
              file: d.executor_file_key !== null,
              at: d.answered_at,
              late: d.answer_due_at !== null && d.answered_at > d.answer_due_at,
            }
          : null,
      timed_out: d.timed_out,
      decided_amount: toNumber(d.decided_amount),
      decided_at: d.decided_at,
      late_money: late
        .filter((n) => n.dispute_id === d.id)
        .map((n) => ({ notification_id: n.id, amount: Number(n.amount), text: n.text, received_at: n.received_at, created_at: n.created_at })),
    };
  });
}

/** The executor's disputes, open ones first by deadline, then the closed ones, newest first. */
export async function listExecutorDisputes(ctx: AppContext, executorId: string, page: { limit: number; offset: number }) {
  return executorDisputes(ctx, await repo.listExecutorDisputes(ctx.db, executorId, page));
}

/** One of the executor's disputes; another executor's is not found. */
export async function getExecutorDispute(ctx: AppContext, executorId: string, id: string) {
  const row = isUuid(id) ? await repo.findExecutorDispute(ctx.db, executorId, id) : undefined;
  if (!row) throw new DomainError('NOT_FOUND', `Dispute ${id} not found`);
  return row;
}

/** The merchant's receipt on the executor's dispute, to show inline; another executor's is not found. */
export async function openExecutorDisputeReceipt(ctx: AppContext, executorId: string, id: string) {
  const dispute = await getExecutorDispute(ctx, executorId, id);
  if (!dispute.receipt_id) throw new DomainError('NOT_FOUND', `Dispute ${id} has no receipt`);
  return openReceiptFile(ctx, null, dispute.receipt_id);
}

/** The file an executor contested with (its bank's history), for support or the executor itself. */
export async function openContestFile(ctx: AppContext, dispute: repo.DisputeRow) {
  if (!dispute.executor_file_key) throw new DomainError('NOT_FOUND', `Dispute ${dispute.id} has no file from its executor`);
  return { contentType: dispute.executor_file_type ?? 'application/octet-stream', content: await ctx.files.get(dispute.executor_file_key) };
}
