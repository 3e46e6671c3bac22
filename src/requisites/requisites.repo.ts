import { prepared, type Queryable, type Tx } from '../db/pool.js';
import type { TrafficClass } from '../risk/pool-rules.repo.js';

export interface RequisiteRow {
  id: string;
  executor_id: string;
  type: string;
  value: string;
  bank_code: string | null;
  holder: string;
  currency: string;
  country: string;
  methods: string[];
  min_amount: string;
  max_amount: string | null;
  is_active: boolean;
  /** Limits in the requisite's currency (turnover) and in hand-outs (count); null: the executor's default applies. */
  daily_turnover_limit: string | null;
  monthly_turnover_limit: string | null;
  daily_count_limit: number | null;
  monthly_count_limit: number | null;
  /** The payers' traffic classes the requisite takes (migration 048); null: every class. */
  traffic_classes: TrafficClass[] | null;
  /** Why the requisite was switched off automatically; null when on or switched off by hand. */
  disabled_reason: string | null;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = `id, executor_id, type, value, bank_code, holder, currency, country, methods, min_amount, max_amount,
  is_active, daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit, traffic_classes, disabled_reason, last_used_at,
  created_at`;

export type RequisiteFields = Omit<RequisiteRow, 'id' | 'last_used_at' | 'created_at' | 'disabled_reason'>;

const LIMITS = (r: RequisiteFields) => [r.daily_turnover_limit, r.monthly_turnover_limit, r.daily_count_limit, r.monthly_count_limit];

export async function insertRequisite(db: Queryable, r: RequisiteFields): Promise<RequisiteRow> {
  const { rows } = await db.query<RequisiteRow>(
    `INSERT INTO requisites (executor_id, type, value, bank_code, holder, currency, country, methods, min_amount, max_amount, is_active,
                             daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit, traffic_classes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING ${COLUMNS}`,
    [
      r.executor_id,
      r.type,
      r.value,
      r.bank_code,
      r.holder,
      r.currency,
      r.country,
      r.methods,
      r.min_amount,
      r.max_amount,
      r.is_active,
      ...LIMITS(r),
      r.traffic_classes,
    ],
  );
  return rows[0]!;
}

/** A requisite by id; `lock` takes its row (the lock its update takes) for a change in the same transaction. */
export async function findRequisite(db: Queryable, id: string, lock = false): Promise<RequisiteRow | undefined> {
  const { rows } = await db.query<RequisiteRow>(prepared(`SELECT ${COLUMNS} FROM requisites WHERE id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`, [id]));
  return rows[0];
}

export async function updateRequisite(db: Queryable, id: string, r: RequisiteFields): Promise<RequisiteRow | undefined> {
  const { rows } = await db.query<RequisiteRow>(
    // Switched on (again): the automatic switch-off's reason goes, and the expired streak starts afresh.
    `UPDATE requisites SET type = $2, value = $3, bank_code = $4, holder = $5, currency = $6, country = $7, methods = $8,
            min_amount = $9, max_amount = $10, is_active = $11, daily_turnover_limit = $12, monthly_turnover_limit = $13,
            daily_count_limit = $14, monthly_count_limit = $15, traffic_classes = $16,
            disabled_reason = CASE WHEN $11 THEN NULL ELSE disabled_reason END,
            care_since = CASE WHEN $11 AND NOT is_active THEN now() ELSE care_since END, updated_at = now()
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, r.type, r.value, r.bank_code, r.holder, r.currency, r.country, r.methods, r.min_amount, r.max_amount, r.is_active, ...LIMITS(r), r.traffic_classes],
  );
  return rows[0];
}

export async function listRequisites(db: Queryable, filter: { executorId?: string }): Promise<RequisiteRow[]> {
  const { rows } = await db.query<RequisiteRow>(`SELECT ${COLUMNS} FROM requisites WHERE ($1::uuid IS NULL OR executor_id = $1) ORDER BY created_at, id`, [
    filter.executorId ?? null,
  ]);
  return rows;
}

/** A requisite the automatic care switched off, with what its executor is told of it. */
export interface SwitchedOff {
  id: string;
  executor_id: string;
  disabled_reason: string;
  type: string;
  value: string;
  bank_code: string | null;
  /** The unpaid hand-outs in a row that switched it off. */
  streak: number;
  /** When it was switched off. */
  at: Date;
}

/**
 * Automatic care (migration 019): of the given requisites, switches off each active one whose
 * executor's last `disable_after_expired` hand-outs (since it was last switched on) all ended
 * unpaid — expired, or confirmed and not found — with the reason, and returns them. Run after
 * the expiry batch that ended them has committed, on its own: it locks requisites only. The
 * latest hand-outs are read backwards on the executor's index (payments_executor_created).
 */
export async function switchOffUnpaidStreaks(db: Queryable, requisiteIds: string[]): Promise<SwitchedOff[]> {
  if (requisiteIds.length === 0) return [];
  const { rows } = await db.query<SwitchedOff>(
    `WITH due AS (
       SELECT r.id, e.disable_after_expired AS n FROM requisites r JOIN executors e ON e.id = r.executor_id
        WHERE r.id = ANY($1::uuid[]) AND r.is_active AND e.disable_after_expired > 0
          AND (SELECT count(*) FILTER (WHERE last.status = 'CANCELLED' AND last.cancel_reason IN ('expired', 'transfer_not_found'))
                 FROM (SELECT p.status, p.cancel_reason FROM payments p
                        WHERE p.executor_id = r.executor_id AND p.requisite_id = r.id
                          AND p.created_at >= coalesce(r.care_since, '-infinity')
                        ORDER BY p.created_at DESC LIMIT e.disable_after_expired) last) = e.disable_after_expired
        ORDER BY r.id
          FOR NO KEY UPDATE OF r
     )
     UPDATE requisites r SET is_active = false, updated_at = now(),
            disabled_reason = format('switched off automatically: its last %s hand-outs ended unpaid (expired); check the account, then switch it on again', due.n)
       FROM due WHERE r.id = due.id
     RETURNING r.id, r.executor_id, r.disabled_reason, r.type, r.value, r.bank_code, due.n AS streak, r.updated_at AS at`,
    [requisiteIds],
  );
  return rows;
}

/** Drops usage counters of periods before last month: no hand-out still open can be counted there. */
export async function purgeOldUsage(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM requisite_usage WHERE starts < (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month')::date`);
  return rowCount ?? 0;
}

/**
 * What a requisite has taken in the current UTC day and month (hand-outs not cancelled), from its
 * payments: the counters are kept only while a limit applies (migration 024).
 */
export async function findUsage(db: Queryable, id: string): Promise<{ period: 'day' | 'month'; amount: string; count: number }[]> {
  const { rows } = await db.query<{ period: 'day' | 'month'; amount: string; count: number }>(
    `SELECT k.period, coalesce(sum(p.payer_amount), 0)::text AS amount, count(p.id)::int AS count
       FROM (VALUES ('day', (now() AT TIME ZONE 'UTC')::date), ('month', date_trunc('month', now() AT TIME ZONE 'UTC')::date)) AS k(period, starts)
       LEFT JOIN requisites r ON r.id = $1
       LEFT JOIN payments p ON p.executor_id = r.executor_id AND p.requisite_id = r.id
                           AND p.created_at >= k.starts AT TIME ZONE 'UTC'
                           AND p.status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL')
      GROUP BY k.period ORDER BY k.period`,
    [id],
  );
  return rows;
}

/** What each of an executor's requisites has taken in the current UTC day and month, with the limits in force (its own, else the executor's default). */
export interface RequisiteLoad {
  id: string;
  day_amount: string;
  day_count: number;
  month_amount: string;
  month_count: number;
  daily_turnover_limit: string | null;
  monthly_turnover_limit: string | null;
  daily_count_limit: number | null;
  monthly_count_limit: number | null;
}

export async function findExecutorLoad(db: Queryable, executorId: string): Promise<RequisiteLoad[]> {
  const { rows } = await db.query<RequisiteLoad>(
    `WITH k AS (SELECT (now() AT TIME ZONE 'UTC')::date AT TIME ZONE 'UTC' AS day,
                       date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month)
     SELECT r.id,
            coalesce(sum(p.payer_amount) FILTER (WHERE p.created_at >= k.day), 0)::text AS day_amount,
            (count(p.id) FILTER (WHERE p.created_at >= k.day))::int AS day_count,
            coalesce(sum(p.payer_amount), 0)::text AS month_amount, count(p.id)::int AS month_count,
            coalesce(r.daily_turnover_limit, e.default_daily_turnover_limit)::text AS daily_turnover_limit,
            coalesce(r.monthly_turnover_limit, e.default_monthly_turnover_limit)::text AS monthly_turnover_limit,
            coalesce(r.daily_count_limit, e.default_daily_count_limit) AS daily_count_limit,
            coalesce(r.monthly_count_limit, e.default_monthly_count_limit) AS monthly_count_limit
       FROM k CROSS JOIN requisites r JOIN executors e ON e.id = r.executor_id
       LEFT JOIN payments p ON p.executor_id = r.executor_id AND p.requisite_id = r.id AND p.created_at >= k.month
                           AND p.status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL')
      WHERE r.executor_id = $1
      GROUP BY r.id, e.id`,
    [executorId],
  );
  return rows;
}

/**
 * Recounts the requisites' usage counters of the current day and month from their payments
 * (requisite_usage_recount, migration 024), after locking the requisites in id order so that the
 * creates holding them have committed: for a limit set or changed, which the creates after it count under.
 */
export async function recountUsage(tx: Tx, requisiteIds: string[]): Promise<void> {
  if (requisiteIds.length === 0) return;
  await tx.query('SELECT id FROM requisites WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE', [requisiteIds]);
  await tx.query('SELECT requisite_usage_recount($1::uuid[])', [requisiteIds]);
}

/** An executor's requisites' ids (for a change of its default limits). */
export async function executorRequisiteIds(db: Queryable, executorId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM requisites WHERE executor_id = $1 ORDER BY id', [executorId]);
  return rows.map((row) => row.id);
}
