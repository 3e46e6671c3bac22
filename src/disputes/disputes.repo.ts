import type { Queryable, Tx } from '../db/pool.js';
import { openFlagExists } from '../risk/flags.repo.js';

export interface DisputeRow {
  id: string;
  payment_id: string;
  merchant_id: string;
  amount: string | null;
  comment: string | null;
  receipt_id: string | null;
  status: 'open' | 'cancelled' | 'approved' | 'rejected';
  decided_amount: string | null;
  decided_by: string | null;
  decided_at: Date | null;
  /** Why a person rejected it, in their words (migration 037). */
  decision_reason: string | null;
  created_at: Date;
  /** The executor whose payment it is (null: a provider's payment, decided there). Migration 044. */
  executor_id: string | null;
  /** While open: awaiting_executor, contested or escalated (null for a provider's payment). */
  stage: DisputeStage | null;
  answer_due_at: Date | null;
  support_due_at: Date | null;
  /** USDT frozen on the executor while it is open (0 when uncovered). */
  hold: string | null;
  uncovered: boolean;
  executor_answer: 'accepted' | 'contested' | null;
  executor_amount: string | null;
  executor_comment: string | null;
  executor_file_key: string | null;
  executor_file_type: string | null;
  executor_file_size: number | null;
  executor_file_sha256: Buffer | null;
  answered_at: Date | null;
  timed_out: 'approved' | 'escalated' | null;
  late_notification_id: string | null;
}

export type DisputeStage = 'awaiting_executor' | 'contested' | 'escalated';

const COLUMNS = `id, payment_id, merchant_id, amount, comment, receipt_id, status, decided_amount, decided_by, decided_at, decision_reason, created_at,
  executor_id, stage, answer_due_at, support_due_at, hold, uncovered, executor_answer, executor_amount, executor_comment, executor_file_key,
  executor_file_type, executor_file_size, executor_file_sha256, answered_at, timed_out, late_notification_id`;

/**
 * Inserts an open dispute. With an executor it awaits the executor's answer until `answer_due_at`:
 * the terminal's own window (its night window between 22:00 and 08:00 in `timezone`) or
 * `answerSeconds`. A provider's payment's dispute has no stage and no deadline.
 */
export async function insertDispute(
  db: Queryable,
  d: {
    paymentId: string;
    merchantId: string;
    amount: string | null;
    comment: string | null;
    receiptId: string | null;
    executorId: string | null;
    terminalId: string;
    answerSeconds: number;
    timezone: string;
  },
): Promise<DisputeRow> {
  const { rows } = await db.query<DisputeRow>(
    `INSERT INTO disputes (payment_id, merchant_id, amount, comment, receipt_id, executor_id, stage, answer_due_at)
     SELECT $1, $2, $3, $4, $5, $6::uuid, CASE WHEN $6::uuid IS NULL THEN NULL ELSE 'awaiting_executor' END,
            CASE WHEN $6::uuid IS NULL THEN NULL
                 ELSE now() + make_interval(secs => CASE
                   WHEN extract(hour FROM now() AT TIME ZONE $9) >= 22 OR extract(hour FROM now() AT TIME ZONE $9) < 8
                   THEN coalesce(t.dispute_night_answer_seconds, t.dispute_answer_seconds, $8)
                   ELSE coalesce(t.dispute_answer_seconds, $8) END) END
       FROM terminals t WHERE t.id = $7
     RETURNING ${COLUMNS}`,
    [d.paymentId, d.merchantId, d.amount, d.comment, d.receiptId, d.executorId, d.terminalId, d.answerSeconds, d.timezone],
  );
  return rows[0]!;
}

/** Records what was frozen on the executor for the dispute (0 and uncovered when its deposit could not). */
export async function setDisputeHold(db: Queryable, id: string, hold: string, uncovered: boolean): Promise<void> {
  await db.query('UPDATE disputes SET hold = $2, uncovered = $3 WHERE id = $1', [id, hold, uncovered]);
}

/** The payment's open dispute, locked (the payment is locked first by every path). */
export async function lockOpenDispute(db: Queryable, paymentId: string): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(`SELECT ${COLUMNS} FROM disputes WHERE payment_id = $1 AND status = 'open' FOR UPDATE`, [paymentId]);
  return rows[0];
}

/** The executor's answer: a contest moves an awaiting (or already escalated) dispute to support's contested queue (guarded on the stage). */
export async function contest(
  db: Queryable,
  id: string,
  answer: { comment: string | null; file: { key: string; contentType: string; size: number; sha256: Buffer } | undefined; supportSeconds: number },
): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(
    `UPDATE disputes SET stage = 'contested', executor_answer = 'contested', executor_comment = $2, executor_file_key = $3,
            executor_file_type = $4, executor_file_size = $5, executor_file_sha256 = $6, answered_at = now(),
            support_due_at = coalesce(support_due_at, now() + make_interval(secs => $7))
      WHERE id = $1 AND status = 'open' AND stage IN ('awaiting_executor', 'escalated') RETURNING ${COLUMNS}`,
    [
      id,
      answer.comment,
      answer.file?.key ?? null,
      answer.file?.contentType ?? null,
      answer.file?.size ?? null,
      answer.file?.sha256 ?? null,
      answer.supportSeconds,
    ],
  );
  return rows[0];
}

/** The executor's acceptance, written on the dispute before it is closed as approved. */
export async function recordAcceptance(db: Queryable, id: string, amount: string, lateNotificationId: string | null): Promise<void> {
  await db.query(`UPDATE disputes SET executor_answer = 'accepted', executor_amount = $2, answered_at = now(), late_notification_id = $3 WHERE id = $1`, [
    id,
    amount,
    lateNotificationId,
  ]);
}

/** The deadline escalated an unanswered dispute to support (guarded: decided once). */
export async function escalate(db: Queryable, id: string, supportSeconds: number): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(
    `UPDATE disputes SET stage = 'escalated', timed_out = 'escalated', support_due_at = now() + make_interval(secs => $2)
      WHERE id = $1 AND status = 'open' AND stage = 'awaiting_executor' RETURNING ${COLUMNS}`,
    [id, supportSeconds],
  );
  return rows[0];
}

/** Marks a dispute the deadline approved (before it is closed as approved in the same transaction). */
export async function markTimedOutApproved(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE disputes SET timed_out = 'approved' WHERE id = $1`, [id]);
}

/**
 * The dispute whose executor's answer is most overdue, with its payment locked — skipping those
 * whose payment another transaction holds (another instance deciding it, or a person acting on
 * it) and those in `exclude` — and what its terminal says an unanswered dispute comes to.
 */
export async function lockOverdue(
  tx: Tx,
  exclude: string[],
  only?: string,
): Promise<{ id: string; payment_id: string; dispute_timeout: 'escalate' | 'approve' } | undefined> {
  const { rows } = await tx.query<{ id: string; payment_id: string; dispute_timeout: 'escalate' | 'approve' }>(
    `SELECT d.id, d.payment_id, t.dispute_timeout
       FROM disputes d JOIN payments p ON p.id = d.payment_id JOIN terminals t ON t.id = p.terminal_id
      WHERE d.status = 'open' AND d.stage = 'awaiting_executor' AND d.answer_due_at <= now()
        AND NOT (d.id = ANY($1::uuid[])) AND ($2::uuid IS NULL OR d.id = $2)
      ORDER BY d.answer_due_at LIMIT 1 FOR UPDATE OF p SKIP LOCKED`,
    [exclude, only ?? null],
  );
  return rows[0];
}

/** An executor's disputes, newest first; another executor's are never listed. */
export async function listExecutorDisputes(db: Queryable, executorId: string, page: { limit: number; offset: number }): Promise<DisputeRow[]> {
  const { rows } = await db.query<DisputeRow>(
    `SELECT ${COLUMNS} FROM disputes WHERE executor_id = $1
      ORDER BY (status = 'open') DESC, coalesce(answer_due_at, created_at), created_at DESC, id LIMIT $2 OFFSET $3`,
    [executorId, page.limit, page.offset],
  );
  return rows;
}

/** One of the executor's disputes; another executor's is not found. */
export async function findExecutorDispute(db: Queryable, executorId: string, id: string): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(`SELECT ${COLUMNS} FROM disputes WHERE executor_id = $1 AND id = $2`, [executorId, id]);
  return rows[0];
}

/**
 * Late money that may be a dispute's (issue 35 item 6): the executor's bank messages that matched
 * no PENDING payment (late or unmatched), on the disputed payment's requisite, for its payer
 * amount or the amount the merchant claims, received since the payment was created.
 */
export async function lateMoneyFor(
  db: Queryable,
  disputes: { id: string; payment_id: string; amount: string | null }[],
): Promise<{ dispute_id: string; id: string; amount: string; text: string | null; received_at: Date | null; created_at: Date }[]> {
  if (disputes.length === 0) return [];
  const { rows } = await db.query<{ dispute_id: string; id: string; amount: string; text: string | null; received_at: Date | null; created_at: Date }>(
    `SELECT d.id AS dispute_id, n.id, n.amount, n.text, n.received_at, n.created_at
       FROM unnest($1::uuid[], $2::uuid[], $3::numeric[]) AS d(id, payment_id, claimed)
       JOIN payments p ON p.id = d.payment_id
       JOIN notifications n ON n.requisite_id = p.requisite_id AND n.executor_id = p.executor_id
                           AND n.status IN ('late', 'unmatched') AND n.created_at >= p.created_at
                           AND (n.amount = p.payer_amount OR (NOT p.cross_border AND n.amount = d.claimed))
      ORDER BY n.created_at DESC`,
    [disputes.map((d) => d.id), disputes.map((d) => d.payment_id), disputes.map((d) => d.amount)],
  );
  return rows;
}

/** The executors' open-dispute figures that keep the cap (migration 044), changed under the executor's row lock. */
export async function countOpenDispute(db: Queryable, executorId: string, change: { open: number; uncovered: number }): Promise<void> {
  await db.query('UPDATE executors SET open_disputes = open_disputes + $2, uncovered_disputes = uncovered_disputes + $3, updated_at = now() WHERE id = $1', [
    executorId,
    change.open,
    change.uncovered,
  ]);
}

/**
 * Locks an executor's row, then its requisites in id order — the order its change reaches them
 * (the executors_copy_to_requisites trigger) — before any of its ledger rows: a create locks a
 * requisite, then the ledger rows, so a dispute that changed the executor's cap figures after
 * freezing on its deposit could deadlock with it.
 */
export async function lockExecutorAndRequisites(db: Queryable, executorId: string): Promise<void> {
  await db.query('SELECT id FROM executors WHERE id = $1 FOR NO KEY UPDATE', [executorId]);
  await db.query('SELECT id FROM requisites WHERE executor_id = $1 ORDER BY id FOR NO KEY UPDATE', [executorId]);
}

/**
 * Attaches a receipt to the payment's open dispute only when the dispute has none yet (spec: "an
 * earlier receipt is never overwritten").
 */
export async function attachReceiptIfNone(db: Queryable, paymentId: string, receiptId: string): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE disputes SET receipt_id = $2 WHERE payment_id = $1 AND status = 'open' AND receipt_id IS NULL`, [
    paymentId,
    receiptId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Closes the payment's open dispute with the outcome. */
export async function closeDispute(
  db: Queryable,
  paymentId: string,
  outcome: { status: 'cancelled' | 'approved' | 'rejected'; decidedAmount?: string; decidedBy?: string; reason?: string },
): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(
    `UPDATE disputes SET status = $2, decided_amount = $3, decided_by = $4, decision_reason = $5, decided_at = now()
      WHERE payment_id = $1 AND status = 'open' RETURNING ${COLUMNS}`,
    [paymentId, outcome.status, outcome.decidedAmount ?? null, outcome.decidedBy ?? null, outcome.reason ?? null],
  );
  return rows[0];
}

/**
 * Dispute cards for support. Open ones are ordered by their deadline (support's own once contested
 * or escalated, the executor's before), the nearest first; closed ones newest first. `stage`
 * narrows open ones to a stage, or to `overdue` (a deadline passed); `flagged` to those whose
 * dispute or payment has a risk flag no person settled yet (or to those without one).
 */
export async function listDisputes(
  db: Queryable,
  filter: { status?: string; stage?: string; flagged?: boolean; limit: number; offset: number },
): Promise<DisputeRow[]> {
  const { rows } = await db.query<DisputeRow>(
    `SELECT ${COLUMNS} FROM disputes d
      WHERE ($1::text IS NULL OR status = $1)
        AND ($4::text IS NULL OR ($4 = 'overdue' AND status = 'open' AND coalesce(support_due_at, answer_due_at) <= now()) OR stage = $4)
        AND ($5::boolean IS NULL OR ${openFlagExists('d')} = $5)
      ORDER BY CASE WHEN status = 'open' THEN coalesce(support_due_at, answer_due_at) END NULLS LAST, created_at DESC, id LIMIT $2 OFFSET $3`,
    [filter.status ?? null, filter.limit, filter.offset, filter.stage ?? null, filter.flagged ?? null],
  );
  return rows;
}

export async function findDispute(db: Queryable, id: string): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(`SELECT ${COLUMNS} FROM disputes WHERE id = $1`, [id]);
  return rows[0];
}

/** A payment's disputes, oldest first (index disputes_payment, migration 030). */
export async function listPaymentDisputes(db: Queryable, paymentId: string): Promise<DisputeRow[]> {
  const { rows } = await db.query<DisputeRow>(`SELECT ${COLUMNS} FROM disputes WHERE payment_id = $1 ORDER BY created_at, id`, [paymentId]);
  return rows;
}

// The first executor's contest file with a content: kept with the receipts' look-ups, where the payouts' proof check reads it too.
export { firstExecutorFileWith } from '../receipts/receipts.repo.js';
