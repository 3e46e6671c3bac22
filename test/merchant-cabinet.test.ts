import type { FastifyInstance } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  notifyTransfer,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

// The merchant cabinet's API (/merchant/v1): a merchant's person, signed in, reaches its own objects only.
const PASSWORD = 'correct horse battery';

let service: TestService;
let app: FastifyInstance;
let mine: MerchantCredentials;
let theirs: MerchantCredentials;
let executor: { id: string; token: string };
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;

interface Session {
  cookie: string;
  csrf: string;
}

beforeAll(async () => {
  service = await startTestService({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { worker: true });
  app = service.app;
  hooks = await webhookReceiver();
  await setRate(app, 'RUB', 95.5);
  mine = await createMerchant(app);
  theirs = await createMerchant(app);
  executor = await createExecutor(app);
  await createRequisite(app, executor.id);
});
afterAll(async () => {
  hooks?.server.close();
  await service?.close();
});

async function signInAs(merchant: MerchantCredentials): Promise<Session> {
  const user = await adminOk<{ email: string }>(app, 'POST', `/merchants/${merchant.merchantId}/users`, {
    email: `m${Date.now()}${Math.random().toString(36).slice(2, 6)}@kassir.test`,
    password: PASSWORD,
  });
  const res = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: user.email, password: PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().csrf_token };
}

function as(session: Session, method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...extra, cookie: session.cookie };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  return app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function pay(merchant: MerchantCredentials, amount: number, notifyUrl?: string) {
  const res = await createPayment(app, merchant, { ext_id: uniqueExtId('mc'), amount, ...(notifyUrl ? { notify_url: notifyUrl } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; ext_id: string };
}

describe('the merchant cabinet API', () => {
  it('finds its own payments by ext_id, with a timeline that keeps the operator’s side out; another merchant’s are not there', async () => {
    const session = await signInAs(mine);
    const own = await pay(mine, 1111);
    const other = await pay(theirs, 1112);
    const detail = await adminOk<{ requisite_id: string }>(app, 'GET', `/payments/${own.id}`);
    await notifyTransfer(app, executor.token, detail.requisite_id, 1111);

    const found = (await as(session, 'GET', `/merchant/v1/payments?q=${own.ext_id}`)).json();
    expect(found.payments.map((p: { id: string }) => p.id)).toEqual([own.id]);
    expect(found.payments[0]).not.toHaveProperty('executor_id');
    expect((await as(session, 'GET', `/merchant/v1/payments?q=${other.ext_id}`)).json().payments).toEqual([]);
    const notMine = await as(session, 'GET', `/merchant/v1/payments/${other.id}`);
    expect([notMine.statusCode, notMine.json().error]).toEqual([404, 'PAY_006']);
    expect((await as(session, 'GET', `/merchant/v1/payments/${other.id}/timeline`)).statusCode).toBe(404);
    const refused = await as(session, 'GET', `/merchant/v1/payments?executor_id=${executor.id}`);
    expect([refused.statusCode, refused.json().error]).toEqual([400, 'VALIDATION']);

    const timeline = (await as(session, 'GET', `/merchant/v1/payments/${own.id}/timeline`)).json().timeline as Record<string, unknown>[];
    const kinds = timeline.map((item) => item.kind);
    expect(kinds).toContain('created');
    expect(kinds).toContain('status_changed');
    expect(kinds).not.toContain('notification');
    expect(kinds).not.toContain('ledger_posting');
    for (const item of timeline) for (const field of ['executor_id', 'executor_name', 'requisite_id', 'by']) expect(item).not.toHaveProperty(field);

    const csv = await as(session, 'GET', '/merchant/v1/payments?format=csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const [header, ...lines] = csv.body.trim().split('\r\n');
    expect(header).not.toContain('executor_id');
    expect(lines.join('\n')).toContain(own.ext_id);
    expect(lines.join('\n')).not.toContain(other.ext_id);
  });

  it('lists its webhook deliveries with the request and the answers, and sends one again; another merchant’s cannot be seen or re-sent', async () => {
    const session = await signInAs(mine);
    const other = await signInAs(theirs);
    const own = await pay(mine, 1222, hooks.url);
    await adminOk(app, 'POST', `/payments/${own.id}/cancel`);
    const delivered = await until(async () =>
      (await as(session, 'GET', `/merchant/v1/webhooks?resource_id=${own.id}`)).json().webhooks.find((w: { status: string }) => w.status === 'delivered'),
    );
    const event = (await as(session, 'GET', `/merchant/v1/webhooks/${delivered.id}`)).json();
    expect(event.payload).toMatchObject({ id: own.id, status: 'CANCELLED' });
    expect(event.attempts[0]).toMatchObject({ status_code: 200 });
    expect((await as(other, 'GET', `/merchant/v1/webhooks/${delivered.id}`)).statusCode).toBe(404);
    expect((await as(other, 'POST', `/merchant/v1/webhooks/${delivered.id}/resend`)).statusCode).toBe(404);
    expect((await as(other, 'GET', '/merchant/v1/webhooks')).json().webhooks.map((w: { id: string }) => w.id)).not.toContain(delivered.id);
    const deliveries = () => hooks.received.filter((r) => r.body.includes(own.id)).length;
    const before = deliveries();
    const resent = await as(session, 'POST', `/merchant/v1/webhooks/${delivered.id}/resend`);
    expect(resent.statusCode, resent.body).toBe(202);
    await until(() => (deliveries() > before ? true : undefined));
  });

  it('moves money between its terminals after confirming; withdrawing and rotating keys need two-factor; staff and strangers are refused', async () => {
    const second = { terminalId: (await createTerminal(app, mine.merchantId, { name: 'Second' })).id };
    await adminOk(app, 'POST', `/terminals/${mine.terminalId}/adjustments`, { amount: 100, reason: 'test funds' });
    const session = await signInAs(mine);
    const me = (await as(session, 'GET', '/merchant/v1/me')).json();
    expect(me.merchant).toEqual({ id: mine.merchantId, name: expect.stringMatching(/^Shop /) });
    expect(me.terminals.map((t: { id: string }) => t.id).sort()).toEqual([mine.terminalId, second.terminalId].sort());

    const move = { from_terminal_id: mine.terminalId, to_terminal_id: second.terminalId, amount: 12.5 };
    const unconfirmed = await as(session, 'POST', '/merchant/v1/transfers', move);
    expect([unconfirmed.statusCode, unconfirmed.json().error]).toEqual([403, 'AUTH_004']);
    expect((await as(session, 'POST', '/auth/v1/confirm', { password: PASSWORD })).statusCode).toBe(200);
    // The form's Idempotency-Key: a repeat after a lost answer moves the money once.
    const moveKey = { 'idempotency-key': `move-${Date.now()}` };
    const moved = await as(session, 'POST', '/merchant/v1/transfers', move, moveKey);
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await as(session, 'POST', '/merchant/v1/transfers', move, moveKey)).statusCode).toBe(200);
    const statement = (await as(session, 'GET', `/merchant/v1/terminals/${second.terminalId}/statement`)).json();
    expect(statement.entries[0]).toMatchObject({ account: 'available', kind: 'transfer' });
    expect(Number(statement.entries[0].amount)).toBe(12.5);
    expect(statement.entries.filter((e: { kind: string }) => e.kind === 'transfer')).toHaveLength(1);
    const audited = await adminOk<{ total: number }>(app, 'GET', `/audit?action=transfer.create&object_id=${mine.terminalId}`);
    expect(audited.total).toBe(1);
    const badKey = await as(session, 'POST', '/merchant/v1/transfers', move, { 'idempotency-key': 'two words' });
    expect([badKey.statusCode, badKey.json().error]).toEqual([400, 'TRF_001']);
    const foreignTerminal = await as(session, 'POST', '/merchant/v1/transfers', { ...move, to_terminal_id: theirs.terminalId });
    expect([foreignTerminal.statusCode, foreignTerminal.json().error]).toEqual([404, 'TRF_002']);
    expect((await as(session, 'GET', `/merchant/v1/terminals/${theirs.terminalId}/statement`)).statusCode).toBe(404);

    const withdrawal = { terminal_id: mine.terminalId, amount: 5, address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' };
    const noTwoFactor = await as(session, 'POST', '/merchant/v1/withdrawals', withdrawal);
    expect([noTwoFactor.statusCode, noTwoFactor.json().error, noTwoFactor.json().data]).toEqual([403, 'AUTH_003', { two_factor_required: true }]);
    const setup = (await as(session, 'POST', '/auth/v1/two-factor/setup')).json();
    expect((await as(session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) })).statusCode).toBe(200);
    const withdrawKey = { 'idempotency-key': `withdraw-${Date.now()}` };
    const sent = await as(session, 'POST', '/merchant/v1/withdrawals', withdrawal, withdrawKey);
    expect(sent.statusCode, sent.body).toBe(201);
    const again = await as(session, 'POST', '/merchant/v1/withdrawals', withdrawal, withdrawKey);
    expect([again.statusCode, again.json().id]).toEqual([200, sent.json().id]);
    expect((await as(session, 'GET', '/merchant/v1/withdrawals')).json().withdrawals.map((w: { id: string }) => w.id)).toEqual([sent.json().id]);

    // A rotated API key is shown once; the old one keeps signing through its grace period.
    const rotated = await as(session, 'POST', `/merchant/v1/terminals/${mine.terminalId}/api-key/rotate`, { grace_seconds: 3600 });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = { ...mine, apiKey: rotated.json().api_key as string };
    expect((await signed(app, fresh, 'GET', '/v1/balance')).statusCode).toBe(200);
    expect((await signed(app, mine, 'GET', '/v1/balance')).statusCode).toBe(200);
    expect((await as(session, 'POST', `/merchant/v1/terminals/${theirs.terminalId}/api-key/rotate`, {})).statusCode).toBe(404);

    const staff = await adminOk<{ email: string }>(app, 'POST', '/users', { email: `ops${Date.now()}@kassir.test`, role: 'admin', password: PASSWORD });
    const staffLogin = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: staff.email, password: PASSWORD } });
    const staffCall = await app.inject({ method: 'GET', url: '/merchant/v1/me', headers: { cookie: String(staffLogin.headers['set-cookie']).split(';')[0]! } });
    expect([staffCall.statusCode, staffCall.json().error]).toEqual([403, 'AUTH_003']);
    const stranger = await app.inject({ method: 'GET', url: '/merchant/v1/me' });
    expect([stranger.statusCode, stranger.json().error]).toEqual([401, 'AUTH_001']);
    const noCsrf = await app.inject({ method: 'POST', url: '/merchant/v1/transfers', headers: { cookie: session.cookie }, payload: move });
    expect([noCsrf.statusCode, noCsrf.json().error]).toEqual([403, 'AUTH_003']);
  });
});
