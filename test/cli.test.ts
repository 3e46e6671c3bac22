import { execFile } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import {
  ADMIN_TOKEN,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  setRate,
  startTestService,
  type TestService,
  testCard,
  uniqueExtId,
} from './helpers.js';

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

  it('user create makes the first admin, prints the password once and says where to sign in; that person signs in', async () => {
    const out = await ok(['user', 'create', '--email', 'First.Admin@kassir.test']);
    expect(field(out, 'email')).toBe('first.admin@kassir.test');
    expect(field(out, 'role')).toBe('admin');
    expect(out).not.toMatch(/^password:/m);
    const password = out.match(/Password: shown once.*\n\n {2}(\S+)\n/)?.[1];
    expect(password).toMatch(/^\S{20}$/);
    expect(out).toMatch(/Next: sign in at .*\/console with first\.admin@kassir\.test/);
    const res = await service.app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: 'first.admin@kassir.test', password } });
    expect(res.statusCode, res.body).toBe(200);
    const bad = await kassir(['user', 'create', '--email', 'x@kassir.test', '--role', 'owner']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--role must be one of admin, support, finance/);
    expect(await ok(['user', 'list'])).toMatch(/first\.admin@kassir\.test\s+admin/);
  });

  it("device register prints the phone's token and signing secret once and the forwarders' URLs; list shows it", async () => {
    const executor = await createExecutor(service.app);
    const out = await ok(['device', 'register', '--executor', executor.id, '--name', 'Redmi 12']);
    expect(field(out, 'name')).toBe('Redmi 12');
    const token = storedSecret(out, 'dev_');
    expect(out).toContain(`${url}/device/v1/hooks/${token}/smsforwarder`);
    expect(out).not.toMatch(/^signing_secret:/m);
    expect(await ok(['device', 'list', '--executor', executor.id])).toMatch(/Redmi 12/);
  });

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
    const out = await ok([
      'terminal',
      'create',
      '--merchant',
      merchantId,
      '--name',
      'Web',
      '--currency',
      'rub',
      '--payin-rate',
      '2.5',
      '--payout-rate',
      '1.5',
      '--withdrawal-fee',
      '1',
    ]);
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

  it("rate source has a feed keep a rate with its options; rate show says what it waits for; rate markup sets a terminal's own markup", async () => {
    const out = await ok([
      'rate',
      'source',
      'kzt',
      'bybit_p2p',
      '--markup',
      '1.5',
      '--refresh',
      '10',
      '--pay-methods',
      '75, 382',
      '--amount',
      '5000',
      '--ranks',
      '2-8',
      '--base-url',
      'http://127.0.0.1:9',
      '--max-jump',
      '4',
    ]);
    expect(field(out, 'source')).toBe('bybit_p2p');
    expect(out).toContain('waiting for the first fetch');
    const { rates } = await adminOk<{ rates: Record<string, unknown>[] }>(service.app, 'GET', '/rates');
    expect(rates.find((r) => r.currency === 'KZT')).toMatchObject({
      source: 'bybit_p2p',
      markup_percent: 1.5,
      refresh_seconds: 10,
      max_jump_percent: 4,
      rate: null,
      stale: true,
      options: { base_url: 'http://127.0.0.1:9', pay_methods: ['75', '382'], amount: 5000, ranks: [2, 8] },
    });
    expect(await ok(['rate', 'show', 'KZT'])).toMatch(/waiting for the first fetch[\s\S]*Refreshes \(last 24 h/);
    expect(await ok(['rate', 'list'])).toMatch(/^KZT\s+\S+\s+bybit_p2p\s+1\.5\s+waiting/m);
    const refused = await kassir(['rate', 'source', 'KZT', 'rapira']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('does not quote USDT in KZT');

    const shop = await createMerchant(service.app);
    const markup = await ok(['rate', 'markup', 'RUB', '2', '--terminal', shop.terminalId]);
    expect(field(markup, 'mode')).toBe('markup');
    expect(await adminOk(service.app, 'GET', `/terminals/${shop.terminalId}/rates`)).toMatchObject({
      effective: expect.arrayContaining([expect.objectContaining({ currency: 'RUB', rate: 97.41, source: null })]),
    });
  });

  it('executor create prints its token once', async () => {
    const out = await ok(['executor', 'create', '--name', 'CLI Trader']);
    executorId = field(out, 'id');
    storedSecret(out, 'ex_');
  });

  it('executor adjust funds the deposit, statement lists the posting, update sets the credit line', async () => {
    expect(field(await ok(['executor', 'adjust', executorId, '--amount', '500', '--reason', 'opening deposit']), 'balance')).toBe('500');
    const statement = await ok(['executor', 'statement', executorId]);
    expect(statement).toMatch(/^available 500 USDT, frozen 0 USDT$/m);
    expect(statement).toMatch(/\sexecutor_adjustment\s+available\s+500\s+500\s+.*opening deposit/);
    expect(field(await ok(['executor', 'update', executorId, '--credit-limit', '50', '--payin-reward', '1.5']), 'credit_limit')).toBe('50');
  });

  it("executor withdrawals lists executors' withdrawals, complete-withdrawal and fail-withdrawal settle them, deposits shows the (absent) address", async () => {
    const e = await createExecutor(service.app, 'CLI Withdrawer', { deposit: 30 });
    const withdraw = (amount: number) =>
      service.app.inject({
        method: 'POST',
        url: '/executor/v1/withdrawals',
        headers: { authorization: `Bearer ${e.token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }),
      });
    const first = (await withdraw(10)).json().id as string;
    const second = (await withdraw(5)).json().id as string;
    const listed = await ok(['executor', 'withdrawals', '--executor', e.id]);
    expect(listed).toMatch(new RegExp(`^${first}\\s+${e.id}\\s+10\\s+TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t\\s+pending\\s+manual`, 'm'));
    expect(listed).toMatch(new RegExp(`^${second}\\s`, 'm'));
    const hash = 'ab'.repeat(32);
    expect(field(await ok(['executor', 'complete-withdrawal', first, '--tx-hash', hash]), 'status')).toBe('completed');
    expect(field(await ok(['executor', 'fail-withdrawal', second, '--reason', 'wrong address']), 'status')).toBe('failed');
    expect(await ok(['executor', 'withdrawals', '--executor', e.id, '--status', 'completed'])).toMatch(new RegExp(`^${first}\\s.*${hash}`, 'm'));
    const statement = await ok(['executor', 'statement', e.id]);
    expect(statement).toMatch(/^available 20 USDT, frozen 0 USDT$/m);
    expect(await ok(['executor', 'deposits', e.id])).toMatch(/^deposit address: \(none: KASSIR_TRON_DEPOSIT_XPUB is not set/m);
  });

  it('requisite add creates a card requisite', async () => {
    const req = await ok([
      'requisite',
      'add',
      '--executor',
      executorId,
      '--type',
      'card',
      '--value',
      card,
      '--bank',
      'sberbank',
      '--holder',
      'Ivan C.',
      '--currency',
      'RUB',
      '--country',
      'RU',
      '--methods',
      'card',
      '--min',
      '100',
      '--max',
      '50000',
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
    expect(await ok(['executor', 'list'])).toMatch(new RegExp(`^${executorId}\\s+CLI Trader\\s+true\\s+false\\s+0\\s+0\\.5\\s+1\\s+500\\s+0\\s`, 'm'));
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

  it('terminal adjust sends signed amounts', async () => {
    expect(field(await ok(['terminal', 'adjust', terminalId, '--amount', '10.25', '--reason', 'opening credit']), 'balance')).toBe('10.25');
    expect(field(await ok(['terminal', 'adjust', terminalId, '--amount', '-0.25', '--reason', 'correction']), 'balance')).toBe('10');
    expect(await adminOk(service.app, 'GET', `/terminals/${terminalId}`)).toMatchObject({ balance: 10 });
  });

  it('terminal update changes settings', async () => {
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

  it('a wrong token exits 1 with the AUTH error', async () => {
    const wrong = await kassir(['merchant', 'list', '--token', 'not-the-token']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^error AUTH_002: /m);
  });

  it('a missing token exits 1 saying where to get it', async () => {
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
      ext_id: extId,
      status: 'PENDING',
      rate: 95.5,
      payin_rate: 3,
      terminal_id: terminalId,
      terminal_name: 'Web shop',
      requisites: { type: 'card', value: card, bank: 'sberbank', holder: 'Ivan C.' },
    });
    paymentId = body.id;
  });

  it('payment list, show and cancel work on that payment', async () => {
    const listed = await ok(['payment', 'list', '--merchant', merchantId, '--status', 'PENDING']);
    expect(listed).toMatch(new RegExp(`^${paymentId}\\s+cli-\\S+\\s+PENDING\\s+1500\\s+RUB\\s+CARD\\s`, 'm'));
    expect(listed).toMatch(/^1-1 of 1$/m);
    expect(field(await ok(['payment', 'show', paymentId]), 'requisites.value')).toBe(card);
    expect(field(await ok(['payment', 'cancel', paymentId, '--reason', 'the shop asked']), 'status')).toBe('CANCELLED');
    expect(field(await ok(['payment', 'show', paymentId]), 'cancel_note')).toBe('the shop asked');

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

  it('requisite update sets and removes hand-out limits', async () => {
    const out = await ok(['requisite', 'update', requisiteId, '--daily-turnover-limit', '50000', '--monthly-count-limit', '300', '--daily-count-limit', '20']);
    expect(field(out, 'daily_turnover_limit')).toBe('50000');
    expect(field(out, 'monthly_count_limit')).toBe('300');
    expect(await adminOk(service.app, 'GET', `/requisites/${requisiteId}`)).toMatchObject({
      daily_turnover_limit: 50000,
      monthly_turnover_limit: null,
      daily_count_limit: 20,
      monthly_count_limit: 300,
    });
    await ok(['requisite', 'update', requisiteId, '--daily-count-limit', 'none']);
    expect(await adminOk(service.app, 'GET', `/requisites/${requisiteId}`)).toMatchObject({ daily_count_limit: null, monthly_count_limit: 300 });
    const bad = await kassir(['requisite', 'update', requisiteId, '--daily-count-limit', 'many']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/not a non-negative whole number/);
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

  it('terminal update --active false makes the merchant API refuse the terminal', async () => {
    expect(field(await ok(['terminal', 'update', terminalId, '--active', 'false']), 'is_active')).toBe('false');
    const refused = await signedFetch({ apiKey, secretKey }, 'POST', '/v1/payments', {
      ext_id: uniqueExtId('cli'),
      amount: 1500,
      currency: 'RUB',
      method: 'CARD',
    });
    expect(refused).toMatchObject({ status: 403, body: { error: 'AUTH_003' } });
  });

  it('terminal update with nothing to change is refused', async () => {
    const run = await kassir(['terminal', 'update', terminalId]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/nothing to update/);
  });
});

describe('kassir CLI: ledger, notifications, webhooks, executor tokens', { timeout: 120_000 }, () => {
  let executorId: string;
  let token: string;
  let requisiteId: string;
  let merchant: Awaited<ReturnType<typeof createMerchant>>;

  /** The executor's companion app reporting a transfer. */
  async function notify(amount: number, executorToken = token) {
    const res = await service.app.inject({
      method: 'POST',
      url: '/executor/v1/notifications',
      headers: { authorization: `Bearer ${executorToken}`, 'content-type': 'application/json' },
      payload: { requisite_id: requisiteId, amount, received_at: new Date().toISOString() },
    });
    return { status: res.statusCode, body: res.json() as Record<string, any> };
  }

  beforeAll(async () => {
    // KZT has a pool of its own in this file: the one requisite below takes every KZT payment.
    await setRate(service.app, 'KZT', 480);
    merchant = await createMerchant(service.app, { currency: 'KZT', payin_rate: 2 });
    executorId = (await createExecutor(service.app, 'CLI Notifier')).id;
    requisiteId = (await createRequisite(service.app, executorId, { currency: 'KZT', country: 'KZ', bank: 'kaspi' })).id;
  });

  it('executor update sets pause, priority, the unpaid streak and default limits', async () => {
    const out = await ok([
      'executor',
      'update',
      executorId,
      '--paused',
      'true',
      '--priority',
      '-3',
      '--disable-after-expired',
      '4',
      '--daily-turnover-limit',
      '100000.50',
      '--monthly-count-limit',
      '900',
    ]);
    expect(field(out, 'is_paused')).toBe('true');
    expect(field(out, 'priority')).toBe('-3');
    expect(field(out, 'score')).toBe('0.5');
    expect(field(out, 'score_figures.handed_out')).toBe('0');
    expect(await adminOk(service.app, 'GET', `/executors/${executorId}`)).toMatchObject({
      is_paused: true,
      priority: -3,
      disable_after_expired: 4,
      default_daily_turnover_limit: 100000.5,
      default_monthly_count_limit: 900,
      default_daily_count_limit: null,
    });
    await ok(['executor', 'update', executorId, '--paused', 'false', '--daily-turnover-limit', 'none', '--priority', '0']);
    expect(await adminOk(service.app, 'GET', `/executors/${executorId}`)).toMatchObject({ is_paused: false, priority: 0, default_daily_turnover_limit: null });
    expect(await ok(['executor', 'list'])).toMatch(/IS_PAUSED\s+PRIORITY\s+SCORE/);
  });

  it('executor rotate-token prints the new token once; the old one stops at once', async () => {
    const first = storedSecret(await ok(['executor', 'rotate-token', executorId]), 'ex_');
    const out = await ok(['executor', 'rotate-token', executorId]);
    expect(field(out, 'id')).toBe(executorId);
    expect(out).not.toMatch(/^token:/m);
    token = storedSecret(out, 'ex_');
    expect(token).not.toBe(first);
    expect((await notify(1, first)).status).toBe(401);
  });

  it('ledger check prints "ledger OK" and exits 0 on a healthy ledger', async () => {
    expect(await ok(['ledger', 'check'])).toBe('ledger OK\n');
  });

  it('ledger check --json gives the raw answer', async () => {
    expect(JSON.parse(await ok(['--json', 'ledger', 'check']))).toEqual({ ok: true, problems: [] });
  });

  let notificationId: string;
  let paymentId: string;

  it('notification list shows an unmatched notification; link completes the payment it was for', async () => {
    const reported = await notify(5000);
    expect(reported).toMatchObject({ status: 200, body: { matched: false, status: 'unmatched' } });
    notificationId = reported.body.notification_id;

    const listed = await ok(['notification', 'list', '--status', 'unmatched']);
    expect(listed.split('\n')[0]).toMatch(/^ID\s+STATUS\s+AMOUNT\s+REQUISITE_ID\s+PAYMENT_ID\s/);
    expect(listed).toMatch(new RegExp(`^${notificationId}\\s+unmatched\\s+5000\\s+${requisiteId}\\s+-\\s`, 'm'));
    expect(await ok(['notification', 'list', '--status', 'matched'])).not.toContain(notificationId);

    // The payer paid before the payment existed (or the app was early): the operator links them.
    const { status, body } = await createPayment(service.app, merchant, {
      ext_id: uniqueExtId('cli'),
      amount: 5000,
      currency: 'KZT',
      method: 'CARD',
      notify_url: 'http://127.0.0.1:9/kassir-hook',
    });
    expect(status, JSON.stringify(body)).toBe(200);
    paymentId = body.id;
    const linked = await ok(['notification', 'link', notificationId, '--payment', paymentId]);
    expect(field(linked, 'status')).toBe('matched');
    expect(field(linked, 'payment_id')).toBe(paymentId);
    expect(await adminOk(service.app, 'GET', `/payments/${paymentId}`)).toMatchObject({ status: 'COMPLETED' });
    expect(field(await ok(['notification', 'show', notificationId]), 'resolved_note')).toBe('linked by the operator');

    const again = await kassir(['notification', 'link', notificationId, '--payment', paymentId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error CONFLICT: /m);
    // The credit landed and the ledger still holds.
    expect(await ok(['ledger', 'check'])).toBe('ledger OK\n');
  });

  it('notification resolve sets one aside with a note', async () => {
    const reported = await notify(777);
    expect(reported.body.status).toBe('unmatched');
    const resolved = await ok(['notification', 'resolve', reported.body.notification_id, '--note', 'refunded to the payer']);
    expect(field(resolved, 'status')).toBe('resolved');
    expect(field(resolved, 'resolved_note')).toBe('refunded to the payer');
    expect(await ok(['notification', 'list', '--status', 'unmatched'])).not.toContain(reported.body.notification_id);
  });

  it('webhook list, show and resend: the completed payment has its event in the delivery log', async () => {
    const listed = await ok(['webhook', 'list', '--resource', paymentId]);
    expect(listed.split('\n')[0]).toMatch(/^ID\s+EVENT\s+RESOURCE_ID\s+STATUS\s+ATTEMPTS\s/);
    const match = new RegExp(`^(\\S+)\\s+payment\\.completed\\s+${paymentId}\\s+pending\\s+0\\s`, 'm').exec(listed);
    expect(match, listed).not.toBeNull();
    const eventId = match![1]!;
    expect(await ok(['webhook', 'list', '--status', 'delivered'])).not.toContain(eventId);

    const shown = await ok(['webhook', 'show', eventId]);
    expect(field(shown, 'event')).toBe('payment.completed');
    expect(field(shown, 'url')).toBe('http://127.0.0.1:9/kassir-hook');
    expect(shown).toMatch(/\nattempts:\n\(none\)\n$/);
    expect(JSON.parse(await ok(['--json', 'webhook', 'show', eventId]))).toMatchObject({
      id: eventId,
      event: 'payment.completed',
      payload: { id: paymentId, status: 'COMPLETED' },
      attempts: [],
    });

    expect(field(await ok(['webhook', 'resend', eventId]), 'status')).toBe('pending');
    const bad = await kassir(['webhook', 'list', '--status', 'lost']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error VALIDATION: status must be one of pending, delivered, failed/m);
  });

  it('ledger check names each breach and exits 1 when the ledger is broken', async () => {
    const db = service.ctx.db;
    // Drift made in SQL (the CHECK still holds): the kept balance no longer equals the entries.
    await db.query(`UPDATE ledger_accounts SET balance = balance + 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    try {
      const run = await kassir(['ledger', 'check']);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        new RegExp(`^balance equals entries: terminal ${merchant.terminalId} terminal_available balance is \\S+ but its entries sum to \\S+$`, 'm'),
      );
      expect(run.stdout).not.toMatch(/ledger OK/);
      const json = await kassir(['--json', 'ledger', 'check']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, problems: [{ invariant: 'balance equals entries' }] });
    } finally {
      await db.query(`UPDATE ledger_accounts SET balance = balance - 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    }
    expect(await ok(['ledger', 'check'])).toBe('ledger OK\n');
  });
});

describe('kassir CLI: providers and terminal routes', { timeout: 120_000 }, () => {
  it('provider add (credentials sealed), list and update; terminal set-routes in every form, and routes', async () => {
    const added = await ok([
      'provider',
      'add',
      '--name',
      'Upstream',
      '--kind',
      'kassir',
      '--base-url',
      'http://127.0.0.1:9/',
      '--api-key',
      'tk_upstream_key',
      '--secret-key',
      'sk_upstream_secret',
    ]);
    const providerId = field(added, 'id');
    expect(field(added, 'callback_url')).toBe(`${PUBLIC_BASE_URL}/callbacks/providers/${providerId}`);
    expect(added).toMatch(new RegExp(`^Next: kassir terminal set-routes <terminal> --route provider:${providerId} --route executors$`, 'm'));
    expect(added).not.toContain('sk_upstream_secret');
    const { rows } = await service.ctx.db.query('SELECT api_key_enc, secret_key_enc FROM providers WHERE id = $1', [providerId]);
    expect(rows[0].api_key_enc).not.toContain('tk_upstream_key');
    expect(rows[0].secret_key_enc).not.toContain('sk_upstream_secret');

    const listed = await ok(['provider', 'list']);
    expect(listed.split('\n')[0]).toMatch(/^ID\s+NAME\s+KIND\s+BASE_URL\s+IS_ACTIVE\s+FAILURES\s+OPEN_UNTIL\s+CALLBACK_URL$/);
    expect(listed).toMatch(new RegExp(`^${providerId}\\s+Upstream\\s+kassir\\s+http://127\\.0\\.0\\.1:9\\s+true\\s+0\\s+-\\s`, 'm'));
    expect(field(await ok(['provider', 'update', providerId, '--active', 'false', '--name', 'Upstream off']), 'is_active')).toBe('false');
    const { providers } = await adminOk<{ providers: Record<string, unknown>[] }>(service.app, 'GET', '/providers');
    expect(providers).toContainEqual(expect.objectContaining({ id: providerId, name: 'Upstream off', is_active: false }));
    expect((await kassir(['provider', 'update', providerId])).stderr).toMatch(/nothing to update/);

    const terminal = (await createMerchant(service.app)).terminalId;
    const set = await ok(['terminal', 'set-routes', terminal, '--route', `provider:${providerId}:sbp,card`, '--route', 'executors']);
    expect(set).toMatch(new RegExp(`^1\\s+provider ${providerId}\\s+-\\s+SBP,CARD$`, 'm'));
    expect(await adminOk(service.app, 'GET', `/terminals/${terminal}/routes`)).toEqual([
      { provider_id: providerId, methods: ['SBP', 'CARD'] },
      { executors: true },
    ]);
    const shown = await ok(['terminal', 'routes', terminal]);
    expect(shown.split('\n')[0]).toMatch(/^POSITION\s+ROUTE\s+CURRENCIES\s+METHODS$/);
    expect(shown).toMatch(/^2\s+executors\s+-\s+-$/m);

    const json = [{ executors: true, currencies: ['RUB'] }, { provider_id: providerId }];
    expect(JSON.parse(await ok(['--json', 'terminal', 'set-routes', terminal, '--routes-json', JSON.stringify(json)]))).toEqual(json);
    expect(await adminOk(service.app, 'GET', `/terminals/${terminal}/routes`)).toEqual(json);

    const unknown = await kassir(['terminal', 'set-routes', terminal, '--route', 'provider:00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error VALIDATION: route 1: provider 00000000-0000-4000-8000-000000000000 not found/m);
    const garbage = await kassir(['terminal', 'set-routes', terminal, '--route', 'somewhere']);
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/is not a route/);
    const none = await kassir(['terminal', 'set-routes', terminal]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/give the routes one way/);
    expect(await adminOk(service.app, 'GET', `/terminals/${terminal}/routes`)).toEqual(json);

    expect(await ok(['terminal', 'set-routes', terminal, '--clear'])).toMatch(/^\(no routes: the terminal uses its executors only\)$/m);
    expect(await adminOk(service.app, 'GET', `/terminals/${terminal}/routes`)).toEqual([]);
  });
});

describe('kassir CLI: taught message forms', { timeout: 120_000 }, () => {
  it('parsers forms lists them; parsers export-forms prints the live ones as corpus lines, one section per bank', async () => {
    const sample = 'NORD 10:00 na 1234 prishlo 250,00 ot OLGA P.';
    const form = await adminOk<{ id: string }>(service.app, 'POST', '/parser-forms', {
      name: 'Nord SMS',
      bank: 'nord',
      currency: 'RUB',
      template: 'NORD {time} na {card} prishlo {amount} ot {payer}',
      sample,
    });
    expect(await ok(['parsers', 'forms'])).toMatch(new RegExp(`^${form.id}\\s+Nord SMS\\s+nord\\s+RUB\\s+draft\\s`, 'm'));
    expect(await ok(['parsers', 'export-forms'])).not.toContain('NORD');
    await adminOk(service.app, 'POST', `/parser-forms/${form.id}/versions/1/publish`);
    const exported = await ok(['parsers', 'export-forms']);
    expect(exported).toContain('# corpus/nord.tsv\n');
    expect(exported).toContain(['sms', '', '+', '250.00', 'RUB', 'card:1234', 'OLGA P.', '', sample].join('\t'));
  });
});

describe('kassir CLI: reports', { timeout: 120_000 }, () => {
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    // A completed pay-in of its own, so the report has a row however the file is run: cancelled,
    // disputed by the merchant and approved by the operator (whichever executor took it).
    await setRate(service.app, 'RUB', 95.5);
    const shop = await createMerchant(service.app, { payin_rate: 3 });
    await createRequisite(service.app, (await createExecutor(service.app, 'CLI Reporter')).id);
    const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 2345, currency: 'RUB', method: 'CARD' });
    expect(status, JSON.stringify(body)).toBe(200);
    await adminOk(service.app, 'POST', `/payments/${body.id}/cancel`);
    expect((await signedFetch(shop, 'POST', `/v1/payments/${body.id}/dispute`, {})).status).toBe(200);
    await adminOk(service.app, 'POST', `/payments/${body.id}/dispute/approve`, { amount: 2345 });
  });

  it('report merchants prints the API’s rows and totals as a table', async () => {
    const api = await adminOk<{ rows: Record<string, unknown>[]; totals: Record<string, unknown> }>(service.app, 'GET', `/reports/merchants?to=${today}`);
    expect(api.rows.length).toBeGreaterThan(0);
    const out = await ok(['report', 'merchants', '--to', today]);
    expect(out).toMatch(/^\d{4}-\d{2}-\d{2} \.\. \d{4}-\d{2}-\d{2} \(UTC\), USDT$/m);
    expect(out).toMatch(
      /^DAY\s+MERCHANT_ID\s+PAYINS\s+PAYIN_TURNOVER\s+PAYOUTS\s+PAYOUT_TURNOVER\s+TURNOVER\s+PAYIN_REWARDS\s+PAYOUT_CREDITS\s+REWARDS\s+REVENUE$/m,
    );
    for (const row of api.rows) {
      expect(out).toContain(`${row.day}  ${row.merchant_id}`);
      expect(out).toMatch(new RegExp(`^${row.day}\\s+${row.merchant_id}\\s+${row.payins}\\s+${String(row.payin_turnover).replace('.', '\\.')}\\s`, 'm'));
    }
    const total = out.split('\n').find((line) => line.startsWith('total'));
    expect(total?.split(/\s+/)).toEqual([
      'total',
      ...['payins', 'payin_turnover', 'payouts', 'payout_turnover', 'turnover', 'payin_rewards', 'payout_credits', 'rewards', 'revenue'].map((k) =>
        String(api.totals[k]),
      ),
    ]);
  });

  it('report executors --json gives the raw answer; a bad date is the API’s VALIDATION error, exit 1', async () => {
    const raw = JSON.parse(await ok(['--json', 'report', 'executors', '--from', today, '--to', today]));
    expect(raw).toEqual(await adminOk(service.app, 'GET', `/reports/executors?from=${today}&to=${today}`));
    const bad = await kassir(['report', 'executors', '--from', '2026-13-01']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/error VALIDATION: from must be a calendar date YYYY-MM-DD/);
  });
});
