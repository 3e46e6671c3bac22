import type { Config } from '../config.js';
import { afterCommit, type Db, prepared, type Queryable, type Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isDepositShort } from '../ledger/holds.js';
import { postMany } from '../ledger/ledger.repo.js';
import { MINOR_UNITS_JSON, money } from '../lib/money.js';
import type { CancelReason, Metrics } from '../observability/metrics.js';

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
 *
 * A completion is one database call (payment_complete, src/db/functions/payment_complete.sql;
 * issue 38): the status change, the posting, the hold's settlement and the webhook event, as a
 * create is one (payment_create_window).
 */
export async function changePayment(
  tx: Tx,
  ctx: LifecycleContext,
  paymentId: string,
  event: PaymentEvent,
  options: ChangeOptions = {},
): Promise<PaymentChange | undefined> {
  const { config } = ctx;
  let change: PaymentChange | undefined;
  if (CREDITING_EVENTS.has(event)) {
    change = await completePayment(tx, config, paymentId, event, options);
    if (!change) return undefined;
  } else {
    change = await transition(tx, paymentId, event, options);
    if (!change) return undefined;
    await paymentsChanged(tx, config, [paymentId]);
    if (stillHeld(change)) await releaseHolds(tx, [change]);
    if (options.disputeHold && (event === 'rejectDispute' || event === 'cancelDispute')) await releaseDisputeHold(tx, change, options.disputeHold);
  }
  const counted = change;
  afterCommit(tx, () => countPaymentChanges(ctx.metrics, [counted]));
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
  const { rows } = await db.query<PaymentChange>(
    prepared(
      // payment_transition (src/db/functions/payment_complete.sql): the guarded UPDATE, and a
      // completion's count in its payer's history (payer_history, migration 048), in one statement.
      `SELECT t.id, t.merchant_id, t.terminal_id, t."from", t."to", t.executor_id, t.hold, t.requisite_id, t.method, t.cancel_reason,
              t.age_seconds, t.is_test
         FROM payment_transition($1, $2, $3, $4, $5, $6) t`,
      [paymentId, TRANSITIONS[event].from, target(event, options), options.reason ?? null, options.receivedAmount ?? null, options.note ?? null],
    ),
  );
  return rows[0];
}

/** The status `event` leads to (options.to for an event that may lead to more than one). */
function target(event: PaymentEvent, options: ChangeOptions): PaymentStatus {
  const rule = TRANSITIONS[event];
  const to = options.to ?? rule.to[0];
  if (!(rule.to as readonly string[]).includes(to)) throw new Error(`event ${event} cannot lead to ${to}`);
  return to;
}

/**
 * A completion (DESIGN.md decision 11 and "Executors' money"), in one call of payment_complete:
 * the guarded status change, then the posting. For a payment an executor took, the payer's money
 * `v = received / rate` is owed by the executor: taken from the hold when the payment was still
 * held (the rest of the hold, if any, returned by a `payin_hold_release` of its own), from what
 * its dispute froze when the hold was released (issue 35: `disputeHold`; its rest returned by a
 * `dispute_release`), from its available balance otherwise (refused with DEPOSIT_SHORT, changing
 * nothing, when the deposit and credit line cannot cover it); the terminal gets the net of
 * decision 11 (at COMMIT: migration 012), the executor its reward, the platform the remainder. The
 * posting reads the same way for every payment (the operator's reports, src/reports, rely on it):
 * the executor's accounts give up exactly `v` in negative entries and gain exactly its reward, as
 * the posting's one positive executor entry. A provider-executed payment's value comes from
 * system_incoming instead. A test payment's completion credits nobody (issue 33 item 4): test
 * money never reaches the ledger; its webhook goes out as any other's. The ledger's unique
 * (kind, ref_id) index makes a second credit of one payment impossible. The figures are
 * payin_settlement's, src/ledger/credit.ts payinSettlement in SQL (test/ledger.test.ts compares them).
 */
async function completePayment(tx: Tx, config: Config, paymentId: string, event: PaymentEvent, options: ChangeOptions): Promise<PaymentChange | undefined> {
  const hold = options.disputeHold;
  return completion(
    tx,
    prepared(`SELECT ${COMPLETION_COLUMNS} FROM payment_complete($1, $2, $3, $4, $5, $6, $7, $8) c`, [
      paymentId,
      TRANSITIONS[event].from,
      target(event, options),
      options.receivedAmount ?? null,
      hold?.disputeId ?? null,
      hold?.executorId ?? null,
      hold?.amount ?? null,
      config.paymentPageUrl,
    ]),
  );
}

/**
 * A reported transfer (an executor's notification, a phone's message: src/incoming): the one
 * PENDING payment on `requisiteId` for `payerAmount` (the cascade guarantees at most one) is
 * completed — the `complete` event, as changePayment applies it — in the same database call that
 * finds and locks it (payment_complete_transfer). Returns the change, or undefined when no PENDING
 * payment is there; counted in the metrics once the caller's transaction commits.
 */
export async function completeTransfer(tx: Tx, ctx: LifecycleContext, requisiteId: string, payerAmount: string): Promise<PaymentChange | undefined> {
  const change = await completion(
    tx,
    prepared(`SELECT ${COMPLETION_COLUMNS} FROM payment_complete_transfer($1, $2, $3, $4) c`, [
      requisiteId,
      payerAmount,
      TRANSITIONS.complete.from,
      ctx.config.paymentPageUrl,
    ]),
  );
  if (change) afterCommit(tx, () => countPaymentChanges(ctx.metrics, [change]));
  return change;
}

/**
 * A transfer an executor reported, with the rows its completion writes beside the payment's: its
 * notification and the audit row naming who reported it (src/incoming/notifications.service.ts
 * receiveNotification; the money rule's posting, state change and audit row in one transaction).
 */
export interface ReportedTransfer {
  executorId: string;
  requisiteId: string;
  /** In the requisite's currency, two decimals. */
  amount: string;
  text: string | null;
  receivedAt: Date | null;
  parsedBank: string | null;
  dedupeKey: Buffer | null;
  /** Who reported it, as the audit log names them (AuditActor). */
  actor: { name: string; userId: string | null; ip: string | null };
  /**
   * Set when the requisite was not read before (issue 38): the decimal places of the amount as
   * sent, which completeReportedTransfers has checked with the requisite's owner against its
   * currency. Unset: the caller read the requisite and checked both.
   */
  amountPlaces?: number;
}

/**
 * What became of one reported transfer in completeReportedTransfers: `matched` (completed, its
 * notification and audit row written and committed) or `duplicate` (a stored notification's
 * repeat), each with the notification; `busy` (a row it needs was locked: a batch waits for no
 * lock) or `again` (no PENDING payment matched, or the deposit cannot cover it), which wrote
 * nothing and go the whole way alone.
 */
export type ReportedTransferOutcome =
  | { outcome: 'matched' | 'duplicate'; notification: { id: string; status: 'matched' | 'unmatched' | 'late' | 'resolved'; payment_id: string | null } }
  | { outcome: 'busy' | 'again' };

type ReportedTransferRow = PaymentChange & {
  outcome: ReportedTransferOutcome['outcome'];
  notification_id: string | null;
  notification_status: 'matched' | 'unmatched' | 'late' | 'resolved' | null;
  notification_payment_id: string | null;
};

/**
 * Reported transfers completed in one statement, its own transaction and commit
 * (notification_complete_transfers, src/db/functions/payment_complete.sql; issue 38): each the
 * `complete` event as completeTransfer applies it, with its notification and audit row, or the
 * repeat of a stored notification. `wait` false (several taken together) makes each item that would
 * wait for a lock come back `busy`; true (one alone) waits, as completeTransfer does. An item that
 * is not done here leaves nothing and does not fail the others. `db` is the pool, never a
 * transaction: the statement commits on its own, and the completions are counted once it has.
 */
export async function completeReportedTransfers(
  db: Db,
  ctx: LifecycleContext,
  transfers: readonly ReportedTransfer[],
  wait: boolean,
): Promise<ReportedTransferOutcome[]> {
  const { rows } = await db.query<ReportedTransferRow>(
    prepared(
      `SELECT c.outcome, c.notification_id, c.notification_status, c.notification_payment_id, ${COMPLETION_CHANGE_COLUMNS}
         FROM notification_complete_transfers($1::uuid[], $2::uuid[], $3::numeric[], $4::text[], $5::timestamptz[], $6::text[], $7::bytea[],
                                              $8::text[], $9::uuid[], $10::text[], $11, $12, $13, $14::integer[], $15::jsonb) c
        ORDER BY c.item`,
      [
        transfers.map((t) => t.executorId),
        transfers.map((t) => t.requisiteId),
        transfers.map((t) => t.amount),
        transfers.map((t) => t.text),
        transfers.map((t) => t.receivedAt),
        transfers.map((t) => t.parsedBank),
        transfers.map((t) => t.dedupeKey),
        transfers.map((t) => t.actor.name),
        transfers.map((t) => t.actor.userId),
        transfers.map((t) => t.actor.ip),
        wait,
        TRANSITIONS.complete.from,
        ctx.config.paymentPageUrl,
        transfers.map((t) => t.amountPlaces ?? null),
        MINOR_UNITS_JSON,
      ],
    ),
  );
  if (rows.length !== transfers.length) throw new Error(`notification_complete_transfers answered ${rows.length} rows for ${transfers.length} transfers`);
  const completed = rows
    .filter((row) => row.outcome === 'matched')
    .map(({ outcome, notification_id, notification_status, notification_payment_id, ...change }) => change);
  countPaymentChanges(ctx.metrics, completed);
  return rows.map((row) =>
    row.outcome === 'matched' || row.outcome === 'duplicate'
      ? { outcome: row.outcome, notification: { id: row.notification_id!, status: row.notification_status!, payment_id: row.notification_payment_id } }
      : { outcome: row.outcome },
  );
}

const COMPLETION_CHANGE_COLUMNS = `c.id, c.merchant_id, c.terminal_id, c."from", c."to", c.executor_id, c.hold, c.requisite_id, c.method, c.cancel_reason,
  c.age_seconds, c.is_test`;

const COMPLETION_COLUMNS = `${COMPLETION_CHANGE_COLUMNS}, c.short_needed, c.short_balance, c.short_credit_limit`;

type CompletionRow = PaymentChange & { short_needed: string | null; short_balance: string | null; short_credit_limit: string | null };

/** Runs a completion's one statement: the change, or DEPOSIT_SHORT (the caller's transaction then rolls back). */
async function completion(tx: Tx, query: ReturnType<typeof prepared>): Promise<PaymentChange | undefined> {
  let row: CompletionRow | undefined;
  try {
    row = (await tx.query<CompletionRow>(query)).rows[0];
  } catch (err) {
    // payment_complete checks the deposit under its rows' lock; should the floor CHECK still
    // refuse (a credit line lowered meanwhile), the answer is the same refusal.
    if (isDepositShort(err)) throw depositShort(undefined, undefined, undefined);
    throw err;
  }
  if (!row) return undefined;
  const { short_needed, short_balance, short_credit_limit, ...change } = row;
  if (short_needed !== null) {
    throw depositShort(change.executor_id!, money(short_needed).toFixed(), { balance: short_balance ?? '0', credit_limit: short_credit_limit ?? '0' });
  }
  return change;
}

function depositShort(executorId: string | undefined, needed: string | undefined, deposit: { balance: string; credit_limit: string } | undefined): DomainError {
  const figures =
    needed && deposit
      ? ` needs ${needed} USDT from its deposit, which has ${money(deposit.balance).toFixed()} USDT available with a credit line of ${money(deposit.credit_limit).toFixed()} USDT`
      : ' cannot be covered by its deposit';
  return new DomainError(
    'DEPOSIT_SHORT',
    `${executorId === undefined ? "The payment's executor" : `Executor ${executorId}`}${figures}; top the deposit up (POST /admin/v1/executors/${executorId ?? '{id}'}/adjustments) or raise its credit_limit, then try again`,
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
  // payments_changed_events (src/db/functions/payment_complete.sql): the events written from the
  // payments' rows in one statement, no read by the service first; the payload is toPayment's
  // (test/webhooks.test.ts compares the two).
  await tx.query(prepared('SELECT payments_changed_events($1::uuid[], $2)', [paymentIds, config.paymentPageUrl]));
}
