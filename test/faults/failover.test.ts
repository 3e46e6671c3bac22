import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.js';
import {
  type Answer,
  baseEnv,
  Client,
  cleanUp,
  type Database,
  type Instance,
  percentile,
  printFigures,
  sleep,
  startInstance,
  waitFor,
  workDir,
} from './harness.js';
import { openShop, requisiteOf, rubles } from './shop.js';

/**
 * Issue 39 item 4: a primary that may die. A PostgreSQL primary with a synchronous standby (the
 * machine's own PostgreSQL server binaries: Debian's postgresql packages, which .ci/run installs
 * when missing), two Kassir instances on `DATABASE_URL=postgres://…@primary,standby/kassir?
 * target_session_attrs=read-write`, creates and completions under load; the primary is killed
 * (kill -9 of its postmaster) and the standby promoted by hand (`pg_ctl promote`, what Patroni
 * does for an operator who runs it). Figures: acknowledged requests, lost (must be 0: synchronous
 * replication acknowledged every commit on the standby), doubled (0), seconds until creates succeed
 * again, and the ledger check on the new primary.
 */

/** The newest PostgreSQL server binaries on the machine, or why there are none. */
function findServerBinaries(): { bin: string } | { skip: string } {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return { skip: `no PostgreSQL server binaries under ${root} (install Debian's postgresql package)` };
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(root, v, 'bin');
    if (['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'].every((tool) => existsSync(join(bin, tool)))) return { bin };
  }
  return { skip: `no complete server under ${root} (initdb, pg_ctl, pg_basebackup, postgres)` };
}

const found = findServerBinaries();
const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL tool as the postgres user when the suite runs as root (the server refuses root). */
function pgTool(tool: string, args: string[]): string {
  if (!('bin' in found)) throw new Error(found.skip);
  const path = join(found.bin, tool);
  return asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', path, ...args], { encoding: 'utf8' }) : execFileSync(path, args, { encoding: 'utf8' });
}

function ownedByPostgres(dir: string): string {
  mkdirSync(dir, { recursive: true });
  // A data directory must be the server's alone (0700), or PostgreSQL refuses to start on it.
  chmodSync(dir, 0o700);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

class Server {
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
    readonly log: string,
  ) {}

  start(): void {
    pgTool('pg_ctl', ['-D', this.dir, '-l', this.log, '-w', '-t', '60', 'start']);
  }

  /** kill -9 of the postmaster: no shutdown of any kind, as when the machine dies. */
  kill9(): void {
    const pid = Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGKILL');
  }

  stopQuietly(): void {
    try {
      pgTool('pg_ctl', ['-D', this.dir, '-m', 'immediate', 'stop']);
    } catch {
      // not running
    }
  }

  async query<R extends pg.QueryResultRow = Record<string, any>>(text: string, values: unknown[] = [], database = 'kassir'): Promise<R[]> {
    const client = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database, connectionTimeoutMillis: 3000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }
}

let work = '';
let failed = true;
const servers: Server[] = [];
const instances: Instance[] = [];

afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  for (const s of servers) s.stopQuietly();
  if (work) cleanUp(work, failed);
});

describe.skipIf(!('bin' in found))('the database primary dies', () => {
  it('loses no acknowledged request, doubles none, and creates succeed again on the promoted standby', async () => {
    work = workDir('failover');
    const sockets = ownedByPostgres(join(work, 'sockets'));
    const logs = ownedByPostgres(join(work, 'pg-logs'));
    const primary = new Server('primary', ownedByPostgres(join(work, 'primary')), await freePort(), join(logs, 'primary.log'));
    const standby = new Server('standby', ownedByPostgres(join(work, 'standby')), await freePort(), join(logs, 'standby.log'));
    servers.push(primary, standby);

    // ---- a primary whose commits wait for the standby (synchronous_commit on, one named standby)
    pgTool('initdb', ['-D', primary.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N']);
    appendFileSync(
      join(primary.dir, 'postgresql.conf'),
      [
        `port = ${primary.port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${sockets}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        `synchronous_standby_names = 'standby1'`,
        'synchronous_commit = on',
        'max_connections = 200',
        'shared_buffers = 128MB',
        '',
      ].join('\n'),
    );
    primary.start();
    pgTool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standby.dir, '-R', '-X', 'stream', '-c', 'fast']);
    // The walreceiver names itself by cluster_name: the name synchronous_standby_names waits for.
    appendFileSync(join(standby.dir, 'postgresql.conf'), `port = ${standby.port}\ncluster_name = 'standby1'\n`);
    standby.start();
    await waitFor(
      'the standby streaming synchronously',
      async () => (await primary.query<{ sync_state: string }>('SELECT sync_state FROM pg_stat_replication', [], 'postgres'))[0]?.sync_state === 'sync',
      30_000,
    );
    await primary.query('CREATE DATABASE kassir', [], 'postgres');

    const url = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/kassir?target_session_attrs=read-write`;
    const env = { ...baseEnv({ url } as Database), KASSIR_EXPIRY_SWEEP_SECONDS: '1' };
    instances.push(await startInstance(work, 'one', env));
    instances.push(await startInstance(work, 'two', env));
    let turn = 0;
    const client = new Client(() => instances[turn++ % instances.length]!, 15_000);
    const shop = await openShop(client, { funds: ['1000'], executors: 1, requisitesEach: 40 });
    const terminal = shop.terminals[0]!;

    // ---- load: creates from two loops, completions by the executor's notifications
    let phase: 'before' | 'down' | 'after' = 'before';
    const seen: { at: number; what: string; phase: string; answer: Answer }[] = [];
    const created: { id: string; extId: string; amount: string; requisiteId: string; token: string }[] = [];
    const completed = new Set<string>();
    const unanswered: { extId: string; send: () => Promise<Answer> }[] = [];
    const toNotify: typeof created = [];
    let stop = false;
    const loop = async (body: () => Promise<void>) => {
      while (!stop) await body();
    };
    const createOnce = async () => {
      const extId = `fo-${randomUUID().slice(0, 12)}`;
      const amount = rubles(100, 5000);
      const body = { ext_id: extId, amount: Number(amount), currency: 'RUB', method: 'CARD' };
      const key = randomUUID();
      const send = () => client.merchant(terminal, 'POST', '/v1/payments', body, key);
      const answer = await send();
      seen.push({ at: Date.now(), what: 'create', phase, answer });
      if (answer.status === 200) {
        const { executor, requisiteId } = requisiteOf(shop, answer.body);
        const payment = { id: answer.body.id as string, extId, amount, requisiteId, token: executor.token };
        created.push(payment);
        toNotify.push(payment);
      } else {
        unanswered.push({ extId, send });
        await sleep(50);
      }
    };
    const notifyOnce = async () => {
      const p = toNotify.shift();
      if (!p) return sleep(10);
      const answer = await client.executor(p.token, 'POST', '/notifications', { requisite_id: p.requisiteId, amount: Number(p.amount) });
      seen.push({ at: Date.now(), what: 'notification', phase, answer });
      if (answer.status === 200 && answer.body.matched) completed.add(p.id);
      else if (answer.status !== 200) {
        toNotify.push(p);
        await sleep(50);
      }
    };
    const loops = [loop(createOnce), loop(createOnce), loop(notifyOnce)];
    await sleep(5_000);

    // ---- the primary dies; a person (or Patroni) promotes the standby a moment later
    phase = 'down';
    const killedAt = Date.now();
    primary.kill9();
    await sleep(2_000);
    pgTool('pg_ctl', ['-D', standby.dir, '-w', '-t', '60', 'promote']);
    // The new primary has no standby of its own: it must stop waiting for one, or every commit
    // would wait forever (what Patroni's synchronous mode does when no synchronous standby is left).
    await standby.query(`ALTER SYSTEM SET synchronous_standby_names = ''`, [], 'postgres');
    await standby.query('SELECT pg_reload_conf()', [], 'postgres');
    const promotedAt = Date.now();
    phase = 'after';
    const firstOk = await waitFor(
      'a create succeeding on the promoted standby',
      async () => seen.find((s) => s.phase === 'after' && s.what === 'create' && s.answer.status === 200 && s.answer.sentAt >= promotedAt),
      60_000,
      50,
    );
    await sleep(5_000);
    stop = true;
    await Promise.all(loops);

    // ---- creates left without an answer are sent again with their Idempotency-Key: one payment each
    let retriedCreated = 0;
    let retriedExisting = 0;
    for (const { extId, send } of unanswered) {
      const answer = await waitFor(
        `the retry of ${extId}`,
        async () => {
          const a = await send();
          // 409 with Retry-After: the key's first request, cut by the crash, has not been released yet.
          return a.status > 0 && a.status < 500 && !(a.status === 409 && a.headers?.get('retry-after')) ? a : undefined;
        },
        90_000,
        500,
      );
      if (answer.status === 200) retriedCreated++;
      else if (answer.status === 409 && answer.body.error === 'PAY_003') retriedExisting++;
      else throw new Error(`retry of ${extId}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    // Notifications that were answered without a match are sent again, so every payment ends completed once.
    for (const p of toNotify) {
      const answer = await client.executor(p.token, 'POST', '/notifications', { requisite_id: p.requisiteId, amount: Number(p.amount) });
      if (answer.status === 200 && answer.body.matched) completed.add(p.id);
    }

    // ---- on the new primary: nothing acknowledged lost, nothing doubled, the ledger holds
    const present = await standby.query<{ id: string; status: string }>('SELECT id, status FROM payments WHERE id = ANY($1::uuid[])', [
      created.map((p) => p.id),
    ]);
    const lost = created.length - present.length;
    const completedNow = new Set(present.filter((p) => p.status === 'COMPLETED').map((p) => p.id));
    const completionsLost = [...completed].filter((id) => !completedNow.has(id)).length;
    const [doubled] = await standby.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM (SELECT 1 FROM payments GROUP BY merchant_id, ext_id HAVING count(*) > 1) d',
    );
    const [creditedTwice] = await standby.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM payments p
        WHERE p.status = 'COMPLETED' AND (SELECT count(*) FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) <> 1`,
    );
    const ledger = await client.adminOk('GET', '/ledger/check');
    const recoverySeconds = (firstOk.at - killedAt) / 1000;
    const down = seen.filter((s) => s.phase === 'down' || (s.phase === 'after' && s.at < firstOk.at));
    const acknowledged = seen.filter((s) => s.answer.status === 200).length;
    failed = false;
    printFigures(
      'the primary killed, the standby promoted',
      `${acknowledged} requests acknowledged (${created.length} creates, ${completed.size} completions); lost ${lost} creates and ${completionsLost} completions, doubled ${doubled!.n} (completed without exactly one credit ${creditedTwice!.n}); creates succeed again ${recoverySeconds.toFixed(1)} s after the kill (${((firstOk.at - promotedAt) / 1000).toFixed(1)} s after the promotion); ledger ${ledger.ok ? 'ok' : 'NOT ok'}`,
      {
        'while down': `${down.length} requests, ${down.filter((s) => s.answer.status === 503).length} × 503, ${down.filter((s) => s.answer.status === 0).length} cut, p99 answer ${Math.round(
          percentile(
            down.map((s) => s.answer.ms),
            99,
          ),
        )} ms`,
        'creates retried with their Idempotency-Key': `${unanswered.length}: ${retriedCreated} created now, ${retriedExisting} had been created (PAY_003)`,
        'other answers': seen
          .filter((s) => s.answer.status !== 200 && s.answer.status !== 503 && s.answer.status !== 0)
          .slice(0, 5)
          .map((s) => `${s.what} ${s.answer.status} ${JSON.stringify(s.answer.body)?.slice(0, 100)}`)
          .join(' | '),
      },
    );
    failed = true;
    expect(lost).toBe(0);
    expect(completionsLost).toBe(0);
    expect(doubled!.n).toBe(0);
    expect(creditedTwice!.n).toBe(0);
    expect(ledger.ok).toBe(true);
    expect(created.length).toBeGreaterThan(20);
    expect(seen.filter((s) => s.answer.status >= 500 && s.answer.status !== 503)).toEqual([]);
    failed = false;
  });
});

if (!('bin' in found)) console.log(`failover scenario skipped: ${found.skip}`);
