import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { signRequest } from '../../src/http/signature.js';

/**
 * The fault suite's machinery (`npm run test:faults`): a PostgreSQL the suite starts, stops and
 * restarts itself; real service processes (`node dist/main.js`, as `npm start` runs it) it can
 * kill; a real webhook receiver; an HTTP client that records every answer and how long it took.
 */

export const ROOT = resolve(import.meta.dirname, '../..');
export const PUBLIC_BASE_URL = 'http://kassir.test';
export const ADMIN_TOKEN = 'faults-admin-token';
/** One key for every instance of a scenario: instances on one database must share it. */
const MASTER_KEY = randomBytes(32).toString('base64');

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** A scenario's scratch folder: database files, instances' data and logs. Kept when the scenario fails. */
export function workDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `kassir-faults-${name}-`));
  // Run as root, the embedded PostgreSQL runs as the postgres user, which must reach its files.
  chmodSync(dir, 0o711);
  return dir;
}

const quiet = { info: () => undefined, debug: () => undefined };

/**
 * An embedded PostgreSQL that the suite controls (src/db/embedded.ts, on a free port — never 5432):
 * stopped with a fast shutdown (sessions terminated, as on a server restart) and started again on
 * the same files and port.
 */
export class Database {
  private embedded: EmbeddedDatabase | undefined;
  url = '';

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(work: string): Promise<Database> {
    const db = new Database(join(work, 'db'), await freePort());
    await db.start();
    return db;
  }

  async start(): Promise<void> {
    this.embedded = await startEmbeddedPostgres(this.dir, this.port, quiet, '128MB');
    this.url = this.embedded.url;
  }

  async stop(): Promise<void> {
    const embedded = this.embedded;
    this.embedded = undefined;
    await embedded?.stop();
  }

  get running(): boolean {
    return this.embedded !== undefined;
  }

  /** A client of the suite's own, for the checks made from the database. */
  async client(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    client.on('error', () => undefined);
    return client;
  }

  async query<R extends pg.QueryResultRow = Record<string, any>>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = await this.client();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }
}

/** Settings every instance of the suite runs with, before a scenario's own. */
export function baseEnv(db: Database): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    ADMIN_TOKEN,
    KASSIR_MASTER_KEY: MASTER_KEY,
    PUBLIC_BASE_URL,
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    KASSIR_WORKER: 'true',
    LOG_LEVEL: 'info',
    // Retries soon after a failed attempt, so that a run sees them.
    KASSIR_WEBHOOK_RETRY_BASE_MS: '500',
    KASSIR_WEBHOOK_TIMEOUT_MS: '2000',
  };
}

/** A service process: `node dist/main.js` with its log in `<work>/<name>.log`. */
export class Instance {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  constructor(
    readonly name: string,
    readonly port: number,
    readonly proc: ChildProcess,
    readonly logPath: string,
  ) {
    this.exited = new Promise((settle) =>
      proc.once('exit', (code, signal) => {
        this.done = true;
        settle({ code, signal });
      }),
    );
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alive(): boolean {
    return !this.done;
  }

  /** kill -9: no shutdown of any kind. */
  async kill9(): Promise<void> {
    if (this.done) return;
    process.kill(this.proc.pid!, 'SIGKILL');
    await this.exited;
  }

  /** A graceful stop (SIGTERM), as an operator stops it. */
  async stop(): Promise<void> {
    if (this.done) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 25_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** The JSON lines the instance logged. */
  logLines(): Record<string, any>[] {
    const lines: Record<string, any>[] = [];
    for (const line of readFileSync(this.logPath, 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(line));
      } catch {
        // a line cut by kill -9
      }
    }
    return lines;
  }

  logTail(lines = 40): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n') : '';
  }
}

/**
 * Starts `node dist/main.js` (the build `npm start` runs; `pretest:faults` builds it) and waits
 * until /healthz answers 200. The log goes straight to a file, so that it survives kill -9.
 */
export async function startInstance(work: string, name: string, env: Record<string, string>, port?: number): Promise<Instance> {
  const listenPort = port ?? (await freePort());
  const dataDir = join(work, `${name}-data`);
  mkdirSync(dataDir, { recursive: true });
  const logPath = join(work, `${name}.log`);
  const log = openSync(logPath, 'a');
  const proc = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
    cwd: work,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, PORT: String(listenPort), KASSIR_DATA_DIR: dataDir },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const instance = new Instance(name, listenPort, proc, logPath);
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (!instance.alive) throw new Error(`instance ${name} exited during start-up:\n${instance.logTail()}`);
    try {
      const res = await fetch(`${instance.base}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return instance;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`instance ${name} did not become healthy:\n${instance.logTail()}`);
    await sleep(100);
  }
}

/** One answer as the client saw it: a status, or none at all (status 0: the connection failed or timed out). */
export interface Answer {
  status: number;
  body: any;
  headers: Headers | undefined;
  ms: number;
  /** Date.now() when the request was sent (`at - ms` of whoever records it later is not: its event loop may lag). */
  sentAt: number;
  error?: string;
}

/** Whether the service gave a definitive answer (neither a failed connection nor a 5xx). */
export function definitive(answer: Answer): boolean {
  return answer.status > 0 && answer.status < 500;
}

/**
 * Whether the service refused a request for now, having done nothing: shed under load, or undone
 * after a collision with another transaction (503 UNAVAILABLE with Retry-After). A client sends it
 * again after the pause; the database being away answers the same and is retried the same way.
 */
export function isRefusedForNow(answer: Answer): boolean {
  return answer.status === 503 && answer.body?.error === 'UNAVAILABLE' && Boolean(answer.headers?.get('retry-after'));
}

export interface Merchant {
  merchantId: string;
  apiKey: string;
  secretKey: string;
}

/** An HTTP client of the service: whichever instance `target` names at the time of each call. */
export class Client {
  constructor(
    private target: () => Instance,
    private readonly timeoutMs = 30_000,
  ) {}

  /** Sends one request and records its answer; never throws. */
  async call(method: string, path: string, options: { body?: string | Buffer; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Answer> {
    const started = performance.now();
    const sentAt = Date.now();
    try {
      const res = await fetch(`${this.target().base}${path}`, {
        method,
        headers: options.headers,
        body: typeof options.body === 'string' || options.body === undefined ? options.body : new Uint8Array(options.body),
        signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON (the payment page)
      }
      return { status: res.status, body, headers: res.headers, ms: performance.now() - started, sentAt };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return {
        status: 0,
        body: undefined,
        headers: undefined,
        ms: performance.now() - started,
        sentAt,
        error: cause?.code ?? cause?.message ?? (err as Error).name,
      };
    }
  }

  /** A signed merchant request (docs/merchant.md "A signed request"), with an Idempotency-Key when given. */
  merchant(who: Merchant, method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<Answer> {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> = {
      'x-identity': who.apiKey,
      'x-signature': signRequest(who.secretKey, method, PUBLIC_BASE_URL + path, raw),
    };
    if (raw) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    return this.call(method, path, { body: raw || undefined, headers });
  }

  admin(method: string, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.call(method, `/admin/v1${path}`, { body: body === undefined ? undefined : JSON.stringify(body), headers });
  }

  /** An operator call that must succeed (set-up). */
  async adminOk(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await this.admin(method, path, body);
    if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status} ${answer.error ?? JSON.stringify(answer.body)}`);
    return answer.body;
  }

  executor(token: string, method: string, path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.call(method, `/executor/v1${path}`, { body: body === undefined ? undefined : JSON.stringify(body), headers });
  }

  /** An executor's multipart request with one file (payout proof). */
  executorUpload(token: string, path: string, field: string, file: Buffer): Promise<Answer> {
    const boundary = `----faults${randomBytes(8).toString('hex')}`;
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="proof.png"\r\nContent-Type: image/png\r\n\r\n`),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return this.call('POST', `/executor/v1${path}`, {
      body,
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
  }
}

/** One request as the webhook receiver saw it. */
export interface Delivery {
  eventId: string;
  event: string;
  resourceId: string;
  status: number;
  at: number;
}

/**
 * A merchant's webhook endpoint on 127.0.0.1 that logs every request. `failPercent` of the
 * attempts are answered 500 (chosen by a hash of the event id and the attempt's number at this
 * receiver, so an event's attempts differ), to make the service retry.
 */
export class Receiver {
  readonly deliveries: Delivery[] = [];
  failPercent = 0;
  private readonly server: Server;
  private readonly seen = new Map<string, number>();
  url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; id: string; data: { id: string } };
        const eventId = String(req.headers['x-event-id']);
        const attempt = (this.seen.get(eventId) ?? 0) + 1;
        this.seen.set(eventId, attempt);
        const roll = createHash('sha1').update(`${eventId}:${attempt}`).digest().readUInt16BE(0) % 100;
        const status = roll < this.failPercent ? 500 : 200;
        this.deliveries.push({ eventId, event: body.event, resourceId: body.data.id, status, at: Date.now() });
        res.writeHead(status).end(status === 200 ? 'ok' : 'not now');
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  /** Event ids answered 2xx, with how often. */
  acknowledged(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const d of this.deliveries) if (d.status < 300) counts.set(d.eventId, (counts.get(d.eventId) ?? 0) + 1);
    return counts;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}

/** Polls `probe` until it returns something, or fails after `timeoutMs` naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs: number, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(intervalMs);
  }
}

/** Prints a scenario's figures as one readable block (the suite's output). */
export function printFigures(title: string, summary: string, details: Record<string, string | number> = {}): void {
  const lines = [`\n== ${title}: ${summary}`];
  for (const [name, value] of Object.entries(details)) lines.push(`   ${name}: ${value}`);
  console.log(`${lines.join('\n')}\n`);
}

/** Removes a scenario's folder unless it failed (its logs are then kept and named). */
export function cleanUp(work: string, failed: boolean): void {
  if (failed) console.log(`fault scenario files kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

/** The p-th percentile (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
