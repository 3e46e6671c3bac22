/**
 * The executor API (`/executor/v1`) and notification matching (issue 4, item 1), through HTTP
 * (app.inject) against a real database: executor authentication, ownership of requisites,
 * matching on the payer's amount (the local amount for cross-border), reading the amount from the
 * bank's text, idempotent repeats, unmatched and late notifications, the operator's link/resolve,
 * validation, and a race of many notifications (repeats included) over two instances.
 *
 * Expected credits are computed here with decimal.js from DESIGN.md decision 11, never with the
 * service's own helpers: amount / rate × (1 − payin_rate / 100), rounded once, half up, to 6 places.
 */

import { Decimal } from 'decimal.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  type RequisiteInput,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

// Enough precision that nothing is rounded before the one rounding the formula implies.
const Exact = Decimal.clone({ precision: 80 });

const RUB_RATE = '95.5';
const TJS_RATE = '10.95';
const PAYIN_RATE = '3.7';

function expectedCredit(amount: Decimal.Value, rate: Decimal.Value = RUB_RATE, payinRate: Decimal.Value = PAYIN_RATE): Decimal {
  return new Exact(amount)
    .div(rate)
    .times(new Exact(1).minus(new Exact(payinRate).div(100)))
    .toDecimalPlaces(6, Decimal.ROUND_HALF_UP);
}

type Executor = { id: string; token: string };

let service: TestService;
let merchant: MerchantCredentials;
let executor: Executor | undefined;

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', Number(RUB_RATE));
  await setRate(service.app, 'TJS', Number(TJS_RATE));
  merchant = await createMerchant(service.app, { payin_rate: Number(PAYIN_RATE) });
});
afterAll(async () => service?.close());

/**
 * A fresh executor with one requisite; the previous executor is deactivated so that its
 * requisites leave the pool and the next payment lands on the new requisite.
 */
async function fresh(input: RequisiteInput = {}): Promise<{ executor: Executor; requisite: { id: string; value: string } }> {
  if (executor) await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { is_active: false });
  executor = await createExecutor(service.app, 'Notifications trader');
  const requisite = await createRequisite(service.app, executor.id, input);
  return { executor, requisite };
}

function notify(app: FastifyInstance, token: string, body: unknown): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/executor/v1/notifications',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Creates a payment and checks that it landed on the expected requisite. */
async function pay(amount: number, requisiteValue: string, extra: Record<string, unknown> = {}, creds = merchant) {
  const { status, body } = await createPayment(service.app, creds, { ext_id: uniqueExtId('ntf'), amount, ...extra });
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.requisites.value).toBe(requisiteValue);
  return body as { id: string; amount: number; rate: number; valid_until: string; created_at: string; requisites: Record<string, unknown> };
}

async function paymentStatus(id: string, creds = merchant): Promise<string> {
  const res = await signed(service.app, creds, 'GET', `/v1/payments/${id}`);
  expect(res.statusCode).toBe(200);
  return res.json().status;
}

async function balance(creds = merchant): Promise<Decimal> {
  const res = await signed(service.app, creds, 'GET', '/v1/balance');
  expect(res.statusCode).toBe(200);
  return new Exact(res.json().balance);
}

async function payinPostings(paymentId: string, db = service.ctx.db): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'payin' AND ref_id = $1`, [paymentId]);
  return rows[0]!.n;
}

async function notificationsOn(requisiteId: string, db = service.ctx.db): Promise<{ status: string; payment_id: string | null }[]> {
  const { rows } = await db.query('SELECT status, payment_id FROM notifications WHERE requisite_id = $1 ORDER BY created_at', [requisiteId]);
  return rows;
}

async function expectError(res: LightMyRequestResponse, status: number, error: string): Promise<Record<string, any>> {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe('string');
  return body;
}

describe('executor authentication', () => {
  it('refuses a missing or malformed bearer (401 AUTH_001) and an unknown token (401 AUTH_002) on every route', async () => {
    const { requisite } = await fresh();
    const body = JSON.stringify({ requisite_id: requisite.id, amount: 100 });
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer' }]) {
      await expectError(
        await service.app.inject({
          method: 'POST',
          url: '/executor/v1/notifications',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: body,
        }),
        401,
        'AUTH_001',
      );
      await expectError(await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers }), 401, 'AUTH_001');
    }
    await expectError(await notify(service.app, 'ex_not-a-real-token', { requisite_id: requisite.id, amount: 100 }), 401, 'AUTH_002');
    await expectError(
      await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: 'Bearer ex_not-a-real-token' } }),
      401,
      'AUTH_002',
    );
    // The operator's token is not an executor's.
    await expectError(await notify(service.app, 'test-admin-token', { requisite_id: requisite.id, amount: 100 }), 401, 'AUTH_002');
    expect(await notificationsOn(requisite.id)).toEqual([]);
  });

  it('refuses a deactivated executor with 403 AUTH_003 and completes nothing', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(2100, requisite.value);
    await adminOk(service.app, 'PATCH', `/executors/${ex.id}`, { is_active: false });

    await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 2100 }), 403, 'AUTH_003');
    await expectError(
      await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: `Bearer ${ex.token}` } }),
      403,
      'AUTH_003',
    );
    expect(await paymentStatus(payment.id)).toBe('PENDING');
    expect(await payinPostings(payment.id)).toBe(0);
  });

  it('serves a reactivated executor again', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(2100, requisite.value);
    await adminOk(service.app, 'PATCH', `/executors/${ex.id}`, { is_active: false });
    await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 2100 }), 403, 'AUTH_003');

    await adminOk(service.app, 'PATCH', `/executors/${ex.id}`, { is_active: true });
    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 2100 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
  });

  it('token rotation: the old token is refused at once, the new one works', async () => {
    const { executor: ex, requisite } = await fresh();
    const rotated = await adminOk<{ id: string; token: string }>(service.app, 'POST', `/executors/${ex.id}/token/rotate`);
    expect(rotated.token).not.toBe(ex.token);

    await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 100 }), 401, 'AUTH_002');
    await expectError(
      await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: `Bearer ${ex.token}` } }),
      401,
      'AUTH_002',
    );
    const list = await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: `Bearer ${rotated.token}` } });
    expect(list.statusCode).toBe(200);
    expect(list.json().requisites.map((r: { id: string }) => r.id)).toEqual([requisite.id]);
    executor = { id: ex.id, token: rotated.token };

    // Rotating an unknown executor is 404.
    expect((await admin(service.app, 'POST', '/executors/00000000-0000-4000-8000-000000000000/token/rotate')).statusCode).toBe(404);
  });
});

describe('an executor sees and reports only its own requisites', () => {
  it("reporting on another executor's requisite is 404 NOT_FOUND and completes nothing", async () => {
    const { requisite } = await fresh();
    const payment = await pay(3300, requisite.value);
    const other = await createExecutor(service.app, 'Other trader');

    const res = await notify(service.app, other.token, { requisite_id: requisite.id, amount: 3300, received_at: new Date().toISOString() });
    await expectError(res, 404, 'NOT_FOUND');
    expect(await paymentStatus(payment.id)).toBe('PENDING');
    expect(await payinPostings(payment.id)).toBe(0);
    expect(await notificationsOn(requisite.id)).toEqual([]);

    // A requisite that does not exist at all answers the same.
    await expectError(await notify(service.app, other.token, { requisite_id: '00000000-0000-4000-8000-000000000000', amount: 3300 }), 404, 'NOT_FOUND');
    await adminOk(service.app, 'PATCH', `/executors/${other.id}`, { is_active: false });
  });

  it("a repeat of another executor's report is 404 too, not that report's answer (the requisite checked in the completing statement, issue 38)", async () => {
    const { executor: owner, requisite } = await fresh();
    const payment = await pay(3400, requisite.value);
    const report = { requisite_id: requisite.id, amount: 3400, received_at: new Date().toISOString() };
    const first = await notify(service.app, owner.token, report);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ matched: true, payment_id: payment.id, duplicate: false });
    const other = await createExecutor(service.app, 'Copycat', { deposit: 0 });
    await expectError(await notify(service.app, other.token, report), 404, 'NOT_FOUND');
    // The owner's repeat is answered as the first.
    const again = await notify(service.app, owner.token, report);
    expect(again.json()).toMatchObject({ matched: true, payment_id: payment.id, duplicate: true });
    expect(await notificationsOn(requisite.id)).toEqual([{ status: 'matched', payment_id: payment.id }]);
    await adminOk(service.app, 'PATCH', `/executors/${other.id}`, { is_active: false });
  });

  it("refuses an amount with more decimal places than the requisite's currency takes, read in the completing statement (VND: none)", async () => {
    const { executor: ex, requisite } = await fresh();
    await service.ctx.db.query(`UPDATE requisites SET currency = 'VND' WHERE id = $1`, [requisite.id]);
    for (const amount of [265969.5, 265969.25]) {
      const refused = await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, amount }), 400, 'VALIDATION');
      expect(refused.message).toMatch(/at most 0 decimal places/);
    }
    expect(await notificationsOn(requisite.id)).toEqual([]);
    // A whole amount is taken (no payment: kept unmatched).
    const whole = await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 265969 });
    expect(whole.statusCode, whole.body).toBe(200);
    expect(whole.json()).toMatchObject({ matched: false, status: 'unmatched' });
  });

  it('GET /executor/v1/requisites lists exactly its own requisites', async () => {
    const { executor: ex, requisite } = await fresh();
    const second = await createRequisite(service.app, ex.id, { type: 'sbp', methods: ['SBP'], bank: 'tinkoff' });
    const other = await createExecutor(service.app, 'Neighbour');
    const foreign = await createRequisite(service.app, other.id, { is_active: false });

    const mine = await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: `Bearer ${ex.token}` } });
    expect(mine.statusCode).toBe(200);
    const listed = mine.json().requisites as { id: string; value: string }[];
    expect(listed.map((r) => r.id).sort()).toEqual([requisite.id, second.id].sort());
    expect(listed.find((r) => r.id === second.id)?.value).toBe(second.value);

    const theirs = await service.app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: `Bearer ${other.token}` } });
    expect(theirs.json().requisites.map((r: { id: string }) => r.id)).toEqual([foreign.id]);
    await adminOk(service.app, 'PATCH', `/executors/${other.id}`, { is_active: false });
  });
});

describe('matching a notification to the pending payment', () => {
  it('completes the one PENDING payment with that amount on that requisite and credits the terminal exactly', async () => {
    const { executor: ex, requisite } = await fresh();
    const other = await pay(1000, requisite.value);
    const payment = await pay(1234.56, requisite.value);
    const before = await balance();

    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 1234.56, received_at: new Date().toISOString() });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json();
    expect(answer).toEqual({ matched: true, payment_id: payment.id, notification_id: expect.any(String), status: 'matched', duplicate: false });

    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
    // Another amount on the same requisite is another payment: untouched.
    expect(await paymentStatus(other.id)).toBe('PENDING');
    const { rows } = await service.ctx.db.query('SELECT completed_at, received_amount::text FROM payments WHERE id = $1', [payment.id]);
    expect(rows[0].completed_at).toBeInstanceOf(Date);
    expect(rows[0].received_amount).toBe('1234.56');

    const credit = expectedCredit('1234.56');
    // 1234.56 / 95.5 × 0.963 = 12.4490186…
    expect(credit.toFixed(6)).toBe('12.449019');
    expect((await balance()).minus(before).toFixed(6)).toBe(credit.toFixed(6));
    expect(await payinPostings(payment.id)).toBe(1);

    const stored = await adminOk(service.app, 'GET', `/notifications/${answer.notification_id}`);
    expect(stored).toMatchObject({
      status: 'matched',
      payment_id: payment.id,
      requisite_id: requisite.id,
      executor_id: ex.id,
      amount: 1234.56,
      candidate_payment_id: null,
    });
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('cross-border: matches on the local amount (TJS) and credits from the order amount and the order rate', async () => {
    const { executor: ex, requisite } = await fresh({ type: 'card', bank: 'alif_bank', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const payment = await pay(5000, requisite.value, { currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    // 5000 / 95.5 × 10.95 = 573.298… → 573.30 TJS for the payer.
    const local = new Exact(5000).div(RUB_RATE).times(TJS_RATE).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
    expect(payment.requisites).toMatchObject({ currency: 'TJS', amount_local: Number(local.toFixed(2)) });
    const before = await balance();

    // The order amount is not what arrives on a TJS card.
    const wrong = await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 5000 });
    expect(wrong.statusCode, wrong.body).toBe(200);
    expect(wrong.json()).toMatchObject({ matched: false, payment_id: null, status: 'unmatched' });
    expect(await paymentStatus(payment.id)).toBe('PENDING');

    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, amount: Number(local.toFixed(2)) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
    // Credited in USDT from 5000 RUB at the order's rate, not from 573.30 TJS.
    expect((await balance()).minus(before).toFixed(6)).toBe(expectedCredit(5000).toFixed(6));
    expect(await payinPostings(payment.id)).toBe(1);
  });
});

describe('reading the amount from the notification text', () => {
  const SBER_SMS = 'СЧЁТ1234 12:34 Перевод из Т-Банк +1 500р от ИВАН И. Баланс: 25 300.50р';

  it("parses a Sber SMS on a Sber requisite (the requisite's bank as hint)", async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'sberbank' });
    const payment = await pay(1500, requisite.value);
    const before = await balance();
    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, text: SBER_SMS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id, duplicate: false });
    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
    expect((await balance()).minus(before).toFixed(6)).toBe(expectedCredit(1500).toFixed(6));
    const stored = await adminOk(service.app, 'GET', `/notifications/${res.json().notification_id}`);
    expect(stored).toMatchObject({ amount: 1500, text: SBER_SMS, parsed_bank: 'sberbank' });
  });

  it('parses without a hint (requisite with no bank) and with a misleading hint (T-Bank requisite, Sber text)', async () => {
    const noBank = await fresh({ bank: null });
    const push = 'Перевод от Ивана Ивановича И.\n+2\u00A0750,50\u00A0₽\nСберКарта •• 1234. Баланс 25\u00A0300,50\u00A0₽';
    const first = await pay(2750.5, noBank.requisite.value);
    const res1 = await notify(service.app, noBank.executor.token, { requisite_id: noBank.requisite.id, text: push });
    expect(res1.statusCode, res1.body).toBe(200);
    expect(res1.json()).toMatchObject({ matched: true, payment_id: first.id });

    const tbank = await fresh({ bank: 'tinkoff' });
    const second = await pay(1500, tbank.requisite.value);
    const res2 = await notify(service.app, tbank.executor.token, { requisite_id: tbank.requisite.id, text: SBER_SMS });
    expect(res2.statusCode, res2.body).toBe(200);
    expect(res2.json()).toMatchObject({ matched: true, payment_id: second.id });
    expect((await adminOk(service.app, 'GET', `/notifications/${res2.json().notification_id}`)).parsed_bank).toBe('sberbank');

    // And a T-Bank SMS on the T-Bank requisite.
    const third = await pay(236, tbank.requisite.value);
    const res3 = await notify(service.app, tbank.executor.token, {
      requisite_id: tbank.requisite.id,
      text: 'Пополнение, счет RUB. 236 RUB. Доступно 713.79 RUB',
    });
    expect(res3.json()).toMatchObject({ matched: true, payment_id: third.id });
    expect(await paymentStatus(third.id)).toBe('COMPLETED');
  });

  it('reads an MTS Bank "Перевод на карту … Остаток …; *NNNN" SMS (it was refused as unrecognised)', async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'mts' });
    const payment = await pay(5000, requisite.value);
    const text = 'Перевод на карту 5 000,00 RUB PEREVOD DR BANK Остаток: 5 122,50 RUB; *9131';
    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, text });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
    expect((await adminOk(service.app, 'GET', `/notifications/${res.json().notification_id}`)).parsed_bank).toBe('mts');
  });

  it('cross-border: a somoni text on a TJS requisite matches the local amount; roubles on it are refused', async () => {
    const { executor: ex, requisite } = await fresh({ type: 'card', bank: 'alif_bank', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const payment = await pay(5000, requisite.value, { currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    const local = new Exact(5000).div(RUB_RATE).times(TJS_RATE).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2);
    expect(local).toBe('573.30');

    // The payer's roubles as a rouble account would report them: not this requisite's currency.
    const roubles = 'Карта *1234: поступление 5 000,00 RUB из России. Баланс: 12 000,00 RUB';
    const refused = await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, text: roubles }), 400, 'VALIDATION');
    expect(refused.message).toMatch(/5000\.00 RUB.*receives TJS/);
    expect(refused.data).toEqual({ currency: 'RUB', requisite_currency: 'TJS' });
    expect(await notificationsOn(requisite.id)).toEqual([]);
    expect(await paymentStatus(payment.id)).toBe('PENDING');

    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, text: `Вы получили перевод ${local} смн. от Сафаров Ф.` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
  });

  it('a text in another currency than a RUB requisite is refused, naming both', async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'sberbank' });
    await pay(500, requisite.value);
    const body = await expectError(
      await notify(service.app, ex.token, { requisite_id: requisite.id, text: 'Kaspi.kz | Поступление 500 ₸ от Иван И.' }),
      400,
      'VALIDATION',
    );
    expect(body.message).toMatch(/500\.00 KZT.*receives RUB/);
    expect(await notificationsOn(requisite.id)).toEqual([]);
  });

  it('an explicit amount wins over the text', async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'sberbank' });
    const payment = await pay(1499, requisite.value);
    const res = await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 1499, text: SBER_SMS });
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
  });

  it('unparseable text without amount is 400 telling to send amount, and stores nothing', async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'sberbank' });
    const payment = await pay(500, requisite.value);
    for (const text of [
      'MIR-1234 19:02 Покупка 500р ПЯТЁРОЧКА Баланс: 12 345.67р',
      'СЧЁТ1234 18:26 перевод 500р Баланс: 3 879.81р',
      'Никому не сообщайте код 1234. Перевод 500р',
      'hello',
    ]) {
      const body = await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, text }), 400, 'VALIDATION');
      expect(body.message).toMatch(/send amount/i);
    }
    expect(await paymentStatus(payment.id)).toBe('PENDING');
    expect(await notificationsOn(requisite.id)).toEqual([]);
  });

  it('neither amount nor text is 400, and stores nothing', async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'sberbank' });
    const payment = await pay(500, requisite.value);
    await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id }), 400, 'VALIDATION');
    await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, text: '' }), 400, 'VALIDATION');
    await expectError(await notify(service.app, ex.token, { requisite_id: requisite.id, received_at: new Date().toISOString() }), 400, 'VALIDATION');
    expect(await paymentStatus(payment.id)).toBe('PENDING');
    expect(await notificationsOn(requisite.id)).toEqual([]);
  });
});

describe('repeats of one notification are idempotent', () => {
  it('same requisite, amount and received_at: same answer, one credit, one matched row', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(4321.09, requisite.value);
    const before = await balance();
    const receivedAt = new Date(Date.now() - 5000);
    const body = { requisite_id: requisite.id, amount: 4321.09, received_at: receivedAt.toISOString() };

    const first = (await notify(service.app, ex.token, body)).json();
    expect(first).toMatchObject({ matched: true, payment_id: payment.id, duplicate: false });
    for (const repeat of [body, body, { ...body, received_at: receivedAt.toISOString().replace('Z', '+00:00') }]) {
      const res = await notify(service.app, ex.token, repeat);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ ...first, duplicate: true });
    }
    expect(await payinPostings(payment.id)).toBe(1);
    expect((await balance()).minus(before).toFixed(6)).toBe(expectedCredit('4321.09').toFixed(6));
    expect(await notificationsOn(requisite.id)).toEqual([{ status: 'matched', payment_id: payment.id }]);

    // Another transfer of the same amount at another time is a new notification: nothing left to match.
    const later = await notify(service.app, ex.token, { ...body, received_at: new Date().toISOString() });
    expect(later.json()).toMatchObject({ matched: false, payment_id: null, status: 'unmatched', duplicate: false });
    expect(await payinPostings(payment.id)).toBe(1);
  });

  it('same text (amount read from it, or given alongside): same answer, one credit', async () => {
    const { executor: ex, requisite } = await fresh({ bank: 'sberbank' });
    const payment = await pay(140, requisite.value);
    const text = 'СЧЁТ1234 00:21 Перевод 140р от Сергей С. Баланс: 879.81р';
    const first = (await notify(service.app, ex.token, { requisite_id: requisite.id, text })).json();
    expect(first).toMatchObject({ matched: true, payment_id: payment.id, duplicate: false });
    const again = (await notify(service.app, ex.token, { requisite_id: requisite.id, text })).json();
    expect(again).toEqual({ ...first, duplicate: true });
    // The app sending the amount it read itself is still the same notification.
    const withAmount = (await notify(service.app, ex.token, { requisite_id: requisite.id, amount: 140, text })).json();
    expect(withAmount).toEqual({ ...first, duplicate: true });
    expect(await payinPostings(payment.id)).toBe(1);
    expect(await notificationsOn(requisite.id)).toEqual([{ status: 'matched', payment_id: payment.id }]);
  });
});

describe('unmatched notifications', () => {
  it('an amount with no pending payment is stored as unmatched and listed for the operator', async () => {
    const { executor: ex, requisite } = await fresh();
    const res = await notify(service.app, ex.token, {
      requisite_id: requisite.id,
      amount: 777.7,
      text: 'Поступление 777,70 RUR',
      received_at: new Date().toISOString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json();
    expect(answer).toEqual({ matched: false, payment_id: null, notification_id: expect.any(String), status: 'unmatched', duplicate: false });

    const unmatched = await adminOk<{ notifications: { id: string }[] }>(service.app, 'GET', '/notifications?status=unmatched&limit=1000');
    const listed = unmatched.notifications.find((n) => n.id === answer.notification_id);
    expect(listed).toMatchObject({
      status: 'unmatched',
      amount: 777.7,
      requisite_id: requisite.id,
      executor_id: ex.id,
      payment_id: null,
      candidate_payment_id: null,
    });
    const matched = await adminOk<{ notifications: { id: string; status: string }[] }>(service.app, 'GET', '/notifications?status=matched&limit=1000');
    expect(matched.notifications.some((n) => n.id === answer.notification_id)).toBe(false);
    expect(matched.notifications.every((n) => n.status === 'matched')).toBe(true);
    await expectError(await admin(service.app, 'GET', '/notifications?status=bogus'), 400, 'VALIDATION');
    await expectError(await admin(service.app, 'GET', '/notifications/00000000-0000-4000-8000-000000000000'), 404, 'NOT_FOUND');
  });
});

describe('the operator links or resolves a notification', () => {
  async function unmatched(token: string, requisiteId: string, amount: number): Promise<string> {
    const res = await notify(service.app, token, { requisite_id: requisiteId, amount });
    expect(res.json()).toMatchObject({ matched: false, status: 'unmatched' });
    return res.json().notification_id;
  }

  /** The operator's acts on a notification (the executor's report of it, `notification.receive`, is checked in test/audit-coverage.test.ts). */
  async function auditRows(notificationId: string): Promise<{ action: string; before: unknown; after: unknown }[]> {
    const { rows } = await service.ctx.db.query(
      `SELECT action, before, after FROM audit_log WHERE object_type = 'notification' AND object_id = $1 AND action <> 'notification.receive' ORDER BY id`,
      [notificationId],
    );
    return rows;
  }

  it('links an unmatched notification to a PENDING payment on the same requisite: completed, credited once, audited', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(1000, requisite.value);
    // The payer sent 999 instead of 1000; the operator decides it is this payment.
    const id = await unmatched(ex.token, requisite.id, 999);
    const before = await balance();

    const res = await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'matched', payment_id: payment.id });
    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
    expect((await balance()).minus(before).toFixed(6)).toBe(expectedCredit(1000).toFixed(6));
    expect(await payinPostings(payment.id)).toBe(1);
    expect((await adminOk(service.app, 'GET', `/notifications/${id}`)).status).toBe('matched');
    expect(await auditRows(id)).toEqual([
      { action: 'notification.link', before: { status: 'unmatched' }, after: { status: 'matched', payment_id: payment.id } },
    ]);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('linking a notification a second time is 409 and credits nothing more', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(1000, requisite.value);
    const id = await unmatched(ex.token, requisite.id, 999);
    expect((await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id })).statusCode).toBe(200);

    await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id }), 409, 'CONFLICT');
    expect(await payinPostings(payment.id)).toBe(1);
    expect(await auditRows(id)).toEqual([
      { action: 'notification.link', before: { status: 'unmatched' }, after: { status: 'matched', payment_id: payment.id } },
    ]);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('refuses a payment on another requisite (400), a payment that is not PENDING (400 PAY_008, rolled back), unknown ids (404)', async () => {
    const a = await fresh();
    const elsewhere = await pay(1100, a.requisite.value);
    const b = await fresh();
    const id = await unmatched(b.executor.token, b.requisite.id, 1100);

    await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: elsewhere.id }), 400, 'VALIDATION');
    expect(await paymentStatus(elsewhere.id)).toBe('PENDING');

    // Not PENDING: one completed by its own notification, one cancelled by the operator.
    const completed = await pay(1200, b.requisite.value);
    expect((await notify(service.app, b.executor.token, { requisite_id: b.requisite.id, amount: 1200 })).json()).toMatchObject({
      matched: true,
      payment_id: completed.id,
    });
    const cancelled = await pay(1300, b.requisite.value);
    await adminOk(service.app, 'POST', `/payments/${cancelled.id}/cancel`);
    for (const target of [completed, cancelled]) {
      await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: target.id }), 400, 'PAY_008');
      expect(await adminOk(service.app, 'GET', `/notifications/${id}`)).toMatchObject({ status: 'unmatched', payment_id: null });
    }
    expect(await paymentStatus(cancelled.id)).toBe('CANCELLED');
    expect(await payinPostings(completed.id)).toBe(1);
    expect(await payinPostings(cancelled.id)).toBe(0);

    await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: '00000000-0000-4000-8000-000000000000' }), 404, 'PAY_006');
    await expectError(
      await admin(service.app, 'POST', '/notifications/00000000-0000-4000-8000-000000000000/link', { payment_id: completed.id }),
      404,
      'NOT_FOUND',
    );
    await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: 'nope' }), 400, 'VALIDATION');
    await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, {}), 400, 'VALIDATION');
    expect(await auditRows(id)).toEqual([]);
  });

  it('two operators linking two notifications to one payment at once: one completes it, the other is refused, no 500', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(1400, requisite.value);
    const first = await unmatched(ex.token, requisite.id, 1401);
    const second = await unmatched(ex.token, requisite.id, 1402);
    const answers = await Promise.all([first, second].map((id) => admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id })));
    expect(answers.map((r) => r.statusCode).sort(), answers.map((r) => r.body).join('\n')).toEqual([200, 400]);
    expect(answers.find((r) => r.statusCode === 400)!.json().error).toBe('PAY_008');
    expect(await payinPostings(payment.id)).toBe(1);
    const rows = await notificationsOn(requisite.id);
    expect(rows.filter((r) => r.status === 'matched')).toEqual([{ status: 'matched', payment_id: payment.id }]);
    expect(rows.filter((r) => r.status === 'unmatched')).toHaveLength(1);
  });

  it('one notification linked to two payments at once: one is completed, the other link is 409 and rolled back', async () => {
    const { executor: ex, requisite } = await fresh();
    const p1 = await pay(1600, requisite.value);
    const p2 = await pay(1700, requisite.value);
    const before = await balance();
    const id = await unmatched(ex.token, requisite.id, 1650);
    const answers = await Promise.all([p1, p2].map((p) => admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: p.id })));
    expect(answers.map((r) => r.statusCode).sort(), answers.map((r) => r.body).join('\n')).toEqual([200, 409]);
    const winner = answers.find((r) => r.statusCode === 200)!.json().payment_id as string;
    const loser = winner === p1.id ? p2 : p1;
    expect(await paymentStatus(winner)).toBe('COMPLETED');
    expect(await paymentStatus(loser.id)).toBe('PENDING');
    expect(await payinPostings(loser.id)).toBe(0);
    expect((await balance()).minus(before).toFixed(6)).toBe(expectedCredit(winner === p1.id ? 1600 : 1700).toFixed(6));
  });

  it('a link racing a matching notification for the same payment: completed once, no 500', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(1500, requisite.value);
    const id = await unmatched(ex.token, requisite.id, 1501);
    const [linked, notified] = await Promise.all([
      admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id }),
      notify(service.app, ex.token, { requisite_id: requisite.id, amount: 1500, received_at: new Date().toISOString() }),
    ]);
    expect([200, 400]).toContain(linked.statusCode);
    expect(notified.statusCode, notified.body).toBe(200);
    // Exactly one of them completed the payment.
    expect(Number(linked.statusCode === 200) + Number(notified.json().matched === true), `${linked.body}\n${notified.body}`).toBe(1);
    expect(await paymentStatus(payment.id)).toBe('COMPLETED');
    expect(await payinPostings(payment.id)).toBe(1);
  });

  it('refuses to resolve without a note (400)', async () => {
    const { executor: ex, requisite } = await fresh();
    const id = await unmatched(ex.token, requisite.id, 250);

    await expectError(await admin(service.app, 'POST', `/notifications/${id}/resolve`, { note: '' }), 400, 'VALIDATION');
    await expectError(await admin(service.app, 'POST', `/notifications/${id}/resolve`, {}), 400, 'VALIDATION');
    expect(await adminOk(service.app, 'GET', `/notifications/${id}`)).toMatchObject({ status: 'unmatched' });
  });

  it('resolves with a note: status resolved, listed as resolved, audited', async () => {
    const { executor: ex, requisite } = await fresh();
    const id = await unmatched(ex.token, requisite.id, 250);
    const res = await admin(service.app, 'POST', `/notifications/${id}/resolve`, { note: 'refunded to the payer by the trader' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'resolved', resolved_note: 'refunded to the payer by the trader', payment_id: null });
    expect(
      ((await adminOk(service.app, 'GET', '/notifications?status=resolved&limit=1000')) as { notifications: { id: string }[] }).notifications.some(
        (n) => n.id === id,
      ),
    ).toBe(true);
    expect(await auditRows(id)).toEqual([
      { action: 'notification.resolve', before: { status: 'unmatched' }, after: { status: 'resolved', note: 'refunded to the payer by the trader' } },
    ]);
  });

  it('a resolved notification cannot be resolved or linked again (409)', async () => {
    const { executor: ex, requisite } = await fresh();
    const id = await unmatched(ex.token, requisite.id, 250);
    const payment = await pay(250, requisite.value);
    await adminOk(service.app, 'POST', `/notifications/${id}/resolve`, { note: 'refunded to the payer by the trader' });

    await expectError(await admin(service.app, 'POST', `/notifications/${id}/resolve`, { note: 'again' }), 409, 'CONFLICT');
    await expectError(await admin(service.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id }), 409, 'CONFLICT');
    expect(await paymentStatus(payment.id)).toBe('PENDING');
    expect(await auditRows(id)).toEqual([
      { action: 'notification.resolve', before: { status: 'unmatched' }, after: { status: 'resolved', note: 'refunded to the payer by the trader' } },
    ]);
  });

  it('resolving an unknown notification is 404', async () => {
    await expectError(await admin(service.app, 'POST', '/notifications/00000000-0000-4000-8000-000000000000/resolve', { note: 'x' }), 404, 'NOT_FOUND');
  });
});

describe('validation of POST /executor/v1/notifications', () => {
  it('refuses bad amounts, ids, times and bodies with 400 VALIDATION and stores nothing', async () => {
    const { executor: ex, requisite } = await fresh();
    const payment = await pay(100, requisite.value);
    const bad: unknown[] = [
      { requisite_id: requisite.id, amount: 100.001 },
      { requisite_id: requisite.id, amount: -100 },
      { requisite_id: requisite.id, amount: 0 },
      { requisite_id: requisite.id, amount: '100' },
      { requisite_id: requisite.id, amount: null },
      { requisite_id: requisite.id, amount: 1e19 },
      { requisite_id: requisite.id, amount: 1e15 },
      { requisite_id: requisite.id, text: 'СЧЁТ1234 12:34 Перевод 99 999 999 999 999 999 999р от ИВАН И. Баланс: 25 300.50р' },
      { requisite_id: 'not-a-uuid', amount: 100 },
      { requisite_id: 42, amount: 100 },
      { amount: 100 },
      { requisite_id: requisite.id, amount: 100, received_at: 'yesterday-ish' },
      { requisite_id: requisite.id, amount: 100, received_at: 1700000000 },
      { requisite_id: requisite.id, amount: 100, text: 'x'.repeat(4001) },
      [{ requisite_id: requisite.id, amount: 100 }],
      `{"requisite_id": "${requisite.id}", "amount": 100`,
      'not json at all',
    ];
    for (const body of bad) {
      const res = await notify(service.app, ex.token, body);
      await expectError(res, 400, 'VALIDATION');
    }
    // Without a token the malformed body is not even read: authentication comes first.
    const anonymous = await service.app.inject({
      method: 'POST',
      url: '/executor/v1/notifications',
      headers: { 'content-type': 'application/json' },
      payload: '{oops',
    });
    await expectError(anonymous, 401, 'AUTH_001');
    expect(await paymentStatus(payment.id)).toBe('PENDING');
    expect(await notificationsOn(requisite.id)).toEqual([]);
  });
});

describe('race: many notifications, repeats included, over two instances', () => {
  it('completes every payment once, posts every credit once, and the ledger balances', async () => {
    const COUNT = 40;
    const other = await service.startAnother();
    const shop = await createMerchant(service.app, { payin_rate: 2.75 });
    if (executor) await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { is_active: false });
    executor = await createExecutor(service.app, 'Race trader');
    const byValue = new Map<string, string>();
    for (let i = 0; i < COUNT / 2; i++) {
      const r = await createRequisite(service.app, executor.id, { bank: 'sberbank' });
      byValue.set(r.value, r.id);
    }
    // Two payments per requisite on average, each with its own amount.
    const payments: { id: string; requisiteId: string; amount: string }[] = [];
    for (let i = 0; i < COUNT; i++) {
      const amount = new Exact(1000 + i * 37).plus(new Exact((i * 13) % 100).div(100));
      const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId('race'), amount: Number(amount.toFixed(2)) });
      expect(status, JSON.stringify(body)).toBe(200);
      payments.push({ id: body.id, requisiteId: byValue.get(body.requisites.value)!, amount: amount.toFixed(2) });
    }
    const before = await balance(shop);

    // Three copies of each: by received_at, by text (amount read from it), or bare (cannot be deduplicated).
    const sberAmount = (amount: string) => {
      const [whole, cents] = amount.split('.');
      return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ' ')}.${cents}р`;
    };
    const requests: { payment: number; kind: 'time' | 'text' | 'bare'; body: Record<string, unknown> }[] = [];
    payments.forEach((p, i) => {
      const kind = (['time', 'text', 'bare'] as const)[i % 3]!;
      const receivedAt = new Date(Date.now() - i * 1000).toISOString();
      const body =
        kind === 'time'
          ? { requisite_id: p.requisiteId, amount: Number(p.amount), received_at: receivedAt }
          : kind === 'text'
            ? { requisite_id: p.requisiteId, text: `СЧЁТ1234 12:${String(i).padStart(2, '0')} Перевод ${sberAmount(p.amount)} от ИВАН И. Баланс: 25 300.50р` }
            : { requisite_id: p.requisiteId, amount: Number(p.amount) };
      for (let copy = 0; copy < 3; copy++) requests.push({ payment: i, kind, body });
    });
    // Shuffled, deterministically, and spread over both instances.
    const order = requests.map((_, i) => i).sort((x, y) => ((x * 7919) % 101) - ((y * 7919) % 101));
    const apps = [service.app, other.app];
    const answers = await Promise.all(
      order.map(async (index, n) => {
        const res = await notify(apps[n % 2]!, executor!.token, requests[index]!.body);
        return { ...requests[index]!, status: res.statusCode, body: res.json() };
      }),
    );

    expect(answers.filter((a) => a.status !== 200).map((a) => JSON.stringify(a.body))).toEqual([]);
    let expected = new Exact(0);
    for (const [i, p] of payments.entries()) {
      const mine = answers.filter((a) => a.payment === i);
      expect(mine).toHaveLength(3);
      const matched = mine.filter((a) => a.body.matched === true);
      if (mine[0]!.kind === 'bare') {
        // Indistinguishable repeats: one completes the payment, the others are kept as unmatched.
        expect(matched).toHaveLength(1);
        expect(mine.filter((a) => a.body.status === 'unmatched')).toHaveLength(2);
      } else {
        expect(matched).toHaveLength(3);
        expect(mine.filter((a) => a.body.duplicate === false)).toHaveLength(1);
        expect(new Set(mine.map((a) => a.body.notification_id)).size).toBe(1);
      }
      expect(matched.every((a) => a.body.payment_id === p.id)).toBe(true);
      expect(await paymentStatus(p.id, shop)).toBe('COMPLETED');
      expected = expected.plus(expectedCredit(p.amount, RUB_RATE, '2.75'));
    }

    const { rows: postings } = await service.ctx.db.query<{ ref_id: string; n: number }>(
      `SELECT ref_id, count(*)::int AS n FROM ledger_transactions WHERE kind = 'payin' AND ref_id = ANY($1::uuid[]) GROUP BY ref_id`,
      [payments.map((p) => p.id)],
    );
    expect(postings).toHaveLength(COUNT);
    expect(postings.every((row) => row.n === 1)).toBe(true);
    const { rows: matchedRows } = await service.ctx.db.query<{ payment_id: string; n: number }>(
      `SELECT payment_id, count(*)::int AS n FROM notifications WHERE status = 'matched' AND payment_id = ANY($1::uuid[]) GROUP BY payment_id`,
      [payments.map((p) => p.id)],
    );
    expect(matchedRows).toHaveLength(COUNT);
    expect(matchedRows.every((row) => row.n === 1)).toBe(true);

    expect((await balance(shop)).minus(before).toFixed(6)).toBe(expected.toFixed(6));
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});

describe('late notifications (the payment expired before the transfer was reported)', () => {
  let late: TestService;
  let shop: MerchantCredentials;
  let trader: Executor;
  let requisite: { id: string; value: string };

  beforeAll(async () => {
    late = await startTestService({ PAYMENT_TTL_SECONDS: '1', KASSIR_EXPIRY_SWEEP_SECONDS: '1' }, { worker: true });
    await setRate(late.app, 'RUB', Number(RUB_RATE));
    shop = await createMerchant(late.app, { payin_rate: Number(PAYIN_RATE) });
    trader = await createExecutor(late.app, 'Late trader');
    requisite = await createRequisite(late.app, trader.id);
  });
  afterAll(async () => late?.close());

  async function expiredPayment(amount: number) {
    const { status, body } = await createPayment(late.app, shop, { ext_id: uniqueExtId('late'), amount });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.requisites.value).toBe(requisite.value);
    await until(
      async () => ((await signed(late.app, shop, 'GET', `/v1/payments/${body.id}`)).json().status === 'CANCELLED' ? true : undefined),
      30_000,
      200,
      'payment expired',
    );
    return body as { id: string; valid_until: string; created_at: string };
  }

  it('flags a transfer reported after expiry as late, with the payment it probably belongs to; the payment stays CANCELLED', async () => {
    const payment = await expiredPayment(1800);
    const before = (await signed(late.app, shop, 'GET', '/v1/balance')).json().balance;

    const res = await notify(late.app, trader.token, { requisite_id: requisite.id, amount: 1800, received_at: new Date().toISOString() });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: false, payment_id: null, status: 'late', duplicate: false });
    const id = res.json().notification_id;
    expect(await adminOk(late.app, 'GET', `/notifications/${id}`)).toMatchObject({ status: 'late', candidate_payment_id: payment.id, payment_id: null });
    const listed = await adminOk<{ notifications: { id: string }[] }>(late.app, 'GET', '/notifications?status=late');
    expect(listed.notifications.map((n) => n.id)).toContain(id);

    expect((await signed(late.app, shop, 'GET', `/v1/payments/${payment.id}`)).json().status).toBe('CANCELLED');
    expect(await payinPostings(payment.id, late.ctx.db)).toBe(0);
    expect((await signed(late.app, shop, 'GET', '/v1/balance')).json().balance).toBe(before);

    // The operator cannot complete a cancelled payment through a link; the notification stays late.
    await expectError(await admin(late.app, 'POST', `/notifications/${id}/link`, { payment_id: payment.id }), 400, 'PAY_008');
    expect(await adminOk(late.app, 'GET', `/notifications/${id}`)).toMatchObject({ status: 'late', payment_id: null });
    expect(await payinPostings(payment.id, late.ctx.db)).toBe(0);
    const resolved = await adminOk(late.app, 'POST', `/notifications/${id}/resolve`, { note: 'payer paid after expiry; refunded' });
    expect(resolved).toMatchObject({ status: 'resolved', candidate_payment_id: payment.id });
  });

  it('a transfer received before expiry but reported after it is late for that payment too', async () => {
    const payment = await expiredPayment(1900);
    // Arrived at the bank while the payment was still valid; the phone was offline until now.
    const receivedAt = new Date(new Date(payment.valid_until).getTime() - 300).toISOString();
    const res = await notify(late.app, trader.token, { requisite_id: requisite.id, amount: 1900, received_at: receivedAt });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: false, status: 'late' });
    expect(await adminOk(late.app, 'GET', `/notifications/${res.json().notification_id}`)).toMatchObject({ candidate_payment_id: payment.id });
  });

  it('another amount, or a transfer long after expiry, is unmatched, not late', async () => {
    const payment = await expiredPayment(2000);
    const other = await notify(late.app, trader.token, { requisite_id: requisite.id, amount: 2001 });
    expect(other.json()).toMatchObject({ status: 'unmatched' });
    const muchLater = new Date(new Date(payment.valid_until).getTime() + 3 * 3600_000).toISOString();
    const old = await notify(late.app, trader.token, { requisite_id: requisite.id, amount: 2000, received_at: muchLater });
    expect(old.json()).toMatchObject({ status: 'unmatched' });
    expect((await adminOk(late.app, 'GET', `/notifications/${old.json().notification_id}`)).candidate_payment_id).toBeNull();
    // Received before the payment even existed: not its transfer.
    const earlier = new Date(new Date(payment.created_at).getTime() - 60_000).toISOString();
    expect((await notify(late.app, trader.token, { requisite_id: requisite.id, amount: 2000, received_at: earlier })).json()).toMatchObject({
      status: 'unmatched',
    });
  });
});
