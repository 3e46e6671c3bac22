/**
 * What one request of each kind writes and locks in PostgreSQL (issue 38 item 5, docs/scaling.md):
 * the service runs in this process on a database of its own, and each request is sent alone, with
 * nothing else running in that database (no job worker, no upkeep). Between the request's start and
 * its answer the script reads, from pg_walinspect, every WAL record written for that database: which
 * rows were inserted, updated or locked (a `SELECT … FOR UPDATE` writes a LOCK record on the row)
 * in which tables, which index entries were added, and the bytes. It also counts the statements the
 * service sent (round trips) and the transactions that committed.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx scripts/locks-per-request.ts [repeats]
 *
 * DATABASE_URL must name a server where the user may create databases and the pg_walinspect
 * extension (PostgreSQL 15 or later, superuser). The database is dropped at the end. Each kind is
 * sent `repeats` times (default 20) and the figures are the mean per request; full-page images
 * (the first change of a page after a checkpoint) are reported apart, as they depend on when the
 * last checkpoint was, not on the request.
 *
 * Row locks that write no WAL are not seen here: the advisory terminal-and-amount lock of a create
 * (payment_creation_facts) and the locks a statement waits on; docs/scaling.md lists them from the
 * code.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { transaction } from '../src/db/pool.js';
import { signRequest } from '../src/http/signature.js';
import { type RunningService, startService } from '../src/instance.js';
import { createLogger } from '../src/lib/logger.js';
import { luhnValid } from '../src/lib/validators.js';
import { expireDuePayments } from '../src/payments/lifecycle.js';
import { dispatchTask } from '../src/webhooks/webhooks.jobs.js';

const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) throw new Error('Set DATABASE_URL to a PostgreSQL 15+ server where this user may create databases');
const REPEATS = Number(process.argv[2] ?? 20);
const ADMIN_TOKEN = randomBytes(16).toString('hex');
const BASE = 'http://kassir.test';
/** The merchant's webhook receiver (set in main): answers 200 to every delivery and counts them. */
let HOOK = '';
let hooksReceived = 0;

// Every statement the service sends while a request is measured (the pg client's query()).
let recording: string[] | undefined;
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string; name?: string } | undefined;
  const text = typeof first === 'string' ? first : (first?.text ?? first?.name ?? '?');
  recording?.push(text.replace(/\s+/g, ' ').trim().slice(0, 90));
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

interface WalRecord {
  xid: string;
  resource_manager: string;
  record_type: string;
  record_length: number;
  fpi_length: number;
  block_ref: string | null;
}

async function main(): Promise<void> {
  const name = `kassir_locks_${process.pid}`;
  const adminClient = new pg.Client({ connectionString: adminUrl });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl!);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'kassir-locks-'));
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hooksReceived += 1;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  HOOK = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const probe = new pg.Client({ connectionString: url.toString() });
  let service: RunningService | undefined;
  try {
    await probe.connect();
    await probe.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const dbOid = (await probe.query<{ oid: string }>('SELECT oid::text FROM pg_database WHERE datname = current_database()')).rows[0]!.oid;
    const config = loadConfig({
      DATABASE_URL: url.toString(),
      ADMIN_TOKEN,
      KASSIR_MASTER_KEY: randomBytes(32).toString('base64'),
      KASSIR_DATA_DIR: dataDir,
      PUBLIC_BASE_URL: BASE,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      KASSIR_SHED: 'false',
      KASSIR_WORKER: 'false',
      LOG_LEVEL: 'silent',
      PORT: '0',
    });
    service = await startService(config, createLogger(config.logLevel), { listen: false });
    const app = service.app;
    const setup = await seed(app);

    const measure = async (kind: string, run: () => Promise<void>, repeats = REPEATS) => {
      const totals = new Map<string, { n: number; bytes: number }>();
      let bytes = 0;
      let fpi = 0;
      let commits = 0;
      let statements = 0;
      let backendNs = 0;
      let wallMs = 0;
      const texts = new Map<string, number>();
      for (let i = 0; i < repeats; i++) {
        const before = await backendCpu(probe, name);
        const started = performance.now();
        const start = (await probe.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
        recording = [];
        await run();
        wallMs += performance.now() - started;
        const sent = recording;
        recording = undefined;
        const after = await backendCpu(probe, name);
        for (const [pid, ns] of after) backendNs += ns - (before.get(pid) ?? ns);
        // The service's afterCommit work and batched logs settle.
        await new Promise((resolve) => setTimeout(resolve, 30));
        const end = (await probe.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn;
        // pg_walinspect reads only what is flushed: wait for the WAL writer.
        while ((await probe.query<{ behind: boolean }>('SELECT pg_current_wal_flush_lsn() < $1::pg_lsn AS behind', [end])).rows[0]!.behind) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const records = await walRecords(probe, start, end);
        const ours = records.filter((r) => r.block_ref !== null && relOf(r.block_ref)?.db === dbOid);
        const xids = new Set(ours.map((r) => r.xid).filter((x) => x !== '0'));
        const commitsOf = records.filter((r) => r.resource_manager === 'Transaction' && xids.has(r.xid));
        for (const r of [...ours, ...commitsOf]) {
          const rel = r.block_ref ? await relName(probe, relOf(r.block_ref)!.node) : '-';
          const key = `${r.resource_manager.padEnd(11)} ${r.record_type.padEnd(24)} ${rel}`;
          const t = totals.get(key) ?? { n: 0, bytes: 0 };
          t.n += 1;
          t.bytes += r.record_length - r.fpi_length;
          totals.set(key, t);
          bytes += r.record_length - r.fpi_length;
          fpi += r.fpi_length;
        }
        commits += commitsOf.filter((r) => r.record_type.startsWith('COMMIT')).length;
        statements += sent.length;
        for (const text of sent) texts.set(text, (texts.get(text) ?? 0) + 1);
      }
      console.log(`\n## ${kind} (${repeats} sent, mean per request)`);
      console.log(
        `WAL ${(bytes / repeats).toFixed(0)} B without full-page images (+ ${(fpi / repeats).toFixed(0)} B of them); ` +
          `${(commits / repeats).toFixed(2)} commits; ${(statements / repeats).toFixed(1)} statements sent; ` +
          `PostgreSQL backends' CPU ${(backendNs / repeats / 1e6).toFixed(2)} ms; wall ${(wallMs / repeats).toFixed(2)} ms`,
      );
      console.log('records: count/request  bytes/request  resource manager, type, relation');
      for (const [key, t] of [...totals].sort((a, b) => a[0].localeCompare(b[0]))) {
        console.log(`  ${(t.n / repeats).toFixed(2).padStart(6)} ${(t.bytes / repeats).toFixed(0).padStart(6)}  ${key}`);
      }
      console.log('statements sent (per request):');
      for (const [text, n] of texts) console.log(`  ${(n / repeats).toFixed(2).padStart(5)}  ${text}`);
    };

    // A create: the cascade's one statement (rules, walk, hold, LRU mark, insert).
    const created: string[] = [];
    let amount = 1000;
    await measure('create (POST /v1/payments)', async () => {
      amount += 1;
      const res = await signed(app, setup.merchant, 'POST', '/v1/payments', {
        ext_id: `o-${randomBytes(6).toString('hex')}`,
        amount,
        client_id: 'payer-1',
        notify_url: HOOK,
      });
      if (res.statusCode !== 200) throw new Error(`create ${res.statusCode} ${res.body}`);
      created.push(res.json().id);
    });

    // A completion: the executor's notification of the transfer (lock, status change, payer
    // history, webhook outbox, the pay-in posting with the terminal's credit at COMMIT, audit).
    const pending = await probe.query<{ id: string; requisite_id: string; payer_amount: string }>(
      'SELECT id, requisite_id, payer_amount::text FROM payments WHERE id = ANY($1::uuid[]) ORDER BY created_at',
      [created],
    );
    let next = 0;
    const toComplete = pending.rows.slice(0, Math.floor(pending.rows.length / 2));
    await measure(
      'completion (POST /executor/v1/notifications)',
      async () => {
        const p = toComplete[next++]!;
        const res = await executorCall(app, setup.executor.token, 'POST', '/notifications', {
          requisite_id: p.requisite_id,
          amount: Number(p.payer_amount),
          received_at: new Date().toISOString(),
        });
        if (res.statusCode !== 200 || res.json().status !== 'matched') throw new Error(`notification ${res.statusCode} ${res.body}`);
      },
      toComplete.length,
    );

    // The completions' webhooks, delivered by one run of the dispatch job (as the worker runs it:
    // leased in batches, delivered concurrently, each outcome recorded in its own statement).
    const before = hooksReceived;
    await measure(
      `webhook delivery: one dispatch run over the ${toComplete.length} completions' events (figures per run)`,
      async () => {
        await (dispatchTask(service!.ctx) as unknown as () => Promise<void>)();
        if (hooksReceived - before !== toComplete.length) throw new Error(`delivered ${hooksReceived - before} of ${toComplete.length}`);
      },
      1,
    );

    // Expiry: one sweep over the rest and 100 more, as the job runs it (one transaction per batch
    // of up to 500).
    for (let i = 0; i < 100; i++) {
      amount += 1;
      const res = await signed(app, setup.merchant, 'POST', '/v1/payments', { ext_id: `x-${randomBytes(6).toString('hex')}`, amount, notify_url: HOOK });
      if (res.statusCode !== 200) throw new Error(`create ${res.statusCode} ${res.body}`);
      created.push(res.json().id);
    }
    const rest = (await probe.query<{ id: string }>(`SELECT id FROM payments WHERE status = 'PENDING' AND id = ANY($1::uuid[]) ORDER BY created_at`, [created]))
      .rows;
    await probe.query(`UPDATE payments SET valid_until = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [rest.map((p) => p.id)]);
    await measure(
      `expiry: one sweep of ${rest.length} due payments (payments_expire_due job; figures per sweep)`,
      async () => {
        const changes = await transaction(service!.ctx.db, (tx) => expireDuePayments(tx, service!.ctx.config, 500));
        if (changes.length !== rest.length) throw new Error(`expired ${changes.length}`);
      },
      1,
    );

    // A payout: the merchant's create (reserve on the terminal), then an executor's take.
    const payouts: string[] = [];
    await measure('payout create (POST /v1/payouts)', async () => {
      const res = await signed(app, setup.merchant, 'POST', '/v1/payouts', {
        ext_id: `po-${randomBytes(6).toString('hex')}`,
        amount: 500,
        method: 'card',
        requisites: '4111 1111 1111 1111',
        holder_name: 'Ivan Petrov',
        notify_url: HOOK,
      });
      if (res.statusCode !== 200) throw new Error(`payout ${res.statusCode} ${res.body}`);
      payouts.push(res.json().id);
    });
    let taken = 0;
    await measure('payout take (POST /executor/v1/payouts/{id}/take)', async () => {
      const res = await app.inject({
        method: 'POST',
        url: `/executor/v1/payouts/${payouts[taken++]}/take`,
        headers: { authorization: `Bearer ${setup.executor.token}` },
      });
      if (res.statusCode !== 200) throw new Error(`take ${res.statusCode} ${res.body}`);
    });

    // A dispute on a cancelled (expired) payment: the merchant opens it with a proof.
    let disputed = 0;
    await measure(
      'dispute open (POST /v1/payments/{id}/dispute)',
      async () => {
        const id = rest[disputed++]!.id;
        const form = multipartBody({ data: JSON.stringify({ comment: 'paid, see the receipt' }) }, { field: 'proof', content: TINY_PNG });
        const path = `/v1/payments/${id}/dispute`;
        const res = await app.inject({
          method: 'POST',
          url: path,
          headers: {
            'x-identity': setup.merchant.apiKey,
            'x-signature': signRequest(setup.merchant.secretKey, 'POST', BASE + path, form.body),
            'content-type': form.contentType,
          },
          payload: form.body,
        });
        if (res.statusCode !== 200) throw new Error(`dispute ${res.statusCode} ${res.body}`);
      },
      Math.min(REPEATS, rest.length),
    );
  } finally {
    await service?.stop();
    receiver.close();
    await probe.end().catch(() => undefined);
    await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await adminClient.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * CPU time so far (ns, /proc/PID/schedstat) of each backend connected to the database, the probe's
 * own left out: the service's pool. PostgreSQL must run on this machine.
 */
async function backendCpu(db: pg.Client, database: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ pid: string }>('SELECT pid::text FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
  const cpu = new Map<string, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // A backend on another machine, or one that has just ended: not counted.
    }
  }
  return cpu;
}

function relOf(blockRef: string): { db: string; node: string } | undefined {
  const m = /rel \d+\/(\d+)\/(\d+)/.exec(blockRef);
  return m ? { db: m[1]!, node: m[2]! } : undefined;
}

const names = new Map<string, string>();
async function relName(db: pg.Client, node: string): Promise<string> {
  let n = names.get(node);
  if (n === undefined) {
    const { rows } = await db.query<{ name: string | null }>('SELECT pg_filenode_relation(0, $1::oid)::text AS name', [node]);
    n = rows[0]?.name ?? `filenode ${node}`;
    names.set(node, n);
  }
  return n;
}

async function walRecords(db: pg.Client, start: string, end: string): Promise<WalRecord[]> {
  if (start === end) return [];
  const { rows } = await db.query<WalRecord>(
    `SELECT xid::text, resource_manager, record_type, record_length, fpi_length, block_ref
       FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)`,
    [start, end],
  );
  return rows;
}

interface Merchant {
  apiKey: string;
  secretKey: string;
}

async function adminOk<T = Record<string, any>>(app: FastifyInstance, method: string, path: string, body?: unknown): Promise<T> {
  const res = await app.inject({
    method: method as 'GET',
    url: `/admin/v1${path}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode} ${res.body}`);
  return (res.body ? res.json() : undefined) as T;
}

function signed(app: FastifyInstance, creds: Merchant, method: string, path: string, body: unknown) {
  const raw = JSON.stringify(body);
  return app.inject({
    method: method as 'POST',
    url: path,
    headers: { 'x-identity': creds.apiKey, 'x-signature': signRequest(creds.secretKey, method, BASE + path, raw), 'content-type': 'application/json' },
    payload: raw,
  });
}

function executorCall(app: FastifyInstance, token: string, method: string, path: string, body: unknown) {
  return app.inject({
    method: method as 'POST',
    url: `/executor/v1${path}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

let cardSeq = 0;
function card(): string {
  const body = `2200${String(Date.now() % 1e6).padStart(6, '0')}${String(cardSeq++).padStart(5, '0')}`.slice(0, 15);
  for (let check = 0; check < 10; check++) if (luhnValid(body + check)) return body + check;
  throw new Error('unreachable');
}

/** One merchant with a funded terminal, one funded executor with ten cards: the bench's shape, small. */
async function seed(app: FastifyInstance) {
  await adminOk(app, 'PUT', '/rates/RUB', { rate: 100 });
  const m = await adminOk<{ id: string; secret_key: string }>(app, 'POST', '/merchants', { name: 'Shop' });
  const t = await adminOk<{ id: string; api_key: string }>(app, 'POST', `/merchants/${m.id}/terminals`, {
    name: 'Main',
    currency: 'RUB',
    payin_rate: 2.5,
    payout_rate: 1.5,
    withdrawal_fee: 1,
  });
  await adminOk(app, 'POST', `/terminals/${t.id}/adjustments`, { amount: 100000, reason: 'funds for payouts' });
  const executor = await adminOk<{ id: string; token: string }>(app, 'POST', '/executors', { name: 'Trader' });
  await adminOk(app, 'POST', `/executors/${executor.id}/adjustments`, { amount: 1_000_000, reason: 'deposit' });
  await adminOk(app, 'PATCH', `/executors/${executor.id}`, { max_open_disputes: 1000 });
  for (let i = 0; i < 10; i++) {
    await adminOk(app, 'POST', `/executors/${executor.id}/requisites`, {
      type: 'card',
      value: card(),
      bank: 'sberbank',
      holder: 'Ivan I.',
      currency: 'RUB',
      country: 'RU',
      methods: ['CARD'],
      min_amount: 0,
    });
  }
  return { merchant: { merchantId: m.id, terminalId: t.id, apiKey: t.api_key, secretKey: m.secret_key }, executor };
}

const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function multipartBody(fields: Record<string, string>, file: { field: string; content: Buffer }): { body: Buffer; contentType: string } {
  const boundary = `----kassir${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [key, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="receipt.png"\r\nContent-Type: image/png\r\n\r\n`),
    file.content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
