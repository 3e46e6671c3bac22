import type { Queryable } from '../db/pool.js';

/** Removes stored Idempotency-Key answers older than `hours`; returns how many. */
export async function removeIdempotencyKeysOlderThan(db: Queryable, hours: number): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [hours]);
  return rowCount ?? 0;
}
