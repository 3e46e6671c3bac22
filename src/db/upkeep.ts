import type { Logger } from '../lib/logger.js';
import { type Db, transaction } from './pool.js';

/** How often the tables are looked at. */
const CHECK_MS = 1_000;
/** Advisory lock spaces: one instance analyses, and one vacuums, at a time. */
const ANALYZE_LOCK = 7462;
const VACUUM_LOCK = 7463;
/**
 * Larger tables are left to autovacuum alone: their plans no longer change with a doubling, and
 * vacuuming one takes long enough to be autovacuum's business.
 */
const MAX_ROWS = 100_000;
/** The statistics target of these analyses (PostgreSQL's default: 100, a sample of 30,000 rows). */
const STATISTICS_TARGET = 10;
/** A small table is vacuumed once its dead rows reach this many plus VACUUM_SHARE of its live ones. */
const VACUUM_DEAD_ROWS = 200;
const VACUUM_SHARE = 0.2;

/**
 * Keeps the service's small tables in shape between autovacuum's visits, from every instance
 * that runs jobs (one at a time): planner statistics of tables that grow from empty
 * (refreshStatistics) and dead rows of tables that churn (vacuumChurnedTables). Errors are
 * logged; autovacuum remains the fallback.
 */
export function keepTablesInShape(db: Db, log: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= (async () => {
      await refreshStatistics(db, log).catch((err: unknown) => log.warn({ err }, 'could not refresh table statistics; autovacuum still will'));
      await vacuumChurnedTables(db, log).catch((err: unknown) => log.warn({ err }, 'could not vacuum churning tables; autovacuum still will'));
    })().finally(() => {
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

/**
 * Keeps the planner's statistics in step with tables that grow from empty.
 *
 * The hot statements are named (prepared) statements, and PostgreSQL keeps the generic plan it
 * made for one until the statistics of a table it reads change. A plan made while a table was
 * empty — on a new installation, in its first minute of traffic — reads that table as if it were
 * still empty: a payment create scanned every PENDING payment for each requisite it looked at
 * (docs/performance.md). Autovacuum
 * analyses such a table after 50 changes plus 10 %, but only when it next wakes (every minute by
 * default), so until then every create pays.
 *
 * One look analyses each of the service's tables below MAX_ROWS rows that has grown to twice the
 * rows it had when last analysed or vacuumed (plus 50): a table is analysed as it doubles, a
 * handful of times on its way to a size where a doubling no longer changes a plan. Analysing a
 * small table takes milliseconds and invalidates the stale plans on every connection. Growth, not
 * changes: until 2026-11-28 it counted every change since the last analysis (n_mod_since_analyze),
 * and small tables whose rows are only updated — the ledger's accounts, whose balances every create
 * and completion moves; the requisites, each create's LRU move — were analysed every second under
 * load, invalidating the creates' and completions' plans on every connection of every instance
 * once a second (docs/performance.md "The first slice's stall and the accepted p99"). Returns the
 * tables analysed.
 */
export async function refreshStatistics(db: Db, log: Logger): Promise<string[]> {
  const rows = await smallTablesWhere(db, 's.n_live_tup >= 50 + 2 * rows', []);
  if (rows.length === 0) return [];
  return transaction(db, async (tx) => {
    const { rows: lock } = await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [ANALYZE_LOCK]);
    // Another instance is at it; its analysis serves this one too.
    if (!lock[0]!.ok) return [];
    // A coarse sample is enough to end a plan made on an empty table, and costs a tenth of the
    // default one, which slowed the creates around it (docs/performance.md). Autovacuum's later
    // analyses use the server's own target.
    await tx.query(`SET LOCAL default_statistics_target = ${STATISTICS_TARGET}`);
    for (const { table } of rows) await tx.query(`ANALYZE ${tx.escapeIdentifier(table)}`);
    log.debug({ tables: rows.map((r) => r.table) }, 'analysed growing tables');
    return rows.map((r) => r.table);
  });
}

/**
 * Vacuums each of the service's tables below MAX_ROWS rows whose dead rows have reached
 * VACUUM_DEAD_ROWS plus VACUUM_SHARE of its live ones; returns their names.
 *
 * A payment create takes the least recently used requisite: it walks the requisites pool index
 * (currency, type, last_used_at) from its oldest end and moves the requisite it takes to the
 * newest. Each move leaves a dead entry at the old end, exactly where every later walk starts,
 * and only a vacuum removes it. Autovacuum looks at a table once a minute at best, and some
 * servers run with it off (the CI machines' PostgreSQL does): after 150,000 creates on 1,000
 * requisites there, the walk read 1,166 pages and took 5.8 ms, where on the vacuumed table it
 * reads 4. Vacuuming a table of a few thousand rows takes milliseconds and blocks neither reads
 * nor writes. SKIP_LOCKED: a table autovacuum is already at is left to it.
 */
export async function vacuumChurnedTables(db: Db, log: Logger): Promise<string[]> {
  // Not more often than a second per 1,000 rows (a minute at most): when something holds dead
  // rows back (a long transaction), a vacuum frees nothing and must not be retried every second.
  const rows = await smallTablesWhere(
    db,
    `s.n_dead_tup >= $2 + $3 * rows
     AND coalesce(greatest(s.last_vacuum, s.last_autovacuum), '-infinity') <= now() - make_interval(secs => least(60, greatest(1, rows / 1000)))`,
    [VACUUM_DEAD_ROWS, VACUUM_SHARE],
  );
  if (rows.length === 0) return [];
  // VACUUM cannot run inside a transaction: a session lock on a connection of its own.
  const client = await db.connect();
  try {
    const { rows: lock } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [VACUUM_LOCK]);
    // Another instance is at it.
    if (!lock[0]!.ok) return [];
    try {
      for (const { table } of rows) await client.query(`VACUUM (SKIP_LOCKED) ${client.escapeIdentifier(table)}`);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [VACUUM_LOCK]);
    }
  } finally {
    client.release();
  }
  log.debug({ tables: rows.map((r) => r.table) }, 'vacuumed churning tables');
  return rows.map((r) => r.table);
}

/**
 * The service's tables (those of its schema it may maintain) below MAX_ROWS rows that meet
 * `condition`, an SQL condition over pg_stat_user_tables `s` and the table's estimated `rows`,
 * with its parameters from $2 on.
 */
async function smallTablesWhere(db: Db, condition: string, params: unknown[]): Promise<{ table: string }[]> {
  const { rows } = await db.query<{ table: string }>(
    `SELECT s.relname AS table
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      CROSS JOIN LATERAL (SELECT greatest(c.reltuples, 0) AS rows) r
      WHERE s.schemaname = current_schema() AND r.rows < $1 AND pg_has_role(c.relowner, 'USAGE') AND ${condition}
      ORDER BY s.relname`,
    [MAX_ROWS, ...params],
  );
  return rows;
}
