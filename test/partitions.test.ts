import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { declaredLocks, migrate, splitStatements } from '../src/db/migrate.js';
import { dropPartitionsBefore, ensureMonthsAhead, monthStart, partitionedTables, partitionName } from '../src/db/partitions.js';
import { createPool, type Db } from '../src/db/pool.js';
import { type RunningService, startService } from '../src/instance.js';
import { maintainHistory } from '../src/jobs.js';
import { createLogger } from '../src/lib/logger.js';
import {
  ADMIN_TOKEN,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  expectLedgerOk,
  notifyTransfer,
  setRate,
  uniqueExtId,
} from './helpers.js';

/**
 * Issue 38 item 3: history that does not slow the present. A database as the release before
 * migration 054 left it, populated (a few hundred thousand rows of postings, audit, webhook
 * attempts and refusals, spread over the past year), is converted to monthly partitions while
 * writers keep posting, each with a lock_timeout of 2 s; a long reader holds one of the tables
 * while 055 wants it. Then: every writer succeeded, nothing was lost, the tables are partitioned,
 * new rows land in their month, the ledger check passes, and retention drops old webhook attempts
 * and never postings.
 */

const HISTORY_TABLES = ['audit_log', 'ledger_entries', 'payment_refusals', 'webhook_attempts'];
const TRANSACTIONS = 60_000; // two entries each
const AUDIT_ROWS = 80_000;
const EVENTS = 10_000;
const ATTEMPTS_PER_EVENT = 8;
const REFUSALS = 40_000;
const WRITERS = 3;
// Above what 055 can make a writer wait: its runner's one lock request at a time, 1.5 s at most, and its catalog changes.
const WRITER_LOCK_TIMEOUT_MS = 3000;

let dbName = '';
let url = '';
let admin: pg.Client;
let pool: Db;
let service: RunningService | undefined;
const said: string[] = [];

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  // Named like the run's per-file databases, so the run's teardown drops it should this file crash.
  dbName = `kassir_t_${inject('runId')}_part_${randomBytes(3).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${dbName}`;
  url = u.toString();
  pool = createPool(url, 4);
  // The schema as the release before 054 left it (no database functions: they are for the newest schema).
  await migrate(pool, { info: () => undefined }, { until: 53 });
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await pool?.end();
  if (dbName) await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin?.end();
});

async function counts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of HISTORY_TABLES) out[table] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  return out;
}

describe('migrations 054 and 055 on a populated database', () => {
  it('splits a no-transaction migration at the semicolons outside quotes, dollar quotes and comments', () => {
    expect(
      splitStatements(
        `-- kassir:no-transaction\n-- a; comment\nSELECT 'a;b';\nDO $$ BEGIN PERFORM 1; END $$;\n/* x; */ CREATE INDEX "i;" ON t (a);\n-- the end\n`,
      ).map((s) => s.trim()),
    ).toEqual(["-- kassir:no-transaction\n-- a; comment\nSELECT 'a;b';", 'DO $$ BEGIN PERFORM 1; END $$;', '/* x; */ CREATE INDEX "i;" ON t (a);']);
  });

  it('reads the locks a migration declares, in order, and refuses a mode PostgreSQL does not have', () => {
    expect(declaredLocks('-- kassir:locks ACCESS EXCLUSIVE: a, b\n-- kassir:locks SHARE ROW EXCLUSIVE: c\nSELECT 1;')).toEqual([
      { mode: 'ACCESS EXCLUSIVE', table: 'a' },
      { mode: 'ACCESS EXCLUSIVE', table: 'b' },
      { mode: 'SHARE ROW EXCLUSIVE', table: 'c' },
    ]);
    expect(() => declaredLocks('-- kassir:locks EVERYTHING: a\n')).toThrow(/unknown lock mode/);
    expect(declaredLocks('SELECT 1;')).toEqual([]);
  });

  it('converts the history tables to monthly partitions while writers keep posting, none waiting past its lock_timeout', async () => {
    // History of the past year, as a release before 054 wrote it.
    const [incoming, revenue] = (
      await pool.query<{ id: string }>(`SELECT id FROM ledger_accounts WHERE kind IN ('system_incoming', 'system_fee_revenue') ORDER BY kind`)
    ).rows.map((r) => r.id);
    const merchant = (await pool.query<{ id: string }>(`INSERT INTO merchants (name) VALUES ('History') RETURNING id`)).rows[0]!.id;
    await pool.query(
      `WITH t AS (
         INSERT INTO ledger_transactions (kind, ref_id, memo, created_at)
         SELECT 'history_test', gen_random_uuid(), 'old', now() - random() * interval '365 days' FROM generate_series(1, $1)
         RETURNING id, created_at)
       INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at)
       SELECT t.id, x.account, x.sign * 12.5, t.created_at FROM t, (VALUES ($2::uuid, 1), ($3::uuid, -1)) AS x(account, sign)`,
      [TRANSACTIONS, incoming, revenue],
    );
    await pool.query(
      `INSERT INTO audit_log (actor, action, object_type, object_id, after, created_at)
       SELECT 'operator', 'payment.cancel', 'payment', gen_random_uuid()::text, '{"status":"CANCELLED"}', now() - random() * interval '365 days'
         FROM generate_series(1, $1)`,
      [AUDIT_ROWS],
    );
    await pool.query(
      `WITH e AS (
         INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, status, created_at)
         SELECT $1, 'payment', gen_random_uuid(), 'payment.completed', '{}', 'https://shop.example/hook', 'delivered',
                now() - random() * interval '365 days'
           FROM generate_series(1, $2)
         RETURNING id, created_at)
       INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms)
       SELECT e.id, n, e.created_at + n * interval '1 minute', 500, 40 FROM e, generate_series(1, $3) AS n`,
      [merchant, EVENTS, ATTEMPTS_PER_EVENT],
    );
    await pool.query(
      `INSERT INTO payment_refusals (created_at, merchant_id, terminal_id, code, method, currency, amount)
       SELECT now() - random() * interval '365 days', $1, gen_random_uuid(), 'PAY_004', 'CARD', 'RUB', 1000 FROM generate_series(1, $2)`,
      [merchant, REFUSALS],
    );
    const before = await counts(pool);
    expect(before).toEqual({
      audit_log: AUDIT_ROWS,
      ledger_entries: TRANSACTIONS * 2,
      payment_refusals: REFUSALS,
      webhook_attempts: EVENTS * ATTEMPTS_PER_EVENT,
    });
    const event = (await pool.query<{ id: string }>('SELECT id FROM webhook_events LIMIT 1')).rows[0]!.id;

    // Writers: each loop is one transaction of a posting, its audit row, a webhook attempt and a
    // refusal, through prepared statements (planned before the tables changed under them).
    let running = true;
    let migrating = false;
    const written = { total: 0, duringMigration: 0 };
    const failures: string[] = [];
    let slowest = 0;
    const writer = async (n: number) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`SET lock_timeout = '${WRITER_LOCK_TIMEOUT_MS}ms'`);
      try {
        while (running) {
          const started = performance.now();
          const during = migrating;
          try {
            await client.query('BEGIN');
            await client.query({
              name: 'post',
              text: `WITH t AS (INSERT INTO ledger_transactions (kind, ref_id, memo) VALUES ('writer', gen_random_uuid(), 'during') RETURNING id)
                     INSERT INTO ledger_entries (transaction_id, account_id, amount) SELECT t.id, x.account, x.amount FROM t, (VALUES ($1::uuid, 3.25), ($2::uuid, -3.25)) AS x(account, amount)`,
              values: [incoming, revenue],
            });
            await client.query({
              name: 'audit',
              text: `INSERT INTO audit_log (actor, action, object_type, object_id) VALUES ('writer', 'test.write', 'writer', $1)`,
              values: [String(n)],
            });
            await client.query({
              name: 'attempt',
              text: `INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms) VALUES ($1, 99, now(), 200, 3)`,
              values: [event],
            });
            await client.query({
              name: 'refusal',
              text: `INSERT INTO payment_refusals (created_at, merchant_id, terminal_id, code, method, currency, amount) VALUES (now(), $1, $1, 'PAY_005', 'SBP', 'RUB', 10)`,
              values: [merchant],
            });
            await client.query('COMMIT');
            written.total++;
            if (during && migrating) written.duringMigration++;
          } catch (err) {
            failures.push((err as Error).message);
            await client.query('ROLLBACK').catch(() => undefined);
          }
          slowest = Math.max(slowest, performance.now() - started);
        }
      } finally {
        await client.end();
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, n) => writer(n));
    await new Promise((resolve) => setTimeout(resolve, 300));

    const log = { info: (msg: string) => said.push(msg) };
    let migrationMs = 0;
    try {
      migrating = true;
      const startedAt = performance.now();
      await migrate(pool, log, { until: 54 });
      // A long reader of audit_log (a report, an export) holds it while 055 wants it: 055 lets go
      // of its other locks and waits for that one alone, a bounded time, then tries them all again.
      const reader = new pg.Client({ connectionString: url });
      await reader.connect();
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM audit_log');
      const readerDone = new Promise((resolve) => setTimeout(resolve, 1500)).then(async () => {
        await reader.query('COMMIT');
        await reader.end();
      });
      try {
        await migrate(pool, log);
      } finally {
        await readerDone;
      }
      migrationMs = performance.now() - startedAt;
      migrating = false;
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      running = false;
      await Promise.all(writers);
    }

    console.log(
      `partitions: 054+055 took ${Math.round(migrationMs)} ms on ${Object.values(before).reduce((a, b) => a + b, 0)} rows; ` +
        `${written.total} writes (${written.duringMigration} during it), the slowest ${Math.round(slowest)} ms; ${said.join('; ')}`,
    );
    expect(failures).toEqual([]);
    expect(written.duringMigration).toBeGreaterThan(0);
    // The reader made the first round find audit_log busy.
    expect(said.join('\n')).toMatch(/055_history_partitions.sql took its locks in round ([2-9]|\d\d)/);
    expect(said).toContain('applied migration 055_history_partitions.sql');
    // The coming months are made by the migrations' run itself, before any job: an instance
    // without the job worker finds them.
    for (const { table, partitions } of await partitionedTables(pool)) {
      for (const m of [0, 1, 2]) {
        const [from, to] = [monthStart(new Date(), m), monthStart(new Date(), m + 1)];
        const covering = partitions.filter((p) => (p.from === null || p.from <= from) && p.to !== null && p.to >= to);
        expect(covering, `${table} from ${from.toISOString()}`).toHaveLength(1);
      }
    }

    // Nothing lost: the rows from before and every committed write.
    expect(await counts(pool)).toEqual({
      audit_log: AUDIT_ROWS + written.total,
      ledger_entries: TRANSACTIONS * 2 + 2 * written.total,
      payment_refusals: REFUSALS + written.total,
      webhook_attempts: EVENTS * ATTEMPTS_PER_EVENT + written.total,
    });
    const partitioned = await pool.query<{ table: string }>(
      `SELECT c.relname AS table FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid ORDER BY 1`,
    );
    expect(partitioned.rows.map((r) => r.table)).toEqual(HISTORY_TABLES);
    // The old table is the history partition, then the coming months from its bound on, made by
    // the migrations' run (and by the maintenance job hourly).
    const tables = await partitionedTables(pool);
    const entries = tables.find((t) => t.table === 'ledger_entries')!;
    expect(entries.column).toBe('created_at');
    expect(entries.partitions[0]).toMatchObject({ name: 'ledger_entries_history', from: null });
    const bound = entries.partitions[0]!.to!;
    expect(bound.getTime()).toBe(monthStart(bound).getTime());
    expect(bound.getTime()).toBeGreaterThan(Date.now());
    expect(entries.partitions.slice(1).map((p) => p.from!.getTime())).toEqual(entries.partitions.slice(1).map((_, i) => monthStart(bound, i).getTime()));
    expect(tables.find((t) => t.table === 'webhook_attempts')!.column).toBe('started_at');
    // The old rows are where they were (a rename, not a copy).
    const inHistory = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ONLY ledger_entries_history`);
    expect(inHistory.rows[0]!.n).toBe(TRANSACTIONS * 2 + 2 * written.total);

    // The months made at the migrations' run: the bound's month at least, each with the foreign
    // keys the history partition has.
    const monthName = partitionName('ledger_entries', bound);
    for (const table of HISTORY_TABLES) expect(tables.find((t) => t.table === table)!.partitions.map((p) => p.name)).toContain(partitionName(table, bound));
    const keys = await pool.query<{ table: string; n: number }>(
      `SELECT c.relname AS table, count(k.oid)::int AS n FROM pg_class c LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'f'
        WHERE c.relname = ANY($1::text[]) GROUP BY 1 ORDER BY 1`,
      [HISTORY_TABLES.flatMap((t) => [`${t}_history`, partitionName(t, bound)])],
    );
    expect(Object.fromEntries(keys.rows.map((r) => [r.table, r.n]))).toEqual({
      audit_log_history: 1,
      [partitionName('audit_log', bound)]: 1,
      ledger_entries_history: 2,
      [monthName]: 2,
      payment_refusals_history: 0,
      [partitionName('payment_refusals', bound)]: 0,
      webhook_attempts_history: 1,
      [partitionName('webhook_attempts', bound)]: 1,
    });
    expect(await ensureMonthsAhead(pool, new Date(), 2)).toEqual([]);

    // A posting dated in the bound's month lands in that month's partition; the month's foreign
    // keys hold; the balance check at COMMIT still refuses a posting that does not balance.
    const month = new Date(bound.getTime() + 86_400_000);
    const landed = await pool.query<{ part: string }>(
      `WITH t AS (INSERT INTO ledger_transactions (kind, ref_id, created_at) VALUES ('future', gen_random_uuid(), $3) RETURNING id, created_at)
       INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at)
       SELECT t.id, x.account, x.amount, t.created_at FROM t, (VALUES ($1::uuid, 7), ($2::uuid, -7)) AS x(account, amount)
       RETURNING tableoid::regclass::text AS part`,
      [incoming, revenue, month],
    );
    expect(landed.rows.map((r) => r.part)).toEqual([monthName, monthName]);
    await expect(
      pool.query(`INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at) VALUES (gen_random_uuid(), $1, 1, $2)`, [incoming, month]),
    ).rejects.toThrow(/foreign key/);
    await expect(
      pool.query(
        `WITH t AS (INSERT INTO ledger_transactions (kind, ref_id) VALUES ('unbalanced', gen_random_uuid()) RETURNING id)
         INSERT INTO ledger_entries (transaction_id, account_id, amount) SELECT t.id, $1, 1 FROM t`,
        [incoming],
      ),
    ).rejects.toThrow(/unbalanced/);
    await expect(pool.query('DELETE FROM ledger_entries WHERE amount = 7')).rejects.toThrow(/append-only/);
  }, 600_000);

  it('runs this release on the converted database: a payment completed, the ledger check ok, rows in the partitioned tables', async () => {
    service = await startService(
      loadConfig({
        DATABASE_URL: url,
        ADMIN_TOKEN,
        KASSIR_MASTER_KEY: randomBytes(32).toString('base64'),
        PUBLIC_BASE_URL: 'http://kassir.test',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        KASSIR_SHED: 'false',
        KASSIR_WORKER: 'false',
        LOG_LEVEL: 'silent',
        PORT: '0',
      }),
      createLogger('silent'),
      { listen: false },
    );
    const { app } = service;
    await setRate(app, 'RUB', 95);
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const requisite = await createRequisite(app, executor.id);
    const created = await createPayment(app, merchant, { ext_id: uniqueExtId(), amount: 1900, currency: 'RUB', method: 'CARD' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await notifyTransfer(app, executor.token, requisite.id, 1900)).matched).toBe(true);
    const credit = await service.ctx.db.query<{ part: string; n: number }>(
      `SELECT e.tableoid::regclass::text AS part, count(*)::int AS n FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
        WHERE t.ref_id = $1 GROUP BY 1`,
      [created.body.id],
    );
    // Today is before the bound: today's postings are in the history partition until next month.
    expect(credit.rows.map((r) => r.part)).toEqual(['ledger_entries_history']);
    expect(credit.rows[0]!.n).toBeGreaterThanOrEqual(3);
    await expectLedgerOk(app);
  }, 120_000);

  it('keeps months ahead and drops webhook attempts past their retention a month at a time, never postings', async () => {
    const ctx = service!.ctx;
    const before = await counts(pool);
    const bound = (await partitionedTables(pool)).find((t) => t.table === 'ledger_entries')!.partitions[0]!.to!;
    // A job that failed for good long ago, and one that failed yesterday.
    await ctx.db.query(`SELECT graphile_worker.add_job('history_test_task', '{"old":true}'::json, max_attempts => 1)`);
    await ctx.db.query(`SELECT graphile_worker.add_job('history_test_task', '{"recent":true}'::json, max_attempts => 1)`);
    await ctx.db.query(`SELECT graphile_worker.add_job('history_test_task', '{"waiting":true}'::json, max_attempts => 1)`);
    await ctx.db.query(
      `UPDATE graphile_worker._private_jobs SET attempts = max_attempts,
              updated_at = CASE WHEN payload::jsonb ? 'recent' THEN now() - interval '1 day' ELSE now() - interval '40 days' END
        WHERE NOT payload::jsonb ? 'waiting'`,
    );
    // One not yet tried, however old: it is work to do, not a failure.
    await ctx.db.query(`UPDATE graphile_worker._private_jobs SET updated_at = now() - interval '40 days' WHERE payload::jsonb ? 'waiting'`);

    // Four months after the bound: the months up to two after that are created, and every
    // webhook attempt of the history partition (all older than the bound) is past 90 days.
    const later = new Date(Date.UTC(bound.getUTCFullYear(), bound.getUTCMonth() + 4, 10));
    const done = await maintainHistory(ctx, later);
    const laterName = (t: string, m: number) => partitionName(t, monthStart(later, m));
    for (const table of HISTORY_TABLES) for (const m of [0, 1, 2]) expect(done.created).toContain(laterName(table, m));
    expect(done.dropped).toContain('webhook_attempts_history');
    expect(done.dropped.every((name) => name.startsWith('webhook_attempts_'))).toBe(true);
    expect(done.failedJobs).toBe(1);
    const left = await ctx.db.query<{ payload: Record<string, unknown> }>(
      `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'history_test_task'`,
    );
    expect(left.rows.map((r) => r.payload).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ recent: true }, { waiting: true }]);

    const after = await counts(pool);
    expect(after.ledger_entries).toBe(before.ledger_entries);
    expect(after.audit_log).toBe(before.audit_log);
    expect(after.payment_refusals).toBe(before.payment_refusals);
    expect(after.webhook_attempts).toBe(0);
    // Run again: nothing more to do.
    expect(await maintainHistory(ctx, later)).toEqual({ created: [], dropped: [], failedJobs: 0 });
    // Money and audit history is refused whoever asks.
    await expect(dropPartitionsBefore(ctx.db, 'ledger_entries', later)).rejects.toThrow(/never dropped/);
    await expect(dropPartitionsBefore(ctx.db, 'audit_log', later)).rejects.toThrow(/never dropped/);
    // The new months take writes: a webhook attempt dated in the later month lands in its partition.
    const event = (await ctx.db.query<{ id: string }>('SELECT id FROM webhook_events LIMIT 1')).rows[0]!.id;
    const landed = await ctx.db.query<{ part: string }>(
      `INSERT INTO webhook_attempts (event_id, attempt, started_at, latency_ms) VALUES ($1, 1, $2, 1) RETURNING tableoid::regclass::text AS part`,
      [event, later],
    );
    expect(landed.rows[0]!.part).toBe(laterName('webhook_attempts', 0));
    await expectLedgerOk(service!.app);
  }, 300_000);
});
