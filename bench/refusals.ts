/**
 * What a refusal for overload costs the service (issue 38): `npx tsx bench/refusals.ts`, with
 * DATABASE_URL pointing at a PostgreSQL it may create a database on (the tests' one will do).
 *
 * The service runs in this process, as `npm start` runs it (shedding on, its log at info to a file),
 * with KASSIR_SHED_LOW_CONCURRENCY=1 and every connection of its pool held: one create is let in
 * and waits for the database for the whole run, so every other create is refused. A separate
 * autocannon process then sends creates shaped as the benchmark's (a JSON body of ~200 bytes, the
 * merchant's identity and signature headers) over REFUSALS_CONNECTIONS (50) connections for
 * REFUSALS_SECONDS (5), after a one-second warm-up. Printed: the refusals a second and this
 * process's CPU per refusal. On a shared machine the rate moves with the neighbours, the CPU per
 * refusal much less; run it under the benchmarks' lock all the same. REFUSALS_KEEP=1 keeps the
 * service's log (its path is printed).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { startService } from '../src/instance.js';
import { createLogger } from '../src/lib/logger.js';

const ROOT = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.REFUSALS_SECONDS || 5);
const CONNECTIONS = Number(process.env.REFUSALS_CONNECTIONS || 50);

interface CannonResult {
  requests: { total: number; average: number };
  non2xx: number;
  errors: number;
  statusCodeStats?: Record<string, { count: number }>;
}

/** autocannon in its own process (its CPU is not the service's), as JSON. */
function cannon(url: string, seconds: number): Promise<CannonResult> {
  const body = JSON.stringify({
    ext_id: `refusal-${randomBytes(8).toString('hex')}`,
    amount: 1500,
    currency: 'RUB',
    method: 'card',
    notify_url: 'http://127.0.0.1:9/hook',
    client_id: 'bench-client',
  });
  const args = [
    join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '--json',
    '-c',
    String(CONNECTIONS),
    '-d',
    String(seconds),
    '-m',
    'POST',
    '-H',
    'content-type=application/json',
    '-H',
    `x-identity=${randomBytes(16).toString('hex')}`,
    '-H',
    `x-signature=${randomBytes(32).toString('hex')}`,
    '-b',
    body,
    url,
  ];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolvePromise(JSON.parse(out) as CannonResult) : reject(new Error(`autocannon exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL must point at a PostgreSQL this script may create a database on');
  const name = `kassir_refusals_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const workDir = mkdtempSync(join(tmpdir(), 'kassir-refusals-'));
  const port = await freePort();
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    KASSIR_DATA_DIR: workDir,
    KASSIR_MASTER_KEY: randomBytes(32).toString('base64'),
    ADMIN_TOKEN: randomBytes(16).toString('hex'),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    KASSIR_WORKER: 'false',
    KASSIR_SHED: 'true',
    KASSIR_SHED_LOW_CONCURRENCY: '1',
  });
  const logFile = join(workDir, 'service.log');
  const service = await startService(config, createLogger('info', pino.destination({ dest: logFile, sync: false })), { listen: true });
  const held: pg.PoolClient[] = [];
  try {
    for (let i = 0; i < config.dbPoolSize; i++) held.push(await service.ctx.db.connect());
    // The one create let in: its merchant's key is looked up in the database, which it waits for.
    const base = `http://127.0.0.1:${port}`;
    const stuck = fetch(`${base}/v1/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-identity': 'k', 'x-signature': 's' },
      body: '{}',
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    await cannon(`${base}/v1/payments`, 1);
    // What the service uses idle (the pool probe, the loop's sampling) over the seconds autocannon
    // takes to start and stop, subtracted from the run's.
    const idleCpu = process.cpuUsage();
    const idleStarted = performance.now();
    await new Promise((r) => setTimeout(r, 1000));
    const idle = process.cpuUsage(idleCpu);
    const idleCores = (idle.user + idle.system) / 1000 / (performance.now() - idleStarted);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const result = await cannon(`${base}/v1/payments`, SECONDS);
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const refused = result.statusCodeStats?.['503']?.count ?? 0;
    const cpuMs = (used.user + used.system) / 1000 - idleCores * Math.max(0, wallMs - SECONDS * 1000);
    process.stdout.write(
      `refusals: ${refused} in ${SECONDS} s = ${(refused / SECONDS).toFixed(0)}/s over ${CONNECTIONS} connections ` +
        `(other answers ${result.requests.total - refused}, errors ${result.errors}); ` +
        `service CPU ${(cpuMs / SECONDS / 1000).toFixed(2)} cores (idle ${idleCores.toFixed(3)}), ${((cpuMs * 1000) / Math.max(refused, 1)).toFixed(1)} µs per refusal` +
        `${process.env.REFUSALS_KEEP === '1' ? `; log ${logFile}` : ''}\n`,
    );
    for (const client of held.splice(0)) client.release();
    await stuck;
  } finally {
    for (const client of held) client.release();
    await service.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    if (process.env.REFUSALS_KEEP !== '1') rmSync(workDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`refusals: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
