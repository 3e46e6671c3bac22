import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';
import { testCard } from './helpers.js';

// Issue 39, item 1: the one production install path, run exactly as docs/operations.md and the
// Dockerfile run it: `npm run build` on a checkout, `npm pack`, the packed release unpacked and
// installed with its runtime dependencies only (scripts/install-production.sh: `npm ci
// --omit=dev` with the project's lockfile), then `node dist/main.js` started on it, a signed
// payment created through it, and SIGTERM ending it with exit code 0. The checkout is a copy in a
// temporary folder, so that the build never rewrites the dist/ other test files may be using. npm
// prefers its cache (--prefer-offline): a machine that has run `npm ci` once has every package.
// Two to ten minutes, by how busy the machine is: the build, and the install unpacking some 300 packages.

const ROOT = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'kassir-production-'));
const checkout = join(work, 'checkout');
const app = join(work, 'app');
const children: ChildProcess[] = [];
let database: { admin: string; name: string } | undefined;

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (database) {
    const client = new pg.Client({ connectionString: database.admin });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`);
    await client.end();
  }
  rmSync(work, { recursive: true, force: true });
});

/** Runs a command to its end; resolves with what it printed (stdout, then stderr), fails with both. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 600_000): Promise<{ stdout: string; all: string }> {
  return new Promise((done, fail) =>
    execFile(command, args, { cwd, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? fail(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`)) : done({ stdout, all: stdout + stderr }),
    ),
  );
}

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, suffix);
    return path.endsWith(suffix) ? [path] : [];
  });
}

/** The npm packages a built file imports: import/export statements and dynamic import() of bare names. */
function importedPackages(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1]!);
  const names = new Set<string>();
  for (const specifier of specifiers) {
    if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!)) continue;
    names.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
  }
  return [...names];
}

describe('the production install path', () => {
  it('build → npm pack → npm ci --omit=dev → node dist/main.js serves a signed create and stops on SIGTERM with 0', async () => {
    // A checkout of what the build reads (node_modules shared: it holds the dev tools).
    for (const entry of ['src', 'web', 'scripts', 'bin', 'package.json', 'package-lock.json', 'tsconfig.json']) {
      cpSync(join(ROOT, entry), join(checkout, entry), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
    await run('npm', ['run', 'build'], checkout);

    // What runs needs only `dependencies`: every package a built file imports is one of them.
    const pkg = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const serverFiles = [
      ...filesUnder(join(checkout, 'dist'), '.js').filter((file) => !file.includes(`${join('dist', 'console')}`)),
      join(checkout, 'bin', 'kassir.js'),
    ];
    const imported = new Set(serverFiles.flatMap((file) => importedPackages(readFileSync(file, 'utf8'))));
    expect(imported.size).toBeGreaterThan(10);
    expect([...imported].filter((name) => !(name in pkg.dependencies)).sort()).toEqual([]);

    // The packed release holds the built service and console, not the sources.
    // stdout holds the prepare script's lines (it builds nothing: dist/ is up to date), then the JSON.
    const packed = (await run('npm', ['pack', '--json', '--pack-destination', work], checkout)).stdout;
    expect(packed).toContain('dist/ is up to date with the sources: not building');
    const manifest = JSON.parse(packed.slice(packed.search(/^\[/m))) as { filename: string; files: { path: string }[] }[];
    const paths = manifest[0]!.files.map((file) => file.path);
    expect(paths).toEqual(expect.arrayContaining(['dist/main.js', 'dist/cli.js', 'dist/console/index.html', 'bin/kassir.js', 'scripts/build-stamp.mjs']));
    expect(paths.some((path) => path.startsWith('dist/db/migrations/') && path.endsWith('.sql'))).toBe(true);
    expect(paths.filter((path) => path.startsWith('src/') || path.startsWith('web/') || path.startsWith('test/') || path.endsWith('.test.js'))).toEqual([]);

    // The install the Dockerfile's runtime stage runs.
    const installed = await run(
      'sh',
      [join(ROOT, 'scripts', 'install-production.sh'), join(work, manifest[0]!.filename), join(ROOT, 'package-lock.json'), app],
      work,
      {
        KASSIR_NPM_FLAGS: '--prefer-offline',
      },
    );
    expect(installed.all).toContain('a built release (dist/ without sources): not building');
    // None of the packages only dev dependencies need (the lockfile's "dev": true) is installed.
    // (typescript is "devOptional": an optional peer of a runtime package, so npm keeps it.)
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => entry.dev === true && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path))
      .map(([path]) => path.slice('node_modules/'.length));
    expect(devOnly).toEqual(expect.arrayContaining(['vite', 'vitest', 'tsx', '@biomejs/biome', 'react']));
    expect(devOnly.filter((name) => existsSync(join(app, 'node_modules', name)))).toEqual([]);

    // An empty database: the release applies its own migrations.
    const adminUrl = inject('adminDatabaseUrl');
    const name = `kassir_prod_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    database = { admin: adminUrl, name };
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const token = `adm_${randomBytes(16).toString('hex')}`;
    const env = {
      ...process.env,
      DATABASE_URL: url.toString(),
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: base,
      ADMIN_TOKEN: token,
      KASSIR_MASTER_KEY: randomBytes(32).toString('base64'),
      KASSIR_DATA_DIR: join(work, 'data'),
      LOG_LEVEL: 'warn',
    };
    const service = spawn(process.execPath, ['dist/main.js'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(service);
    let output = '';
    service.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    service.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    const exited = new Promise<number | null>((done) => service.once('exit', (code) => done(code)));

    const deadline = Date.now() + 120_000;
    for (;;) {
      const ready = await fetch(`${base}/readyz`).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ready) break;
      if (service.exitCode !== null || Date.now() > deadline) throw new Error(`the installed service never became ready:\n${output}`);
      await new Promise((wait) => setTimeout(wait, 250));
    }

    // The operator CLI from the installed release (the bin), then the API over HTTP.
    const cliEnv = { KASSIR_URL: base, ADMIN_TOKEN: token };
    expect((await run(process.execPath, ['bin/kassir.js', 'rate', 'set', 'RUB', '95.5'], app, cliEnv, 30_000)).stdout).toMatch(/95\.5/);
    const adminCall = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = (await res.json()) as Record<string, any>;
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const merchant = await adminCall('POST', '/merchants', { name: 'Production shop' });
    const terminal = await adminCall('POST', `/merchants/${merchant.id}/terminals`, {
      name: 'Main',
      currency: 'RUB',
      payin_rate: 2.5,
      payout_rate: 1.5,
      withdrawal_fee: 1,
    });
    const executor = await adminCall('POST', '/executors', { name: 'Trader' });
    await adminCall('POST', `/executors/${executor.id}/adjustments`, { amount: 1000, reason: 'deposit' });
    await adminCall('POST', `/executors/${executor.id}/requisites`, {
      type: 'card',
      value: testCard(),
      bank: 'sberbank',
      holder: 'Ivan I.',
      currency: 'RUB',
      country: 'RU',
      methods: ['CARD'],
      min_amount: 0,
    });

    const body = JSON.stringify({ ext_id: `prod-${randomBytes(4).toString('hex')}`, amount: 1500, method: 'CARD', currency: 'RUB' });
    const created = await fetch(`${base}/v1/payments`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-identity': terminal.api_key,
        'x-signature': signRequest(merchant.secret_key, 'POST', `${base}/v1/payments`, body),
      },
      body,
    });
    const payment = (await created.json()) as Record<string, any>;
    expect(created.status, JSON.stringify(payment)).toBeLessThan(300);
    expect(payment).toMatchObject({ status: 'PENDING', amount: 1500 });
    // The built console is served from the release.
    const consolePage = await fetch(`${base}/console`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toMatch(/<div id="root">|<script/);

    service.kill('SIGTERM');
    expect(await exited, output).toBe(0);
  }, 1_500_000);
});
