/**
 * The double-entry ledger (DESIGN.md decisions 10, 11, 14) and its check, GET /admin/v1/ledger/check:
 * a healthy ledger passes; a ledger corrupted on purpose in this file's own database fails with a
 * problem that names the transaction, terminal or payment concerned; the repair makes it pass again.
 */
import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureMonthsAhead, partitionedTables } from '../src/db/partitions.js';
import { type Queryable, type Tx, transaction } from '../src/db/pool.js';
import { creditForPayin, payinSettlement } from '../src/ledger/credit.js';
import { type Posting, post } from '../src/ledger/ledger.repo.js';
import { checkLedger, checkLedgerByJob, checkWholeLedger } from '../src/ledger/ledger.service.js';
import { type LedgerWatermark, readWatermark } from '../src/ledger/ledger-since.js';
import type { LedgerPiece } from '../src/ledger/ledger-whole.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  setRate,
  sqlOf,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

interface LedgerCheck {
  ok: boolean;
  problems: { invariant: string; detail: string }[];
}

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
/** Payments completed through an executor notification, as the healthy state. */
const completed: { id: string; amount: string }[] = [];

const check = () => adminOk<LedgerCheck>(service.app, 'GET', '/ledger/check');
const sql = sqlOf(() => service);

/** Runs `fn` in a committed transaction with the ledger's user triggers (balancing, append-only) off. */
async function withoutLedgerTriggers(fn: (tx: Tx) => Promise<void>): Promise<void> {
  const client = await service.ctx.db.connect();
  try {
    await client.query('BEGIN');
    await client.query('ALTER TABLE ledger_entries DISABLE TRIGGER USER');
    await fn(client);
    await client.query('ALTER TABLE ledger_entries ENABLE TRIGGER USER');
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

/** Runs `fn` in a transaction and commits it: its value, and the error that refused it (at COMMIT or before). */
async function inTransaction<T>(fn: (tx: Tx) => Promise<T>): Promise<{ value?: T; error?: Error & { code?: string; constraint?: string } }> {
  const client = await service.ctx.db.connect();
  let value: T | undefined;
  try {
    await client.query('BEGIN');
    value = await fn(client);
    await client.query('COMMIT');
    return { value };
  } catch (err) {
    await client.query('ROLLBACK');
    return { value, error: err as Error };
  } finally {
    client.release();
  }
}

/**
 * A deleted posting put back as it was (its transaction row, then its entries, in one transaction):
 * balanced entries need no trigger switched off.
 */
async function putPostingBack(
  posting: { id: string; kind: string; ref_id: string | null; merchant_id: string | null; memo?: string | null; created_at: unknown },
  entries: { id: string; account_id: string; amount: string; created_at: unknown }[],
): Promise<void> {
  await inTransaction(async (tx) => {
    await tx.query('INSERT INTO ledger_transactions (id, kind, ref_id, merchant_id, memo, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      posting.id,
      posting.kind,
      posting.ref_id,
      posting.merchant_id,
      posting.memo ?? null,
      posting.created_at,
    ]);
    for (const e of entries) {
      await tx.query('INSERT INTO ledger_entries (id, transaction_id, account_id, amount, created_at) VALUES ($1, $2, $3, $4, $5)', [
        e.id,
        posting.id,
        e.account_id,
        e.amount,
        e.created_at,
      ]);
    }
  }).then(({ error }) => {
    if (error) throw error;
  });
}

/**
 * Corrupts the ledger with the triggers off: a transaction whose one entry leaves it unbalanced, and
 * one with no entries (both at `at`, now by default).
 */
async function writeUnbalancedAndEmpty(at?: Date): Promise<{ unbalanced: string; empty: string }> {
  const [account] = await sql<{ id: string }>(`SELECT id FROM ledger_accounts WHERE kind = 'system_adjustments'`);
  let unbalanced = '';
  let empty = '';
  await withoutLedgerTriggers(async (tx) => {
    unbalanced = (
      await tx.query<{ id: string }>(
        `INSERT INTO ledger_transactions (kind, memo, created_at) VALUES ('adjustment', 'corrupt', coalesce($1, now())) RETURNING id`,
        [at ?? null],
      )
    ).rows[0]!.id;
    await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at) VALUES ($1, $2, 1.5, coalesce($3, now()))', [
      unbalanced,
      account!.id,
      at ?? null,
    ]);
    empty = (
      await tx.query<{ id: string }>(
        `INSERT INTO ledger_transactions (kind, memo, created_at) VALUES ('adjustment', 'empty', coalesce($1, now())) RETURNING id`,
        [at ?? null],
      )
    ).rows[0]!.id;
  });
  return { unbalanced, empty };
}

/** The ids of the system accounts system_adjustments, system_incoming and system_fee_revenue. */
async function ledgerAccounts(): Promise<string[]> {
  const rows = await sql<{ id: string; kind: string }>(
    `SELECT id, kind FROM ledger_accounts WHERE kind IN ('system_adjustments', 'system_incoming', 'system_fee_revenue') AND terminal_id IS NULL AND executor_id IS NULL`,
  );
  return ['system_adjustments', 'system_incoming', 'system_fee_revenue'].map((kind) => rows.find((r) => r.kind === kind)!.id);
}

async function newLedgerTransaction(tx: Tx, memo: string): Promise<string> {
  return (await tx.query<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo) VALUES ('adjustment', $1) RETURNING id`, [memo])).rows[0]!.id;
}

async function notify(requisiteId: string, amount: number) {
  const res = await service.app.inject({
    method: 'POST',
    url: '/executor/v1/notifications',
    headers: { authorization: `Bearer ${executor.token}`, 'content-type': 'application/json' },
    payload: { requisite_id: requisiteId, amount, received_at: new Date().toISOString() },
  });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

/** Creates a payment on `creds`'s terminal and completes it by the executor's notification. */
async function completePaymentFlow(creds: MerchantCredentials, amount: number, currency = 'RUB'): Promise<string> {
  const { status, body } = await createPayment(service.app, creds, { ext_id: uniqueExtId(), amount, currency, method: 'CARD' });
  expect(status, JSON.stringify(body)).toBe(200);
  const [row] = await sql<{ requisite_id: string }>('SELECT requisite_id FROM payments WHERE id = $1', [body.id]);
  const notified = await notify(row!.requisite_id, amount);
  expect(notified.status, JSON.stringify(notified.body)).toBe(200);
  expect(notified.body).toMatchObject({ matched: true, payment_id: body.id });
  return body.id as string;
}

async function available(terminalId: string): Promise<string> {
  const [row] = await sql<{ balance: string }>(`SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`, [
    terminalId,
  ]);
  return row!.balance;
}

async function payinEntries(paymentId: string) {
  return sql<{ transaction_id: string; kind: string; terminal_id: string | null; amount: string }>(
    `SELECT e.transaction_id, a.kind, a.terminal_id, e.amount::text
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
      WHERE t.kind = 'payin' AND t.ref_id = $1 ORDER BY a.kind`,
    [paymentId],
  );
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { payin_rate: 2.5 });
  executor = await createExecutor(service.app);
  // One card per payment: amounts differ anyway, but the pool must have room for each.
  for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

describe('a healthy ledger', () => {
  it('passes the check after adjustments, completed payments and an unmatched notification', async () => {
    expect(await check()).toEqual({ ok: true, problems: [] });

    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 100, reason: 'opening credit' });
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: -25.5, reason: 'correction' });
    for (const amount of [1500, 2750.5]) completed.push({ id: await completePaymentFlow(merchant, amount), amount: String(amount) });
    const [requisite] = await sql<{ id: string }>('SELECT id FROM requisites WHERE executor_id = $1 LIMIT 1', [executor.id]);
    expect((await notify(requisite!.id, 777)).body).toMatchObject({ matched: false, status: 'unmatched' });

    expect(await check()).toEqual({ ok: true, problems: [] });

    const expected = completed.reduce((sum, p) => sum.plus(creditForPayin(p.amount, '95.5', '2.5').net), new Decimal('74.5'));
    expect(await available(merchant.terminalId)).toBe(expected.toFixed(6));
    const [total] = await sql<{ total: string; n: number }>('SELECT sum(amount)::text AS total, count(*) AS n FROM ledger_entries');
    // Two terminal adjustments and the executor's deposit (two entries each); per payment the
    // hold at hand-out (two) and the completion (three).
    expect(total).toEqual({ total: '0.000000', n: 2 * 2 + 2 + 5 * completed.length });
  });

  it('posts each pay-in as three entries: executor_frozen −hold, terminal_available +net, system_fee_revenue +fee', async () => {
    for (const payment of completed) {
      const { gross, net, fee } = creditForPayin(payment.amount, '95.5', '2.5');
      const entries = await payinEntries(payment.id);
      expect(entries.map(({ kind, terminal_id, amount }) => ({ kind, terminal_id, amount }))).toEqual([
        { kind: 'executor_frozen', terminal_id: null, amount: gross.negated().toFixed(6) },
        { kind: 'system_fee_revenue', terminal_id: null, amount: fee.toFixed(6) },
        { kind: 'terminal_available', terminal_id: merchant.terminalId, amount: net.toFixed(6) },
      ]);
      expect(new Set(entries.map((e) => e.transaction_id)).size).toBe(1);
    }
    // 1500 RUB at 95.5 with 2.5 %: the worked example of DESIGN.md decision 11.
    expect((await payinEntries(completed[0]!.id)).find((e) => e.kind === 'terminal_available')?.amount).toBe('15.314136');
  });

  it('a pay-in at payin_rate 0 posts two entries (no zero fee entry)', async () => {
    const free = await createMerchant(service.app, { payin_rate: 0 });
    const paymentId = await completePaymentFlow(free, 955);
    const entries = await payinEntries(paymentId);
    expect(entries.map(({ kind, amount }) => ({ kind, amount }))).toEqual([
      { kind: 'executor_frozen', amount: '-10.000000' },
      { kind: 'terminal_available', amount: '10.000000' },
    ]);
    expect(await available(free.terminalId)).toBe('10.000000');
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a pay-in whose net credit rounds to zero completes, credits nothing and keeps the ledger whole', async () => {
    // 0.01 KZT at 480.25 is 0.0000208 USDT; a 99.9999 % fee leaves 0.00000000002: nothing for the terminal.
    await setRate(service.app, 'KZT', 480.25);
    const greedy = await createMerchant(service.app, { currency: 'KZT', payin_rate: 99.9999 });
    await createRequisite(service.app, executor.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi' });
    const paymentId = await completePaymentFlow(greedy, 0.01, 'KZT');
    const entries = await payinEntries(paymentId);
    expect(entries.map(({ kind, amount }) => ({ kind, amount }))).toEqual([
      { kind: 'executor_frozen', amount: '-0.000021' },
      { kind: 'system_fee_revenue', amount: '0.000021' },
    ]);
    expect(await available(greedy.terminalId)).toBe('0.000000');
    expect(await check()).toEqual({ ok: true, problems: [] });
  });
});

describe("a completion's figures in SQL (payin_settlement, issue 38)", () => {
  // payment_complete posts what payin_settlement computes; the service's own arithmetic is
  // src/ledger/credit.ts payinSettlement (decimal.js, 40 digits). The two must agree to the
  // micro-USDT over the whole domain the service accepts (amounts with 2 decimals below 10^15,
  // rates with 8 in (0, 10^11), percentages with 4 in [0, 100)), everyday values most of the time.
  const units = (n: bigint | number, places: number) => new Decimal(n.toString()).div(new Decimal(10).pow(places)).toFixed();
  const amount = fc.oneof(
    { weight: 3, arbitrary: fc.bigInt({ min: 1n, max: 100_000_000n }) },
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 17n - 1n }) },
  );
  const rate = fc.oneof(
    { weight: 3, arbitrary: fc.bigInt({ min: 100_000_000n, max: 100_000_000_000n }) },
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 19n - 1n }) },
  );
  const percent = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 100_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 999_999 }) },
    { weight: 1, arbitrary: fc.constantFrom(0, 999_999) },
  );

  it("gives payinSettlement's gross, net, fee, reward and revenue for 5000 drawn inputs and the edge cases", async () => {
    const drawn = fc
      .sample(fc.record({ a: amount, r: rate, p: percent, w: percent }), { numRuns: 5000, seed: 38 })
      .map(({ a, r, p, w }) => [units(a, 2), units(r, 8), units(p, 4), units(w, 4)]);
    const edges = [
      ['1500', '95.5', '2.5', '1'],
      ['0.01', '20000', '0', '0'],
      ['0.05', '20000', '0', '99.9999'],
      ['1', '8', '0.5', '0.5'],
      ['0.01', '1', '99.995', '50'],
      ['1000000', '1', '99.9999', '99.9999'],
      ['0.01', '99999999999.99999999', '2.5', '3'],
      ['0.01', '480.25', '99', '0'],
      ['999999999999999.99', '0.00000001', '2.5', '1.2345'],
      ['300000', '0.00000001', '0', '0'],
      ['1500', '95.12345678', '2.5', '0.3333'],
      ['12345.67', '0.00000003', '1.2345', '7'],
    ];
    const inputs = [...edges, ...drawn];
    const rows = await sql<{ gross: string; net: string; fee: string; reward: string; revenue: string }>(
      `SELECT s.gross::text, s.net::text, s.fee::text, s.reward::text, s.revenue::text
         FROM unnest($1::numeric[], $2::numeric[], $3::numeric[], $4::numeric[]) WITH ORDINALITY AS x(a, r, p, w, ord)
         CROSS JOIN LATERAL payin_settlement(x.a, x.r, x.p, x.w) s ORDER BY x.ord`,
      [inputs.map((i) => i[0]), inputs.map((i) => i[1]), inputs.map((i) => i[2]), inputs.map((i) => i[3])],
    );
    expect(rows).toHaveLength(inputs.length);
    inputs.forEach(([a, r, p, w], n) => {
      const ts = payinSettlement(a!, r!, p!, w!);
      const db = rows[n]!;
      const got = { gross: db.gross, net: db.net, fee: db.fee, reward: db.reward, revenue: db.revenue };
      const want = { gross: ts.gross, net: ts.net, fee: ts.fee, reward: ts.reward, revenue: ts.revenue };
      for (const key of Object.keys(want) as (keyof typeof want)[]) {
        expect(new Decimal(got[key]).toFixed(6), `${key} of ${a} / ${r}, payin_rate ${p}, payin_reward ${w}`).toBe(want[key].toFixed(6));
      }
    });
  });

  it('refuses what payinSettlement refuses', async () => {
    for (const [a, r, p, w] of [
      ['0', '95.5', '2', '1'],
      ['100', '0', '2', '1'],
      ['100', '95.5', '100', '1'],
      ['100', '95.5', '2', '100'],
      ['100', '95.5', '-0.0001', '1'],
      ['100', '95.5', '2', 'NaN'],
    ]) {
      expect(() => payinSettlement(a!, r!, p!, w!)).toThrow(RangeError);
      await expect(sql('SELECT * FROM payin_settlement($1, $2, $3, $4)', [a, r, p, w])).rejects.toThrow(/payin_settlement/);
    }
  });
});

describe('the SQL itself refuses to break the ledger', () => {
  it('an unbalanced transaction cannot commit', async () => {
    const [account] = await sql<{ id: string }>(`SELECT id FROM ledger_accounts WHERE kind = 'system_adjustments'`);
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo) VALUES ('adjustment', 'unbalanced') RETURNING id`);
      await client.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, 1)', [rows[0]!.id, account!.id]);
      await expect(client.query('COMMIT')).rejects.toThrow(/unbalanced by 1/);
    } finally {
      client.release();
    }
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a posting of several entries in one INSERT: refused at COMMIT unless it balances, also beside a balanced one in the same INSERT', async () => {
    const [adjustments, incoming, revenue] = await ledgerAccounts();
    // Balanced, three entries: committed, nothing left to check.
    const balanced = await inTransaction(async (tx) => {
      const id = await newLedgerTransaction(tx, 'three entries');
      await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, -10), ($1, $3, 9.5), ($1, $4, 0.5)', [
        id,
        incoming,
        adjustments,
        revenue,
      ]);
      return id;
    });
    expect(balanced.error).toBeUndefined();
    expect(await sql('SELECT 1 FROM ledger_entries WHERE transaction_id = $1', [balanced.value])).toHaveLength(3);
    // Unbalanced, three entries in one INSERT.
    const unbalanced = await inTransaction(async (tx) => {
      const id = await newLedgerTransaction(tx, 'three entries, unbalanced');
      await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, -10), ($1, $3, 9.5), ($1, $4, 0.25)', [
        id,
        incoming,
        adjustments,
        revenue,
      ]);
      return id;
    });
    expect(unbalanced.error).toMatchObject({ code: '23514', constraint: 'ledger_transaction_balanced' });
    expect(unbalanced.error?.message).toBe(`ledger transaction ${unbalanced.value} is unbalanced by -0.250000`);
    // Two postings in one INSERT (as post() writes a batch), the second unbalanced: the whole refused.
    const two = await inTransaction(async (tx) => {
      const first = await newLedgerTransaction(tx, 'batch, balanced');
      const second = await newLedgerTransaction(tx, 'batch, unbalanced');
      await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $3, -2), ($1, $4, 2), ($2, $3, -2), ($2, $4, 1)', [
        first,
        second,
        incoming,
        adjustments,
      ]);
      return [first, second];
    });
    expect(two.error?.message).toBe(`ledger transaction ${two.value![1]} is unbalanced by -1.000000`);
    expect(await sql('SELECT 1 FROM ledger_transactions WHERE id = ANY($1::uuid[])', [two.value])).toHaveLength(0);
    expect(await sql('SELECT 1 FROM ledger_postings_to_check')).toHaveLength(0);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a posting written across statements of one transaction: committed when the whole balances, refused when it does not', async () => {
    const [adjustments, incoming, revenue] = await ledgerAccounts();
    const legs = async (tx: Tx, id: string, amounts: number[]) => {
      const accounts = [incoming, adjustments, revenue];
      for (const [i, amount] of amounts.entries()) {
        await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, $3)', [id, accounts[i % 3], amount]);
      }
    };
    // Each statement unbalanced, the whole balanced: committed, as before.
    const across = await inTransaction(async (tx) => {
      const id = await newLedgerTransaction(tx, 'across statements');
      await legs(tx, id, [-7, 4, 3]);
      return id;
    });
    expect(across.error).toBeUndefined();
    expect(await sql('SELECT 1 FROM ledger_entries WHERE transaction_id = $1', [across.value])).toHaveLength(3);
    // Each statement unbalanced, the whole too.
    const short = await inTransaction(async (tx) => {
      const id = await newLedgerTransaction(tx, 'across statements, unbalanced');
      await legs(tx, id, [-7, 4, 2]);
      return id;
    });
    expect(short.error?.message).toBe(`ledger transaction ${short.value} is unbalanced by -1.000000`);
    // A first INSERT that balances, a second that adds one leg: refused (the second statement's part is checked at COMMIT).
    const added = await inTransaction(async (tx) => {
      const id = await newLedgerTransaction(tx, 'balanced, then one more leg');
      await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, -5), ($1, $3, 5)', [id, incoming, adjustments]);
      await legs(tx, id, [0.01]);
      return id;
    });
    expect(added.error?.message).toBe(`ledger transaction ${added.value} is unbalanced by 0.010000`);
    // Two parts each unbalanced, written by one INSERT through two data-modifying CTEs: balanced together, committed.
    const ctes = await inTransaction(async (tx) => {
      const id = await newLedgerTransaction(tx, 'two CTEs');
      await tx.query(
        `WITH a AS (INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, -3) RETURNING id)
         INSERT INTO ledger_entries (transaction_id, account_id, amount) SELECT $1, $3, 3 FROM a`,
        [id, incoming, adjustments],
      );
      return id;
    });
    expect(ctes.error).toBeUndefined();
    // SET CONSTRAINTS … IMMEDIATE halfway: what is written so far is checked there and then, and
    // each statement after it at its end, as the old per-entry check did.
    let immediate = '';
    const halfway = await inTransaction(async (tx) => {
      immediate = await newLedgerTransaction(tx, 'immediate halfway');
      await legs(tx, immediate, [-4]);
      await tx.query('SET CONSTRAINTS ledger_entries_balanced IMMEDIATE');
    });
    expect(halfway.error?.message).toBe(`ledger transaction ${immediate} is unbalanced by -4.000000`);
    let afterImmediate = '';
    const first = await inTransaction(async (tx) => {
      await tx.query('SET CONSTRAINTS ALL IMMEDIATE');
      afterImmediate = await newLedgerTransaction(tx, 'immediate first');
      await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, -5), ($1, $3, 5)', [
        afterImmediate,
        incoming,
        adjustments,
      ]);
      await legs(tx, afterImmediate, [2]);
    });
    expect(first.error?.message).toBe(`ledger transaction ${afterImmediate} is unbalanced by 2.000000`);
    for (const id of [short.value, added.value, immediate, afterImmediate]) {
      expect(await sql('SELECT 1 FROM ledger_transactions WHERE id = $1', [id])).toHaveLength(0);
    }
    expect(await sql('SELECT 1 FROM ledger_postings_to_check')).toHaveLength(0);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('race: two transactions each writing one leg of the same ledger transaction are both refused', async () => {
    const [adjustments, incoming] = await ledgerAccounts();
    const { rows } = await service.ctx.db.query<{ id: string }>(
      `INSERT INTO ledger_transactions (kind, memo) VALUES ('adjustment', 'two halves') RETURNING id`,
    );
    const id = rows[0]!.id;
    const halves = [
      [incoming, -6],
      [adjustments, 6],
    ] as const;
    const results = await Promise.all(
      halves.map(([account, amount]) =>
        inTransaction(async (tx) => {
          await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, $3)', [id, account, amount]);
          await tx.query('SELECT pg_sleep(0.05)');
        }),
      ),
    );
    expect(results.map((r) => r.error?.message)).toEqual([
      `ledger transaction ${id} is unbalanced by -6.000000`,
      `ledger transaction ${id} is unbalanced by 6.000000`,
    ]);
    expect(await sql('SELECT 1 FROM ledger_entries WHERE transaction_id = $1', [id])).toHaveLength(0);
    await sql('DELETE FROM ledger_transactions WHERE id = $1', [id]);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('entries cannot be changed or deleted', async () => {
    await expect(sql('UPDATE ledger_entries SET amount = amount * 2')).rejects.toThrow(/append-only/);
    await expect(sql('DELETE FROM ledger_entries')).rejects.toThrow(/append-only/);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a terminal balance cannot go negative', async () => {
    await expect(
      sql(`UPDATE ledger_accounts SET balance = -0.000001 WHERE terminal_id = $1 AND kind = 'terminal_frozen'`, [merchant.terminalId]),
    ).rejects.toThrow(/ledger_accounts_terminal_nonnegative/);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it("an executor's available balance cannot go below its floor, nor its frozen balance below zero", async () => {
    await expect(
      sql(`UPDATE ledger_accounts SET balance = min_balance - 0.000001 WHERE executor_id = $1 AND kind = 'executor_available'`, [executor.id]),
    ).rejects.toMatchObject({ code: '23514', constraint: 'ledger_accounts_executor_floor' });
    await expect(
      sql(`UPDATE ledger_accounts SET balance = -0.000001 WHERE executor_id = $1 AND kind = 'executor_frozen'`, [executor.id]),
    ).rejects.toMatchObject({ code: '23514', constraint: 'ledger_accounts_executor_floor' });
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it("an account's kind, owner and floor keep their rules (migration 026: checked when they are set)", async () => {
    const refused = (text: string, params: unknown[], constraint: string) => expect(sql(text, params)).rejects.toMatchObject({ code: '23514', constraint });
    await refused(`INSERT INTO ledger_accounts (kind) VALUES ('system_petty_cash')`, [], 'ledger_accounts_kind_check');
    await refused(`INSERT INTO ledger_accounts (kind, executor_id) VALUES ('terminal_available', $1)`, [executor.id], 'ledger_accounts_terminal_owner');
    await refused(`INSERT INTO ledger_accounts (kind, merchant_id) VALUES ('executor_frozen', $1)`, [merchant.merchantId], 'ledger_accounts_executor_owner');
    await refused(
      `UPDATE ledger_accounts SET kind = 'system_incoming' WHERE executor_id = $1 AND kind = 'executor_frozen'`,
      [executor.id],
      'ledger_accounts_executor_owner',
    );
    await refused(
      `UPDATE ledger_accounts SET min_balance = -1 WHERE executor_id = $1 AND kind = 'executor_frozen'`,
      [executor.id],
      'ledger_accounts_min_balance',
    );
    await refused(
      `UPDATE ledger_accounts SET min_balance = 1 WHERE executor_id = $1 AND kind = 'executor_available'`,
      [executor.id],
      'ledger_accounts_min_balance',
    );
    await refused(
      `UPDATE ledger_accounts SET executor_id = NULL WHERE executor_id = $1 AND kind = 'executor_frozen'`,
      [executor.id],
      'ledger_accounts_executor_owner',
    );
    expect(await check()).toEqual({ ok: true, problems: [] });
  });
});

describe('credits applied at COMMIT (migration 012)', () => {
  /** Posts `entries` with creditsAtCommit in a transaction; `between` runs after the posting, before COMMIT. */
  async function postAtCommit(entries: Posting['entries'], between: (tx: Tx) => Promise<void> = async () => undefined) {
    return transaction(service.ctx.db, async (tx) => {
      await post(tx, { kind: 'adjustment', refId: null, merchantId: merchant.merchantId, memo: 'at commit', entries, creditsAtCommit: true });
      await between(tx);
    });
  }

  it('a credit reaches the balance at COMMIT, not before', async () => {
    const before = new Decimal(await available(merchant.terminalId));
    const seen: string[] = [];
    await postAtCommit(
      [
        { account: { kind: 'system_adjustments' }, amount: new Decimal('-1.5') },
        { account: { terminalId: merchant.terminalId, kind: 'terminal_available' }, amount: new Decimal('1.5') },
      ],
      async (tx) => {
        const { rows } = await tx.query<{ balance: string }>(
          `SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`,
          [merchant.terminalId],
        );
        seen.push(rows[0]!.balance);
      },
    );
    expect(new Decimal(seen[0]!).eq(before)).toBe(true);
    expect(new Decimal(await available(merchant.terminalId)).eq(before.plus('1.5'))).toBe(true);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a debit of a posting with credits at COMMIT is applied at once, its credit at COMMIT', async () => {
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 5, reason: 'funds to move' });
    const before = new Decimal(await available(merchant.terminalId));
    const frozenBefore = await sql<{ balance: string }>(`SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_frozen'`, [
      merchant.terminalId,
    ]);
    // available −2 (now, so an overdraft would be refused here), frozen +2 (at COMMIT)
    await postAtCommit(
      [
        { account: { terminalId: merchant.terminalId, kind: 'terminal_available' }, amount: new Decimal(-2) },
        { account: { terminalId: merchant.terminalId, kind: 'terminal_frozen' }, amount: new Decimal(2) },
      ],
      async (tx) => {
        const { rows } = await tx.query<{ balance: string }>(
          `SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`,
          [merchant.terminalId],
        );
        expect(new Decimal(rows[0]!.balance).eq(before.minus(2))).toBe(true);
      },
    );
    const frozen = await sql<{ balance: string }>(`SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_frozen'`, [
      merchant.terminalId,
    ]);
    expect(new Decimal(frozen[0]!.balance).minus(frozenBefore[0]!.balance).toFixed()).toBe('2');
    // put it back so that frozen funds match the open holds again
    await postAtCommit([
      { account: { terminalId: merchant.terminalId, kind: 'terminal_frozen' }, amount: new Decimal(-2) },
      { account: { terminalId: merchant.terminalId, kind: 'terminal_available' }, amount: new Decimal(2) },
    ]);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('an overdraft in a posting with credits at commit is still refused at once', async () => {
    const balance = new Decimal(await available(merchant.terminalId));
    await expect(
      postAtCommit([
        { account: { terminalId: merchant.terminalId, kind: 'terminal_available' }, amount: balance.plus(1).negated() },
        { account: { kind: 'system_adjustments' }, amount: balance.plus(1) },
      ]),
    ).rejects.toThrow(/ledger_accounts_terminal_nonnegative/);
    expect(new Decimal(await available(merchant.terminalId)).eq(balance)).toBe(true);
  });

  it('race: completions crediting at COMMIT and debits on one terminal at once lose no update and never overdraw', async () => {
    const shop = await createMerchant(service.app, { payin_rate: 2.5 });
    await adminOk(service.app, 'POST', `/terminals/${shop.terminalId}/adjustments`, { amount: 2, reason: 'opening' });
    const payments: { id: string; requisiteId: string; amount: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const amount = 1000 + i * 11;
      const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId('race'), amount, currency: 'RUB', method: 'CARD' });
      expect(status, JSON.stringify(body)).toBe(200);
      const [row] = await sql<{ requisite_id: string }>('SELECT requisite_id FROM payments WHERE id = $1', [body.id]);
      payments.push({ id: body.id, requisiteId: row!.requisite_id, amount });
    }
    // Twelve credits of ~10 USDT and twenty debits of 5 USDT, interleaved.
    const work = [
      ...payments.map((p) => async () => ({ kind: 'credit' as const, res: await notify(p.requisiteId, p.amount) })),
      ...Array.from({ length: 20 }, () => async () => {
        const res = await admin(service.app, 'POST', `/terminals/${shop.terminalId}/adjustments`, { amount: -5, reason: 'race debit' });
        return { kind: 'debit' as const, res: { status: res.statusCode, body: res.json() as Record<string, any> } };
      }),
    ];
    // Shuffled, deterministically.
    const order = work.map((_, i) => i).sort((x, y) => ((x * 31) % 17) - ((y * 31) % 17));
    const results = await Promise.all(order.map((i) => work[i]!()));

    const credits = results.filter((r) => r.kind === 'credit');
    expect(credits.every((r) => r.res.status === 200 && r.res.body.matched === true)).toBe(true);
    const debits = results.filter((r) => r.kind === 'debit');
    const accepted = debits.filter((r) => r.res.status === 201);
    // A debit is refused only for want of funds (it may have come before the credits).
    for (const refused of debits.filter((r) => r.res.status !== 201)) {
      expect(refused.res).toMatchObject({ status: 400, body: { error: 'VALIDATION', message: expect.stringMatching(/negative/) } });
    }
    const credited = payments.reduce((sum, p) => sum.plus(creditForPayin(String(p.amount), '95.5', '2.5').net), new Decimal(0));
    const final = new Decimal(await available(shop.terminalId));
    expect(final.toFixed(6)).toBe(
      new Decimal(2)
        .plus(credited)
        .minus(5 * accepted.length)
        .toFixed(6),
    );
    expect(final.gte(0)).toBe(true);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('SQL refuses a debit marked for COMMIT, and a mark on an account that keeps no balance', async () => {
    const [adjustments] = await sql<{ id: string }>(`SELECT id FROM ledger_accounts WHERE kind = 'system_adjustments'`);
    const [terminal] = await sql<{ id: string }>(`SELECT id FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`, [
      merchant.terminalId,
    ]);
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo) VALUES ('adjustment', 'debit at commit') RETURNING id`);
      await expect(
        client.query('INSERT INTO ledger_entries (transaction_id, account_id, amount, applied_at_commit) VALUES ($1, $2, -1, true)', [
          rows[0]!.id,
          terminal!.id,
        ]),
      ).rejects.toThrow(/ledger_entries_commit_credit/);
      await client.query('ROLLBACK');

      await client.query('BEGIN');
      const second = await client.query<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo) VALUES ('adjustment', 'system at commit') RETURNING id`);
      await client.query(`INSERT INTO ledger_entries (transaction_id, account_id, amount, applied_at_commit) VALUES ($1, $2, 1, true), ($1, $3, -1, false)`, [
        second.rows[0]!.id,
        adjustments!.id,
        terminal!.id,
      ]);
      await expect(client.query('COMMIT')).rejects.toThrow(/keeps no balance/);
    } finally {
      client.release();
    }
    expect(await check()).toEqual({ ok: true, problems: [] });
  });
});

describe('a corrupted ledger: the check names what breaks, the repair restores it', () => {
  it('an unbalanced transaction and an empty one', async () => {
    const { unbalanced, empty } = await writeUnbalancedAndEmpty();

    const result = await check();
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual(
      expect.arrayContaining([
        { invariant: 'transaction balanced', detail: `ledger transaction ${unbalanced} (adjustment) sums to 1.500000` },
        { invariant: 'transaction has entries', detail: `ledger transaction ${empty} (adjustment) has no entries` },
        { invariant: 'ledger sums to zero', detail: 'all entries sum to 1.500000' },
      ]),
    );
    expect(result.problems).toHaveLength(3);

    await withoutLedgerTriggers(async (tx) => {
      await tx.query('DELETE FROM ledger_entries WHERE transaction_id = $1', [unbalanced]);
      await tx.query('DELETE FROM ledger_transactions WHERE id = ANY($1::uuid[])', [[unbalanced, empty]]);
    });
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a terminal balance that drifted from its entries (the CHECK still satisfied)', async () => {
    const before = await available(merchant.terminalId);
    await sql(`UPDATE ledger_accounts SET balance = balance + 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);

    expect(await check()).toEqual({
      ok: false,
      problems: [
        {
          invariant: 'balance equals entries',
          detail: `terminal ${merchant.terminalId} terminal_available balance is ${new Decimal(before).plus(1).toFixed(6)} but its entries sum to ${before}`,
        },
      ],
    });

    await sql(`UPDATE ledger_accounts SET balance = balance - 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a negative terminal balance (seen inside a transaction with the CHECK dropped, then rolled back)', async () => {
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      await client.query('ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_terminal_nonnegative');
      // A balanced posting that overdraws the frozen account, so the only thing wrong is the sign.
      const [frozen] = (
        await client.query<{ id: string }>(`SELECT id FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_frozen'`, [merchant.terminalId])
      ).rows;
      const [adjustments] = (await client.query<{ id: string }>(`SELECT id FROM ledger_accounts WHERE kind = 'system_adjustments'`)).rows;
      const { rows } = await client.query<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo) VALUES ('adjustment', 'overdraft') RETURNING id`);
      await client.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, -5), ($1, $3, 5)', [
        rows[0]!.id,
        frozen!.id,
        adjustments!.id,
      ]);
      await client.query('UPDATE ledger_accounts SET balance = balance - 5 WHERE id = $1', [frozen!.id]);
      expect(await checkLedger(client)).toEqual({
        ok: false,
        problems: [
          { invariant: 'balance not negative', detail: `terminal ${merchant.terminalId} terminal_frozen is -5.000000` },
          // Frozen funds with no open payout or withdrawal behind them are a breach of their own.
          { invariant: 'frozen equals open holds', detail: `terminal ${merchant.terminalId} has -5.000000 frozen but its open payouts and withdrawals hold 0` },
        ],
      });
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a COMPLETED payment whose pay-in credit was deleted', async () => {
    const paymentId = completed[0]!.id;
    const [txRow] = await sql<{ id: string; kind: string; ref_id: string; merchant_id: string; memo: string | null; created_at: Date }>(
      `SELECT id, kind, ref_id, merchant_id, memo, created_at FROM ledger_transactions WHERE kind = 'payin' AND ref_id = $1`,
      [paymentId],
    );
    const entries = await sql<{ id: string; account_id: string; amount: string; created_at: Date }>(
      'SELECT id, account_id, amount::text, created_at FROM ledger_entries WHERE transaction_id = $1',
      [txRow!.id],
    );
    expect(entries).toHaveLength(3);
    const balance = await available(merchant.terminalId);
    const net = creditForPayin(completed[0]!.amount, '95.5', '2.5').net;
    await withoutLedgerTriggers(async (tx) => {
      await tx.query('DELETE FROM ledger_entries WHERE transaction_id = $1', [txRow!.id]);
      await tx.query('DELETE FROM ledger_transactions WHERE id = $1', [txRow!.id]);
    });

    const result = await check();
    expect(result.ok).toBe(false);
    // The credit is gone from the history but not from the kept balance; the payment stands uncredited.
    expect(result.problems).toEqual(
      expect.arrayContaining([
        {
          invariant: 'balance equals entries',
          detail: `terminal ${merchant.terminalId} terminal_available balance is ${balance} but its entries sum to ${new Decimal(balance).minus(net).toFixed(6)}`,
        },
        { invariant: 'completed payments credited once', detail: `payment ${paymentId} is COMPLETED with 0 pay-in credit(s)` },
        // The settlement of the executor's hold went with it.
        { invariant: 'balance equals entries', detail: expect.stringMatching(new RegExp(`^executor ${executor.id} executor_frozen balance is `)) },
      ]),
    );
    expect(result.problems).toHaveLength(3);

    // Put the very same rows back (inserting balanced entries needs no trigger switched off).
    await putPostingBack(txRow!, entries);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('a payment set COMPLETED in SQL without a credit, and a credited payment that is no longer completed', async () => {
    const { body: pending } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 3333, currency: 'RUB', method: 'CARD' });
    expect(pending.status).toBe('PENDING');
    await sql(`UPDATE payments SET status = 'COMPLETED' WHERE id = $1`, [pending.id]);
    const credited = completed[1]!.id;
    await sql(`UPDATE payments SET status = 'DISPUTE' WHERE id = $1`, [credited]);

    const result = await check();
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual(
      expect.arrayContaining([
        { invariant: 'completed payments credited once', detail: `payment ${pending.id} is COMPLETED with 0 pay-in credit(s)` },
        { invariant: 'completed payments credited once', detail: `payment ${credited} is DISPUTE with 1 pay-in credit(s)` },
        // Its hold is still frozen on the executor, but no open payment holds it any more.
        {
          invariant: 'executor frozen equals open holds',
          detail: expect.stringMatching(new RegExp(`^executor ${executor.id} has \\d+\\.\\d{6} frozen but its open payments and withdrawals hold 0$`)),
        },
      ]),
    );
    expect(result.problems).toHaveLength(3);

    await sql(`UPDATE payments SET status = 'PENDING' WHERE id = $1`, [pending.id]);
    await sql(`UPDATE payments SET status = 'COMPLETED' WHERE id = $1`, [credited]);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('several breaches at once are all named', async () => {
    const paymentId = completed[1]!.id;
    await sql(`UPDATE ledger_accounts SET balance = balance + 0.000001 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    await sql(`UPDATE payments SET status = 'CANCELLED' WHERE id = $1`, [paymentId]);
    const result = await check();
    expect(result.problems.map((p) => p.invariant).sort()).toEqual(['balance equals entries', 'completed payments credited once']);
    expect(result.problems.map((p) => p.detail).join('\n')).toContain(merchant.terminalId);
    expect(result.problems.map((p) => p.detail).join('\n')).toContain(paymentId);

    await sql(`UPDATE ledger_accounts SET balance = balance - 0.000001 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    await sql(`UPDATE payments SET status = 'COMPLETED' WHERE id = $1`, [paymentId]);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });
});

describe('lock order', () => {
  it('a posting locks its accounts in one fixed order (available before frozen) whatever its plan: under a hash join, heap order is not that order', async () => {
    const db = service.ctx.db;
    const terminal = await createTerminal(service.app, merchant.merchantId, { name: 'Lock order' });
    await adminOk(service.app, 'POST', `/terminals/${terminal.id}/adjustments`, { amount: 100, reason: 'float' });
    const { rows } = await db.query<{ id: string }>('SELECT id FROM ledger_accounts WHERE terminal_id = $1 ORDER BY kind', [terminal.id]);
    // `low` is locked first (terminal_available), `high` second (terminal_frozen).
    const [low, high] = [rows[0]!.id, rows[1]!.id];
    // A new version of the first account lands after the second one in the heap: a scan meets `high` first.
    await db.query('UPDATE ledger_accounts SET balance = balance WHERE id = $1', [low]);

    const holder = await db.connect();
    const poster = await db.connect();
    const probe = await db.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM ledger_accounts WHERE id = $1 FOR NO KEY UPDATE', [high]);
      await poster.query('SET enable_nestloop = off');
      await poster.query('SET enable_mergejoin = off');
      await poster.query('BEGIN');
      const pid = (await poster.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const posting = post(poster, {
        kind: 'lock_order_test',
        refId: null,
        merchantId: merchant.merchantId,
        memo: null,
        entries: [
          { account: { terminalId: terminal.id, kind: 'terminal_available' }, amount: new Decimal(-1) },
          { account: { terminalId: terminal.id, kind: 'terminal_frozen' }, amount: new Decimal(1) },
        ],
      });
      await until(
        async () => {
          const { rows: waiting } = await probe.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [pid]);
          return waiting.length > 0 || undefined;
        },
        10_000,
        20,
        'the posting waiting for the held account',
      );
      // Waiting for `high`, the posting must already hold `low`: taken the other way round, a
      // posting that held `high` and wanted `low` would deadlock with this one.
      const taken = await probe.query('SELECT 1 FROM ledger_accounts WHERE id = $1 FOR NO KEY UPDATE NOWAIT', [low]).then(
        () => 'free',
        (err: { code?: string }) => err.code,
      );
      expect(taken).toBe('55P03');
      await holder.query('ROLLBACK');
      await posting;
      await poster.query('ROLLBACK');
    } finally {
      for (const client of [holder, poster, probe]) client.release(true);
    }
  });
});

describe('the balance check with 30 months of partitions (issue 38, migration 059)', () => {
  it('refuses an unbalanced posting and commits a balanced one in every month, written through the table or naming the month', async () => {
    await ensureMonthsAhead(service.ctx.db, new Date(), 30);
    const entries = (await partitionedTables(service.ctx.db)).find((t) => t.table === 'ledger_entries')!;
    expect(entries.partitions.length).toBeGreaterThanOrEqual(30);
    const [adjustments, incoming] = await ledgerAccounts();
    for (const [i, partition] of entries.partitions.entries()) {
      // A moment inside the month: a day after its start (the history partition: a day before its end).
      const at = partition.from ? new Date(partition.from.getTime() + 86_400_000) : new Date(partition.to!.getTime() - 86_400_000);
      // Named directly: the history partition (its trigger from migration 059) and every other month (theirs from ensureMonthsAhead).
      const table = i % 2 === 1 ? 'ledger_entries' : partition.name;
      const unbalanced = await inTransaction(async (tx) => {
        const id = await newLedgerTransaction(tx, `unbalanced in ${partition.name}`);
        await tx.query(`INSERT INTO ${table} (transaction_id, account_id, amount, created_at) VALUES ($1, $2, -3, $4), ($1, $3, 2.5, $4)`, [
          id,
          incoming,
          adjustments,
          at,
        ]);
        return id;
      });
      expect(unbalanced.error?.message, `${table} at ${at.toISOString()}`).toBe(`ledger transaction ${unbalanced.value} is unbalanced by -0.500000`);
      const across = await inTransaction(async (tx) => {
        const id = await newLedgerTransaction(tx, `across statements in ${partition.name}`);
        await tx.query(`INSERT INTO ${table} (transaction_id, account_id, amount, created_at) VALUES ($1, $2, -3, $3)`, [id, incoming, at]);
        await tx.query(`INSERT INTO ${table} (transaction_id, account_id, amount, created_at) VALUES ($1, $2, 2, $3)`, [id, adjustments, at]);
        return id;
      });
      expect(across.error?.message, `${table} at ${at.toISOString()}`).toBe(`ledger transaction ${across.value} is unbalanced by -1.000000`);
      const balanced = await inTransaction(async (tx) => {
        const id = await newLedgerTransaction(tx, `balanced in ${partition.name}`);
        await tx.query(`INSERT INTO ${table} (transaction_id, account_id, amount, created_at) VALUES ($1, $2, -3, $4), ($1, $3, 3, $4)`, [
          id,
          incoming,
          adjustments,
          at,
        ]);
        return id;
      });
      expect(balanced.error, `${table} at ${at.toISOString()}`).toBeUndefined();
      const landed = await sql<{ part: string }>('SELECT tableoid::regclass::text AS part FROM ledger_entries WHERE transaction_id = $1', [balanced.value]);
      expect(landed.map((r) => r.part)).toEqual([partition.name, partition.name]);
    }
    expect(await sql('SELECT 1 FROM ledger_postings_to_check')).toHaveLength(0);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('gives a month that lacks the statement check (one the previous release created) its copy at the next look', async () => {
    await ensureMonthsAhead(service.ctx.db, new Date(), 30);
    const entries = (await partitionedTables(service.ctx.db)).find((t) => t.table === 'ledger_entries')!;
    const months = entries.partitions.filter((p) => p.from !== null).slice(-2);
    const triggersOn = async (name: string) =>
      (await sql<{ tgname: string }>('SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal AND tgtype & 1 = 0', [name])).map(
        (r) => r.tgname,
      );
    for (const month of months) await service.ctx.db.query(`DROP TRIGGER ledger_entries_balanced_statement ON ${month.name}`);
    expect(await triggersOn(months[0]!.name)).toEqual([]);
    expect(await ensureMonthsAhead(service.ctx.db, new Date(), 30)).toEqual([]);
    for (const month of months) expect(await triggersOn(month.name)).toEqual(['ledger_entries_balanced_statement']);
  });
});

describe('the hourly check since its watermark (issue 38, migration 065)', () => {
  /** Today at hourUtc:41 UTC: the job's run of that hour (the whole check at 03:41). */
  const at = (hourUtc: number) => {
    const day = new Date();
    day.setUTCHours(hourUtc, 41, 0, 0);
    return day;
  };
  let mark: LedgerWatermark;

  /** The problems the check since the watermark finds, beside the whole check's. */
  async function bothChecks() {
    return { since: await checkLedger(service.ctx.db, { since: mark.upto }), whole: await checkLedger(service.ctx.db) };
  }

  /**
   * Rows of each table the check reads: pg_stat_xact_user_tables' rows read by index or sequential
   * scan, in a transaction of the check's own, less what the view showed before it (a backend's
   * counts of earlier transactions not yet flushed show there too).
   */
  async function rowsRead(options: { since?: Date }): Promise<Record<string, number>> {
    const read = `SELECT CASE WHEN relname LIKE 'ledger_entries%' THEN 'ledger_entries' ELSE relname END AS table,
                         sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::int AS n
                    FROM pg_stat_xact_user_tables
                   WHERE relname LIKE 'ledger_%' OR relname IN ('payments', 'executor_deposits', 'withdrawals', 'disputes', 'payouts') GROUP BY 1`;
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      // The plans of a big table (as at 10^7 rows, docs/performance.md): on this file's small tables
      // the planner would read a few pages whole rather than use an index.
      await client.query('SET LOCAL enable_seqscan = off');
      const before = new Map((await client.query<{ table: string; n: number }>(read)).rows.map((r) => [r.table, r.n]));
      await checkLedger(client, options);
      const { rows } = await client.query<{ table: string; n: number }>(read);
      await client.query('COMMIT');
      return Object.fromEntries(rows.map((r) => [r.table, r.n - (before.get(r.table) ?? 0)]));
    } finally {
      client.release();
    }
  }

  /** A check's outcome with its problems in one order. */
  const sorted = (result: { ok: boolean; problems: { invariant: string; detail: string }[] }) => ({
    ok: result.ok,
    problems: [...result.problems].sort((a, b) => `${a.invariant} ${a.detail}`.localeCompare(`${b.invariant} ${b.detail}`)),
  });

  beforeAll(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The daily run (03:41 UTC): the whole check, and the watermark and totals from every entry.
    const daily = await checkLedgerByJob(service.ctx.db, at(3));
    expect(daily).toEqual({ ok: true, problems: [] });
    mark = (await readWatermark(service.ctx.db))!;
    // The payments completed at the start of this file are before it: old rows.
    const [first] = await sql<{ created_at: Date }>('SELECT created_at FROM payments WHERE id = $1', [completed[0]!.id]);
    expect(mark.upto.getTime()).toBeGreaterThan(first!.created_at.getTime());
  });

  it('finds nothing on a clean ledger, and the watermark moves on with each hourly run', async () => {
    completed.push({ id: await completePaymentFlow(merchant, 1234), amount: '1234' });
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 10, reason: 'since the watermark' });
    expect(await bothChecks()).toEqual({ since: { ok: true, problems: [] }, whole: { ok: true, problems: [] } });

    const hourly = await checkLedgerByJob(service.ctx.db, at(10));
    expect(hourly).toEqual({ ok: true, problems: [], since: mark.upto });
    const moved = (await readWatermark(service.ctx.db))!;
    expect(moved.upto.getTime()).toBeGreaterThan(mark.upto.getTime());
    expect(moved.wholeAt).toEqual(mark.wholeAt);
    // The totals kept are every account's entries before the new watermark.
    const differ = await sql(
      `SELECT a.id FROM ledger_accounts a LEFT JOIN ledger_check_totals k ON k.account_id = a.id
        LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries WHERE created_at < $1 GROUP BY account_id) s ON s.account_id = a.id
       WHERE coalesce(k.total, 0) <> coalesce(s.total, 0)`,
      [moved.upto],
    );
    expect(differ).toEqual([]);
    expect(await checkLedgerByJob(service.ctx.db, at(11))).toEqual({ ok: true, problems: [], since: moved.upto });
    mark = (await readWatermark(service.ctx.db))!;
    const [{ kept }] = (await sql<{ kept: string }>(`SELECT value::jsonb->>'since' AS kept FROM settings WHERE key = 'ledger_check_last'`)) as [
      { kept: string },
    ];
    expect(kept).toBe(moved.upto.toISOString());
  });

  it('finds an unbalanced and an empty transaction written since, as the whole check does', async () => {
    const { unbalanced, empty } = await writeUnbalancedAndEmpty();
    const { since, whole } = await bothChecks();
    expect(since).toEqual(whole);
    expect(since.problems).toEqual([
      { invariant: 'transaction balanced', detail: `ledger transaction ${unbalanced} (adjustment) sums to 1.500000` },
      { invariant: 'transaction has entries', detail: `ledger transaction ${empty} (adjustment) has no entries` },
      { invariant: 'ledger sums to zero', detail: 'all entries sum to 1.500000' },
    ]);
    await withoutLedgerTriggers(async (tx) => {
      await tx.query('DELETE FROM ledger_entries WHERE transaction_id = $1', [unbalanced]);
      await tx.query('DELETE FROM ledger_transactions WHERE id = ANY($1::uuid[])', [[unbalanced, empty]]);
    });
    expect(await bothChecks()).toEqual({ since: { ok: true, problems: [] }, whole: { ok: true, problems: [] } });
  });

  it('finds a balance changed by plain SQL, a payment completed without its credit, a hand-out without its hold and a deposit without its credit', async () => {
    // A balance moved without entries.
    await sql(`UPDATE ledger_accounts SET balance = balance + 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    // A payment created since, set COMPLETED with no pay-in.
    const { body: fresh } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 2222, currency: 'RUB', method: 'CARD' });
    await sql(`UPDATE payments SET status = 'COMPLETED' WHERE id = $1`, [fresh.id]);
    // A payment handed out since whose hold posting is gone (the executor's balances then differ from their entries too).
    const { body: held } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1111, currency: 'RUB', method: 'CARD' });
    const [hold] = await sql<{ id: string; kind: string; ref_id: string; merchant_id: string; created_at: Date }>(
      `SELECT id, kind, ref_id, merchant_id, created_at FROM ledger_transactions WHERE kind = 'payin_hold' AND ref_id = $1`,
      [held.id],
    );
    const holdEntries = await sql<{ id: string; account_id: string; amount: string; created_at: Date }>(
      'SELECT id, account_id, amount::text, created_at FROM ledger_entries WHERE transaction_id = $1',
      [hold!.id],
    );
    await withoutLedgerTriggers(async (tx) => {
      await tx.query('DELETE FROM ledger_entries WHERE transaction_id = $1', [hold!.id]);
      await tx.query('DELETE FROM ledger_transactions WHERE id = $1', [hold!.id]);
    });
    // A transfer to the executor's deposit address recorded without its credit.
    const txHash = 'ab'.repeat(32);
    await sql(
      `INSERT INTO executor_deposits (executor_id, address, tx_hash, log_index, from_address, amount, block_number, block_time)
       VALUES ($1, 'TAddress', $2, 0, 'TFrom', 9, 1, now())`,
      [executor.id, txHash],
    );

    const { since, whole } = await bothChecks();
    expect(sorted(since)).toEqual(sorted(whole));
    expect(since.problems.map((p) => p.invariant).sort()).toEqual([
      'balance equals entries',
      'balance equals entries',
      'balance equals entries',
      'completed payments credited once',
      'deposits credited once',
      // The payment set COMPLETED is no longer open, but its hold is still frozen.
      'executor frozen equals open holds',
      'hand-out holds the deposit',
    ]);
    expect(since.problems).toEqual(
      expect.arrayContaining([
        { invariant: 'completed payments credited once', detail: `payment ${fresh.id} is COMPLETED with 0 pay-in credit(s)` },
        { invariant: 'hand-out holds the deposit', detail: `payment ${held.id} was handed to an executor without a hold posting` },
        { invariant: 'deposits credited once', detail: expect.stringContaining(`(transaction ${txHash}) has 0 matching`) },
        { invariant: 'balance equals entries', detail: expect.stringMatching(new RegExp(`^terminal ${merchant.terminalId} terminal_available balance is `)) },
      ]),
    );

    // Repaired: the rows put back, the payment and the balance as they were, the deposit gone.
    await putPostingBack(hold!, holdEntries);
    await sql('DELETE FROM executor_deposits WHERE tx_hash = $1', [txHash]);
    await sql(`UPDATE payments SET status = 'PENDING' WHERE id = $1`, [fresh.id]);
    await sql(`UPDATE ledger_accounts SET balance = balance - 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    expect(await bothChecks()).toEqual({ since: { ok: true, problems: [] }, whole: { ok: true, problems: [] } });
  });

  it('a problem in a row before the watermark: found by the whole check (on demand, daily), then reported by the hourly runs until a whole check finds it gone', async () => {
    const old = new Date(mark.upto.getTime() - 86_400_000);
    // A credited payment set CANCELLED, an empty transaction and a deposit without its credit, all before the watermark.
    const oldPayment = completed[0]!.id;
    await sql(`UPDATE payments SET status = 'CANCELLED' WHERE id = $1`, [oldPayment]);
    const oldEmpty = (
      await sql<{ id: string }>(`INSERT INTO ledger_transactions (kind, memo, created_at) VALUES ('adjustment', 'old and empty', $1) RETURNING id`, [old])
    )[0]!.id;
    const txHash = 'cd'.repeat(32);
    const [deposit] = await sql<{ id: string }>(
      `INSERT INTO executor_deposits (executor_id, address, tx_hash, log_index, from_address, amount, block_number, block_time, created_at)
       VALUES ($1, 'TAddress', $2, 0, 'TFrom', 9, 1, $3, $3) RETURNING id`,
      [executor.id, txHash, old],
    );
    const problems = [
      { invariant: 'transaction has entries', detail: `ledger transaction ${oldEmpty} (adjustment) has no entries` },
      { invariant: 'deposits credited once', detail: `deposit ${deposit!.id} (transaction ${txHash}) has 0 matching executor_deposit credit(s)` },
      { invariant: 'completed payments credited once', detail: `payment ${oldPayment} is CANCELLED with 1 pay-in credit(s)` },
    ];
    // The check since the watermark reads neither row.
    expect(await checkLedger(service.ctx.db, { since: mark.upto })).toEqual({ ok: true, problems: [] });
    // The operator's check (and `kassir ledger check`) reads the whole ledger.
    expect(await check()).toEqual({ ok: false, problems });
    // The hourly run reports the whole check's problems on.
    expect(await checkLedgerByJob(service.ctx.db, at(12))).toEqual({ ok: false, problems, since: mark.upto });
    const [record] = await sql<{ value: string }>(`SELECT value FROM settings WHERE key = 'ledger_check_last'`);
    expect(JSON.parse(record!.value)).toMatchObject({ ok: false, problems: 3 });
    mark = (await readWatermark(service.ctx.db))!;
    // The daily run finds them itself.
    expect(await checkLedgerByJob(service.ctx.db, at(3))).toEqual({ ok: false, problems });

    await sql('DELETE FROM ledger_transactions WHERE id = $1', [oldEmpty]);
    await sql('DELETE FROM executor_deposits WHERE id = $1', [deposit!.id]);
    await sql(`UPDATE payments SET status = 'COMPLETED' WHERE id = $1`, [oldPayment]);
    // Repaired, but until a whole check has seen it so the hourly runs still report what the last one found.
    expect((await checkLedgerByJob(service.ctx.db, at(13))).problems).toEqual(problems);
    expect(await check()).toEqual({ ok: true, problems: [] });
    expect(await checkLedgerByJob(service.ctx.db, at(14))).toMatchObject({ ok: true, problems: [] });
    mark = (await readWatermark(service.ctx.db))!;
  });

  it('reads no more rows with more history before the watermark (the whole check reads them all)', async () => {
    // Something written since the watermark, for the check to read.
    completed.push({ id: await completePaymentFlow(merchant, 1717), amount: '1717' });
    await sql('ANALYZE');
    const before = { since: await rowsRead({ since: mark.upto }), whole: await rowsRead({}) };
    // 2000 balanced postings of two entries, and 2000 payments, all a day before the watermark.
    const [adjustments, incoming] = await ledgerAccounts();
    const old = new Date(mark.upto.getTime() - 86_400_000);
    await sql(
      `WITH t AS (INSERT INTO ledger_transactions (kind, memo, created_at) SELECT 'adjustment', 'history', $3 FROM generate_series(1, 2000) RETURNING id)
       INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at)
       SELECT id, x.account_id, x.amount, $3 FROM t CROSS JOIN (VALUES ($1::uuid, -1), ($2::uuid, 1)) AS x(account_id, amount)`,
      [adjustments, incoming, old],
    );
    await sql(
      `INSERT INTO payments SELECT (jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
         'id', uuid_v7(), 'ext_id', 'history-' || g, 'page_token', md5(random()::text || g), 'status', 'CANCELLED', 'hold', NULL,
         'created_at', $2::timestamptz))).*
         FROM payments p CROSS JOIN generate_series(1, 2000) g WHERE p.id = $1`,
      [completed[0]!.id, old],
    );
    // And 2000 transfers to a deposit address, ended withdrawals and closed disputes (migration 067:
    // the check since read these tables whole).
    await sql(
      `INSERT INTO executor_deposits (executor_id, address, tx_hash, log_index, from_address, amount, block_number, block_time, created_at)
       SELECT $1, 'TAddress', md5('h' || g) || md5('t' || g), 0, 'TFrom', 9, g, $2, $2 FROM generate_series(1, 2000) g`,
      [executor.id, old],
    );
    await sql(
      `INSERT INTO withdrawals (merchant_id, terminal_id, amount, fee, subtract_fee_from_amount, send_amount, reserve, address, status, adapter, created_at)
       SELECT $1, $2, 5, 1, false, 5, 6, 'TAddress', 'completed', 'manual', $3 FROM generate_series(1, 2000) g`,
      [merchant.merchantId, merchant.terminalId, old],
    );
    await sql(`INSERT INTO disputes (payment_id, merchant_id, amount, status, created_at) SELECT $1, $2, 10, 'rejected', $3 FROM generate_series(1, 2000) g`, [
      completed[0]!.id,
      merchant.merchantId,
      old,
    ]);
    await sql('ANALYZE');
    const after = { since: await rowsRead({ since: mark.upto }), whole: await rowsRead({}) };
    // What the check since the watermark reads stays what it was, give or take a plan's row (the
    // tables' statistics moved), against the 2000 payments and 6000 ledger rows added.
    expect(before.since.ledger_entries).toBeGreaterThan(0);
    for (const [table, n] of Object.entries(after.since)) expect(n, table).toBeLessThanOrEqual((before.since[table] ?? 0) + 5);
    expect(after.whole.ledger_entries! - before.whole.ledger_entries!).toBeGreaterThanOrEqual(4000);
    expect(after.whole.payments! - before.whole.payments!).toBeGreaterThanOrEqual(2000);
    expect(after.whole.executor_deposits! - (before.whole.executor_deposits ?? 0)).toBeGreaterThanOrEqual(2000);
    // The old deposits were never credited: taken away again, with the rest.
    await sql('DELETE FROM executor_deposits WHERE created_at = $1', [old]);
    await sql('DELETE FROM withdrawals WHERE created_at = $1', [old]);
    await sql('DELETE FROM disputes WHERE created_at = $1', [old]);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });
});

describe('the whole check in pieces (issue 38, h15)', () => {
  const day = 86_400_000;
  /** Today at hourUtc:41 UTC: the job's run of that hour (the whole check at 03:41). */
  const at = (hourUtc: number) => {
    const d = new Date();
    d.setUTCHours(hourUtc, 41, 0, 0);
    return d;
  };
  const sorted = (result: { ok: boolean; problems: { invariant: string; detail: string }[] }) => ({
    ok: result.ok,
    problems: [...result.problems].sort((a, b) => `${a.invariant} ${a.detail}`.localeCompare(`${b.invariant} ${b.detail}`)),
  });
  const small = { entries: 50, transactions: 50, payments: 50, deposits: 50 };

  /** Every account's sum of the entries created before `until`, as one statement sums them (accounts with entries only). */
  async function sumsBefore(until: Date): Promise<Record<string, string>> {
    const rows = await sql<{ account_id: string; total: string }>(
      `SELECT account_id, coalesce(sum(amount) FILTER (WHERE created_at < $1), 0)::numeric(38, 6)::text AS total FROM ledger_entries GROUP BY account_id`,
      [until],
    );
    return Object.fromEntries(rows.map((r) => [r.account_id, r.total]));
  }

  /** The entries' sums before the watermark against the totals kept. */
  async function totalsOffTheWatermark() {
    return sql(
      `SELECT a.id FROM ledger_accounts a LEFT JOIN ledger_check_totals k ON k.account_id = a.id
        LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries
                    WHERE created_at < (SELECT upto FROM ledger_check_watermark) GROUP BY account_id) s ON s.account_id = a.id
       WHERE coalesce(k.total, 0) <> coalesce(s.total, 0)`,
    );
  }

  beforeAll(async () => {
    // The history the test above wrote shares one instant, and a piece of creation times holds at
    // least one instant's rows (2000 here, all in one piece): taken away (balanced postings and
    // bare payments), and history spread over time written instead.
    await withoutLedgerTriggers(async (tx) => {
      await tx.query(`DELETE FROM ledger_entries WHERE transaction_id IN (SELECT id FROM ledger_transactions WHERE memo = 'history')`);
      await tx.query(`DELETE FROM ledger_transactions WHERE memo = 'history'`);
    });
    await sql(`DELETE FROM payments WHERE ext_id LIKE 'history-%'`);
    // History over the last 100 days: 1500 balanced postings and 1500 ended payments, so that every
    // table the check reads holds many pieces.
    const [adjustments, incoming] = await ledgerAccounts();
    await sql(
      `WITH t AS (INSERT INTO ledger_transactions (kind, memo, created_at)
                  SELECT 'adjustment', 'pieces history', now() - g * interval '96 minutes' FROM generate_series(1, 1500) g RETURNING id, created_at)
       INSERT INTO ledger_entries (transaction_id, account_id, amount, created_at)
       SELECT id, x.account_id, x.amount, created_at FROM t CROSS JOIN (VALUES ($1::uuid, -2), ($2::uuid, 2)) AS x(account_id, amount)`,
      [adjustments, incoming],
    );
    await sql(
      `INSERT INTO payments SELECT (jsonb_populate_record(NULL::payments, to_jsonb(p) || jsonb_build_object(
         'id', uuid_v7(), 'ext_id', 'pieces-' || g, 'page_token', md5(random()::text || g), 'status', 'CANCELLED', 'hold', NULL,
         'created_at', now() - g * interval '96 minutes'))).*
         FROM payments p CROSS JOIN generate_series(1, 1500) g WHERE p.id = $1`,
      [completed[0]?.id ?? (await completePaymentFlow(merchant, 1250))],
    );
    await sql('ANALYZE');
  });

  it('finds what one pass finds, with the same texts and sums, whatever the size of its pieces: broken postings in an older month and in this one', async () => {
    const [adjustments] = await ledgerAccounts();
    const old = new Date(Date.now() - 40 * day);
    const before = await writeUnbalancedAndEmpty(old);
    const now = await writeUnbalancedAndEmpty();
    // An old balanced posting given an entry today: its entries in its own month still balance.
    const [stray] = await sql<{ id: string }>(
      `SELECT id FROM ledger_transactions WHERE memo = 'pieces history' AND created_at < now() - interval '60 days' ORDER BY created_at LIMIT 1`,
    );
    await withoutLedgerTriggers(async (tx) => {
      await tx.query('INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES ($1, $2, 0.25)', [stray!.id, adjustments]);
    });
    // An old payment set COMPLETED without a credit; a terminal balance moved without entries.
    const [oldPayment] = await sql<{ id: string }>(`SELECT id FROM payments WHERE ext_id = 'pieces-1100'`);
    await sql(`UPDATE payments SET status = 'COMPLETED' WHERE id = $1`, [oldPayment!.id]);
    await sql(`UPDATE ledger_accounts SET balance = balance + 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);

    const onePass = await checkLedger(service.ctx.db);
    expect(sorted(onePass).problems.map((p) => p.invariant)).toEqual([
      'balance equals entries',
      'completed payments credited once',
      'ledger sums to zero',
      'transaction balanced',
      'transaction balanced',
      'transaction balanced',
      'transaction has entries',
      'transaction has entries',
    ]);
    expect(onePass.problems).toEqual(
      expect.arrayContaining([
        { invariant: 'transaction balanced', detail: `ledger transaction ${before.unbalanced} (adjustment) sums to 1.500000` },
        { invariant: 'transaction balanced', detail: `ledger transaction ${now.unbalanced} (adjustment) sums to 1.500000` },
        { invariant: 'transaction balanced', detail: `ledger transaction ${stray!.id} (adjustment) sums to 0.250000` },
        { invariant: 'transaction has entries', detail: `ledger transaction ${before.empty} (adjustment) has no entries` },
        { invariant: 'transaction has entries', detail: `ledger transaction ${now.empty} (adjustment) has no entries` },
        { invariant: 'ledger sums to zero', detail: 'all entries sum to 3.250000' },
        { invariant: 'completed payments credited once', detail: `payment ${oldPayment!.id} is COMPLETED with 0 pay-in credit(s)` },
      ]),
    );
    for (const sizes of [small, { entries: 7, transactions: 3, payments: 11, deposits: 1 }, undefined]) {
      const pieces: LedgerPiece[] = [];
      const whole = await checkWholeLedger(service.ctx.db, { sizes, pause: false, onPiece: (piece) => void pieces.push(piece) });
      expect(sorted(whole), JSON.stringify(sizes)).toEqual(sorted(onePass));
      // The order of the problems is one pass's too (by invariant).
      expect(whole.problems.map((p) => p.invariant)).toEqual(onePass.problems.map((p) => p.invariant));
      const totals = Object.fromEntries(whole.totals.accounts.map((account, i) => [account, whole.totals.totals[i]]));
      expect(totals).toEqual(await sumsBefore(whole.until));
      expect(pieces).toEqual(whole.pieces);
      if (sizes) {
        // Every row before `until` read once, each piece at most its size — or one instant's rows.
        for (const table of ['ledger_transactions', 'payments'] as const) {
          const of = pieces.filter((p) => p.table === table);
          const [{ n }] = (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE created_at < $1`, [whole.until])) as [{ n: number }];
          expect(
            of.reduce((sum, p) => sum + p.rows, 0),
            table,
          ).toBe(n);
          const size = table === 'payments' ? sizes.payments : sizes.transactions;
          for (const piece of of.filter((p) => p.rows > size)) {
            const [{ instants }] = (await sql<{ instants: number }>(
              `SELECT count(DISTINCT created_at)::int AS instants FROM ${table} WHERE created_at >= $1 AND created_at < $2`,
              [piece.from, piece.to],
            )) as [{ instants: number }];
            expect(instants, JSON.stringify(piece)).toBe(1);
          }
        }
        const entries = pieces.filter((p) => p.table === 'ledger_entries');
        const [{ n }] = (await sql<{ n: number }>('SELECT count(*)::int AS n FROM ledger_entries')) as [{ n: number }];
        expect(entries.reduce((sum, p) => sum + p.rows, 0)).toBe(n);
        for (const piece of entries) expect(piece.rows).toBeLessThanOrEqual(sizes.entries);
        expect(entries.length).toBeGreaterThanOrEqual(n / sizes.entries);
      }
    }

    // Repaired, the pieces find nothing, as one pass.
    await withoutLedgerTriggers(async (tx) => {
      await tx.query(`DELETE FROM ledger_entries WHERE transaction_id = ANY($1::uuid[]) AND (transaction_id <> $2 OR amount = 0.25)`, [
        [before.unbalanced, now.unbalanced, stray!.id],
        stray!.id,
      ]);
      await tx.query('DELETE FROM ledger_transactions WHERE id = ANY($1::uuid[])', [[before.unbalanced, before.empty, now.unbalanced, now.empty]]);
    });
    await sql(`UPDATE payments SET status = 'CANCELLED' WHERE id = $1`, [oldPayment!.id]);
    await sql(`UPDATE ledger_accounts SET balance = balance - 1 WHERE terminal_id = $1 AND kind = 'terminal_available'`, [merchant.terminalId]);
    expect(await checkLedger(service.ctx.db)).toEqual({ ok: true, problems: [] });
    expect(await checkWholeLedger(service.ctx.db, { sizes: small, pause: false })).toMatchObject({ ok: true, problems: [] });
  });

  it('reads no statement more than a piece of history (one pass reads every entry in one)', async () => {
    /** Each statement's rows read per table (pg_stat_xact_user_tables, the partitions of ledger_entries together), in one transaction. */
    async function rowsPerStatement(run: (db: Queryable) => Promise<unknown>): Promise<Array<{ text: string; read: Record<string, number> }>> {
      const read = `SELECT CASE WHEN relname LIKE 'ledger_entries%' THEN 'ledger_entries' ELSE relname END AS table,
                           sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::int AS n FROM pg_stat_xact_user_tables GROUP BY 1`;
      const client = await service.ctx.db.connect();
      const counts = async () => new Map((await client.query<{ table: string; n: number }>(read)).rows.map((r) => [r.table, r.n]));
      const statements: Array<{ text: string; read: Record<string, number> }> = [];
      const wrapped = new Proxy(client, {
        get(target, prop) {
          if (prop !== 'query') {
            const value = Reflect.get(target, prop);
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return async (text: string, params?: unknown[]) => {
            const before = await counts();
            const result = await target.query(text, params);
            const after = await counts();
            statements.push({
              text,
              read: Object.fromEntries([...after].map(([table, n]) => [table, n - (before.get(table) ?? 0)]).filter(([, n]) => n !== 0)),
            });
            return result;
          };
        },
      });
      try {
        await client.query('BEGIN');
        // The plans of big tables (as at 10^7 rows): on these small ones the planner would read a few pages whole.
        await client.query('SET LOCAL enable_seqscan = off');
        await run(wrapped as unknown as Queryable);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      return statements;
    }
    const most = (statements: Array<{ read: Record<string, number> }>, table: string) => Math.max(0, ...statements.map((s) => s.read[table] ?? 0));
    const [counts] = await sql<{ entries: number; transactions: number; payments: number }>(
      `SELECT (SELECT count(*) FROM ledger_entries)::int AS entries, (SELECT count(*) FROM ledger_transactions)::int AS transactions,
              (SELECT count(*) FROM payments)::int AS payments`,
    );
    expect(counts!.entries).toBeGreaterThan(3000);
    // As autovacuum leaves a table that only grows: the index-only reads of a piece's ends fetch no rows.
    await sql('VACUUM ANALYZE ledger_transactions, payments');

    const onePass = await rowsPerStatement((db) => checkLedger(db));
    expect(most(onePass, 'ledger_entries')).toBeGreaterThanOrEqual(counts!.entries);

    const sizes = { entries: 100, transactions: 100, payments: 100, deposits: 100 };
    const pieced = await rowsPerStatement((db) => checkWholeLedger(db, { sizes, pause: false }));
    for (const statement of pieced) {
      // A piece's rows, and its transactions' entries (two to four each); the present state beside them.
      expect(statement.read.ledger_entries ?? 0, statement.text).toBeLessThanOrEqual(4 * sizes.transactions + 50);
      expect(statement.read.ledger_transactions ?? 0, statement.text).toBeLessThanOrEqual(3 * sizes.payments + 50);
      expect(statement.read.payments ?? 0, statement.text).toBeLessThanOrEqual(sizes.payments + 50);
    }
    expect(most(pieced, 'ledger_entries')).toBeLessThan(counts!.entries / 4);
    expect(most(pieced, 'payments')).toBeLessThan(counts!.payments / 4);
  });

  it("the daily run's totals stay every entry before its watermark while postings are written between its pieces, and the hourly runs go on from them", async () => {
    let written = 0;
    const seen: LedgerPiece[] = [];
    const daily = await checkLedgerByJob(service.ctx.db, at(3), {
      sizes: small,
      onPiece: async (piece) => {
        seen.push(piece);
        // Between pieces (each in a transaction of its own): postings of every kind a desk writes.
        if (seen.length % 15 === 1 && written < 4) {
          written += 1;
          if (written % 2) completed.push({ id: await completePaymentFlow(merchant, 1300 + written), amount: String(1300 + written) });
          else await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 3, reason: 'between the pieces' });
        }
      },
    });
    expect(daily).toEqual({ ok: true, problems: [] });
    expect(written).toBe(4);
    const mark = (await readWatermark(service.ctx.db))!;
    expect(await totalsOffTheWatermark()).toEqual([]);
    const [{ latest }] = (await sql<{ latest: Date }>('SELECT max(created_at) AS latest FROM ledger_entries')) as [{ latest: Date }];
    // Entries were written after the watermark, while the pieces ran: the check since did them.
    expect(latest.getTime()).toBeGreaterThan(mark.upto.getTime());
    const [record] = await sql<{ value: string }>(`SELECT value FROM settings WHERE key = 'ledger_check_last'`);
    expect(JSON.parse(record!.value)).toMatchObject({ ok: true, problems: 0, pieces: seen.length });

    completed.push({ id: await completePaymentFlow(merchant, 1399), amount: '1399' });
    expect(await checkLedgerByJob(service.ctx.db, at(10))).toEqual({ ok: true, problems: [], since: mark.upto });
    expect(await totalsOffTheWatermark()).toEqual([]);
  });
});
