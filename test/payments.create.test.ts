import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc16ccitt } from '../src/lib/validators.js';
import {
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
  testPhone,
  uniqueExtId,
} from './helpers.js';

const tlv = (tag: string, value: string) => tag + String(value.length).padStart(2, '0') + value;
/** An SBP-style EMV QR payload with a correct CRC. */
function emv(): string {
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', tlv('00', 'ru.nspk.sbp') + tlv('01', 'A1B2C3D4')) +
    tlv('52', '0000') +
    tlv('53', '643') +
    tlv('58', 'RU') +
    tlv('59', 'Shop') +
    tlv('60', 'Moscow') +
    '6304';
  return body + crc16ccitt(body);
}

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };

beforeAll(async () => {
  service = await startTestService({ PAYMENT_TTL_SECONDS: '900' });
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { payin_rate: 2.5 });
  executor = await createExecutor(service.app);
});
afterAll(async () => service?.close());

describe('POST /v1/payments', () => {
  it('creates a PENDING payment with card requisites, the rate fixed at creation, payin_rate and a payment page URL', async () => {
    const requisite = await createRequisite(service.app, executor.id, { holder: 'Ivan P.' });
    const extId = uniqueExtId();
    const before = Date.now();
    const { status, body } = await createPayment(service.app, merchant, { ext_id: extId, amount: 1500, currency: 'RUB', method: 'CARD' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ext_id: extId,
      amount: 1500,
      currency: 'RUB',
      rate: 95.5,
      payin_rate: 2.5,
      terminal_id: merchant.terminalId,
      terminal_name: 'Main',
      status: 'PENDING',
      method: 'CARD',
      requisites: { type: 'card', value: requisite.value, bank: 'sberbank', bank_code: 'sberbank', bank_name: 'Сбербанк', holder: 'Ivan P.' },
    });
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // the page token: the creation time (12 hexadecimal digits of milliseconds), then 32 random characters
    expect(body.payment_url).toMatch(/^http:\/\/kassir\.test\/pay\/[0-9a-f]{12}[A-Za-z0-9_-]{32}$/);
    const ttl = Date.parse(body.valid_until) - Date.parse(body.created_at);
    expect(ttl).toBe(900_000);
    expect(Date.parse(body.created_at)).toBeGreaterThanOrEqual(before - 2000);
  });
});

describe('POST /v1/payments: ids in time order, page tokens random (issue 38)', () => {
  // A payment's id is a version 7 uuid (migration 060): its first 48 bits are the creation time in
  // milliseconds, so that new payments' (and their postings') index entries land on the indexes'
  // newest leaves. The page token starts with the time too, but the payer's credential is its
  // 192 random bits.
  it('gives payments created one after the other increasing ids that carry their creation time, and page tokens with 32 random characters after the time', async () => {
    const shop = await createMerchant(service.app, { payin_rate: 2.5 });
    const made: { id: string; token: string; created: number }[] = [];
    for (let i = 0; i < 6; i++) {
      await createRequisite(service.app, executor.id);
      const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 2001 + i, currency: 'RUB', method: 'CARD' });
      expect(status).toBe(200);
      made.push({ id: body.id, token: body.payment_url.split('/pay/')[1], created: Date.parse(body.created_at) });
    }
    for (let i = 1; i < made.length; i++) expect(made[i]!.id > made[i - 1]!.id, `${made[i]!.id} after ${made[i - 1]!.id}`).toBe(true);
    for (const { id, token, created } of made) {
      const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      // the id's time is the database's clock when the row was made, within the create's transaction
      expect(Math.abs(ms - created)).toBeLessThan(5_000);
      expect(Number.parseInt(token.slice(0, 12), 16)).toBeGreaterThan(created - 5_000);
      expect(token.slice(12)).toMatch(/^[A-Za-z0-9_-]{32}$/);
    }
    // The random parts share nothing: 6 tokens of 32 characters from 64 each, no two alike at any one place
    // more often than chance allows (a counter or a clock in them would repeat their characters).
    const tails = made.map((m) => m.token.slice(12));
    expect(new Set(tails).size).toBe(tails.length);
    let same = 0;
    for (let i = 1; i < tails.length; i++) for (let c = 0; c < 32; c++) if (tails[i]![c] === tails[i - 1]![c]) same++;
    expect(same).toBeLessThan(12);
  });
});

describe('uuid_v7() in the database (migration 060)', () => {
  it("is a version 7 uuid of the instant given, ordered by it to the microsecond, and the growing tables' id default", async () => {
    const { rows } = await service.ctx.db.query<{ a: string; b: string; c: string; now: string; ms: string }>(
      `SELECT uuid_v7('2026-11-28 07:00:00.123456+00')::text AS a, uuid_v7('2026-11-28 07:00:00.123457+00')::text AS b,
              uuid_v7('2026-11-28 07:00:00.124+00')::text AS c, uuid_v7()::text AS now,
              floor(extract(epoch FROM timestamptz '2026-11-28 07:00:00.123456+00') * 1000)::text AS ms`,
    );
    const { a, b, c, now, ms } = rows[0]!;
    for (const id of [a, b, c, now]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(a.replace(/-/g, '').slice(0, 12), 16)).toBe(Number(ms));
    expect(a < b && b < c && c < now).toBe(true);
    const { rows: defaults } = await service.ctx.db.query<{ table: string }>(
      `SELECT table_name AS table FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'id' AND column_default = 'uuid_v7()'
          AND table_name IN ('payments', 'ledger_transactions', 'notifications', 'webhook_events', 'device_messages', 'payouts', 'withdrawals', 'disputes')
        ORDER BY 1`,
    );
    expect(defaults.map((d) => d.table)).toEqual([
      'device_messages',
      'disputes',
      'ledger_transactions',
      'notifications',
      'payments',
      'payouts',
      'webhook_events',
      'withdrawals',
    ]);
  });
});

describe('POST /v1/payments: the rate in force', () => {
  // The rates (and routes) come with the caller's identity, read on every create: nothing cached.
  it("takes the operator's rate and the terminal's own rate as they are at the moment of the create", async () => {
    const shop = await createMerchant(service.app, { payin_rate: 2.5 });
    let amount = 1000;
    const create = async () => {
      await createRequisite(service.app, executor.id);
      const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: ++amount, currency: 'RUB', method: 'CARD' });
      expect(status).toBe(200);
      return body.rate;
    };
    try {
      expect(await create()).toBe(95.5);
      await setRate(service.app, 'RUB', 96.25);
      expect(await create()).toBe(96.25);
      await adminOk(service.app, 'PUT', `/terminals/${shop.terminalId}/rates/RUB`, { rate: 99.1 });
      expect(await create()).toBe(99.1);
      await adminOk(service.app, 'DELETE', `/terminals/${shop.terminalId}/rates/RUB`);
      expect(await create()).toBe(96.25);
    } finally {
      await setRate(service.app, 'RUB', 95.5);
    }
  });
});

describe('POST /v1/payments: domestic methods', () => {
  it('defaults the method to CARD and the currency to the terminal currency', async () => {
    await createRequisite(service.app, executor.id);
    const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 777 });
    expect(status).toBe(200);
    expect(body).toMatchObject({ method: 'CARD', currency: 'RUB', requisites: { type: 'card' } });
  });

  it('hands out an SBP phone, an SBP QR (EMV string) and a SIM number for their methods', async () => {
    const phone = testPhone();
    await createRequisite(service.app, executor.id, { type: 'sbp', value: phone, bank: 'tinkoff', methods: ['SBP'] });
    const qr = emv();
    await createRequisite(service.app, executor.id, { type: 'qr', value: qr, bank: 'vtb', methods: ['SBP_QR'] });
    const sim = testPhone();
    await createRequisite(service.app, executor.id, { type: 'sim', value: sim, bank: 'megafon', methods: ['SIM'], holder: '' });

    const sbp = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 501, method: 'SBP' });
    expect(sbp.status).toBe(200);
    expect(sbp.body.requisites).toMatchObject({ type: 'sbp', value: phone, bank: 'tinkoff', bank_name: 'Т-Банк' });
    const qrPayment = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 502, method: 'SBP_QR' });
    expect(qrPayment.status).toBe(200);
    expect(qrPayment.body.requisites).toMatchObject({ type: 'qr', value: qr });
    const simPayment = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 503, method: 'SIM' });
    expect(simPayment.status).toBe(200);
    expect(simPayment.body.requisites).toMatchObject({ type: 'sim', value: sim, bank: 'megafon', bank_name: 'МегаФон' });
  });

  it('accepts the bounds of the RUB range and refuses what lies outside with PAY_002', async () => {
    for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
    expect((await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 100 })).status).toBe(200);
    expect((await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 300000 })).status).toBe(200);
    expect((await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 100.55 })).status).toBe(200);
    for (const amount of [99.99, 300000.01, 0, -5, 150.123]) {
      const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount });
      expect(status, `amount ${amount}`).toBe(400);
      expect(body.error).toBe('PAY_002');
      expect(body.message).toMatch(/amount/);
    }
  });

  it('refuses missing or mistyped fields with PAY_002 naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ amount: 500 }, /ext_id is required/],
      [{ ext_id: uniqueExtId() }, /amount is required/],
      [{ ext_id: uniqueExtId(), amount: '500' }, /amount must be a number/],
      [{ ext_id: 42, amount: 500 }, /ext_id must be a string/],
      [{ ext_id: 'x'.repeat(256), amount: 500 }, /ext_id must be at most 255/],
      [{ ext_id: '', amount: 500 }, /ext_id must not be empty/],
      [{ ext_id: uniqueExtId(), amount: 500, method: 'BITCOIN' }, /Unsupported method BITCOIN/],
      [{ ext_id: uniqueExtId(), amount: 500, method: 'PHONE' }, /Method PHONE is not available for RUB/],
      [{ ext_id: uniqueExtId(), amount: 500, currency: 'USD' }, /Unsupported currency USD/],
      [{ ext_id: uniqueExtId(), amount: 500, currency: 'KZT' }, /differs from the terminal currency RUB/],
      [{ ext_id: uniqueExtId(), amount: 500, bank: 'no_such_bank' }, /Unknown bank code no_such_bank/],
      [{ ext_id: uniqueExtId(), amount: 500, bank: 'tcell' }, /operator codes are for CROSS_BORDER_SIM/],
      [{ ext_id: uniqueExtId(), amount: 500, country: 'KZ' }, /Country KZ does not fit method CARD/],
      [{ ext_id: uniqueExtId(), amount: 500, country: 'US' }, /Unsupported country US/],
      [{ ext_id: uniqueExtId(), amount: 500, notify_url: 'ftp://example.com/x' }, /notify_url must be an absolute http\(s\) URL/],
      [{ ext_id: uniqueExtId(), amount: 500, notify_url: 'not a url' }, /notify_url/],
    ];
    for (const [body, message] of cases) {
      const res = await createPayment(service.app, merchant, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('PAY_002');
      expect(res.body.message).toMatch(message);
    }
    const res = await signed(service.app, merchant, 'POST', '/v1/payments', '[1,2]');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('PAY_002');
  });

  it('answers PAY_003 (409) with data.ext_id for a repeated ext_id, per merchant only', async () => {
    await createRequisite(service.app, executor.id);
    const extId = uniqueExtId();
    expect((await createPayment(service.app, merchant, { ext_id: extId, amount: 1234 })).status).toBe(200);
    const again = await createPayment(service.app, merchant, { ext_id: extId, amount: 4321 });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'PAY_003', message: expect.stringContaining(extId), data: { ext_id: extId } });
    // Another merchant may use the same order id.
    const other = await createMerchant(service.app);
    expect((await createPayment(service.app, other, { ext_id: extId, amount: 1235 })).status).toBe(200);
  });

  it('answers PAY_004 (503) when no requisite fits, naming what was asked for', async () => {
    const { status, body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 600, bank: 'rncb' });
    expect(status).toBe(503);
    expect(body).toMatchObject({ error: 'PAY_004', data: { currency: 'RUB', method: 'CARD', bank: 'rncb' } });
  });

  it('answers PAY_005 (429) beyond SAME_AMOUNT_LIMIT pending payments of one amount on the terminal', async () => {
    for (let i = 0; i < 4; i++) await createRequisite(service.app, executor.id);
    const limited = await createMerchant(service.app);
    for (let i = 0; i < 3; i++) expect((await createPayment(service.app, limited, { ext_id: uniqueExtId(), amount: 4444 })).status).toBe(200);
    const fourth = await createPayment(service.app, limited, { ext_id: uniqueExtId(), amount: 4444 });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({ error: 'PAY_005', data: { amount: 4444, pending: 3 } });
    // Another amount, or another terminal, is not limited.
    expect((await createPayment(service.app, limited, { ext_id: uniqueExtId(), amount: 4445 })).status).toBe(200);
  });

  it('keeps client_id, notify_url and notification_token on the payment', async () => {
    await createRequisite(service.app, executor.id);
    const { body } = await createPayment(service.app, merchant, {
      ext_id: uniqueExtId(),
      amount: 999,
      client_id: 'payer-17',
      notify_url: 'https://shop.example/hooks/kassir',
      notification_token: 'tok-123',
    });
    const { rows } = await service.ctx.db.query('SELECT client_id, notify_url, notification_token FROM payments WHERE id = $1', [body.id]);
    expect(rows[0]).toEqual({ client_id: 'payer-17', notify_url: 'https://shop.example/hooks/kassir', notification_token: 'tok-123' });
    const admin = await adminOk<{ client_id: string }>(service.app, 'GET', `/payments/${body.id}`);
    expect(admin.client_id).toBe('payer-17');
  });

  it('gives every payment its own unguessable page token', async () => {
    for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
    const urls = new Set<string>();
    for (let i = 0; i < 3; i++) urls.add((await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 3100 + i })).body.payment_url);
    expect(urls.size).toBe(3);
    for (const url of urls) expect(url.split('/').pop()!.length).toBeGreaterThanOrEqual(32);
  });
});

describe('POST /v1/payments: SIM payments and codes that name a bank and an operator', () => {
  it('files a sim requisite given mts under the operator МТС (mts_mobile), not МТС Банк', async () => {
    const sim = await createRequisite(service.app, executor.id, { type: 'sim', value: testPhone(), bank: 'mts', methods: ['SIM'], holder: '' });
    const stored = await adminOk<{ bank: string }>(service.app, 'GET', `/requisites/${sim.id}`);
    expect(stored.bank).toBe('mts_mobile');
  });

  it('takes mts in a SIM payment as the operator and hands out an МТС number', async () => {
    const shop = await createMerchant(service.app);
    const trader = await createExecutor(service.app, 'SIM trader');
    await createRequisite(service.app, trader.id, { type: 'sim', value: testPhone(), bank: 'mts_mobile', methods: ['SIM'], holder: '' });
    await createRequisite(service.app, trader.id, { type: 'sim', value: testPhone(), bank: 'beeline', methods: ['SIM'], holder: '' });
    const res = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 611, method: 'SIM', bank: 'mts' });
    expect(res.status).toBe(200);
    // Other tests of this file add sim numbers too: the bank decides, whichever МТС number comes.
    expect(res.body.requisites).toMatchObject({ type: 'sim', bank: 'mts_mobile', bank_name: 'МТС' });
  });

  it('filters a SIM payment by an operator code, and refuses a plain bank code for it', async () => {
    const shop = await createMerchant(service.app);
    const trader = await createExecutor(service.app, 'Beeline trader');
    await createRequisite(service.app, trader.id, { type: 'sim', value: testPhone(), bank: 'beeline', methods: ['SIM'], holder: '' });
    const ok = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 612, method: 'SIM', bank: 'beeline' });
    expect(ok.status).toBe(200);
    expect(ok.body.requisites).toMatchObject({ type: 'sim', bank: 'beeline', bank_name: 'Билайн' });
    const bank = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 613, method: 'SIM', bank: 'sberbank' });
    expect(bank.status).toBe(400);
    expect(bank.body).toMatchObject({ error: 'PAY_002', message: 'For SIM, bank must be a mobile operator code; sberbank is a bank' });
  });

  it('keeps mts meaning МТС Банк for a card payment', async () => {
    const shop = await createMerchant(service.app);
    const trader = await createExecutor(service.app, 'MTS Bank trader');
    const card = await createRequisite(service.app, trader.id, { bank: 'mts', methods: ['CARD'] });
    const res = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount: 614, method: 'CARD', bank: 'mts' });
    expect(res.status).toBe(200);
    expect(res.body.requisites).toMatchObject({ type: 'card', value: card.value, bank: 'mts', bank_name: 'МТС Банк' });
  });
});

describe('GET /v1/payments/{id} and /by-ext-id/{extId}', () => {
  it('returns the same Payment object both ways, and PAY_006 for unknown ids', async () => {
    await createRequisite(service.app, executor.id);
    const extId = uniqueExtId('read');
    const created = (await createPayment(service.app, merchant, { ext_id: extId, amount: 2500 })).body;
    const byId = await signed(service.app, merchant, 'GET', `/v1/payments/${created.id}`);
    const byExt = await signed(service.app, merchant, 'GET', `/v1/payments/by-ext-id/${encodeURIComponent(extId)}`);
    expect(byId.statusCode).toBe(200);
    expect(byId.json()).toEqual(created);
    expect(byExt.json()).toEqual(created);
    for (const url of ['/v1/payments/7d0c5e8e-0000-4000-8000-000000000000', '/v1/payments/not-a-uuid', '/v1/payments/by-ext-id/nope']) {
      const res = await signed(service.app, merchant, 'GET', url);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('PAY_006');
    }
  });

  it("never shows one merchant's payment to another (PAY_006), by id or by ext_id", async () => {
    await createRequisite(service.app, executor.id);
    const extId = uniqueExtId('mine');
    const created = (await createPayment(service.app, merchant, { ext_id: extId, amount: 2600 })).body;
    const intruder = await createMerchant(service.app);
    for (const url of [`/v1/payments/${created.id}`, `/v1/payments/by-ext-id/${extId}`]) {
      const res = await signed(service.app, intruder, 'GET', url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: 'PAY_006' });
    }
  });

  it('lets every terminal of the merchant read the payment (the merchant owns it)', async () => {
    await createRequisite(service.app, executor.id);
    const created = (await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 2700 })).body;
    const second = await adminOk<{ api_key: string }>(service.app, 'POST', `/merchants/${merchant.merchantId}/terminals`, { name: 'Second', currency: 'RUB' });
    const res = await signed(service.app, { apiKey: second.api_key, secretKey: merchant.secretKey }, 'GET', `/v1/payments/${created.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().terminal_name).toBe('Main');
  });
});
