import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { luhnValid } from '../src/lib/validators.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  executorCall,
  expectLedgerOk,
  type MerchantCredentials,
  multipartBody,
  signed,
  startTestService,
  type TestService,
  TINY_PNG,
  testCard,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

// Test mode (issue 33 item 4, Stripe's test mode): a test terminal's payments and payouts behave as
// live ones on the merchant API and send their webhooks, but touch no executor and no money; the
// merchant cabinet settles them on a click, through the one lifecycle; live ones refuse that.
const PASSWORD = 'correct horse battery';

let service: TestService;
let app: FastifyInstance;
/** Merchant A: a live terminal and a test terminal. */
let live: MerchantCredentials;
let test: MerchantCredentials;
/** Merchant B, with a test terminal of its own. */
let other: MerchantCredentials;
let executor: { id: string; token: string };
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;

interface Session {
  cookie: string;
  csrf: string;
  email: string;
}

beforeAll(async () => {
  service = await startTestService({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { worker: true });
  app = service.app;
  hooks = await webhookReceiver();
  await adminOk(app, 'PUT', '/rates/RUB', { rate: 95.5 });
  live = await createMerchant(app);
  const testTerminal = await createTerminal(app, live.merchantId, { name: 'Sandbox', is_test: true });
  test = { ...live, terminalId: testTerminal.id, apiKey: testTerminal.api_key };
  other = await createMerchant(app, { is_test: true });
  // A funded executor with a card that fits every payment below: a test payment must still not use it.
  executor = await createExecutor(app);
  await createRequisite(app, executor.id);
  await createRequisite(app, executor.id);
});
afterAll(async () => {
  hooks?.server.close();
  await service?.close();
});

async function signInAs(merchant: MerchantCredentials): Promise<Session> {
  const email = `m${Date.now()}${Math.random().toString(36).slice(2, 6)}@kassir.test`;
  await adminOk(app, 'POST', `/merchants/${merchant.merchantId}/users`, { email, password: PASSWORD });
  const res = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email, password: PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().csrf_token, email };
}

function as(session: Session, method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...extra, cookie: session.cookie };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  return app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function pay(creds: MerchantCredentials, amount: number) {
  const res = await createPayment(app, creds, { ext_id: uniqueExtId('tm'), amount, notify_url: hooks.url });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Record<string, any>;
}

async function executorMoney() {
  const e = await adminOk<{ balance: number; balance_frozen: number }>(app, 'GET', `/executors/${executor.id}`);
  return { balance: e.balance, frozen: e.balance_frozen };
}

async function terminalMoney(terminalId: string) {
  const t = await adminOk<{ balance: number; balance_frozen: number }>(app, 'GET', `/terminals/${terminalId}`);
  return { balance: t.balance, frozen: t.balance_frozen };
}

/** The postings that name an object (a payment or a payout) as their cause. */
async function postingsOf(id: string): Promise<number> {
  const { rows } = await service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_transactions WHERE ref_id = $1', [id]);
  return rows[0]!.n;
}

/** Waits for the webhook `event` about `id`, and checks its signature with the merchant's secret. */
async function webhook(id: string, event: string) {
  const hit = await until(
    () => hooks.received.find((r) => r.body.includes(id) && JSON.parse(r.body).event === event),
    20_000,
    100,
    `webhook ${event} for ${id}`,
  );
  const expected = createHmac('sha1', live.secretKey).update(hit.body).digest('base64');
  expect(hit.headers['x-signature']).toBe(expected);
  return JSON.parse(hit.body) as { event: string; data: Record<string, any> };
}

describe('test mode', () => {
  it('a test payment answers as a live one with test requisites from no executor; completed in the cabinet, its signed webhook goes out and no money moves', async () => {
    const session = await signInAs(live);
    const before = { executor: await executorMoney(), terminal: await terminalMoney(test.terminalId) };
    const livePayment = await pay(live, 1500);
    const payment = await pay(test, 1501);

    // The same spec fields as a live payment (the bank fields are there when the requisite has a bank).
    const fields = (p: Record<string, any>) => Object.keys(p).sort();
    expect(fields(payment)).toEqual(fields(livePayment));
    expect(payment.status).toBe('PENDING');
    expect(payment.requisites.value).toMatch(/^400000\d{10}$/);
    expect(luhnValid(payment.requisites.value)).toBe(true);
    expect(payment.requisites).toMatchObject({ type: 'card', holder: 'TEST CARDHOLDER' });
    const stored = await adminOk<Record<string, unknown>>(app, 'GET', `/payments/${payment.id}`);
    expect(stored).toMatchObject({ is_test: true, requisite_id: null });
    expect(await adminOk<Record<string, unknown>>(app, 'GET', `/payments/${livePayment.id}`)).toMatchObject({ is_test: false });
    // Only the live payment holds the executor's deposit.
    const afterCreate = await executorMoney();
    expect(afterCreate.frozen).toBeCloseTo(before.executor.frozen + 1500 / 95.5, 5);
    const pending = (await executorCall(app, executor.token, 'GET', '/payments/pending')).json().payments.map((p: { id: string }) => p.id);
    expect(pending).toContain(livePayment.id);
    expect(pending).not.toContain(payment.id);

    // The cabinet marks it and completes it on a click.
    const listed = (await as(session, 'GET', `/merchant/v1/payments?q=${payment.ext_id}`)).json().payments[0];
    expect(listed).toMatchObject({ id: payment.id, is_test: true });
    const done = await as(session, 'POST', `/merchant/v1/payments/${payment.id}/test/complete`, undefined, { 'idempotency-key': `c-${payment.id}` });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ id: payment.id, status: 'COMPLETED' });
    const hook = await webhook(payment.id, 'payment.completed');
    expect(hook.data).toMatchObject({ id: payment.id, status: 'COMPLETED', ext_id: payment.ext_id });
    expect(hook.data).not.toHaveProperty('is_test');
    expect((await signed(app, test, 'GET', `/v1/payments/${payment.id}`)).json().status).toBe('COMPLETED');

    expect(await executorMoney()).toEqual(afterCreate);
    expect(await terminalMoney(test.terminalId)).toEqual(before.terminal);
    expect(await postingsOf(payment.id)).toBe(0);
    await expectLedgerOk(app);
    const audited = await adminOk<{ entries: { actor: string; action: string }[] }>(app, 'GET', `/audit?object_id=${payment.id}`);
    expect(audited.entries).toContainEqual(expect.objectContaining({ actor: session.email, action: 'payment.test_complete' }));
    // Completed once: a second click is refused by the status guard.
    const again = await as(session, 'POST', `/merchant/v1/payments/${payment.id}/test/complete`);
    expect([again.statusCode, again.json().error, again.json().data]).toEqual([409, 'CONFLICT', { status: 'COMPLETED' }]);
  });

  it('expires a test payment, opens its dispute and approves or rejects it on a click, each with its webhook; the ledger stays untouched', async () => {
    const session = await signInAs(live);
    const approved = await pay(test, 1602);
    const rejected = await pay(test, 1603);
    for (const p of [approved, rejected]) {
      const expired = await as(session, 'POST', `/merchant/v1/payments/${p.id}/test/expire`);
      expect(expired.json()).toEqual({ id: p.id, status: 'CANCELLED' });
      expect((await webhook(p.id, 'payment.cancelled')).data.status).toBe('CANCELLED');
      const opened = await as(session, 'POST', `/merchant/v1/payments/${p.id}/dispute`, { comment: 'paid at 10:07' }, { 'idempotency-key': `d-${p.id}` });
      expect(opened.statusCode, opened.body).toBe(200);
      expect(opened.json()).toMatchObject({ id: p.id, status: 'dispute', dispute: { comment: 'paid at 10:07' } });
      await webhook(p.id, 'payment.dispute');
    }
    // The operator's dispute queue marks them as test disputes.
    const cards = await adminOk<{ disputes: { payment: { id: string; is_test: boolean } }[] }>(app, 'GET', '/disputes');
    expect(cards.disputes.find((d) => d.payment.id === approved.id)?.payment.is_test).toBe(true);
    const approve = await as(session, 'POST', `/merchant/v1/payments/${approved.id}/test/dispute/approve`, { amount: 1500 });
    expect(approve.json()).toEqual({ id: approved.id, status: 'COMPLETED_APPEAL' });
    expect((await webhook(approved.id, 'payment.completed_appeal')).data.received_amount).toBe(1500);
    const reject = await as(session, 'POST', `/merchant/v1/payments/${rejected.id}/test/dispute/reject`);
    expect(reject.json()).toEqual({ id: rejected.id, status: 'CANCELLED' });
    expect(hooks.received.filter((r) => r.body.includes(rejected.id) && JSON.parse(r.body).event === 'payment.cancelled').length).toBeGreaterThanOrEqual(1);
    expect(await postingsOf(approved.id)).toBe(0);
    expect(await postingsOf(rejected.id)).toBe(0);
    await expectLedgerOk(app);
  });

  it('a test payout, over the API or from the cabinet with an Idempotency-Key, reserves nothing, is offered to no executor, and is completed or failed on a click', async () => {
    const session = await signInAs(live);
    const before = await terminalMoney(test.terminalId);
    const body = {
      terminal_id: test.terminalId,
      ext_id: uniqueExtId('tp'),
      amount: 1000,
      method: 'card',
      requisites: testCard(),
      holder_name: 'Ivan I.',
      notify_url: hooks.url,
    };
    const key = { 'idempotency-key': `p-${body.ext_id}` };
    const created = await as(session, 'POST', '/merchant/v1/payouts', body, key);
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json()).toMatchObject({ ext_id: body.ext_id, status: 'pending', is_test: true, terminal_id: test.terminalId });
    const repeat = await as(session, 'POST', '/merchant/v1/payouts', body, key);
    expect([repeat.statusCode, repeat.json().id]).toEqual([200, created.json().id]);
    const viaApi = await signed(app, test, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('tp'),
      amount: 700,
      method: 'card',
      requisites: testCard(),
      holder_name: 'Ivan I.',
      notify_url: hooks.url,
    });
    expect(viaApi.statusCode, viaApi.body).toBe(200);
    expect(viaApi.json()).not.toHaveProperty('is_test');
    expect(await terminalMoney(test.terminalId)).toEqual(before);

    const offered = (await executorCall(app, executor.token, 'GET', '/payouts')).json().available.map((p: { id: string }) => p.id);
    expect(offered).not.toContain(created.json().id);
    expect(offered).not.toContain(viaApi.json().id);
    expect((await executorCall(app, executor.token, 'POST', `/payouts/${created.json().id}/take`)).statusCode).toBe(409);

    const completed = await as(session, 'POST', `/merchant/v1/payouts/${created.json().id}/test/complete`);
    expect(completed.json()).toMatchObject({ id: created.json().id, status: 'completed', is_test: true });
    expect((await webhook(created.json().id, 'payout.completed')).data.status).toBe('completed');
    const failed = await as(session, 'POST', `/merchant/v1/payouts/${viaApi.json().id}/test/fail`);
    expect(failed.json()).toMatchObject({ status: 'failed' });
    await webhook(viaApi.json().id, 'payout.failed');
    expect(await terminalMoney(test.terminalId)).toEqual(before);
    expect(await postingsOf(created.json().id)).toBe(0);
    await expectLedgerOk(app);
  });

  it('live payments and payouts refuse the test actions; another merchant cannot act on them at all', async () => {
    const session = await signInAs(live);
    const stranger = await signInAs(other);
    const livePayment = await pay(live, 1704);
    const testPayment = await pay(test, 1705);
    for (const action of ['complete', 'expire', 'dispute/approve', 'dispute/reject']) {
      const refused = await as(session, 'POST', `/merchant/v1/payments/${livePayment.id}/test/${action}`);
      expect([refused.statusCode, refused.json().error], action).toEqual([403, 'TEST_001']);
      const hidden = await as(stranger, 'POST', `/merchant/v1/payments/${testPayment.id}/test/${action}`);
      expect([hidden.statusCode, hidden.json().error], action).toEqual([404, 'PAY_006']);
    }
    expect((await signed(app, live, 'GET', `/v1/payments/${livePayment.id}`)).json().status).toBe('PENDING');
    expect((await signed(app, test, 'GET', `/v1/payments/${testPayment.id}`)).json().status).toBe('PENDING');

    // A live payout from the cabinet reserves its value and is offered to the executors; it refuses the test actions.
    await adminOk(app, 'POST', `/terminals/${live.terminalId}/adjustments`, { amount: 100, reason: 'test funds' });
    const body = { terminal_id: live.terminalId, ext_id: uniqueExtId('lp'), amount: 950, method: 'card', requisites: testCard(), holder_name: 'Ivan I.' };
    const livePayout = await as(session, 'POST', '/merchant/v1/payouts', body, { 'idempotency-key': `lp-${body.ext_id}` });
    expect(livePayout.statusCode, livePayout.body).toBe(200);
    expect(livePayout.json()).toMatchObject({ status: 'pending', is_test: false });
    expect((await terminalMoney(live.terminalId)).frozen).toBeGreaterThan(0);
    const offered = (await executorCall(app, executor.token, 'GET', '/payouts')).json().available.map((p: { id: string }) => p.id);
    expect(offered).toContain(livePayout.json().id);
    for (const event of ['complete', 'fail']) {
      const refused = await as(session, 'POST', `/merchant/v1/payouts/${livePayout.json().id}/test/${event}`);
      expect([refused.statusCode, refused.json().error]).toEqual([403, 'TEST_001']);
      const hidden = await as(stranger, 'POST', `/merchant/v1/payouts/${livePayout.json().id}/test/${event}`);
      expect([hidden.statusCode, hidden.json().error]).toEqual([404, 'PAY_001']);
    }
    const foreignTerminal = await as(stranger, 'POST', '/merchant/v1/payouts', { ...body, ext_id: uniqueExtId('x') });
    expect(foreignTerminal.statusCode).toBe(404);

    // A live dispute from the cabinet, with the receipt file as the API takes it; another merchant's is not found.
    await adminOk(app, 'POST', `/payments/${livePayment.id}/cancel`, { reason: 'payer gave up' });
    const file = multipartBody(
      { data: JSON.stringify({ comment: 'the bank shows it sent' }) },
      { content: TINY_PNG, name: 'receipt.png', contentType: 'image/png' },
    );
    const notTheirs = await app.inject({
      method: 'POST',
      url: `/merchant/v1/payments/${livePayment.id}/dispute`,
      headers: { cookie: stranger.cookie, 'x-csrf-token': stranger.csrf, 'content-type': file.contentType },
      payload: file.body,
    });
    expect([notTheirs.statusCode, notTheirs.json().error]).toEqual([404, 'PAY_006']);
    const disputed = await app.inject({
      method: 'POST',
      url: `/merchant/v1/payments/${livePayment.id}/dispute`,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': file.contentType },
      payload: file.body,
    });
    expect(disputed.statusCode, disputed.body).toBe(200);
    expect(disputed.json()).toMatchObject({
      status: 'dispute',
      dispute: { comment: 'the bank shows it sent', receipt_url: expect.stringContaining('/v1/receipts/') },
    });
    await expectLedgerOk(app);
  });

  it('the dashboard leaves test payments and payouts out', async () => {
    type Dashboard = { totals: { created: number }; by_terminal: { terminal_id: string }[]; queues?: Record<string, number> };
    const before = await adminOk<Dashboard>(app, 'GET', '/dashboard?window=hour');
    await pay(test, 1806);
    const after = await adminOk<Dashboard>(app, 'GET', '/dashboard?window=hour');
    expect(after.totals.created).toBe(before.totals.created);
    expect(after.by_terminal.map((t) => t.terminal_id)).not.toContain(test.terminalId);
    await pay(live, 1807);
    expect((await adminOk<Dashboard>(app, 'GET', '/dashboard?window=hour')).totals.created).toBe(before.totals.created + 1);
  });
});
