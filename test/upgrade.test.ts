import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { signRequest } from '../src/http/signature.js';
import {
  ADMIN_TOKEN,
  createExecutor,
  createMerchant,
  createRequisite,
  createTestDatabase,
  expectLedgerOk,
  setRate,
  startTestService,
  type TestService,
} from './helpers.js';

/**
 * Issue 39 item 5: upgrades without a stop. Migrations expand first and contract a release later
 * (docs/operations.md "Upgrades"), so the previous release keeps working on a database the new
 * one has migrated — what happens while an upgrade rolls through the instances. The previous
 * release's code (the newest tag, or until one is made, the commit before the newest migration)
 * is checked out from git and started beside this one on one database; the merchant flow runs
 * through it and is read back through this release.
 */

const ROOT = resolve(import.meta.dirname, '..');
const PUBLIC_BASE_URL = 'http://kassir.test';
const MASTER_KEY = randomBytes(32).toString('base64');

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The commit of the previous release, or why there is none to run. */
function previousRelease(): { commit: string; label: string } | { skip: string } {
  try {
    if (git(['rev-parse', '--is-shallow-repository']) === 'true') return { skip: 'a shallow clone has no previous release to run (git fetch --unshallow)' };
    const head = git(['rev-parse', 'HEAD']);
    const tag = git(['tag', '--list', 'v*', '--sort=-v:refname', '--merged', 'HEAD'])
      .split('\n')
      .find((t) => t !== '' && git(['rev-list', '-n', '1', t]) !== head);
    if (tag) return { commit: git(['rev-list', '-n', '1', tag]), label: `release ${tag}` };
    const newest = readdirSync(join(ROOT, 'src/db/migrations'))
      .filter((f) => /^\d{3}_.+\.sql$/.test(f))
      .sort()
      .at(-1)!;
    const added = git(['log', '--diff-filter=A', '--format=%H', '-1', '--', `src/db/migrations/${newest}`]);
    // Not committed yet (a working copy): the previous release is what is committed.
    if (!added) return { commit: head, label: `HEAD (before the uncommitted ${newest})` };
    return { commit: git(['rev-parse', `${added}^`]), label: `the commit before ${newest} (${added.slice(0, 8)}^)` };
  } catch (err) {
    return { skip: `no git history to read the previous release from (${(err as Error).message.split('\n')[0]})` };
  }
}

const previous = previousRelease();
let service: TestService;
let old: ChildProcess | undefined;
let oldBase = '';
let oldLog = '';
let checkout = '';

beforeAll(async () => {
  if (!('commit' in previous)) return;
  // The new release first: it migrates the database.
  service = await startTestService({ KASSIR_MASTER_KEY: MASTER_KEY, PUBLIC_BASE_URL }, { worker: true });
  checkout = mkdtempSync(join(tmpdir(), 'kassir-previous-'));
  execFileSync('sh', ['-c', `git archive ${previous.commit} | tar -x -C "${checkout}"`], { cwd: ROOT });
  // Its dependencies are this checkout's (a release adds dependencies; it rarely drops one).
  rmSync(join(checkout, 'node_modules'), { recursive: true, force: true });
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  mkdirSync(join(checkout, 'data'));
  const port = await freePort();
  oldBase = `http://127.0.0.1:${port}`;
  oldLog = '';
  // Run from its sources (tsx, as `npm run dev` does): no build of the old release needed.
  old = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: service.databaseUrl,
      ADMIN_TOKEN,
      KASSIR_MASTER_KEY: MASTER_KEY,
      PUBLIC_BASE_URL,
      HOST: '127.0.0.1',
      PORT: String(port),
      KASSIR_DATA_DIR: join(checkout, 'data'),
      KASSIR_WORKER: 'false',
      KASSIR_SHED: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  old.stdout!.on('data', (chunk: Buffer) => (oldLog += chunk.toString()));
  old.stderr!.on('data', (chunk: Buffer) => (oldLog += chunk.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (old.exitCode !== null) throw new Error(`the previous release exited at start:\n${oldLog.slice(-3000)}`);
    try {
      if ((await fetch(`${oldBase}/healthz`, { signal: AbortSignal.timeout(2000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the previous release did not become healthy:\n${oldLog.slice(-3000)}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}, 120_000);

afterAll(async () => {
  if (old && old.exitCode === null) {
    old.kill('SIGTERM');
    await new Promise((done) => old!.once('exit', done));
  }
  await service?.close();
  if (checkout && existsSync(checkout)) rmSync(checkout, { recursive: true, force: true });
});

/** A request to the previous release over HTTP. */
async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(`${oldBase}${path}`, {
    method,
    headers: { ...headers, ...(raw ? { 'content-type': 'application/json' } : {}) },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe.skipIf(!('commit' in previous))('the previous release on the migrated database', () => {
  it('runs the merchant flow beside this release: create, complete, read back both ways, ledger ok', async () => {
    const { app } = service;
    await setRate(app, 'RUB', 95);
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const requisite = await createRequisite(app, executor.id);
    const signedHeaders = (method: string, path: string, body?: unknown) => ({
      'x-identity': merchant.apiKey,
      'x-signature': signRequest(merchant.secretKey, method, PUBLIC_BASE_URL + path, body === undefined ? '' : JSON.stringify(body)),
    });

    // Through the previous release: a create, its read, and the executor's notification completing it.
    const body = { ext_id: `upgrade-${randomUUID().slice(0, 8)}`, amount: 1500, currency: 'RUB', method: 'CARD' };
    const created = await call('POST', '/v1/payments', signedHeaders('POST', '/v1/payments', body), body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.requisites.value).toBe(requisite.value);
    const read = await call('GET', `/v1/payments/${created.body.id}`, signedHeaders('GET', `/v1/payments/${created.body.id}`));
    expect(read.body.status).toBe('PENDING');
    const notified = await call(
      'POST',
      '/executor/v1/notifications',
      { authorization: `Bearer ${executor.token}` },
      { requisite_id: requisite.id, amount: 1500 },
    );
    expect(notified.status, JSON.stringify(notified.body)).toBe(200);
    expect(notified.body.matched).toBe(true);

    // Read back through this release: the same payment, completed once, credited once.
    const now = await app.inject({
      method: 'GET',
      url: `/v1/payments/${created.body.id}`,
      headers: signedHeaders('GET', `/v1/payments/${created.body.id}`),
    });
    expect(now.json().status).toBe('COMPLETED');
    // And the other way: a payment this release creates is read by the previous one.
    const second = { ext_id: `upgrade-${randomUUID().slice(0, 8)}`, amount: 2300, currency: 'RUB', method: 'CARD' };
    const fresh = await app.inject({ method: 'POST', url: '/v1/payments', headers: signedHeaders('POST', '/v1/payments', second), payload: second });
    expect(fresh.statusCode, fresh.body).toBe(200);
    const seenByOld = await call('GET', `/v1/payments/${fresh.json().id}`, signedHeaders('GET', `/v1/payments/${fresh.json().id}`));
    expect(seenByOld.status).toBe(200);
    expect(seenByOld.body.amount).toBe(2300);
    const balance = await call('GET', '/v1/balance', signedHeaders('GET', '/v1/balance'));
    expect(balance.status).toBe(200);
    await expectLedgerOk(app);
    console.log(`upgrade: ${'label' in previous ? previous.label : ''} ran the merchant flow on the database migrated by this release`);
  }, 120_000);
});

describe('a release older than the database', () => {
  it("applies nothing and keeps the newer release's database functions", async () => {
    const database = await createTestDatabase();
    const pool = createPool(database.url, 2);
    try {
      // A newer release has migrated this database (a name this release has no file for) and
      // written its own version of a function.
      await pool.query(`INSERT INTO schema_migrations (name) VALUES ('999_from_a_newer_release.sql')`);
      await pool.query(
        `CREATE OR REPLACE FUNCTION executor_hold_take(p_payment uuid, p_merchant uuid, p_executor uuid, p_hold numeric) RETURNS boolean LANGUAGE sql AS 'SELECT true'`,
      );
      const said: string[] = [];
      const applied = await migrate(pool, { info: (msg: string) => said.push(msg) });
      expect(applied).toEqual([]);
      expect(said).toEqual(['the database is newer than this release (migration 999_from_a_newer_release.sql); keeping its database functions']);
      const { rows } = await pool.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE proname = 'executor_hold_take'`);
      expect(rows.map((r) => r.src)).toEqual(['SELECT true']);
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});

if (!('commit' in previous)) console.log(`upgrade test skipped: ${previous.skip}`);
