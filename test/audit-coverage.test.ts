/**
 * DESIGN.md: "Every act of a person, executor or device that changes state is in the audit log
 * (`GET /admin/v1/audit`, filterable by `object_type` and `object_id`), naming who did it."
 *
 * This file walks every route that changes something (POST, PUT, PATCH, DELETE) of every audience,
 * as the service really registers them (read from Fastify as it starts, not from a list kept by
 * hand): each one is performed once with a valid request, and its audit row is looked for — the
 * action, who did it (an operator's token, a person's email, `executor:<name>`, `device:<id>`) and
 * the object (type and id). A route that legitimately writes no row is in EXEMPT with the reason.
 * A new route with neither a case nor a reason fails the first test.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTelegram, startFakeTelegram } from './fakes/telegram.js';
import {
  ADMIN_TOKEN,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  executorCall,
  executorCompletesPayout,
  executorTakesPayout,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  testCard,
  uniqueExtId,
} from './helpers.js';

/** Every mutating route the service registers, as `METHOD /path`, read as Fastify registers them. */
const registered = new Set<string>();
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
subscribe('fastify.initialization', (message) => {
  const { fastify } = message as { fastify: FastifyInstance };
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (MUTATING.has(method)) registered.add(`${method} ${route.url}`);
  });
});

/**
 * Routes that write no audit row, and why. Each reason is reviewed: a route lands here only when
 * what it changes is recorded elsewhere or changes nothing anyone acts on.
 */
const V1 =
  "the merchant API (signed with a terminal's API key) is a machine acting for the merchant, not a person, executor or device; what it does is recorded on its own object — the payment's events and timeline, the payout, the withdrawal and the ledger transaction, each naming the terminal — and an audit write on the payment-create hot path would cost the batching its throughput (docs/operator.md, The audit log)";
const EXEMPT: Record<string, string> = {
  'POST /v1/payments': V1,
  'POST /v1/payments/:id/confirm': V1,
  'POST /v1/payments/:id/receipt': V1,
  'POST /v1/payments/:id/dispute': V1,
  'POST /v1/payments/:id/dispute/cancel': V1,
  'POST /v1/payouts': V1,
  'POST /v1/transfers': V1,
  'POST /v1/withdrawals': V1,
  'POST /device/v1/heartbeat':
    "a phone's heartbeat only records that it is alive (last_seen_at, battery, app version, shown on the device): one row a minute per phone would bury the acts",
  'POST /auth/v1/logout': "ends the caller's own session and nothing else; its start is audited (auth.login)",
  'POST /auth/v1/confirm': 'proves again that it is the person, for the risky act that follows — that act is audited; nothing else changes',
  'POST /auth/v1/two-factor/setup': 'prepares a secret that does nothing until POST /auth/v1/two-factor/enable, which is audited (auth.two_factor_on)',
  'POST /callbacks/providers/:providerId':
    "a provider's callback is a machine reporting on its own payment or payout: recorded in that payment's timeline or the payout's status, with the provider named",
  'POST /pay/:token/confirm': 'the payer\'s "I have paid" on the payment page is no one the operator knows: recorded in the payment\'s timeline',
};

interface Expected {
  action: string;
  actor: string;
  object_type: string;
  object_id: string;
}

const PASSWORD = 'correct horse battery';
const TRON_ADDRESS = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';

let service: TestService;
let app: FastifyInstance;
/** The merchant whose signed API makes payments and payouts for the executor to work on. */
let shop: MerchantCredentials;
/** The merchant whose person walks the cabinet. */
let cabinet: MerchantCredentials;
let executor: { id: string; token: string };
const EXECUTOR_NAME = 'Walker';
const cards = new Map<string, string>();
let device: { id: string; token: string; signing_secret: string };
let merchantPerson: Session;
let merchantEmail: string;

interface Session {
  cookie: string;
  csrf: string;
}

/** The operator API with the bearer token (and a fresh Idempotency-Key, as the console sends on money routes). */
async function op(method: string, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return app.inject({
    method: method as 'GET',
    url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'idempotency-key': randomUUID(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function signIn(email: string, password = PASSWORD): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email, password } });
  expect(res.statusCode, res.body).toBe(200);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().csrf_token };
}

function as(session: Session, method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...extra, cookie: session.cookie };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  return app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

function device_(method: string, url: string, body?: unknown) {
  return app.inject({
    method: method as 'GET',
    url: `/device/v1${url}`,
    headers: { authorization: `Bearer ${device.token}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body ?? {}),
  });
}

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${++seq}`;

/** A staff person (support) signed in, with the given password. */
async function staff(): Promise<{ id: string; email: string; session: Session }> {
  const email = `${unique('walk')}@kassir.test`;
  const user = await adminOk<{ id: string }>(app, 'POST', '/users', { email, role: 'support', password: PASSWORD });
  return { id: user.id, email, session: await signIn(email) };
}

let amountSeq = 1000;
/** A PENDING payment of the shop on one of the executor's cards: its id, requisite and the amount the payer sends. */
async function pending(): Promise<{ id: string; requisiteId: string; payerAmount: number; last4: string }> {
  const created = await createPayment(app, shop, { ext_id: uniqueExtId('walk'), amount: amountSeq++ });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const { rows } = await service.ctx.db.query<{ requisite_id: string; payer_amount: string }>(
    'SELECT requisite_id, payer_amount::text FROM payments WHERE id = $1',
    [created.body.id],
  );
  const { requisite_id: requisiteId, payer_amount: payerAmount } = rows[0]!;
  return { id: created.body.id, requisiteId, payerAmount: Number(payerAmount), last4: cards.get(requisiteId)!.slice(-4) };
}

/** A pending payout of the shop (the executors' route), for an executor to take or the operator to act on. */
async function payout(): Promise<string> {
  const res = await signed(app, shop, 'POST', '/v1/payouts', {
    ext_id: uniqueExtId('walk-out'),
    amount: 500,
    method: 'card',
    requisites: testCard(),
    holder_name: 'Ivan I.',
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

/** A payment the operator cancelled and the merchant disputes. */
async function disputed(): Promise<{ id: string; amount: number }> {
  const payment = await pending();
  expect((await op('POST', `/payments/${payment.id}/cancel`, { reason: 'the payer gave up' })).statusCode).toBe(200);
  const opened = await signed(app, shop, 'POST', `/v1/payments/${payment.id}/dispute`, {});
  expect(opened.statusCode, opened.body).toBe(200);
  return { id: payment.id, amount: Number(opened.json().amount) };
}

/** A message form a person teaches (docs/devices.md "Teaching a new message form"). */
const FORM = {
  name: 'Walk form',
  bank: 'walk',
  currency: 'RUB',
  template: 'WALKBANK {time} prishlo na {card}: {amount}',
  sample: 'WALKBANK 10:00 prishlo na 1234: 15.00',
};

/** The open dispute of a payment, by the executor's list (issue 35). */
async function disputeOf(paymentId: string): Promise<string> {
  const list = await executorCall(app, executor.token, 'GET', '/disputes?limit=1000');
  return list.json().disputes.find((d: { payment_id: string; status: string }) => d.payment_id === paymentId && d.status === 'awaiting_executor').id;
}

/** A message from the executor's phone that nothing can be read from: it waits for a person. */
async function unreadableMessage(): Promise<string> {
  const res = await device_('POST', '/messages', { text: `Проверка связи ${unique('')}`, sender: 'Friend' });
  expect(res.json()).toMatchObject({ status: 'unreadable' });
  return res.json().message_id;
}

/** A notification with no payment of its amount: kept for the operator. */
async function unmatchedNotification(requisiteId: string, amount: number): Promise<string> {
  const res = await executorCall(app, executor.token, 'POST', '/notifications', { requisite_id: requisiteId, amount, received_at: new Date().toISOString() });
  expect(res.json()).toMatchObject({ status: 'unmatched' });
  return res.json().notification_id;
}

/** A withdrawal of the shop's balance, waiting for the operator to send it (the manual adapter). */
async function withdrawal(): Promise<string> {
  const res = await signed(app, shop, 'POST', '/v1/withdrawals', { terminal_id: shop.terminalId, amount: 5, address: TRON_ADDRESS });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

async function spareExecutor(): Promise<{ id: string; token: string }> {
  return createExecutor(app, unique('Spare '), { deposit: 0 });
}

/** A rate kept by a feed (never fetched here: no job worker runs), the currency's own or a terminal's. */
async function feedOf(terminalId: string | null, currency: string): Promise<string> {
  const path = terminalId ? `/terminals/${terminalId}/rates/${currency}` : `/rates/${currency}`;
  ok(await op('PUT', path, { source: 'bybit_p2p', options: { base_url: 'http://127.0.0.1:9' } }));
  const { rows } = await service.ctx.db.query<{ id: string }>('SELECT id FROM rates WHERE terminal_id IS NOT DISTINCT FROM $1 AND currency = $2', [
    terminalId,
    currency,
  ]);
  return rows[0]!.id;
}

/** The feed's rate is 95 and it holds a jump to 110 for a person (as a fetch beyond max_jump_percent leaves it). */
async function heldJump(settingId: string): Promise<void> {
  await service.ctx.db.query(
    `WITH held AS (
       INSERT INTO rate_refreshes (rate_id, terminal_id, currency, kind, source, figure, markup_percent, rate)
       SELECT id, terminal_id, currency, 'held', source, 110, 0, 110 FROM rates WHERE id = $1 RETURNING id)
     UPDATE rates SET rate = 95, figure = 95, fetched_at = now(), held_refresh_id = (SELECT id FROM held) WHERE id = $1`,
    [settingId],
  );
}

function ok(res: LightMyRequestResponse): Record<string, any> {
  expect(res.statusCode, `${res.statusCode} ${res.body}`).toBeLessThan(300);
  return res.body ? res.json() : {};
}

const token = 'token';
const exec = () => `executor:${EXECUTOR_NAME}`;
const dev = () => `device:${device.id}`;

/** One valid request of each audited route, and the row it must leave. */
const CASES: Record<string, () => Promise<Expected>> = {
  // ── a phone ──
  'POST /device/v1/messages': async () => {
    const payment = await pending();
    const res = ok(await device_('POST', '/messages', { text: `MIR-${payment.last4} 10:05 зачисление ${payment.payerAmount}р Баланс: 10000р`, sender: '900' }));
    expect(res).toMatchObject({ matched: true, payment_id: payment.id });
    return { action: 'device_message.receive', actor: dev(), object_type: 'device_message', object_id: res.message_id };
  },
  'POST /device/v1/hooks/:token/:format': async () => {
    const payment = await pending();
    const ts = String(Date.now());
    const sign = encodeURIComponent(createHmac('sha256', device.signing_secret).update(`${ts}\n${device.signing_secret}`).digest('base64'));
    const body = JSON.stringify({ from: '900', text: `MIR-${payment.last4} 10:07 зачисление ${payment.payerAmount}р Баланс: 10000р`, timestamp: ts, sign });
    const res = ok(
      await app.inject({
        method: 'POST',
        url: `/device/v1/hooks/${device.token}/smsforwarder`,
        headers: { 'content-type': 'application/json' },
        payload: body,
      }),
    );
    expect(res).toMatchObject({ matched: true, payment_id: payment.id });
    return { action: 'device_message.receive', actor: dev(), object_type: 'device_message', object_id: res.message_id };
  },

  // ── the executor's apps (its bearer token) ──
  'POST /executor/v1/notifications': async () => {
    const payment = await pending();
    const res = ok(
      await executorCall(app, executor.token, 'POST', '/notifications', {
        requisite_id: payment.requisiteId,
        amount: payment.payerAmount,
        received_at: new Date().toISOString(),
      }),
    );
    expect(res).toMatchObject({ matched: true, payment_id: payment.id });
    return { action: 'notification.receive', actor: exec(), object_type: 'notification', object_id: res.notification_id };
  },
  'POST /executor/v1/pause': async () => {
    ok(await executorCall(app, executor.token, 'POST', '/pause'));
    return { action: 'executor.pause', actor: exec(), object_type: 'executor', object_id: executor.id };
  },
  'POST /executor/v1/resume': async () => {
    ok(await executorCall(app, executor.token, 'POST', '/resume'));
    return { action: 'executor.resume', actor: exec(), object_type: 'executor', object_id: executor.id };
  },
  'POST /executor/v1/payouts/:id/take': async () => {
    const id = await payout();
    ok(await executorTakesPayout(app, executor.token, id));
    return { action: 'payout.take', actor: exec(), object_type: 'payout', object_id: id };
  },
  'POST /executor/v1/payouts/:id/complete': async () => {
    const id = await payout();
    ok(await executorTakesPayout(app, executor.token, id));
    ok(await executorCompletesPayout(app, executor.token, id));
    return { action: 'payout.complete', actor: exec(), object_type: 'payout', object_id: id };
  },
  'POST /executor/v1/payouts/:id/fail': async () => {
    const id = await payout();
    ok(await executorTakesPayout(app, executor.token, id));
    ok(await executorCall(app, executor.token, 'POST', `/payouts/${id}/fail`, { reason: 'the bank refused the card' }));
    return { action: 'payout.fail', actor: exec(), object_type: 'payout', object_id: id };
  },
  'POST /executor/v1/disputes/:id/accept': async () => {
    const { id } = await disputed();
    const dispute = await disputeOf(id);
    ok(await executorCall(app, executor.token, 'POST', `/disputes/${dispute}/accept`, {}));
    return { action: 'dispute.accept', actor: exec(), object_type: 'dispute', object_id: dispute };
  },
  'POST /executor/v1/disputes/:id/contest': async () => {
    const { id } = await disputed();
    const dispute = await disputeOf(id);
    ok(await executorCall(app, executor.token, 'POST', `/disputes/${dispute}/contest`, { comment: 'nothing came' }));
    return { action: 'dispute.contest', actor: exec(), object_type: 'dispute', object_id: dispute };
  },
  'PATCH /executor/v1/requisites/:id': async () => {
    const spare = await createRequisite(app, executor.id);
    ok(await executorCall(app, executor.token, 'PATCH', `/requisites/${spare.id}`, { is_active: false }));
    return { action: 'requisite.update', actor: exec(), object_type: 'requisite', object_id: spare.id };
  },
  'POST /executor/v1/devices': async () => {
    const res = ok(await executorCall(app, executor.token, 'POST', '/devices', { name: 'Pixel 7, Sber' }));
    return { action: 'device.register', actor: exec(), object_type: 'device', object_id: res.id };
  },
  'DELETE /executor/v1/devices/:id': async () => {
    const spare = ok(await executorCall(app, executor.token, 'POST', '/devices', { name: 'Old phone' }));
    ok(await executorCall(app, executor.token, 'DELETE', `/devices/${spare.id}`));
    return { action: 'device.revoke', actor: exec(), object_type: 'device', object_id: spare.id };
  },
  'PUT /executor/v1/device-silence': async () => {
    ok(await executorCall(app, executor.token, 'PUT', '/device-silence', { minutes: null }));
    return { action: 'executor.device_silence', actor: exec(), object_type: 'executor', object_id: executor.id };
  },
  'POST /executor/v1/device-messages/:id/link': async () => {
    const message = await unreadableMessage();
    const payment = await pending();
    ok(await executorCall(app, executor.token, 'POST', `/device-messages/${message}/link`, { payment_id: payment.id }));
    return { action: 'device_message.link', actor: exec(), object_type: 'device_message', object_id: message };
  },
  'POST /executor/v1/device-messages/:id/set-aside': async () => {
    const message = await unreadableMessage();
    ok(await executorCall(app, executor.token, 'POST', `/device-messages/${message}/set-aside`, { note: 'a text from a friend' }));
    return { action: 'device_message.set_aside', actor: exec(), object_type: 'device_message', object_id: message };
  },
  'POST /executor/v1/parser-forms': async () => {
    const res = ok(await executorCall(app, executor.token, 'POST', '/parser-forms', FORM));
    return { action: 'parser_form.create', actor: exec(), object_type: 'parser_form', object_id: res.id };
  },
  'POST /executor/v1/withdrawals': async () => {
    const res = ok(await executorCall(app, executor.token, 'POST', '/withdrawals', { amount: 1, address: TRON_ADDRESS }));
    return { action: 'withdrawal.create', actor: exec(), object_type: 'withdrawal', object_id: res.id };
  },

  // ── a person's own sign-in ──
  'POST /auth/v1/login': async () => {
    const person = await staff();
    await signIn(person.email);
    return { action: 'auth.login', actor: person.email, object_type: 'user', object_id: person.id };
  },
  'DELETE /auth/v1/sessions/:id': async () => {
    const person = await staff();
    const other = await signIn(person.email);
    const sessions = ok(await as(other, 'GET', '/auth/v1/sessions')).sessions as { id: string; current: boolean }[];
    const first = sessions.find((s) => !s.current)!;
    ok(await as(other, 'DELETE', `/auth/v1/sessions/${first.id}`));
    return { action: 'auth.revoke_session', actor: person.email, object_type: 'session', object_id: first.id };
  },
  'POST /auth/v1/password': async () => {
    const person = await staff();
    ok(await as(person.session, 'POST', '/auth/v1/password', { current_password: PASSWORD, new_password: 'another horse battery' }));
    return { action: 'auth.change_password', actor: person.email, object_type: 'user', object_id: person.id };
  },
  'POST /auth/v1/two-factor/enable': async () => {
    const person = await staff();
    ok(await as(person.session, 'POST', '/auth/v1/confirm', { password: PASSWORD }));
    const setup = ok(await as(person.session, 'POST', '/auth/v1/two-factor/setup'));
    ok(await as(person.session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) }));
    return { action: 'auth.two_factor_on', actor: person.email, object_type: 'user', object_id: person.id };
  },
  'POST /auth/v1/two-factor/disable': async () => {
    const person = await staff();
    ok(await as(person.session, 'POST', '/auth/v1/confirm', { password: PASSWORD }));
    const setup = ok(await as(person.session, 'POST', '/auth/v1/two-factor/setup'));
    const enabled = ok(await as(person.session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) }));
    // The code that enabled it is spent: a recovery code turns it off.
    ok(await as(person.session, 'POST', '/auth/v1/two-factor/disable', { otp: enabled.recovery_codes[0] }));
    return { action: 'auth.two_factor_off', actor: person.email, object_type: 'user', object_id: person.id };
  },

  // ── a merchant's person in the cabinet ──
  'POST /merchant/v1/terminals/:id/api-key/rotate': async () => {
    const terminal = await createTerminal(app, cabinet.merchantId, { name: 'Spare' });
    ok(await as(merchantPerson, 'POST', `/merchant/v1/terminals/${terminal.id}/api-key/rotate`, { grace_seconds: 0 }));
    return { action: 'terminal.rotate_api_key', actor: merchantEmail, object_type: 'terminal', object_id: terminal.id };
  },
  'POST /merchant/v1/transfers': async () => {
    const terminal = await createTerminal(app, cabinet.merchantId, { name: 'Second' });
    ok(
      await as(
        merchantPerson,
        'POST',
        '/merchant/v1/transfers',
        { from_terminal_id: cabinet.terminalId, to_terminal_id: terminal.id, amount: 2.5 },
        {
          'idempotency-key': randomUUID(),
        },
      ),
    );
    return { action: 'transfer.create', actor: merchantEmail, object_type: 'terminal', object_id: cabinet.terminalId };
  },
  'POST /merchant/v1/secret-key/rotate': async () => {
    ok(await as(merchantPerson, 'POST', '/merchant/v1/secret-key/rotate', { grace_seconds: 3600 }));
    return { action: 'merchant.rotate_secret', actor: merchantEmail, object_type: 'merchant', object_id: cabinet.merchantId };
  },
  'POST /merchant/v1/withdrawals': async () => {
    const res = ok(
      await as(
        merchantPerson,
        'POST',
        '/merchant/v1/withdrawals',
        { terminal_id: cabinet.terminalId, amount: 5, address: TRON_ADDRESS },
        { 'idempotency-key': randomUUID() },
      ),
    );
    return { action: 'withdrawal.create', actor: merchantEmail, object_type: 'withdrawal', object_id: res.id };
  },
  'POST /merchant/v1/payments/:id/test/complete': async () => {
    const id = await testPayment();
    ok(await as(merchantPerson, 'POST', `/merchant/v1/payments/${id}/test/complete`));
    return { action: 'payment.test_complete', actor: merchantEmail, object_type: 'payment', object_id: id };
  },
  'POST /merchant/v1/payments/:id/test/expire': async () => {
    const id = await testPayment();
    ok(await as(merchantPerson, 'POST', `/merchant/v1/payments/${id}/test/expire`));
    return { action: 'payment.test_expire', actor: merchantEmail, object_type: 'payment', object_id: id };
  },
  'POST /merchant/v1/payments/:id/dispute': async () => {
    const id = await testDisputed();
    return { action: 'dispute.open', actor: merchantEmail, object_type: 'payment', object_id: id };
  },
  'POST /merchant/v1/payments/:id/test/dispute/approve': async () => {
    const id = await testDisputed();
    ok(await as(merchantPerson, 'POST', `/merchant/v1/payments/${id}/test/dispute/approve`, {}));
    return { action: 'dispute.test_approve', actor: merchantEmail, object_type: 'payment', object_id: id };
  },
  'POST /merchant/v1/payments/:id/test/dispute/reject': async () => {
    const id = await testDisputed();
    ok(await as(merchantPerson, 'POST', `/merchant/v1/payments/${id}/test/dispute/reject`));
    return { action: 'dispute.test_reject', actor: merchantEmail, object_type: 'payment', object_id: id };
  },
  'POST /merchant/v1/payouts': async () => {
    const id = await testPayout();
    return { action: 'payout.create', actor: merchantEmail, object_type: 'payout', object_id: id };
  },
  'POST /merchant/v1/payouts/:id/test/complete': async () => {
    const id = await testPayout();
    ok(await as(merchantPerson, 'POST', `/merchant/v1/payouts/${id}/test/complete`));
    return { action: 'payout.test_complete', actor: merchantEmail, object_type: 'payout', object_id: id };
  },
  'POST /merchant/v1/payouts/:id/test/fail': async () => {
    const id = await testPayout();
    ok(await as(merchantPerson, 'POST', `/merchant/v1/payouts/${id}/test/fail`));
    return { action: 'payout.test_fail', actor: merchantEmail, object_type: 'payout', object_id: id };
  },
  'POST /merchant/v1/webhooks/:id/resend': async () => {
    const event = await webhookEventOf(cabinet);
    ok(await as(merchantPerson, 'POST', `/merchant/v1/webhooks/${event}/resend`));
    return { action: 'webhook.resend', actor: merchantEmail, object_type: 'webhook_event', object_id: event };
  },

  // ── the operator (the bearer ADMIN_TOKEN; a person is named by email, as the cases above show) ──
  'POST /admin/v1/users': async () => {
    const res = ok(await op('POST', '/users', { email: `${unique('new')}@kassir.test`, role: 'support', password: PASSWORD }));
    return { action: 'user.create', actor: token, object_type: 'user', object_id: res.id };
  },
  'PATCH /admin/v1/users/:id': async () => {
    const person = await staff();
    ok(await op('PATCH', `/users/${person.id}`, { role: 'finance' }));
    return { action: 'user.update', actor: token, object_type: 'user', object_id: person.id };
  },
  'POST /admin/v1/users/:id/password': async () => {
    const person = await staff();
    ok(await op('POST', `/users/${person.id}/password`));
    return { action: 'user.reset_password', actor: token, object_type: 'user', object_id: person.id };
  },
  'POST /admin/v1/users/:id/two-factor/reset': async () => {
    const person = await staff();
    ok(await op('POST', `/users/${person.id}/two-factor/reset`));
    return { action: 'user.reset_two_factor', actor: token, object_type: 'user', object_id: person.id };
  },
  'PUT /admin/v1/two-factor-roles': async () => {
    const { roles } = ok(await op('GET', '/two-factor-roles')) as { roles: string[] };
    ok(await op('PUT', '/two-factor-roles', { roles }));
    return { action: 'settings.two_factor_roles', actor: token, object_type: 'settings', object_id: 'two_factor_roles' };
  },
  'PUT /admin/v1/alerts': async () => {
    ok(await op('PUT', '/alerts', { cooldown_minutes: 30 }));
    return { action: 'settings.alerts', actor: token, object_type: 'settings', object_id: 'alert_rules' };
  },
  'POST /admin/v1/merchants': async () => {
    const res = ok(await op('POST', '/merchants', { name: unique('Shop ') }));
    return { action: 'merchant.create', actor: token, object_type: 'merchant', object_id: res.id };
  },
  'POST /admin/v1/merchants/:id/users': async () => {
    const res = ok(await op('POST', `/merchants/${shop.merchantId}/users`, { email: `${unique('shop')}@kassir.test`, password: PASSWORD }));
    return { action: 'user.create', actor: token, object_type: 'user', object_id: res.id };
  },
  'POST /admin/v1/merchants/:id/secret-key/rotate': async () => {
    const spare = await createMerchant(app);
    ok(await op('POST', `/merchants/${spare.merchantId}/secret-key/rotate`, { grace_seconds: 0 }));
    return { action: 'merchant.rotate_secret', actor: token, object_type: 'merchant', object_id: spare.merchantId };
  },
  'POST /admin/v1/merchants/:id/terminals': async () => {
    const res = ok(
      await op('POST', `/merchants/${shop.merchantId}/terminals`, { name: 'Third', currency: 'RUB', payin_rate: 2.5, payout_rate: 1.5, withdrawal_fee: 1 }),
    );
    return { action: 'terminal.create', actor: token, object_type: 'terminal', object_id: res.id };
  },
  'PATCH /admin/v1/terminals/:id': async () => {
    ok(await op('PATCH', `/terminals/${shop.terminalId}`, { name: 'Main shop' }));
    return { action: 'terminal.update', actor: token, object_type: 'terminal', object_id: shop.terminalId };
  },
  'POST /admin/v1/terminals/:id/api-key/rotate': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Rotated' });
    ok(await op('POST', `/terminals/${terminal.id}/api-key/rotate`, { grace_seconds: 0 }));
    return { action: 'terminal.rotate_api_key', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'POST /admin/v1/terminals/:id/adjustments': async () => {
    ok(await op('POST', `/terminals/${shop.terminalId}/adjustments`, { amount: 1, reason: 'goodwill' }));
    return { action: 'terminal.adjust_balance', actor: token, object_type: 'terminal', object_id: shop.terminalId };
  },
  'PUT /admin/v1/terminals/:id/rates/:currency': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Own rate' });
    ok(await op('PUT', `/terminals/${terminal.id}/rates/RUB`, { rate: 96 }));
    return { action: 'terminal.set_rate', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'DELETE /admin/v1/terminals/:id/rates/:currency': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Own rate, removed' });
    ok(await op('PUT', `/terminals/${terminal.id}/rates/RUB`, { rate: 96 }));
    ok(await op('DELETE', `/terminals/${terminal.id}/rates/RUB`));
    return { action: 'terminal.remove_rate', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'PUT /admin/v1/terminals/:id/routes': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Routed' });
    ok(await op('PUT', `/terminals/${terminal.id}/routes`, [{ executors: true }]));
    return { action: 'terminal.set_routes', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'PUT /admin/v1/rates/:currency': async () => {
    ok(await op('PUT', '/rates/RUB', { rate: 95.5 }));
    return { action: 'rate.set', actor: token, object_type: 'rate', object_id: 'RUB' };
  },
  'PUT /admin/v1/risk/classes': async () => {
    ok(await op('PUT', '/risk/classes', { returning_from: 1, trusted_from: 10 }));
    return { action: 'risk.classes_set', actor: token, object_type: 'risk_rules', object_id: 'classes' };
  },
  'PUT /admin/v1/risk/requisite-limits': async () => {
    ok(await op('PUT', '/risk/requisite-limits', {}));
    return { action: 'risk.requisite_limits_set', actor: token, object_type: 'risk_rules', object_id: 'requisite_limits' };
  },
  'POST /admin/v1/rates/:currency/refresh': async () => {
    await feedOf(null, 'KGS');
    ok(await op('POST', '/rates/KGS/refresh'));
    return { action: 'rate.refresh_now', actor: token, object_type: 'rate', object_id: 'KGS' };
  },
  'POST /admin/v1/rates/:currency/held/accept': async () => {
    await heldJump(await feedOf(null, 'KGS'));
    ok(await op('POST', '/rates/KGS/held/accept'));
    return { action: 'rate.accept_jump', actor: token, object_type: 'rate', object_id: 'KGS' };
  },
  'POST /admin/v1/rates/:currency/held/keep': async () => {
    await heldJump(await feedOf(null, 'KGS'));
    ok(await op('POST', '/rates/KGS/held/keep'));
    return { action: 'rate.keep_jump', actor: token, object_type: 'rate', object_id: 'KGS' };
  },
  'POST /admin/v1/terminals/:id/rates/:currency/refresh': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Own feed' });
    await feedOf(terminal.id, 'RUB');
    ok(await op('POST', `/terminals/${terminal.id}/rates/RUB/refresh`));
    return { action: 'rate.refresh_now', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'POST /admin/v1/terminals/:id/rates/:currency/held/accept': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Own feed, jump accepted' });
    await heldJump(await feedOf(terminal.id, 'RUB'));
    ok(await op('POST', `/terminals/${terminal.id}/rates/RUB/held/accept`));
    return { action: 'rate.accept_jump', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'POST /admin/v1/terminals/:id/rates/:currency/held/keep': async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Own feed, rate kept' });
    await heldJump(await feedOf(terminal.id, 'RUB'));
    ok(await op('POST', `/terminals/${terminal.id}/rates/RUB/held/keep`));
    return { action: 'rate.keep_jump', actor: token, object_type: 'terminal', object_id: terminal.id };
  },
  'POST /admin/v1/executors': async () => {
    const res = ok(await op('POST', '/executors', { name: unique('New ') }));
    return { action: 'executor.create', actor: token, object_type: 'executor', object_id: res.id };
  },
  'PATCH /admin/v1/executors/:id': async () => {
    const spare = await spareExecutor();
    ok(await op('PATCH', `/executors/${spare.id}`, { name: unique('Renamed ') }));
    return { action: 'executor.update', actor: token, object_type: 'executor', object_id: spare.id };
  },
  'POST /admin/v1/executors/:id/login': async () => {
    const spare = await spareExecutor();
    const res = ok(await op('POST', `/executors/${spare.id}/login`, { email: `${unique('trader')}@kassir.test`, password: PASSWORD }));
    return { action: 'user.create', actor: token, object_type: 'user', object_id: res.id };
  },
  'POST /admin/v1/executors/:id/adjustments': async () => {
    const spare = await spareExecutor();
    ok(await op('POST', `/executors/${spare.id}/adjustments`, { amount: 10, reason: 'deposit in cash' }));
    return { action: 'executor.adjust_deposit', actor: token, object_type: 'executor', object_id: spare.id };
  },
  'POST /admin/v1/executors/:id/devices': async () => {
    const spare = await spareExecutor();
    const res = ok(await op('POST', `/executors/${spare.id}/devices`, { name: 'Redmi' }));
    return { action: 'device.register', actor: token, object_type: 'device', object_id: res.id };
  },
  'DELETE /admin/v1/executors/:id/devices/:deviceId': async () => {
    const spare = await spareExecutor();
    const phone = ok(await op('POST', `/executors/${spare.id}/devices`, { name: 'Lost phone' }));
    ok(await op('DELETE', `/executors/${spare.id}/devices/${phone.id}`));
    return { action: 'device.revoke', actor: token, object_type: 'device', object_id: phone.id };
  },
  'POST /admin/v1/risk/blocks': async () => {
    const block = ok(await op('POST', '/risk/blocks', { kind: 'client_id', value: 'audited-payer', reason: 'audit case' }));
    return { action: 'risk.block', actor: token, object_type: 'risk_block', object_id: block.id };
  },
  'DELETE /admin/v1/risk/blocks/:id': async () => {
    const block = ok(await op('POST', '/risk/blocks', { kind: 'ip', value: '192.0.2.200', reason: 'audit case' }));
    ok(await op('DELETE', `/risk/blocks/${block.id}`));
    return { action: 'risk.unblock', actor: token, object_type: 'risk_block', object_id: block.id };
  },
  'PUT /admin/v1/risk/limits': async () => {
    ok(await op('PUT', '/risk/limits', { scope: 'ip', window_seconds: 60, max_payments: 1000 }));
    return { action: 'risk.limit.set', actor: token, object_type: 'risk_limit', object_id: 'ip' };
  },
  'DELETE /admin/v1/risk/limits': async () => {
    ok(await op('PUT', '/risk/limits', { scope: 'ip', window_seconds: 60, max_payments: 1000 }));
    ok(await op('DELETE', '/risk/limits?scope=ip'));
    return { action: 'risk.limit.clear', actor: token, object_type: 'risk_limit', object_id: 'ip' };
  },
  'PUT /admin/v1/executors/:id/device-silence': async () => {
    const spare = await spareExecutor();
    ok(await op('PUT', `/executors/${spare.id}/device-silence`, { minutes: 60 }));
    return { action: 'executor.device_silence', actor: token, object_type: 'executor', object_id: spare.id };
  },
  'POST /admin/v1/executors/:id/token/rotate': async () => {
    const spare = await spareExecutor();
    ok(await op('POST', `/executors/${spare.id}/token/rotate`));
    return { action: 'executor.rotate_token', actor: token, object_type: 'executor', object_id: spare.id };
  },
  'POST /admin/v1/executors/:id/requisites': async () => {
    const spare = await spareExecutor();
    const res = ok(
      await op('POST', `/executors/${spare.id}/requisites`, {
        type: 'card',
        value: testCard(),
        bank: 'sberbank',
        holder: 'Ivan I.',
        currency: 'RUB',
        country: 'RU',
        methods: ['CARD'],
        min_amount: 0,
      }),
    );
    return { action: 'requisite.create', actor: token, object_type: 'requisite', object_id: res.id };
  },
  'PATCH /admin/v1/requisites/:id': async () => {
    const spare = await spareExecutor();
    const requisite = await createRequisite(app, spare.id);
    ok(await op('PATCH', `/requisites/${requisite.id}`, { holder: 'Petr P.' }));
    return { action: 'requisite.update', actor: token, object_type: 'requisite', object_id: requisite.id };
  },
  'POST /admin/v1/banks': async () => {
    const code = unique('walk_bank_');
    ok(await op('POST', '/banks', { code, name: 'Тестбанк', country: 'RU', kind: 'bank' }));
    return { action: 'bank.create', actor: token, object_type: 'bank', object_id: code };
  },
  'PATCH /admin/v1/banks/:code': async () => {
    const code = unique('walk_bank_');
    ok(await op('POST', '/banks', { code, name: 'Тестбанк', country: 'RU', kind: 'bank' }));
    ok(await op('PATCH', `/banks/${code}`, { name: 'Тестбанк 2' }));
    return { action: 'bank.update', actor: token, object_type: 'bank', object_id: code };
  },
  'POST /admin/v1/payments/:id/cancel': async () => {
    const payment = await pending();
    ok(await op('POST', `/payments/${payment.id}/cancel`, { reason: 'the payer gave up' }));
    return { action: 'payment.cancel', actor: token, object_type: 'payment', object_id: payment.id };
  },
  'POST /admin/v1/payments/:id/dispute/approve': async () => {
    const { id, amount } = await disputed();
    ok(await op('POST', `/payments/${id}/dispute/approve`, { amount, reason: 'the receipt shows the transfer' }));
    return { action: 'dispute.approve', actor: token, object_type: 'payment', object_id: id };
  },
  'POST /admin/v1/payments/:id/dispute/reject': async () => {
    const { id } = await disputed();
    ok(await op('POST', `/payments/${id}/dispute/reject`, { reason: 'no such transfer on the card' }));
    return { action: 'dispute.reject', actor: token, object_type: 'payment', object_id: id };
  },
  'POST /admin/v1/risk/hits/:id/settle': async () => {
    // A flag as the evidence checks write it (a reused receipt on a disputed payment).
    const { id: paymentId } = await disputed();
    const { rows } = await service.ctx.db.query<{ id: string }>(
      `INSERT INTO risk_hits (rule, action, payment_id, figure) VALUES ('receipt_reused', 'flagged', $1, 'receipt sha256 ab12… already used') RETURNING id`,
      [paymentId],
    );
    ok(await op('POST', `/risk/hits/${rows[0]!.id}/settle`, { comment: 'the same payer, a second order' }));
    return { action: 'risk.flag_settle', actor: token, object_type: 'risk_hit', object_id: rows[0]!.id };
  },
  'POST /admin/v1/payouts/:id/complete': async () => {
    const id = await payout();
    ok(await op('POST', `/payouts/${id}/complete`));
    return { action: 'payout.complete', actor: token, object_type: 'payout', object_id: id };
  },
  'POST /admin/v1/payouts/:id/cancel': async () => {
    const id = await payout();
    ok(await op('POST', `/payouts/${id}/cancel`, { reason: 'the merchant asked' }));
    return { action: 'payout.cancel', actor: token, object_type: 'payout', object_id: id };
  },
  'POST /admin/v1/payouts/:id/fail': async () => {
    const id = await payout();
    ok(await op('POST', `/payouts/${id}/fail`, { reason: 'the card is blocked' }));
    return { action: 'payout.fail', actor: token, object_type: 'payout', object_id: id };
  },
  'POST /admin/v1/providers': async () => {
    const res = ok(
      await op('POST', '/providers', {
        name: unique('Upstream '),
        kind: 'kassir',
        base_url: 'http://127.0.0.1:9',
        api_key: 'key-walk',
        secret_key: 'secret-walk',
      }),
    );
    return { action: 'provider.create', actor: token, object_type: 'provider', object_id: res.id };
  },
  'PATCH /admin/v1/providers/:id': async () => {
    const created = ok(
      await op('POST', '/providers', {
        name: unique('Upstream '),
        kind: 'kassir',
        base_url: 'http://127.0.0.1:9',
        api_key: 'key-walk',
        secret_key: 'secret-walk',
      }),
    );
    ok(await op('PATCH', `/providers/${created.id}`, { name: unique('Renamed upstream ') }));
    return { action: 'provider.update', actor: token, object_type: 'provider', object_id: created.id };
  },
  'POST /admin/v1/notifications/:id/link': async () => {
    const payment = await pending();
    const id = await unmatchedNotification(payment.requisiteId, payment.payerAmount - 1);
    ok(await op('POST', `/notifications/${id}/link`, { payment_id: payment.id }));
    return { action: 'notification.link', actor: token, object_type: 'notification', object_id: id };
  },
  'POST /admin/v1/notifications/:id/resolve': async () => {
    const payment = await pending();
    const id = await unmatchedNotification(payment.requisiteId, payment.payerAmount + 0.5);
    ok(await op('POST', `/notifications/${id}/resolve`, { note: 'a refund, not a payment' }));
    return { action: 'notification.resolve', actor: token, object_type: 'notification', object_id: id };
  },
  'POST /admin/v1/device-messages/:id/link': async () => {
    const message = await unreadableMessage();
    const payment = await pending();
    ok(await op('POST', `/device-messages/${message}/link`, { payment_id: payment.id }));
    return { action: 'device_message.link', actor: token, object_type: 'device_message', object_id: message };
  },
  'POST /admin/v1/device-messages/:id/set-aside': async () => {
    const message = await unreadableMessage();
    ok(await op('POST', `/device-messages/${message}/set-aside`, { note: 'not a bank message' }));
    return { action: 'device_message.set_aside', actor: token, object_type: 'device_message', object_id: message };
  },
  'POST /admin/v1/parser-forms': async () => {
    const res = ok(await op('POST', '/parser-forms', FORM));
    return { action: 'parser_form.create', actor: token, object_type: 'parser_form', object_id: res.id };
  },
  'POST /admin/v1/parser-forms/:id/versions': async () => {
    const form = ok(await op('POST', '/parser-forms', FORM));
    ok(await op('POST', `/parser-forms/${form.id}/versions`, { template: FORM.template, sample: FORM.sample }));
    return { action: 'parser_form.revise', actor: token, object_type: 'parser_form', object_id: form.id };
  },
  'POST /admin/v1/parser-forms/:id/versions/:version/publish': async () => {
    const form = ok(await op('POST', '/parser-forms', FORM));
    ok(await op('POST', `/parser-forms/${form.id}/versions/1/publish`));
    return { action: 'parser_form.publish', actor: token, object_type: 'parser_form', object_id: form.id };
  },
  'POST /admin/v1/parser-forms/:id/retire': async () => {
    const form = ok(await op('POST', '/parser-forms', FORM));
    ok(await op('POST', `/parser-forms/${form.id}/versions/1/publish`));
    ok(await op('POST', `/parser-forms/${form.id}/retire`));
    return { action: 'parser_form.retire', actor: token, object_type: 'parser_form', object_id: form.id };
  },
  'POST /admin/v1/webhooks/:id/resend': async () => {
    const event = await webhookEventOf(shop);
    ok(await op('POST', `/webhooks/${event}/resend`));
    return { action: 'webhook.resend', actor: token, object_type: 'webhook_event', object_id: event };
  },
  'POST /admin/v1/withdrawals/:id/complete': async () => {
    const id = await withdrawal();
    ok(await op('POST', `/withdrawals/${id}/complete`, { tx_hash: randomUUID().replaceAll('-', '').repeat(2) }));
    return { action: 'withdrawal.complete', actor: token, object_type: 'withdrawal', object_id: id };
  },
  'POST /admin/v1/withdrawals/:id/fail': async () => {
    const id = await withdrawal();
    ok(await op('POST', `/withdrawals/${id}/fail`, { reason: 'the address refused it' }));
    return { action: 'withdrawal.fail', actor: token, object_type: 'withdrawal', object_id: id };
  },
  // ── a person's own Telegram link (the same routes under each audience's prefix) ──
  ...telegramCases('/executor/v1'),
  ...telegramCases('/auth/v1'),
  ...telegramCases('/merchant/v1'),
};

/** A person of the audience `prefix` serves, signed in: Telegram links a person, never a machine token. */
async function telegramPerson(prefix: string): Promise<{ id: string; email: string; session: Session }> {
  if (prefix === '/auth/v1') return staff();
  const email = `${unique('tg')}@kassir.test`;
  const user =
    prefix === '/executor/v1'
      ? ok(await op('POST', `/executors/${(await spareExecutor()).id}/login`, { email, password: PASSWORD }))
      : ok(await op('POST', `/merchants/${shop.merchantId}/users`, { email, password: PASSWORD }));
  return { id: user.id, email, session: await signIn(email) };
}

/** The cases of the Telegram routes under `prefix`: a link code, settings, unlinking (of a linked chat). */
function telegramCases(prefix: string): Record<string, () => Promise<Expected>> {
  return {
    [`POST ${prefix}/telegram/link`]: async () => {
      const person = await telegramPerson(prefix);
      const res = await as(person.session, 'POST', `${prefix}/telegram/link`);
      expect(res.statusCode, res.body).toBe(201);
      return { action: 'telegram.link_code', actor: person.email, object_type: 'user', object_id: person.id };
    },
    [`PATCH ${prefix}/telegram`]: async () => {
      const person = await telegramPerson(prefix);
      ok(await as(person.session, 'PATCH', `${prefix}/telegram`, { switches: {} }));
      return { action: 'telegram.settings', actor: person.email, object_type: 'user', object_id: person.id };
    },
    [`DELETE ${prefix}/telegram`]: async () => {
      const person = await telegramPerson(prefix);
      await service.ctx.db.query('INSERT INTO telegram_chats (user_id, chat_id) VALUES ($1, $2)', [person.id, 700_000 + ++seq]);
      const res = await as(person.session, 'DELETE', `${prefix}/telegram`);
      expect(res.statusCode, res.body).toBe(204);
      return { action: 'telegram.unlink', actor: person.email, object_type: 'user', object_id: person.id };
    },
  };
}

/** A webhook delivery of the merchant: a payment with a notify_url, cancelled. */
let sandbox: MerchantCredentials | undefined;
/** A PENDING payment on a test terminal of the cabinet's merchant (test mode: the cabinet settles it). */
async function testPayment(): Promise<string> {
  if (!sandbox) {
    const terminal = await createTerminal(app, cabinet.merchantId, { name: 'Sandbox', is_test: true });
    sandbox = { ...cabinet, terminalId: terminal.id, apiKey: terminal.api_key };
  }
  const created = await createPayment(app, sandbox, { ext_id: uniqueExtId('walk-test'), amount: amountSeq++ });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.id;
}

/** A test payment, expired and disputed from the cabinet. */
async function testDisputed(): Promise<string> {
  const id = await testPayment();
  ok(await as(merchantPerson, 'POST', `/merchant/v1/payments/${id}/test/expire`));
  ok(await as(merchantPerson, 'POST', `/merchant/v1/payments/${id}/dispute`, {}));
  return id;
}

/** A payout created in the cabinet on the test terminal. */
async function testPayout(): Promise<string> {
  await testPayment();
  const body = {
    terminal_id: sandbox!.terminalId,
    ext_id: uniqueExtId('walk-test-out'),
    amount: 500,
    method: 'card',
    requisites: testCard(),
    holder_name: 'Ivan I.',
  };
  return ok(await as(merchantPerson, 'POST', '/merchant/v1/payouts', body)).id;
}

async function webhookEventOf(merchant: MerchantCredentials): Promise<string> {
  const created = await createPayment(app, merchant, { ext_id: uniqueExtId('walk-hook'), amount: amountSeq++, notify_url: 'http://127.0.0.1:9/hooks' });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  ok(await op('POST', `/payments/${created.body.id}/cancel`, { reason: 'the payer gave up' }));
  const { rows } = await service.ctx.db.query<{ id: string }>('SELECT id FROM webhook_events WHERE resource_id = $1 ORDER BY seq LIMIT 1', [created.body.id]);
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

let telegram: FakeTelegram;

beforeAll(async () => {
  // The bot answers getMe from a local stand-in: a link code needs its username.
  telegram = await startFakeTelegram();
  service = await startTestService({ TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot });
  app = service.app;
  await setRate(app, 'RUB', 95.5);
  shop = await createMerchant(app);
  await adminOk(app, 'POST', `/terminals/${shop.terminalId}/adjustments`, { amount: 10_000, reason: 'test funds' });
  cabinet = await createMerchant(app);
  await adminOk(app, 'POST', `/terminals/${cabinet.terminalId}/adjustments`, { amount: 1_000, reason: 'test funds' });
  executor = await createExecutor(app, EXECUTOR_NAME);
  for (let i = 0; i < 6; i++) {
    const card = await createRequisite(app, executor.id);
    cards.set(card.id, card.value);
  }
  device = ok(await executorCall(app, executor.token, 'POST', '/devices', { name: 'Walker phone' })) as typeof device;

  // The merchant's person: signed in, confirmed, two-factor on (withdrawing and rotating keys need it).
  merchantEmail = `${unique('cabinet')}@kassir.test`;
  await adminOk(app, 'POST', `/merchants/${cabinet.merchantId}/users`, { email: merchantEmail, password: PASSWORD });
  merchantPerson = await signIn(merchantEmail);
  ok(await as(merchantPerson, 'POST', '/auth/v1/confirm', { password: PASSWORD }));
  const setup = ok(await as(merchantPerson, 'POST', '/auth/v1/two-factor/setup'));
  ok(await as(merchantPerson, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) }));
}, 120_000);
afterAll(async () => {
  await service?.close();
  await telegram?.close();
});

describe('the audit log covers every route that changes something', () => {
  it('every mutating route of every audience has a case below or a stated reason to write no row, and no case names a route that is gone', () => {
    expect(registered.size).toBeGreaterThan(50);
    const missing = [...registered].filter((route) => !(route in CASES) && !(route in EXEMPT)).sort();
    expect(missing, 'routes with no audit case and no reason in EXEMPT').toEqual([]);
    const stale = [...Object.keys(CASES), ...Object.keys(EXEMPT)].filter((route) => !registered.has(route)).sort();
    expect(stale, 'cases or reasons for routes that no longer exist').toEqual([]);
    const both = Object.keys(CASES).filter((route) => route in EXEMPT);
    expect(both).toEqual([]);
  });

  for (const [route, run] of Object.entries(CASES)) {
    it(`${route} is audited: action, who, object`, { timeout: 60_000 }, async () => {
      const { rows: mark } = await service.ctx.db.query<{ last: string | null }>('SELECT max(id)::text AS last FROM audit_log');
      const expected = await run();
      const { rows } = await service.ctx.db.query<Expected>('SELECT action, actor, object_type, object_id FROM audit_log WHERE id > $1 ORDER BY id', [
        mark[0]!.last ?? '0',
      ]);
      expect(rows).toContainEqual(expected);
      // Found through the operator API by its object, as the Audit screen finds it.
      const listed = await adminOk<{ entries: Expected[] }>(
        app,
        'GET',
        `/audit?object_type=${expected.object_type}&object_id=${encodeURIComponent(expected.object_id)}&action=${expected.action}`,
      );
      expect(listed.entries.map(({ action, actor, object_type, object_id }) => ({ action, actor, object_type, object_id }))).toContainEqual(expected);
    });
  }
});

describe('an act and its audit row commit together', () => {
  /** While this runs, no audit row can be written (a trigger refuses the insert). */
  async function withAuditRefused(run: () => Promise<void>): Promise<void> {
    const db = service.ctx.db;
    await db.query(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused by the test'; END $$`);
    await db.query('CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit()');
    try {
      await run();
    } finally {
      await db.query('DROP TRIGGER refuse_audit ON audit_log');
      await db.query('DROP FUNCTION refuse_audit()');
    }
  }

  it('when the row cannot be written, an executor taking a payout, its notification and its phone completing a payment change nothing', async () => {
    const id = await payout();
    const notified = await pending();
    const messaged = await pending();
    await withAuditRefused(async () => {
      expect((await executorTakesPayout(app, executor.token, id)).statusCode).toBe(500);
      const notification = await executorCall(app, executor.token, 'POST', '/notifications', {
        requisite_id: notified.requisiteId,
        amount: notified.payerAmount,
        received_at: new Date().toISOString(),
      });
      expect(notification.statusCode).toBe(500);
      const message = await device_('POST', '/messages', {
        text: `MIR-${messaged.last4} 11:05 зачисление ${messaged.payerAmount}р Баланс: 10000р`,
        sender: '900',
      });
      expect(message.statusCode).toBe(500);
    });
    const { rows } = await service.ctx.db.query<{ id: string; status: string }>(
      'SELECT id, status FROM payouts WHERE id = $1 UNION ALL SELECT id, status FROM payments WHERE id = ANY($2)',
      [id, [notified.id, messaged.id]],
    );
    expect(Object.fromEntries(rows.map((row) => [row.id, row.status]))).toEqual({ [id]: 'pending', [notified.id]: 'PENDING', [messaged.id]: 'PENDING' });
    const { rows: kept } = await service.ctx.db.query('SELECT 1 FROM notifications WHERE payment_id = ANY($1)', [[notified.id, messaged.id]]);
    expect(kept).toEqual([]);
  });

  it("when the row cannot be written, the operator's adjustment of a terminal's balance posts nothing", async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Adjusted with no audit' });
    await withAuditRefused(async () => {
      expect((await op('POST', `/terminals/${terminal.id}/adjustments`, { amount: 5, reason: 'goodwill' })).statusCode).toBe(500);
    });
    const { rows } = await service.ctx.db.query(`SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.terminal_id = $1`, [
      terminal.id,
    ]);
    expect(rows).toEqual([]);
  });

  /** The rows of `sql` as plain objects (what is in the database now). */
  async function rowsOf(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return (await service.ctx.db.query(sql, params)).rows;
  }

  it("when the row cannot be written, the operator's people, executors, requisites, merchants, terminals, banks, providers and routes stay as they were", async () => {
    const person = await staff();
    const spare = await spareExecutor();
    const requisite = await createRequisite(app, spare.id);
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Kept as it was' });
    const provider = ok(
      await op('POST', '/providers', { name: unique('Kept upstream '), kind: 'kassir', base_url: 'http://127.0.0.1:9', api_key: 'k', secret_key: 's' }),
    );
    const names = {
      email: `${unique('refused')}@kassir.test`,
      executor: unique('Refused '),
      merchant: unique('Refused shop '),
      terminal: unique('Refused terminal '),
      bank: unique('refused_bank_'),
      provider: unique('Refused upstream '),
    };
    const before = {
      person: await rowsOf('SELECT role FROM users WHERE id = $1', [person.id]),
      executor: await rowsOf('SELECT name FROM executors WHERE id = $1', [spare.id]),
      requisite: await rowsOf('SELECT holder, updated_at FROM requisites WHERE id = $1', [requisite.id]),
      terminal: await rowsOf('SELECT name, updated_at FROM terminals WHERE id = $1', [terminal.id]),
      provider: await rowsOf('SELECT name FROM providers WHERE id = $1', [provider.id]),
    };
    await withAuditRefused(async () => {
      const refused = async (res: Promise<LightMyRequestResponse>, what: string) => expect((await res).statusCode, what).toBe(500);
      await refused(op('POST', '/users', { email: names.email, role: 'support', password: PASSWORD }), 'user create');
      await refused(op('PATCH', `/users/${person.id}`, { role: 'finance' }), 'user update');
      await refused(op('POST', `/merchants/${shop.merchantId}/users`, { email: `m-${names.email}`, password: PASSWORD }), 'merchant sign-in');
      await refused(op('POST', '/executors', { name: names.executor }), 'executor create');
      await refused(op('PATCH', `/executors/${spare.id}`, { name: unique('Renamed ') }), 'executor update');
      await refused(
        op('POST', `/executors/${spare.id}/requisites`, {
          type: 'card',
          value: testCard(),
          bank: 'sberbank',
          holder: 'Ivan I.',
          currency: 'RUB',
          country: 'RU',
          methods: ['CARD'],
        }),
        'requisite create',
      );
      await refused(op('PATCH', `/requisites/${requisite.id}`, { holder: 'Petr P.' }), 'requisite update');
      await refused(op('POST', '/merchants', { name: names.merchant }), 'merchant create');
      await refused(op('POST', `/merchants/${shop.merchantId}/terminals`, { name: names.terminal, currency: 'RUB' }), 'terminal create');
      await refused(op('PATCH', `/terminals/${terminal.id}`, { name: 'Renamed with no audit' }), 'terminal update');
      await refused(op('POST', '/banks', { code: names.bank, name: 'Тестбанк', country: 'RU', kind: 'bank' }), 'bank create');
      await refused(
        op('POST', '/providers', { name: names.provider, kind: 'kassir', base_url: 'http://127.0.0.1:9', api_key: 'k', secret_key: 's' }),
        'provider create',
      );
      await refused(op('PATCH', `/providers/${provider.id}`, { name: unique('Renamed upstream ') }), 'provider update');
      await refused(op('PUT', `/terminals/${terminal.id}/routes`, [{ executors: true }]), 'routes set');
    });
    expect(await rowsOf('SELECT 1 FROM users WHERE email = ANY($1)', [[names.email, `m-${names.email}`]])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM executors WHERE name = $1', [names.executor])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM requisites WHERE executor_id = $1 AND id <> $2', [spare.id, requisite.id])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM merchants WHERE name = $1', [names.merchant])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM terminals WHERE name = $1', [names.terminal])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM banks WHERE code = $1', [names.bank])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM providers WHERE name = $1', [names.provider])).toEqual([]);
    expect(await rowsOf('SELECT 1 FROM terminal_routes WHERE terminal_id = $1', [terminal.id])).toEqual([]);
    expect({
      person: await rowsOf('SELECT role FROM users WHERE id = $1', [person.id]),
      executor: await rowsOf('SELECT name FROM executors WHERE id = $1', [spare.id]),
      requisite: await rowsOf('SELECT holder, updated_at FROM requisites WHERE id = $1', [requisite.id]),
      terminal: await rowsOf('SELECT name, updated_at FROM terminals WHERE id = $1', [terminal.id]),
      provider: await rowsOf('SELECT name FROM providers WHERE id = $1', [provider.id]),
    }).toEqual(before);
  });

  it("when the row cannot be written, a person's sign-in, sessions, password and two-factor stay as they were", async () => {
    const person = await staff();
    const other = await signIn(person.email);
    const listed = ok(await as(other, 'GET', '/auth/v1/sessions')).sessions as { id: string; current: boolean }[];
    const first = listed.find((s) => !s.current)!;
    ok(await as(person.session, 'POST', '/auth/v1/confirm', { password: PASSWORD }));
    const setup = ok(await as(person.session, 'POST', '/auth/v1/two-factor/setup'));
    const liveSessions = () => rowsOf('SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL ORDER BY id', [person.id]);
    const sessionsBefore = await liveSessions();
    const hashBefore = await rowsOf('SELECT password_hash FROM users WHERE id = $1', [person.id]);
    await withAuditRefused(async () => {
      expect((await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: person.email, password: PASSWORD } })).statusCode, 'sign in').toBe(
        500,
      );
      expect((await as(other, 'DELETE', `/auth/v1/sessions/${first.id}`)).statusCode, 'session revoke').toBe(500);
      expect(
        (await as(person.session, 'POST', '/auth/v1/password', { current_password: PASSWORD, new_password: 'another horse battery' })).statusCode,
        'password change',
      ).toBe(500);
      expect(
        (await as(person.session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) })).statusCode,
        'two-factor on',
      ).toBe(500);
    });
    // No session started, none ended, the password and two-factor are as they were.
    expect(await liveSessions()).toEqual(sessionsBefore);
    expect(await rowsOf('SELECT password_hash FROM users WHERE id = $1', [person.id])).toEqual(hashBefore);
    expect(await rowsOf('SELECT totp_enabled_at FROM users WHERE id = $1', [person.id])).toEqual([{ totp_enabled_at: null }]);

    // Two-factor on (audited; the code refused above was not spent with it), then off refused: it stays on.
    const enabled = ok(await as(person.session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) }));
    await withAuditRefused(async () => {
      expect((await as(person.session, 'POST', '/auth/v1/two-factor/disable', { otp: enabled.recovery_codes[0] })).statusCode, 'two-factor off').toBe(500);
    });
    expect((await rowsOf('SELECT totp_enabled_at FROM users WHERE id = $1', [person.id]))[0]!.totp_enabled_at).not.toBeNull();
  }, 60_000);
});

describe('a change whose process dies before its audit row is written', () => {
  /**
   * Makes `request` while audit_log is held, so that the change is made and its row waits; then
   * kills the database backend of that transaction — what a kill -9 of the service does to its
   * open transactions — and lets audit_log go. Written the old way (the row after the change had
   * committed), the change would stay with no row; now the killed transaction takes both.
   */
  async function killedAtItsAudit(request: () => Promise<LightMyRequestResponse>): Promise<void> {
    const blocker = new pg.Client({ connectionString: service.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE audit_log IN EXCLUSIVE MODE');
      const answer = request();
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        // Asked outside the blocker's transaction, which would see one snapshot of pg_stat_activity.
        const { rows } = await service.ctx.db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query ILIKE 'INSERT INTO audit_log%'`,
        );
        pid = rows[0]?.pid;
        if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(pid, 'a transaction waiting to write its audit row').toBeDefined();
      // The change is in that transaction, not yet committed; its process dies here.
      await service.ctx.db.query('SELECT pg_terminate_backend($1)', [pid]);
      await blocker.query('ROLLBACK');
      expect((await answer).statusCode).toBeGreaterThanOrEqual(500);
    } finally {
      await blocker.end();
    }
  }

  it("an operator's change of a terminal: neither the new name nor its row exists", async () => {
    const terminal = await createTerminal(app, shop.merchantId, { name: 'Killed before its audit' });
    await killedAtItsAudit(() => op('PATCH', `/terminals/${terminal.id}`, { name: 'Renamed, then killed' }));
    const { rows } = await service.ctx.db.query('SELECT name FROM terminals WHERE id = $1', [terminal.id]);
    expect(rows).toEqual([{ name: 'Killed before its audit' }]);
    const { rows: audited } = await service.ctx.db.query("SELECT 1 FROM audit_log WHERE action = 'terminal.update' AND object_id = $1", [terminal.id]);
    expect(audited).toEqual([]);
  });

  it('a new sign-in made by the operator: neither the user nor its row exists', async () => {
    const email = `${unique('killed')}@kassir.test`;
    await killedAtItsAudit(() => op('POST', '/users', { email, role: 'support', password: PASSWORD }));
    const { rows } = await service.ctx.db.query('SELECT 1 FROM users WHERE email = $1', [email]);
    expect(rows).toEqual([]);
    const { rows: audited } = await service.ctx.db.query("SELECT 1 FROM audit_log WHERE action = 'user.create' AND after->>'email' = $1", [email]);
    expect(audited).toEqual([]);
  });
});
