import type { Decimal } from 'decimal.js';
import type { Config } from '../config.js';
import { afterCommit, prepared, type Queryable, type Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { findExecutor } from '../executors/executors.repo.js';
import { creditForPayin, payinSettlement } from '../ledger/credit.js';
import { isDepositShort } from '../ledger/holds.js';
import { type Posting, postMany } from '../ledger/ledger.repo.js';
import { money } from '../lib/money.js';
import type { CancelReason, Metrics } from '../observability/metrics.js';
import { enqueueWebhooks } from '../webhooks/outbox.js';
import { type CreditTerms, findCreditTerms, findPayments } from './payments.repo.js';
import { toPayment } from './payments.schemas.js';

/**
 * The life of a payment in one place: its statuses, the events that move it between them, and
 * what goes with each change — the ledger posting and the webhook event — written in the caller's
 * transaction. Every path (merchant, executor, operator, provider, jobs) changes a payment's
 * status through `changePayment` or `expireDuePayments`; to add a status or an event, edit this file.
 *
 * The executor's hold (DESIGN.md "Executors' money") is taken by the create, in the cascade's
 * statement (payment_create_window / executor_hold_take, migration 017), and from then on changes
 * only here: a payment leaving PENDING (or PROCESSING) unpaid releases it; a completion from
 * there settles it; a completion from DISPUTE, whose hold was released when it was cancelled,
 * takes the payer's money from what the dispute froze on the executor when it opened (issue 35:
 * `disputeHold`; the rest from its available balance), and a rejection or the merchant's cancel
 * releases that freeze. Provider-executed payments hold nothing.
 *
 * A hand-out also counts towards its requisite's limits from the create on (requisite_usage,
 * migration 019); the release of a cancelled one takes it off the count (freeLimitRoom).
 */

export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL', 'CANCELLED', 'CANCELLED_APPEAL', 'DISPUTE'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * The payment state machine: every status change, from any path (merchant, executor, operator,
 * jobs), is one of these events, and is applied only from the listed statuses (spec "Payment
 * transitions"; DESIGN.md decisions 6 and 7).
 */
export const TRANSITIONS = {
  /** "PENDING — timeout — CANCELLED". */
  expire: { from: ['PENDING'], to: ['CANCELLED'] },
  /** "PENDING — manual cancellation — CANCELLED". */
  cancel: { from: ['PENDING'], to: ['CANCELLED'] },
  /** "PENDING — notification or provider callback, transfer verified — COMPLETED". */
  complete: { from: ['PENDING', 'PROCESSING'], to: ['COMPLETED'] },
  /** DESIGN.md decision 6: "A provider may report PROCESSING; nothing else sets it." */
  providerProcessing: { from: ['PENDING'], to: ['PROCESSING'] },
  /** A provider cancelled a payment it executes (its own timeout or manual cancellation). */
  providerCancel: { from: ['PENDING', 'PROCESSING'], to: ['CANCELLED'] },
  /** "PENDING — verification after confirm, transfer not found — CANCELLED". */
  verificationFailed: { from: ['PENDING'], to: ['CANCELLED'] },
  /** "CANCELLED / CANCELLED_APPEAL — POST …/dispute — DISPUTE". */
  openDispute: { from: ['CANCELLED', 'CANCELLED_APPEAL'], to: ['DISPUTE'] },
  /** "DISPUTE — POST …/dispute/cancel — CANCELLED_APPEAL". */
  cancelDispute: { from: ['DISPUTE'], to: ['CANCELLED_APPEAL'] },
  /** "DISPUTE — dispute approved — COMPLETED" (COMPLETED_APPEAL for another amount, decision 7). */
  approveDispute: { from: ['DISPUTE'], to: ['COMPLETED', 'COMPLETED_APPEAL'] },
  /** "DISPUTE — dispute rejected — CANCELLED". */
  rejectDispute: { from: ['DISPUTE'], to: ['CANCELLED'] },
} as const satisfies Record<string, { from: readonly PaymentStatus[]; to: readonly PaymentStatus[] }>;

export type PaymentEvent = keyof typeof TRANSITIONS;

/** Events that complete a payment: each credits the terminal (DESIGN.md decision 11). */
const CREDITING_EVENTS: ReadonlySet<PaymentEvent> = new Set(['complete', 'approveDispute']);

export interface PaymentChange {
  id: string;
  merchant_id: string;
  terminal_id: string;
  from: PaymentStatus;
  to: PaymentStatus;
  /** The executor whose deposit the payment holds or held; null for a provider-executed payment. */
  executor_id: string | null;
  /** The USDT the hand-out froze on the executor; null for a provider-executed payment. */
  hold: string | null;
  /** The requisite it was handed out on; null for a provider-executed payment. */
  requisite_id: string | null;
  /** The payment's method, and its cancel_reason after the change (metrics' labels). */
  method: string;
  cancel_reason: string | null;
  /** Seconds from the payment's creation to this change (database clock). */
  age_seconds: number;
  /** A test terminal's payment (migration 039): its changes post nothing and count in no figure. */
  is_test: boolean;
}

/** Statuses in which an executor payment's hold is frozen: a payment leaving them releases or settles it. */
const HELD: ReadonlySet<PaymentStatus> = new Set(['PENDING', 'PROCESSING']);

function stillHeld(change: PaymentChange): change is PaymentChange & { executor_id: string; hold: string } {
  return change.hold !== null && change.executor_id !== null && HELD.has(change.from) && !HELD.has(change.to);
}

export interface ChangeOptions {
  /** The status to go to, for an event that may lead to more than one. */
  to?: PaymentStatus;
  /** Why a payment was cancelled (cancel_reason). */
  reason?: string;
  /** The words of the person who cancelled it (cancel_note), with `reason`. */
  note?: string;
  /** What the payer actually paid, for an event that completes the payment. */
  receivedAmount?: string;
  /**
   * The dispute's freeze on the executor (issue 35: the claimed value frozen when the dispute
   * opened), for the events that close a dispute: an approval settles it (the pay-in takes the
   * payer's money from it), a rejection or the merchant's cancel releases it.
   */
  disputeHold?: DisputeHold;
}

/** What a dispute froze on its executor: `dispute_reserve` posted with the dispute's id. */
export interface DisputeHold {
  disputeId: string;
  executorId: string;
  /** USDT; 0 when the deposit could not cover it (nothing frozen). */
  amount: string;
}

/** What a payment's change needs of the service: its settings, and the metrics it is counted in. */
export interface LifecycleContext {
  config: Config;
  metrics: Metrics;
}

/**
 * Applies `event` to one payment in the caller's transaction: the guarded status change, the
 * webhook event and, for a completion, the pay-in credit to the terminal — all or nothing with
 * the caller's work. Returns the change, or undefined when the payment was not in a status the
 * event applies from (someone else won; the caller reports that in its own terms). The change is
 * counted in the metrics once the caller's transaction commits (never if it rolls back).
 */
export async function changePayment(
  tx: Tx,
  ctx: LifecycleContext,
  paymentId: string,
  event: PaymentEvent,
  options: ChangeOptions = {},
): Promise<PaymentChange | undefined> {
  const { config } = ctx;
  const change = await transition(tx, paymentId, event, options);
  if (!change) return undefined;
  // A test payment's completion credits nobody (issue 33 item 4): test money never reaches the
  // ledger. Its webhook goes out as any other's.
  if (CREDITING_EVENTS.has(event) && !change.is_test) {
    await creditPayin(tx, config, change, options.disputeHold);
  } else {
    await paymentsChanged(tx, config, [paymentId]);
    if (stillHeld(change)) await releaseHolds(tx, [change]);
    if (options.disputeHold && (event === 'rejectDispute' || event === 'cancelDispute')) await releaseDisputeHold(tx, change, options.disputeHold);
  }
  afterCommit(tx, () => countPaymentChanges(ctx.metrics, [change]));
  return change;
}

/** cancel_reason values as the metrics name them; any other (a reason added later) counts as `other`, never as free text. */
const CANCEL_REASONS: ReadonlyMap<string, CancelReason> = new Map([
  ['expired', 'expired'],
  ['transfer_not_found', 'transfer_not_found'],
  ['manual', 'manual'],
  ['provider_cancelled', 'provider'],
]);

/**
 * Counts committed payment changes in the service's metrics (in process, no I/O): completions,
 * from a transfer or an approved dispute, and payments leaving PENDING or PROCESSING unpaid. A
 * dispute's rejection is no new cancellation: the payment was counted when it was first cancelled.
 * Only for changes that have committed.
 */
export function countPaymentChanges(metrics: Metrics, changes: readonly PaymentChange[]): void {
  for (const change of changes) {
    if (change.is_test) continue;
    const payment = { method: change.method, terminalId: change.terminal_id };
    if (change.to === 'COMPLETED' || change.to === 'COMPLETED_APPEAL') {
      metrics.paymentCompleted({ ...payment, via: HELD.has(change.from) ? 'transfer' : 'dispute', ageSeconds: change.age_seconds });
    } else if (change.to === 'CANCELLED' && HELD.has(change.from)) {
      metrics.paymentCancelled({ ...payment, reason: CANCEL_REASONS.get(change.cancel_reason ?? '') ?? 'other' });
    }
  }
}

/**
 * Applies `event` to one payment, guarded in SQL on the current status so that two racing paths
 * cannot both win: returns the change, or undefined when the payment was not in a `from` status.
 */
async function transition(db: Queryable, paymentId: string, event: PaymentEvent, options: ChangeOptions): Promise<PaymentChange | undefined> {
  const rule = TRANSITIONS[event];
  const to = options.to ?? rule.to[0];
  if (!(rule.to as readonly string[]).includes(to)) throw new Error(`event ${event} cannot lead to ${to}`);
  const { rows } = await db.query<PaymentChange>(
    prepared(
      // A completed payment is not cancelled: it keeps no cancel reason or note of an earlier
      // cancellation (the timeline still tells that one). A new cancellation replaces both.
      // A completion counts towards its payer's history with the merchant (payer_history,
      // migration 048: the traffic classes), in this statement, so that no completion can pass
      // uncounted and none costs a round trip more; two at once both count (the upsert's row
      // lock). Test payments are no history.
      `WITH changed AS (
       UPDATE payments p SET status = $3, updated_at = now(),
              cancel_reason = CASE WHEN $3 IN ('COMPLETED', 'COMPLETED_APPEAL') THEN NULL ELSE coalesce($4, p.cancel_reason) END,
              cancel_note = CASE WHEN $3 IN ('COMPLETED', 'COMPLETED_APPEAL') THEN NULL WHEN $4 IS NOT NULL THEN $6 ELSE p.cancel_note END,
              completed_at = CASE WHEN $3 IN ('COMPLETED', 'COMPLETED_APPEAL') THEN now() ELSE p.completed_at END,
              received_amount = CASE WHEN $3 IN ('COMPLETED', 'COMPLETED_APPEAL') THEN coalesce($5, p.amount) ELSE p.received_amount END
         FROM (SELECT id, status FROM payments WHERE id = $1 FOR UPDATE) old
        WHERE p.id = old.id AND old.status = ANY($2::text[])
        RETURNING p.id, p.merchant_id, p.terminal_id, old.status AS "from", p.status AS "to", p.executor_id, p.hold, p.requisite_id,
                  p.method, p.cancel_reason, extract(epoch FROM p.updated_at - p.created_at)::float8 AS age_seconds, p.is_test, p.client_id
       ), counted AS (
         INSERT INTO payer_history AS h (merchant_id, client_id, completed)
         SELECT c.merchant_id, c.client_id, 1 FROM changed c
          WHERE c."to" IN ('COMPLETED', 'COMPLETED_APPEAL') AND c."from" NOT IN ('COMPLETED', 'COMPLETED_APPEAL')
            AND NOT c.is_test AND c.client_id IS NOT NULL
         ON CONFLICT (merchant_id, client_id) DO UPDATE SET completed = h.completed + 1
       )
       SELECT c.id, c.merchant_id, c.terminal_id, c."from", c."to", c.executor_id, c.hold, c.requisite_id, c.method, c.cancel_reason,
              c.age_seconds, c.is_test
         FROM changed c`,
      [paymentId, rule.from, to, options.reason ?? null, options.receivedAmount ?? null, options.note ?? null],
    ),
  );
  return rows[0];
}

/**
 * The posting of a completion (DESIGN.md decision 11 and "Executors' money"), after its status
 * change. For a payment an executor took, the payer's money `v = received / rate` is owed by the
 * executor: taken from the hold when the payment was still held (the rest of the hold, if any,
 * returned), from its available balance otherwise (a dispute approved after the hold was
 * released; refused with DEPOSIT_SHORT, changing nothing, when the deposit and credit line cannot
 * cover it); the terminal gets the net of decision 11, the executor its reward, the platform the
 * remainder. A provider-executed payment's value comes from system_incoming instead. The ledger's
 * unique (kind, ref_id) index makes a second credit of one payment impossible.
 */
async function creditPayin(tx: Tx, config: Config, change: PaymentChange, disputeHold: DisputeHold | undefined): Promise<void> {
  const payment = await findCreditTerms(tx, change.id);
  const executorId = change.executor_id;
  // What the executor has frozen for this payment: its hand-out's hold while still held, or what
  // its dispute froze (issue 35), which an approval settles.
  const dispute = disputeHold && disputeHold.executorId === executorId && !stillHeld(change) ? disputeHold : undefined;
  const held = stillHeld(change) ? money(payment.hold ?? '0') : money(dispute?.amount ?? '0');
  const { entries, remainder } =
    executorId === null ? { entries: providerEntries(payment), remainder: money(0) } : await executorEntries(tx, payment, executorId, held);
  await paymentsChanged(tx, config, [change.id]);
  try {
    // Every completion on the terminal credits its one balance row: added at COMMIT, the row is
    // locked for the commit only, not through the rest of the caller's work (migration 012).
    const payin: Posting = { kind: 'payin', refId: change.id, merchantId: payment.merchant_id, memo: null, entries, creditsAtCommit: true };
    // A hold larger than the payer's money (a dispute approved for less) returns its remainder by
    // a release of its own, so the pay-in's one positive executor entry is the reward.
    const release: Posting | undefined =
      executorId === null || remainder.isZero()
        ? undefined
        : {
            kind: dispute ? 'dispute_release' : 'payin_hold_release',
            refId: dispute ? dispute.disputeId : change.id,
            merchantId: payment.merchant_id,
            memo: null,
            entries: [
              { account: { executorId, kind: 'executor_frozen' }, amount: remainder.negated() },
              { account: { executorId, kind: 'executor_available' }, amount: remainder },
            ],
          };
    await postMany(tx, release ? [release, payin] : [payin]);
  } catch (err) {
    // The deposit was read as enough a moment ago; a concurrent debit took it meanwhile.
    if (executorId !== null && isDepositShort(err)) throw depositShort(executorId, undefined, undefined);
    throw err;
  }
}

/** A provider-executed payment's completion: the value comes in from outside (system_incoming). */
function providerEntries(payment: CreditTerms): Posting['entries'] {
  const credit = creditForPayin(payment.received_amount, payment.rate, payment.payin_rate);
  const entries: Posting['entries'] = [{ account: { kind: 'system_incoming' }, amount: credit.gross.negated() }];
  // A tiny amount with a fee near 100 % leaves a net below half a micro-USDT, rounded to 0; ledger
  // entries are never 0 (CHECK), so the terminal then gets no entry and the fee takes the gross.
  if (!credit.net.isZero()) entries.push({ account: { terminalId: payment.terminal_id, kind: 'terminal_available' }, amount: credit.net });
  if (!credit.fee.isZero()) entries.push({ account: { kind: 'system_fee_revenue' }, amount: credit.fee });
  return entries;
}

/**
 * An executor payment's completion: see creditPayin. The posting reads the same way for every
 * payment (the operator's reports, src/reports, rely on it): the executor's accounts give up
 * exactly `v` in negative entries — from the hold (executor_frozen) as far as it goes, the rest
 * from its available balance — and gain exactly its reward, as the posting's one positive
 * executor entry. A hold larger than `v` (a dispute approved for less) returns its remainder by a
 * `payin_hold_release` posting of its own (made by creditPayin from the `remainder` returned), so
 * that remainder is never mixed with the reward.
 */
async function executorEntries(tx: Tx, payment: CreditTerms, executorId: string, hold: Decimal): Promise<{ entries: Posting['entries']; remainder: Decimal }> {
  const s = payinSettlement(payment.received_amount, payment.rate, payment.payin_rate, payment.payin_reward);
  // What the executor's available balance gains over both postings: the hold's remainder beyond v
  // (0 for a full payment) and the reward, less v when nothing was held.
  const availableChange = hold.minus(s.gross).plus(s.reward);
  if (availableChange.isNegative()) {
    const deposit = await findExecutor(tx, executorId);
    if (deposit && money(deposit.balance).plus(deposit.credit_limit).lt(availableChange.negated())) {
      throw depositShort(executorId, availableChange.negated().toFixed(), deposit);
    }
  }
  const fromHold = hold.lt(s.gross) ? hold : s.gross;
  const fromAvailable = s.gross.minus(fromHold);
  const remainder = hold.minus(fromHold);
  const entries: Posting['entries'] = [];
  if (!fromHold.isZero()) entries.push({ account: { executorId, kind: 'executor_frozen' }, amount: fromHold.negated() });
  if (!fromAvailable.isZero()) entries.push({ account: { executorId, kind: 'executor_available' }, amount: fromAvailable.negated() });
  if (!s.reward.isZero()) entries.push({ account: { executorId, kind: 'executor_available' }, amount: s.reward });
  if (!s.net.isZero()) entries.push({ account: { terminalId: payment.terminal_id, kind: 'terminal_available' }, amount: s.net });
  if (!s.revenue.isZero()) entries.push({ account: { kind: 'system_fee_revenue' }, amount: s.revenue });
  return { entries, remainder };
}

function depositShort(executorId: string, needed: string | undefined, deposit: { balance: string; credit_limit: string } | undefined): DomainError {
  const figures =
    needed && deposit
      ? ` needs ${needed} USDT from its deposit, which has ${money(deposit.balance).toFixed()} USDT available with a credit line of ${money(deposit.credit_limit).toFixed()} USDT`
      : ' cannot be covered by its deposit';
  return new DomainError(
    'DEPOSIT_SHORT',
    `Executor ${executorId}${figures}; top the deposit up (POST /admin/v1/executors/${executorId}/adjustments) or raise its credit_limit, then try again`,
    { executor_id: executorId, ...(needed ? { needed: Number(needed) } : {}), ...(deposit ? { available: Number(deposit.balance) } : {}) },
  );
}

/** Returns a dispute's freeze to its executor's available balance (rejected, or cancelled by the merchant). */
async function releaseDisputeHold(tx: Tx, change: PaymentChange, hold: DisputeHold): Promise<void> {
  const amount = money(hold.amount);
  if (amount.isZero()) return;
  await postMany(tx, [
    {
      kind: 'dispute_release',
      refId: hold.disputeId,
      merchantId: change.merchant_id,
      memo: null,
      entries: [
        { account: { executorId: hold.executorId, kind: 'executor_frozen' }, amount: amount.negated() },
        { account: { executorId: hold.executorId, kind: 'executor_available' }, amount },
      ],
    },
  ]);
}

/**
 * Returns the holds of payments that left PENDING unpaid to their executors' available balances,
 * one `payin_hold_release` posting each, in one statement (postMany locks every executor row first,
 * in its one fixed order, so two sweeps cannot deadlock). The hand-outs, cancelled, then free their room under
 * their requisites' limits (freeLimitRoom) — after the ledger rows, as in a create.
 */
async function releaseHolds(tx: Tx, changes: (PaymentChange & { executor_id: string; hold: string })[]): Promise<void> {
  await postMany(
    tx,
    changes.map((change) => ({
      kind: 'payin_hold_release',
      refId: change.id,
      merchantId: change.merchant_id,
      memo: null,
      entries: [
        { account: { executorId: change.executor_id, kind: 'executor_frozen' }, amount: money(change.hold).negated() },
        { account: { executorId: change.executor_id, kind: 'executor_available' }, amount: money(change.hold) },
      ],
    })),
  );
  await freeLimitRoom(
    tx,
    changes.map((change) => change.id),
  );
}

/**
 * Takes cancelled hand-outs off their requisites' usage counters (migration 019), in the day and
 * month each was handed out. Lock order: after the ledger rows (a create locks requisite, ledger
 * rows, then usage rows), and the usage rows in key order, so that two sweeps cannot deadlock.
 */
async function freeLimitRoom(tx: Tx, paymentIds: string[]): Promise<void> {
  if (paymentIds.length === 0) return;
  await tx.query(
    prepared(
      `WITH freed AS (
         SELECT p.requisite_id, k.period, k.starts, sum(p.payer_amount) AS amount, count(*)::int AS n
           FROM payments p
          CROSS JOIN LATERAL (VALUES ('day', (p.created_at AT TIME ZONE 'UTC')::date),
                                     ('month', date_trunc('month', p.created_at AT TIME ZONE 'UTC')::date)) AS k(period, starts)
          WHERE p.id = ANY($1::uuid[]) AND p.requisite_id IS NOT NULL
          GROUP BY p.requisite_id, k.period, k.starts
       ), locked AS (
         SELECT u.requisite_id, u.period, u.starts, f.amount, f.n
           FROM requisite_usage u JOIN freed f USING (requisite_id, period, starts)
          ORDER BY u.requisite_id, u.period, u.starts
            FOR NO KEY UPDATE OF u
       )
       UPDATE requisite_usage u SET amount = greatest(u.amount - l.amount, 0), count = greatest(u.count - l.n, 0)
         FROM locked l
        WHERE u.requisite_id = l.requisite_id AND u.period = l.period AND u.starts = l.starts`,
      [paymentIds],
    ),
  );
}

/**
 * Cancels up to `limit` PENDING payments whose deadline has passed, with their webhook events, in
 * the caller's transaction: `valid_until` ("PENDING — timeout — CANCELLED"), or for a confirmed
 * payment the end of its verification (`verify_until`: "PENDING — verification after confirm,
 * transfer not found — CANCELLED"). Rows another instance is already expiring are skipped, so any
 * number of instances may sweep at once; each payment is cancelled exactly once by the status guard.
 * These are the `expire` and `verificationFailed` events (TRANSITIONS) applied in bulk; the
 * executors' holds are released with them. The caller counts the changes (countPaymentChanges)
 * once its transaction has committed.
 */
export async function expireDuePayments(tx: Tx, config: Config, limit: number): Promise<PaymentChange[]> {
  const { rows } = await tx.query<PaymentChange>(
    // MATERIALIZED: the due rows are chosen once. As a subquery in FROM, a nested-loop plan (seen on
    // a small table) rescanned it per outer row and the sweep expired more than its limit.
    `WITH due AS MATERIALIZED (
       SELECT id FROM payments WHERE status = 'PENDING' AND coalesce(verify_until, valid_until) <= now()
          -- A provider-executed payment is ended by its provider (callback or poll); it is
          -- cancelled here only if the provider stays silent an hour past the deadline.
          AND (provider_id IS NULL OR coalesce(verify_until, valid_until) <= now() - interval '1 hour')
        ORDER BY coalesce(verify_until, valid_until) LIMIT $1 FOR UPDATE SKIP LOCKED)
     UPDATE payments p SET status = 'CANCELLED', updated_at = now(),
            cancel_reason = CASE WHEN p.verify_until IS NULL THEN 'expired' ELSE 'transfer_not_found' END
       FROM due
      WHERE p.id = due.id AND p.status = 'PENDING'
      RETURNING p.id, p.merchant_id, p.terminal_id, 'PENDING' AS "from", p.status AS "to", p.executor_id, p.hold, p.requisite_id,
                p.method, p.cancel_reason, extract(epoch FROM p.updated_at - p.created_at)::float8 AS age_seconds, p.is_test`,
    [limit],
  );
  await paymentsChanged(
    tx,
    config,
    rows.map((row) => row.id),
  );
  await releaseHolds(tx, rows.filter(stillHeld));
  return rows;
}

/**
 * The outbox side of payment status changes, in the transaction that changed the statuses: writes
 * `payment.<status>` with each payment as GET returns it (DESIGN.md decision 9) for the payments
 * that have a notify_url.
 */
async function paymentsChanged(tx: Tx, config: Config, paymentIds: string[]): Promise<void> {
  if (paymentIds.length === 0) return;
  const payments = await findPayments(tx, paymentIds, { withNotifyUrl: true });
  await enqueueWebhooks(
    tx,
    payments.map((payment) => ({
      merchantId: payment.merchant_id,
      resourceType: 'payment' as const,
      resourceId: payment.id,
      event: `payment.${payment.status.toLowerCase()}`,
      payload: toPayment(payment, config.paymentPageUrl),
      url: payment.notify_url,
      notificationToken: payment.notification_token,
    })),
  );
}
