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

/**
 * Removes, in batches, the job queue's jobs that failed for good (every attempt used) and have not
 * changed for `days` days: the queue deletes a job that succeeds, but keeps one that failed its
 * last attempt for a person to read, and those rows otherwise pile up. Through the queue's own
 * complete_jobs (a job some worker holds is left alone). Returns how many.
 */
export async function removeFailedJobsOlderThan(db: Queryable, days: number, batch = 1000): Promise<number> {
  // The queue's schema exists once a worker has started.
  const { rows: schema } = await db.query<{ ok: boolean }>(`SELECT to_regclass('graphile_worker.jobs') IS NOT NULL AS ok`);
  if (!schema[0]!.ok) return 0;
  let removed = 0;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM graphile_worker.complete_jobs(ARRAY(
         SELECT id FROM graphile_worker.jobs
          WHERE attempts >= max_attempts AND locked_at IS NULL AND updated_at < now() - make_interval(days => $1)
          ORDER BY id LIMIT $2))`,
      [days, batch],
    );
    removed += rows[0]!.n;
    if (rows[0]!.n < batch) return removed;
  }
}
