import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepSilence } from '../src/devices/devices.service.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorCall,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
} from './helpers.js';

// Executors' phones (DESIGN.md "Devices (contract)"): messages that name no requisite.
let service: TestService;
let app: FastifyInstance;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  app = service.app;
  await setRate(app, 'RUB', 95.5);
  merchant = await createMerchant(app);
});
afterAll(async () => service?.close());

let amountSeq = 0;
/** Every payment of this file its own amount, so that tests do not meet each other's payments. */
function nextAmount(): number {
  return 1000 + ++amountSeq * 7;
}

/** A funded executor with `cards` Sberbank cards and one registered phone. */
async function executorWithPhone(cards = 2) {
  // The cards of earlier tests are switched off, so that this test's payments land on its own.
  await service.ctx.db.query('UPDATE requisites SET is_active = false');
  const executor = await createExecutor(app);
  const requisites = [];
  for (let i = 0; i < cards; i++) requisites.push(await createRequisite(app, executor.id));
  const res = await executorCall(app, executor.token, 'POST', '/devices', { name: 'Pixel 7' });
  expect(res.statusCode, res.body).toBe(201);
  return { executor, requisites, device: res.json() as { id: string; token: string; name: string } };
}

function deviceCall(token: string, url: string, body?: unknown) {
  return app.inject({
    method: 'POST',
    url: `/device/v1${url}`,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A payment of `amount`, and the requisite the cascade handed out for it. */
async function pay(amount: number): Promise<{ id: string; requisiteId: string }> {
  const { status, body } = await createPayment(app, merchant, { ext_id: `dev-${Date.now()}-${Math.random()}`, amount });
  expect(status, JSON.stringify(body)).toBe(200);
  const detail = await adminOk<{ requisite_id: string }>(app, 'GET', `/payments/${body.id}`);
  return { id: body.id, requisiteId: detail.requisite_id };
}

async function statusOf(paymentId: string): Promise<string> {
  return (await signed(app, merchant, 'GET', `/v1/payments/${paymentId}`)).json().status;
}

const sms = (last4: string, amount: number) => `MIR-${last4} 10:05 зачисление ${amount}р Баланс: 10000р`;
const noDigits = (amount: number) => `Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам ${amount}.00 RUB`;

describe('device messages', () => {
  it('a payment completes from a forwarded bank SMS that names only the card’s last four digits; a repeat answers the same', async () => {
    const { requisites, device } = await executorWithPhone();
    const amount = nextAmount();
    const payment = await pay(amount);
    const card = requisites.find((r) => r.id === payment.requisiteId)!;
    const message = { text: sms(card.value.slice(-4), amount), sender: '900', received_at: new Date().toISOString(), battery: 81, app_version: '3.2.1' };

    const res = await deviceCall(device.token, '/messages', message);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id, notification_id: expect.any(String), status: 'matched', duplicate: false });
    expect(await statusOf(payment.id)).toBe('COMPLETED');

    const again = await deviceCall(device.token, '/messages', message);
    expect(again.json()).toMatchObject({ matched: true, payment_id: payment.id, message_id: res.json().message_id, duplicate: true });
    const notifications = await service.ctx.db.query('SELECT count(*)::int AS n FROM notifications WHERE payment_id = $1', [payment.id]);
    expect(notifications.rows[0].n).toBe(1);
    await expectLedgerOk(app);

    const executorId = (await adminOk<{ executor_id: string }>(app, 'GET', `/requisites/${card.id}`)).executor_id;
    const listed = (await admin(app, 'GET', `/executors/${executorId}/devices`)).json();
    expect(listed.devices).toEqual([expect.objectContaining({ id: device.id, battery: 81, app_version: '3.2.1', last_seen_at: expect.any(String) })]);
  });

  it('the digits pick the card even when the other card waits for the same amount', async () => {
    const { requisites, device } = await executorWithPhone();
    const amount = nextAmount();
    const first = await pay(amount);
    const second = await pay(amount);
    expect(first.requisiteId).not.toBe(second.requisiteId);
    const secondCard = requisites.find((r) => r.id === second.requisiteId)!;
    const res = await deviceCall(device.token, '/messages', { text: sms(secondCard.value.slice(-4), amount), sender: '900' });
    expect(res.json()).toMatchObject({ matched: true, payment_id: second.id });
    expect(await statusOf(first.id)).toBe('PENDING');
  });

  it.each([
    [
      'Sber SMS "МИР Сберкарта1234"',
      (d: string, a: number) => `МИР Сберкарта${d} 26.07.23 зачислен перевод ${a}р из Тинькофф Банк от МАКСИМ ВИКТОРОВИЧ П.`,
      '900',
    ],
    ['Sber SMS "МИР1234 … перевел(а) вам"', (d: string, a: number) => `МИР${d} 10:59 Любовь П. перевел(а) вам ${a}р.`, '900'],
    [
      'a transliterated SMS, "Karta *1234 … Postuplenie"',
      (d: string, a: number) => `Karta *${d}. 04.10.24 20:29. Postuplenie ${a}.00 RUB. Tinkoff Card2Card. Balans 8937.00 RUB`,
      'URALSIB',
    ],
    ['an app no bank of the table uses ("ABR Direct МИР1234")', (d: string, a: number) => `ABR Direct МИР${d} Пополнение ${a}p`, 'ABR Direct'],
    [
      'the payer’s card first ("с карты *0000 … на карту *1234")',
      (d: string, a: number) => `Зачислен перевод ${a} RUB с карты *0000 на карту *${d}`,
      'Raiffeisen',
    ],
  ])('digits first: %s picks the card among two waiting for the same amount', async (_, text, sender) => {
    const { requisites, device } = await executorWithPhone();
    const amount = nextAmount();
    const first = await pay(amount);
    const second = await pay(amount);
    expect(first.requisiteId).not.toBe(second.requisiteId);
    const secondCard = requisites.find((r) => r.id === second.requisiteId)!;
    const res = await deviceCall(device.token, '/messages', { text: text(secondCard.value.slice(-4), amount), sender });
    expect(res.json()).toMatchObject({ matched: true, payment_id: second.id });
    expect(await statusOf(first.id)).toBe('PENDING');
  });

  it('a text without digits is decided by the amount when exactly one card waits for it', async () => {
    const { device } = await executorWithPhone();
    const amount = nextAmount();
    const payment = await pay(amount);
    const res = await deviceCall(device.token, '/messages', { text: noDigits(amount), sender: '900' });
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
  });

  it('two cards waiting for the same amount and no digits: the message waits, and the executor links it', async () => {
    const { executor, device } = await executorWithPhone();
    const amount = nextAmount();
    const first = await pay(amount);
    const second = await pay(amount);
    const res = await deviceCall(device.token, '/messages', { text: noDigits(amount), sender: '900' });
    expect(res.json()).toMatchObject({ matched: false, payment_id: null, notification_id: null, status: 'ambiguous' });
    expect(res.json().reason).toMatch(/2 requisites that fit the text wait for/);
    expect(await statusOf(first.id)).toBe('PENDING');
    expect(await statusOf(second.id)).toBe('PENDING');

    const pendingList = (await executorCall(app, executor.token, 'GET', '/payments/pending')).json().payments;
    expect(pendingList.map((p: { id: string }) => p.id).sort()).toEqual([first.id, second.id].sort());
    expect(pendingList[0]).toEqual({
      id: expect.any(String),
      requisite_id: expect.any(String),
      amount: `${amount}.00`,
      currency: 'RUB',
      valid_until: expect.any(String),
      created_at: expect.any(String),
      payer_confirmed_at: null,
    });
    const other = await createExecutor(app);
    expect((await executorCall(app, other.token, 'GET', '/payments/pending')).json().payments).toEqual([]);
    const waiting = (await executorCall(app, executor.token, 'GET', '/device-messages?status=ambiguous')).json();
    expect(waiting.messages).toEqual([expect.objectContaining({ id: res.json().message_id, text: noDigits(amount), amount: `${amount}.00` })]);

    const linked = await executorCall(app, executor.token, 'POST', `/device-messages/${res.json().message_id}/link`, { payment_id: second.id });
    expect(linked.statusCode, linked.body).toBe(200);
    expect(linked.json()).toMatchObject({ status: 'resolved', payment_id: second.id, requisite_id: second.requisiteId });
    expect(await statusOf(second.id)).toBe('COMPLETED');
    const twice = await executorCall(app, executor.token, 'POST', `/device-messages/${res.json().message_id}/link`, { payment_id: first.id });
    expect([twice.statusCode, twice.json().error]).toEqual([409, 'CONFLICT']);
    await expectLedgerOk(app);
  });

  it('nothing is guessed: digits of no card of the executor, money going out, a text nobody can read', async () => {
    const { executor, device } = await executorWithPhone(1);
    const amount = nextAmount();
    const payment = await pay(amount);
    const wrongCard = await deviceCall(device.token, '/messages', { text: sms('0000', amount), sender: '900' });
    expect(wrongCard.json()).toMatchObject({ matched: false, status: 'ambiguous', reason: 'none of your requisites ends in 0000' });
    const outgoing = await deviceCall(device.token, '/messages', { text: 'MIR-1234 19:02 Покупка 500р ПЯТЁРОЧКА Баланс: 12 345.67р', sender: '900' });
    expect(outgoing.json()).toMatchObject({ matched: false, status: 'ignored' });
    const unreadable = await deviceCall(device.token, '/messages', { text: 'Ваш код подтверждения: 4821. Никому не сообщайте', sender: '900' });
    expect(unreadable.json()).toMatchObject({ matched: false, status: 'unreadable' });
    expect(await statusOf(payment.id)).toBe('PENDING');

    // A person sets the unreadable one aside; the operator sees what waits.
    const waiting = await adminOk<{ messages: { id: string; status: string }[] }>(app, 'GET', `/device-messages?executor_id=${executor.id}&status=ambiguous`);
    expect(waiting.messages.map((m) => m.id)).toEqual([wrongCard.json().message_id]);
    const aside = await executorCall(app, executor.token, 'POST', `/device-messages/${unreadable.json().message_id}/set-aside`, { note: 'a one-time code' });
    expect(aside.json()).toMatchObject({ status: 'resolved', resolved_note: 'a one-time code' });
  });

  it('a message for a card with no payment of that amount is kept as an unmatched notification, and linking it later completes the payment', async () => {
    const { executor, requisites, device } = await executorWithPhone(1);
    const amount = nextAmount();
    const payment = await pay(amount);
    const res = await deviceCall(device.token, '/messages', { text: sms(requisites[0]!.value.slice(-4), amount - 1), sender: '900' });
    expect(res.json()).toMatchObject({ matched: false, status: 'unmatched', notification_id: expect.any(String) });
    // The payer sent one rouble less; the executor decides it is this payment. The amounts differ:
    // refused, nothing guessed.
    const refused = await executorCall(app, executor.token, 'POST', `/device-messages/${res.json().message_id}/link`, { payment_id: payment.id });
    expect([refused.statusCode, refused.json().error]).toEqual([400, 'VALIDATION']);
    expect(await statusOf(payment.id)).toBe('PENDING');
  });

  it('an executor linking their own message to another executor’s payment is answered “not found”, as for a payment that does not exist', async () => {
    const owner = await executorWithPhone(1);
    const amount = nextAmount();
    const theirs = await pay(amount);
    const { executor, device } = await executorWithPhone(1);
    const msg = await deviceCall(device.token, '/messages', { text: 'непонятный текст', sender: 'x' });
    expect(msg.json()).toMatchObject({ status: 'unreadable' });

    const foreign = await executorCall(app, executor.token, 'POST', `/device-messages/${msg.json().message_id}/link`, { payment_id: theirs.id });
    const missing = await executorCall(app, executor.token, 'POST', `/device-messages/${msg.json().message_id}/link`, {
      payment_id: '00000000-0000-4000-8000-000000000000',
    });
    expect([foreign.statusCode, foreign.json().error]).toEqual([404, 'PAY_006']);
    expect([missing.statusCode, missing.json().error]).toEqual([404, 'PAY_006']);
    expect(foreign.json().message).toBe(`Payment ${theirs.id} not found`);
    expect(await statusOf(theirs.id)).toBe('PENDING');
    // The owner's own phone still completes it.
    const card = owner.requisites.find((r) => r.id === theirs.requisiteId)!;
    expect((await deviceCall(owner.device.token, '/messages', { text: sms(card.value.slice(-4), amount), sender: '900' })).json()).toMatchObject({
      matched: true,
      payment_id: theirs.id,
    });
  });

  it('an executor reaches only their own devices and messages; a revoked device is refused at once', async () => {
    const one = await executorWithPhone(1);
    const other = await executorWithPhone(1);
    const msg = await deviceCall(one.device.token, '/messages', { text: 'непонятный текст', sender: 'x' });
    const foreignLink = await executorCall(app, other.executor.token, 'POST', `/device-messages/${msg.json().message_id}/link`, {
      payment_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(foreignLink.statusCode).toBe(404);
    const foreignList = (await executorCall(app, other.executor.token, 'GET', '/device-messages')).json();
    expect(foreignList.messages.map((m: { id: string }) => m.id)).not.toContain(msg.json().message_id);
    const foreignRevoke = await executorCall(app, other.executor.token, 'DELETE', `/devices/${one.device.id}`);
    expect(foreignRevoke.statusCode).toBe(404);

    expect((await executorCall(app, one.executor.token, 'DELETE', `/devices/${one.device.id}`)).statusCode).toBe(204);
    const after = await deviceCall(one.device.token, '/messages', { text: 'x' });
    expect([after.statusCode, after.json().error]).toEqual([401, 'AUTH_002']);
    expect((await deviceCall('nonsense', '/heartbeat', {})).statusCode).toBe(401);
    const unknown = await admin(app, 'POST', '/executors/00000000-0000-4000-8000-000000000000/devices', { name: 'x' });
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'NOT_FOUND']);
  });

  it('a heartbeat records the phone alive with its battery and app version', async () => {
    const { executor, device } = await executorWithPhone(0);
    const res = await deviceCall(device.token, '/heartbeat', { battery: 42, app_version: '1.0' });
    expect(res.statusCode).toBe(204);
    const devices = (await executorCall(app, executor.token, 'GET', '/devices')).json().devices;
    expect(devices).toEqual([expect.objectContaining({ battery: 42, app_version: '1.0', last_seen_at: expect.any(String) })]);
    const bad = await deviceCall(device.token, '/heartbeat', { battery: 140 });
    expect(bad.statusCode).toBe(400);
    const blank = await executorCall(app, executor.token, 'POST', '/devices', { name: '  ' });
    expect([blank.statusCode, blank.json().error]).toEqual([400, 'VALIDATION']);
  });

  it('a phone silent longer than the executor allows takes its requisites out of the cascade; a heartbeat brings them back; no phone, no rule', async () => {
    const { executor, device } = await executorWithPhone(1);
    const set = await executorCall(app, executor.token, 'PUT', '/device-silence', { minutes: 5 });
    expect(set.json()).toEqual({ device_silence_minutes: 5 });
    await sweepSilence(service.ctx);
    expect((await executorCall(app, executor.token, 'GET', '/status')).json()).toMatchObject({ devices_silent: false, takes_payments: true });

    await service.ctx.db.query(`UPDATE devices SET created_at = now() - interval '1 hour', last_seen_at = now() - interval '6 minutes' WHERE id = $1`, [
      device.id,
    ]);
    await sweepSilence(service.ctx);
    expect((await executorCall(app, executor.token, 'GET', '/status')).json()).toMatchObject({ devices_silent: true, takes_payments: false });
    expect(await adminOk(app, 'GET', `/executors/${executor.id}`)).toMatchObject({ devices_silent: true, device_silence_minutes: 5 });
    const refused = await createPayment(app, merchant, { ext_id: `silent-${Date.now()}`, amount: nextAmount() });
    expect(refused.body.error).toBe('PAY_004');

    expect((await deviceCall(device.token, '/heartbeat', { battery: 50 })).statusCode).toBe(204);
    expect((await executorCall(app, executor.token, 'GET', '/status')).json()).toMatchObject({ devices_silent: false, takes_payments: true });
    await pay(nextAmount());

    // Without phones the rule never applies, whatever it says.
    const bare = await createExecutor(app);
    await adminOk(app, 'PUT', `/executors/${bare.id}/device-silence`, { minutes: 1 });
    await sweepSilence(service.ctx);
    expect(await adminOk(app, 'GET', `/executors/${bare.id}`)).toMatchObject({ devices_silent: false });
    const invalid = await executorCall(app, executor.token, 'PUT', '/device-silence', { minutes: 0 });
    expect(invalid.statusCode).toBe(400);
  });

  it("the executor's own sign-in works the executor API with its session: its own requisites only, CSRF on changes", async () => {
    const mine = await executorWithPhone(1);
    const theirs = await executorWithPhone(1);
    const login = await adminOk<{ email: string }>(app, 'POST', `/executors/${mine.executor.id}/login`, {
      email: `cab${Date.now()}@kassir.test`,
      password: 'correct horse battery',
    });
    const res = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: login.email, password: 'correct horse battery' } });
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    const csrf = res.json().csrf_token as string;
    const call = (method: string, url: string, body?: unknown, withCsrf = true) =>
      app.inject({
        method: method as 'GET',
        url: `/executor/v1${url}`,
        headers: { cookie, ...(withCsrf ? { 'x-csrf-token': csrf } : {}) },
        ...(body === undefined ? {} : { payload: body as object }),
      });

    const listed = (await call('GET', '/requisites')).json().requisites;
    expect(listed.map((r: { id: string }) => r.id)).toEqual([mine.requisites[0]!.id]);
    const noCsrf = await call('PATCH', `/requisites/${mine.requisites[0]!.id}`, { is_active: false }, false);
    expect([noCsrf.statusCode, noCsrf.json().error]).toEqual([403, 'AUTH_003']);
    const off = await call('PATCH', `/requisites/${mine.requisites[0]!.id}`, { is_active: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().is_active).toBe(false);
    const foreign = await call('PATCH', `/requisites/${theirs.requisites[0]!.id}`, { is_active: false });
    expect(foreign.statusCode).toBe(404);
    expect((await adminOk<{ is_active: boolean }>(app, 'GET', `/requisites/${theirs.requisites[0]!.id}`)).is_active).toBe(true);
    expect((await call('GET', '/devices')).json().devices.map((d: { id: string }) => d.id)).toEqual([mine.device.id]);

    // Attaching a phone and sending the deposit out ask the person to confirm it is them; the app's bearer token is never asked.
    const unconfirmed = await Promise.all([
      call('POST', '/devices', { name: 'Stolen session' }),
      call('POST', '/withdrawals', { amount: 1, address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' }),
    ]);
    expect(unconfirmed.map((r) => [r.statusCode, r.json().error, r.json().data?.method])).toEqual([
      [403, 'AUTH_004', 'password'],
      [403, 'AUTH_004', 'password'],
    ]);
    const confirm = await app.inject({
      method: 'POST',
      url: '/auth/v1/confirm',
      headers: { cookie, 'x-csrf-token': csrf },
      payload: { password: 'correct horse battery' },
    });
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect((await call('POST', '/devices', { name: 'Second phone' })).statusCode).toBe(201);
    expect((await executorCall(app, mine.executor.token, 'POST', '/devices', { name: 'By the app' })).statusCode).toBe(201);

    // A staff session is not an executor.
    const staff = await adminOk<{ email: string }>(app, 'POST', '/users', {
      email: `staff${Date.now()}@kassir.test`,
      role: 'admin',
      password: 'correct horse battery',
    });
    const staffLogin = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: staff.email, password: 'correct horse battery' } });
    const staffCall = await app.inject({
      method: 'GET',
      url: '/executor/v1/status',
      headers: { cookie: String(staffLogin.headers['set-cookie']).split(';')[0]! },
    });
    expect([staffCall.statusCode, staffCall.json().error]).toEqual([403, 'AUTH_003']);
  });

  it('races: the same message forwarded many times at once, two phones reporting one transfer, and a person linking while a message matches — each payment completes once', async () => {
    // One message, ten deliveries at once (a forwarder retrying over a flaky network).
    const { executor, requisites, device } = await executorWithPhone(2);
    const amount = nextAmount();
    const payment = await pay(amount);
    const card = requisites.find((r) => r.id === payment.requisiteId)!;
    const message = { text: sms(card.value.slice(-4), amount), sender: '900', received_at: new Date().toISOString() };
    const answers = await Promise.all(Array.from({ length: 10 }, () => deviceCall(device.token, '/messages', message)));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.json().message_id)).size).toBe(1);
    expect(answers.every((a) => a.json().payment_id === payment.id)).toBe(true);

    // A second phone of the same executor reports the same transfer in its own words, at the same time as the first.
    const second = (await executorCall(app, executor.token, 'POST', '/devices', { name: 'Spare' })).json();
    const amount2 = nextAmount();
    const payment2 = await pay(amount2);
    const card2 = requisites.find((r) => r.id === payment2.requisiteId)!;
    const [one, two] = await Promise.all([
      deviceCall(device.token, '/messages', { text: sms(card2.value.slice(-4), amount2), sender: '900' }),
      deviceCall(second.token, '/messages', { text: `MIR-${card2.value.slice(-4)} 10:06 зачисление ${amount2}р Баланс: 20000р`, sender: '900' }),
    ]);
    expect([one.json().matched, two.json().matched].sort()).toEqual([false, true]);

    // An ambiguous message linked by the executor while the operator links it too.
    const amount3 = nextAmount();
    const a = await pay(amount3);
    const b = await pay(amount3);
    const waiting = (await deviceCall(device.token, '/messages', { text: noDigits(amount3), sender: '900' })).json();
    expect(waiting.status).toBe('ambiguous');
    const links = await Promise.all([
      executorCall(app, executor.token, 'POST', `/device-messages/${waiting.message_id}/link`, { payment_id: a.id }),
      admin(app, 'POST', `/device-messages/${waiting.message_id}/link`, { payment_id: b.id }),
    ]);
    expect(links.map((l) => l.statusCode).sort()).toEqual([200, 409]);
    const completed = [await statusOf(a.id), await statusOf(b.id)].filter((s) => s === 'COMPLETED');
    expect(completed).toHaveLength(1);

    for (const id of [payment.id, payment2.id, a.id, b.id]) {
      const { rows } = await service.ctx.db.query(
        `SELECT (SELECT count(*)::int FROM notifications WHERE payment_id = $1 AND status = 'matched') AS matched,
                (SELECT count(*)::int FROM ledger_transactions WHERE ref_id = $1 AND kind = 'payin') AS payins`,
        [id],
      );
      const done = (await statusOf(id)) === 'COMPLETED';
      expect(rows[0]).toEqual({ matched: done ? 1 : 0, payins: done ? 1 : 0 });
    }
    await expectLedgerOk(app);
  });
});
