/**
 * What a posting's balance check costs as ledger_entries gains monthly partitions (issue 38,
 * migrations 055 and 059): `npx tsx bench/ledger-partitions.ts`, with DATABASE_URL pointing at a
 * PostgreSQL on this machine it may create a database on (the tests' one will do; the backend's
 * CPU is read from /proc, so the server must be local). Run it under the benchmarks' lock.
 *
 * A database of its own holds ledger_entries alone, partitioned by month on created_at as
 * migration 055 leaves it (the `_history` partition and monthly ones, the current month among
 * them, each with the transaction and account indexes), with one of three balance checks:
 *
 *   none    no check at all (what writing the entries costs by itself);
 *   055     the deferred row trigger of migrations 001 and 055, its function read from 055;
 *   059     migration 059 itself (the statement trigger on the statement's own new entries).
 *
 * One connection calls a procedure that writes LEDGER_POSTINGS (10,000) postings of four entries,
 * each in one INSERT and committed on its own (so the deferred checks run), and the backend's CPU
 * (utime + stime) is read before and after. The variants take turns, LEDGER_ROUNDS (3) rounds, at
 * each number of partitions in LEDGER_PARTITIONS (2,26); the schema is made again before every
 * run. Printed per run: the backend's µs of CPU per posting, and the check's cost (the run minus
 * the median of `none` at the same partitions) per posting and per entry. LEDGER_SPLIT=1 adds runs
 * where each posting's four entries are four INSERTs, without a check, with 055's and with 059's (the path
 * where a statement leaves a posting unbalanced and the check is made at COMMIT); their check's
 * cost is against `none split`. LEDGER_DATABASE names the database made (and dropped) for it.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';

const ROOT = resolve(import.meta.dirname, '..');
const BASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const POSTINGS = Number(process.env.LEDGER_POSTINGS || 10_000);
const ROUNDS = Number(process.env.LEDGER_ROUNDS || 3);
const PARTITIONS = (process.env.LEDGER_PARTITIONS || '2,26').split(',').map(Number);
const SPLIT = process.env.LEDGER_SPLIT === '1';
const DATABASE = process.env.LEDGER_DATABASE || 'kassir_bench_ledger_partitions';
const TICK_US = 10_000; // USER_HZ = 100 on Linux

type Variant = 'none' | '055' | '059' | 'none split' | '055 split' | '059 split';

const migration055 = readFileSync(resolve(ROOT, 'src/db/migrations/055_history_partitions.sql'), 'utf8');
const migration059 = readFileSync(resolve(ROOT, 'src/db/migrations/059_ledger_balanced_per_posting.sql'), 'utf8');
/** 055's balance check function, as that migration creates it. */
const check055 = migration055.match(/CREATE OR REPLACE FUNCTION ledger_assert_balanced\(\)[\s\S]*?END \$\$;/)?.[0];
if (!check055) throw new Error('migration 055 no longer holds ledger_assert_balanced()');

function monthStart(at: Date, months: number): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
}

/** ledger_entries with `partitions` partitions: `_history`, then months up to the one after the current. */
function schema(partitions: number, variant: Variant): string {
  const now = new Date();
  const first = monthStart(now, -(partitions - 3));
  const parts = [`CREATE TABLE ledger_entries_history PARTITION OF ledger_entries FOR VALUES FROM (MINVALUE) TO ('${first.toISOString()}');`];
  for (let m = 0; m < partitions - 1; m++) {
    const from = monthStart(first, m);
    const to = monthStart(first, m + 1);
    const name = `ledger_entries_p${from.getUTCFullYear()}${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
    parts.push(`CREATE TABLE ${name} PARTITION OF ledger_entries FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}');`);
  }
  const checks: Record<Variant, string> = {
    none: '',
    '055': `${check055}
      CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION ledger_assert_balanced();`,
    '059': `BEGIN; ${migration059} COMMIT;`,
    'none split': '',
    '055 split': `${check055}
      CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION ledger_assert_balanced();`,
    '059 split': `BEGIN; ${migration059} COMMIT;`,
  };
  return `
    DROP SCHEMA IF EXISTS bench CASCADE;
    CREATE SCHEMA bench;
    SET search_path = bench;
    CREATE TABLE ledger_entries (
      id bigserial, transaction_id uuid NOT NULL, account_id uuid NOT NULL,
      amount numeric(38, 6) NOT NULL CHECK (amount <> 0), created_at timestamptz NOT NULL DEFAULT now(),
      applied_at_commit boolean NOT NULL DEFAULT false,
      PRIMARY KEY (id, created_at)
    ) PARTITION BY RANGE (created_at);
    CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
    CREATE INDEX ledger_entries_account ON ledger_entries (account_id);
    ${parts.join('\n')}
    ${checks[variant]}
    CREATE PROCEDURE post_many(n int, split boolean) LANGUAGE plpgsql AS $$
    DECLARE
      accounts uuid[] := ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid()];
      tx uuid;
    BEGIN
      FOR i IN 1..n LOOP
        tx := gen_random_uuid();
        IF split THEN
          INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (tx, accounts[1], -100);
          INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (tx, accounts[2], 95);
          INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (tx, accounts[3], 3);
          INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (tx, accounts[4], 2);
        ELSE
          INSERT INTO ledger_entries (transaction_id, account_id, amount)
          VALUES (tx, accounts[1], -100), (tx, accounts[2], 95), (tx, accounts[3], 3), (tx, accounts[4], 2);
        END IF;
        COMMIT;
      END LOOP;
    END $$;`;
}

function backendTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime: fields 14 and 15 of the line, 12 and 13 after "pid (comm) ".
  return Number(fields[11]) + Number(fields[12]);
}

async function run(url: string, partitions: number, variant: Variant): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(schema(partitions, variant));
    const count = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'bench.ledger_entries'::regclass`);
    if (count.rows[0]!.n !== partitions) throw new Error(`${count.rows[0]!.n} partitions, not ${partitions}`);
    // A first short call plans and caches what the loop runs.
    await client.query('CALL post_many(100, $1)', [variant.endsWith('split')]);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const before = backendTicks(rows[0]!.pid);
    await client.query('CALL post_many($1, $2)', [POSTINGS, variant.endsWith('split')]);
    const after = backendTicks(rows[0]!.pid);
    // The check still refuses (the schema's check is the one measured).
    if (!variant.startsWith('none')) {
      await client.query('BEGIN');
      await client.query(`INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (gen_random_uuid(), gen_random_uuid(), 1)`);
      const refused = await client.query('COMMIT').then(
        () => false,
        () => true,
      );
      if (!refused) throw new Error(`${variant}: an unbalanced posting committed`);
    }
    return ((after - before) * TICK_US) / POSTINGS;
  } finally {
    await client.end();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const admin = new pg.Client({ connectionString: BASE_URL });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
await admin.query(`CREATE DATABASE ${DATABASE}`);
const url = new URL(BASE_URL);
url.pathname = `/${DATABASE}`;
const { rows: version } = await admin.query<{ server_version: string }>('SHOW server_version');
console.log(`PostgreSQL ${version[0]!.server_version}, ${POSTINGS} postings of 4 entries per run, ${ROUNDS} rounds`);

const variants: Variant[] = ['none', '055', '059', ...(SPLIT ? (['none split', '055 split', '059 split'] as const) : [])];
const results = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const partitions of PARTITIONS) {
    for (const variant of variants) {
      const us = await run(url.toString(), partitions, variant);
      const key = `${partitions}\t${variant}`;
      results.set(key, [...(results.get(key) ?? []), us]);
      console.log(`round ${round + 1}, ${partitions} partitions, ${variant}: ${us.toFixed(1)} µs CPU per posting`);
    }
  }
}
await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
await admin.end();

console.log('\npartitions\tcheck\tµs per posting (runs)\tcheck µs per posting (median)\tcheck µs per entry');
for (const partitions of PARTITIONS) {
  for (const variant of variants) {
    const none = median(results.get(`${partitions}\t${variant.endsWith('split') ? 'none split' : 'none'}`)!);
    const runs = results.get(`${partitions}\t${variant}`)!;
    const check = median(runs) - none;
    const base = variant.startsWith('none');
    console.log(
      `${partitions}\t${variant}\t${runs.map((us) => us.toFixed(0)).join(' / ')}\t${base ? '—' : check.toFixed(1)}\t${base ? '—' : (check / 4).toFixed(1)}`,
    );
  }
}
