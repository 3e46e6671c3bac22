import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Decimal } from 'decimal.js';
import type { JobHelpers } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { POLL_TASK } from '../src/disputes/provider-status.service.js';
import type { RunningService } from '../src/instance.js';
import { taskList } from '../src/jobs.js';
import { hmacSha1Base64 } from '../src/lib/crypto.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  testCard,
  uniqueExtId,
  until as untilWithin,
  webhookReceiver,
} from './helpers.js';

// Two Kassir instances on separate databases, both listening on real ports: A routes its payments
// and payouts to B (A is B's merchant), B executes them with its own executor and calls A back.
// Two more instances of A on A's database: one with tight routing limits for the failover tests,
// one whose public URL nobody can reach (B's callbacks to it are lost).
let a: TestService;
let b: TestService;
let aFast: RunningService;
let aLost: RunningService;
let aAtB: MerchantCredentials;
let merchantA: MerchantCredentials;
let executorB: { id: string; token: string };
let requisiteB: { id: string; value: string };
let providerB: { id: string; callback_url: string };
/** Two instances and their jobs on a shared 2-core machine: give their round trips more time. */
const until = <T>(probe: () => T | undefined | null | Promise<T | undefined | null>) => untilWithin(probe, 30_000);

let hook: Awaited<ReturnType<typeof webhookReceiver>>;
let files: Awaited<ReturnType<typeof fileServer>>;
let fake: Awaited<ReturnType<typeof fakeProvider>>;
let closedPort: number;

const RATE_A = '95';
const PAYIN_RATE_A = '3';
const ROUTE_BUDGET_MS = 3000;
const SECOND_PNG = Buffer.concat([TINY_PNG, Buffer.from('a later receipt')]);

/** Serves a PNG, as a merchant's receipt link would. */
async function fileServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(SECOND_PNG));
  await listen(server);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/receipts/late.png`, server };
}

type FakeMode = 'ok' | 'hang' | '500' | 'pay004';

/**
 * Fake upstream providers on one server, one per first path segment (`/<name>/v1/payments`): each
 * creates payments according to its mode and counts the creations it was asked for. Reads answer
 * 404 at once, so polling never waits on a fake.
 */
async function fakeProvider() {
  const modes = new Map<string, FakeMode>();
  const calls = new Map<string, number>();
  const requisites = new Map<string, { type: string; value: string }>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [, name = '', ...rest] = (req.url ?? '').split('/');
      if (req.method !== 'POST' || rest.join('/') !== 'v1/payments') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'PAY_006', message: 'not here' }));
        return;
      }
      calls.set(name, (calls.get(name) ?? 0) + 1);
      const mode = modes.get(name) ?? 'ok';
      if (mode === 'hang') return; // never answers
      if (mode === '500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'INTERNAL', message: 'boom' }));
        return;
      }
      if (mode === 'pay004') {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'PAY_004', message: 'No available requisites' }));
        return;
      }
      const given = requisites.get(name)!;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: randomUUID(),
          status: 'PENDING',
          amount: 1,
          currency: 'RUB',
          requisites: { ...given, holder: `Holder ${name}` },
        }),
      );
    });
  });
  await listen(server);
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    server,
    calls: (name: string) => calls.get(name) ?? 0,
    setMode: (name: string, mode: FakeMode) => modes.set(name, mode),
    /** Registers the fake as a provider at A; answers its id and the requisites it hands out. */
    async register(name: string, mode: FakeMode, type = 'card') {
      modes.set(name, mode);
      const given = { type, value: type === 'card' ? testCard('4000') : `+7999${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}` };
      requisites.set(name, given);
      const created = await adminOk<{ id: string }>(a.app, 'POST', '/providers', {
        name: `Fake ${name}`,
        kind: 'kassir',
        base_url: `${base}/${name}`,
        api_key: `key-${name}`,
        secret_key: `secret-${name}`,
      });
      return { id: created.id, requisites: given };
    },
  };
}

async function listen(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (content: Buffer) => createHash('sha256').update(content).digest('hex');

/** A merchant request to A (through any of A's instances: they share A's public URL but one). */
function signedA(creds: MerchantCredentials, method: string, url: string, body?: unknown, via: RunningService = a) {
  return signed(via.app, creds, method, url, body, via.ctx.config.publicBaseUrl);
}

async function paymentAtA(id: string, creds = merchantA): Promise<Record<string, any>> {
  return (await signedA(creds, 'GET', `/v1/payments/${id}`)).json();
}

async function statusAtA(id: string, wanted: string, creds = merchantA): Promise<Record<string, any>> {
  return until(async () => {
    const payment = await paymentAtA(id, creds);
    return payment.status === wanted ? payment : undefined;
  });
}

/** How A knows the payment at B: B's id for it and the token B must send back. */
async function upstreamOf(paymentId: string): Promise<{ provider_payment_id: string; provider_token: string }> {
  const { rows } = await a.ctx.db.query('SELECT provider_payment_id, provider_token FROM payments WHERE id = $1', [paymentId]);
  return rows[0];
}

/** The amounts A's ledger credited to the terminal's available balance for one payment. */
async function creditsAtA(paymentId: string): Promise<string[]> {
  const { rows } = await a.ctx.db.query<{ amount: string }>(
    `SELECT e.amount::text FROM ledger_entries e
       JOIN ledger_transactions t ON t.id = e.transaction_id JOIN ledger_accounts acc ON acc.id = e.account_id
      WHERE t.ref_id = $1 AND acc.kind = 'terminal_available' ORDER BY e.id`,
    [paymentId],
  );
  return rows.map((r) => new Decimal(r.amount).toFixed(6));
}

const expectedCredit = (amount: string, payinRate = PAYIN_RATE_A) =>
  new Decimal(amount)
    .div(RATE_A)
    .mul(new Decimal(1).minus(new Decimal(payinRate).div(100)))
    .toDecimalPlaces(6, Decimal.ROUND_HALF_UP)
    .toFixed(6);

/** B's executor reports the transfer for a payment executed at B. */
async function notifyAtB(amount: number) {
  const res = await b.app.inject({
    method: 'POST',
    url: '/executor/v1/notifications',
    headers: { authorization: `Bearer ${executorB.token}`, 'content-type': 'application/json' },
    payload: { requisite_id: requisiteB.id, amount },
  });
  return res.json();
}

async function createAtA(amount: number, extra: Record<string, unknown> = {}, creds = merchantA, via: RunningService = a) {
  const res = await signedA(creds, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount, ...extra }, via);
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

beforeAll(async () => {
  const [portA, portB] = [await freePort(), await freePort()];
  closedPort = await freePort();
  b = await startTestService(
    { PORT: String(portB), PUBLIC_BASE_URL: `http://127.0.0.1:${portB}`, KASSIR_WEBHOOK_RETRY_BASE_MS: '200' },
    { worker: true, listen: true },
  );
  a = await startTestService(
    { PORT: String(portA), PUBLIC_BASE_URL: `http://127.0.0.1:${portA}`, KASSIR_WEBHOOK_RETRY_BASE_MS: '200' },
    { worker: true, listen: true },
  );
  [hook, files] = await Promise.all([webhookReceiver(), fileServer()]);
  // At B: A is a merchant with a funded terminal (for payouts).
  await setRate(b.app, 'RUB', 90);
  aAtB = await createMerchant(b.app, { payin_rate: 1, payout_rate: 1 });
  await adminOk(b.app, 'POST', `/terminals/${aAtB.terminalId}/adjustments`, { amount: 1000, reason: 'test funds' });
  executorB = await createExecutor(b.app);
  requisiteB = await createRequisite(b.app, executorB.id, { holder: 'B holder' });
  // At A: B is a provider, and A's merchant's terminal routes everything to it.
  await setRate(a.app, 'RUB', Number(RATE_A));
  merchantA = await createMerchant(a.app, { payin_rate: Number(PAYIN_RATE_A) });
  providerB = await adminOk<{ id: string; callback_url: string }>(a.app, 'POST', '/providers', {
    name: 'Kassir B',
    kind: 'kassir',
    base_url: `http://127.0.0.1:${portB}`,
    api_key: aAtB.apiKey,
    secret_key: aAtB.secretKey,
  });
  expect(providerB.callback_url).toBe(`http://127.0.0.1:${portA}/callbacks/providers/${providerB.id}`);
  await adminOk(a.app, 'PUT', `/terminals/${merchantA.terminalId}/routes`, [{ provider_id: providerB.id }]);
  // Other instances of A share A's database; no worker of their own, and no fixed port.
  aFast = await a.startAnother({
    PORT: '0',
    KASSIR_WORKER: 'false',
    KASSIR_ROUTE_BUDGET_MS: String(ROUTE_BUDGET_MS),
    KASSIR_PROVIDER_TIMEOUT_MS: '1000',
    KASSIR_PROVIDER_BREAKER_FAILURES: '2',
    KASSIR_PROVIDER_COOLDOWN_SECONDS: '3',
  });
  aLost = await a.startAnother({ PORT: '0', KASSIR_WORKER: 'false', PUBLIC_BASE_URL: `http://127.0.0.1:${closedPort}` });
}, 180_000);
afterAll(async () => {
  fake?.server.closeAllConnections();
  for (const server of [hook?.server, files?.server, fake?.server]) server?.close();
  await a?.close();
  await b?.close();
});

describe('A routes to B (two instances, real HTTP)', { timeout: 120_000 }, () => {
  it('created at A with B requisites; B executor completes it at B; B webhook completes it at A; A credits at its own rates; A merchant gets A webhook', async () => {
    const before = (await signedA(merchantA, 'GET', '/v1/balance')).json();
    const { status, body } = await createAtA(2000, { notify_url: hook.url, notification_token: 'shop-a-token' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ status: 'PENDING', rate: 95, payin_rate: 3, requisites: { type: 'card', value: requisiteB.value, holder: 'B holder' } });
    // At B it is A's payment, A's payment id as its ext_id, executed by B's requisite.
    const upstream = await upstreamOf(body.id);
    const atB = await adminOk(b.app, 'GET', `/payments/${upstream.provider_payment_id}`);
    expect(atB).toMatchObject({ ext_id: body.id, merchant_id: aAtB.merchantId, requisite_id: requisiteB.id, status: 'PENDING', rate: 90, payin_rate: 1 });

    expect(await notifyAtB(2000)).toMatchObject({ matched: true, payment_id: upstream.provider_payment_id });
    expect(await adminOk(b.app, 'GET', `/payments/${upstream.provider_payment_id}`)).toMatchObject({ status: 'COMPLETED' });
    await statusAtA(body.id, 'COMPLETED');

    // Credited at A by A's rate and payin_rate: 2000 / 95 × 0.97, to the micro-USDT.
    const credit = expectedCredit('2000');
    expect(credit).toBe('20.421053');
    expect(await creditsAtA(body.id)).toEqual([credit]);
    const after = (await signedA(merchantA, 'GET', '/v1/balance')).json();
    expect(new Decimal(after.balance).minus(before.balance).toFixed(6)).toBe(credit);

    const delivery = await until(() => hook.received.find((r) => JSON.parse(r.body).data.id === body.id && JSON.parse(r.body).event === 'payment.completed'));
    expect(delivery.headers['x-notification-token']).toBe('shop-a-token');
    expect(delivery.headers['x-signature']).toBe(hmacSha1Base64(merchantA.secretKey, delivery.body));
    expect(JSON.parse(delivery.body).data).toMatchObject({ id: body.id, ext_id: body.ext_id, status: 'COMPLETED', rate: 95, payin_rate: 3 });
    expect(await adminOk(a.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
    expect(await adminOk(b.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('provider credentials are stored sealed and never shown', async () => {
    const { rows } = await a.ctx.db.query('SELECT api_key_enc, secret_key_enc FROM providers WHERE id = $1', [providerB.id]);
    expect(rows[0].api_key_enc).not.toContain(aAtB.apiKey);
    expect(rows[0].secret_key_enc).not.toContain(aAtB.secretKey);
    expect(rows[0].secret_key_enc).not.toContain(Buffer.from(aAtB.secretKey).toString('base64'));
    const listed = await admin(a.app, 'GET', '/providers');
    expect(listed.body).not.toContain(aAtB.apiKey);
    expect(listed.body).not.toContain(aAtB.secretKey);
    expect(listed.json().providers).toContainEqual(
      expect.objectContaining({
        id: providerB.id,
        kind: 'kassir',
        is_active: true,
        callback_url: providerB.callback_url,
        breaker: { failures: 0, open_until: null },
      }),
    );
  });

  it('dispute: cancelled at B → CANCELLED at A; dispute with a file at A is opened at B with it; a later receipt link is forwarded; B approves another amount → COMPLETED_APPEAL at A', async () => {
    const { body } = await createAtA(2100, { notify_url: hook.url, notification_token: 'shop-a-token' });
    const bId = (await upstreamOf(body.id)).provider_payment_id;
    await adminOk(b.app, 'POST', `/payments/${bId}/cancel`);
    await statusAtA(body.id, 'CANCELLED');

    const form = multipartBody(
      { data: JSON.stringify({ amount: 1900, comment: 'paid 1900, here is the receipt' }) },
      { content: TINY_PNG, contentType: 'image/png' },
    );
    const opened = await signedMultipart(a.app, merchantA, `/v1/payments/${body.id}/dispute`, form, a.config.publicBaseUrl);
    expect(opened.statusCode, opened.body).toBe(200);
    expect(opened.json()).toMatchObject({ id: body.id, status: 'dispute', dispute: { amount: 1900 } });

    // A's job opens it at B with the uploaded file.
    const card = await until(async () => {
      const { disputes } = await adminOk<{ disputes: any[] }>(b.app, 'GET', '/disputes');
      return disputes.find((d) => d.payment.id === bId);
    });
    expect(card).toMatchObject({ status: 'open', amount: 1900, comment: 'paid 1900, here is the receipt', payment: { status: 'DISPUTE', ext_id: body.id } });
    expect(card.receipt).toMatchObject({ content_type: 'image/png', size_bytes: TINY_PNG.length, sha256: sha256(TINY_PNG) });

    // A's operator does not decide it: B does.
    const mine = await admin(a.app, 'POST', `/payments/${body.id}/dispute/approve`, { amount: 2100 });
    expect(mine.statusCode).toBe(409);
    expect(mine.json().error).toBe('CONFLICT');
    expect((await paymentAtA(body.id)).status).toBe('DISPUTE');

    // A later receipt as a link: A fetches the file and hands it to B, where it is stored.
    const later = await signedA(merchantA, 'POST', `/v1/payments/${body.id}/receipt`, { receipt_url: files.url });
    expect(later.statusCode, later.body).toBe(200);
    const forwarded = await until(async () => {
      const found = await adminOk<{ receipts: any[] }>(b.app, 'GET', `/disputes/${card.id}`);
      return found.receipts.find((r) => r.sha256 === sha256(SECOND_PNG));
    });
    expect(forwarded).toMatchObject({ content_type: 'image/png', size_bytes: SECOND_PNG.length });
    const stored = await admin(b.app, 'GET', `/receipts/${forwarded.id}`);
    expect(sha256(stored.rawPayload)).toBe(sha256(SECOND_PNG));

    // B's operator approves for the amount B's executor actually received.
    expect(await adminOk(b.app, 'POST', `/payments/${bId}/dispute/approve`, { amount: 1900 })).toMatchObject({
      status: 'COMPLETED_APPEAL',
      received_amount: 1900,
    });
    const done = await statusAtA(body.id, 'COMPLETED_APPEAL');
    expect(done.received_amount).toBe(1900);
    expect(await creditsAtA(body.id)).toEqual([expectedCredit('1900')]);
    const delivery = await until(() =>
      hook.received.find((r) => JSON.parse(r.body).data.id === body.id && JSON.parse(r.body).event === 'payment.completed_appeal'),
    );
    expect(delivery.headers['x-signature']).toBe(hmacSha1Base64(merchantA.secretKey, delivery.body));
    expect(delivery.headers['x-notification-token']).toBe('shop-a-token');
    expect(JSON.parse(delivery.body).data).toMatchObject({ id: body.id, status: 'COMPLETED_APPEAL', amount: 2100, received_amount: 1900 });
    const closed = await adminOk<{ disputes: any[] }>(a.app, 'GET', '/disputes?status=approved');
    expect(closed.disputes.find((d) => d.payment.id === body.id)).toMatchObject({ decided_amount: 1900, decided_by: 'provider' });
    expect(await adminOk(a.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('dispute rejected at B → CANCELLED at A, nothing credited', async () => {
    const { body } = await createAtA(2200);
    const bId = (await upstreamOf(body.id)).provider_payment_id;
    await adminOk(b.app, 'POST', `/payments/${bId}/cancel`);
    await statusAtA(body.id, 'CANCELLED');
    const opened = await signedA(merchantA, 'POST', `/v1/payments/${body.id}/dispute`, { comment: 'I paid' });
    expect(opened.statusCode, opened.body).toBe(200);
    await until(async () => ((await adminOk(b.app, 'GET', `/payments/${bId}`)).status === 'DISPUTE' ? true : undefined));
    await adminOk(b.app, 'POST', `/payments/${bId}/dispute/reject`);
    await until(async () => {
      const { disputes } = await adminOk<{ disputes: any[] }>(a.app, 'GET', '/disputes?status=rejected');
      return disputes.find((d) => d.payment.id === body.id);
    });
    expect((await paymentAtA(body.id)).status).toBe('CANCELLED');
    expect(await creditsAtA(body.id)).toEqual([]);
  });
});

describe('provider callbacks are checked', { timeout: 60_000 }, () => {
  let paymentId: string;
  let upstream: { provider_payment_id: string; provider_token: string };

  function event(id: string, data: Record<string, unknown>) {
    return JSON.stringify({ event: `payment.${String(data.status).toLowerCase()}`, id, data });
  }

  function callback(body: string, headers: Record<string, string>, providerId = providerB.id) {
    return a.app.inject({
      method: 'POST',
      url: `/callbacks/providers/${providerId}`,
      headers: { 'content-type': 'application/json', 'x-event-id': JSON.parse(body).id, ...headers },
      payload: body,
    });
  }

  beforeAll(async () => {
    const { status, body } = await createAtA(2300);
    expect(status).toBe(200);
    paymentId = body.id;
    upstream = await upstreamOf(paymentId);
  });

  const completed = () => ({
    id: upstream.provider_payment_id,
    status: 'COMPLETED',
    amount: 2300,
    currency: 'RUB',
    requisites: { type: 'card', value: requisiteB.value },
  });

  it('unknown provider → 404; bad signature → 401 AUTH_002; unknown payment → 404', async () => {
    const body = event(randomUUID(), completed());
    const sig = hmacSha1Base64(aAtB.secretKey, body);
    const headers = { 'x-signature': sig, 'x-notification-token': upstream.provider_token };
    expect((await callback(body, headers, randomUUID())).statusCode).toBe(404);
    expect((await callback(body, headers, 'not-a-uuid')).statusCode).toBe(404);

    const forged = await callback(body, { ...headers, 'x-signature': hmacSha1Base64('not-the-secret', body) });
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error).toBe('AUTH_002');
    expect((await callback(body, { 'x-notification-token': upstream.provider_token })).statusCode).toBe(401);

    const other = event(randomUUID(), { ...completed(), id: randomUUID() });
    const unknown = await callback(other, { 'x-signature': hmacSha1Base64(aAtB.secretKey, other), 'x-notification-token': upstream.provider_token });
    expect(unknown.statusCode).toBe(404);
    expect((await paymentAtA(paymentId)).status).toBe('PENDING');
  });

  it('a valid signature with the wrong notification token → 401 and no change; the same event with the right token applies once; a replay is a duplicate', async () => {
    const eventId = randomUUID();
    const body = event(eventId, completed());
    const sig = hmacSha1Base64(aAtB.secretKey, body);
    const wrong = await callback(body, { 'x-signature': sig, 'x-notification-token': 'guessed-token' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('AUTH_002');
    expect((await callback(body, { 'x-signature': sig })).statusCode).toBe(401);
    expect((await paymentAtA(paymentId)).status).toBe('PENDING');
    expect(await creditsAtA(paymentId)).toEqual([]);

    // A refused callback leaves no trace: the same event id still applies when genuine.
    const right = await callback(body, { 'x-signature': sig, 'x-notification-token': upstream.provider_token });
    expect(right.statusCode, right.body).toBe(200);
    expect(right.json()).toEqual({ ok: true, duplicate: false });
    expect((await paymentAtA(paymentId)).status).toBe('COMPLETED');
    const balance = (await signedA(merchantA, 'GET', '/v1/balance')).json();

    const replay = await callback(body, { 'x-signature': sig, 'x-notification-token': upstream.provider_token });
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ ok: true, duplicate: true });
    expect(await creditsAtA(paymentId)).toEqual([expectedCredit('2300')]);
    expect((await signedA(merchantA, 'GET', '/v1/balance')).json()).toEqual(balance);
    expect(await adminOk(a.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});

describe('a missed callback is recovered by polling', { timeout: 60_000 }, () => {
  it('B cannot reach A; A polls B and completes the payment', async () => {
    // Created through the instance whose public URL is closed: B is told to call back there.
    const { status, body } = await createAtA(2500, {}, merchantA, aLost);
    expect(status, JSON.stringify(body)).toBe(200);
    const bId = (await upstreamOf(body.id)).provider_payment_id;
    expect(await notifyAtB(2500)).toMatchObject({ matched: true, payment_id: bId });
    // B tried and failed to deliver its webhook.
    await until(async () => {
      const { webhooks } = await adminOk<{ webhooks: any[] }>(b.app, 'GET', `/webhooks?resource_id=${bId}`);
      return webhooks.some((w) => w.event === 'payment.completed' && w.attempts > 0) ? true : undefined;
    });
    expect((await paymentAtA(body.id)).status).toBe('PENDING');

    // The poll looks at payments unchanged for its interval (1 s here).
    await sleep(1200);
    const tasks = taskList({ ...a.ctx, config: { ...a.ctx.config, providerPollSeconds: 1 } });
    await tasks[POLL_TASK]!({}, {} as JobHelpers);
    expect((await paymentAtA(body.id)).status).toBe('COMPLETED');
    expect(await creditsAtA(body.id)).toEqual([expectedCredit('2500')]);
  });
});

describe('payouts routed to a provider', { timeout: 60_000 }, () => {
  it('created at B with A payout id as ext_id, reserve held at A; B operator completes → B webhook → completed and settled at A', async () => {
    await adminOk(a.app, 'POST', `/terminals/${merchantA.terminalId}/adjustments`, { amount: 500, reason: 'test funds' });
    const before = (await signedA(merchantA, 'GET', '/v1/balance')).json();
    const res = await signedA(merchantA, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 5000,
      method: 'card',
      requisites: '4111 1111 1111 1111',
      holder_name: 'Ivan Petrov',
    });
    expect(res.statusCode, res.body).toBe(200);
    const payout = res.json();
    expect(payout.status).toBe('pending');
    const held = (await signedA(merchantA, 'GET', '/v1/balance')).json();
    expect(held.balance_frozen).toBeGreaterThan(before.balance_frozen);
    expect(new Decimal(held.balance).plus(held.balance_frozen).toFixed(6)).toBe(new Decimal(before.balance).plus(before.balance_frozen).toFixed(6));

    const { payouts } = await adminOk<{ payouts: any[] }>(b.app, 'GET', `/payouts?merchant_id=${aAtB.merchantId}`);
    const atB = payouts.find((p) => p.ext_id === payout.id);
    expect(atB).toMatchObject({ amount: 5000, method: 'card', requisites: '4111111111111111', status: 'pending', terminal_id: aAtB.terminalId });

    await adminOk(b.app, 'POST', `/payouts/${atB.id}/complete`);
    await until(async () => ((await signedA(merchantA, 'GET', `/v1/payouts/${payout.id}`)).json().status === 'completed' ? true : undefined));
    const settled = (await signedA(merchantA, 'GET', '/v1/balance')).json();
    expect(settled.balance_frozen).toBe(before.balance_frozen);
    expect(settled.balance).toBe(held.balance);
    expect(await adminOk(a.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
    expect(await adminOk(b.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});

describe('failover', { timeout: 60_000 }, () => {
  let executorA: { id: string };
  const ownValues = new Set<string>();
  let amount = 3000;
  const nextAmount = () => (amount += 10);

  /** A merchant of A (through A's tight-limits instance) whose terminal tries these routes. */
  async function merchantWithRoutes(routes: unknown[]) {
    const merchant = await createMerchant(a.app);
    await adminOk(a.app, 'PUT', `/terminals/${merchant.terminalId}/routes`, routes);
    return merchant;
  }

  async function pay(merchant: MerchantCredentials, extra: Record<string, unknown> = {}) {
    const started = Date.now();
    const result = await createAtA(nextAmount(), extra, merchant, aFast);
    return { ...result, elapsed: Date.now() - started };
  }

  async function breaker(providerId: string) {
    const { providers } = await adminOk<{ providers: any[] }>(a.app, 'GET', '/providers');
    return providers.find((p) => p.id === providerId).breaker as { failures: number; open_until: string | null };
  }

  const down = async (name: string) =>
    (
      await adminOk<{ id: string }>(a.app, 'POST', '/providers', {
        name,
        kind: 'kassir',
        base_url: `http://127.0.0.1:${closedPort}`,
        api_key: aAtB.apiKey,
        secret_key: aAtB.secretKey,
      })
    ).id;

  beforeAll(async () => {
    fake = await fakeProvider();
    executorA = await createExecutor(a.app, 'A trader');
    for (let i = 0; i < 3; i++) ownValues.add((await createRequisite(a.app, executorA.id, { holder: 'A holder' })).value);
  });

  it('B down → A falls back to its own requisites: one clean 200 within the budget', async () => {
    const merchant = await merchantWithRoutes([{ provider_id: await down('B down') }, { executors: true }]);
    const { status, body, elapsed } = await pay(merchant);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe('PENDING');
    expect(ownValues.has(body.requisites.value)).toBe(true);
    expect(elapsed).toBeLessThan(ROUTE_BUDGET_MS + 2000);
    const { rows } = await a.ctx.db.query('SELECT provider_id, requisite_id FROM payments WHERE terminal_id = $1', [merchant.terminalId]);
    expect(rows).toEqual([{ provider_id: null, requisite_id: expect.any(String) }]);
  });

  it('a provider that never answers times out and the next route answers', async () => {
    const hang = await fake.register('hang', 'hang');
    const merchant = await merchantWithRoutes([{ provider_id: hang.id }, { executors: true }]);
    const { status, body, elapsed } = await pay(merchant);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(ownValues.has(body.requisites.value)).toBe(true);
    expect(fake.calls('hang')).toBe(1);
    expect(elapsed).toBeLessThan(ROUTE_BUDGET_MS + 2000);
    expect((await breaker(hang.id)).failures).toBe(1);
  });

  it('a provider answering 500 → next route, counted against its breaker', async () => {
    const broken = await fake.register('broken', '500');
    const merchant = await merchantWithRoutes([{ provider_id: broken.id }, { executors: true }]);
    const { status, body } = await pay(merchant);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(ownValues.has(body.requisites.value)).toBe(true);
    expect(fake.calls('broken')).toBe(1);
    expect((await breaker(broken.id)).failures).toBe(1);
  });

  it('a provider without requisites (PAY_004) → next route, not a breaker failure', async () => {
    const empty = await fake.register('empty', 'pay004');
    const merchant = await merchantWithRoutes([{ provider_id: empty.id }, { executors: true }]);
    for (let i = 0; i < 3; i++) {
      const { status, body } = await pay(merchant);
      expect(status, JSON.stringify(body)).toBe(200);
      expect(ownValues.has(body.requisites.value)).toBe(true);
    }
    expect(fake.calls('empty')).toBe(3);
    expect(await breaker(empty.id)).toEqual({ failures: 0, open_until: null });
  });

  it('[P1 down, P2 ok] → P2 requisites; every route failing → 503 PAY_004', async () => {
    const p2 = await fake.register('second', 'ok');
    const merchant = await merchantWithRoutes([{ provider_id: await down('P1 down') }, { provider_id: p2.id }]);
    const { status, body } = await pay(merchant);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.requisites).toMatchObject({ type: 'card', value: p2.requisites.value, holder: 'Holder second' });

    const dead = await fake.register('dead', '500');
    const hopeless = await merchantWithRoutes([{ provider_id: await down('P3 down') }, { provider_id: dead.id }]);
    const failed = await pay(hopeless);
    expect(failed.status).toBe(503);
    expect(failed.body.error).toBe('PAY_004');
    expect(failed.elapsed).toBeLessThan(ROUTE_BUDGET_MS + 2000);
    const { rows } = await a.ctx.db.query('SELECT count(*)::int AS n FROM payments WHERE terminal_id = $1', [hopeless.terminalId]);
    expect(rows[0].n).toBe(0);
  });

  it('circuit breaker: after 2 failures the provider is not even called until the cooldown passes, then comes back by itself', async () => {
    const flaky = await fake.register('flaky', '500');
    const merchant = await merchantWithRoutes([{ provider_id: flaky.id }, { executors: true }]);
    for (let i = 0; i < 2; i++) expect((await pay(merchant)).status).toBe(200);
    expect(fake.calls('flaky')).toBe(2);
    const open = await breaker(flaky.id);
    expect(open.failures).toBe(2);
    expect(open.open_until).not.toBeNull();

    // Out of rotation: skipped without a call, the payment goes to the next route.
    const skipped = await pay(merchant);
    expect(skipped.status).toBe(200);
    expect(ownValues.has(skipped.body.requisites.value)).toBe(true);
    expect(fake.calls('flaky')).toBe(2);

    // After the cooldown it is tried again; a success closes the breaker.
    fake.setMode('flaky', 'ok');
    await until(() => (Date.now() > new Date(open.open_until!).getTime() + 100 ? true : undefined));
    const back = await pay(merchant);
    expect(back.status).toBe(200);
    expect(back.body.requisites.value).toBe(flaky.requisites.value);
    expect(fake.calls('flaky')).toBe(3);
    expect(await breaker(flaky.id)).toEqual({ failures: 0, open_until: null });
  });

  it('routes per method: an SBP-only provider route takes SBP payments; CARD goes to the executors', async () => {
    const sbp = await fake.register('sbp', 'ok', 'sbp');
    const merchant = await createMerchant(a.app);
    const set = await adminOk(a.app, 'PUT', `/terminals/${merchant.terminalId}/routes`, [{ provider_id: sbp.id, methods: ['sbp'] }, { executors: true }]);
    expect(set).toEqual([{ provider_id: sbp.id, methods: ['SBP'] }, { executors: true }]);
    expect(await adminOk(a.app, 'GET', `/terminals/${merchant.terminalId}/routes`)).toEqual(set);

    const viaSbp = await pay(merchant, { method: 'SBP' });
    expect(viaSbp.status, JSON.stringify(viaSbp.body)).toBe(200);
    expect(viaSbp.body.requisites).toMatchObject({ type: 'sbp', value: sbp.requisites.value });
    const card = await pay(merchant, { method: 'CARD' });
    expect(card.status, JSON.stringify(card.body)).toBe(200);
    expect(ownValues.has(card.body.requisites.value)).toBe(true);
    expect(fake.calls('sbp')).toBe(1);
  });

  it('route validation: executors and provider_id together, an unknown provider, an empty route → 400', async () => {
    const merchant = await createMerchant(a.app);
    const url = `/terminals/${merchant.terminalId}/routes`;
    for (const routes of [[{ executors: true, provider_id: providerB.id }], [{ provider_id: randomUUID() }], [{ provider_id: 'nope' }], [{}]]) {
      const res = await admin(a.app, 'PUT', url, routes);
      expect(res.statusCode, JSON.stringify(routes)).toBe(400);
    }
    expect(await adminOk(a.app, 'GET', url)).toEqual([]);
    expect((await admin(a.app, 'GET', `/terminals/${randomUUID()}/routes`)).statusCode).toBe(404);
  });

  it('a payout whose only route is a provider that is down → 503, the payout failed and its reserve released', async () => {
    const merchant = await merchantWithRoutes([{ provider_id: await down('payouts down') }]);
    await adminOk(a.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 100, reason: 'test funds' });
    const res = await signedA(
      merchant,
      'POST',
      '/v1/payouts',
      {
        ext_id: uniqueExtId('po'),
        amount: 1000,
        method: 'card',
        requisites: '4111 1111 1111 1111',
        holder_name: 'Ivan Petrov',
      },
      aFast,
    );
    expect(res.statusCode, res.body).toBe(503);
    const payoutId = res.json().data.payout_id;
    expect((await signedA(merchant, 'GET', `/v1/payouts/${payoutId}`)).json().status).toBe('failed');
    expect((await signedA(merchant, 'GET', '/v1/balance')).json()).toEqual({ balance: 100, balance_frozen: 0, currency: 'USDT' });
    expect(await adminOk(a.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});
