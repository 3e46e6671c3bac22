import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';

// The runtime contract end to end: the real entry point on its own embedded PostgreSQL, as
// `npm start` runs it, configured only through the environment, stopped by SIGTERM.
let child: ChildProcess | undefined;
let dataDir: string | undefined;
afterAll(async () => {
  child?.kill('SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function waitForLine(proc: ChildProcess, pattern: RegExp, output: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    // The line may have come in a chunk an earlier wait already read.
    const early = output.join('').match(pattern);
    if (early) return resolve(early[0]);
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} in:\n${output.join('')}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = output.join('').match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
  });
}

describe('npm start', () => {
  it('starts on an embedded database, prints the operator token once, serves signed requests and stops on SIGTERM', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'kassir-start-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), PUBLIC_BASE_URL: base, KASSIR_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;
    delete env.ADMIN_TOKEN;
    const output: string[] = [];
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tokenLine = await waitForLine(child, /ADMIN_TOKEN=\S+/, output);
    const token = tokenLine.split('=')[1]!;
    // ...and how to make the first person who signs in to the console: a command that reaches
    // this service (on its non-default PORT) when pasted into a shell with nothing else set.
    const createLine = await waitForLine(child, /^.*npx kassir user create --email \S+ --role admin$/m, output);
    await waitForLine(child, /Kassir listening/, output);
    const cliEnv: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['PORT', 'HOST', 'KASSIR_URL', 'ADMIN_TOKEN', 'PUBLIC_BASE_URL']) delete cliEnv[name];
    const pasted = createLine.trim().replace('npx kassir', `${process.execPath} --import tsx src/cli.ts`);
    const created = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile('/bin/sh', ['-c', pasted], { env: cliEnv, timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(created, pasted).toMatchObject({ code: 0, stdout: expect.stringContaining('you@example.com') });
    const consolePage = await fetch(`${base}/console`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toMatch(/<div id="root">/);

    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const openapi = await (await fetch(`${base}/openapi.json`)).json();
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(['/v1/payments', '/v1/payments/{id}', '/v1/public/banks']));

    const adminCall = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${base}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return res.json();
    };
    await adminCall('PUT', '/rates/RUB', { rate: 92.4 });
    const merchant = await adminCall('POST', '/merchants', { name: 'Smoke shop' });
    const terminal = await adminCall('POST', `/merchants/${merchant.id}/terminals`, { name: 'Main', currency: 'RUB', payin_rate: 3 });
    const executor = await adminCall('POST', '/executors', { name: 'Trader' });
    await adminCall('POST', `/executors/${executor.id}/adjustments`, { amount: 500, reason: 'deposit' });
    await adminCall('POST', `/executors/${executor.id}/requisites`, {
      type: 'card',
      value: '4111 1111 1111 1111',
      bank: 'sberbank',
      holder: 'Ivan P.',
      currency: 'RUB',
      country: 'RU',
      methods: ['CARD'],
    });
    const body = JSON.stringify({ ext_id: 'smoke-1', amount: 1500 });
    const res = await fetch(`${base}/v1/payments`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-identity': terminal.api_key,
        'x-signature': signRequest(merchant.secret_key, 'POST', `${base}/v1/payments`, body),
      },
      body,
    });
    expect(res.status).toBe(200);
    expect((await res.json()).requisites).toMatchObject({ type: 'card', value: '4111111111111111' });

    // The request log masks the card number that went out in the response.
    expect(output.join('')).not.toContain('4111111111111111');

    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The embedded server is gone: its pid file was removed by a clean shutdown.
    await expect(readFile(join(dataDir, 'pg', 'postmaster.pid'))).rejects.toThrow();
    child = undefined;
  }, 120_000);
});
