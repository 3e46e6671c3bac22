import type { Queryable } from '../db/pool.js';

/** Removes stored Idempotency-Key answers (merchants' and the operator side's) older than `hours`; returns how many. */
export async function removeIdempotencyKeysOlderThan(db: Queryable, hours: number): Promise<number> {
  let removed = 0;
  for (const table of ['idempotency_keys', 'operator_idempotency_keys']) {
    const { rowCount } = await db.query(`DELETE FROM ${table} WHERE created_at < now() - make_interval(hours => $1)`, [hours]);
    removed += rowCount ?? 0;
  }
  return removed;
}
