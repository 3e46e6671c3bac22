import { createHash, randomUUID } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc16ccitt } from '../src/lib/validators.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  testCard,
  testPhone,
  uniqueExtId,
} from './helpers.js';

// The operator API: DESIGN.md "The operator side" and the extra routes in src/*/*.admin.ts.
let service: TestService;
let executor: { id: string; token: string };

beforeAll(async () => {
  service = await startTestService({ PAYMENT_TTL_SECONDS: '900' });
  await setRate(service.app, 'RUB', 95.5);
  executor = await createExecutor(service.app);
  // Several RUB cards so that payments of this file never run out of requisites.
  for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

// Every payment of this file gets its own amount: the same-amount limit and the
// one-amount-per-requisite rule are other files' subject.
let amountSeq = 0;
function nextAmount(): number {
  return 1000 + ++amountSeq;
}

async function pay(merchant: MerchantCredentials, currency = 'RUB'): Promise<Record<string, any>> {
  const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: nextAmount(), currency, method: 'CARD' });
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

async function getPayment(merchant: MerchantCredentials, id: string): Promise<Record<string, any>> {
  const res = await signed(service.app, merchant, 'GET', `/v1/payments/${id}`);
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function auditRows(action: string, objectId: string): Promise<{ actor: string; object_type: string; before: any; after: any }[]> {
  const { rows } = await service.ctx.db.query('SELECT actor, object_type, before, after FROM audit_log WHERE action = $1 AND object_id = $2 ORDER BY id', [
    action,
    objectId,
  ]);
  return rows;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Every row of `table` as text, to prove a secret appears nowhere in it, in any column or encoding we can think of. */
async function tableText(table: string): Promise<string> {
  const { rows } = await service.ctx.db.query<{ t: string }>(`SELECT string_agg(x::text, '|') AS t FROM ${table} x`);
  return rows[0]?.t ?? '';
}

function expectAbsent(haystack: string, secret: string): void {
  expect(haystack.includes(secret)).toBe(false);
  expect(haystack.includes(Buffer.from(secret).toString('hex'))).toBe(false);
  expect(haystack.includes(Buffer.from(secret).toString('base64'))).toBe(false);
}

async function balanceOf(terminalId: string): Promise<{ balance: number; balance_frozen: number }> {
  return adminOk(service.app, 'GET', `/terminals/${terminalId}`);
}

describe('operator authentication', () => {
  it('refuses a missing or wrong bearer token with the error body', async () => {
    const missing = await service.app.inject({ method: 'GET', url: '/admin/v1/payments' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ error: 'AUTH_001', message: expect.any(String) });
    const wrong = await service.app.inject({ method: 'GET', url: '/admin/v1/payments', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'AUTH_002' });
  });
});

describe('merchants, terminals and executors: secrets are never stored in clear', () => {
  it('POST /merchants answers 201 {id, name, secret_key}; the secret is stored only encrypted', async () => {
    const res = await admin(service.app, 'POST', '/merchants', { name: 'Acme' });
    expect(res.statusCode).toBe(201);
    const merchant = res.json() as { id: string; name: string; secret_key: string };
    expect(merchant).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme', secret_key: expect.any(String) });
    expect(merchant.secret_key.length).toBeGreaterThanOrEqual(32);

    const { rows } = await service.ctx.db.query<{ secret_enc: string }>('SELECT secret_enc FROM merchant_secrets WHERE merchant_id = $1', [merchant.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.secret_enc).not.toContain(merchant.secret_key);
    expectAbsent(await tableText('merchant_secrets'), merchant.secret_key);
    expectAbsent(await tableText('merchants'), merchant.secret_key);
    expectAbsent(await tableText('audit_log'), merchant.secret_key);

    expect(await auditRows('merchant.create', merchant.id)).toEqual([
      expect.objectContaining({ object_type: 'merchant', before: null, after: { id: merchant.id, name: 'Acme' } }),
    ]);
  });

  it('refuses a merchant without a name', async () => {
    for (const body of [{}, { name: '' }]) {
      const res = await admin(service.app, 'POST', '/merchants', body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.any(String) });
    }
  });

  it('POST /merchants/:id/terminals answers 201 with the spec Terminal, its settings and an API key stored only as SHA-256', async () => {
    const merchant = await adminOk<{ id: string }>(service.app, 'POST', '/merchants', { name: 'Terminal owner' });
    const res = await admin(service.app, 'POST', `/merchants/${merchant.id}/terminals`, {
      name: 'Web shop',
      currency: 'RUB',
      payin_rate: 2.5,
      payout_rate: 1.5,
      withdrawal_fee: 1,
    });
    expect(res.statusCode).toBe(201);
    const terminal = res.json() as Record<string, any>;
    expect(terminal).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Web shop',
      balance: 0,
      balance_frozen: 0,
      withdrawal_fee: 1,
      currency: 'USDT',
      is_active: true,
      payment_currency: 'RUB',
      payin_rate: 2.5,
      payout_rate: 1.5,
      merchant_id: merchant.id,
      api_key: expect.any(String),
    });
    const apiKey = terminal.api_key as string;
    expect(apiKey.length).toBeGreaterThanOrEqual(24);

    const { rows } = await service.ctx.db.query<{ key_hash: Buffer }>('SELECT key_hash FROM terminal_api_keys WHERE terminal_id = $1', [terminal.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key_hash.equals(sha256(apiKey))).toBe(true);
    expectAbsent(await tableText('terminal_api_keys'), apiKey);
    expectAbsent(await tableText('terminals'), apiKey);
    expectAbsent(await tableText('audit_log'), apiKey);

    // Shown once: the terminal's later views carry no key.
    const again = await adminOk<Record<string, unknown>>(service.app, 'GET', `/terminals/${terminal.id}`);
    expect(again).not.toHaveProperty('api_key');
    expect(await auditRows('terminal.create', terminal.id)).toHaveLength(1);
  });

  it.each([
    ['currency USD', { currency: 'USD' }],
    ['currency USDT', { currency: 'USDT' }],
    ['payin_rate 100', { payin_rate: 100 }],
    ['payin_rate -1', { payin_rate: -1 }],
    ['payout_rate 100', { payout_rate: 100 }],
    ['payin_rate with 5 decimals', { payin_rate: 1.00001 }],
    ['a negative withdrawal_fee', { withdrawal_fee: -1 }],
    ['withdrawal_fee with 7 decimals', { withdrawal_fee: 0.0000001 }],
    ['an empty name', { name: '' }],
  ])('refuses a terminal with %s: 400 VALIDATION', async (_label, override) => {
    const merchant = await adminOk<{ id: string }>(service.app, 'POST', '/merchants', { name: 'Validation' });
    const res = await admin(service.app, 'POST', `/merchants/${merchant.id}/terminals`, {
      name: 'T',
      currency: 'RUB',
      payin_rate: 2,
      payout_rate: 1,
      withdrawal_fee: 1,
      ...override,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.any(String) });
    const { rows } = await service.ctx.db.query('SELECT 1 FROM terminals WHERE merchant_id = $1', [merchant.id]);
    expect(rows).toHaveLength(0);
  });

  it('answers 404 NOT_FOUND for a terminal of an unknown merchant', async () => {
    const res = await admin(service.app, 'POST', `/merchants/${randomUUID()}/terminals`, {
      name: 'T',
      currency: 'RUB',
      payin_rate: 1,
      payout_rate: 1,
      withdrawal_fee: 0,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('POST /executors answers 201 {id, name, token}; the token is stored only as SHA-256', async () => {
    const res = await admin(service.app, 'POST', '/executors', { name: 'Trader Joe' });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: string; name: string; token: string };
    expect(created).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Trader Joe', token: expect.any(String) });
    expect(created.token.length).toBeGreaterThanOrEqual(32);
    const { rows } = await service.ctx.db.query<{ token_hash: Buffer }>('SELECT token_hash FROM executors WHERE id = $1', [created.id]);
    expect(rows[0]!.token_hash.equals(sha256(created.token))).toBe(true);
    expectAbsent(await tableText('executors'), created.token);
    expectAbsent(await tableText('audit_log'), created.token);
    expect(await auditRows('executor.create', created.id)).toHaveLength(1);
  });
});

describe('PATCH /admin/v1/terminals/:id', () => {
  it('changes name, is_active and rates; payments keep the payin_rate they were created with', async () => {
    const merchant = await createMerchant(service.app, { payin_rate: 2.5, payout_rate: 1.5, withdrawal_fee: 1, name: 'Before' });
    const early = await pay(merchant);
    expect(early.payin_rate).toBe(2.5);

    const patched = await adminOk<Record<string, unknown>>(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, {
      name: 'After',
      payin_rate: 3.75,
      payout_rate: 2,
      withdrawal_fee: 2.5,
    });
    expect(patched).toMatchObject({
      id: merchant.terminalId,
      name: 'After',
      payin_rate: 3.75,
      payout_rate: 2,
      withdrawal_fee: 2.5,
      is_active: true,
      currency: 'USDT',
    });

    const late = await pay(merchant);
    expect(late).toMatchObject({ payin_rate: 3.75, terminal_name: 'After' });
    expect((await getPayment(merchant, early.id)).payin_rate).toBe(2.5);
    expect((await getPayment(merchant, late.id)).payin_rate).toBe(3.75);

    const [row] = await auditRows('terminal.update', merchant.terminalId);
    expect(row!.before).toMatchObject({ name: 'Before', payin_rate: 2.5, payout_rate: 1.5, withdrawal_fee: 1 });
    expect(row!.after).toMatchObject({ name: 'After', payin_rate: 3.75, payout_rate: 2, withdrawal_fee: 2.5 });
    expect(row!.actor).toBe('token');

    // An inactive terminal's key stops working (DESIGN.md decision 3), and starts again when re-activated.
    expect((await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: false })).is_active).toBe(false);
    const refused = await signed(service.app, merchant, 'GET', `/v1/payments/${early.id}`);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'AUTH_003' });
    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: true });
    expect((await getPayment(merchant, early.id)).id).toBe(early.id);
  });

  it('refuses bad values with 400 and leaves the terminal unchanged', async () => {
    const merchant = await createMerchant(service.app, { payin_rate: 2 });
    for (const body of [{ payin_rate: 100 }, { payin_rate: -1 }, { withdrawal_fee: -0.5 }, { name: '' }, { is_active: 'yes' }]) {
      const res = await admin(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'VALIDATION' });
    }
    expect(await adminOk(service.app, 'GET', `/terminals/${merchant.terminalId}`)).toMatchObject({ payin_rate: 2, withdrawal_fee: 1, is_active: true });
  });

  it('an unknown terminal is 404', async () => {
    const unknown = await admin(service.app, 'PATCH', `/terminals/${randomUUID()}`, { name: 'x' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'NOT_FOUND' });
  });
});

describe('rates', () => {
  it('PUT /rates/:currency answers {currency, rate, source, markup_percent, updated_at, stale}; lower-case currency is upper-cased', async () => {
    const res = await admin(service.app, 'PUT', '/rates/RUB', { rate: 95.5 });
    expect(res.statusCode).toBe(200);
    const body = res.json() as Record<string, unknown>;
    expect(body).toMatchObject({ currency: 'RUB', rate: 95.5, source: null, markup_percent: 0, updated_at: expect.any(String), stale: false, mode: 'manual' });
    expect(Number.isNaN(Date.parse(body.updated_at as string))).toBe(false);

    expect(await adminOk(service.app, 'PUT', '/rates/kzt', { rate: 0.19876543 })).toMatchObject({ currency: 'KZT', rate: 0.19876543 });
    const { rows } = await service.ctx.db.query<{ rate: string }>(`SELECT rate::text FROM rates WHERE currency = 'KZT'`);
    expect(rows[0]!.rate).toBe('0.19876543');
    expect(await auditRows('rate.set', 'KZT')).toHaveLength(1);
  });

  it.each([
    ['zero', { rate: 0 }],
    ['negative', { rate: -95.5 }],
    ['9 decimals', { rate: 95.123456789 }],
    ['a string', { rate: '95.5' }],
    ['missing', {}],
  ])('refuses a rate that is %s with 400', async (_label, body) => {
    const res = await admin(service.app, 'PUT', '/rates/RUB', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.any(String) });
    expect((await adminOk<{ rates: { currency: string; rate: number }[] }>(service.app, 'GET', '/rates')).rates).toContainEqual(
      expect.objectContaining({ currency: 'RUB', rate: 95.5 }),
    );
  });

  it('refuses a currency that is not a three-letter code', async () => {
    const res = await admin(service.app, 'PUT', '/rates/RUBLE', { rate: 1 });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION' });
  });

  it('fixes the rate on a payment at creation: a later rate change shows only on new payments', async () => {
    const merchant = await createMerchant(service.app);
    const before = await pay(merchant);
    expect(before.rate).toBe(95.5);
    try {
      await setRate(service.app, 'RUB', 100.25);
      expect((await getPayment(merchant, before.id)).rate).toBe(95.5);
      const after = await pay(merchant);
      expect(after.rate).toBe(100.25);
      expect((await getPayment(merchant, after.id)).rate).toBe(100.25);
    } finally {
      await setRate(service.app, 'RUB', 95.5);
    }
  });

  it("a terminal's own rate wins over the manual rate for that terminal only; DELETE removes it", async () => {
    const own = await createMerchant(service.app);
    const other = await createMerchant(service.app);
    const set = await admin(service.app, 'PUT', `/terminals/${own.terminalId}/rates/rub`, { rate: 90.12345678 });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ terminal_id: own.terminalId, currency: 'RUB', rate: 90.12345678 });
    expect((await adminOk<{ rates: unknown[] }>(service.app, 'GET', `/terminals/${own.terminalId}/rates`)).rates).toEqual([
      expect.objectContaining({ currency: 'RUB', rate: 90.12345678 }),
    ]);

    expect((await pay(own)).rate).toBe(90.12345678);
    expect((await pay(other)).rate).toBe(95.5);

    for (const rate of [0, -1, 1.123456789]) {
      const bad = await admin(service.app, 'PUT', `/terminals/${own.terminalId}/rates/RUB`, { rate });
      expect(bad.statusCode).toBe(400);
    }
    expect((await pay(own)).rate).toBe(90.12345678);

    const removed = await admin(service.app, 'DELETE', `/terminals/${own.terminalId}/rates/RUB`);
    expect(removed.statusCode).toBe(204);
    expect((await pay(own)).rate).toBe(95.5);
    const again = await admin(service.app, 'DELETE', `/terminals/${own.terminalId}/rates/RUB`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ error: 'NOT_FOUND' });

    expect(await auditRows('terminal.set_rate', own.terminalId)).toHaveLength(1);
    expect(await auditRows('terminal.remove_rate', own.terminalId)).toHaveLength(1);
  });

  it('a terminal rate on an unknown terminal is 404', async () => {
    const res = await admin(service.app, 'PUT', `/terminals/${randomUUID()}/rates/RUB`, { rate: 90 });
    expect(res.statusCode).toBe(404);
  });
});

/** A minimal merchant-presented EMV QR payload with a correct CRC. */
function emvPayload(): string {
  const body = '000201' + '010212' + '26160012ru.sbp.tests' + '5303643' + '5802RU' + '5904Shop' + '6006Moscow' + '6304';
  return body + crc16ccitt(body);
}

describe('requisites', () => {
  const valid = { type: 'card', bank: 'sberbank', holder: 'Ivan I.', currency: 'RUB', country: 'RU', methods: ['CARD'], min_amount: 0 };

  it('creates card, sbp, qr and sim requisites (201) with normalised values', async () => {
    const card = testCard();
    const spaced = card.replace(/(\d{4})(?=\d)/g, '$1 ');
    const created = await admin(service.app, 'POST', `/executors/${executor.id}/requisites`, { ...valid, value: spaced, max_amount: 50000 });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      id: expect.any(String),
      executor_id: executor.id,
      type: 'card',
      value: card,
      bank: 'sberbank',
      currency: 'RUB',
      country: 'RU',
      methods: ['CARD'],
      min_amount: 0,
      max_amount: 50000,
      is_active: true,
    });

    const phone = testPhone();
    const sbp = await adminOk(service.app, 'POST', `/executors/${executor.id}/requisites`, { ...valid, type: 'sbp', value: phone, methods: ['SBP'] });
    expect(sbp).toMatchObject({ type: 'sbp', value: phone });

    const qr = emvPayload();
    expect(await adminOk(service.app, 'POST', `/executors/${executor.id}/requisites`, { ...valid, type: 'qr', value: qr, methods: ['SBP_QR'] })).toMatchObject({
      value: qr,
    });

    const sim = await adminOk(service.app, 'POST', `/executors/${executor.id}/requisites`, {
      type: 'sim',
      value: testPhone('992'),
      bank: 'tcell',
      currency: 'TJS',
      country: 'TJ',
      methods: ['CROSS_BORDER_SIM'],
    });
    expect(sim).toMatchObject({ type: 'sim', bank: 'tcell', country: 'TJ', currency: 'TJS' });
  });

  it.each([
    ['a card failing Luhn', { value: '4111111111111112' }, /Luhn/],
    ['a card of 12 digits', { value: '411111111111' }, /card number/],
    ['a phone that is not a phone', { type: 'sbp', value: 'call me maybe', methods: ['SBP'] }, /phone/],
    ['a phone that is too short', { type: 'sbp', value: '+7912', methods: ['SBP'] }, /phone/],
    ['a qr that is not EMV', { type: 'qr', value: 'https://example.com/pay', methods: ['SBP_QR'] }, /EMV/],
    ['a qr with a wrong CRC', { type: 'qr', value: `${emvPayload().slice(0, -4)}0000`, methods: ['SBP_QR'] }, /CRC/],
    ['a card serving SBP', { methods: ['SBP'] }, /SBP/],
    ['a phone serving CARD', { type: 'sbp', value: '+79123456789', methods: ['CARD'] }, /CARD/],
    ['RU with KZT', { currency: 'KZT' }, /KZT/],
    ['an unsupported country', { country: 'US', currency: 'USD' }, /US/],
    ['an unknown bank', { bank: 'no_such_bank' }, /no_such_bank/],
    ['a bank of another country', { bank: 'kaspi' }, /kaspi/],
    [
      'a sim without an operator',
      { type: 'sim', value: '+992901234567', bank: null, currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] },
      /operator/,
    ],
    [
      'a sim with a bank instead of an operator',
      { type: 'sim', value: '+992901234567', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] },
      /operator/,
    ],
    ['max_amount below min_amount', { min_amount: 1000, max_amount: 500 }, /max_amount/],
    ['a negative min_amount', { min_amount: -1 }, /min_amount/],
    ['min_amount with 3 decimals', { min_amount: 1.005 }, /min_amount/],
    ['an unknown method', { methods: ['CASH'] }, /methods/],
    ['no methods', { methods: [] }, /methods/],
    ['an unknown type', { type: 'iban' }, /type/],
  ])('refuses %s with 400 VALIDATION naming the reason', async (_label, override, reason) => {
    const before = (await service.ctx.db.query('SELECT count(*)::int AS n FROM requisites')).rows[0].n;
    const res = await admin(service.app, 'POST', `/executors/${executor.id}/requisites`, { ...valid, value: testCard(), ...override });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(reason) });
    expect((await service.ctx.db.query('SELECT count(*)::int AS n FROM requisites')).rows[0].n).toBe(before);
  });

  it('answers 404 for requisites of an unknown executor', async () => {
    const res = await admin(service.app, 'POST', `/executors/${randomUUID()}/requisites`, { ...valid, value: testCard() });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('PATCH /requisites/:id {is_active: false} takes the requisite out of the cascade', async () => {
    // KZT has its own pool in this file: one card, so the effect of deactivating it is visible.
    await setRate(service.app, 'KZT', 480);
    const merchant = await createMerchant(service.app, { currency: 'KZT' });
    const trader = await createExecutor(service.app, 'KZ trader');
    const requisite = await createRequisite(service.app, trader.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi' });
    const first = await pay(merchant, 'KZT');
    expect(first.requisites.value).toBe(requisite.value);

    const res = await admin(service.app, 'PATCH', `/requisites/${requisite.id}`, { is_active: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: requisite.id, is_active: false, value: requisite.value, bank: 'kaspi' });

    const refused = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: nextAmount(), currency: 'KZT', method: 'CARD' });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'PAY_004' });

    const [row] = await auditRows('requisite.update', requisite.id);
    expect(row!.before).toMatchObject({ is_active: true });
    expect(row!.after).toMatchObject({ is_active: false });

    // A patch is validated as a whole requisite.
    const bad = await admin(service.app, 'PATCH', `/requisites/${requisite.id}`, { currency: 'RUB' });
    expect(bad.statusCode).toBe(400);
    const unknown = await admin(service.app, 'PATCH', `/requisites/${randomUUID()}`, { is_active: false });
    expect(unknown.statusCode).toBe(404);
  });

  it('keeps full card numbers out of the audit log', async () => {
    const card = testCard();
    const created = await adminOk<{ id: string }>(service.app, 'POST', `/executors/${executor.id}/requisites`, { ...valid, value: card });
    expect(await auditRows('requisite.create', created.id)).toHaveLength(1);
    expect((await tableText('audit_log')).includes(card)).toBe(false);
  });
});

describe('balance adjustments and the ledger', () => {
  it('credits and debits the available balance; an overdraft is 400 with data.available and changes nothing', async () => {
    const merchant = await createMerchant(service.app);
    const url = `/terminals/${merchant.terminalId}/adjustments`;

    const credit = await admin(service.app, 'POST', url, { amount: 100.5, reason: 'opening balance' });
    expect(credit.statusCode).toBe(201);
    expect(credit.json()).toEqual({ balance: 100.5, balance_frozen: 0 });

    const debit = await admin(service.app, 'POST', url, { amount: -50, reason: 'correction' });
    expect(debit.statusCode).toBe(201);
    expect(debit.json()).toEqual({ balance: 50.5, balance_frozen: 0 });

    const overdraft = await admin(service.app, 'POST', url, { amount: -1000, reason: 'too much' });
    expect(overdraft.statusCode).toBe(400);
    expect(overdraft.json()).toMatchObject({ error: 'VALIDATION', message: expect.any(String), data: { available: 50.5 } });
    expect(await balanceOf(merchant.terminalId)).toMatchObject({ balance: 50.5, balance_frozen: 0 });

    for (const body of [
      { amount: 0, reason: 'x' },
      { amount: 1.1234567, reason: 'x' },
      { amount: 5 },
      { amount: 5, reason: '' },
      { amount: '5', reason: 'x' },
    ]) {
      const res = await admin(service.app, 'POST', url, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'VALIDATION' });
    }
    expect(await balanceOf(merchant.terminalId)).toMatchObject({ balance: 50.5, balance_frozen: 0 });

    // 6 decimals is the USDT precision and is kept exactly.
    expect((await adminOk(service.app, 'POST', url, { amount: 0.000001, reason: 'dust' })).balance).toBe(50.500001);

    const rows = await auditRows('terminal.adjust_balance', merchant.terminalId);
    expect(rows).toHaveLength(3);
    expect(new Decimal(rows[0]!.before.balance).isZero()).toBe(true);
    expect(rows[0]!.after).toMatchObject({ amount: 100.5, reason: 'opening balance' });
    expect(new Decimal(rows[0]!.after.balance).eq('100.5')).toBe(true);
    expect(rows[1]!.after).toMatchObject({ amount: -50, reason: 'correction' });

    const unknown = await admin(service.app, 'POST', `/terminals/${randomUUID()}/adjustments`, { amount: 1, reason: 'x' });
    expect(unknown.statusCode).toBe(404);
  });

  it('keeps the ledger balanced: all entries sum to 0, each transaction sums to 0, terminal balances equal their entries', async () => {
    const merchant = await createMerchant(service.app);
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 12.345678, reason: 'a' });
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: -2.345678, reason: 'b' });

    const db = service.ctx.db;
    const total = await db.query<{ sum: string | null; n: number }>('SELECT sum(amount)::text AS sum, count(*)::int AS n FROM ledger_entries');
    expect(total.rows[0]!.n).toBeGreaterThanOrEqual(4);
    expect(new Decimal(total.rows[0]!.sum!).isZero()).toBe(true);

    const unbalanced = await db.query('SELECT transaction_id FROM ledger_entries GROUP BY transaction_id HAVING sum(amount) <> 0');
    expect(unbalanced.rows).toEqual([]);
    const single = await db.query('SELECT transaction_id FROM ledger_entries GROUP BY transaction_id HAVING count(*) < 2');
    expect(single.rows).toEqual([]);

    const drift = await db.query(
      `SELECT a.id, a.balance, coalesce(sum(e.amount), 0) AS entries
         FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
        WHERE a.terminal_id IS NOT NULL GROUP BY a.id HAVING a.balance <> coalesce(sum(e.amount), 0)`,
    );
    expect(drift.rows).toEqual([]);

    const mine = await db.query<{ balance: string }>(`SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`, [
      merchant.terminalId,
    ]);
    expect(new Decimal(mine.rows[0]!.balance).eq(10)).toBe(true);
    expect(await balanceOf(merchant.terminalId)).toMatchObject({ balance: 10, balance_frozen: 0 });
  });

  it("a terminal's statement lists its postings newest first with the balance after each, from the ledger", async () => {
    const merchant = await createMerchant(service.app);
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 12.5, reason: 'top-up' });
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: -2.25, reason: 'correction' });
    const statement = await adminOk<{ entries: Record<string, unknown>[]; total: number }>(service.app, 'GET', `/terminals/${merchant.terminalId}/statement`);
    expect(statement.total).toBe(2);
    expect(statement.entries).toEqual([
      expect.objectContaining({ account: 'available', amount: '-2.250000', balance_after: '10.250000', memo: 'correction' }),
      expect.objectContaining({ account: 'available', amount: '12.500000', balance_after: '12.500000', memo: 'top-up' }),
    ]);
    const paged = await adminOk<{ entries: unknown[] }>(service.app, 'GET', `/terminals/${merchant.terminalId}/statement?limit=1&offset=1`);
    expect(paged.entries).toHaveLength(1);
    expect((await admin(service.app, 'GET', `/terminals/${randomUUID()}/statement`)).statusCode).toBe(404);
  });

  it('the database itself refuses an unbalanced ledger transaction (at COMMIT) and a negative terminal balance', async () => {
    const merchant = await createMerchant(service.app);
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo) VALUES ('test', 'one-legged') RETURNING id`);
      const txId = rows[0]!.id;
      // The entry itself is accepted: the balance check is deferred to COMMIT.
      await client.query(
        `INSERT INTO ledger_entries (transaction_id, account_id, amount)
         SELECT $1, id, 5 FROM ledger_accounts WHERE kind = 'system_adjustments'`,
        [txId],
      );
      await expect(client.query('COMMIT')).rejects.toMatchObject({ code: '23514', constraint: 'ledger_transaction_balanced' });
      const left = await service.ctx.db.query('SELECT 1 FROM ledger_transactions WHERE id = $1', [txId]);
      expect(left.rows).toHaveLength(0);
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }

    await expect(
      service.ctx.db.query(`UPDATE ledger_accounts SET balance = -1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]),
    ).rejects.toMatchObject({ code: '23514', constraint: 'ledger_accounts_terminal_nonnegative' });
    await expect(
      service.ctx.db.query(`UPDATE ledger_accounts SET balance = -1 WHERE terminal_id = $1 AND kind = 'terminal_frozen'`, [merchant.terminalId]),
    ).rejects.toMatchObject({ code: '23514' });
    // Entries are history.
    await expect(service.ctx.db.query('UPDATE ledger_entries SET amount = amount WHERE id = (SELECT min(id) FROM ledger_entries)')).rejects.toThrow(
      /append-only/,
    );
    expect(await balanceOf(merchant.terminalId)).toMatchObject({ balance: 0, balance_frozen: 0 });
  });

  it('20 concurrent debits of 10 against a balance of 100 (two instances): exactly 10 succeed and the balance ends at 0', async () => {
    const merchant = await createMerchant(service.app);
    const url = `/terminals/${merchant.terminalId}/adjustments`;
    await adminOk(service.app, 'POST', url, { amount: 100, reason: 'float' });
    const other = await service.startAnother();

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => admin(i % 2 === 0 ? service.app : other.app, 'POST', url, { amount: -10, reason: `debit ${i}` })),
    );
    const ok = results.filter((r) => r.statusCode === 201);
    const refused = results.filter((r) => r.statusCode === 400);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.json()).toMatchObject({ error: 'VALIDATION', data: { available: expect.any(Number) } });
    for (const r of ok) expect((r.json() as { balance: number }).balance).toBeGreaterThanOrEqual(0);
    // Each success saw a distinct balance after its own debit: 90, 80, … 0.
    expect(ok.map((r) => (r.json() as { balance: number }).balance).sort((a, b) => a - b)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);

    expect(await balanceOf(merchant.terminalId)).toMatchObject({ balance: 0, balance_frozen: 0 });
    const { rows } = await service.ctx.db.query<{ sum: string; n: number }>(
      `SELECT sum(e.amount)::text AS sum, count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
        WHERE a.terminal_id = $1 AND a.kind = 'terminal_available'`,
      [merchant.terminalId],
    );
    expect(rows[0]).toEqual({ sum: '0.000000', n: 11 });
  });
});

describe('POST /admin/v1/payments/:id/cancel', () => {
  it('cancels a PENDING payment once; a second cancel is 400 PAY_008 with data.status; unknown ids are 404 PAY_006', async () => {
    const merchant = await createMerchant(service.app);
    const payment = await pay(merchant);
    expect(payment.status).toBe('PENDING');

    const res = await admin(service.app, 'POST', `/payments/${payment.id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: payment.id, status: 'CANCELLED', amount: payment.amount, ext_id: payment.ext_id });
    expect((await getPayment(merchant, payment.id)).status).toBe('CANCELLED');

    const again = await admin(service.app, 'POST', `/payments/${payment.id}/cancel`);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ error: 'PAY_008', message: expect.any(String), data: { status: 'CANCELLED' } });

    for (const id of [randomUUID(), 'not-a-uuid']) {
      const unknown = await admin(service.app, 'POST', `/payments/${id}/cancel`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ error: 'PAY_006' });
    }

    const rows = await auditRows('payment.cancel', payment.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ object_type: 'payment', before: { status: 'PENDING' }, after: { status: 'CANCELLED' } });
    expect(rows[0]!.actor).toBe('token');

    // The cancelled payment's requisite and amount are free again: the same amount can be handed out.
    const reused = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: payment.amount, currency: 'RUB', method: 'CARD' });
    expect(reused.status).toBe(200);
  });
});

describe('GET /admin/v1/payments', () => {
  it('caps limit at 1000 and refuses non-numeric values', async () => {
    for (const query of ['limit=5000', 'limit=1001', 'limit=abc', 'limit=0', 'limit=-1', 'offset=x', 'status=BOGUS', 'merchant_id=nope']) {
      const res = await admin(service.app, 'GET', `/payments?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.any(String) });
    }
    const max = await admin(service.app, 'GET', '/payments?limit=1000');
    expect(max.statusCode).toBe(200);
    expect(max.json()).toMatchObject({ limit: 1000, offset: 0 });
    expect((await adminOk(service.app, 'GET', '/payments')).limit).toBe(100);
  });

  it('filters by status and merchant', async () => {
    const merchant = await createMerchant(service.app);
    const pending = await pay(merchant);
    const cancelled = await pay(merchant);
    await adminOk(service.app, 'POST', `/payments/${cancelled.id}/cancel`);

    const all = await adminOk<{ payments: { id: string; status: string; merchant_id: string }[]; total: number }>(
      service.app,
      'GET',
      `/payments?merchant_id=${merchant.merchantId}`,
    );
    expect(all.payments.map((p) => p.id).sort()).toEqual([pending.id, cancelled.id].sort());
    expect(all.total).toBe(2);

    const onlyPending = await adminOk<{ payments: { id: string; status: string }[] }>(service.app, 'GET', '/payments?status=PENDING&limit=1000');
    expect(onlyPending.payments.length).toBeGreaterThan(0);
    expect(onlyPending.payments.every((p) => p.status === 'PENDING')).toBe(true);
    expect(onlyPending.payments.map((p) => p.id)).toContain(pending.id);
    expect(onlyPending.payments.map((p) => p.id)).not.toContain(cancelled.id);

    const mineCancelled = await adminOk<{ payments: { id: string }[] }>(service.app, 'GET', `/payments?status=CANCELLED&merchant_id=${merchant.merchantId}`);
    expect(mineCancelled.payments.map((p) => p.id)).toEqual([cancelled.id]);

    const page = await adminOk<{ payments: unknown[]; total: number }>(service.app, 'GET', `/payments?merchant_id=${merchant.merchantId}&limit=1&offset=1`);
    expect(page.payments).toHaveLength(1);
    expect(page.total).toBe(2);
  });
});

describe('bare operator POSTs', () => {
  it('take no body where every field is optional, and name the missing field where one is required', async () => {
    const merchant = await createMerchant(service.app);
    const rotated = await admin(service.app, 'POST', `/terminals/${merchant.terminalId}/api-key/rotate`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toMatchObject({ id: merchant.terminalId, api_key: expect.stringMatching(/^tk_/) });
    const secret = await admin(service.app, 'POST', `/merchants/${merchant.merchantId}/secret-key/rotate`);
    expect(secret.statusCode).toBe(200);
    const missing = await admin(service.app, 'POST', '/merchants');
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'VALIDATION', message: 'name is required' });
  });
});
