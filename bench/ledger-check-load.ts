/**
 * The whole ledger check on a live desk (issue 38, docs/performance.md "The whole check in
 * pieces"): on the database a `BENCH_KEEP=1 npm run bench` kept, a create load runs (signed POST
 * /v1/payments against the service, BENCH_CHECK_CONNECTIONS at a time) while the whole check runs
 * beside it, the old way (one pass, then the totals summed again from every entry, as the daily
 * job did) and the new (in pieces with a pause after each, the totals its sums), taking turns with
 * spells of the load alone. Printed per spell: creates/s, their p50 and p99, and the check's time.
 *
 *   flock /tmp/bench.lock npx tsx bench/ledger-check-load.ts /tmp/kassir-bench-XXXX
 *
 * Knobs: BENCH_CHECK_CONNECTIONS (16), BENCH_CHECK_ROUNDS (2), BENCH_CHECK_IDLE_SECONDS (15).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';
import { checkLedger, checkWholeLedger } from '../src/ledger/ledger.service.js';
import { resetWatermark } from '../src/ledger/ledger-since.js';
import { settledInstant } from '../src/ledger/system-totals.js';
import { operatorCall } from './operator.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: bench/ledger-check-load.ts <the work directory BENCH_KEEP=1 kept>');
const CONNECTIONS = Number(process.env.BENCH_CHECK_CONNECTIONS || 16);
const ROUNDS = Number(process.env.BENCH_CHECK_ROUNDS || 2);
const IDLE_SECONDS = Number(process.env.BENCH_CHECK_IDLE_SECONDS || 15);
const ROOT = resolve(import.meta.dirname, '..');
const ADMIN_TOKEN = `bench-${randomBytes(16).toString('hex')}`;
const started = Date.now();
const say = (message: string) => process.stdout.write(`[check-load ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const quiet = { info: () => undefined, debug: () => undefined };
const embedded = await startEmbeddedPostgres(join(dir, 'data'), undefined, quiet);
let service: ChildProcess | undefined;
try {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const logFd = openSync(join(dir, 'check-load-service.log'), 'a');
  service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', logFd, logFd],
    env: {
      ...process.env,
      DATABASE_URL: embedded.url,
      KASSIR_DATA_DIR: join(dir, 'data'),
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      SAME_AMOUNT_LIMIT: '1000000',
      PAYMENT_TTL_SECONDS: '86400',
      // No jobs: the only whole check is this script's.
      KASSIR_WORKER: 'false',
    },
  });
  closeSync(logFd);
  for (let i = 0; ; i++) {
    if (i > 900) throw new Error('the service did not start');
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await sleep(100);
  }
  const admin = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(base, ADMIN_TOKEN, method, path, body);

  const merchant = await admin<{ id: string; secret_key: string }>('POST', '/merchants', { name: 'Check load shop' });
  const terminal = await admin<{ id: string; api_key: string }>('POST', `/merchants/${merchant.id}/terminals`, {
    name: 'Main',
    currency: 'RUB',
    payin_rate: 2.5,
    payout_rate: 1.5,
    withdrawal_fee: 1,
  });
  say(`service on ${base}; database ${embedded.url}`);

  // The create load: CONNECTIONS loops, each one create at a time; every answer's end and latency kept.
  const done: Array<{ at: number; ms: number; ok: boolean; status: number }> = [];
  let running = true;
  let seq = 0;
  const loops = Array.from({ length: CONNECTIONS }, async () => {
    while (running) {
      const body = JSON.stringify({
        ext_id: `cl-${++seq}-${randomBytes(4).toString('hex')}`,
        amount: (10_000 + Math.floor(Math.random() * 29_990_001)) / 100,
        currency: 'RUB',
        method: 'CARD',
        client_id: `client-${seq % 5000}`,
      });
      const t0 = performance.now();
      const status = await fetch(`${base}/v1/payments`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-identity': terminal.api_key,
          'x-signature': signRequest(merchant.secret_key, 'POST', `${base}/v1/payments`, body),
        },
        body,
      }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        () => 0,
      );
      done.push({ at: Date.now(), ms: performance.now() - t0, ok: status === 200, status });
    }
  });

  const db = new pg.Pool({ connectionString: embedded.url, max: 2 });
  const spells: Array<{ label: string; from: number; to: number; note: string }> = [];
  const spell = async (label: string, run: () => Promise<string>) => {
    const from = Date.now();
    const note = await run();
    spells.push({ label, from, to: Date.now(), note });
    say(`${label}: ${((Date.now() - from) / 1000).toFixed(1)} s ${note}`);
  };
  const idle = () =>
    spell('load alone', async () => {
      await sleep(IDLE_SECONDS * 1000);
      return '';
    });
  /** The old whole check: one pass, then the daily run's totals summed again from every entry (main before h15). */
  const old = () =>
    spell('old: one pass + totals summed again', async () => {
      const until = await settledInstant(db);
      const t0 = Date.now();
      const result = await checkLedger(db);
      const t1 = Date.now();
      const client = await db.connect();
      try {
        await client.query('BEGIN');
        await client.query('LOCK TABLE ledger_check_watermark IN EXCLUSIVE MODE');
        await client.query('DELETE FROM ledger_check_totals');
        await client.query(
          'INSERT INTO ledger_check_totals (account_id, total) SELECT account_id, sum(amount) FROM ledger_entries WHERE created_at < $1 GROUP BY account_id',
          [until],
        );
        await client.query('UPDATE ledger_check_watermark SET upto = $1, whole_at = now()', [until]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      return `(check ${((t1 - t0) / 1000).toFixed(1)} s, totals ${((Date.now() - t1) / 1000).toFixed(1)} s; ok ${result.ok}, ${result.problems.length} problems)`;
    });
  /** The new: in pieces with a pause after each, its sums the totals. */
  const pieced = () =>
    spell('new: in pieces with pauses', async () => {
      const result = await checkWholeLedger(db);
      await resetWatermark(db, result.until, result.totals);
      const work = result.pieces.reduce((sum, p) => sum + p.ms, 0);
      const tables = [...new Set(result.pieces.map((p) => p.table))].map((table) => {
        const of = result.pieces.filter((p) => p.table === table);
        const ms = of.map((p) => p.ms).sort((a, b) => a - b);
        return `${table} ${of.length} × p50 ${ms[Math.floor(ms.length / 2)]} ms, max ${ms.at(-1)} ms`;
      });
      return `(${result.pieces.length} pieces, ${(work / 1000).toFixed(1)} s in them: ${tables.join('; ')}; ok ${result.ok}, ${result.problems.length} problems)`;
    });

  await sleep(5000); // warm-up
  done.length = 0;
  await idle();
  for (let round = 0; round < ROUNDS; round++) {
    for (const run of round % 2 ? [pieced, old] : [old, pieced]) {
      await run();
      await idle();
    }
  }
  running = false;
  await Promise.all(loops);
  await db.end();

  const pct = (values: number[], q: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
  };
  say(`${CONNECTIONS} connections; per spell: creates/s (ok), p50, p99`);
  for (const s of spells) {
    const inside = done.filter((d) => d.at >= s.from && d.at < s.to);
    const ok = inside.filter((d) => d.ok);
    say(
      `${s.label.padEnd(38)} ${((s.to - s.from) / 1000).toFixed(1).padStart(6)} s  ${(ok.length / ((s.to - s.from) / 1000)).toFixed(0).padStart(5)}/s` +
        ` (failed: ${
          [...new Set(inside.filter((d) => !d.ok).map((d) => d.status))]
            .map((status) => `${inside.filter((d) => !d.ok && d.status === status).length} × ${status || 'error'}`)
            .join(', ') || 0
        })  p50 ${pct(
          ok.map((d) => d.ms),
          0.5,
        ).toFixed(1)} ms  p99 ${pct(
          ok.map((d) => d.ms),
          0.99,
        ).toFixed(1)} ms ${s.note}`,
    );
  }
} finally {
  service?.kill('SIGTERM');
  await sleep(2000);
  await embedded.stop();
}
