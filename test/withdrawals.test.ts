import { randomBytes, randomUUID } from 'node:crypto';
import bs58check from 'bs58check';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/pool.js';
import { createWithdrawal } from '../src/withdrawals/withdrawals.service.js';
import { type FakeTronNode, randomTronAddress, startFakeTronNode, TEST_TRON_KEY } from './fakes/tron-node.js';
import { admin, adminOk, createMerchant, createTerminal, type MerchantCredentials, signed, startTestService, type TestService, until } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const VALID = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

function withdraw(app: FastifyInstance, creds: MerchantCredentials, body: Record<string, unknown>) {
  return signed(app, creds, 'POST', '/v1/withdrawals', { terminal_id: creds.terminalId, ...body });
}

async function balance(app: FastifyInstance, creds: MerchantCredentials): Promise<{ balance: number; balance_frozen: number }> {
  const res = await signed(app, creds, 'GET', '/v1/balance');
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function fund(app: FastifyInstance, terminalId: string, amount: number): Promise<void> {
  await adminOk(app, 'POST', `/terminals/${terminalId}/adjustments`, { amount, reason: 'test funds' });
}

/** The ledger postings made for one withdrawal: kind, account kind, amount. */
async function postings(db: Queryable, withdrawalId: string): Promise<{ kind: string; account: string; amount: string }[]> {
  const { rows } = await db.query<{ kind: string; account: string; amount: string }>(
    `SELECT t.kind, a.kind AS account, e.amount::text AS amount
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
      WHERE t.ref_id = $1 ORDER BY t.created_at, a.kind`,
    [withdrawalId],
  );
  return rows;
}

async function ledgerOk(app: FastifyInstance): Promise<void> {
  expect(await adminOk(app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
}

describe('withdrawals with the manual adapter', () => {
  let service: TestService;
  let merchant: MerchantCredentials;
  let other: MerchantCredentials;

  beforeAll(async () => {
    service = await startTestService();
    merchant = await createMerchant(service.app, { withdrawal_fee: 1.5 });
    other = await createMerchant(service.app, { withdrawal_fee: 1.5 });
    await fund(service.app, merchant.terminalId, 1000);
    await fund(service.app, other.terminalId, 1000);
  });
  afterAll(async () => service?.close());

  it('POST /v1/withdrawals answers exactly the Withdrawal object and freezes amount + fee', async () => {
    const address = randomTronAddress();
    const before = await balance(service.app, merchant);
    const res = await withdraw(service.app, merchant, { amount: 100.25, address });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toStrictEqual({
      id: expect.stringMatching(UUID),
      amount: 100.25,
      fee: 1.5,
      currency: 'USDT',
      address,
      tx_hash: null,
      status: 'pending',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const after = await balance(service.app, merchant);
    expect(after.balance).toBeCloseTo(before.balance - 101.75, 6);
    expect(after.balance_frozen).toBeCloseTo(before.balance_frozen + 101.75, 6);
    expect(await postings(service.ctx.db, body.id)).toEqual([
      { kind: 'withdrawal_reserve', account: 'terminal_available', amount: '-101.750000' },
      { kind: 'withdrawal_reserve', account: 'terminal_frozen', amount: '101.750000' },
    ]);
    await ledgerOk(service.app);
  });

  it('subtract_fee_from_amount true freezes only amount; false (and omitted) freeze amount + fee', async () => {
    const start = await balance(service.app, merchant);
    const subtracted = await withdraw(service.app, merchant, { amount: 20, address: VALID, subtract_fee_from_amount: true });
    expect(subtracted.statusCode, subtracted.body).toBe(200);
    expect(subtracted.json()).toMatchObject({ amount: 20, fee: 1.5 });
    const mid = await balance(service.app, merchant);
    expect(mid.balance_frozen - start.balance_frozen).toBeCloseTo(20, 6);
    const added = await withdraw(service.app, merchant, { amount: 20, address: VALID, subtract_fee_from_amount: false });
    expect(added.statusCode, added.body).toBe(200);
    const end = await balance(service.app, merchant);
    expect(end.balance_frozen - mid.balance_frozen).toBeCloseTo(21.5, 6);
    // What the operator must send is kept with the withdrawal.
    const view = await adminOk<{ send_amount: number; reserve: number }>(service.app, 'GET', `/withdrawals/${subtracted.json().id}`);
    expect(view).toMatchObject({ send_amount: 18.5, reserve: 20 });
    expect(await adminOk(service.app, 'GET', `/withdrawals/${added.json().id}`)).toMatchObject({ send_amount: 20, reserve: 21.5 });
  });

  describe('WDR_001 (400) for invalid parameters, and nothing is frozen', () => {
    const wrongVersion = bs58check.encode(Buffer.concat([Buffer.from([0x42]), randomBytes(20)]));
    const tooLong = bs58check.encode(Buffer.concat([Buffer.from([0x41]), randomBytes(21)]));
    const cases: [string, Record<string, unknown>][] = [
      ['address with a wrong checksum (last character changed)', { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }],
      ['address with version byte 0x42 (valid base58check)', { address: wrongVersion }],
      ['address encoding 22 bytes', { address: tooLong }],
      ['address too short', { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6' }],
      ['address with a character outside base58 (0)', { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60' }],
      ['address with a character outside base58 (l)', { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLjlt' }],
      ['an Ethereum 0x address', { address: '0x742d35Cc6634C0532925a3b844Bc454e4438f44e' }],
      ['a Tron address in hex form', { address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' }],
      ['empty address', { address: '' }],
      ['missing address', { address: undefined }],
      ['address not a string', { address: 12345 }],
      ['amount 0', { amount: 0 }],
      ['amount negative', { amount: -10 }],
      ['amount with 7 decimals', { amount: 1.1234567 }],
      ['amount as a string', { amount: '10' }],
      ['amount missing', { amount: undefined }],
      ['amount null', { amount: null }],
      ['amount absurdly large', { amount: 1e21 }],
      ['subtract_fee_from_amount with amount equal to the fee', { amount: 1.5, subtract_fee_from_amount: true }],
      ['subtract_fee_from_amount with amount below the fee', { amount: 1, subtract_fee_from_amount: true }],
      ['subtract_fee_from_amount as a string', { subtract_fee_from_amount: 'true' }],
      ['subtract_fee_from_amount as a number', { subtract_fee_from_amount: 1 }],
      ['terminal_id not a uuid', { terminal_id: 'main' }],
      ['terminal_id missing', { terminal_id: undefined }],
      ['terminal_id of no terminal', { terminal_id: randomUUID() }],
    ];
    for (const [name, patch] of cases) {
      it(name, async () => {
        const body: Record<string, unknown> = { terminal_id: merchant.terminalId, amount: 10, address: VALID, ...patch };
        for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
        const before = await balance(service.app, merchant);
        const res = await signed(service.app, merchant, 'POST', '/v1/withdrawals', body);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json()).toMatchObject({ error: 'WDR_001', message: expect.any(String) });
        expect(await balance(service.app, merchant)).toEqual(before);
      });
    }

    it('another merchant’s terminal', async () => {
      const before = await balance(service.app, other);
      const res = await withdraw(service.app, merchant, { terminal_id: other.terminalId, amount: 10, address: VALID });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: 'WDR_001', data: { terminal_id: other.terminalId } });
      expect(await balance(service.app, other)).toEqual(before);
    });

    it('the version-byte case is refused for its version, not its shape', async () => {
      expect(wrongVersion).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
      const res = await withdraw(service.app, merchant, { amount: 10, address: wrongVersion });
      expect(res.json().message).toMatch(/version byte/);
    });

    it('a malformed JSON body', async () => {
      const res = await signed(service.app, merchant, 'POST', '/v1/withdrawals', '{"amount": 10,');
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('WDR_001');
    });
  });

  it('WDR_002 (400) on insufficient funds, with data.available; the exact balance is enough', async () => {
    const poor = await createMerchant(service.app, { withdrawal_fee: 2 });
    await fund(service.app, poor.terminalId, 52);
    const tooMuch = await withdraw(service.app, poor, { amount: 50.000001, address: VALID });
    expect(tooMuch.statusCode, tooMuch.body).toBe(400);
    expect(tooMuch.json()).toMatchObject({ error: 'WDR_002', message: expect.any(String), data: { available: 52 } });
    // With the fee taken from the amount, 52 is enough for 52.
    const exact = await withdraw(service.app, poor, { amount: 52, address: VALID, subtract_fee_from_amount: true });
    expect(exact.statusCode, exact.body).toBe(200);
    expect(await balance(service.app, poor)).toMatchObject({ balance: 0, balance_frozen: 52 });
    const none = await withdraw(service.app, poor, { amount: 0.000001, address: VALID });
    expect(none.json()).toMatchObject({ error: 'WDR_002', data: { available: 0 } });
  });

  it('GET /v1/withdrawals/:id: the object; WDR_003 (404) for unknown, another merchant’s, not a uuid', async () => {
    const created = (await withdraw(service.app, merchant, { amount: 3, address: VALID })).json();
    const read = await signed(service.app, merchant, 'GET', `/v1/withdrawals/${created.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toStrictEqual(created);
    for (const [creds, id] of [
      [merchant, randomUUID()],
      [other, created.id],
      [merchant, 'not-a-uuid'],
    ] as const) {
      const res = await signed(service.app, creds, 'GET', `/v1/withdrawals/${id}`);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ error: 'WDR_003', message: expect.any(String) });
    }
  });

  it('GET /v1/withdrawals: {data, limit, offset}, newest first, default limit 100, cap 1000, own withdrawals only', async () => {
    const lister = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, lister.terminalId, 1000);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push((await withdraw(service.app, lister, { amount: i, address: VALID })).json().id);
    const all = await signed(service.app, lister, 'GET', '/v1/withdrawals');
    expect(all.statusCode).toBe(200);
    const page = all.json();
    expect(Object.keys(page).sort()).toEqual(['data', 'limit', 'offset']);
    expect(page).toMatchObject({ limit: 100, offset: 0 });
    expect(page.data.map((w: { id: string }) => w.id)).toEqual([...ids].reverse());
    expect(Object.keys(page.data[0]).sort()).toEqual(['address', 'amount', 'created_at', 'currency', 'fee', 'id', 'status', 'tx_hash', 'updated_at']);

    const second = (await signed(service.app, lister, 'GET', '/v1/withdrawals?limit=1&offset=1')).json();
    expect(second).toEqual({ data: [expect.objectContaining({ id: ids[1] })], limit: 1, offset: 1 });
    expect((await signed(service.app, lister, 'GET', '/v1/withdrawals?limit=1000')).json()).toMatchObject({ limit: 1000 });
    expect((await signed(service.app, lister, 'GET', '/v1/withdrawals?offset=3')).json()).toEqual({ data: [], limit: 100, offset: 3 });

    for (const query of ['limit=1001', 'limit=0', 'limit=abc', 'limit=-1', 'offset=-1', 'offset=x', 'limit=1.5']) {
      const res = await signed(service.app, lister, 'GET', `/v1/withdrawals?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error, query).toBe('WDR_001');
    }
    const others = (await signed(service.app, other, 'GET', '/v1/withdrawals')).json();
    expect(others.data.filter((w: { id: string }) => ids.includes(w.id))).toEqual([]);
  });

  it('GET /v1/withdrawals/fee follows the key’s terminal and PATCH withdrawal_fee; new withdrawals use the new fee', async () => {
    const feeMerchant = await createMerchant(service.app, { withdrawal_fee: 1 });
    await fund(service.app, feeMerchant.terminalId, 100);
    expect((await signed(service.app, feeMerchant, 'GET', '/v1/withdrawals/fee')).json()).toStrictEqual({ fee: 1, currency: 'USDT' });
    await adminOk(service.app, 'PATCH', `/terminals/${feeMerchant.terminalId}`, { withdrawal_fee: 2.75 });
    expect((await signed(service.app, feeMerchant, 'GET', '/v1/withdrawals/fee')).json()).toStrictEqual({ fee: 2.75, currency: 'USDT' });
    const created = (await withdraw(service.app, feeMerchant, { amount: 10, address: VALID })).json();
    expect(created.fee).toBe(2.75);
    expect((await balance(service.app, feeMerchant)).balance_frozen).toBeCloseTo(12.75, 6);
    // Another terminal's key answers that terminal's fee.
    const second = await createTerminal(service.app, feeMerchant.merchantId, { withdrawal_fee: 0.5 });
    const secondCreds = { ...feeMerchant, terminalId: second.id, apiKey: second.api_key };
    expect((await signed(service.app, secondCreds, 'GET', '/v1/withdrawals/fee')).json()).toStrictEqual({ fee: 0.5, currency: 'USDT' });
  });

  it('operator complete {tx_hash}: completed with tx_hash, frozen debited, fee to revenue; twice → 409; audited', async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 1.5 });
    await fund(service.app, payer.terminalId, 100);
    const created = (await withdraw(service.app, payer, { amount: 40, address: VALID })).json();
    const txHash = randomBytes(32).toString('hex');
    const done = await admin(service.app, 'POST', `/withdrawals/${created.id}/complete`, { tx_hash: `0x${txHash.toUpperCase()}` });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ id: created.id, status: 'completed', tx_hash: txHash });
    const read = (await signed(service.app, payer, 'GET', `/v1/withdrawals/${created.id}`)).json();
    expect(read).toStrictEqual({ ...created, status: 'completed', tx_hash: txHash, updated_at: expect.stringMatching(ISO) });
    expect(await balance(service.app, payer)).toMatchObject({ balance: 58.5, balance_frozen: 0 });
    expect((await postings(service.ctx.db, created.id)).filter((p) => p.kind === 'withdrawal_settle')).toEqual([
      { kind: 'withdrawal_settle', account: 'system_fee_revenue', amount: '1.500000' },
      { kind: 'withdrawal_settle', account: 'system_outgoing', amount: '40.000000' },
      { kind: 'withdrawal_settle', account: 'terminal_frozen', amount: '-41.500000' },
    ]);

    const again = await admin(service.app, 'POST', `/withdrawals/${created.id}/complete`, { tx_hash: randomBytes(32).toString('hex') });
    expect(again.statusCode).toBe(409);
    const failLate = await admin(service.app, 'POST', `/withdrawals/${created.id}/fail`, { reason: 'too late' });
    expect(failLate.statusCode).toBe(409);
    expect(await balance(service.app, payer)).toMatchObject({ balance: 58.5, balance_frozen: 0 });

    const { rows } = await service.ctx.db.query(`SELECT action, before, after FROM audit_log WHERE object_type = 'withdrawal' AND object_id = $1`, [
      created.id,
    ]);
    expect(rows).toEqual([{ action: 'withdrawal.complete', before: { status: 'pending' }, after: { status: 'completed', tx_hash: txHash } }]);
    await ledgerOk(service.app);
  });

  it('the same tx_hash cannot complete two withdrawals (409)', async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, payer.terminalId, 100);
    const first = (await withdraw(service.app, payer, { amount: 10, address: VALID })).json();
    const second = (await withdraw(service.app, payer, { amount: 10, address: VALID })).json();
    const txHash = randomBytes(32).toString('hex');
    await adminOk(service.app, 'POST', `/withdrawals/${first.id}/complete`, { tx_hash: txHash });
    const dup = await admin(service.app, 'POST', `/withdrawals/${second.id}/complete`, { tx_hash: txHash });
    expect(dup.statusCode, dup.body).toBe(409);
    expect((await signed(service.app, payer, 'GET', `/v1/withdrawals/${second.id}`)).json()).toMatchObject({ status: 'pending', tx_hash: null });
    expect(await balance(service.app, payer)).toMatchObject({ balance: 80, balance_frozen: 10 });
    await ledgerOk(service.app);
  });

  it('a malformed tx_hash is refused (400), an unknown withdrawal is 404, and nothing changes', async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, payer.terminalId, 100);
    const second = (await withdraw(service.app, payer, { amount: 10, address: VALID })).json();
    for (const bad of ['abc', 'zz'.repeat(32), randomBytes(31).toString('hex')]) {
      expect((await admin(service.app, 'POST', `/withdrawals/${second.id}/complete`, { tx_hash: bad })).statusCode).toBe(400);
    }
    expect((await admin(service.app, 'POST', `/withdrawals/${randomUUID()}/complete`, { tx_hash: randomBytes(32).toString('hex') })).statusCode).toBe(404);
    expect((await signed(service.app, payer, 'GET', `/v1/withdrawals/${second.id}`)).json()).toMatchObject({ status: 'pending', tx_hash: null });
    expect(await balance(service.app, payer)).toMatchObject({ balance: 90, balance_frozen: 10 });
    await ledgerOk(service.app);
  });

  it('operator fail: failed, frozen funds released, audited; then complete → 409', async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 1.5 });
    await fund(service.app, payer.terminalId, 100);
    const created = (await withdraw(service.app, payer, { amount: 30, address: VALID })).json();
    expect(await balance(service.app, payer)).toMatchObject({ balance: 68.5, balance_frozen: 31.5 });
    const failed = await admin(service.app, 'POST', `/withdrawals/${created.id}/fail`, { reason: 'wallet blacklisted' });
    expect(failed.statusCode, failed.body).toBe(200);
    expect(failed.json()).toMatchObject({ status: 'failed', failure_reason: 'wallet blacklisted', tx_hash: null });
    expect((await signed(service.app, payer, 'GET', `/v1/withdrawals/${created.id}`)).json()).toMatchObject({ status: 'failed', tx_hash: null });
    expect(await balance(service.app, payer)).toMatchObject({ balance: 100, balance_frozen: 0 });
    expect((await admin(service.app, 'POST', `/withdrawals/${created.id}/complete`, { tx_hash: randomBytes(32).toString('hex') })).statusCode).toBe(409);
    expect((await admin(service.app, 'POST', `/withdrawals/${created.id}/fail`)).statusCode).toBe(409);
    expect(await balance(service.app, payer)).toMatchObject({ balance: 100, balance_frozen: 0 });
    expect((await postings(service.ctx.db, created.id)).map((p) => p.kind)).toEqual([
      'withdrawal_reserve',
      'withdrawal_reserve',
      'withdrawal_release',
      'withdrawal_release',
    ]);
    const { rows } = await service.ctx.db.query(`SELECT action, after FROM audit_log WHERE object_type = 'withdrawal' AND object_id = $1`, [created.id]);
    expect(rows).toEqual([{ action: 'withdrawal.fail', after: { status: 'failed', reason: 'wallet blacklisted' } }]);
    await ledgerOk(service.app);
  });

  it('operator fail without a body uses a default reason', async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, payer.terminalId, 10);
    const created = (await withdraw(service.app, payer, { amount: 10, address: VALID })).json();
    const failed = await admin(service.app, 'POST', `/withdrawals/${created.id}/fail`);
    expect(failed.statusCode, failed.body).toBe(200);
    expect(failed.json()).toMatchObject({ status: 'failed', failure_reason: 'failed by the operator' });
    expect(await balance(service.app, payer)).toMatchObject({ balance: 10, balance_frozen: 0 });
  });

  it("a withdrawal the committed balance cannot cover is refused without waiting for the balance row's lock", async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, payer.terminalId, 5);
    const holder = new pg.Client({ connectionString: service.databaseUrl });
    await holder.connect();
    try {
      // Another transaction holds the terminal's balance row (a completion, a payout in progress).
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available' FOR UPDATE`, [payer.terminalId]);
      const refused = await withdraw(service.app, payer, { amount: 10, address: VALID });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json()).toMatchObject({ error: 'WDR_002', data: { available: 5, required: 10 } });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    // Nothing was written for it.
    const { rows } = await service.ctx.db.query('SELECT 1 FROM withdrawals WHERE terminal_id = $1', [payer.terminalId]);
    expect(rows).toHaveLength(0);
    expect(await balance(service.app, payer)).toMatchObject({ balance: 5, balance_frozen: 0 });
  });

  it('a repeat of a withdrawal request (its Idempotency-Key) after it took the whole balance gets that withdrawal, not WDR_002', async () => {
    const payer = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, payer.terminalId, 10);
    const input = { terminal_id: payer.terminalId, amount: 10, address: VALID };
    const requestId = randomUUID();
    const first = await createWithdrawal(service.ctx, payer.merchantId, input, requestId);
    // The committed balance is now 0: the early refusal looks for the request's withdrawal first.
    const repeat = await createWithdrawal(service.ctx, payer.merchantId, input, requestId);
    expect(repeat.id).toBe(first.id);
    await expect(createWithdrawal(service.ctx, payer.merchantId, input, randomUUID())).rejects.toMatchObject({ key: 'WDR_002' });
    expect(await balance(service.app, payer)).toMatchObject({ balance: 0, balance_frozen: 10 });
  });

  it('1,000 concurrent 10-USDT withdrawals on two instances against a balance of exactly 100 → 10 succeed, 990 WDR_002', async () => {
    const rich = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, rich.terminalId, 100);
    const another = await service.startAnother();
    const apps = [service.app, another.app];

    // A watcher reads the terminal's accounts throughout; neither may ever be seen below zero. It
    // has a connection of its own: the service's pool is taken by the withdrawals and a wait for it
    // could time out on a loaded machine.
    const watch = new pg.Client({ connectionString: service.databaseUrl });
    await watch.connect();
    let lowest = Infinity;
    let watching = true;
    const watcher = (async () => {
      try {
        while (watching) {
          const { rows } = await watch.query<{ low: string }>(`SELECT min(balance)::text AS low FROM ledger_accounts WHERE terminal_id = $1`, [
            rich.terminalId,
          ]);
          lowest = Math.min(lowest, Number(rows[0]!.low));
        }
      } finally {
        await watch.end();
      }
    })();

    // On a starved machine a request may wait past the pool's 5 s for a connection and answer 503
    // UNAVAILABLE, having started nothing (a CI run saw 116 of them): a client sends it again, and
    // so does this test. What each request finally answers is what is checked.
    let resent = 0;
    const attempt = async (i: number) => {
      for (let tries = 1; ; tries++) {
        const res = await withdraw(apps[i % 2]!, rich, { amount: 10, address: VALID });
        if (res.statusCode !== 503 || tries === 10) return res;
        expect(res.json().error).toBe('UNAVAILABLE');
        resent++;
      }
    };
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => attempt(i)));
    watching = false;
    await watcher;

    const byStatus = new Map<string, number>();
    for (const res of results) {
      const key = `${res.statusCode} ${res.json().error ?? res.json().status}`;
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
    }
    expect(Object.fromEntries(byStatus), `${resent} answers of 503 sent again`).toEqual({ '200 pending': 10, '400 WDR_002': 990 });
    expect(lowest).toBeGreaterThanOrEqual(0);
    expect(await balance(service.app, rich)).toMatchObject({ balance: 0, balance_frozen: 100 });
    const listed = (await signed(service.app, rich, 'GET', '/v1/withdrawals')).json();
    expect(listed.data).toHaveLength(10);
    await ledgerOk(service.app);
  }, 180_000);
});

describe('withdrawals with the Tron adapter (fake full node)', () => {
  let node: FakeTronNode;
  let service: TestService;

  beforeAll(async () => {
    node = await startFakeTronNode();
    service = await startTestService(
      { KASSIR_WITHDRAWAL_ADAPTER: 'tron', KASSIR_TRON_FULL_NODE: node.url, KASSIR_TRON_PRIVATE_KEY: TEST_TRON_KEY, KASSIR_TRON_POLL_MS: '100' },
      { worker: true },
    );
  });
  afterAll(async () => {
    await service?.close();
    expect(node.unknownRoutes).toEqual([]);
    await node?.close();
  });

  async function row(id: string) {
    const { rows } = await service.ctx.db.query<{ status: string; tx_hash: string | null; signed_tx: { txID: string } | null }>(
      'SELECT status, tx_hash, signed_tx FROM withdrawals WHERE id = $1',
      [id],
    );
    return rows[0]!;
  }

  async function read(creds: MerchantCredentials, id: string) {
    return (await signed(service.app, creds, 'GET', `/v1/withdrawals/${id}`)).json();
  }

  it('the job signs, stores the transaction before broadcasting it, and completes once the chain confirms; the wallet gets amount − fee', async () => {
    const merchant = await createMerchant(service.app, { withdrawal_fee: 1.5 });
    await fund(service.app, merchant.terminalId, 100);
    const address = randomTronAddress();
    const atBroadcast: { status: string; tx_hash: string | null; signed_tx: { txID: string } | null }[] = [];
    let id = '';
    node.beforeAccept = async () => {
      atBroadcast.push(await row(id));
    };
    try {
      const res = await withdraw(service.app, merchant, { amount: 50, address, subtract_fee_from_amount: true });
      expect(res.statusCode, res.body).toBe(200);
      const created = res.json();
      id = created.id;
      expect(created).toMatchObject({ status: 'pending', tx_hash: null, amount: 50, fee: 1.5 });

      const txId = await until(() => node.broadcasts.find((b) => b.code === 'SUCCESS' && node.built.some((t) => t.txId === b.txId && t.to === address))?.txId);
      // Stored before the node saw it: the same transaction, already recorded.
      expect(atBroadcast[0]).toEqual({ status: 'processing', tx_hash: txId, signed_tx: expect.objectContaining({ txID: txId }) });
      node.beforeAccept = undefined;
      expect(await read(merchant, id)).toMatchObject({ status: 'processing', tx_hash: txId });
      expect(await balance(service.app, merchant)).toMatchObject({ balance: 50, balance_frozen: 50 });

      // The operator cannot settle it by hand, in either direction.
      expect((await admin(service.app, 'POST', `/withdrawals/${id}/complete`, { tx_hash: randomBytes(32).toString('hex') })).statusCode).toBe(409);
      expect((await admin(service.app, 'POST', `/withdrawals/${id}/fail`, { reason: 'no' })).statusCode).toBe(409);

      node.include(txId);
      node.confirm(txId);
      const done = await until(async () => {
        const w = await read(merchant, id);
        return w.status === 'completed' ? w : undefined;
      });
      expect(done).toMatchObject({ status: 'completed', tx_hash: txId, amount: 50, fee: 1.5 });
      expect(node.transfers.filter((t) => t.to === address)).toEqual([expect.objectContaining({ txId, amount: 48_500_000n })]);
      expect(node.built.filter((t) => t.to === address)).toHaveLength(1);
      expect(new Set(node.broadcasts.filter((b) => b.txId === txId).map((b) => b.txId)).size).toBe(1);
      expect(await balance(service.app, merchant)).toMatchObject({ balance: 50, balance_frozen: 0 });
      expect((await postings(service.ctx.db, id)).filter((p) => p.account === 'system_fee_revenue')).toEqual([
        { kind: 'withdrawal_settle', account: 'system_fee_revenue', amount: '1.500000' },
      ]);
      await ledgerOk(service.app);
    } finally {
      node.beforeAccept = undefined;
    }
  });

  it('without subtract_fee_from_amount the wallet gets the whole amount and amount + fee is debited', async () => {
    const merchant = await createMerchant(service.app, { withdrawal_fee: 1.5 });
    await fund(service.app, merchant.terminalId, 100);
    const address = randomTronAddress();
    const created = (await withdraw(service.app, merchant, { amount: 10.123456, address })).json();
    expect(await balance(service.app, merchant)).toMatchObject({ balance: 88.376544, balance_frozen: 11.623456 });
    const txId = await until(() => node.broadcasts.find((b) => b.code === 'SUCCESS' && node.built.some((t) => t.txId === b.txId && t.to === address))?.txId);
    node.confirm(txId);
    await until(async () => ((await read(merchant, created.id)).status === 'completed' ? true : undefined));
    expect(node.transfers.filter((t) => t.to === address)).toEqual([expect.objectContaining({ txId, amount: 10_123_456n })]);
    expect(await balance(service.app, merchant)).toMatchObject({ balance: 88.376544, balance_frozen: 0 });
    await ledgerOk(service.app);
  });

  it('a transfer the chain reverts fails the withdrawal and releases the funds; nothing is sent again', async () => {
    const merchant = await createMerchant(service.app, { withdrawal_fee: 1 });
    await fund(service.app, merchant.terminalId, 100);
    const address = randomTronAddress();
    const created = (await withdraw(service.app, merchant, { amount: 25, address })).json();
    const txId = await until(() => node.broadcasts.find((b) => b.code === 'SUCCESS' && node.built.some((t) => t.txId === b.txId && t.to === address))?.txId);
    node.outcome = 'REVERT';
    try {
      node.confirm(txId);
    } finally {
      node.outcome = 'SUCCESS';
    }
    const failed = await until(async () => {
      const w = await read(merchant, created.id);
      return w.status === 'failed' ? w : undefined;
    });
    expect(failed).toMatchObject({ status: 'failed', tx_hash: txId });
    expect(node.transfers.filter((t) => t.to === address)).toEqual([]);
    expect(node.built.filter((t) => t.to === address)).toHaveLength(1);
    expect(await balance(service.app, merchant)).toMatchObject({ balance: 100, balance_frozen: 0 });
    expect((await admin(service.app, 'POST', `/withdrawals/${created.id}/complete`, { tx_hash: randomBytes(32).toString('hex') })).statusCode).toBe(409);
    await ledgerOk(service.app);
  });

  it('a stored transaction that expired without reaching the chain is replaced by a new one, and only that one executes', async () => {
    const merchant = await createMerchant(service.app, { withdrawal_fee: 0 });
    await fund(service.app, merchant.terminalId, 100);
    const address = randomTronAddress();
    // The first transaction lives one second and never reaches the node's pool.
    node.expirationMs = 1000;
    let dropped: string | undefined;
    node.beforeAccept = (txId) => {
      node.beforeAccept = undefined;
      node.expirationMs = 60_000;
      dropped = txId;
      return 'drop';
    };
    let id = '';
    try {
      id = (await withdraw(service.app, merchant, { amount: 7, address })).json().id;
      await until(() => dropped);
      expect(await row(id)).toMatchObject({ status: 'processing', tx_hash: dropped });
      await until(() => (node.built.find((t) => t.txId === dropped)!.expiration < Date.now() ? true : undefined));
      // Time passes past the expiry margin (the job waits two minutes past expiration before it calls a transaction lost).
      await service.ctx.db.query(`UPDATE withdrawals SET tx_expires_at = tx_expires_at - interval '10 minutes' WHERE id = $1`, [id]);
    } finally {
      node.beforeAccept = undefined;
      node.expirationMs = 60_000;
    }
    const replacement = await until(
      () => node.broadcasts.find((b) => b.code === 'SUCCESS' && node.built.some((t) => t.txId === b.txId && t.to === address))?.txId,
      60_000,
    );
    expect(replacement).not.toBe(dropped);
    expect(await row(id)).toMatchObject({ status: 'processing', tx_hash: replacement });
    node.confirm(replacement);
    await until(async () => ((await read(merchant, id)).status === 'completed' ? true : undefined));
    expect(await read(merchant, id)).toMatchObject({ status: 'completed', tx_hash: replacement });
    expect(node.built.filter((t) => t.to === address).map((t) => t.txId)).toEqual([dropped, replacement]);
    expect(node.state(dropped!)).toBeUndefined();
    expect(node.transfers.filter((t) => t.to === address)).toEqual([expect.objectContaining({ txId: replacement, amount: 7_000_000n })]);
    await ledgerOk(service.app);
  }, 90_000);

  it('the operator can fail a Tron withdrawal while nothing is signed for it; the job then sends nothing', async () => {
    const merchant = await createMerchant(service.app, { withdrawal_fee: 1 });
    await fund(service.app, merchant.terminalId, 100);
    const address = randomTronAddress();
    node.refuseBuild = 'fake node: out of service';
    let id = '';
    try {
      id = (await withdraw(service.app, merchant, { amount: 25, address })).json().id;
      // The job tried and failed to build (it is retried later); nothing is stored.
      await until(async () => {
        const { rows } = await service.ctx.db.query<{ attempts: number }>(`SELECT attempts FROM graphile_worker.jobs WHERE key = $1`, [`withdrawal:${id}`]);
        return rows[0] && rows[0].attempts > 0 ? true : undefined;
      });
      expect(await row(id)).toMatchObject({ status: 'pending', tx_hash: null, signed_tx: null });
      const failed = await admin(service.app, 'POST', `/withdrawals/${id}/fail`, { reason: 'node down, sent by hand later' });
      expect(failed.statusCode, failed.body).toBe(200);
      expect(await balance(service.app, merchant)).toMatchObject({ balance: 100, balance_frozen: 0 });
    } finally {
      node.refuseBuild = undefined;
    }
    // The retried job finds the withdrawal failed and ends without building anything.
    await until(async () => {
      const { rows } = await service.ctx.db.query(`SELECT 1 FROM graphile_worker.jobs WHERE key = $1`, [`withdrawal:${id}`]);
      return rows.length === 0 ? true : undefined;
    }, 30_000);
    expect(node.built.filter((t) => t.to === address)).toEqual([]);
    expect(await read(merchant, id)).toMatchObject({ status: 'failed', tx_hash: null });
    await ledgerOk(service.app);
  }, 60_000);
});
