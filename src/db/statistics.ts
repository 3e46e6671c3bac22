import type { Logger } from '../lib/logger.js';
import { transaction, type Db } from './pool.js';

/** How often the growth of the tables is looked at. */
const CHECK_MS = 2_000;
/** Advisory lock space: one instance analyses at a time. */
const LOCK_SPACE = 7462;
/** Larger tables are left to autovacuum alone: their plans no longer change with a doubling. */
const MAX_ROWS = 100_000;

/**
 * Keeps the planner's statistics in step with tables that grow from empty.
 *
 * The hot statements are named (prepared) statements, and PostgreSQL keeps the generic plan it
 * made for one until the statistics of a table it reads change. A plan made while a table was
 * empty — on a new installation, in its first minute of traffic — reads that table as if it were
 * still empty: a payment create scanned every PENDING payment for each requisite it looked at
 * (issue 4 benchmark: 3–27 ms of database time per create instead of 0.1 ms). Autovacuum
 * analyses such a table after 50 changes plus 10 %, but only when it next wakes (every minute by
 * default), so until then every create pays.
 *
 * Every CHECK_MS this analyses each of the service's tables below MAX_ROWS rows that has seen
 * more changes since it was last analysed than it had rows (plus 50): a table is analysed as it
 * doubles, a handful of times on its way to a size where a doubling no longer changes a plan.
 * Analysing a small table takes milliseconds and invalidates the stale plans on every connection.
 */
export function keepStatistics(db: Db, log: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= refreshStatistics(db, log)
      .then(() => undefined)
      .catch((err: unknown) => log.warn({ err }, 'could not refresh table statistics; autovacuum still will'))
      .finally(() => {
        running = undefined;
      });
  }, CHECK_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** One look: analyses the tables that have doubled since their last analysis; returns their names. */
export async function refreshStatistics(db: Db, log: Logger): Promise<string[]> {
  const { rows } = await db.query<{ table: string }>(
    `SELECT s.relname AS table
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.schemaname = current_schema()
        AND greatest(c.reltuples, 0) < $1
        AND s.n_mod_since_analyze >= 50 + greatest(c.reltuples, 0)
      ORDER BY s.relname`,
    [MAX_ROWS],
  );
  if (rows.length === 0) return [];
  return transaction(db, async (tx) => {
    const { rows: lock } = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [LOCK_SPACE]);
    // Another instance is at it; its analysis serves this one too.
    if (!lock[0]!.ok) return [];
    for (const { table } of rows) await tx.query(`ANALYZE ${tx.escapeIdentifier(table)}`);
    log.debug({ tables: rows.map((r) => r.table) }, 'analysed growing tables');
    return rows.map((r) => r.table);
  });
}
