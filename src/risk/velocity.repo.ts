import type { Queryable } from '../db/pool.js';

export type LimitScope = 'client_id' | 'ip';

/** A row of risk_limits (migration 047). */
export interface LimitRow {
  scope: LimitScope;
  window_seconds: number;
  max_payments: number | null;
  max_amount: string | null;
  updated_by: string;
  updated_at: Date;
}

const LIMIT_COLUMNS = 'scope, window_seconds, max_payments, max_amount::text AS max_amount, updated_by, updated_at';

export async function listLimits(db: Queryable): Promise<LimitRow[]> {
  const { rows } = await db.query<LimitRow>(`SELECT ${LIMIT_COLUMNS} FROM risk_limits ORDER BY scope`);
  return rows;
}

export async function findLimit(db: Queryable, scope: LimitScope, lock = false): Promise<LimitRow | undefined> {
  const { rows } = await db.query<LimitRow>(`SELECT ${LIMIT_COLUMNS} FROM risk_limits WHERE scope = $1${lock ? ' FOR UPDATE' : ''}`, [scope]);
  return rows[0];
}

/** Sets the one limit of `scope`, replacing the one before. */
export async function putLimit(
  db: Queryable,
  limit: { scope: LimitScope; windowSeconds: number; maxPayments: number | null; maxAmount: string | null; updatedBy: string },
): Promise<LimitRow> {
  const { rows } = await db.query<LimitRow>(
    `INSERT INTO risk_limits (scope, window_seconds, max_payments, max_amount, updated_by) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (scope) DO UPDATE SET window_seconds = EXCLUDED.window_seconds, max_payments = EXCLUDED.max_payments,
       max_amount = EXCLUDED.max_amount, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING ${LIMIT_COLUMNS}`,
    [limit.scope, limit.windowSeconds, limit.maxPayments, limit.maxAmount, limit.updatedBy],
  );
  return rows[0]!;
}

export async function deleteLimit(db: Queryable, scope: LimitScope): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM risk_limits WHERE scope = $1', [scope]);
  return (rowCount ?? 0) > 0;
}

/**
 * The client_id limit a payment create is held to: counted in the create's own transaction, over
 * the payer's payments (payment_creation_facts, migration 057), not in risk_velocity.
 */
export interface ClientLimit {
  windowSeconds: number;
  maxPayments: number | null;
  maxAmount: string | null;
}

/** One entry to count in a window: the key's scope and hash, the amount, and the entry's own id (to take it back). */
export interface Count {
  scope: LimitScope;
  key: string;
  amount: string;
  id: string;
  windowSeconds: number;
  maxPayments: number | null;
  maxAmount: string | null;
}

// The entries of the row still inside the window, in the order counted (v: the row, $5: the window in seconds).
const LIVE = 'FROM unnest(v.ats, v.amounts, v.ids) WITH ORDINALITY AS e(at, amount, id, n) WHERE e.at > now() - make_interval(secs => $5)';

// The upsert that counts one entry while under the limit ($1 scope, $2 key, $3 amount, $4 entry id,
// $5 window seconds, $6 max_payments, $7 max_amount), when $8 and nothing in `blocked` holds.
const COUNT = `INSERT INTO risk_velocity AS v (scope, key, ats, amounts, ids)
     SELECT $1, $2, ARRAY[now()], ARRAY[$3::numeric], ARRAY[$4::uuid]
     WHERE $8::boolean AND NOT EXISTS (SELECT 1 FROM blocked) AND ($7::numeric IS NULL OR $3::numeric <= $7::numeric)
     ON CONFLICT (scope, key) DO UPDATE SET
       ats = ARRAY(SELECT e.at ${LIVE} ORDER BY e.n) || now(),
       amounts = ARRAY(SELECT e.amount ${LIVE} ORDER BY e.n) || $3::numeric,
       ids = ARRAY(SELECT e.id ${LIVE} ORDER BY e.n) || $4::uuid
     WHERE ($6::int IS NULL OR (SELECT count(*) ${LIVE}) < $6::int)
       AND ($7::numeric IS NULL OR (SELECT coalesce(sum(e.amount), 0) ${LIVE}) + $3::numeric <= $7::numeric)
     RETURNING 1`;

/**
 * Counts one entry in its sliding window if it stays within the limit; false when it would go
 * past it (nothing counted). One statement: the first entry of a key inserts its row, every later
 * one updates it under the row lock, pruning what left the window — so two creates racing on one
 * key, on any instance, are counted one after the other and exactly `max_payments` get through.
 */
export async function countWithin(db: Queryable, c: Count): Promise<boolean> {
  const { rows } = await db.query<{ counted: boolean }>(
    `WITH blocked AS (SELECT 1 WHERE false), counted AS (${COUNT}) SELECT EXISTS (SELECT 1 FROM counted) AS counted`,
    [c.scope, c.key, c.amount, c.id, c.windowSeconds, c.maxPayments, c.maxAmount, true],
  );
  return rows[0]!.counted;
}

/** What a key's window holds now (the figure of a refusal): entries and their sum. */
export async function windowFigures(db: Queryable, scope: LimitScope, key: string, windowSeconds: number): Promise<{ count: number; sum: string }> {
  const { rows } = await db.query<{ count: string; sum: string }>(
    `SELECT count(e.at) AS count, coalesce(sum(e.amount), 0)::text AS sum
     FROM risk_velocity v LEFT JOIN LATERAL unnest(v.ats, v.amounts, v.ids) AS e(at, amount, id) ON e.at > now() - make_interval(secs => $3)
     WHERE v.scope = $1 AND v.key = $2`,
    [scope, key, windowSeconds],
  );
  return { count: Number(rows[0]?.count ?? 0), sum: rows[0]?.sum ?? '0' };
}
