/**
 * The operator's dashboard, GET /admin/v1/dashboard: payments of the window per bucket, conversion
 * and time to complete (overall, per terminal, per executor), lost demand (creates refused with
 * PAY_004 and PAY_005, recorded as they happen: migration 029), the queues and the ledger's
 * balances — every figure checked exactly against what the test did through the API.
 *
 * Two terminals of two merchants; executor Ivan serves CARD on one card requisite, Petr SBP on one
 * phone, so that which executor takes which payment is known. SAME_AMOUNT_LIMIT is 1: a second
 * create of an amount still pending on the terminal is PAY_005.
 */
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from '../src/ledger/ledger.repo.js';
import { rollUpSystemTotals } from '../src/ledger/system-totals.js';
import type { Dashboard } from '../src/reports/dashboard.schemas.js';
import { buildDashboard } from '../src/reports/dashboard.service.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorTakesPayout,
  type MerchantCredentials,
  multipartBody,
  notifyTransfer,
  setRate,
  signed,
  signedMultipart,
  sqlOf,
  startTestService,
  type TestService,
  TINY_PNG,
  testPhone,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let shopA: MerchantCredentials;
let shopB: MerchantCredentials;
let ivan: { id: string; token: string };
let petr: { id: string; token: string };
let card: { id: string };
let phone: { id: string };
const names: Record<string, string> = {};

const sql = sqlOf(() => service);

async function dashboard(query = ''): Promise<Dashboard> {
  // Refusals are written in the background, after the answer: wait for those already made.
  await service.ctx.refusals.drain();
  return adminOk(service.app, 'GET', `/dashboard${query}`);
}

/** Creates a payment that must succeed; returns its id. */
async function paid(shop: MerchantCredentials, amount: number, method: 'CARD' | 'SBP'): Promise<string> {
  const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount, method });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.id;
}

/**
 * Completes a payment by its executor's notification, then dates its creation `seconds` before
 * its completion: the median time to complete is then known to the second (a real one would be
 * the few milliseconds between the test's two calls).
 */
async function complete(id: string, amount: number, executor: { token: string }, requisite: { id: string }, seconds: number): Promise<void> {
  expect(await notifyTransfer(service.app, executor.token, requisite.id, amount)).toMatchObject({ matched: true, payment_id: id });
  await sql(`UPDATE payments SET created_at = completed_at - make_interval(secs => $2) WHERE id = $1`, [id, seconds]);
}

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1', PAYMENT_TTL_SECONDS: '900' });
  await setRate(service.app, 'RUB', 95.5);
  shopA = await createMerchant(service.app, { name: 'Alpha' });
  shopB = await createMerchant(service.app, { name: 'Beta' });
  for (const shop of [shopA, shopB]) names[shop.merchantId] = (await adminOk<{ name: string }>(service.app, 'GET', `/merchants/${shop.merchantId}`)).name;
  ivan = await createExecutor(service.app, 'Ivan', { deposit: 1000 });
  petr = await createExecutor(service.app, 'Petr', { deposit: 1000 });
  card = await createRequisite(service.app, ivan.id);
  phone = await createRequisite(service.app, petr.id, { type: 'sbp', value: testPhone(), methods: ['SBP'] });

  // Alpha: three CARD payments (two completed, one left pending), one SBP completed, one CARD
  // cancelled and disputed. Beta: one CARD pending, one SBP completed.
  const a1000 = await paid(shopA, 1000, 'CARD');
  const a1100 = await paid(shopA, 1100, 'CARD');
  await paid(shopA, 1200, 'CARD');
  const a2000 = await paid(shopA, 2000, 'SBP');
  const a1400 = await paid(shopA, 1400, 'CARD');
  await paid(shopB, 1300, 'CARD');
  const b2100 = await paid(shopB, 2100, 'SBP');
  await complete(a1000, 1000, ivan, card, 30);
  await complete(a1100, 1100, ivan, card, 60);
  await complete(a2000, 2000, petr, phone, 90);
  await complete(b2100, 2100, petr, phone, 120);

  await adminOk(service.app, 'POST', `/payments/${a1400}/cancel`);
  const dispute = await signedMultipart(
    service.app,
    shopA,
    `/v1/payments/${a1400}/dispute`,
    multipartBody({ data: JSON.stringify({ comment: 'paid, not seen' }) }, { field: 'proof', content: TINY_PNG }),
  );
  expect(dispute.statusCode, dispute.body).toBe(200);
  // A transfer that matches no pending payment: kept for the operator.
  expect(await notifyTransfer(service.app, ivan.token, card.id, 999)).toMatchObject({ matched: false });

  // Money out from Alpha: two payouts (one taken by Ivan), one withdrawal (manual adapter: pending).
  await adminOk(service.app, 'POST', `/terminals/${shopA.terminalId}/adjustments`, { amount: 100, reason: 'test funds' });
  const payouts: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await signed(service.app, shopA, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 500,
      method: 'card',
      requisites: '4111 1111 1111 1111',
      holder_name: 'Ivan Petrov',
    });
    expect(res.statusCode, res.body).toBe(200);
    payouts.push(res.json().id);
  }
  expect((await executorTakesPayout(service.app, ivan.token, payouts[0]!)).statusCode).toBe(200);
  const withdrawal = await signed(service.app, shopA, 'POST', '/v1/withdrawals', {
    terminal_id: shopA.terminalId,
    amount: 5,
    address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  });
  expect(withdrawal.statusCode, withdrawal.body).toBe(200);
});
afterAll(async () => service?.close());

describe('lost demand is recorded as it happens', () => {
  it('PAY_004 and PAY_005 answer as before and are counted per code, method, bank and currency; other refusals are not', async () => {
    // PAY_004: no requisite of the asked-for bank; no requisite for SBP_QR at all (twice).
    const rncb = await createPayment(service.app, shopA, { ext_id: uniqueExtId(), amount: 600, bank: 'rncb' });
    expect(rncb.status).toBe(503);
    expect(rncb.body).toMatchObject({ error: 'PAY_004', data: { currency: 'RUB', method: 'CARD', bank: 'rncb' } });
    for (const amount of [700, 800]) {
      const qr = await createPayment(service.app, shopA, { ext_id: uniqueExtId(), amount, method: 'SBP_QR' });
      expect(qr.status).toBe(503);
      expect(qr.body.error).toBe('PAY_004');
    }
    // PAY_005: Beta's 1300 is still pending, and the limit is 1 (twice).
    for (let i = 0; i < 2; i++) {
      const same = await createPayment(service.app, shopB, { ext_id: uniqueExtId(), amount: 1300 });
      expect(same.status).toBe(429);
      expect(same.body).toMatchObject({ error: 'PAY_005', data: { amount: 1300, pending: 1 } });
    }
    // Not lost demand: a taken ext_id (PAY_003) and an invalid amount (PAY_002).
    const [first] = await sql<{ ext_id: string }>('SELECT ext_id FROM payments WHERE merchant_id = $1 ORDER BY created_at LIMIT 1', [shopA.merchantId]);
    expect((await createPayment(service.app, shopA, { ext_id: first!.ext_id, amount: 1234 })).status).toBe(409);
    expect((await createPayment(service.app, shopA, { ext_id: uniqueExtId(), amount: 5 })).status).toBe(400);

    const d = await dashboard();
    expect(d.lost_demand).toEqual({
      total: 5,
      rows: [
        { code: 'PAY_004', method: 'SBP_QR', bank: null, currency: 'RUB', risk_rule: null, count: 2, amount: '1500.00' },
        { code: 'PAY_005', method: 'CARD', bank: null, currency: 'RUB', risk_rule: null, count: 2, amount: '2600.00' },
        { code: 'PAY_004', method: 'CARD', bank: 'rncb', currency: 'RUB', risk_rule: null, count: 1, amount: '600.00' },
      ],
      by_rule: [{ rule: null, count: 5 }],
    });
    const rows = await sql<{ terminal_id: string; merchant_id: string; code: string }>('SELECT terminal_id, merchant_id, code FROM payment_refusals');
    expect(rows.filter((r) => r.terminal_id === shopB.terminalId && r.merchant_id === shopB.merchantId && r.code === 'PAY_005')).toHaveLength(2);
  });

  it('a refusal that cannot be recorded still gets its usual answer, at once', async () => {
    await sql('ALTER TABLE payment_refusals RENAME TO payment_refusals_away');
    try {
      const refused = await createPayment(service.app, shopA, { ext_id: uniqueExtId(), amount: 650, bank: 'rncb' });
      expect(refused.status).toBe(503);
      expect(refused.body.error).toBe('PAY_004');
      await service.ctx.refusals.drain();
    } finally {
      await sql('ALTER TABLE payment_refusals_away RENAME TO payment_refusals');
    }
    // Lost, and logged at warn; the ones before it are all there.
    expect((await dashboard()).lost_demand.total).toBe(5);
  });
});

describe('GET /admin/v1/dashboard', () => {
  it('counts the window’s payments, their conversion, median time and amounts: overall, per terminal, per executor', async () => {
    const d = await dashboard();
    expect(d.window).toBe('hour');
    expect(d.bucket_seconds).toBe(60);
    expect(new Date(d.to).getTime() - new Date(d.from).getTime()).toBe(3_600_000);
    expect(new Date(d.to).getTime() % 60_000).toBe(0);
    expect(new Date(d.to).getTime()).toBeGreaterThan(Date.now() - 60_000);

    // Created 7 (Alpha 5, Beta 2); completed 4 after 30, 60, 90 and 120 seconds.
    expect(d.totals).toEqual({
      created: 7,
      completed: 4,
      conversion: '0.5714',
      median_seconds_to_complete: 75,
      amount_completed: [{ currency: 'RUB', amount: '6200.00' }],
    });
    expect(d.by_terminal).toEqual([
      {
        terminal_id: shopA.terminalId,
        terminal_name: 'Alpha',
        merchant_id: shopA.merchantId,
        merchant_name: names[shopA.merchantId],
        created: 5,
        completed: 3,
        conversion: '0.6000',
        median_seconds_to_complete: 60,
        amount_completed: [{ currency: 'RUB', amount: '4100.00' }],
      },
      {
        terminal_id: shopB.terminalId,
        terminal_name: 'Beta',
        merchant_id: shopB.merchantId,
        merchant_name: names[shopB.merchantId],
        created: 2,
        completed: 1,
        conversion: '0.5000',
        median_seconds_to_complete: 120,
        amount_completed: [{ currency: 'RUB', amount: '2100.00' }],
      },
    ]);
    expect(d.by_executor).toEqual([
      {
        executor_id: ivan.id,
        executor_name: 'Ivan',
        created: 5,
        completed: 2,
        conversion: '0.4000',
        median_seconds_to_complete: 45,
        amount_completed: [{ currency: 'RUB', amount: '2100.00' }],
      },
      {
        executor_id: petr.id,
        executor_name: 'Petr',
        created: 2,
        completed: 2,
        conversion: '1.0000',
        median_seconds_to_complete: 105,
        amount_completed: [{ currency: 'RUB', amount: '4100.00' }],
      },
    ]);
  });

  it('the series: every minute of the hour, zeros included, each payment in the minute it was created', async () => {
    const d = await dashboard();
    expect(d.series).toHaveLength(60);
    expect(d.series[0]!.at).toBe(d.from);
    for (let i = 1; i < 60; i++) expect(new Date(d.series[i]!.at).getTime() - new Date(d.series[i - 1]!.at).getTime()).toBe(60_000);
    const expected = new Map<string, { created: number; completed: number }>();
    for (const p of await sql<{ created_at: Date; status: string }>('SELECT created_at, status FROM payments')) {
      const at = new Date(Math.floor(p.created_at.getTime() / 60_000) * 60_000).toISOString();
      const bucket = expected.get(at) ?? { created: 0, completed: 0 };
      bucket.created++;
      if (p.status === 'COMPLETED') bucket.completed++;
      expected.set(at, bucket);
    }
    for (const point of d.series) expect(point, point.at).toEqual({ at: point.at, ...(expected.get(point.at) ?? { created: 0, completed: 0 }) });
    expect(d.series.filter((p) => p.created === 0).length).toBeGreaterThanOrEqual(50);
  });

  it('the day: 96 quarter hours, the same totals', async () => {
    const d = await dashboard('?window=day');
    expect(d.window).toBe('day');
    expect(d.bucket_seconds).toBe(900);
    expect(d.series).toHaveLength(96);
    expect(new Date(d.to).getTime() - new Date(d.from).getTime()).toBe(86_400_000);
    expect(d.series.reduce((sum, p) => sum + p.created, 0)).toBe(7);
    expect(d.series.reduce((sum, p) => sum + p.completed, 0)).toBe(4);
    expect(d.totals).toEqual((await dashboard()).totals);
  });

  it('the queues: the open dispute, the unmatched notification, a payout of each kind, the withdrawal', async () => {
    expect((await dashboard()).queues).toEqual({
      disputes_open: 1,
      notifications_unmatched: 1,
      // No phone here; test/cabinet-stuck.test.ts counts phone messages waiting for people.
      device_messages_waiting: 0,
      payouts_pending: 1,
      payouts_processing: 1,
      withdrawals_pending: 1,
      withdrawals_processing: 0,
    });
  });

  it('the balances: the ledger’s, as the merchants, the executors and the revenue report read them', async () => {
    const d = await dashboard();
    const sum = async (reads: Array<Promise<{ balance: number; balance_frozen: number }>>) => {
      const all = await Promise.all(reads);
      return {
        available: all.reduce((acc, b) => acc.plus(String(b.balance)), new Decimal(0)),
        frozen: all.reduce((acc, b) => acc.plus(String(b.balance_frozen)), new Decimal(0)),
      };
    };
    const terminals = await sum([shopA, shopB].map(async (shop) => (await signed(service.app, shop, 'GET', '/v1/balance')).json()));
    const executors = await sum([ivan, petr].map((e) => adminOk(service.app, 'GET', `/executors/${e.id}`)));
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const report = await adminOk<{ totals: { revenue: number } }>(service.app, 'GET', `/reports/merchants?from=${day(-1)}&to=${day(0)}`);

    expect(d.balances.currency).toBe('USDT');
    expect(new Decimal(d.balances.terminals_available).eq(terminals.available)).toBe(true);
    expect(new Decimal(d.balances.terminals_frozen).eq(terminals.frozen)).toBe(true);
    expect(terminals.frozen.gt(0)).toBe(true);
    expect(new Decimal(d.balances.executors_available).eq(executors.available)).toBe(true);
    expect(new Decimal(d.balances.executors_frozen).eq(executors.frozen)).toBe(true);
    expect(executors.frozen.gt(0)).toBe(true);
    expect(Number(d.balances.platform_revenue)).toBe(report.totals.revenue);
    expect(Number(d.balances.platform_revenue)).toBeGreaterThan(0);
    for (const key of ['terminals_available', 'terminals_frozen', 'executors_available', 'executors_frozen', 'platform_revenue'] as const) {
      expect(d.balances[key]).toMatch(/^-?\d+\.\d{6}$/);
    }
  });

  it('the platform revenue from its rolled-up total and the entries since, the same as summed from every entry (migration 056)', async () => {
    const fromEntries = async () =>
      (
        await service.ctx.db.query<{ total: string }>(
          `SELECT coalesce(sum(e.amount), 0)::text AS total FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
            WHERE a.kind = 'system_fee_revenue' AND a.terminal_id IS NULL AND a.executor_id IS NULL`,
        )
      ).rows[0]!.total;
    const revenue = async () => (await dashboard()).balances.platform_revenue;
    const totals = async () =>
      (
        await service.ctx.db.query<{ upto: Date; total: string }>(
          `SELECT t.upto, t.total::text FROM ledger_account_totals t JOIN ledger_accounts a ON a.id = t.account_id WHERE a.kind = 'system_fee_revenue'`,
        )
      ).rows[0];
    const everything = await fromEntries();
    expect(Number(everything)).toBeGreaterThan(0);
    expect(await revenue()).toBe(everything);

    // The first roll-up sums the whole ledger; the balance reads the same after it.
    await rollUpSystemTotals(service.ctx.db);
    const first = await totals();
    expect(first).toBeDefined();
    expect(await revenue()).toBe(everything);

    // A posting in a transaction that began before a roll-up and commits after it: the roll-up
    // stops before that transaction's start, so its entry is counted once it commits, and once.
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      await post(client, {
        kind: 'test_revenue',
        refId: null,
        merchantId: null,
        memo: 'migration 056 test',
        entries: [
          { account: { kind: 'system_fee_revenue' }, amount: new Decimal('1.25') },
          { account: { kind: 'system_adjustments' }, amount: new Decimal('-1.25') },
        ],
      });
      const started = (await client.query<{ at: Date }>('SELECT now() AS at')).rows[0]!.at;
      const upto = await rollUpSystemTotals(service.ctx.db);
      expect(upto.getTime()).toBeLessThanOrEqual(started.getTime());
      expect(await revenue()).toBe(everything);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const after = await fromEntries();
    expect(new Decimal(after).minus(everything).toString()).toBe('1.25');
    expect(await revenue()).toBe(after);
    await rollUpSystemTotals(service.ctx.db);
    const last = await totals();
    expect(last!.upto.getTime()).toBeGreaterThan(first!.upto.getTime());
    expect(last!.total).toBe(after);
    expect(await revenue()).toBe(after);
  });

  it('an hour without payments: zeros, and null where there is nothing to divide', async () => {
    const later = await buildDashboard(service.ctx, 'hour', new Date(Date.now() + 3 * 3_600_000));
    expect(later.totals).toEqual({ created: 0, completed: 0, conversion: null, median_seconds_to_complete: null, amount_completed: [] });
    expect(later.by_terminal).toEqual([]);
    expect(later.by_executor).toEqual([]);
    expect(later.lost_demand).toEqual({ total: 0, rows: [], by_rule: [] });
    expect(later.series.every((p) => p.created === 0 && p.completed === 0)).toBe(true);
    // What waits and what is held do not depend on the window.
    expect(later.queues).toEqual((await dashboard()).queues);
  });

  it('refuses a window other than hour or day', async () => {
    const res = await admin(service.app, 'GET', '/dashboard?window=week');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringContaining('hour, day') });
  });
});
