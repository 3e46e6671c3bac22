import { prepared, type Queryable, type Tx } from '../db/pool.js';
import { createExecutorAccounts } from '../ledger/ledger.repo.js';
import type { TrafficClass } from '../risk/pool-rules.repo.js';

export interface ExecutorRow {
  id: string;
  name: string;
  is_active: boolean;
  created_at: Date;
  /** USDT the executor may go below zero on its available balance (DESIGN.md "Executors' money"). */
  credit_limit: string;
  /** Percent of a completed pay-in's USDT value credited to the executor. */
  payin_reward: string;
  /** Percent added to a completed payout's USDT value credited to the executor who paid it. */
  payout_reward: string;
  /** The deposit's available balance (USDT; below zero down to −credit_limit). */
  balance: string;
  /** USDT frozen by the holds of the executor's open payments and withdrawals. */
  balance_frozen: string;
  /** Paused by the executor (or the operator): its requisites are not handed out. */
  is_paused: boolean;
  /** The operator's priority in the cascade: higher first. */
  priority: number;
  /** Conversion × speed over the last 24 hours, in tenths (executors_score job); 0.5 with no ended hand-out. */
  score: string;
  score_handed_out: number;
  score_completed: number;
  score_median_minutes: string | null;
  score_updated_at: Date | null;
  /** Limits for its requisites that set none of their own (null: none). */
  default_daily_turnover_limit: string | null;
  default_monthly_turnover_limit: string | null;
  default_daily_count_limit: number | null;
  default_monthly_count_limit: number | null;
  /** Consecutive unpaid hand-outs after which a requisite is switched off (0: never). */
  disable_after_expired: number;
  /** The payers' traffic classes its requisites take (migration 048); null: every class. */
  traffic_classes: TrafficClass[] | null;
  /** The child index (0/i) of its TRC-20 deposit address under the operator's xpub; null until assigned. */
  deposit_index: number | null;
  /** Its TRC-20 deposit address, derived from deposit_index; null until assigned. */
  deposit_address: string | null;
  /** How long its phones may be silent before its requisites leave the cascade; null: never. */
  device_silence_minutes: number | null;
  /** Its phones have been silent longer than that: its requisites are not handed out. */
  devices_silent: boolean;
  /** At this many open disputes on its payments it gets no new hand-outs (migration 044). */
  max_open_disputes: number;
  open_disputes: number;
  /** Open disputes its deposit could not cover: while any, no hand-outs. */
  uncovered_disputes: number;
  /** Why a rule switched it off (`dispute_ratio`); null when a person did, or it is on. */
  off_reason: string | null;
  /** The dispute figures of its score, over 7 days (executors_score job). */
  score_disputes: number;
  score_disputes_lost: number;
  score_disputes_late: number;
  score_handed_out_7d: number;
  /** Below this available balance (USDT) the executor is told, once per crossing; null: never (migration 051). */
  low_deposit_threshold: string | null;
}

const COLUMNS = `e.id, e.name, e.is_active, e.created_at, e.credit_limit, e.payin_reward, e.payout_reward,
  e.is_paused, e.priority, e.score, e.score_handed_out, e.score_completed, e.score_median_minutes, e.score_updated_at,
  e.default_daily_turnover_limit, e.default_monthly_turnover_limit, e.default_daily_count_limit, e.default_monthly_count_limit,
  e.disable_after_expired, e.traffic_classes, e.deposit_index, e.deposit_address, e.device_silence_minutes, e.devices_silent,
  e.max_open_disputes, e.open_disputes, e.uncovered_disputes, e.off_reason, e.score_disputes, e.score_disputes_lost, e.score_disputes_late,
  e.score_handed_out_7d, e.low_deposit_threshold,
  coalesce((SELECT a.balance FROM ledger_accounts a WHERE a.executor_id = e.id AND a.kind = 'executor_available'), 0) AS balance,
  coalesce((SELECT a.balance FROM ledger_accounts a WHERE a.executor_id = e.id AND a.kind = 'executor_frozen'), 0) AS balance_frozen`;

/** Inserts an executor with its two ledger accounts (available and frozen), in the caller's transaction. */
export async function insertExecutor(tx: Tx, name: string, tokenHash: Buffer): Promise<ExecutorRow> {
  const { rows } = await tx.query<{ id: string }>('INSERT INTO executors (name, token_hash) VALUES ($1, $2) RETURNING id', [name, tokenHash]);
  const id = rows[0]!.id;
  await createExecutorAccounts(tx, id);
  return (await findExecutor(tx, id))!;
}

export async function findExecutor(db: Queryable, id: string): Promise<ExecutorRow | undefined> {
  const { rows } = await db.query<ExecutorRow>(prepared(`SELECT ${COLUMNS} FROM executors e WHERE e.id = $1`, [id]));
  return rows[0];
}

/** Who an executor-API request comes from (executor auth). */
export type ExecutorIdentity = Pick<ExecutorRow, 'id' | 'name' | 'is_active' | 'created_at'>;

/** Who an executor is, without its balances: what every executor-API request needs (the cabinet's session names it by id). */
export async function findExecutorIdentity(db: Queryable, id: string): Promise<ExecutorIdentity | undefined> {
  const { rows } = await db.query<ExecutorIdentity>(prepared('SELECT id, name, is_active, created_at FROM executors WHERE id = $1', [id]));
  return rows[0];
}

export async function findExecutorByToken(db: Queryable, tokenHash: Buffer): Promise<ExecutorIdentity | undefined> {
  const { rows } = await db.query<ExecutorIdentity>(prepared('SELECT id, name, is_active, created_at FROM executors WHERE token_hash = $1', [tokenHash]));
  return rows[0];
}

export async function listExecutors(db: Queryable): Promise<(ExecutorRow & { requisites: number })[]> {
  const { rows } = await db.query<ExecutorRow & { requisites: number }>(
    `SELECT ${COLUMNS}, (SELECT count(*) FROM requisites r WHERE r.executor_id = e.id) AS requisites
       FROM executors e ORDER BY e.created_at`,
  );
  return rows;
}

export interface ExecutorPatch {
  name?: string;
  isActive?: boolean;
  creditLimit?: string;
  payinReward?: string;
  payoutReward?: string;
  isPaused?: boolean;
  priority?: number;
  disableAfterExpired?: number;
  maxOpenDisputes?: number;
  /** Set when present (null: never told of a low deposit). */
  lowDepositThreshold?: string | null;
  /** Set when present (null: every class). */
  trafficClasses?: TrafficClass[] | null;
  /** Each present key is set (null clears the default). */
  limits?: Partial<Record<DefaultLimit, string | number | null>>;
}

export const DEFAULT_LIMITS = [
  'default_daily_turnover_limit',
  'default_monthly_turnover_limit',
  'default_daily_count_limit',
  'default_monthly_count_limit',
] as const;
export type DefaultLimit = (typeof DEFAULT_LIMITS)[number];

/**
 * Updates an executor in the caller's transaction. A new credit line moves the floor of its
 * available account with it (min_balance = −credit_limit): refused by the account's CHECK
 * (ledger_accounts_executor_floor) when the balance is already below the new floor.
 */
export async function updateExecutor(tx: Tx, id: string, patch: ExecutorPatch): Promise<ExecutorRow | undefined> {
  // A default limit is set when its key is present ($10–$13 say which), so that null can clear it.
  const limits = patch.limits ?? {};
  const { rowCount } = await tx.query(
    `UPDATE executors SET name = coalesce($2, name), is_active = coalesce($3, is_active), credit_limit = coalesce($4, credit_limit),
            payin_reward = coalesce($5, payin_reward), payout_reward = coalesce($6, payout_reward),
            is_paused = coalesce($7, is_paused), priority = coalesce($8, priority), disable_after_expired = coalesce($9, disable_after_expired),
            default_daily_turnover_limit = CASE WHEN $10 THEN $14::numeric ELSE default_daily_turnover_limit END,
            default_monthly_turnover_limit = CASE WHEN $11 THEN $15::numeric ELSE default_monthly_turnover_limit END,
            default_daily_count_limit = CASE WHEN $12 THEN $16::integer ELSE default_daily_count_limit END,
            default_monthly_count_limit = CASE WHEN $13 THEN $17::integer ELSE default_monthly_count_limit END,
            max_open_disputes = coalesce($18, max_open_disputes),
            -- A new line is crossed afresh: the next sweep tells the executor if it is already below.
            low_deposit_threshold = CASE WHEN $19 THEN $20::numeric ELSE low_deposit_threshold END,
            deposit_low = CASE WHEN $19 THEN false ELSE deposit_low END,
            traffic_classes = CASE WHEN $21 THEN $22::text[] ELSE traffic_classes END,
            -- A person switching it on or off overrides a rule's reason.
            off_reason = CASE WHEN $3::boolean IS NULL THEN off_reason ELSE NULL END,
            updated_at = now()
      WHERE id = $1`,
    [
      id,
      patch.name ?? null,
      patch.isActive ?? null,
      patch.creditLimit ?? null,
      patch.payinReward ?? null,
      patch.payoutReward ?? null,
      patch.isPaused ?? null,
      patch.priority ?? null,
      patch.disableAfterExpired ?? null,
      ...DEFAULT_LIMITS.map((key) => key in limits),
      ...DEFAULT_LIMITS.map((key) => limits[key] ?? null),
      patch.maxOpenDisputes ?? null,
      patch.lowDepositThreshold !== undefined,
      patch.lowDepositThreshold ?? null,
      patch.trafficClasses !== undefined,
      patch.trafficClasses ?? null,
    ],
  );
  if (!rowCount) return undefined;
  if (patch.creditLimit !== undefined) {
    await tx.query(`UPDATE ledger_accounts SET min_balance = -$2::numeric WHERE executor_id = $1 AND kind = 'executor_available'`, [id, patch.creditLimit]);
  }
  return findExecutor(tx, id);
}

/** Locks an executor's row (before its requisites, in a change that touches both). */
export async function lockExecutor(tx: Tx, id: string): Promise<void> {
  await tx.query('SELECT id FROM executors WHERE id = $1 FOR NO KEY UPDATE', [id]);
}

/** Locks an executor's available account (before a check-then-post in the same transaction) and returns its balance. */
export async function lockAvailable(tx: Tx, id: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ balance: string }>(
    `SELECT balance FROM ledger_accounts WHERE executor_id = $1 AND kind = 'executor_available' FOR NO KEY UPDATE`,
    [id],
  );
  return rows[0]?.balance;
}

/** The next unused deposit address index (a sequence: never handed out twice, gaps allowed). */
export async function nextDepositIndex(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT nextval('executor_deposit_index') AS n`);
  return Number(rows[0]!.n);
}

/** Records an executor's deposit address, unless it already has one; false when it had. */
export async function assignDepositAddress(db: Queryable, id: string, index: number, address: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE executors SET deposit_index = $2, deposit_address = $3, updated_at = now() WHERE id = $1 AND deposit_index IS NULL',
    [id, index, address],
  );
  return (rowCount ?? 0) > 0;
}

/** Executors with a deposit address: what the deposit poller watches, and from when. */
export async function depositAddresses(
  db: Queryable,
): Promise<{ id: string; deposit_index: number; deposit_address: string; deposit_scanned_to: Date | null }[]> {
  const { rows } = await db.query<{ id: string; deposit_index: number; deposit_address: string; deposit_scanned_to: Date | null }>(
    'SELECT id, deposit_index, deposit_address, deposit_scanned_to FROM executors WHERE deposit_address IS NOT NULL ORDER BY deposit_index',
  );
  return rows;
}

/**
 * Sets where an executor's next deposit scan starts (less a look-back margin). It may move back:
 * to the oldest transfer still waiting for confirmations.
 */
export async function advanceDepositScan(db: Queryable, id: string, to: Date): Promise<void> {
  await db.query('UPDATE executors SET deposit_scanned_to = $2 WHERE id = $1', [id, to]);
}

export async function replaceToken(db: Queryable, id: string, tokenHash: Buffer): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE executors SET token_hash = $2, updated_at = now() WHERE id = $1', [id, tokenHash]);
  return (rowCount ?? 0) > 0;
}

/** Pauses or resumes an executor (its own POST /executor/v1/pause and /resume); returns the executor. */
export async function setPaused(db: Queryable, id: string, paused: boolean): Promise<ExecutorRow | undefined> {
  await db.query('UPDATE executors SET is_paused = $2, updated_at = now() WHERE id = $1 AND is_paused <> $2', [id, paused]);
  return findExecutor(db, id);
}

/**
 * Recomputes every executor's score from its hand-outs of the last 24 hours and its disputes of
 * the last 7 days (the executors_score job):
 * - handed out = hand-outs of 24 hours ended by now (completed or cancelled; open ones are not
 *   judged yet), conversion = completed ÷ handed out, speed = 30 / (30 + median minutes from
 *   hand-out to completion); 0.5 for conversion × speed with nothing ended;
 * - disputes = disputes opened on its payments in 7 days; lost = those of them approved without
 *   its acceptance (a person, its deadline, or a provider approved them); late = those it did not
 *   answer by answer_due_at (answered after it, or never and the deadline decided);
 * - score = conversion × speed ÷ (1 + lost + late ÷ 2), rounded to tenths.
 * Only rows whose figures change are written; a changed score reaches the executor's requisites
 * through the trigger (migration 019). When `ratioLimit` (percent) is above 0, an active executor
 * with at least 3 disputes in 7 days whose disputes exceed that percent of its 7 days' hand-outs
 * is switched off, reason `dispute_ratio`. Returns how many scores changed and who was switched off.
 */
export async function refreshScores(db: Queryable, ratioLimit = 0): Promise<number> {
  const { rows } = await db.query<{ changed: boolean }>(
    `WITH stats AS (
       SELECT e.id,
              count(p.id) FILTER (WHERE p.status NOT IN ('PENDING', 'PROCESSING'))::int AS handed_out,
              count(p.id) FILTER (WHERE p.completed_at IS NOT NULL)::int AS completed,
              round((percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM p.completed_at - p.created_at) / 60)
                       FILTER (WHERE p.completed_at IS NOT NULL))::numeric, 1) AS median
         FROM executors e
         LEFT JOIN payments p ON p.executor_id = e.id AND p.created_at > now() - interval '24 hours'
        GROUP BY e.id
     ), disputed AS (
       SELECT e.id,
              count(d.id)::int AS disputes,
              count(d.id) FILTER (WHERE d.status = 'approved' AND d.executor_answer IS DISTINCT FROM 'accepted')::int AS lost,
              count(d.id) FILTER (WHERE d.answer_due_at IS NOT NULL
                                    AND ((d.answered_at IS NOT NULL AND d.answered_at > d.answer_due_at) OR d.timed_out IS NOT NULL))::int AS late,
              (SELECT count(*) FROM payments p7 WHERE p7.executor_id = e.id AND p7.created_at > now() - interval '7 days')::int AS handed_out_7d
         FROM executors e
         LEFT JOIN disputes d ON d.executor_id = e.id AND d.created_at > now() - interval '7 days'
        GROUP BY e.id
     ), scored AS (
       SELECT s.*, x.disputes, x.lost, x.late, x.handed_out_7d,
              round(CASE WHEN s.handed_out = 0 THEN 0.5
                         WHEN s.completed = 0 THEN 0
                         ELSE least(1, s.completed::numeric / s.handed_out) * 30 / (30 + greatest(s.median, 0)) END
                    / (1 + x.lost + x.late / 2.0), 1) AS score
         FROM stats s JOIN disputed x USING (id)
     ), locked AS (
       SELECT e.id, e.score AS old_score FROM executors e JOIN scored s ON s.id = e.id
        WHERE (e.score, e.score_handed_out, e.score_completed, e.score_median_minutes, e.score_disputes, e.score_disputes_lost, e.score_disputes_late,
               e.score_handed_out_7d)
              IS DISTINCT FROM (s.score, s.handed_out, s.completed, s.median, s.disputes, s.lost, s.late, s.handed_out_7d)
           OR ($1::numeric > 0 AND e.is_active AND s.disputes >= 3 AND s.disputes * 100.0 > $1::numeric * greatest(s.handed_out_7d, 1))
        ORDER BY e.id FOR NO KEY UPDATE OF e
     )
     UPDATE executors e SET score = s.score, score_handed_out = s.handed_out, score_completed = s.completed,
            score_median_minutes = s.median, score_disputes = s.disputes, score_disputes_lost = s.lost, score_disputes_late = s.late,
            score_handed_out_7d = s.handed_out_7d, score_updated_at = now(),
            is_active = CASE WHEN $1::numeric > 0 AND e.is_active AND s.disputes >= 3 AND s.disputes * 100.0 > $1::numeric * greatest(s.handed_out_7d, 1)
                             THEN false ELSE e.is_active END,
            off_reason = CASE WHEN $1::numeric > 0 AND e.is_active AND s.disputes >= 3 AND s.disputes * 100.0 > $1::numeric * greatest(s.handed_out_7d, 1)
                              THEN 'dispute_ratio' ELSE e.off_reason END
       FROM scored s JOIN locked l ON l.id = s.id
      WHERE e.id = s.id
     RETURNING e.score <> l.old_score AS changed`,
    [ratioLimit],
  );
  return rows.filter((row) => row.changed).length;
}

/**
 * The low-deposit sweep (every minute, with the scores): marks low the executors whose available
 * balance is below their own `low_deposit_threshold`, and not low the others; answers those that
 * became low, each once per crossing (a row changes only when its state flips).
 */
export async function sweepLowDeposits(db: Queryable): Promise<{ id: string; balance: string; threshold: string; at: Date }[]> {
  const { rows } = await db.query<{ id: string; balance: string; threshold: string; at: Date; deposit_low: boolean }>(
    `WITH state AS (
       SELECT e.id, e.low_deposit_threshold AS threshold, coalesce(a.balance, 0) AS balance,
              e.low_deposit_threshold IS NOT NULL AND coalesce(a.balance, 0) < e.low_deposit_threshold AS low
         FROM executors e
         LEFT JOIN ledger_accounts a ON a.executor_id = e.id AND a.kind = 'executor_available'
        WHERE e.deposit_low OR e.low_deposit_threshold IS NOT NULL
     )
     UPDATE executors e SET deposit_low = s.low FROM state s
      WHERE s.id = e.id AND e.deposit_low IS DISTINCT FROM s.low
      RETURNING e.id, s.balance::text AS balance, s.threshold::text AS threshold, now() AS at, e.deposit_low`,
  );
  return rows.filter((row) => row.deposit_low).map(({ deposit_low: _, ...row }) => row);
}
