import { randomBytes } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import type { FastifyInstance } from 'fastify';
import { TronWeb } from 'tronweb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTronClient } from '../src/chain/tron.js';
import { ConfigError, loadConfig } from '../src/config.js';
import type { AppContext } from '../src/context.js';
import { pollDeposits } from '../src/executors/deposits.jobs.js';
import { deriveTronAddress, xpubProblem } from '../src/lib/tron-hd.js';
import { type FakeTronNode, randomTronAddress, startFakeTronNode, TEST_TRON_KEY, USDT_MAINNET } from './fakes/tron-node.js';
import { admin, adminOk, createExecutor, createMerchant, executorCall, expectLedgerOk, signed, startTestService, type TestService, until } from './helpers.js';

/** BIP39's best-known test mnemonic; its Tron account m/44'/195'/0'/0/0 is TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH (wallets agree). */
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ACCOUNT = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive("m/44'/195'/0'");
const XPUB = ACCOUNT.publicExtendedKey;

/** The private key of deposit address i, as the operator's offline wallet holds it. */
function privateKeyHex(index: number): string {
  return Buffer.from(ACCOUNT.deriveChild(0).deriveChild(index).privateKey!).toString('hex');
}

async function executorBalance(app: FastifyInstance, token: string) {
  const res = await executorCall(app, token, 'GET', '/balance');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { balance: number; balance_frozen: number; deposit_address: string | null; credit_limit: number };
}

describe('deposit addresses from the operator xpub', () => {
  it("child 0/i of the account xpub is the address of m/44'/195'/0'/0/i's private key (TronWeb), for several i", () => {
    expect(deriveTronAddress(XPUB, 0)).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    for (const index of [0, 1, 2, 7, 1000, 2 ** 31 - 1]) {
      expect(deriveTronAddress(XPUB, index)).toBe(TronWeb.address.fromPrivateKey(privateKeyHex(index)));
    }
    expect(new Set([0, 1, 2, 3].map((i) => deriveTronAddress(XPUB, i))).size).toBe(4);
    expect(() => deriveTronAddress(XPUB, -1)).toThrow(RangeError);
    expect(() => deriveTronAddress(XPUB, 2 ** 31)).toThrow(RangeError);
  });

  it('the configuration refuses an extended private key, a malformed key, and an xpub without a Tron node', () => {
    const base = { KASSIR_TRON_FULL_NODE: 'http://127.0.0.1:1', KASSIR_TRON_PRIVATE_KEY: TEST_TRON_KEY };
    expect(xpubProblem(XPUB)).toBeUndefined();
    expect(() => loadConfig({ ...base, KASSIR_TRON_DEPOSIT_XPUB: ACCOUNT.privateExtendedKey })).toThrow(/PRIVATE key/);
    expect(() => loadConfig({ ...base, KASSIR_TRON_DEPOSIT_XPUB: 'xpub123' })).toThrow(ConfigError);
    expect(() => loadConfig({ KASSIR_TRON_DEPOSIT_XPUB: XPUB })).toThrow(/KASSIR_TRON_FULL_NODE/);
    const config = loadConfig({ ...base, KASSIR_TRON_DEPOSIT_XPUB: XPUB });
    expect(config.tronDeposits).toEqual({ xpub: XPUB, confirmations: 19, pollMs: 30_000 });
  });
});

describe('deposits on chain (Tron adapter, fake node)', () => {
  let node: FakeTronNode;
  let service: TestService;
  let other: { ctx: AppContext };
  const chain = () => createTronClient(service.config.tron!);

  beforeAll(async () => {
    node = await startFakeTronNode();
    service = await startTestService({
      KASSIR_WITHDRAWAL_ADAPTER: 'tron',
      KASSIR_TRON_FULL_NODE: node.url,
      KASSIR_TRON_PRIVATE_KEY: TEST_TRON_KEY,
      KASSIR_TRON_DEPOSIT_XPUB: XPUB,
      KASSIR_TRON_DEPOSIT_CONFIRMATIONS: '19',
    });
    other = await service.startAnother();
  });
  afterAll(async () => {
    await service?.close();
    expect(node.unknownRoutes).toEqual([]);
    await node?.close();
  });

  async function depositRows(executorId: string) {
    const { rows } = await service.ctx.db.query<{ tx_hash: string; log_index: number; amount: string }>(
      'SELECT tx_hash, log_index, amount::text FROM executor_deposits WHERE executor_id = $1 ORDER BY tx_hash, log_index',
      [executorId],
    );
    return rows;
  }

  async function depositPostings(executorId: string) {
    const { rows } = await service.ctx.db.query<{ memo: string; amount: string; incoming: string }>(
      `SELECT t.memo, e.amount::text,
              (SELECT e2.amount::text FROM ledger_entries e2 JOIN ledger_accounts a2 ON a2.id = e2.account_id
                WHERE e2.transaction_id = t.id AND a2.kind = 'system_incoming') AS incoming
         FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.kind = 'executor_deposit' AND a.executor_id = $1 ORDER BY t.memo`,
      [executorId],
    );
    return rows;
  }

  it('each executor gets its own address at creation (child 0/index of the xpub), shown to it and to the operator; none stores a key', async () => {
    const a = await createExecutor(service.app, 'A', { deposit: 0 });
    const b = await createExecutor(service.app, 'B', { deposit: 0 });
    const { rows } = await service.ctx.db.query<{ id: string; deposit_index: number; deposit_address: string }>(
      'SELECT id, deposit_index, deposit_address FROM executors WHERE id = ANY($1::uuid[])',
      [[a.id, b.id]],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.deposit_address).toBe(deriveTronAddress(XPUB, row.deposit_index));
      expect(row.deposit_address).toBe(TronWeb.address.fromPrivateKey(privateKeyHex(row.deposit_index)));
    }
    expect(rows[0]!.deposit_address).not.toBe(rows[1]!.deposit_address);
    const aRow = rows.find((row) => row.id === a.id)!;
    expect((await executorBalance(service.app, a.token)).deposit_address).toBe(aRow.deposit_address);
    expect((await adminOk(service.app, 'GET', `/executors/${a.id}`)).deposit_address).toBe(aRow.deposit_address);
    const { rows: columns } = await service.ctx.db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'executors' AND column_name ~ '(priv|secret|seed|xprv)'`,
    );
    expect(columns).toEqual([]);
  });

  it('an executor without an address (made before deposits were configured) is given one when first shown', async () => {
    const e = await createExecutor(service.app, 'Old', { deposit: 0 });
    await service.ctx.db.query('UPDATE executors SET deposit_index = NULL, deposit_address = NULL WHERE id = $1', [e.id]);
    const shown = (await executorBalance(service.app, e.token)).deposit_address;
    expect(shown).toMatch(/^T/);
    const { rows } = await service.ctx.db.query<{ deposit_index: number; deposit_address: string }>(
      'SELECT deposit_index, deposit_address FROM executors WHERE id = $1',
      [e.id],
    );
    expect(rows[0]!.deposit_address).toBe(shown);
    expect(deriveTronAddress(XPUB, rows[0]!.deposit_index)).toBe(shown);
    // Asked again, the same address.
    expect((await executorBalance(service.app, e.token)).deposit_address).toBe(shown);
    expect((await adminOk(service.app, 'GET', `/executors/${e.id}`)).deposit_address).toBe(shown);
  });

  it('a transfer is credited after 19 confirmations, not before, once, with its hash on the posting', async () => {
    const e = await createExecutor(service.app, 'Depositor', { deposit: 0 });
    const address = (await executorBalance(service.app, e.token)).deposit_address!;
    const txId = node.addIncomingTransfer({ to: address, amount: 12_500_000n });
    // In the head block: 1 confirmation.
    expect(await pollDeposits(service.ctx, chain())).toMatchObject({ credited: 0 });
    node.mineBlocks(17); // 18 confirmations
    expect(await pollDeposits(service.ctx, chain())).toMatchObject({ credited: 0 });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 0, balance_frozen: 0 });
    expect(await depositRows(e.id)).toEqual([]);

    node.mineBlocks(1); // 19
    expect(await pollDeposits(service.ctx, chain())).toMatchObject({ credited: 1 });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 12.5, balance_frozen: 0 });
    expect(await depositRows(e.id)).toEqual([{ tx_hash: txId, log_index: 0, amount: '12.500000' }]);
    expect(await depositPostings(e.id)).toEqual([{ memo: txId, amount: '12.500000', incoming: '-12.500000' }]);

    // Polled again and again: still once.
    node.mineBlocks(5);
    for (let i = 0; i < 3; i++) expect(await pollDeposits(service.ctx, chain())).toMatchObject({ credited: 0 });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 12.5 });

    // The statement and the deposits list show it.
    const statement = (await executorCall(service.app, e.token, 'GET', '/statement')).json();
    expect(statement.entries).toEqual([expect.objectContaining({ kind: 'executor_deposit', account: 'available', amount: 12.5, memo: txId })]);
    const deposits = (await executorCall(service.app, e.token, 'GET', '/deposits')).json();
    expect(deposits.deposits).toEqual([expect.objectContaining({ tx_hash: txId, amount: 12.5, address })]);
    const adminDeposits = await adminOk<{ deposits: unknown[] }>(service.app, 'GET', `/executors/${e.id}/deposits`);
    expect(adminDeposits.deposits).toHaveLength(1);
    await expectLedgerOk(service.app);
  });

  it('two instances polling at once, repeatedly, credit each transfer exactly once', async () => {
    const e = await createExecutor(service.app, 'Raced', { deposit: 0 });
    const address = (await executorBalance(service.app, e.token)).deposit_address!;
    const amounts = [1_000_000n, 2_345_678n, 100_000_000n, 1n];
    const txIds = amounts.map((amount) => node.addIncomingTransfer({ to: address, amount }));
    node.mineBlocks(19);
    const results = await Promise.all([
      pollDeposits(service.ctx, chain()),
      pollDeposits(other.ctx, chain()),
      pollDeposits(service.ctx, chain()),
      pollDeposits(other.ctx, chain()),
    ]);
    // Whichever instance won each, the credits add up to the transfers, once each.
    expect(results.reduce((sum, r) => sum + r.credited, 0)).toBe(amounts.length);
    expect((await depositRows(e.id)).map((row) => row.tx_hash).sort()).toEqual([...txIds].sort());
    expect(await depositPostings(e.id)).toHaveLength(amounts.length);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 103.345679 });
    await Promise.all([pollDeposits(service.ctx, chain()), pollDeposits(other.ctx, chain())]);
    expect(await depositPostings(e.id)).toHaveLength(amounts.length);
    await expectLedgerOk(service.app);
  });

  it('transfers of another token contract, to another address, or reverted are ignored; two USDT transfers in one transaction are two deposits', async () => {
    const e = await createExecutor(service.app, 'Picky', { deposit: 0 });
    const address = (await executorBalance(service.app, e.token)).deposit_address!;
    const otherToken = randomTronAddress();
    node.addIncomingTransfer({ to: address, amount: 50_000_000n, contract: otherToken });
    node.addIncomingTransfer({ to: address, amount: 7_000_000n, reverted: true });
    // One transaction: another token to us, USDT to someone else, then USDT to us twice.
    const batch = node.addIncomingTransfer({
      to: address,
      amount: 40_000_000n,
      contract: otherToken,
      more: [
        { to: randomTronAddress(), amount: 30_000_000n },
        { to: address, amount: 3_000_000n },
        { to: address, amount: 4_000_000n },
      ],
    });
    node.mineBlocks(19);
    await pollDeposits(service.ctx, chain());
    expect(await depositRows(e.id)).toEqual([
      { tx_hash: batch, log_index: 2, amount: '3.000000' },
      { tx_hash: batch, log_index: 3, amount: '4.000000' },
    ]);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 7 });
    await expectLedgerOk(service.app);
  });

  it('the ledger check names a recorded transfer without its credit', async () => {
    const e = await createExecutor(service.app, 'Checked', { deposit: 0 });
    const address = (await executorBalance(service.app, e.token)).deposit_address!;
    const txHash = randomBytes(32).toString('hex');
    await service.ctx.db.query(
      `INSERT INTO executor_deposits (executor_id, address, tx_hash, log_index, from_address, amount, block_number, block_time)
       VALUES ($1, $2, $3, 0, $2, 9, 1, now())`,
      [e.id, address, txHash],
    );
    const check = await adminOk<{ ok: boolean; problems: { invariant: string; detail: string }[] }>(service.app, 'GET', '/ledger/check');
    expect(check.problems).toEqual([{ invariant: 'deposits credited once', detail: expect.stringContaining(`transaction ${txHash}) has 0 matching`) }]);
    await service.ctx.db.query('DELETE FROM executor_deposits WHERE tx_hash = $1', [txHash]);
    await expectLedgerOk(service.app);
  });

  it('a node that cannot answer leaves everything uncredited, and the next poll catches up', async () => {
    const e = await createExecutor(service.app, 'Patient', { deposit: 0 });
    const address = (await executorBalance(service.app, e.token)).deposit_address!;
    node.addIncomingTransfer({ to: address, amount: 5_000_000n });
    node.mineBlocks(19);
    node.failRoutes.add('wallet/gettransactioninfobyid');
    try {
      await expect(pollDeposits(service.ctx, chain())).rejects.toThrow();
    } finally {
      node.failRoutes.delete('wallet/gettransactioninfobyid');
    }
    await pollDeposits(service.ctx, chain());
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 5 });
    await expectLedgerOk(service.app);
  });
});

describe("executors' withdrawals (manual adapter)", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  async function withdrawalCount(executorId: string): Promise<number> {
    const { rows } = await service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM withdrawals WHERE executor_id = $1', [executorId]);
    return rows[0]!.n;
  }

  it('freezes from the available balance only (never the credit line), refuses bad input with nothing changed, and the operator completes or fails it', async () => {
    const e = await createExecutor(service.app, 'Withdrawer', { deposit: 100 });
    await adminOk(service.app, 'PATCH', `/executors/${e.id}`, { credit_limit: 500 });
    const address = randomTronAddress();

    const tooMuch = await executorCall(service.app, e.token, 'POST', '/withdrawals', { amount: 100.000001, address });
    expect(tooMuch.statusCode, tooMuch.body).toBe(400);
    expect(tooMuch.json()).toMatchObject({ error: 'WDR_002' });
    expect(tooMuch.json().message).toMatch(/100 USDT is available.*credit line.*nothing was changed/);
    for (const bad of [
      { amount: 10, address: 'TnotAnAddress' },
      { amount: 10, address: `${address.slice(0, -1)}${address.endsWith('a') ? 'b' : 'a'}` },
      { amount: 0, address },
      { amount: -5, address },
      { amount: 1.0000001, address },
    ]) {
      const res = await executorCall(service.app, e.token, 'POST', '/withdrawals', bad);
      expect(res.statusCode, `${JSON.stringify(bad)} ${res.body}`).toBe(400);
      expect(res.json().error).toBe('WDR_001');
    }
    expect(await withdrawalCount(e.id)).toBe(0);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 100, balance_frozen: 0 });

    const created = await executorCall(service.app, e.token, 'POST', '/withdrawals', { amount: 60, address });
    expect(created.statusCode, created.body).toBe(201);
    const first = created.json();
    expect(first).toMatchObject({ status: 'pending', amount: 60, fee: 0, address, tx_hash: null });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 40, balance_frozen: 60 });
    await expectLedgerOk(service.app);

    // 40 left available: 41 is refused though the credit line would cover it.
    expect((await executorCall(service.app, e.token, 'POST', '/withdrawals', { amount: 41, address })).json()).toMatchObject({ error: 'WDR_002' });
    const second = (await executorCall(service.app, e.token, 'POST', '/withdrawals', { amount: 40, address })).json();
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 0, balance_frozen: 100 });
    await expectLedgerOk(service.app);

    // The operator sees them among withdrawals, as an executor's.
    const listed = await adminOk<{ withdrawals: { id: string; executor_id: string; terminal_id: null }[] }>(
      service.app,
      'GET',
      `/withdrawals?owner=executor&executor_id=${e.id}`,
    );
    expect(listed.withdrawals.map((w) => w.id).sort()).toEqual([first.id, second.id].sort());
    expect(listed.withdrawals.every((w) => w.executor_id === e.id && w.terminal_id === null)).toBe(true);
    expect((await admin(service.app, 'GET', '/withdrawals?owner=nobody')).statusCode).toBe(400);

    const txHash = randomBytes(32).toString('hex');
    const completed = await adminOk(service.app, 'POST', `/withdrawals/${first.id}/complete`, { tx_hash: txHash });
    expect(completed).toMatchObject({ status: 'completed', tx_hash: txHash, executor_id: e.id });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 0, balance_frozen: 40 });
    await expectLedgerOk(service.app);

    await adminOk(service.app, 'POST', `/withdrawals/${second.id}/fail`, { reason: 'wrong network' });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 40, balance_frozen: 0 });
    await expectLedgerOk(service.app);

    const statement = (await executorCall(service.app, e.token, 'GET', '/statement')).json();
    const kinds = statement.entries.map((entry: { kind: string; account: string; amount: number }) => `${entry.kind} ${entry.account} ${entry.amount}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'withdrawal_reserve available -60',
        'withdrawal_reserve frozen 60',
        'withdrawal_settle frozen -60',
        'withdrawal_release frozen -40',
        'withdrawal_release available 40',
      ]),
    );
    const mine = (await executorCall(service.app, e.token, 'GET', '/withdrawals')).json();
    expect(mine.withdrawals.map((w: { id: string; status: string }) => [w.id, w.status]).sort()).toEqual(
      [
        [first.id, 'completed'],
        [second.id, 'failed'],
      ].sort(),
    );
  });

  it("an executor never sees another's withdrawals, nor does a merchant; a merchant's own withdrawal still counts in its terminal's frozen only", async () => {
    const a = await createExecutor(service.app, 'A', { deposit: 10 });
    const b = await createExecutor(service.app, 'B', { deposit: 10 });
    const mine = (await executorCall(service.app, a.token, 'POST', '/withdrawals', { amount: 5, address: randomTronAddress() })).json();
    expect((await executorCall(service.app, b.token, 'GET', `/withdrawals/${mine.id}`)).statusCode).toBe(404);
    expect((await executorCall(service.app, b.token, 'GET', '/withdrawals')).json().withdrawals).toEqual([]);
    expect((await executorCall(service.app, a.token, 'GET', `/withdrawals/${mine.id}`)).json()).toMatchObject({ id: mine.id, amount: 5 });

    const merchant = await createMerchant(service.app);
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 20, reason: 'funds' });
    expect((await signed(service.app, merchant, 'GET', `/v1/withdrawals/${mine.id}`)).statusCode).toBe(404);
    expect((await signed(service.app, merchant, 'GET', '/v1/withdrawals')).json().data).toEqual([]);
    const merchantWithdrawal = await signed(service.app, merchant, 'POST', '/v1/withdrawals', {
      terminal_id: merchant.terminalId,
      amount: 7,
      address: randomTronAddress(),
    });
    expect(merchantWithdrawal.statusCode, merchantWithdrawal.body).toBe(200);
    await expectLedgerOk(service.app);
    // The check tells an executor's withdrawal from a terminal's: moving the executor's frozen breaks it.
    await service.ctx.db.query(`UPDATE ledger_accounts SET balance = balance + 1 WHERE executor_id = $1 AND kind = 'executor_frozen'`, [a.id]);
    const check = await adminOk<{ ok: boolean; problems: { invariant: string }[] }>(service.app, 'GET', '/ledger/check');
    expect(check.problems.map((p) => p.invariant)).toContain('executor frozen equals open holds');
    await service.ctx.db.query(`UPDATE ledger_accounts SET balance = balance - 1 WHERE executor_id = $1 AND kind = 'executor_frozen'`, [a.id]);
    await expectLedgerOk(service.app);
  });

  it('two withdrawals at once that together exceed the available balance: one is frozen, the other refused', async () => {
    const e = await createExecutor(service.app, 'Racer', { deposit: 100 });
    await adminOk(service.app, 'PATCH', `/executors/${e.id}`, { credit_limit: 1000 });
    const answers = await Promise.all(
      [60, 60, 60].map((amount) => executorCall(service.app, e.token, 'POST', '/withdrawals', { amount, address: randomTronAddress() })),
    );
    expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 400, 400]);
    expect(await withdrawalCount(e.id)).toBe(1);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 40, balance_frozen: 60 });
    await expectLedgerOk(service.app);
  });

  it('an Idempotency-Key makes retries safe: a repeat (also racing) gets the first withdrawal, another request under the key is refused', async () => {
    const e = await createExecutor(service.app, 'Retrier', { deposit: 100 });
    const address = randomTronAddress();
    const post = (body: unknown, key: string) =>
      service.app.inject({
        method: 'POST',
        url: '/executor/v1/withdrawals',
        headers: { authorization: `Bearer ${e.token}`, 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify(body),
      });
    const first = await post({ amount: 30, address }, 'w-1');
    expect(first.statusCode, first.body).toBe(201);
    const again = await post({ amount: 30, address }, 'w-1');
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const other = await post({ amount: 31, address }, 'w-1');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'CONFLICT', data: { withdrawal_id: first.json().id } });

    const raced = await Promise.all(Array.from({ length: 5 }, () => post({ amount: 20, address }, 'w-2')));
    expect(raced.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(raced.map((r) => r.json().id)).size).toBe(1);
    expect(await withdrawalCount(e.id)).toBe(2);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 50, balance_frozen: 50 });
    expect((await post({ amount: 1, address }, 'x'.repeat(256))).json()).toMatchObject({ error: 'WDR_001', message: expect.stringMatching(/Idempotency-Key/) });
    await expectLedgerOk(service.app);
  });

  it('without KASSIR_TRON_DEPOSIT_XPUB no deposit address is shown; the operator credits deposits by hand (adjustments)', async () => {
    const e = await createExecutor(service.app, 'Manual', { deposit: 0 });
    expect((await executorBalance(service.app, e.token)).deposit_address).toBeNull();
    await adminOk(service.app, 'POST', `/executors/${e.id}/adjustments`, { amount: 25, reason: 'USDT received at the desk, tx abc' });
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 25 });
    await expectLedgerOk(service.app);
  });
});

describe("executors' withdrawals and deposits through the worker (Tron adapter)", () => {
  let node: FakeTronNode;
  let service: TestService;
  beforeAll(async () => {
    node = await startFakeTronNode();
    service = await startTestService(
      {
        KASSIR_WITHDRAWAL_ADAPTER: 'tron',
        KASSIR_TRON_FULL_NODE: node.url,
        KASSIR_TRON_PRIVATE_KEY: TEST_TRON_KEY,
        KASSIR_TRON_POLL_MS: '100',
        KASSIR_TRON_DEPOSIT_XPUB: XPUB,
        KASSIR_TRON_DEPOSIT_CONFIRMATIONS: '19',
        KASSIR_TRON_DEPOSIT_POLL_MS: '100',
      },
      { worker: true },
    );
  });
  afterAll(async () => {
    await service?.close();
    expect(node.unknownRoutes).toEqual([]);
    await node?.close();
  });

  it('the deposit job outlives a node that cannot answer: it keeps polling and credits once the node is back', async () => {
    const e = await createExecutor(service.app, 'Outage', { deposit: 0 });
    const address = (await executorBalance(service.app, e.token)).deposit_address!;
    node.failRoutes.add('wallet/getnowblock');
    try {
      node.addIncomingTransfer({ to: address, amount: 3_000_000n });
      node.mineBlocks(19);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 0 });
    } finally {
      node.failRoutes.delete('wallet/getnowblock');
    }
    await until(async () => ((await executorBalance(service.app, e.token)).balance === 3 ? true : undefined));
    await expectLedgerOk(service.app);
  });

  it('the deposit job credits a confirmed transfer; the executor withdraws it through the same sender, which completes when the chain confirms', async () => {
    const e = await createExecutor(service.app, 'Chain', { deposit: 0 });
    const depositAddress = (await executorBalance(service.app, e.token)).deposit_address!;
    node.addIncomingTransfer({ to: depositAddress, amount: 80_000_000n });
    node.mineBlocks(19);
    await until(async () => ((await executorBalance(service.app, e.token)).balance === 80 ? true : undefined));

    const to = randomTronAddress();
    const res = await executorCall(service.app, e.token, 'POST', '/withdrawals', { amount: 30.5, address: to });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const txId = await until(() => node.broadcasts.find((b) => b.code === 'SUCCESS' && node.built.some((t) => t.txId === b.txId && t.to === to))?.txId);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 49.5, balance_frozen: 30.5 });
    // Sent by the Tron adapter: the operator cannot settle it by hand.
    expect((await admin(service.app, 'POST', `/withdrawals/${id}/complete`, { tx_hash: randomBytes(32).toString('hex') })).statusCode).toBe(409);
    await expectLedgerOk(service.app);

    node.confirm(txId);
    const done = await until(async () => {
      const w = (await executorCall(service.app, e.token, 'GET', `/withdrawals/${id}`)).json();
      return w.status === 'completed' ? w : undefined;
    });
    expect(done).toMatchObject({ tx_hash: txId, amount: 30.5 });
    expect(node.transfers.filter((t) => t.to === to)).toEqual([expect.objectContaining({ amount: 30_500_000n, contract: USDT_MAINNET })]);
    expect(await executorBalance(service.app, e.token)).toMatchObject({ balance: 49.5, balance_frozen: 0 });
    await expectLedgerOk(service.app);
  });
});
