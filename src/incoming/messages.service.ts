import { createHash } from 'node:crypto';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { money } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { changePayment } from '../payments/lifecycle.js';
import { findPayment } from '../payments/payments.repo.js';
import { findRequisite } from '../requisites/requisites.repo.js';
import { readMessage, type TaughtReading } from './forms.service.js';
import * as repo from './messages.repo.js';
import * as notifications from './notifications.repo.js';
import { recordCredit } from './notifications.service.js';
import { type ParsedCredit, readEvidence } from './parsers/index.js';

/**
 * Bank messages forwarded by the executors' phones (incoming money): read with the parsers, matched
 * to the executor's requisite and its PENDING payment — completed on the same path as the companion
 * app's notifications — or kept for a person, who links them to a payment or sets them aside.
 * `devices/` owns the phones themselves (registration, heartbeats, the forwarders' hooks) and hands
 * their messages here.
 */

/** The phone a message came from, as this folder needs it: its executor, and a way to note it was heard from. */
export interface ForwardingPhone {
  id: string;
  executor_id: string;
  /** Records that the phone is alive (called once the message is known to be well formed). */
  seen(): Promise<void>;
}

export interface MessageInput {
  text: string;
  sender?: string;
  received_at?: string;
  battery?: number;
  app_version?: string;
}

export interface MessageResult {
  matched: boolean;
  payment_id: string | null;
  notification_id: string | null;
  message_id: string;
  status: repo.MessageStatus;
  reason: string | null;
  duplicate: boolean;
}

function toResult(row: repo.MessageRow, duplicate: boolean): MessageResult {
  return {
    matched: row.status === 'matched',
    payment_id: row.status === 'matched' ? (row.payment_id ?? null) : null,
    notification_id: row.notification_id,
    message_id: row.id,
    status: row.status,
    reason: row.reason,
    duplicate,
  };
}

/** The digits a requisite's value must end with to be the one a text names (a card's last four, a phone's visible tail). */
function visibleTail(digits: string): string {
  const parts = digits.split(/[*•xX]+/);
  return (parts.at(-1) ?? '').replace(/\D/g, '');
}

type Decision =
  | { kind: 'requisite'; requisiteId: string }
  | { kind: 'ambiguous'; reason: string }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'ignored'; reason: string };

/**
 * `POST /device/v1/messages`: a bank SMS or push as a phone forwarded it. The text is read with
 * the parsers; the requisite is found among the executor's own by the card's or phone's digits in
 * the text, else — when the text names none — by the one requisite with a PENDING payment of
 * that amount; the payment is then completed on the same path as the companion app's
 * notifications. When that cannot be told with certainty the message waits for a person: nothing
 * is guessed. Repeats (a forwarder retrying) answer as the first did.
 */
export async function receiveMessage(ctx: AppContext, device: ForwardingPhone, input: MessageInput, audit: AuditRecorder): Promise<MessageResult> {
  const text = input.text.trim();
  if (text === '') throw new DomainError('VALIDATION', 'text is empty: send the message as the bank sent it');
  // The forwarders' fields have no length limit of their own: a bank message is never this long.
  if (text.length > 4000) throw new DomainError('VALIDATION', 'text is longer than 4000 characters: send one bank message at a time');
  const sender = input.sender?.trim().slice(0, 200) || undefined;
  let receivedAt: Date | null = null;
  if (input.received_at !== undefined) {
    receivedAt = new Date(input.received_at);
    if (Number.isNaN(receivedAt.getTime())) throw new DomainError('VALIDATION', 'received_at must be an ISO 8601 timestamp');
  }
  await device.seen();
  const dedupeKey = createHash('sha256')
    .update(JSON.stringify([device.executor_id, text, sender ?? null, receivedAt?.toISOString() ?? null]))
    .digest();
  const existing = await repo.findMessageByDedupeKey(ctx.db, dedupeKey);
  if (existing) return toResult(existing, true);

  // The built-in parsers first; a form a person taught only when they read nothing.
  const parsed = await readMessage(ctx.db, text, { sender });
  const taught = parsed && 'taught' in parsed ? (parsed as TaughtReading).taught : null;
  const amount = parsed?.direction === 'incoming' && money(parsed.amount).lt('1e15') ? parsed.amount : null;
  try {
    return await transaction(ctx.db, async (tx) => {
      const decision = await decide(ctx, device.executor_id, parsed, amount);
      const base = {
        device_id: device.id,
        executor_id: device.executor_id,
        text,
        sender: sender ?? null,
        received_at: receivedAt,
        amount,
        currency: parsed?.currency ?? null,
        digits: parsed?.digits ?? null,
        parsed_bank: parsed && parsed.bank !== 'unknown' ? parsed.bank : null,
        dedupe_key: dedupeKey,
      };
      if (decision.kind !== 'requisite') {
        const row = await repo.insertMessage(tx, { ...base, status: decision.kind, reason: decision.reason, requisite_id: null, notification_id: null });
        await auditReceived(audit, tx, row, taught);
        ctx.log.warn({ message: row.id, executor: device.executor_id, status: decision.kind, reason: decision.reason }, 'device message waits for a person');
        return toResult(row, false);
      }
      const notification = await recordCredit(ctx, tx, {
        executorId: device.executor_id,
        requisiteId: decision.requisiteId,
        amount: amount!,
        text,
        receivedAt,
        parsedBank: base.parsed_bank,
        dedupeKey: null,
        evidence: readEvidence(text, parsed),
      });
      const row = await repo.insertMessage(tx, {
        ...base,
        status: notification.status === 'matched' ? 'matched' : 'unmatched',
        reason:
          notification.status === 'matched'
            ? null
            : `no PENDING payment of ${amount} on that requisite${notification.status === 'late' ? ' (one expired shortly before)' : ''}`,
        requisite_id: decision.requisiteId,
        notification_id: notification.id,
      });
      await auditReceived(audit, tx, { ...row, payment_id: notification.payment_id }, taught);
      return toResult(row, false);
    });
  } catch (err) {
    // The same message raced itself: the first one's answer is the answer.
    if (repo.isDuplicateMessage(err)) {
      const first = await repo.findMessageByDedupeKey(ctx.db, dedupeKey);
      if (first) return toResult(first, true);
    }
    throw err;
  }
}

/**
 * A phone's message is audited as the device's act (a repeat changes nothing and is not): it may
 * have completed a payment (`payment_id`), or waits for a person.
 */
function auditReceived(audit: AuditRecorder, tx: Tx, row: repo.MessageRow, taught: TaughtReading['taught'] | null): Promise<void> {
  return audit(tx, 'device_message.receive', 'device_message', row.id, null, {
    status: row.status,
    reason: row.reason,
    amount: row.amount,
    currency: row.currency,
    requisite_id: row.requisite_id,
    payment_id: row.payment_id ?? null,
    executor_id: row.executor_id,
    // Read by a form a person taught (docs/devices.md "Teaching a new message form"), not the built-in parsers.
    ...(taught ? { read_by_form: taught } : {}),
  });
}

/** Which of the executor's requisites the message is about, or why that cannot be told. */
async function decide(ctx: AppContext, executorId: string, parsed: ParsedCredit | undefined, amount: string | null): Promise<Decision> {
  if (!parsed) return { kind: 'unreadable', reason: 'not a bank message the parsers can read with certainty' };
  if (parsed.direction !== 'incoming') return { kind: 'ignored', reason: 'money going out, not a transfer received' };
  if (amount === null) return { kind: 'unreadable', reason: 'the amount is out of range' };
  const own = await repo.requisitesForMatching(ctx.db, executorId, parsed.currency);
  if (own.length === 0) return { kind: 'ambiguous', reason: `none of your requisites receives ${parsed.currency}` };
  let candidates = own;
  if (parsed.digits) {
    const tail = visibleTail(parsed.digits);
    if (tail.length >= 2) {
      candidates = own.filter((r) => r.digits.endsWith(tail));
      if (candidates.length === 0) return { kind: 'ambiguous', reason: `none of your requisites ends in ${tail}` };
    }
  }
  if (candidates.length === 1) return { kind: 'requisite', requisiteId: candidates[0]!.id };
  // Several requisites fit the text (or it names none): the amount decides, when exactly one of
  // them waits for a payment of it.
  const pending = await repo.requisitesWithPending(
    ctx.db,
    candidates.map((r) => r.id),
    amount,
  );
  if (pending.length === 1) return { kind: 'requisite', requisiteId: pending[0]! };
  return pending.length === 0
    ? { kind: 'ambiguous', reason: `no requisite of yours that fits the text waits for ${amount} ${parsed.currency}` }
    : { kind: 'ambiguous', reason: `${pending.length} requisites that fit the text wait for ${amount} ${parsed.currency}` };
}

/**
 * Which payment a link names: its id, or (the operator) the merchant's order id, `ext_id`, with the
 * merchant or terminal when two merchants use the same one.
 */
export type PaymentRef = string | { ext_id: string; merchant_id?: string; terminal_id?: string };

/**
 * The payment a merchant's order id names for a message. ext_id is unique per merchant only: of
 * several, the one on a requisite of the executor whose phone sent the message is taken; when that
 * does not single one out, the caller is asked for the merchant or terminal, or the payment's id.
 */
async function paymentByExtId(
  ctx: AppContext,
  executorId: string | null,
  messageId: string,
  ref: { ext_id: string; merchant_id?: string; terminal_id?: string },
): Promise<string> {
  const extId = ref.ext_id.trim();
  const found = await repo.paymentsByExtId(ctx.db, extId, { merchantId: ref.merchant_id, terminalId: ref.terminal_id });
  if (found.length === 0) throw new DomainError('PAY_006', `No payment with ext_id ${extId}`);
  if (found.length === 1) return found[0]!.id;
  const message = await repo.findMessage(ctx.db, executorId, messageId);
  const theirs = message ? found.filter((p) => p.executor_id === message.executor_id) : [];
  if (theirs.length === 1) return theirs[0]!.id;
  const merchants = [...new Set(found.map((p) => p.merchant_name))].join(', ');
  throw new DomainError(
    'VALIDATION',
    `ext_id ${extId} names ${found.length} payments (merchants: ${merchants}): give the merchant or terminal too, or the payment's id`,
    {
      field: 'ext_id',
      ambiguous: true,
      payments: found.map((p) => ({ id: p.id, merchant_id: p.merchant_id, merchant_name: p.merchant_name, terminal_id: p.terminal_id })),
    },
  );
}

/**
 * A person (the executor in the cabinet, or the operator) links a waiting message to the PENDING
 * payment it is for: the payment must be on one of the executor's requisites and, when the text
 * gave an amount, of that amount. The payment completes as a matching message would have done it.
 */
export async function linkMessage(ctx: AppContext, executorId: string | null, id: string, ref: PaymentRef, audit: AuditRecorder): Promise<repo.MessageRow> {
  if (!isUuid(id)) throw new DomainError('NOT_FOUND', `Message ${id} not found`);
  const paymentId = typeof ref === 'string' ? ref : await paymentByExtId(ctx, executorId, id, ref);
  const payment = isUuid(paymentId) ? await findPayment(ctx.db, paymentId) : undefined;
  if (!payment) throw new DomainError('PAY_006', `Payment ${paymentId} not found`);
  return transaction(ctx.db, async (tx) => {
    const message = await repo.findMessage(tx, executorId, id, true);
    if (!message) throw new DomainError('NOT_FOUND', `Message ${id} not found`);
    if (message.status !== 'ambiguous' && message.status !== 'unreadable' && message.status !== 'unmatched') {
      throw new DomainError('CONFLICT', `Message is ${message.status}; only unmatched, ambiguous or unreadable ones are linked`);
    }
    const requisite = payment.requisite_id ? await findRequisite(tx, payment.requisite_id) : undefined;
    if (!requisite || requisite.executor_id !== message.executor_id) {
      // An executor sees only their own payments: another's is not there for them, as one that does not exist.
      if (executorId !== null) throw new DomainError('PAY_006', `Payment ${paymentId} not found`);
      throw new DomainError('VALIDATION', 'The payment was not made to a requisite of the executor whose device sent the message');
    }
    if (message.amount !== null && !money(message.amount).eq(payment.payer_amount)) {
      throw new DomainError('VALIDATION', `The message reports ${message.amount}, the payment waits for ${payment.payer_amount}`);
    }
    const changed = await changePayment(tx, ctx, payment.id, 'complete');
    if (!changed)
      throw new DomainError('PAY_008', `Payment is ${payment.status}; only a PENDING payment can be completed by a message`, { status: payment.status });
    let notification: string;
    if (message.status === 'unmatched' && message.notification_id) {
      // Its notification was kept for a person: it becomes the match.
      if (requisite.id !== message.requisite_id) throw new DomainError('VALIDATION', 'The payment was made to another requisite than the message names');
      const resolved = await notifications.resolveNotification(tx, message.notification_id, {
        status: 'matched',
        paymentId: payment.id,
        note: 'linked from the device message',
      });
      if (!resolved) throw new DomainError('CONFLICT', "The message's notification was already linked or set aside");
      notification = resolved.id;
    } else {
      notification = await recordLinked(tx, message, requisite.id, payment);
    }
    await repo.resolveMessage(tx, message.id, { notificationId: notification, requisiteId: requisite.id, note: `linked to payment ${payment.id}` });
    const after = (await repo.findMessage(tx, null, message.id))!;
    await audit(
      tx,
      'device_message.link',
      'device_message',
      message.id,
      { status: message.status },
      { status: after.status, payment_id: payment.id, payment_status: changed.to, notification_id: notification },
    );
    return after;
  });
}

/** The matched notification a linked message leaves, as the companion app's would have. */
async function recordLinked(tx: Tx, message: repo.MessageRow, requisiteId: string, payment: { id: string; payer_amount: string }): Promise<string> {
  const row = await notifications.insertNotification(tx, {
    executor_id: message.executor_id,
    requisite_id: requisiteId,
    amount: payment.payer_amount,
    text: message.text,
    received_at: message.received_at,
    parsed_bank: message.parsed_bank,
    status: 'matched',
    payment_id: payment.id,
    candidate_payment_id: null,
    dedupe_key: null,
  });
  return row.id;
}

/** Sets a waiting message aside with a note (not a payment, or already handled): nothing a person must handle stays waiting for ever. */
export async function setAsideMessage(ctx: AppContext, executorId: string | null, id: string, note: string, audit: AuditRecorder): Promise<repo.MessageRow> {
  if (!isUuid(id)) throw new DomainError('NOT_FOUND', `Message ${id} not found`);
  return transaction(ctx.db, async (tx) => {
    const message = await repo.findMessage(tx, executorId, id, true);
    if (!message) throw new DomainError('NOT_FOUND', `Message ${id} not found`);
    if (!repo.WAITING_STATUSES.includes(message.status)) {
      throw new DomainError('CONFLICT', `Message is ${message.status}; only unmatched, ambiguous or unreadable ones are set aside`);
    }
    if (message.status === 'unmatched' && message.notification_id) {
      // The notification kept with it waits for a person too: it is set aside with the message,
      // so that neither is left for someone to handle twice.
      const resolved = await notifications.resolveNotification(tx, message.notification_id, { status: 'resolved', paymentId: null, note });
      if (!resolved) throw new DomainError('CONFLICT', "The message's notification was already linked or set aside");
    }
    await repo.resolveMessage(tx, message.id, { note });
    const after = (await repo.findMessage(tx, null, message.id))!;
    await audit(tx, 'device_message.set_aside', 'device_message', message.id, { status: message.status }, { status: after.status, note });
    return after;
  });
}

const STATUSES: repo.MessageStatus[] = ['matched', 'unmatched', 'ambiguous', 'unreadable', 'ignored', 'resolved'];

/** Messages by status; `waiting` is every status a person still has to handle (unmatched, ambiguous, unreadable). */
export async function listMessages(ctx: AppContext, filter: { executorId?: string; status?: string; limit: number; offset: number }) {
  const { status, ...rest } = filter;
  if (status !== undefined && status !== 'waiting' && !STATUSES.includes(status as repo.MessageStatus)) {
    throw new DomainError('VALIDATION', `status must be waiting or one of ${STATUSES.join(', ')}`);
  }
  const statuses = status === undefined ? undefined : status === 'waiting' ? repo.WAITING_STATUSES : [status as repo.MessageStatus];
  return repo.listMessages(ctx.db, { ...rest, statuses });
}

/**
 * The executor's own PENDING payments a waiting message of theirs may be linked to: of the
 * message's amount (every one when it has none), on its requisite when it was matched to one;
 * those whose card or phone ends in the digits the text names first. Offered even when the text
 * names no card, or one the executor does not have, so that a message never waits with nothing to
 * choose from.
 */
export async function candidatesForMessage(ctx: AppContext, executorId: string, id: string) {
  const message = isUuid(id) ? await repo.findMessage(ctx.db, executorId, id) : undefined;
  if (!message) throw new DomainError('NOT_FOUND', `Message ${id} not found`);
  if (!repo.WAITING_STATUSES.includes(message.status)) return [];
  const rows = await repo.candidatePayments(ctx.db, executorId, {
    amount: message.amount,
    requisiteId: message.status === 'unmatched' ? message.requisite_id : null,
  });
  const tail = message.digits ? visibleTail(message.digits) : '';
  const named = (row: repo.CandidateRow) => tail.length >= 2 && row.requisite_digits.endsWith(tail);
  return [...rows.filter(named), ...rows.filter((row) => !named(row))].map((row) => ({ ...pendingView(row), named_in_text: named(row) }));
}

export function toMessage(row: repo.MessageRow) {
  return {
    id: row.id,
    device_id: row.device_id,
    executor_id: row.executor_id,
    text: row.text,
    sender: row.sender,
    received_at: row.received_at?.toISOString() ?? null,
    status: row.status,
    reason: row.reason,
    amount: row.amount,
    currency: row.currency,
    digits: row.digits,
    requisite_id: row.requisite_id,
    notification_id: row.notification_id,
    payment_id: row.payment_id ?? null,
    resolved_note: row.resolved_note,
    created_at: row.created_at.toISOString(),
  };
}

/** A payment waiting on an executor's card as the cabinet shows it (no merchant, no payer beyond the amount). */
export function pendingView(row: repo.PendingRow) {
  return {
    id: row.id,
    requisite_id: row.requisite_id,
    amount: row.payer_amount,
    currency: row.payer_currency,
    valid_until: row.valid_until.toISOString(),
    created_at: row.created_at.toISOString(),
    payer_confirmed_at: row.payer_confirmed_at?.toISOString() ?? null,
  };
}
