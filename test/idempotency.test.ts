import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { JobHelpers } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_LEASE_SECONDS } from '../src/http/idempotency.js';
import { signRequest } from '../src/http/signature.js';
import { taskList } from '../src/jobs.js';
import { Money } from '../src/lib/money.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  multipartBody,
  setRate,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

const ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

let service: TestService;
let merchant: MerchantCredentials;
let stranger: MerchantCredentials;
/** A second terminal of `merchant`: the destination of most transfers here. */
let second: string;

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app, { payout_rate: 2, withdrawal_fee: 1 });
  stranger = await createMerchant(service.app, { withdrawal_fee: 1 });
  second = (await createTerminal(service.app, merchant.merchantId, { name: 'Second' })).id;
  await fund(merchant.terminalId, 10_000);
  await fund(stranger.terminalId, 1_000);
  const executor = await createExecutor(service.app);
  for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

async function fund(terminalId: string, amount: number): Promise<void> {
  await adminOk(service.app, 'POST', `/terminals/${terminalId}/adjustments`, { amount, reason: 'test funds' });
}

/** A signed merchant POST with an optional Idempotency-Key. */
function post(
  url: string,
  body: unknown,
  key?: string,
  { creds = merchant, app = service.app }: { creds?: Pick<MerchantCredentials, 'apiKey' | 'secretKey'>; app?: FastifyInstance } = {},
): Promise<LightMyRequestResponse> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/json',
      'x-identity': creds.apiKey,
      'x-signature': signRequest(creds.secretKey, 'POST', `http://kassir.test${url}`, raw),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    payload: raw,
  });
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await service.ctx.db.query<{ n: string }>(sql, params);
  return Number(rows[0]!.n);
}

async function available(terminalId: string): Promise<string> {
  const { rows } = await service.ctx.db.query<{ balance: string }>(
    `SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`,
    [terminalId],
  );
  return new Money(rows[0]!.balance).toFixed();
}

async function frozen(terminalId: string): Promise<Money> {
  const { rows } = await service.ctx.db.query<{ balance: string }>(
    `SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_frozen'`,
    [terminalId],
  );
  return new Money(rows[0]!.balance);
}

const transfersTo = (to: string) => count('SELECT count(*) AS n FROM transfers WHERE to_terminal_id = $1', [to]);
const withdrawalsOf = (merchantId: string) => count('SELECT count(*) AS n FROM withdrawals WHERE merchant_id = $1', [merchantId]);
const storedKey = (merchantId: string, key: string) =>
  count('SELECT count(*) AS n FROM idempotency_keys WHERE merchant_id = $1 AND key = $2', [merchantId, key]);

let keySeq = 0;
const newKey = (label: string) => `${label}-${Date.now()}-${keySeq++}`;

/** A fresh destination terminal, so effects can be counted per test. */
async function freshTerminal(): Promise<string> {
  return (await createTerminal(service.app, merchant.merchantId, { name: 'Dest' })).id;
}

function expectReplayOf(replay: LightMyRequestResponse, first: LightMyRequestResponse): void {
  expect(replay.statusCode).toBe(first.statusCode);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.headers['content-type']).toMatch(/^application\/json/);
  expect(replay.body).toBe(first.body);
}

describe('Idempotency-Key: replay', () => {
  it('POST /v1/transfers: the same key and request replay the first answer; the money moves once', async () => {
    const to = await freshTerminal();
    const key = newKey('trf');
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 1.25 };
    const first = await post('/v1/transfers', body, key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 3; i++) expectReplayOf(await post('/v1/transfers', body, key), first);
    expect(await transfersTo(to)).toBe(1);
    expect(await available(to)).toBe('1.25');
    // Without the key, the same request is a new transfer.
    expect((await post('/v1/transfers', body)).statusCode).toBe(200);
    expect(await available(to)).toBe('2.5');
  });

  it('POST /v1/payments: one payment is created; the replay carries the same id', async () => {
    const extId = uniqueExtId();
    const key = newKey('pay');
    const body = { ext_id: extId, amount: 1234, currency: 'RUB', method: 'CARD' };
    const first = await post('/v1/payments', body, key);
    expect(first.statusCode, first.body).toBe(200);
    const replay = await post('/v1/payments', body, key);
    expectReplayOf(replay, first);
    expect(replay.json().id).toBe(first.json().id);
    expect(await count('SELECT count(*) AS n FROM payments WHERE ext_id = $1', [extId])).toBe(1);
  });

  it('POST /v1/payouts: one payout, reserved once', async () => {
    const extId = uniqueExtId('payout');
    const key = newKey('payout');
    const body = { ext_id: extId, amount: 5000, method: 'card', requisites: '4111111111111111', holder_name: 'Ivan Petrov' };
    const frozenBefore = await frozen(merchant.terminalId);
    const first = await post('/v1/payouts', body, key);
    expect(first.statusCode, first.body).toBe(200);
    expectReplayOf(await post('/v1/payouts', body, key), first);
    expect(await count('SELECT count(*) AS n FROM payouts WHERE ext_id = $1', [extId])).toBe(1);
    // 5000 RUB / 100 × 1.02 = 51 USDT frozen, once.
    expect((await frozen(merchant.terminalId)).minus(frozenBefore).toFixed()).toBe('51');
  });

  it('POST /v1/withdrawals: one withdrawal, frozen once', async () => {
    const key = newKey('wdr');
    const body = { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS };
    const before = await withdrawalsOf(merchant.merchantId);
    const balanceBefore = new Money(await available(merchant.terminalId));
    const first = await post('/v1/withdrawals', body, key);
    expect(first.statusCode, first.body).toBe(200);
    expectReplayOf(await post('/v1/withdrawals', body, key), first);
    expect(await withdrawalsOf(merchant.merchantId)).toBe(before + 1);
    expect(await available(merchant.terminalId)).toBe(balanceBefore.minus(11).toFixed());
  });

  it('an error answer from the handler is replayed too (TRF_003 stays TRF_003 even after funds arrive)', async () => {
    const poor = (await createTerminal(service.app, merchant.merchantId, { name: 'Poor' })).id;
    const key = newKey('trf-err');
    const body = { from_terminal_id: poor, to_terminal_id: second, amount: 5 };
    const first = await post('/v1/transfers', body, key);
    expect(first.statusCode).toBe(400);
    expect(first.json()).toMatchObject({ error: 'TRF_003', data: { available: 0 } });
    await fund(poor, 5);
    const replay = await post('/v1/transfers', body, key);
    expectReplayOf(replay, first);
    expect(await available(poor)).toBe('5');
    // A new key performs the request afresh.
    expect((await post('/v1/transfers', body, newKey('trf-err2'))).statusCode).toBe(200);
    expect(await available(poor)).toBe('0');
  });

  it('requests refused before the handler (schema validation, malformed JSON) are not stored: the key stays free', async () => {
    const to = await freshTerminal();
    const key = newKey('early');
    const invalid = await post('/v1/transfers', { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: '1' }, key);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toBe('TRF_001');
    const malformed = await post('/v1/transfers', '{"amount": ', key);
    expect(malformed.json().error).toBe('TRF_001');
    expect(await storedKey(merchant.merchantId, key)).toBe(0);
    const ok = await post('/v1/transfers', { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 1 }, key);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });

  it('other POSTs too: a JSON receipt link is attached once; a multipart upload ignores the key', async () => {
    const payment = await post('/v1/payments', { ext_id: uniqueExtId(), amount: 1777 });
    expect(payment.statusCode, payment.body).toBe(200);
    const url = `/v1/payments/${payment.json().id}/receipt`;
    const receipts = () => count('SELECT count(*) AS n FROM receipts WHERE payment_id = $1', [payment.json().id]);
    const key = newKey('receipt');
    const first = await post(url, { receipt_url: 'https://shop.example/receipt/1.pdf' }, key);
    expect(first.statusCode, first.body).toBe(200);
    expectReplayOf(await post(url, { receipt_url: 'https://shop.example/receipt/1.pdf' }, key), first);
    expect(await receipts()).toBe(1);

    const upload = multipartBody({}, { content: TINY_PNG });
    // Multipart bodies are streamed to storage by the route, after the key check: not covered (documented).
    const uploadKey = newKey('upload');
    const sendFile = () =>
      service.app.inject({
        method: 'POST',
        url,
        headers: {
          'x-identity': merchant.apiKey,
          'x-signature': signRequest(merchant.secretKey, 'POST', `http://kassir.test${url}`, upload.body),
          'content-type': upload.contentType,
          'idempotency-key': uploadKey,
        },
        payload: upload.body,
      });
    for (const expected of [2, 3]) {
      const uploaded = await sendFile();
      expect(uploaded.statusCode, uploaded.body).toBe(200);
      expect(uploaded.headers['idempotent-replayed']).toBeUndefined();
      expect(await receipts()).toBe(expected);
    }
    expect(await storedKey(merchant.merchantId, uploadKey)).toBe(0);
  });

  it('GET requests ignore the header', async () => {
    const res = await service.app.inject({
      method: 'GET',
      url: '/v1/balance',
      headers: {
        'x-identity': merchant.apiKey,
        'x-signature': signRequest(merchant.secretKey, 'GET', 'http://kassir.test/v1/balance', ''),
        'idempotency-key': 'get-key',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(await storedKey(merchant.merchantId, 'get-key')).toBe(0);
  });
});

describe('Idempotency-Key: conflicts and scope', () => {
  it('the same key with a different body answers 409 CONFLICT and does nothing', async () => {
    const to = await freshTerminal();
    const key = newKey('conflict');
    const first = await post('/v1/transfers', { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 2 }, key);
    expect(first.statusCode).toBe(200);
    const other = await post('/v1/transfers', { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 3 }, key);
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'CONFLICT', message: expect.stringMatching(/different request/), data: { idempotency_key: key } });
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(await transfersTo(to)).toBe(1);
    expect(await available(to)).toBe('2');
  });

  it('the same key on another endpoint answers 409', async () => {
    const key = newKey('cross');
    const body = { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS };
    expect((await post('/v1/withdrawals', body, key)).statusCode).toBe(200);
    const before = await count('SELECT count(*) AS n FROM payments WHERE merchant_id = $1', [merchant.merchantId]);
    const res = await post('/v1/payments', { ext_id: uniqueExtId(), amount: 1500 }, key);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('CONFLICT');
    expect(await count('SELECT count(*) AS n FROM payments WHERE merchant_id = $1', [merchant.merchantId])).toBe(before);
  });

  it("the same key sent through another terminal's API key is a different request (409), not another terminal's replay", async () => {
    // A payment goes through the terminal of the X-Identity key: replaying terminal A's payment to
    // a request made with terminal B's key would hand back a payment B never made.
    const other = await createTerminal(service.app, merchant.merchantId, { name: 'Other key' });
    const key = newKey('terminal');
    const body = { ext_id: uniqueExtId(), amount: 2345 };
    const first = await post('/v1/payments', body, key);
    expect(first.statusCode, first.body).toBe(200);
    const viaOther = await post('/v1/payments', body, key, { creds: { apiKey: other.api_key, secretKey: merchant.secretKey } });
    expect(viaOther.statusCode).toBe(409);
    expect(viaOther.json().error).toBe('CONFLICT');
  });

  it('keys are per merchant: another merchant using the same key gets its own effect', async () => {
    const key = newKey('shared');
    const mine = await post('/v1/withdrawals', { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS }, key);
    expect(mine.statusCode, mine.body).toBe(200);
    const theirsBefore = await withdrawalsOf(stranger.merchantId);
    const theirs = await post('/v1/withdrawals', { terminal_id: stranger.terminalId, amount: 20, address: ADDRESS }, key, { creds: stranger });
    expect(theirs.statusCode, theirs.body).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(mine.json().id);
    expect(theirs.json()).toMatchObject({ amount: 20 });
    expect(await withdrawalsOf(stranger.merchantId)).toBe(theirsBefore + 1);
    // Each merchant's replay is its own answer.
    expectReplayOf(await post('/v1/withdrawals', { terminal_id: stranger.terminalId, amount: 20, address: ADDRESS }, key, { creds: stranger }), theirs);
    expectReplayOf(await post('/v1/withdrawals', { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS }, key), mine);
  });

  it('a key of 255 characters is accepted', async () => {
    const to = await freshTerminal();
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 1 };
    expect((await post('/v1/transfers', body, 'k'.repeat(255))).statusCode).toBe(200);
    expect(await transfersTo(to)).toBe(1);
  });

  it('a key of 256 characters or an empty key answers 400 with the route’s invalid code, and nothing is done', async () => {
    const to = await freshTerminal();
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 1 };
    const long = await post('/v1/transfers', body, 'k'.repeat(256));
    expect(long.statusCode).toBe(400);
    expect(long.json()).toMatchObject({ error: 'TRF_001', message: expect.stringMatching(/Idempotency-Key/) });
    const empty = await post('/v1/transfers', body, '');
    expect(empty.statusCode).toBe(400);
    const payment = await post('/v1/payments', { ext_id: uniqueExtId(), amount: 1600 }, 'p'.repeat(256));
    expect(payment.statusCode).toBe(400);
    expect(payment.json().error).toBe('PAY_002');
    expect(await transfersTo(to)).toBe(0);
  });
});

describe('Idempotency-Key: failures, concurrency, expiry', () => {
  it('a 5xx answer is not stored: after the fault is gone, the retry with the same key performs the request once', async () => {
    const to = await freshTerminal();
    const key = newKey('fault');
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 4 };
    const db = service.ctx.db;
    await db.query(`CREATE FUNCTION kassir_test_refuse_transfer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated outage'; END $$`);
    await db.query('CREATE TRIGGER kassir_test_refuse_transfer BEFORE INSERT ON transfers FOR EACH ROW EXECUTE FUNCTION kassir_test_refuse_transfer()');
    let failed: LightMyRequestResponse;
    try {
      failed = await post('/v1/transfers', body, key);
    } finally {
      await db.query('DROP TRIGGER IF EXISTS kassir_test_refuse_transfer ON transfers');
      await db.query('DROP FUNCTION IF EXISTS kassir_test_refuse_transfer()');
    }
    expect(failed.statusCode).toBe(500);
    expect(failed.json().error).toBe('SYS_001');
    expect(await storedKey(merchant.merchantId, key)).toBe(0);
    expect(await available(to)).toBe('0');

    const retry = await post('/v1/transfers', body, key);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expectReplayOf(await post('/v1/transfers', body, key), retry);
    expect(await transfersTo(to)).toBe(1);
    expect(await available(to)).toBe('4');
  });

  it('20 concurrent identical transfers with one key over two instances → one effect; the rest replay or 409 "still being processed"', async () => {
    const other = await service.startAnother();
    const to = await freshTerminal();
    const key = newKey('race-trf');
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 0.5 };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post('/v1/transfers', body, key, { app: i % 2 ? other.app : service.app })));
    const original = results.filter((r) => r.statusCode === 200 && r.headers['idempotent-replayed'] === undefined);
    expect(original).toHaveLength(1);
    for (const res of results) {
      if (res === original[0]) continue;
      if (res.statusCode === 409) {
        expect(res.json()).toMatchObject({ error: 'CONFLICT', message: expect.stringMatching(/still being processed/) });
      } else {
        expectReplayOf(res, original[0]!);
      }
    }
    expect(await transfersTo(to)).toBe(1);
    expect(await available(to)).toBe('0.5');
  });

  it('20 concurrent identical withdrawals with one key → exactly one withdrawal', async () => {
    const key = newKey('race-wdr');
    const body = { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS };
    const before = await withdrawalsOf(merchant.merchantId);
    const results = await Promise.all(Array.from({ length: 20 }, () => post('/v1/withdrawals', body, key)));
    const statuses = results.map((r) =>
      r.statusCode === 200 ? (r.headers['idempotent-replayed'] ? 'replay' : 'created') : `${r.statusCode} ${r.json().error}`,
    );
    expect(statuses.filter((s) => s === 'created')).toHaveLength(1);
    expect(statuses.filter((s) => s !== 'created' && s !== 'replay' && s !== '409 CONFLICT')).toEqual([]);
    expect(await withdrawalsOf(merchant.merchantId)).toBe(before + 1);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  /** What a process killed between its commit and storing its answer leaves: a claim with no answer, `age` old. */
  async function abandon(key: string, age: string): Promise<void> {
    await service.ctx.db.query(
      `UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, created_at = now() - $3::interval WHERE merchant_id = $1 AND key = $2`,
      [merchant.merchantId, key, age],
    );
  }

  it('an unanswered claim within its lease answers 409 with Retry-After (when the claim may be taken over)', async () => {
    const key = newKey('lease');
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: await freshTerminal(), amount: 0.25 };
    expect((await post('/v1/transfers', body, key)).statusCode).toBe(200);
    await abandon(key, '10 seconds');
    const busy = await post('/v1/transfers', body, key);
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toMatchObject({ error: 'CONFLICT', message: expect.stringMatching(/still being processed/) });
    const retryAfter = Number(busy.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(CLAIM_LEASE_SECONDS - 11);
    expect(retryAfter).toBeLessThanOrEqual(CLAIM_LEASE_SECONDS - 9);
  });

  it('a claim abandoned after its request committed is taken over after the lease; the transfer is not made again', async () => {
    const to = await freshTerminal();
    const key = newKey('orphan-trf');
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 3.5 };
    const first = await post('/v1/transfers', body, key);
    expect(first.statusCode, first.body).toBe(200);
    await abandon(key, `${CLAIM_LEASE_SECONDS + 1} seconds`);
    const retry = await post('/v1/transfers', body, key);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.json()).toEqual(first.json());
    expect(await transfersTo(to)).toBe(1);
    expect(await available(to)).toBe('3.5');
    // The retry's answer is the key's answer from now on.
    expectReplayOf(await post('/v1/transfers', body, key), retry);
  });

  it("… the withdrawal is the first attempt's, frozen once", async () => {
    const key = newKey('orphan-wdr');
    const body = { terminal_id: merchant.terminalId, amount: 7, address: ADDRESS };
    const before = await withdrawalsOf(merchant.merchantId);
    const first = await post('/v1/withdrawals', body, key);
    expect(first.statusCode, first.body).toBe(200);
    const balanceAfterFirst = await available(merchant.terminalId);
    await abandon(key, `${CLAIM_LEASE_SECONDS + 1} seconds`);
    const retry = await post('/v1/withdrawals', body, key);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json().id).toBe(first.json().id);
    expect(await withdrawalsOf(merchant.merchantId)).toBe(before + 1);
    expect(await available(merchant.terminalId)).toBe(balanceAfterFirst);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('… a payment (its own key, ext_id) answers PAY_003, and exists once', async () => {
    const extId = uniqueExtId();
    const key = newKey('orphan-pay');
    const body = { ext_id: extId, amount: 1500, currency: 'RUB', method: 'CARD' };
    expect((await post('/v1/payments', body, key)).statusCode).toBe(200);
    await abandon(key, `${CLAIM_LEASE_SECONDS + 1} seconds`);
    const retry = await post('/v1/payments', body, key);
    expect(retry.statusCode).toBe(409);
    expect(retry.json()).toMatchObject({ error: 'PAY_003', data: { ext_id: extId } });
    expect(await count('SELECT count(*) AS n FROM payments WHERE ext_id = $1', [extId])).toBe(1);
  });

  it('a claim abandoned before its request did anything: the retry after the lease performs it, once', async () => {
    const to = await freshTerminal();
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 1.5 };
    // The same request under another key did happen; under this key it only claimed, then died.
    expect((await post('/v1/transfers', body, newKey('other'))).statusCode).toBe(200);
    const key = newKey('orphan-nothing');
    await service.ctx.db.query(
      `INSERT INTO idempotency_keys (merchant_id, key, request_hash, created_at)
       SELECT merchant_id, $2, request_hash, now() - make_interval(secs => $3) FROM idempotency_keys
        WHERE merchant_id = $1 AND key LIKE 'other-%' ORDER BY created_at DESC LIMIT 1`,
      [merchant.merchantId, key, CLAIM_LEASE_SECONDS + 1],
    );
    const retry = await post('/v1/transfers', body, key);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(await transfersTo(to)).toBe(2);
    expect(await available(to)).toBe('3');
    expectReplayOf(await post('/v1/transfers', body, key), retry);
    expect(await transfersTo(to)).toBe(2);
  });

  it('a key expires after 24 h: it can then be used for a different request, which is performed', async () => {
    const to = await freshTerminal();
    const key = newKey('expire');
    const first = { from_terminal_id: merchant.terminalId, to_terminal_id: to, amount: 1 };
    expect((await post('/v1/transfers', first, key)).statusCode).toBe(200);
    // 23 h old: still kept.
    await service.ctx.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '23 hours' WHERE merchant_id = $1 AND key = $2`, [
      merchant.merchantId,
      key,
    ]);
    const different = { ...first, amount: 2 };
    expect((await post('/v1/transfers', different, key)).statusCode).toBe(409);
    await service.ctx.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE merchant_id = $1 AND key = $2`, [
      merchant.merchantId,
      key,
    ]);
    const reused = await post('/v1/transfers', different, key);
    expect(reused.statusCode, reused.body).toBe(200);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(await available(to)).toBe('3');
    // The key now belongs to the new request.
    expectReplayOf(await post('/v1/transfers', different, key), reused);
    expect((await post('/v1/transfers', first, key)).statusCode).toBe(409);
    expect(await transfersTo(to)).toBe(2);
  });

  it('the idempotency_cleanup job deletes keys older than 24 h and keeps the rest', async () => {
    const oldKey = newKey('old');
    const freshKey = newKey('fresh');
    for (const key of [oldKey, freshKey]) {
      expect((await post('/v1/withdrawals', { terminal_id: merchant.terminalId, amount: 10, address: ADDRESS }, key)).statusCode).toBe(200);
    }
    await service.ctx.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE merchant_id = $1 AND key = $2`, [
      merchant.merchantId,
      oldKey,
    ]);
    const task = taskList(service.ctx).idempotency_cleanup!;
    await task({}, {} as JobHelpers);
    expect(await storedKey(merchant.merchantId, oldKey)).toBe(0);
    expect(await storedKey(merchant.merchantId, freshKey)).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`)).toBe(0);
  });
});
