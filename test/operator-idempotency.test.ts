/**
 * Issue 30, item 1: every money-moving operator route takes an `Idempotency-Key`, as the merchant
 * API's money routes do (src/http/idempotency.ts). A repeat with the same key answers as the first
 * did and moves nothing again, however many arrive at once; the same key with another request
 * answers 409; keys belong to whoever sent them (the operator token, each person signed in).
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  staffSession,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

const PASSWORD = 'correct horse battery';
const ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app);
  executor = await createExecutor(service.app, 'Trader', { deposit: 1000 });
  await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

interface Caller {
  headers: Record<string, string>;
}
const token: Caller = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };

/** A finance person, with two-factor (required of finance by default), signed in and confirmed (adjustments and completions ask to confirm). */
async function financePerson(): Promise<Caller> {
  const email = `finance.${Date.now()}.${Math.random().toString(36).slice(2, 6)}@kassir.test`;
  const person = await staffSession(service, email, 'finance', PASSWORD);
  const headers = { cookie: person.cookie, 'x-csrf-token': person.csrf };
  const confirmed = await service.app.inject({ method: 'POST', url: '/auth/v1/confirm', headers, payload: { otp: person.codes[0] } });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  return { headers };
}

function call(caller: Caller, url: string, body: unknown, key?: string): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method: 'POST',
    url: `/admin/v1${url}`,
    headers: { ...caller.headers, 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload: JSON.stringify(body),
  });
}

/** How many postings of `kind` the ledger holds with this memo. */
async function postings(kind: string, memo: string): Promise<number> {
  const { rows } = await service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = $1 AND memo = $2', [kind, memo]);
  return rows[0]!.n;
}

const key = () => `key-${Math.random().toString(36).slice(2)}`;

describe('Idempotency-Key on the operator’s money routes', () => {
  it('a terminal adjustment sent twice with one key is posted once; the repeat answers as the first did', async () => {
    const memo = uniqueExtId('adjust-twice');
    const k = key();
    const first = await call(token, `/terminals/${merchant.terminalId}/adjustments`, { amount: 1, reason: memo }, k);
    expect(first.statusCode, first.body).toBe(201);
    const again = await call(token, `/terminals/${merchant.terminalId}/adjustments`, { amount: 1, reason: memo }, k);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await postings('adjustment', memo)).toBe(1);
  });

  it('a burst of ten identical adjustments with one key, all at once, posts once; each is answered 201 or told to retry', async () => {
    const memo = uniqueExtId('adjust-burst');
    const k = key();
    const before = await adminOk<{ balance: number }>(service.app, 'GET', `/executors/${executor.id}`);
    const answers = await Promise.all(Array.from({ length: 10 }, () => call(token, `/executors/${executor.id}/adjustments`, { amount: 1, reason: memo }, k)));
    for (const answer of answers) {
      expect([201, 409], answer.body).toContain(answer.statusCode);
      if (answer.statusCode === 409) {
        expect(answer.json()).toMatchObject({ error: 'CONFLICT', data: { idempotency_key: k } });
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    expect(answers.filter((a) => a.statusCode === 201).length).toBeGreaterThanOrEqual(1);
    expect(await postings('executor_adjustment', memo)).toBe(1);
    // Retried once the first has answered, every one of them gets the first one's answer.
    const retried = await call(token, `/executors/${executor.id}/adjustments`, { amount: 1, reason: memo }, k);
    expect(retried.statusCode).toBe(201);
    expect(retried.json().balance).toBe(before.balance + 1);
    expect((await adminOk<{ balance: number }>(service.app, 'GET', `/executors/${executor.id}`)).balance).toBe(before.balance + 1);
  });

  it('the same key with another request answers 409 and moves nothing; a malformed key is refused', async () => {
    const memo = uniqueExtId('adjust-other');
    const k = key();
    expect((await call(token, `/terminals/${merchant.terminalId}/adjustments`, { amount: 2, reason: memo }, k)).statusCode).toBe(201);
    const other = await call(token, `/terminals/${merchant.terminalId}/adjustments`, { amount: 3, reason: memo }, k);
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'CONFLICT', message: expect.stringMatching(/different request/) });
    expect(await postings('adjustment', memo)).toBe(1);
    const bad = await call(token, `/terminals/${merchant.terminalId}/adjustments`, { amount: 2, reason: memo }, 'k'.repeat(256));
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/Idempotency-Key/) });
    expect(await postings('adjustment', memo)).toBe(1);
  });

  it('keys belong to who sent them: the token and two people using one key each move their own money', async () => {
    const memo = uniqueExtId('adjust-scoped');
    const k = key();
    const alice = await financePerson();
    const bob = await financePerson();
    for (const caller of [token, alice, bob]) {
      const res = await call(caller, `/executors/${executor.id}/adjustments`, { amount: 1, reason: memo }, k);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
    expect(await postings('executor_adjustment', memo)).toBe(3);
    // Each one's repeat is its own first answer, moving nothing more.
    expect((await call(alice, `/executors/${executor.id}/adjustments`, { amount: 1, reason: memo }, k)).headers['idempotent-replayed']).toBe('true');
    expect(await postings('executor_adjustment', memo)).toBe(3);
  });

  it('an adjustment whose answer was lost (its process died after the commit) is not posted again by the retry that takes its key over', async () => {
    for (const [url, kind] of [
      [`/terminals/${merchant.terminalId}/adjustments`, 'adjustment'],
      [`/executors/${executor.id}/adjustments`, 'executor_adjustment'],
    ] as const) {
      const memo = uniqueExtId('adjust-lost');
      const k = key();
      const first = await call(token, url, { amount: 1, reason: memo }, k);
      expect(first.statusCode, first.body).toBe(201);
      // As if the process had died between the posting's commit and storing the answer, a lease ago.
      await service.ctx.db.query(
        "UPDATE operator_idempotency_keys SET status_code = NULL, response_body = NULL, created_at = now() - interval '1 minute' WHERE owner = 'token' AND key = $1",
        [k],
      );
      const retried = await call(token, url, { amount: 1, reason: memo }, k);
      expect(retried.statusCode, retried.body).toBe(201);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
      expect(retried.json()).toEqual(first.json());
      expect(await postings(kind, memo)).toBe(1);
    }
  });

  it('without a key each request is its own (the key is optional, as on the merchant API)', async () => {
    const memo = uniqueExtId('adjust-nokey');
    for (let i = 0; i < 2; i++) expect((await call(token, `/terminals/${merchant.terminalId}/adjustments`, { amount: 1, reason: memo })).statusCode).toBe(201);
    expect(await postings('adjustment', memo)).toBe(2);
  });

  it('a payout completed twice with one key: the repeat answers the completed payout, not a conflict', async () => {
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 500, reason: 'payout funds' });
    for (const event of ['complete', 'fail'] as const) {
      const created = await signed(service.app, merchant, 'POST', '/v1/payouts', {
        ext_id: uniqueExtId('po'),
        amount: 1000,
        method: 'card',
        requisites: '4111111111111111',
        holder_name: 'Ivan Petrov',
      });
      expect(created.statusCode, created.body).toBe(200);
      const k = key();
      const first = await call(token, `/payouts/${created.json().id}/${event}`, {}, k);
      expect(first.statusCode, first.body).toBe(200);
      const again = await call(token, `/payouts/${created.json().id}/${event}`, {}, k);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json()).toEqual(first.json());
      // Without the key, the repeat is a new request: the payout is no longer pending.
      expect((await call(token, `/payouts/${created.json().id}/${event}`, {})).statusCode).toBe(409);
    }
  });

  it('a withdrawal completed or failed twice with one key answers the same withdrawal both times', async () => {
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 100, reason: 'withdrawal funds' });
    for (const [event, body] of [
      ['complete', { tx_hash: 'ab'.repeat(32) }],
      ['fail', { reason: 'wallet refused' }],
    ] as const) {
      const created = await signed(service.app, merchant, 'POST', '/v1/withdrawals', { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS });
      expect(created.statusCode, created.body).toBe(200);
      const k = key();
      const first = await call(token, `/withdrawals/${created.json().id}/${event}`, body, k);
      expect(first.statusCode, first.body).toBe(200);
      const again = await call(token, `/withdrawals/${created.json().id}/${event}`, body, k);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
    }
  });

  it('a dispute approved twice with one key is credited once and answers the completed payment both times', async () => {
    const payment = (await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('d'), amount: 1200 })).json();
    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`, { reason: 'payer gave up' });
    expect((await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { amount: 1200 })).statusCode).toBe(200);
    const k = key();
    const answers = await Promise.all(Array.from({ length: 5 }, () => call(token, `/payments/${payment.id}/dispute/approve`, { amount: 1200 }, k)));
    expect(answers.filter((a) => a.statusCode === 200).length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([200, 409], a.body).toContain(a.statusCode);
    const again = await call(token, `/payments/${payment.id}/dispute/approve`, { amount: 1200 }, k);
    expect(again.statusCode).toBe(200);
    expect(again.json().status).toBe('COMPLETED');
    const { rows } = await service.ctx.db.query("SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'payin' AND ref_id = $1", [payment.id]);
    expect(rows[0].n).toBe(1);
  });
});
