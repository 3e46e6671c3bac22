/*
 * Payouts: every field, filter and error code of the merchant endpoints (spec "Payout",
 * "POST /v1/payouts", "GET /v1/payouts…", "Errors"), the money (DESIGN.md decision 12, 14),
 * the executor and operator sides, webhooks (decision 9) and concurrency.
 *
 * Spec item → test (describe › it):
 *   Payout.id, ext_id, amount, currency RUB, method, requisites, holder_name, status pending,
 *     created_at; completed_at absent at creation      → create › "card without bank: exactly the Payout object"
 *   Payout.bank '' when omitted / the code when sent     → create › "card without bank…", "card with a bank…", "sbp…"
 *   requisites normalized (card spaces/dashes, phone +7)  → create › "card without bank…", "sbp: +7 / 8 9xx / 9xx forms"
 *   Luhn, sbp Russian mobile, sbp bank required, unknown
 *     bank, operator code, method ∉ {card,sbp}, missing
 *     fields, amount 0/neg/3dp/string/null, holder blank,
 *     ext_id empty/too long, notify_url invalid → PAY_002 → create › "PAY_002: …" (table) + "nothing reserved"
 *   malformed JSON / non-object body → PAY_002            → create › "malformed JSON…"
 *   PAY_003 duplicate ext_id, data.ext_id; per merchant   → create › "PAY_003…"
 *   notify_url private + WEBHOOK_ALLOW_PRIVATE=false       → create › "notify_url to a private address…"
 *   insufficient balance → PAY_002 data.available (D12)   → create › "insufficient balance…", "a reserve equal to the available balance…"
 *   no RUB rate → 503                                     → create › "no RUB rate…"
 *   reserve amount/rate×(1+payout_rate/100), exact        → money › "creation freezes…"
 *   completed debits the reserve, fee to fee revenue      → money › "operator complete…", "payout_rate 0…"
 *   failed / cancelled release the reserve                → money › "fail releases…", "cancel releases…"
 *   GET /v1/payouts/:id, /by-ext-id: completed_at null
 *     until completed, then ISO                           → get › "GET by id and by ext_id…"
 *   PAY_001 404 (unknown, other merchant's, not a uuid)   → get › "PAY_001…"
 *   GET /v1/payouts {payouts,total,limit,offset}, order   → list › "default page…"
 *   limit default 100, cap 1000, bad → PAY_002; offset    → list › "limit and offset…", "limit/offset errors…"
 *   status filter (five statuses, unknown → 400)          → list › "status filter…"
 *   from / to (inclusive, date-only, bad → PAY_002)       → list › "from/to…", "to = a created_at…", "bad dates…"
 *   total counts the filtered set; own payouts only       → list › "status filter…", "from/to…", "only the merchant's own…"
 *   executor list (masked available, own taken in full)   → executor › "list…"
 *   take → processing (seen by merchant)                  → executor › "list…"
 *   take race 2 and 10 executors → one 200, rest 409      → executor › "race…"
 *   complete: proof required (JSON/multipart w/o file →
 *     400 VALIDATION, non-image → PAY_010, wrong field →
 *     PAY_002), other executor → 409                      → executor › "complete…"
 *   fail {reason} releases; not processing → 409          → executor › "fail…", "not processing…"
 *   operator complete/fail/cancel from pending and
 *     processing, audit_log, 409 on finished              → operator › (one test each) + "finished…"
 *   GET /admin/v1/payouts?status, /admin/v1/payouts/:id   → operator › "admin list and view…"
 *   webhook payout.<status> per change, payload = GET,
 *     to notify_url; none without notify_url; delivery   → webhooks › (three tests)
 *   30 concurrent payouts over the balance                → concurrency › "30 concurrent…"
 */
import { randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../src/instance.js';
import { hmacSha1Base64 } from '../src/lib/crypto.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  startTestService,
  type TestService,
  TINY_PNG,
  testCard,
  testPhone,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

const D = Decimal.clone({ precision: 60 });
const RATE = '95.5';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PAYOUT_KEYS = ['amount', 'bank', 'created_at', 'currency', 'ext_id', 'holder_name', 'id', 'method', 'requisites', 'status'];

let service: TestService;
let another: RunningService;
let app: FastifyInstance;
let m: MerchantCredentials;
let other: MerchantCredentials;
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;

/** DESIGN.md decision 12, computed here independently of src: the reserve and its fee part. */
function expected(amount: Decimal.Value, payoutRate: Decimal.Value, rate: Decimal.Value = RATE) {
  const base = new D(amount).div(rate);
  const reserve = base.mul(new D(1).plus(new D(payoutRate).div(100))).toDecimalPlaces(6, Decimal.ROUND_HALF_UP);
  return { reserve, fee: reserve.minus(base.toDecimalPlaces(6, Decimal.ROUND_HALF_UP)) };
}

function payoutBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ext_id: uniqueExtId('po'), amount: 1234.56, method: 'card', requisites: testCard('4111'), holder_name: 'Ivan Petrov', ...overrides };
}

async function createPayout(creds: MerchantCredentials, overrides: Record<string, unknown> = {}, on: FastifyInstance = app) {
  const res = await signed(on, creds, 'POST', '/v1/payouts', payoutBody(overrides));
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

async function createdPayout(creds: MerchantCredentials, overrides: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await createPayout(creds, overrides);
  if (res.status !== 200) throw new Error(`payout not created: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function getPayout(creds: MerchantCredentials, id: string): Promise<Record<string, any>> {
  const res = await signed(app, creds, 'GET', `/v1/payouts/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The key's terminal as /v1/terminals shows it, checked against /v1/balance (one terminal each). */
async function balances(creds: MerchantCredentials): Promise<{ available: Decimal; frozen: Decimal }> {
  const terminals = (await signed(app, creds, 'GET', '/v1/terminals')).json().terminals as Array<Record<string, any>>;
  const t = terminals.find((x) => x.id === creds.terminalId)!;
  const total = (await signed(app, creds, 'GET', '/v1/balance')).json();
  expect(total).toEqual({ balance: t.balance, balance_frozen: t.balance_frozen, currency: 'USDT' });
  return { available: new D(String(t.balance)), frozen: new D(String(t.balance_frozen)) };
}

async function fund(creds: MerchantCredentials, amount: number): Promise<void> {
  await adminOk(app, 'POST', `/terminals/${creds.terminalId}/adjustments`, { amount, reason: 'test funds' });
}

async function expectLedgerOk(): Promise<void> {
  expect(await adminOk(app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
}

async function feeRevenue(): Promise<Decimal> {
  // System accounts keep no running balance (hot rows); their postings are the truth.
  const { rows } = await service.ctx.db.query<{ b: string }>(
    `SELECT coalesce(sum(e.amount), 0)::text AS b FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.kind = 'system_fee_revenue'`,
  );
  return new D(rows[0]!.b);
}

async function postings(refId: string): Promise<Array<{ tx: string; account: string; amount: string }>> {
  const { rows } = await service.ctx.db.query<{ tx: string; account: string; amount: string }>(
    `SELECT t.kind AS tx, a.kind AS account, e.amount::text AS amount
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id JOIN ledger_accounts a ON a.id = e.account_id
      WHERE t.ref_id = $1 ORDER BY t.created_at, t.kind, a.kind`,
    [refId],
  );
  return rows.map((r) => ({ ...r, amount: new D(r.amount).toFixed() }));
}

async function events(id: string): Promise<Array<{ event: string; payload: Record<string, any>; url: string }>> {
  const { rows } = await service.ctx.db.query('SELECT event, payload, url FROM webhook_events WHERE resource_id = $1 ORDER BY seq', [id]);
  return rows;
}

async function auditRows(id: string): Promise<Array<{ action: string; before: unknown; after: unknown }>> {
  const { rows } = await service.ctx.db.query(`SELECT action, before, after FROM audit_log WHERE object_type = 'payout' AND object_id = $1 ORDER BY id`, [id]);
  return rows;
}

function ex(executor: { token: string }, method: string, url: string, body?: unknown, on: FastifyInstance = app) {
  return on.inject({
    method: method as 'GET',
    url: `/executor/v1${url}`,
    headers: { authorization: `Bearer ${executor.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

function proof(executor: { token: string }, id: string, file: { content: Buffer; field?: string } | null = { content: TINY_PNG }) {
  const form = multipartBody({ note: 'paid' }, file ? { field: file.field ?? 'proof', name: 'proof.png', content: file.content } : undefined);
  return app.inject({
    method: 'POST',
    url: `/executor/v1/payouts/${id}/complete`,
    headers: { authorization: `Bearer ${executor.token}`, 'content-type': form.contentType },
    payload: form.body,
  });
}

beforeAll(async () => {
  service = await startTestService({}, { worker: true });
  app = service.app;
  another = await service.startAnother({ KASSIR_WORKER: 'false' });
  hooks = await webhookReceiver();
  await setRate(app, 'RUB', Number(RATE));
  m = await createMerchant(app, { payout_rate: 1.5 });
  other = await createMerchant(app, { payout_rate: 1.5 });
  await fund(m, 10_000);
  await fund(other, 1_000);
});
afterAll(async () => {
  hooks?.server.close();
  await service?.close();
});

describe('POST /v1/payouts', () => {
  it('card without bank: exactly the Payout object, bank "", requisites without spaces, no completed_at', async () => {
    const card = testCard('4111');
    const spaced = card.replace(/(\d{4})(?=\d)/g, '$1 ');
    const body = payoutBody({ requisites: spaced, amount: 1234.56 });
    const res = await signed(app, m, 'POST', '/v1/payouts', body);
    expect(res.statusCode, res.body).toBe(200);
    const payout = res.json();
    expect(Object.keys(payout).sort()).toEqual(PAYOUT_KEYS);
    expect(payout).toEqual({
      id: expect.stringMatching(UUID),
      ext_id: body.ext_id,
      amount: 1234.56,
      currency: 'RUB',
      method: 'card',
      requisites: card,
      holder_name: 'Ivan Petrov',
      bank: '',
      status: 'pending',
      created_at: expect.stringMatching(ISO),
    });
    expect(Math.abs(Date.parse(payout.created_at) - Date.now())).toBeLessThan(60_000);
    const dashed = await createPayout(m, { requisites: card.replace(/(\d{4})(?=\d)/g, '$1-') });
    expect(dashed.body.requisites).toBe(card);
  });

  it('card with a bank code: the code comes back', async () => {
    const res = await createPayout(m, { bank: 'tinkoff' });
    expect(res.status).toBe(200);
    expect(res.body.bank).toBe('tinkoff');
    expect(res.body).not.toHaveProperty('completed_at');
  });

  it('sbp: +7 / 8 9xx / 9xx forms become +79…, bank required and returned', async () => {
    for (const [input, normalized] of [
      ['+79123456789', '+79123456789'],
      ['+7 (912) 345-67-89', '+79123456789'],
      ['89123456789', '+79123456789'],
      ['8 912 345 67 89', '+79123456789'],
      ['9123456789', '+79123456789'],
    ]) {
      const res = await createPayout(m, { method: 'sbp', requisites: input, bank: 'sberbank', amount: 500 });
      expect(res.status, `${input}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body).toMatchObject({ method: 'sbp', requisites: normalized, bank: 'sberbank', amount: 500, currency: 'RUB', status: 'pending' });
      expect(Object.keys(res.body).sort()).toEqual(PAYOUT_KEYS);
    }
  });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    ['card failing Luhn', { requisites: '4111 1111 1111 1112' }, /Luhn/],
    ['card too short', { requisites: '4111' }, /card number/],
    ['card with letters', { requisites: '4111-1111-abcd-1111' }, /card number/],
    ['sbp foreign number', { method: 'sbp', requisites: '+380501234567', bank: 'sberbank' }, /Russian mobile/],
    ['sbp Russian landline', { method: 'sbp', requisites: '+74951234567', bank: 'sberbank' }, /Russian mobile/],
    ['sbp with a card number', { method: 'sbp', requisites: '4111111111111111', bank: 'sberbank' }, /Russian mobile/],
    ['sbp without bank', { method: 'sbp', requisites: '+79123456789' }, /bank is required/],
    ['sbp with empty bank', { method: 'sbp', requisites: '+79123456789', bank: '' }, /bank is required/],
    ['unknown bank (sbp)', { method: 'sbp', requisites: '+79123456789', bank: 'nobank' }, /Unknown bank code nobank/],
    ['unknown bank (card)', { bank: 'nobank' }, /Unknown bank code/],
    ['mobile operator code as bank', { method: 'sbp', requisites: '+79123456789', bank: 'mts_mobile' }, /Unknown bank code mts_mobile/],
    ['Kazakh bank', { method: 'sbp', requisites: '+79123456789', bank: 'kaspi' }, /Unknown bank code kaspi/],
    ['method qr', { method: 'qr' }, /method must be card or sbp/],
    ['method SBP_QR', { method: 'SBP_QR' }, /method must be card or sbp/],
    ['method empty', { method: '' }, /method must be card or sbp/],
    ['method a number', { method: 1 }, /method must be a string/],
    ['missing ext_id', { ext_id: undefined }, /^ext_id is required$/],
    ['missing amount', { amount: undefined }, /^amount is required$/],
    ['missing method', { method: undefined }, /^method is required$/],
    ['missing requisites', { requisites: undefined }, /^requisites is required$/],
    ['missing holder_name', { holder_name: undefined }, /^holder_name is required$/],
    ['amount 0', { amount: 0 }, /amount must be greater than 0/],
    ['amount negative', { amount: -100 }, /amount must be greater than 0/],
    ['amount with 3 decimals', { amount: 100.555 }, /amount must have at most 2 decimal places/],
    ['amount as string', { amount: '100' }, /amount must be a number/],
    ['amount null', { amount: null }, /amount must be a number/],
    ['holder_name blank', { holder_name: '   ' }, /holder_name/],
    ['holder_name empty', { holder_name: '' }, /holder_name must not be empty/],
    ['ext_id empty', { ext_id: '' }, /ext_id must not be empty/],
    ['ext_id over 255 chars', { ext_id: 'x'.repeat(256) }, /ext_id must be at most 255 characters/],
    ['notify_url not a URL', { notify_url: 'not a url' }, /notify_url/],
    ['notify_url ftp', { notify_url: 'ftp://example.com/x' }, /notify_url/],
  ];

  it.each(invalid)('PAY_002: %s', async (_name, overrides, message) => {
    const res = await createPayout(m, overrides);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toBe('PAY_002');
    expect(res.body.message).toMatch(message);
  });

  it('nothing is stored or reserved by a refused payout', async () => {
    const before = await balances(m);
    const { rows } = await service.ctx.db.query<{ n: number }>('SELECT count(*) AS n FROM payouts WHERE merchant_id = $1', [m.merchantId]);
    for (const [, overrides] of invalid.slice(0, 8)) expect((await createPayout(m, overrides)).status).toBe(400);
    const after = await service.ctx.db.query<{ n: number }>('SELECT count(*) AS n FROM payouts WHERE merchant_id = $1', [m.merchantId]);
    expect(after.rows[0]!.n).toBe(rows[0]!.n);
    expect(await balances(m)).toEqual(before);
    const bad = await createPayout(m, { bank: 'nobank' });
    expect(bad.body.data).toEqual({ bank: 'nobank' });
  });

  it('malformed JSON and non-object bodies → PAY_002', async () => {
    for (const raw of ['{"ext_id": "x", "amount": ', '[]', '"payout"', '42', 'null']) {
      const res = await signed(app, m, 'POST', '/v1/payouts', raw);
      expect(res.statusCode, `${raw}: ${res.body}`).toBe(400);
      expect(res.json().error).toBe('PAY_002');
    }
  });

  it('PAY_003 (409) for a duplicate ext_id with data.ext_id, reserved once', async () => {
    const body = payoutBody();
    expect((await signed(app, m, 'POST', '/v1/payouts', body)).statusCode).toBe(200);
    const before = await balances(m);
    const dup = await signed(app, m, 'POST', '/v1/payouts', { ...body, amount: 10 });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'PAY_003', message: expect.any(String), data: { ext_id: body.ext_id } });
    expect(await balances(m)).toEqual(before);
    await expectLedgerOk();
  });

  it("another merchant may reuse a merchant's payout ext_id", async () => {
    const body = payoutBody();
    expect((await signed(app, m, 'POST', '/v1/payouts', body)).statusCode).toBe(200);
    const theirs = await signed(app, other, 'POST', '/v1/payouts', body);
    expect(theirs.statusCode, theirs.body).toBe(200);
    expect(theirs.json().ext_id).toBe(body.ext_id);
    await expectLedgerOk();
  });

  it('notify_url to a private address is refused when WEBHOOK_ALLOW_PRIVATE is false', async () => {
    const strict = await service.startAnother({ KASSIR_WORKER: 'false', WEBHOOK_ALLOW_PRIVATE: 'false' });
    for (const url of ['http://127.0.0.1:8080/hook', 'http://10.0.0.5/hook', 'http://[::1]/hook', 'http://localhost/hook', 'http://169.254.169.254/latest']) {
      const res = await createPayout(m, { notify_url: url }, strict.app);
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ error: 'PAY_002', data: { notify_url: url } });
    }
    const ok = await createPayout(m, { notify_url: 'https://shop.example.com/hooks' }, strict.app);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // The default test service allows private addresses (the receivers of these tests).
    expect((await createPayout(m, { notify_url: hooks.url })).status).toBe(200);
  });

  it('insufficient balance → 400 PAY_002 with data.available; nothing reserved', async () => {
    const poor = await createMerchant(app, { payout_rate: 1.5 });
    await fund(poor, 5.25);
    const res = await createPayout(poor, { amount: 1000 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'PAY_002', data: { available: 5.25 } });
    expect(res.body.data.required).toBe(expected(1000, '1.5').reserve.toNumber());
    expect(await balances(poor)).toEqual({ available: new D('5.25'), frozen: new D(0) });
    const list = (await signed(app, poor, 'GET', '/v1/payouts')).json();
    expect(list.total).toBe(0);
    const empty = await createMerchant(app);
    const none = await createPayout(empty, { amount: 100 });
    expect(none.body).toMatchObject({ error: 'PAY_002', data: { available: 0 } });
    await expectLedgerOk();
  });

  it('a reserve equal to the available balance succeeds and leaves exactly 0', async () => {
    const exact = await createMerchant(app, { payout_rate: 1.5 });
    const { reserve } = expected('1000.00', '1.5');
    await fund(exact, reserve.toNumber());
    expect((await createPayout(exact, { amount: 1000 })).status).toBe(200);
    expect(await balances(exact)).toEqual({ available: new D(0), frozen: reserve });
    const more = await createPayout(exact, { amount: 0.01 });
    expect(more.body).toMatchObject({ error: 'PAY_002', data: { available: 0 } });
    await expectLedgerOk();
  });

  it('no RUB rate → 503 and nothing stored', async () => {
    await service.ctx.db.query(`DELETE FROM rates WHERE currency = 'RUB'`);
    try {
      const before = await balances(m);
      const body = payoutBody();
      const res = await signed(app, m, 'POST', '/v1/payouts', body);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: expect.any(String), message: expect.stringMatching(/rate/) });
      expect((await signed(app, m, 'GET', `/v1/payouts/by-ext-id/${body.ext_id}`)).statusCode).toBe(404);
      expect(await balances(m)).toEqual(before);
    } finally {
      await setRate(app, 'RUB', Number(RATE));
    }
  });
});

describe('money: reserve, settle, release (DESIGN.md decision 12)', () => {
  it('creation freezes amount / rate × (1 + payout_rate/100), exact to 6 decimals', async () => {
    for (const amount of ['1234.56', '0.01', '99999.99', '777.77']) {
      const before = await balances(m);
      const payout = await createdPayout(m, { amount: Number(amount) });
      const { reserve } = expected(amount, '1.5');
      const after = await balances(m);
      expect(after.available.toFixed()).toBe(before.available.minus(reserve).toFixed());
      expect(after.frozen.toFixed()).toBe(before.frozen.plus(reserve).toFixed());
      expect(await postings(payout.id)).toEqual([
        { tx: 'payout_reserve', account: 'terminal_available', amount: reserve.negated().toFixed() },
        { tx: 'payout_reserve', account: 'terminal_frozen', amount: reserve.toFixed() },
      ]);
    }
    await expectLedgerOk();
  });

  it('operator complete debits the reserve: frozen down, available unchanged, fee to system_fee_revenue', async () => {
    const payout = await createdPayout(m, { amount: 1234.56 });
    const { reserve, fee } = expected('1234.56', '1.5');
    expect([reserve.toFixed(), fee.toFixed()]).toEqual(['13.12124', '0.19391']);
    const before = await balances(m);
    const revenue = await feeRevenue();
    await adminOk(app, 'POST', `/payouts/${payout.id}/complete`);
    const after = await balances(m);
    expect(after.available.toFixed()).toBe(before.available.toFixed());
    expect(after.frozen.toFixed()).toBe(before.frozen.minus(reserve).toFixed());
    expect((await feeRevenue()).minus(revenue).toFixed()).toBe(fee.toFixed());
    const settle = (await postings(payout.id)).filter((p) => p.tx === 'payout_settle');
    expect(settle).toEqual(
      expect.arrayContaining([
        { tx: 'payout_settle', account: 'terminal_frozen', amount: reserve.negated().toFixed() },
        { tx: 'payout_settle', account: 'system_outgoing', amount: reserve.minus(fee).toFixed() },
        { tx: 'payout_settle', account: 'system_fee_revenue', amount: fee.toFixed() },
      ]),
    );
    expect(settle).toHaveLength(3);
    await expectLedgerOk();
  });

  it('payout_rate 0: the reserve is amount / rate and no fee is posted', async () => {
    const free = await createMerchant(app, { payout_rate: 0 });
    await fund(free, 100);
    const payout = (await createPayout(free, { amount: 1000 })).body;
    const { reserve } = expected(1000, 0);
    expect(await balances(free)).toEqual({ available: new D(100).minus(reserve), frozen: reserve });
    await adminOk(app, 'POST', `/payouts/${payout.id}/complete`);
    const settle = (await postings(payout.id)).filter((p) => p.tx === 'payout_settle');
    expect(settle.map((p) => p.account).sort()).toEqual(['system_outgoing', 'terminal_frozen']);
    expect(await balances(free)).toEqual({ available: new D(100).minus(reserve), frozen: new D(0) });
    await expectLedgerOk();
  });

  it('fail releases the reserve back to available; no fee', async () => {
    const before = await balances(m);
    const revenue = await feeRevenue();
    const payout = await createdPayout(m, { amount: 4321.09 });
    await adminOk(app, 'POST', `/payouts/${payout.id}/fail`, { reason: 'card blocked' });
    expect(await balances(m)).toEqual(before);
    expect((await feeRevenue()).toFixed()).toBe(revenue.toFixed());
    const { reserve } = expected('4321.09', '1.5');
    expect((await postings(payout.id)).filter((p) => p.tx === 'payout_release')).toEqual([
      { tx: 'payout_release', account: 'terminal_available', amount: reserve.toFixed() },
      { tx: 'payout_release', account: 'terminal_frozen', amount: reserve.negated().toFixed() },
    ]);
    await expectLedgerOk();
  });

  it('cancel releases the reserve back to available (from processing too)', async () => {
    const before = await balances(m);
    const payout = await createdPayout(m, { amount: 250.5 });
    const executor = await createExecutor(app);
    expect((await ex(executor, 'POST', `/payouts/${payout.id}/take`)).statusCode).toBe(200);
    await adminOk(app, 'POST', `/payouts/${payout.id}/cancel`);
    expect(await balances(m)).toEqual(before);
    await expectLedgerOk();
  });
});

describe('GET /v1/payouts/:id and /v1/payouts/by-ext-id/:extId', () => {
  it('GET by id and by ext_id: the Payout with completed_at null, then an ISO timestamp once completed', async () => {
    const created = await createdPayout(m, { bank: 'vtb', notify_url: hooks.url });
    const byId = await getPayout(m, created.id);
    expect(byId).toEqual({ ...created, completed_at: null });
    const byExt = await signed(app, m, 'GET', `/v1/payouts/by-ext-id/${created.ext_id}`);
    expect(byExt.statusCode).toBe(200);
    expect(byExt.json()).toEqual(byId);

    await adminOk(app, 'POST', `/payouts/${created.id}/complete`);
    const done = await getPayout(m, created.id);
    expect(done).toEqual({ ...created, status: 'completed', completed_at: expect.stringMatching(ISO) });
    expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    expect((await signed(app, m, 'GET', `/v1/payouts/by-ext-id/${created.ext_id}`)).json()).toEqual(done);
  });

  it('an ext_id with spaces, slashes and non-ASCII is found through the encoded path', async () => {
    const extId = `заказ #1/${randomUUID().slice(0, 8)} ?&`;
    const created = await createdPayout(m, { ext_id: extId });
    const res = await signed(app, m, 'GET', `/v1/payouts/by-ext-id/${encodeURIComponent(extId)}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().id).toBe(created.id);
  });

  it("PAY_001 (404): unknown, another merchant's, not a uuid; by ext_id too", async () => {
    const theirs = await createdPayout(other, { amount: 10 });
    for (const url of [
      `/v1/payouts/${randomUUID()}`,
      `/v1/payouts/${theirs.id}`,
      '/v1/payouts/not-a-uuid',
      `/v1/payouts/${theirs.id.toUpperCase().replace(/-/g, '')}`,
      `/v1/payouts/by-ext-id/${uniqueExtId()}`,
      `/v1/payouts/by-ext-id/${theirs.ext_id}`,
    ]) {
      const res = await signed(app, m, 'GET', url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ error: 'PAY_001', message: expect.any(String) });
    }
    expect((await signed(app, other, 'GET', `/v1/payouts/${theirs.id}`)).statusCode).toBe(200);
  });
});

describe('executor side', () => {
  it('list: available pending payouts masked, own taken ones in full; take → processing for the merchant', async () => {
    const card = testCard('4111');
    const phone = testPhone();
    const cardPayout = await createdPayout(m, { requisites: card, bank: 'alfabank', holder_name: 'Anna K.' });
    const sbpPayout = await createdPayout(m, { method: 'sbp', requisites: phone, bank: 'sberbank', holder_name: 'Oleg S.' });
    const a = await createExecutor(app, 'A');
    const b = await createExecutor(app, 'B');

    // The available list holds the 100 oldest pending payouts of all merchants: this file keeps
    // fewer than that pending before this point, so the two new ones are on it.
    const listA = (await ex(a, 'GET', '/payouts')).json();
    const shownCard = listA.available.find((p: { id: string }) => p.id === cardPayout.id);
    expect(shownCard).toEqual({
      id: cardPayout.id,
      amount: cardPayout.amount,
      currency: 'RUB',
      method: 'card',
      requisites: `${card.slice(0, 6)}******${card.slice(-4)}`,
      bank: 'alfabank',
      created_at: cardPayout.created_at,
    });
    expect(JSON.stringify(listA)).not.toContain(card);
    expect(JSON.stringify(listA)).not.toContain('Anna K.');
    const shownSbp = listA.available.find((p: { id: string }) => p.id === sbpPayout.id);
    expect(shownSbp.requisites).toBe(`+7********${phone.slice(-2)}`);
    expect(JSON.stringify(listA)).not.toContain(phone);
    expect(listA.taken).toEqual([]);

    const take = await ex(a, 'POST', `/payouts/${cardPayout.id}/take`);
    expect(take.statusCode, take.body).toBe(200);
    expect(take.json()).toEqual({
      ...shownCard,
      requisites: card,
      holder_name: 'Anna K.',
      status: 'processing',
      taken_at: expect.stringMatching(ISO),
    });
    expect(await getPayout(m, cardPayout.id)).toMatchObject({ status: 'processing', completed_at: null });

    const afterA = (await ex(a, 'GET', '/payouts')).json();
    expect(afterA.available.map((p: { id: string }) => p.id)).not.toContain(cardPayout.id);
    expect(afterA.taken).toEqual([take.json()]);
    const afterB = (await ex(b, 'GET', '/payouts')).json();
    expect(afterB.available.map((p: { id: string }) => p.id)).not.toContain(cardPayout.id);
    expect(afterB.available.map((p: { id: string }) => p.id)).toContain(sbpPayout.id);
    expect(afterB.taken).toEqual([]);
    // Taking moves no money.
    await expectLedgerOk();

    expect((await app.inject({ method: 'GET', url: '/executor/v1/payouts' })).statusCode).toBe(401);
    expect((await ex({ token: 'nope' }, 'GET', '/payouts')).statusCode).toBe(401);
  });

  it('race: two executors on two instances, then ten, take one payout at once → exactly one 200, the rest 409', async () => {
    for (const n of [2, 10]) {
      const payout = await createdPayout(m, { amount: 100 });
      const executors = await Promise.all(Array.from({ length: n }, (_, i) => createExecutor(app, `Racer ${i}`)));
      const results = await Promise.all(executors.map((e, i) => ex(e, 'POST', `/payouts/${payout.id}/take`, undefined, i % 2 === 0 ? app : another.app)));
      const codes = results.map((r) => r.statusCode);
      expect(
        codes.filter((c) => c === 200),
        codes.join(','),
      ).toHaveLength(1);
      expect(codes.filter((c) => c === 409)).toHaveLength(n - 1);
      for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json()).toMatchObject({ error: 'CONFLICT', data: { status: 'processing' } });
      const winner = executors[codes.indexOf(200)]!;
      const row = (await service.ctx.db.query('SELECT executor_id, status FROM payouts WHERE id = $1', [payout.id])).rows[0];
      expect(row).toEqual({ executor_id: winner.id, status: 'processing' });
      expect((await events(payout.id)).length).toBe(0);
    }
  });

  it('complete: a proof file is required (field proof), images/pdf only, only by the executor who took it', async () => {
    const before = await balances(m);
    const payout = await createdPayout(m, { amount: 2000 });
    const { reserve } = expected(2000, '1.5');
    const taker = await createExecutor(app);
    const stranger = await createExecutor(app);
    expect((await ex(taker, 'POST', `/payouts/${payout.id}/take`)).statusCode).toBe(200);

    const json = await ex(taker, 'POST', `/payouts/${payout.id}/complete`, {});
    expect(json.statusCode).toBe(400);
    expect(json.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/proof/) });
    const noFile = await proof(taker, payout.id, null);
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json().error).toBe('VALIDATION');
    const text = await proof(taker, payout.id, { content: Buffer.from('I paid, honestly. '.repeat(50)) });
    expect(text.statusCode).toBe(400);
    expect(text.json().error).toBe('PAY_010');
    const wrongField = await proof(taker, payout.id, { content: TINY_PNG, field: 'photo' });
    expect(wrongField.statusCode).toBe(400);
    expect(wrongField.json().error).toBe('PAY_002');
    const byStranger = await proof(stranger, payout.id);
    expect(byStranger.statusCode).toBe(409);
    expect(byStranger.json()).toMatchObject({ error: 'CONFLICT', data: { status: 'processing' } });
    expect((await getPayout(m, payout.id)).status).toBe('processing');
    expect((await balances(m)).frozen.toFixed()).toBe(before.frozen.plus(reserve).toFixed());

    const done = await proof(taker, payout.id);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ id: payout.id, status: 'completed' });
    expect(await getPayout(m, payout.id)).toMatchObject({ status: 'completed', completed_at: expect.stringMatching(ISO) });
    expect((await adminOk(app, 'GET', `/payouts/${payout.id}`)).has_proof).toBe(true);
    const after = await balances(m);
    expect(after.available.toFixed()).toBe(before.available.minus(reserve).toFixed());
    expect(after.frozen.toFixed()).toBe(before.frozen.toFixed());
    const again = await proof(taker, payout.id);
    expect(again.statusCode).toBe(409);
    expect(again.json().data).toEqual({ status: 'completed' });
    expect((await ex(taker, 'GET', '/payouts')).json().taken.map((p: { id: string }) => p.id)).not.toContain(payout.id);
    await expectLedgerOk();
  });

  it('fail {reason} by the taker releases the funds; reason required; another executor → 409', async () => {
    const before = await balances(m);
    const payout = await createdPayout(m, { amount: 3000 });
    const taker = await createExecutor(app);
    const stranger = await createExecutor(app);
    expect((await ex(taker, 'POST', `/payouts/${payout.id}/take`)).statusCode).toBe(200);
    expect((await ex(taker, 'POST', `/payouts/${payout.id}/fail`, {})).statusCode).toBe(400);
    expect((await ex(taker, 'POST', `/payouts/${payout.id}/fail`, { reason: '' })).statusCode).toBe(400);
    const byStranger = await ex(stranger, 'POST', `/payouts/${payout.id}/fail`, { reason: 'not mine' });
    expect(byStranger.statusCode).toBe(409);
    const failed = await ex(taker, 'POST', `/payouts/${payout.id}/fail`, { reason: 'recipient bank rejected' });
    expect(failed.statusCode, failed.body).toBe(200);
    expect(failed.json()).toMatchObject({ id: payout.id, status: 'failed' });
    expect(await getPayout(m, payout.id)).toMatchObject({ status: 'failed', completed_at: null });
    expect((await adminOk(app, 'GET', `/payouts/${payout.id}`)).failure_reason).toBe('recipient bank rejected');
    expect(await balances(m)).toEqual(before);
    await expectLedgerOk();
  });

  it('not processing → 409: complete/fail a pending payout, act on a finished one, take a taken or finished one; unknown → 404', async () => {
    const executor = await createExecutor(app);
    const pending = await createdPayout(m, { amount: 100 });
    expect((await proof(executor, pending.id)).statusCode).toBe(409);
    expect((await ex(executor, 'POST', `/payouts/${pending.id}/fail`, { reason: 'x' })).statusCode).toBe(409);
    expect((await getPayout(m, pending.id)).status).toBe('pending');
    await adminOk(app, 'POST', `/payouts/${pending.id}/cancel`);
    const take = await ex(executor, 'POST', `/payouts/${pending.id}/take`);
    expect(take.statusCode).toBe(409);
    expect(take.json().data).toEqual({ status: 'cancelled' });
    expect((await ex(executor, 'POST', `/payouts/${pending.id}/fail`, { reason: 'x' })).statusCode).toBe(409);
    for (const id of [randomUUID(), 'nope']) {
      const res = await ex(executor, 'POST', `/payouts/${id}/take`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('PAY_001');
    }
    await expectLedgerOk();
  });
});

describe('operator side', () => {
  const adminKeys = [
    'executor_id',
    'failure_reason',
    'has_proof',
    'is_test',
    'merchant_id',
    'reserve',
    'terminal_id',
    'completed_at',
    'provider_id',
    'paid_by',
    ...PAYOUT_KEYS,
  ].sort();

  async function processing(): Promise<Record<string, any>> {
    const payout = await createdPayout(m, { amount: 150 });
    const executor = await createExecutor(app);
    expect((await ex(executor, 'POST', `/payouts/${payout.id}/take`)).statusCode).toBe(200);
    return { ...payout, executorId: executor.id };
  }

  for (const [event, status] of [
    ['complete', 'completed'],
    ['fail', 'failed'],
    ['cancel', 'cancelled'],
  ] as const) {
    it(`${event} from pending and from processing → ${status}, audited with before/after`, async () => {
      const pending = await createdPayout(m, { amount: 150 });
      const busy = await processing();
      for (const [payout, from] of [
        [pending, 'pending'],
        [busy, 'processing'],
      ] as const) {
        const res = await admin(app, 'POST', `/payouts/${payout.id}/${event}`, event === 'complete' ? undefined : { reason: `why ${from}` });
        expect(res.statusCode, res.body).toBe(200);
        const view = res.json();
        expect(Object.keys(view).sort()).toEqual(adminKeys);
        expect(view).toMatchObject({
          id: payout.id,
          status,
          merchant_id: m.merchantId,
          terminal_id: m.terminalId,
          has_proof: false,
          executor_id: from === 'processing' ? payout.executorId : null,
          reserve: expected(150, '1.5').reserve.toNumber(),
          failure_reason: event === 'complete' ? null : `why ${from}`,
          completed_at: event === 'complete' ? expect.stringMatching(ISO) : null,
          provider_id: null,
          // Completed: who paid it, as a person names them (the executor who had taken it, the operator who completed it).
          paid_by: event === 'complete' ? { executor: from === 'processing' ? expect.any(String) : null, provider: null, person: 'token' } : null,
        });
        expect(await getPayout(m, payout.id)).toMatchObject({ status });
        expect(await auditRows(payout.id)).toEqual([
          // A processing payout was taken by an executor first: its act is in the log too.
          ...(from === 'processing'
            ? [{ action: 'payout.take', before: { status: 'pending' }, after: { status: 'processing', executor_id: payout.executorId } }]
            : []),
          { action: `payout.${event}`, before: { status: from }, after: event === 'complete' ? { status } : { status, reason: `why ${from}` } },
        ]);
      }
      await expectLedgerOk();
    });
  }

  it('fail / cancel without a body use a default reason', async () => {
    const a = await createdPayout(m, { amount: 150 });
    const b = await createdPayout(m, { amount: 150 });
    expect((await adminOk(app, 'POST', `/payouts/${a.id}/fail`)).failure_reason).toEqual(expect.stringMatching(/operator/));
    expect((await adminOk(app, 'POST', `/payouts/${b.id}/cancel`)).failure_reason).toEqual(expect.stringMatching(/operator/));
  });

  it('a second action on a finished payout → 409, no audit row, no money moved', async () => {
    for (const first of ['complete', 'fail', 'cancel']) {
      const payout = await createdPayout(m, { amount: 150 });
      await adminOk(app, 'POST', `/payouts/${payout.id}/${first}`);
      const before = await balances(m);
      const revenue = await feeRevenue();
      for (const second of ['complete', 'fail', 'cancel']) {
        const res = await admin(app, 'POST', `/payouts/${payout.id}/${second}`);
        expect(res.statusCode, `${first} then ${second}`).toBe(409);
        expect(res.json()).toMatchObject({ error: 'CONFLICT', data: { status: expect.stringMatching(/completed|failed|cancelled/) } });
      }
      expect(await balances(m)).toEqual(before);
      expect((await feeRevenue()).toFixed()).toBe(revenue.toFixed());
      expect(await auditRows(payout.id)).toHaveLength(1);
    }
    await expectLedgerOk();
  });

  it('an executor cannot complete a payout the operator cancelled while it was processing', async () => {
    const payout = await createdPayout(m, { amount: 150 });
    const executor = await createExecutor(app);
    expect((await ex(executor, 'POST', `/payouts/${payout.id}/take`)).statusCode).toBe(200);
    await adminOk(app, 'POST', `/payouts/${payout.id}/cancel`);
    const res = await proof(executor, payout.id);
    expect(res.statusCode).toBe(409);
    expect(res.json().data).toEqual({ status: 'cancelled' });
    await expectLedgerOk();
  });

  it('admin list and view: ?status, ?merchant_id, 404 PAY_001, 400 on bad filters, bearer required', async () => {
    const merchant = await createMerchant(app);
    await fund(merchant, 100);
    const p1 = await createdPayout(merchant, { amount: 100 });
    const p2 = await createdPayout(merchant, { amount: 200 });
    await adminOk(app, 'POST', `/payouts/${p2.id}/fail`);
    for (const status of ['pending', 'failed', 'completed']) {
      const list = await adminOk<{ payouts: Array<Record<string, any>>; total: number }>(
        app,
        'GET',
        `/payouts?status=${status}&merchant_id=${merchant.merchantId}`,
      );
      const expectedIds = status === 'pending' ? [p1.id] : status === 'failed' ? [p2.id] : [];
      expect(list.payouts.map((p) => p.id)).toEqual(expectedIds);
      expect(list.total).toBe(expectedIds.length);
    }
    const all = await adminOk<{ payouts: Array<Record<string, any>>; total: number }>(app, 'GET', '/payouts?status=pending&limit=1000');
    expect(all.payouts.length).toBeGreaterThan(1);
    expect(all.payouts.every((p) => p.status === 'pending')).toBe(true);
    expect(new Set(all.payouts.map((p) => p.merchant_id)).size).toBeGreaterThan(1);
    const view = await adminOk(app, 'GET', `/payouts/${p1.id}`);
    expect(view).toMatchObject({ ...p1, completed_at: null, merchant_id: merchant.merchantId, executor_id: null });
    for (const id of [randomUUID(), 'nope']) {
      const res = await admin(app, 'GET', `/payouts/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('PAY_001');
      expect((await admin(app, 'POST', `/payouts/${id}/complete`)).statusCode).toBe(404);
    }
    expect((await admin(app, 'GET', '/payouts?status=bogus')).statusCode).toBe(400);
    expect((await admin(app, 'GET', '/payouts?merchant_id=x')).statusCode).toBe(400);
    expect((await admin(app, 'GET', '/payouts?limit=1001')).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/admin/v1/payouts' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: `/admin/v1/payouts/${p1.id}/cancel` })).statusCode).toBe(401);
    expect((await getPayout(merchant, p1.id)).status).toBe('pending');
  });
});

describe('webhooks (DESIGN.md decision 9)', () => {
  it('processing and completed: one outbox event each, payload = the payout as GET returns it, to notify_url', async () => {
    const payout = await createdPayout(m, { amount: 700, notify_url: hooks.url });
    expect(await events(payout.id)).toEqual([]);
    const executor = await createExecutor(app);
    expect((await ex(executor, 'POST', `/payouts/${payout.id}/take`)).statusCode).toBe(200);
    const processing = await getPayout(m, payout.id);
    expect((await proof(executor, payout.id)).statusCode).toBe(200);
    const completed = await getPayout(m, payout.id);
    expect(await events(payout.id)).toEqual([
      { event: 'payout.processing', payload: processing, url: hooks.url },
      { event: 'payout.completed', payload: completed, url: hooks.url },
    ]);
  });

  it('failed and cancelled (executor and operator) write payout.failed / payout.cancelled; nothing without notify_url', async () => {
    const executor = await createExecutor(app);
    const byExecutor = await createdPayout(m, { amount: 700, notify_url: hooks.url });
    await ex(executor, 'POST', `/payouts/${byExecutor.id}/take`);
    expect((await ex(executor, 'POST', `/payouts/${byExecutor.id}/fail`, { reason: 'no such card' })).statusCode).toBe(200);
    expect((await events(byExecutor.id)).map((e) => e.event)).toEqual(['payout.processing', 'payout.failed']);
    expect((await events(byExecutor.id))[1]!.payload).toEqual(await getPayout(m, byExecutor.id));

    const failed = await createdPayout(m, { amount: 700, notify_url: hooks.url });
    await adminOk(app, 'POST', `/payouts/${failed.id}/fail`);
    expect(await events(failed.id)).toEqual([{ event: 'payout.failed', payload: await getPayout(m, failed.id), url: hooks.url }]);

    const cancelled = await createdPayout(m, { amount: 700, notify_url: hooks.url });
    await adminOk(app, 'POST', `/payouts/${cancelled.id}/cancel`);
    expect(await events(cancelled.id)).toEqual([{ event: 'payout.cancelled', payload: await getPayout(m, cancelled.id), url: hooks.url }]);

    const silent = [await createdPayout(m, { amount: 700 }), await createdPayout(m, { amount: 700 }), await createdPayout(m, { amount: 700 })];
    await ex(executor, 'POST', `/payouts/${silent[0]!.id}/take`);
    await proof(executor, silent[0]!.id);
    await adminOk(app, 'POST', `/payouts/${silent[1]!.id}/fail`);
    await adminOk(app, 'POST', `/payouts/${silent[2]!.id}/cancel`);
    for (const p of silent) expect(await events(p.id)).toEqual([]);
  });

  it('delivered for real by the worker: event body {event,id,created_at,data}, signed with the secret key', async () => {
    const payout = await createdPayout(m, { amount: 900, notify_url: hooks.url });
    await adminOk(app, 'POST', `/payouts/${payout.id}/complete`);
    const hit = await until(() => hooks.received.find((h) => JSON.parse(h.body).data?.id === payout.id));
    const body = JSON.parse(hit.body);
    expect(body).toEqual({
      event: 'payout.completed',
      id: expect.stringMatching(UUID),
      created_at: expect.stringMatching(ISO),
      data: await getPayout(m, payout.id),
    });
    expect(hit.headers['x-signature']).toBe(hmacSha1Base64(m.secretKey, hit.body));
    expect(hit.headers['x-event-id']).toBe(body.id);
    expect(hit.headers['x-notification-token']).toBeUndefined();
  });
});

describe('GET /v1/payouts', () => {
  let lister: MerchantCredentials;
  /** Newest first, as the list orders them: created_at fixed below to known instants. */
  const ids: Record<string, string> = {};
  const at = (day: number) => `2024-01-0${day}T10:00:00.000Z`;

  beforeAll(async () => {
    lister = await createMerchant(app);
    await fund(lister, 1000);
    const executor = await createExecutor(app);
    // Six payouts, one per day, in every status (two pending).
    for (const [day, name] of [
      [1, 'pending1'],
      [2, 'processing'],
      [3, 'completed'],
      [4, 'failed'],
      [5, 'cancelled'],
      [6, 'pending2'],
    ] as const) {
      const payout = await createdPayout(lister, { amount: 100 + day, ext_id: `list-${name}` });
      ids[name] = payout.id;
      await service.ctx.db.query('UPDATE payouts SET created_at = $2 WHERE id = $1', [payout.id, at(day)]);
    }
    await ex(executor, 'POST', `/payouts/${ids.processing}/take`);
    await adminOk(app, 'POST', `/payouts/${ids.completed}/complete`);
    await adminOk(app, 'POST', `/payouts/${ids.failed}/fail`);
    await adminOk(app, 'POST', `/payouts/${ids.cancelled}/cancel`);
  });

  async function list(query = ''): Promise<{ status: number; body: Record<string, any> }> {
    const res = await signed(app, lister, 'GET', `/v1/payouts${query}`);
    return { status: res.statusCode, body: res.json() };
  }
  const idsOf = (body: Record<string, any>) => (body.payouts as Array<{ id: string }>).map((p) => p.id);
  const newestFirst = () => ['pending2', 'cancelled', 'failed', 'completed', 'processing', 'pending1'].map((n) => ids[n]);

  it('default page: {payouts, total, limit 100, offset 0}, newest first, each item as GET /v1/payouts/:id returns it', async () => {
    const { status, body } = await list();
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['limit', 'offset', 'payouts', 'total']);
    expect(body).toMatchObject({ total: 6, limit: 100, offset: 0 });
    expect(idsOf(body)).toEqual(newestFirst());
    for (const item of body.payouts) expect(item).toEqual(await getPayout(lister, item.id));
    const completed = body.payouts.find((p: { id: string }) => p.id === ids.completed);
    expect(completed.completed_at).toMatch(ISO);
    expect(body.payouts.find((p: { id: string }) => p.id === ids.failed).completed_at).toBeNull();
  });

  it('limit and offset page through the set; total stays the whole filtered count', async () => {
    const pages: string[] = [];
    for (const offset of [0, 2, 4]) {
      const { body } = await list(`?limit=2&offset=${offset}`);
      expect(body).toMatchObject({ total: 6, limit: 2, offset });
      expect(body.payouts).toHaveLength(2);
      pages.push(...idsOf(body));
    }
    expect(pages).toEqual(newestFirst());
    const beyond = await list('?offset=6');
    expect(beyond.body).toMatchObject({ payouts: [], total: 6, offset: 6, limit: 100 });
    expect((await list('?limit=1000')).body).toMatchObject({ limit: 1000, total: 6 });
    expect((await list('?limit=1')).body.payouts).toHaveLength(1);
  });

  it('limit/offset errors → 400 PAY_002 (limit 1001, 0, abc, -1; offset abc, -1, 1.5)', async () => {
    for (const query of ['limit=1001', 'limit=0', 'limit=abc', 'limit=-1', 'limit=10.5', 'offset=abc', 'offset=-1', 'offset=1.5']) {
      const { status, body } = await list(`?${query}`);
      expect(status, query).toBe(400);
      expect(body.error, query).toBe('PAY_002');
    }
  });

  it('status filter: each of the five statuses; total counts the filtered set, not the page; unknown → 400', async () => {
    const expectedIds: Record<string, string[]> = {
      pending: [ids.pending2!, ids.pending1!],
      processing: [ids.processing!],
      completed: [ids.completed!],
      failed: [ids.failed!],
      cancelled: [ids.cancelled!],
    };
    for (const [status, wanted] of Object.entries(expectedIds)) {
      const { body } = await list(`?status=${status}`);
      expect(idsOf(body), status).toEqual(wanted);
      expect(body.total).toBe(wanted.length);
      expect(body.payouts.every((p: { status: string }) => p.status === status)).toBe(true);
    }
    const page = await list('?status=pending&limit=1&offset=1');
    expect(idsOf(page.body)).toEqual([ids.pending1]);
    expect(page.body.total).toBe(2);
    for (const bad of ['PENDING', 'done', 'expired']) {
      const { status, body } = await list(`?status=${bad}`);
      expect(status, bad).toBe(400);
      expect(body).toMatchObject({ error: 'PAY_002', data: { status: bad } });
    }
  });

  it('from/to filter created_at with inclusive bounds; date-only to covers that whole day; combined with status and paging', async () => {
    const cases: Array<[string, string[]]> = [
      [`?from=${at(2)}&to=${at(4)}`, ['failed', 'completed', 'processing']],
      [`?from=${at(5)}`, ['pending2', 'cancelled']],
      [`?to=${at(1)}`, ['pending1']],
      ['?from=2024-01-03&to=2024-01-03', ['completed']],
      ['?from=2024-01-02T00:00:00Z&to=2024-01-03T23:59:59Z', ['completed', 'processing']],
      ['?from=2024-01-03T13:00:00%2B03:00&to=2024-01-04T13:00:00%2B03:00', ['failed', 'completed']],
      [`?from=${at(3)}&to=${at(2)}`, []],
      ['?from=2030-01-01', []],
      [`?from=${at(1)}&to=${at(6)}&status=pending`, ['pending2', 'pending1']],
    ];
    for (const [query, names] of cases) {
      const { status, body } = await list(query);
      expect(status, query).toBe(200);
      expect(idsOf(body), query).toEqual(names.map((n) => ids[n]));
      expect(body.total, query).toBe(names.length);
    }
    const page = await list(`?from=${at(2)}&to=${at(5)}&limit=1&offset=1`);
    expect(idsOf(page.body)).toEqual([ids.failed]);
    expect(page.body.total).toBe(4);
  });

  it('to = a created_at exactly as the API returned it includes that payout (sub-millisecond precision)', async () => {
    const clock = await createMerchant(app);
    await fund(clock, 10);
    const payout = await createdPayout(clock, { amount: 100 });
    const res = await signed(app, clock, 'GET', `/v1/payouts?from=${payout.created_at}&to=${payout.created_at}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total: 1, payouts: [{ id: payout.id }] });
  });

  it('bad dates → 400 PAY_002 naming the parameter', async () => {
    for (const [name, value] of [
      ['from', 'yesterday'],
      ['to', '2024-13-45'],
      ['from', 'abc'],
      ['to', '1'],
      ['from', 'March%207,%202024'],
    ] as const) {
      const { status, body } = await list(`?${name}=${value}`);
      expect(status, `${name}=${value}`).toBe(400);
      expect(body.error).toBe('PAY_002');
      expect(body.message).toMatch(new RegExp(name));
    }
  });

  it("only the merchant's own payouts are listed and counted", async () => {
    const mine = await list('?limit=1000');
    const theirs = (await signed(app, other, 'GET', '/v1/payouts?limit=1000')).json();
    expect(theirs.total).toBeGreaterThan(0);
    const mineIds = new Set(idsOf(mine.body));
    expect(idsOf(theirs).some((id) => mineIds.has(id))).toBe(false);
    const { rows } = await service.ctx.db.query<{ n: number }>('SELECT count(*) AS n FROM payouts WHERE merchant_id = $1', [other.merchantId]);
    expect(theirs.total).toBe(rows[0]!.n);
  });
});

describe('concurrency on money', () => {
  it('30 concurrent payouts over the balance: reserves never exceed it, never negative, ledger balanced', async () => {
    const merchant = await createMerchant(app, { payout_rate: 1.5 });
    await fund(merchant, 100);
    const { reserve } = expected(1000, '1.5');
    const fits = new D(100).div(reserve).floor().toNumber();
    expect(fits).toBe(9);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => createPayout(merchant, { amount: 1000, ext_id: `burst-${i}` }, i % 2 === 0 ? app : another.app)),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(fits);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('PAY_002');
      expect(new D(r.body.data.available).lt(reserve)).toBe(true);
      expect(r.body.data.available).toBeGreaterThanOrEqual(0);
    }
    const after = await balances(merchant);
    expect(after.frozen.toFixed()).toBe(reserve.mul(fits).toFixed());
    expect(after.available.toFixed()).toBe(new D(100).minus(reserve.mul(fits)).toFixed());
    expect(after.available.gte(0)).toBe(true);
    const list = (await signed(app, merchant, 'GET', '/v1/payouts')).json();
    expect(list.total).toBe(fits);
    await expectLedgerOk();
  });
});
