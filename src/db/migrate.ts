import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { ensureMonthsAhead, PARTITION_MONTHS_AHEAD } from './partitions.js';
import type { Db } from './pool.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const FUNCTIONS_DIR = fileURLToPath(new URL('./functions/', import.meta.url));
// Any constant works; it only has to be the same for every instance of Kassir.
const MIGRATION_LOCK = 7_461_001;

/** A migration that runs its statements one by one, outside a transaction (CREATE INDEX CONCURRENTLY, a long VALIDATE). */
const NO_TRANSACTION = /^-- kassir:no-transaction\b/m;
/**
 * `-- kassir:locks <MODE>: table, table, …` lines: the locks a migration takes before anything
 * else, in the order written. A migration that waits for a lock while it holds others can deadlock
 * with the service's writers, who take these tables in orders of their own, and PostgreSQL may
 * then abort the writer (a payment) rather than the migration. So the runner waits for each lock
 * only a short slice (the server's deadlock_timeout shared out over the locks, at most
 * LOCK_SLICE_MS): in any deadlock the migration's wait runs out before the first deadlock check,
 * and the migration is the one to give up. Given up, it releases everything, waits for the lock
 * that was busy alone (holding nothing, so no deadlock; at most LOCK_WAIT, above the default
 * deadlock_timeout of 1 s, after which a lock request blocked by autovacuum cancels it: a large
 * table is nearly always being vacuumed), releases it, and tries the whole set again, up to
 * LOCK_ROUNDS times. Writers queue behind a request for at most those waits.
 */
const LOCKS = /^-- kassir:locks ([A-Z ]+): *([a-z_, ]+)$/gm;
const LOCK_SLICE_MS = 100;
const LOCK_WAIT = '1500ms';
const LOCK_ROUNDS = 60;
const MODES = new Set([
  'ACCESS SHARE',
  'ROW SHARE',
  'ROW EXCLUSIVE',
  'SHARE UPDATE EXCLUSIVE',
  'SHARE',
  'SHARE ROW EXCLUSIVE',
  'EXCLUSIVE',
  'ACCESS EXCLUSIVE',
]);

/** The `-- kassir:locks` lines of a migration, in order. */
export function declaredLocks(sql: string): Array<{ mode: string; table: string }> {
  const locks: Array<{ mode: string; table: string }> = [];
  for (const [, mode, tables] of sql.matchAll(LOCKS)) {
    if (!MODES.has(mode!.trim())) throw new Error(`kassir:locks: unknown lock mode ${mode}`);
    for (const table of tables!
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean))
      locks.push({ mode: mode!.trim(), table });
  }
  return locks;
}

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Inside the open transaction of `client`: takes every lock, each waited for `sliceMs` at most.
 * Returns the one that was not had in time (the transaction is then aborted), or undefined when
 * all are held.
 */
async function tryLocks(
  client: pg.PoolClient,
  locks: Array<{ mode: string; table: string }>,
  sliceMs: number,
): Promise<{ mode: string; table: string } | undefined> {
  await client.query(`SET LOCAL lock_timeout = '${sliceMs}ms'`);
  for (const lock of locks) {
    try {
      await client.query(`LOCK TABLE ${client.escapeIdentifier(lock.table)} IN ${lock.mode} MODE`);
    } catch (err) {
      if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return lock;
      throw err;
    }
  }
  return undefined;
}

/** The per-lock slice: the server's deadlock_timeout shared out over the locks (and one more), at most LOCK_SLICE_MS. */
async function lockSlice(client: pg.PoolClient, locks: number): Promise<number> {
  const { rows } = await client.query<{ ms: number }>(`SELECT setting::int AS ms FROM pg_settings WHERE name = 'deadlock_timeout'`);
  return Math.max(1, Math.min(LOCK_SLICE_MS, Math.floor((rows[0]?.ms ?? 1000) / (locks + 1))));
}

export interface MigrateOptions {
  /** Apply migrations up to and including this number only, and no database functions (tests: a database as an older release left it). */
  until?: number;
}

/**
 * Applies `migrations/NNN_name.sql` in order, each in its own transaction (or, with a
 * `-- kassir:no-transaction` line, statement by statement: each statement must then be safe to run
 * again), recording applied names in `schema_migrations`; then the repeatable `functions/*.sql`
 * (CREATE OR REPLACE, the one current text of the database functions, e.g. the cascade's
 * payment_create_window), every time, in one transaction. An advisory lock makes concurrent
 * starts of several instances safe: the second waits and then finds nothing left to do but the
 * (idempotent) functions.
 */
export async function migrate(db: Db, log: { info(msg: string): void }, options: MigrateOptions = {}): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR))
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .filter((f) => options.until === undefined || Number(f.slice(0, 3)) <= options.until)
    .sort();
  const client = await db.connect();
  const applied: string[] = [];
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(MIGRATIONS_DIR + file, 'utf8');
      try {
        if (NO_TRANSACTION.test(sql)) {
          // Each statement commits on its own; one that failed is run again, with those before it, at the next start.
          for (const statement of splitStatements(sql)) await client.query(statement);
          await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        } else {
          const locks = declaredLocks(sql);
          const slice = locks.length > 0 ? await lockSlice(client, locks.length) : 0;
          for (let round = 1; ; round++) {
            await client.query('BEGIN');
            const busy = await tryLocks(client, locks, slice);
            if (busy) {
              await client.query('ROLLBACK');
              if (round >= LOCK_ROUNDS)
                throw new Error(
                  `its locks were never all free in ${LOCK_ROUNDS} rounds, the last busy one ${busy.table} (a long query or an anti-wraparound vacuum holds it)`,
                );
              // Holding nothing else: wait for this one lock alone (and cancel an autovacuum holding it).
              await client.query('BEGIN');
              await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
              const waited = await client.query(`LOCK TABLE ${client.escapeIdentifier(busy.table)} IN ${busy.mode} MODE`).then(
                () => true,
                (err: { code?: string }) => {
                  if (err.code !== LOCK_NOT_AVAILABLE) throw err;
                  return false;
                },
              );
              await client.query('ROLLBACK');
              if (!waited || round % 10 === 0) log.info(`migration ${file}: ${busy.table} is busy (round ${round} of ${LOCK_ROUNDS}); trying again`);
              continue;
            }
            // What the migration itself waits for (it should need nothing more): bounded too.
            if (locks.length > 0) await client.query(`SET LOCAL lock_timeout = '${LOCK_WAIT}'`);
            await client.query(sql);
            await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
            await client.query('COMMIT');
            if (locks.length > 0) log.info(`migration ${file} took its locks in round ${round}`);
            break;
          }
        }
      } catch (err) {
        // A failed ROLLBACK means a broken connection, closed below; the migration's error is the one to report.
        broken = await client.query('ROLLBACK').then(
          () => undefined,
          (rollbackErr: Error) => rollbackErr,
        );
        throw new Error(`migration ${file} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      log.info(`applied migration ${file}`);
      applied.push(file);
    }
    // A database migrated by a newer release (an upgrade rolling through the instances: the new
    // release has started, this older one still runs) keeps the newer release's functions: they
    // are written for its schema, and the older release's calls are kept working by the rule that
    // migrations expand first and contract a release later (docs/operations.md "Upgrades").
    if (options.until !== undefined) return applied;
    const newer = [...done].filter((name) => !files.includes(name) && /^\d{3}_/.test(name)).sort();
    if (newer.length > 0) {
      log.info(`the database is newer than this release (migration ${newer.at(-1)}); keeping its database functions`);
      return applied;
    }
    // The repeatable functions, every start, after the migrations they may rely on.
    const functions = (await readdir(FUNCTIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
    try {
      await client.query('BEGIN');
      for (const file of functions) await client.query(await readFile(FUNCTIONS_DIR + file, 'utf8'));
      await client.query('COMMIT');
    } catch (err) {
      broken = await client.query('ROLLBACK').then(
        () => undefined,
        (rollbackErr: Error) => rollbackErr,
      );
      throw new Error(`database functions (src/db/functions/) failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    // The history tables' coming months (migration 055) at every start as well as by the hourly
    // job: an instance without the job worker (KASSIR_WORKER) must not find a month unready. The
    // job of another instance may be making the same month at this moment: that is no reason to
    // stop this start, and whichever is second finds the month made on its next look.
    await ensureMonthsAhead(db, new Date(), PARTITION_MONTHS_AHEAD).catch((err: unknown) => {
      log.info(`the coming months' partitions were not made at this start (${err instanceof Error ? err.message : String(err)}); the history job makes them`);
    });
  } finally {
    // The lock belongs to the session: when the unlock fails, closing the connection releases it.
    broken ??= await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).then(
      () => undefined,
      (unlockErr: Error) => unlockErr,
    );
    client.release(broken);
  }
  return applied;
}

/**
 * Splits a migration into its statements at the semicolons outside quotes, dollar quotes and
 * comments (a no-transaction migration sends them one by one: several statements in one query
 * string would run in one implicit transaction, where CREATE INDEX CONCURRENTLY is refused).
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (ch === "'" || ch === '"') {
      // A doubled quote inside is two quoted runs back to back: the same result.
      const end = sql.indexOf(ch, i + 1);
      i = end === -1 ? sql.length : end + 1;
    } else if (ch === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? sql.length : end + tag[0].length;
      } else i++;
    } else if (ch === ';') {
      statements.push(sql.slice(start, i + 1));
      start = ++i;
    } else i++;
  }
  statements.push(sql.slice(start));
  // Keep only pieces with something besides comments and blanks.
  return statements.filter((s) => s.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() !== '');
}
