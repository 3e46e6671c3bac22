import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import { ADMIN_TOKEN, adminOk, startTestService, testCard, uniqueExtId, type TestService } from './helpers.js';

// The CLI runs as a real child process against the service listening on a real port, the way an
// operator uses it; the child must be asynchronous because the service lives in this process.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PUBLIC_BASE_URL = 'http://kassir.test';

let service: TestService;
let url: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function kassir(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ADMIN_TOKEN, KASSIR_URL: url, ...env };
  for (const [key, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[key];
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: childEnv, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed and returns its stdout. */
async function ok(args: string[]): Promise<string> {
  const run = await kassir(args);
  if (run.code !== 0) throw new Error(`kassir ${args.join(' ')} → exit ${run.code}\n${run.stderr}${run.stdout}`);
  return run.stdout;
}

/** The value of `key:` in a readable key: value block. */
function field(stdout: string, key: string): string {
  const match = new RegExp(`^${key.replace('.', '\\.')}:\\s+(\\S.*)$`, 'm').exec(stdout);
  if (!match) throw new Error(`no "${key}:" line in\n${stdout}`);
  return match[1]!.trim();
}

/** The secret printed under a "shown once, store it now" heading. */
function storedSecret(stdout: string, prefix: string): string {
  expect(stdout).toMatch(/shown once, store it now/);
  const match = new RegExp(`^  (${prefix}[A-Za-z0-9_-]+)$`, 'm').exec(stdout);
  if (!match) throw new Error(`no ${prefix} secret in\n${stdout}`);
  return match[1]!;
}

/** A signed merchant request over real HTTP; the signature covers PUBLIC_BASE_URL + path. */
async function signedFetch(creds: { apiKey: string; secretKey: string }, method: string, path: string, body?: unknown) {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const res = await fetch(url + path, {
    method,
    headers: {
      'x-identity': creds.apiKey,
      'x-signature': signRequest(creds.secretKey, method, PUBLIC_BASE_URL + path, raw),
      ...(raw ? { 'content-type': 'application/json' } : {}),
    },
    body: raw || undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
  const address = service.app.server.address() as AddressInfo;
  url = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => service?.close());

describe('kassir CLI against a running service', { timeout: 120_000 }, () => {
  const shop = `CLI Shop ${Date.now()}`;
  const card = testCard();
  let merchantId: string;
  let secretKey: string;
  let terminalId: string;
  let apiKey: string;
  let executorId: string;
  let requisiteId: string;
  let paymentId: string;

  it('merchant create prints the merchant and its secret key once, with a store-it-now line', async () => {
    const out = await ok(['merchant', 'create', '--name', shop]);
    expect(field(out, 'name')).toBe(shop);
    merchantId = field(out, 'id');
    expect(merchantId).toMatch(/^[0-9a-f-]{36}$/);
    secretKey = storedSecret(out, 'sk_');
    // The key is printed once, apart from the block, never as a `secret_key:` field.
    expect(out).not.toMatch(/^secret_key:/m);
  });

  it('terminal create sends the rates as JSON numbers and prints the API key once', async () => {
    const out = await ok(['terminal', 'create', '--merchant', merchantId, '--name', 'Web', '--currency', 'rub', '--payin-rate', '2.5', '--payout-rate', '1.5', '--withdrawal-fee', '1']);
    terminalId = field(out, 'id');
    expect(field(out, 'payment_currency')).toBe('RUB');
    apiKey = storedSecret(out, 'tk_');
    const stored = await adminOk(service.app, 'GET', `/terminals/${terminalId}`);
    expect(stored).toMatchObject({ name: 'Web', merchant_id: merchantId, payin_rate: 2.5, payout_rate: 1.5, withdrawal_fee: 1, is_active: true });
  });

  it('rate set stores the rate, rate list shows it', async () => {
    const out = await ok(['rate', 'set', 'rub', '95.5']);
    expect(field(out, 'currency')).toBe('RUB');
    expect(field(out, 'rate')).toBe('95.5');
    const { rates } = await adminOk<{ rates: { currency: string; rate: number }[] }>(service.app, 'GET', '/rates');
    expect(rates).toContainEqual(expect.objectContaining({ currency: 'RUB', rate: 95.5 }));
    expect(await ok(['rate', 'list'])).toMatch(/^RUB\s+95\.5\s/m);
  });

  it('executor create prints its token once; requisite add creates a card requisite', async () => {
    const out = await ok(['executor', 'create', '--name', 'CLI Trader']);
    executorId = field(out, 'id');
    storedSecret(out, 'ex_');
    const req = await ok([
      'requisite', 'add', '--executor', executorId, '--type', 'card', '--value', card, '--bank', 'sberbank', '--holder', 'Ivan C.',
      '--currency', 'RUB', '--country', 'RU', '--methods', 'card', '--min', '100', '--max', '50000',
    ]);
    requisiteId = field(req, 'id');
    expect(field(req, 'methods')).toBe('CARD');
    const { requisites } = await adminOk<{ requisites: Record<string, unknown>[] }>(service.app, 'GET', `/executors/${executorId}`);
    expect(requisites).toEqual([expect.objectContaining({ id: requisiteId, min_amount: 100, max_amount: 50000, bank: 'sberbank', holder: 'Ivan C.' })]);
  });

  it('list commands print aligned tables holding the created objects', async () => {
    const merchants = await ok(['merchant', 'list']);
    expect(merchants.split('\n')[0]).toMatch(/^ID\s+NAME\s+TERMINALS\s+CREATED_AT$/);
    expect(merchants).toContain(shop);
    expect(await ok(['terminal', 'list', '--merchant', merchantId])).toMatch(new RegExp(`^${terminalId}\\s+Web\\s+RUB\\s+true\\s`, 'm'));
    expect(await ok(['executor', 'list'])).toMatch(new RegExp(`^${executorId}\\s+CLI Trader\\s+true\\s+1\\s`, 'm'));
    const requisites = await ok(['requisite', 'list', '--executor', executorId]);
    expect(requisites).toContain(requisiteId);
    expect(requisites).not.toContain(card); // list views mask card numbers
    expect(await ok(['bank', 'list'])).toMatch(/^sberbank\s+/m);
  });

  it('--json prints the raw answer', async () => {
    const shown = JSON.parse(await ok(['--json', 'merchant', 'show', merchantId]));
    expect(shown).toMatchObject({ id: merchantId, name: shop, terminals: [{ id: terminalId, payin_rate: 2.5 }] });
    const listed = JSON.parse(await ok(['requisite', 'list', '--json']));
    expect(listed.requisites.map((r: { id: string }) => r.id)).toContain(requisiteId);
  });

  it('terminal adjust sends signed amounts; update changes settings', async () => {
    expect(field(await ok(['terminal', 'adjust', terminalId, '--amount', '10.25', '--reason', 'opening credit']), 'balance')).toBe('10.25');
    expect(field(await ok(['terminal', 'adjust', terminalId, '--amount', '-0.25', '--reason', 'correction']), 'balance')).toBe('10');
    const updated = await ok(['terminal', 'update', terminalId, '--payin-rate', '3', '--name', 'Web shop']);
    expect(field(updated, 'payin_rate')).toBe('3');
    expect(field(updated, 'name')).toBe('Web shop');
    expect(await adminOk(service.app, 'GET', `/terminals/${terminalId}`)).toMatchObject({ balance: 10, payin_rate: 3, name: 'Web shop' });
  });

  it("an invalid currency prints the API's error on stderr and exits 1", async () => {
    const run = await kassir(['terminal', 'create', '--merchant', merchantId, '--name', 'Bad', '--currency', 'XYZ']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error VALIDATION: currency must be one of: RUB, KZT, AZN, TJS/m);
    expect(run.stdout).toBe('');
  });

  it('a number that is not a decimal is refused before any request', async () => {
    for (const garbage of ['12abc', '1e3', '', '0x10', '-5']) {
      const run = await kassir(['rate', 'set', 'RUB', garbage]);
      expect(run.code, garbage).toBe(1);
      expect(run.stderr, garbage).toMatch(/is not a decimal number/);
    }
    const { rates } = await adminOk<{ rates: { currency: string; rate: number }[] }>(service.app, 'GET', '/rates');
    expect(rates.find((r) => r.currency === 'RUB')?.rate).toBe(95.5);
  });

  it('a wrong token exits 1 with the AUTH error; a missing one says where to get it', async () => {
    const wrong = await kassir(['merchant', 'list', '--token', 'not-the-token']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^error AUTH_002: /m);

    const missing = await kassir(['merchant', 'list'], { ADMIN_TOKEN: undefined });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/ADMIN_TOKEN/);
    expect(missing.stderr).toMatch(/printed|prints the token once/);
  });

  it('an unreachable URL exits 1 with a friendly message', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const dead = `http://127.0.0.1:${port}`;
    const run = await kassir(['merchant', 'list'], { KASSIR_URL: dead });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`cannot reach Kassir at ${dead}: is it running? (npm start)`);
  });

  it('end to end: the CLI-made credentials create a signed payment over real HTTP and get the requisite', async () => {
    const extId = uniqueExtId('cli');
    const { status, body } = await signedFetch({ apiKey, secretKey }, 'POST', '/v1/payments', { ext_id: extId, amount: 1500, currency: 'RUB', method: 'CARD' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      ext_id: extId, status: 'PENDING', rate: 95.5, payin_rate: 3, terminal_id: terminalId, terminal_name: 'Web shop',
      requisites: { type: 'card', value: card, bank: 'sberbank', holder: 'Ivan C.' },
    });
    paymentId = body.id;
  });

  it('payment list, show and cancel work on that payment', async () => {
    const listed = await ok(['payment', 'list', '--merchant', merchantId, '--status', 'PENDING']);
    expect(listed).toMatch(new RegExp(`^${paymentId}\\s+cli-\\S+\\s+PENDING\\s+1500\\s+RUB\\s+CARD\\s`, 'm'));
    expect(listed).toMatch(/^1-1 of 1$/m);
    expect(field(await ok(['payment', 'show', paymentId]), 'requisites.value')).toBe(card);
    expect(field(await ok(['payment', 'cancel', paymentId]), 'status')).toBe('CANCELLED');

    const again = await kassir(['payment', 'cancel', paymentId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error PAY_008: .*\n {2}data: \{"status":"CANCELLED"\}/m);
  });

  it('requisite update changes limits and switches it off; --max none lifts the limit', async () => {
    const out = await ok(['requisite', 'update', requisiteId, '--min', '200', '--max', 'none', '--active', 'false']);
    expect(field(out, 'max_amount')).toBe('-');
    const stored = await adminOk(service.app, 'GET', `/requisites/${requisiteId}`);
    expect(stored).toMatchObject({ min_amount: 200, max_amount: null, is_active: false });
  });

  it('rotate-secret without grace retires the old secret at once', async () => {
    const newSecret = storedSecret(await ok(['merchant', 'rotate-secret', merchantId]), 'sk_');
    expect(newSecret).not.toBe(secretKey);
    const old = await signedFetch({ apiKey, secretKey }, 'GET', `/v1/payments/${paymentId}`);
    expect(old.status).toBe(401);
    const fresh = await signedFetch({ apiKey, secretKey: newSecret }, 'GET', `/v1/payments/${paymentId}`);
    expect(fresh).toMatchObject({ status: 200, body: { id: paymentId, status: 'CANCELLED' } });
    secretKey = newSecret;
  });

  it('terminal update --active false makes the merchant API refuse the terminal; an empty update is refused', async () => {
    expect(field(await ok(['terminal', 'update', terminalId, '--active', 'false']), 'is_active')).toBe('false');
    const refused = await signedFetch({ apiKey, secretKey }, 'POST', '/v1/payments', { ext_id: uniqueExtId('cli'), amount: 1500, currency: 'RUB', method: 'CARD' });
    expect(refused).toMatchObject({ status: 403, body: { error: 'AUTH_003' } });
    const run = await kassir(['terminal', 'update', terminalId]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/nothing to update/);
  });
});
