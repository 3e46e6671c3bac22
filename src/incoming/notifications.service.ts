import { createHash } from 'node:crypto';
import { type AuditActor, auditAs } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { ExecutorIdentity } from '../executors/executors.repo.js';
import { checkDecimal, minorUnits, money, toNumber } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { changePayment, completeTransfer, type ReportedTransfer } from '../payments/lifecycle.js';
import { findPayment } from '../payments/payments.repo.js';
import { findRequisite } from '../requisites/requisites.repo.js';
import { checkMessageEvidence } from './evidence.js';
import { readMessage } from './forms.service.js';
import * as repo from './notifications.repo.js';
import { type MessageEvidence, readEvidence } from './parsers/index.js';

/** An incoming credit reported up to this long after its payment expired is flagged as late for it. */
const LATE_WINDOW_SECONDS = 3600;

export interface NotificationInput {
  requisite_id: string;
  amount?: number;
  text?: string;
  received_at?: string;
}

export interface NotificationResult {
  matched: boolean;
  payment_id: string | null;
  notification_id: string;
  status: repo.NotificationRow['status'];
  duplicate: boolean;
}

function toResult(row: repo.NotificationRow, duplicate: boolean): NotificationResult {
  return {
    matched: row.status === 'matched',
    payment_id: row.payment_id,
    notification_id: row.id,
    status: row.status,
    duplicate,
  };
}

/**
 * An executor's companion app reports an incoming credit (money that arrived). The one PENDING payment on that
 * requisite with that amount (the cascade guarantees there is at most one) becomes COMPLETED and
 * the terminal is credited, in one transaction. Repeats of one notification answer as the first
 * did; a notification that matches nothing is kept for the operator, flagged "late" with the
 * payment it probably belongs to when one expired shortly before.
 */
export async function receiveNotification(
  ctx: AppContext,
  executor: ExecutorIdentity,
  input: NotificationInput,
  actor: AuditActor,
): Promise<NotificationResult> {
  const unread = withoutRequisite(input);
  if (!unread) return receiveInFull(ctx, executor, input, actor, true);
  // The amount sent, a two-place decimal: the requisite's owner and currency are checked in the
  // statement that completes it (issue 38), the round trip that read them first saved. Anything
  // that statement does not take — the requisite not the executor's, more places than its currency
  // takes, no PENDING payment — is answered in full, as before, from the requisite read.
  const { requisiteId, amount, places, receivedAt } = unread;
  const dedupeKey = notificationDedupeKey(requisiteId, amount, receivedAt, null);
  const credit = { executorId: executor.id, requisiteId, amount, text: null, receivedAt, parsedBank: null, dedupeKey, amountPlaces: places };
  return ctx.reportedTransfers.receive({ ...credit, actor }, () => receiveInFull(ctx, executor, input, actor, false));
}

/**
 * A report that sent its amount and no text, on a requisite named as PostgreSQL writes a uuid: what
 * the statement needs to complete it without reading the requisite first (the amount as the full
 * way writes it, two places, and how many it had); undefined for any other report, or one whose
 * fields the full way refuses (it answers why).
 */
function withoutRequisite(input: NotificationInput): { requisiteId: string; amount: string; places: number; receivedAt: Date | null } | undefined {
  if (input.amount === undefined || input.text !== undefined) return undefined;
  // As PostgreSQL writes it (lower case): the dedupe key hashes the id as the full way reads it.
  if (!isUuid(input.requisite_id) || input.requisite_id !== input.requisite_id.toLowerCase()) return undefined;
  // Two places: the most a requisite's currency takes (src/lib/money.ts); the statement checks the currency's own.
  const checked = checkDecimal(input.amount, { field: 'amount', places: 2, min: 0, minExclusive: true });
  if (typeof checked === 'string' || checked.gte('1e15')) return undefined;
  let receivedAt: Date | null = null;
  if (input.received_at !== undefined) {
    receivedAt = new Date(input.received_at);
    if (Number.isNaN(receivedAt.getTime())) return undefined;
  }
  return { requisiteId: input.requisite_id, amount: checked.toFixed(2), places: checked.decimalPlaces(), receivedAt };
}

/**
 * receiveNotification with the requisite read first (a report with text, or one the statement did
 * not take): taken together with others when `together`, else in a transaction of its own.
 */
async function receiveInFull(
  ctx: AppContext,
  executor: ExecutorIdentity,
  input: NotificationInput,
  actor: AuditActor,
  together: boolean,
): Promise<NotificationResult> {
  const requisite = await findRequisite(ctx.db, input.requisite_id);
  if (!requisite || requisite.executor_id !== executor.id) {
    throw new DomainError('NOT_FOUND', `Requisite ${input.requisite_id} is not one of this executor's requisites`);
  }
  let receivedAt: Date | null = null;
  if (input.received_at !== undefined) {
    receivedAt = new Date(input.received_at);
    if (Number.isNaN(receivedAt.getTime())) throw new DomainError('VALIDATION', 'received_at must be an ISO 8601 timestamp');
  }
  let amount: string;
  let parsedBank: string | null = null;
  let sender: string | undefined;
  if (input.amount !== undefined) {
    const checked = checkDecimal(input.amount, { field: 'amount', places: minorUnits(requisite.currency), min: 0, minExclusive: true });
    if (typeof checked === 'string') throw new DomainError('VALIDATION', checked);
    amount = checked.toFixed(2);
  } else if (input.text) {
    // The built-in parsers first; a form a person taught only when they read nothing.
    const read = await readMessage(ctx.db, input.text, { bank: requisite.bank_code ?? undefined });
    const parsed = read?.direction === 'incoming' ? read : undefined;
    if (!parsed) {
      throw new DomainError('VALIDATION', 'amount is missing and text is not a recognised incoming-transfer notification; send amount');
    }
    // Payments on a requisite are in its currency: money that arrived in another one (roubles on
    // a somoni card, say) is no payment's amount, and converting it would be a guess.
    if (parsed.currency !== requisite.currency) {
      throw new DomainError(
        'VALIDATION',
        `text reports ${parsed.amount} ${parsed.currency}, but requisite ${requisite.id} receives ${requisite.currency}; a transfer in another currency is not matched`,
        { currency: parsed.currency, requisite_currency: requisite.currency },
      );
    }
    amount = parsed.amount;
    parsedBank = parsed.bank;
    sender = parsed.sender;
  } else {
    throw new DomainError('VALIDATION', 'Send amount, or the notification text to read it from');
  }
  // No payment is that large (amounts stay below 10^15), and the column would overflow (a 500).
  if (money(amount).gte('1e15')) throw new DomainError('VALIDATION', 'amount must be less than 1000000000000000');

  const dedupeKey = notificationDedupeKey(requisite.id, amount, receivedAt, input.text ?? null);

  // The reference and payer the text names, also when the app sent the amount itself.
  const evidence = input.text ? readEvidence(input.text, { sender }) : undefined;
  const audit = auditAs(actor);
  const credit = { executorId: executor.id, requisiteId: requisite.id, amount, text: input.text ?? null, receivedAt, parsedBank, dedupeKey };
  // In a transaction of its own, as every notification was before issue 38: what the one
  // statement below does not do (no PENDING payment matched, DEPOSIT_SHORT, a race).
  const alone = async (): Promise<NotificationResult> => {
    try {
      return await transaction(ctx.db, async (tx) => {
        if (dedupeKey) {
          const existing = await repo.findByDedupeKey(tx, dedupeKey);
          if (existing) return toResult(existing, true);
        }
        const row = await recordCredit(ctx, tx, { ...credit, evidence });
        // The executor's report is its act (a repeat changes nothing and is not audited again).
        await audit(tx, 'notification.receive', 'notification', row.id, null, {
          status: row.status,
          amount: row.amount,
          requisite_id: row.requisite_id,
          payment_id: row.payment_id,
        });
        return toResult(row, false);
      });
    } catch (err) {
      // The same notification raced itself: the first one's answer is the answer.
      if (dedupeKey && repo.isDuplicateNotification(err)) {
        const existing = await repo.findByDedupeKey(ctx.db, dedupeKey);
        if (existing) return toResult(existing, true);
      }
      throw err;
    }
  };
  // A message naming a bank reference or a payer has its evidence checked (checkMessageEvidence)
  // with its completion: that stays in the transaction alone. Every other report is completed,
  // with its notification and audit row, in one statement, taken together with others under load
  // (issue 38: NotificationBatches).
  if (!together || evidence?.reference || evidence?.payerName) return alone();
  return ctx.reportedTransfers.receive({ ...credit, actor }, alone);
}

/**
 * What makes two reports one (the app retrying): the same requisite, amount, time and text. Without
 * time and text two reports cannot be told apart, and each is taken as new (null).
 */
function notificationDedupeKey(requisiteId: string, amount: string, receivedAt: Date | null, text: string | null): Buffer | null {
  if (!receivedAt && !text) return null;
  return createHash('sha256')
    .update(JSON.stringify([requisiteId, amount, receivedAt?.toISOString() ?? null, text]))
    .digest();
}

/**
 * Money received on a known requisite (an incoming credit), as a notification records it: the
 * reported transfer's fields (lifecycle.ts ReportedTransfer, without who reported it) and what the
 * bank message says beside the money, for the evidence checks (issue 36 item 4).
 */
export type IncomingCredit = Omit<ReportedTransfer, 'actor'> & { evidence?: MessageEvidence };

/**
 * The one way a reported incoming credit becomes a notification, in the caller's transaction: the one
 * PENDING payment on the requisite with that amount is completed and the notification matched;
 * otherwise it is kept for a person, flagged late with the payment it probably belongs to when
 * one expired shortly before. Used by the companion app's notifications and the devices' messages.
 */
export async function recordCredit(ctx: AppContext, tx: Tx, credit: IncomingCredit): Promise<repo.NotificationRow> {
  // Found, locked and completed in one call (issue 38).
  const paymentId = (await completeTransfer(tx, ctx, credit.requisiteId, credit.amount))?.id;
  const matched = paymentId !== undefined;
  const candidate = matched
    ? undefined
    : await repo.findRecentlyExpired(tx, credit.requisiteId, credit.amount, credit.receivedAt ?? new Date(), LATE_WINDOW_SECONDS);
  const row = await repo.insertNotification(tx, {
    executor_id: credit.executorId,
    requisite_id: credit.requisiteId,
    amount: credit.amount,
    text: credit.text,
    received_at: credit.receivedAt,
    parsed_bank: credit.parsedBank,
    status: matched ? 'matched' : candidate ? 'late' : 'unmatched',
    payment_id: matched ? paymentId! : null,
    candidate_payment_id: candidate ?? null,
    dedupe_key: credit.dedupeKey,
    reference: credit.evidence?.reference ?? null,
    payer_name: credit.evidence?.payerName?.slice(0, 200) ?? null,
  });
  // A completed payment whose message names a reused reference or another payer waits for a person.
  if (matched) await checkMessageEvidence(tx, row);
  if (!matched) {
    ctx.log.warn(
      { notification: row.id, requisite: credit.requisiteId, amount: credit.amount, late_for: candidate },
      'notification matched no pending payment',
    );
  }
  return row;
}

/** A notification as the operator API shows it. */
export function toNotification(row: repo.NotificationRow) {
  return {
    id: row.id,
    executor_id: row.executor_id,
    requisite_id: row.requisite_id,
    amount: toNumber(row.amount),
    text: row.text,
    received_at: row.received_at,
    parsed_bank: row.parsed_bank,
    status: row.status,
    payment_id: row.payment_id,
    candidate_payment_id: row.candidate_payment_id,
    resolved_note: row.resolved_note,
    created_at: row.created_at,
  };
}

const STATUSES = ['matched', 'unmatched', 'late', 'resolved'];

/** Notifications, newest first, optionally in one status. */
export async function listNotifications(ctx: AppContext, filter: { status?: string; limit: number; offset: number }): Promise<repo.NotificationRow[]> {
  if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
    throw new DomainError('VALIDATION', 'status must be one of matched, unmatched, late, resolved');
  }
  return repo.listNotifications(ctx.db, filter);
}

export async function getNotification(ctx: AppContext, id: string): Promise<repo.NotificationRow> {
  const row = await repo.findNotification(ctx.db, id);
  if (!row) throw new DomainError('NOT_FOUND', `Notification ${id} not found`);
  return row;
}

/** Writes what the operator did, in the transaction of the change (the audit log). */
type RecordAction = (tx: Tx, before: repo.NotificationRow, after: repo.NotificationRow) => Promise<void>;

/**
 * Links an unmatched or late notification to a PENDING payment on the same requisite, which
 * completes it exactly as a matching notification would have.
 */
export async function linkNotification(ctx: AppContext, id: string, paymentId: string, record: RecordAction): Promise<repo.NotificationRow> {
  const notification = await getNotification(ctx, id);
  const payment = isUuid(paymentId) ? await findPayment(ctx.db, paymentId) : undefined;
  if (!payment) throw new DomainError('PAY_006', `Payment ${paymentId} not found`);
  if (payment.requisite_id !== notification.requisite_id) {
    throw new DomainError('VALIDATION', 'The payment was made to another requisite than the notification reports');
  }
  return transaction(ctx.db, async (tx) => {
    // The payment is completed (and so locked) before the notification is marked matched: marked
    // first, a racing link or notification for the same payment collided with it on
    // notifications_one_match_per_payment, or deadlocked, and answered 500.
    const completed = (await changePayment(tx, ctx, paymentId, 'complete')) !== undefined;
    const updated = completed
      ? await repo.resolveNotification(tx, notification.id, { status: 'matched', paymentId, note: 'linked by the operator' })
      : undefined;
    if (!updated) {
      const current = (await repo.findNotification(tx, notification.id)) ?? notification;
      if (completed || (current.status !== 'unmatched' && current.status !== 'late')) {
        throw new DomainError('CONFLICT', `Notification is ${current.status}; only unmatched or late ones can be linked`);
      }
      const now = (await findPayment(tx, paymentId)) ?? payment;
      throw new DomainError('PAY_008', `Payment is ${now.status}; only a PENDING payment can be completed by a notification`, { status: now.status });
    }
    await record(tx, notification, updated);
    return updated;
  });
}

/** Sets an unmatched or late notification aside with the operator's note. */
export async function resolveNotification(ctx: AppContext, id: string, note: string, record: RecordAction): Promise<repo.NotificationRow> {
  return transaction(ctx.db, async (tx) => {
    const before = await repo.findNotification(tx, id);
    if (!before) throw new DomainError('NOT_FOUND', `Notification ${id} not found`);
    const updated = await repo.resolveNotification(tx, before.id, { status: 'resolved', paymentId: null, note });
    if (!updated) throw new DomainError('CONFLICT', `Notification is ${before.status}; only unmatched or late ones can be resolved`);
    await record(tx, before, updated);
    return updated;
  });
}
