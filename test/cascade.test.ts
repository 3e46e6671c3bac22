import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningService } from '../src/instance.js';
import { CASCADE_WINDOW } from '../src/payments/cascade/cascade.repo.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  type RequisiteInput,
  setRate,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

/**
 * The cascade of POST /v1/payments: which requisite a payment gets, and that the promises hold
 * when many creates race, also across two service instances on one database.
 */

let service: TestService;
let app: FastifyInstance;
/** Two more instances on the same database with a same-amount limit that never bites. */
let unlimitedA: RunningService;
let unlimitedB: RunningService;
/** A second instance with the main one's settings (SAME_AMOUNT_LIMIT 3). */
let limited: RunningService;

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '3', PAYMENT_TTL_SECONDS: '900' });
  app = service.app;
  unlimitedA = await service.startAnother({ SAME_AMOUNT_LIMIT: '1000' });
  unlimitedB = await service.startAnother({ SAME_AMOUNT_LIMIT: '1000' });
  limited = await service.startAnother();
  await setRate(app, 'RUB', 95.5);
  await setRate(app, 'KZT', 480);
});
afterAll(async () => service?.close());

// Every test builds its own pool of requisites: whatever earlier tests created must not be offered.
beforeEach(async () => {
  await service.ctx.db.query('UPDATE requisites SET is_active = false');
  await service.ctx.db.query('UPDATE executors SET is_active = false');
});

async function requisites(executorId: string, count: number, input: RequisiteInput = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await createRequisite(app, executorId, input)).id);
  return ids;
}

async function requisiteOf(paymentId: string): Promise<string> {
  const { rows } = await service.ctx.db.query<{ requisite_id: string }>('SELECT requisite_id FROM payments WHERE id = $1', [paymentId]);
  return rows[0]!.requisite_id;
}

async function pay(merchant: MerchantCredentials, amount: number, extra: Record<string, unknown> = {}, on: FastifyInstance = app) {
  return createPayment(on, merchant, { ext_id: uniqueExtId(), amount, method: 'CARD', ...extra });
}

/** Creates a payment that must succeed and returns the id of the requisite it got. */
async function payOk(merchant: MerchantCredentials, amount: number, extra: Record<string, unknown> = {}): Promise<{ id: string; requisiteId: string }> {
  const res = await pay(merchant, amount, extra);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { id: res.body.id as string, requisiteId: await requisiteOf(res.body.id as string) };
}

async function expectNoRequisites(merchant: MerchantCredentials, amount: number, extra: Record<string, unknown> = {}) {
  const res = await pay(merchant, amount, extra);
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(res.body.error).toBe('PAY_004');
}

/** (requisite, amount) pairs held by more than one PENDING payment: the cascade's promise is that there are none. */
async function duplicatePending(): Promise<unknown[]> {
  const { rows } = await service.ctx.db.query(
    `SELECT requisite_id, payer_amount, count(*) FROM payments WHERE status = 'PENDING' GROUP BY 1, 2 HAVING count(*) > 1`,
  );
  return rows;
}

function tally(results: { status: number; body: Record<string, any> }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status, body } of results) {
    const key = status === 200 ? '200' : `${status} ${body.error}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('cascade: which requisites fit', () => {
  it('takes only requisites whose methods include the payment method', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    await createRequisite(app, executor.id, { methods: ['CROSS_BORDER_CARD'] });
    await expectNoRequisites(merchant, 1000);
    const card = await createRequisite(app, executor.id, { methods: ['CARD', 'CROSS_BORDER_CARD'] });
    for (const amount of [1000, 1001, 1002]) expect((await payOk(merchant, amount)).requisiteId).toBe(card.id);
  });

  it('takes only requisites of a type that serves the method (METHOD_TYPES), even if the methods list says otherwise', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    // The operator API refuses a card serving SBP; a row edited behind its back must still not be used for SBP.
    const card = await createRequisite(app, executor.id, { type: 'card', methods: ['CARD'] });
    await service.ctx.db.query(`UPDATE requisites SET methods = '{CARD,SBP}' WHERE id = $1`, [card.id]);
    await expectNoRequisites(merchant, 1000, { method: 'SBP' });
    const sbp = await createRequisite(app, executor.id, { type: 'sbp', methods: ['SBP'] });
    const res = await pay(merchant, 1000, { method: 'SBP' });
    expect(res.status).toBe(200);
    expect(res.body.requisites).toMatchObject({ type: 'sbp', value: sbp.value });
    expect((await payOk(merchant, 1000)).requisiteId).toBe(card.id);
  });

  it('takes only requisites in the order currency', async () => {
    const merchant = await createMerchant(app, { currency: 'KZT' });
    const executor = await createExecutor(app);
    await createRequisite(app, executor.id, { currency: 'RUB', country: 'RU' });
    // In Kazakhstan but (edited behind the operator API's back) in rubles: the currency must match too.
    const rubles = await createRequisite(app, executor.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi' });
    await service.ctx.db.query(`UPDATE requisites SET currency = 'RUB' WHERE id = $1`, [rubles.id]);
    await expectNoRequisites(merchant, 5000, { currency: 'KZT' });
    const kzt = await createRequisite(app, executor.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi' });
    for (const amount of [5000, 5001]) expect((await payOk(merchant, amount, { currency: 'KZT' })).requisiteId).toBe(kzt.id);
  });

  it('takes only requisites in the requested country (cross-border)', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const kz = await createRequisite(app, executor.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi', methods: ['CROSS_BORDER_CARD'] });
    await createRequisite(app, executor.id, { currency: 'RUB', country: 'RU', methods: ['CROSS_BORDER_CARD'] });
    // Tenge but (edited behind the operator API's back) in Russia: the country must match too.
    const elsewhere = await createRequisite(app, executor.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi', methods: ['CROSS_BORDER_CARD'] });
    await service.ctx.db.query(`UPDATE requisites SET country = 'RU' WHERE id = $1`, [elsewhere.id]);
    for (const amount of [1000, 1001]) {
      const res = await pay(merchant, amount, { method: 'CROSS_BORDER_CARD', country: 'KZ' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.requisites).toMatchObject({ value: kz.value, country: 'KZ', currency: 'KZT' });
    }
    // Nothing in Tajikistan; a ruble order is not rerouted (rule 5 is for non-ruble orders).
    await setRate(app, 'TJS', 11);
    await expectNoRequisites(merchant, 1000, { method: 'CROSS_BORDER_CARD', country: 'TJ' });
  });

  it('with bank=tinkoff takes only tinkoff requisites, and answers PAY_004 when there are none', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    await requisites(executor.id, 2, { bank: 'sberbank' });
    await expectNoRequisites(merchant, 1000, { bank: 'tinkoff' });
    const tinkoff = await createRequisite(app, executor.id, { bank: 'tinkoff' });
    // Least recently used would be a sberbank requisite (never used); the filter must win.
    for (const amount of [1000, 1001, 1002]) {
      const res = await pay(merchant, amount, { bank: 'tinkoff' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.requisites).toMatchObject({ value: tinkoff.value, bank: 'tinkoff' });
    }
    // The same amount again: tinkoff's only requisite already has it pending.
    await expectNoRequisites(merchant, 1000, { bank: 'tinkoff' });
    // Without the filter, the sberbank requisites are fine.
    expect((await pay(merchant, 1000)).body.requisites).toMatchObject({ bank: 'sberbank' });
  });

  it('respects the requisite min/max amount (inclusive)', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const mid = await createRequisite(app, executor.id, { min_amount: 1000, max_amount: 2000 });
    const high = await createRequisite(app, executor.id, { min_amount: 5000 });
    await expectNoRequisites(merchant, 999.99);
    await expectNoRequisites(merchant, 2000.01);
    await expectNoRequisites(merchant, 4999);
    expect((await payOk(merchant, 1000)).requisiteId).toBe(mid.id);
    expect((await payOk(merchant, 2000)).requisiteId).toBe(mid.id);
    expect((await payOk(merchant, 5000)).requisiteId).toBe(high.id);
    expect((await payOk(merchant, 300_000)).requisiteId).toBe(high.id);
  });

  it('skips requisites deactivated by the operator, and takes them again once reactivated', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const [a, b] = await requisites(executor.id, 2);
    await adminOk(app, 'PATCH', `/requisites/${a}`, { is_active: false });
    for (const amount of [1000, 1001, 1002]) expect((await payOk(merchant, amount)).requisiteId).toBe(b);
    await adminOk(app, 'PATCH', `/requisites/${b}`, { is_active: false });
    await expectNoRequisites(merchant, 1003);
    await adminOk(app, 'PATCH', `/requisites/${a}`, { is_active: true });
    expect((await payOk(merchant, 1003)).requisiteId).toBe(a);
  });

  it('skips requisites of a deactivated executor', async () => {
    const merchant = await createMerchant(app);
    const active = await createExecutor(app, 'Active');
    const retired = await createExecutor(app, 'Retired');
    const [kept] = await requisites(active.id, 1);
    await requisites(retired.id, 2);
    await adminOk(app, 'PATCH', `/executors/${retired.id}`, { is_active: false });
    for (const amount of [1000, 1001, 1002, 1003]) expect((await payOk(merchant, amount)).requisiteId).toBe(kept);
    await adminOk(app, 'PATCH', `/executors/${active.id}`, { is_active: false });
    await expectNoRequisites(merchant, 1004);
  });
});

describe('cascade: spreading and same-amount rules', () => {
  it('spreads load: least recently used first', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const pool = await requisites(executor.id, 3);
    const first = [await payOk(merchant, 1001), await payOk(merchant, 1002), await payOk(merchant, 1003)].map((p) => p.requisiteId);
    expect(new Set(first)).toEqual(new Set(pool));
    // From here the order is fixed: each next payment goes to the one used longest ago.
    expect((await payOk(merchant, 1004)).requisiteId).toBe(first[0]);
    expect((await payOk(merchant, 1005)).requisiteId).toBe(first[1]);
    expect((await payOk(merchant, 1006)).requisiteId).toBe(first[2]);
  });

  it('never gives one requisite two PENDING payments of the same amount; cancelling frees the amount', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const [only] = await requisites(executor.id, 1);
    const first = await payOk(merchant, 1500);
    expect(first.requisiteId).toBe(only);
    await expectNoRequisites(merchant, 1500);
    expect((await payOk(merchant, 1600)).requisiteId).toBe(only);
    // Another merchant's payment of that amount cannot use the requisite either.
    await expectNoRequisites(await createMerchant(app), 1500);

    const cancelled = await adminOk(app, 'POST', `/payments/${first.id}/cancel`);
    expect(cancelled).toMatchObject({ status: 'CANCELLED' });
    expect((await payOk(merchant, 1500)).requisiteId).toBe(only);
    await expectNoRequisites(merchant, 1500);
    expect(await duplicatePending()).toEqual([]);
  });

  it('answers 429 PAY_005 after SAME_AMOUNT_LIMIT pending payments of one amount on a terminal, even with free requisites', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    await requisites(executor.id, 6);
    const pending = [await payOk(merchant, 2500), await payOk(merchant, 2500), await payOk(merchant, 2500)];
    const res = await pay(merchant, 2500);
    expect(res.status, JSON.stringify(res.body)).toBe(429);
    expect(res.body.error).toBe('PAY_005');
    // The limit is per terminal and per amount.
    expect((await pay(merchant, 2501)).status).toBe(200);
    const other = await createTerminal(app, merchant.merchantId, { name: 'Second' });
    expect((await pay({ ...merchant, terminalId: other.id, apiKey: other.api_key }, 2500)).status).toBe(200);
    // A payment that is no longer PENDING no longer counts.
    await adminOk(app, 'POST', `/payments/${pending[0]!.id}/cancel`);
    expect((await pay(merchant, 2500)).status).toBe(200);
    expect((await pay(merchant, 2500)).status).toBe(429);
  });
});

describe('cascade: the LRU window', () => {
  it(`finds a fitting requisite behind more than CASCADE_WINDOW (${CASCADE_WINDOW}) least recently used ones that do not fit`, async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    // The one that fits 1000 is used once (for 950, which only it takes), so it is the most
    // recently used; the never-used ones, first in LRU order, all stop at 900.
    const fitting = await createRequisite(app, executor.id, { min_amount: 950 });
    expect((await payOk(merchant, 950)).requisiteId).toBe(fitting.id);
    const small = Array.from({ length: CASCADE_WINDOW + 5 }, () => createRequisite(app, executor.id, { max_amount: 900 }));
    await Promise.all(small);
    expect((await payOk(merchant, 1000)).requisiteId).toBe(fitting.id);
    // And the small ones are still taken, in LRU order, for what they fit.
    const { rows } = await service.ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM requisites WHERE executor_id = $1 AND max_amount = 900 AND last_used_at IS NULL`,
      [executor.id],
    );
    expect(rows[0]!.n).toBe(CASCADE_WINDOW + 5);
    const taken = await payOk(merchant, 800);
    expect(taken.requisiteId).not.toBe(fitting.id);
  });
});

describe('cascade under concurrency (two instances, one database)', () => {
  it.each([
    { terminals: 1, label: 'one terminal' },
    { terminals: 4, label: 'four terminals (creates not serialised by the terminal-amount lock)' },
  ])('RACE 1: 64 creates of one amount against 25 requisites, $label → 25 distinct requisites, the rest PAY_004', async ({ terminals }) => {
    const merchants: MerchantCredentials[] = [];
    for (let i = 0; i < terminals; i++) merchants.push(await createMerchant(app));
    const executor = await createExecutor(app);
    const pool = new Set(await requisites(executor.id, 25));
    const apps = [unlimitedA.app, unlimitedB.app];
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => pay(merchants[i % terminals]!, 3000, {}, apps[i % 2]!)));
    expect(tally(results)).toEqual({ '200': 25, '503 PAY_004': 39 });
    const got = await Promise.all(results.filter((r) => r.status === 200).map((r) => requisiteOf(r.body.id as string)));
    expect(new Set(got).size).toBe(25);
    for (const id of got) expect(pool.has(id)).toBe(true);
    expect(await duplicatePending()).toEqual([]);
  });

  it('RACE 2: 64 creates of different amounts against 3 requisites → all succeed, no (requisite, amount) twice', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    const pool = new Set(await requisites(executor.id, 3));
    const apps = [unlimitedA.app, unlimitedB.app];
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => pay(merchant, 4000 + i, {}, apps[i % 2]!)));
    expect(tally(results)).toEqual({ '200': 64 });
    const got = await Promise.all(results.map((r) => requisiteOf(r.body.id as string)));
    for (const id of got) expect(pool.has(id)).toBe(true);
    expect(await duplicatePending()).toEqual([]);
  });

  it('RACE 2b: two rounds of 30 creates reusing the same 30 amounts on 3 requisites → all 60 succeed, no duplicates', async () => {
    // Same amounts from two terminals (no shared terminal-amount lock), so creates really contend for (requisite, amount).
    const merchants = [await createMerchant(app), await createMerchant(app)];
    const executor = await createExecutor(app);
    await requisites(executor.id, 3);
    const apps = [unlimitedA.app, unlimitedB.app];
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => pay(merchants[i % 2]!, 7000 + (i % 30), {}, apps[Math.floor(i / 2) % 2]!)));
    expect(tally(results)).toEqual({ '200': 60 });
    expect(await duplicatePending()).toEqual([]);
  });

  it('RACE 3: 20 creates of one amount with SAME_AMOUNT_LIMIT 3 → exactly 3 succeed, 17 get 429 PAY_005', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    await requisites(executor.id, 10);
    const apps = [app, limited.app];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(merchant, 3500, {}, apps[i % 2]!)));
    expect(tally(results)).toEqual({ '200': 3, '429 PAY_005': 17 });
    const { rows } = await service.ctx.db.query(`SELECT count(*) AS n FROM payments WHERE terminal_id = $1 AND status = 'PENDING' AND amount = 3500`, [
      merchant.terminalId,
    ]);
    expect(rows[0].n).toBe(3);
  });

  it('RACE 4: 30 creates with one ext_id → exactly one 200, the rest 409 PAY_003 naming the ext_id', async () => {
    const merchant = await createMerchant(app);
    const executor = await createExecutor(app);
    await requisites(executor.id, 3);
    const extId = uniqueExtId('race');
    const apps = [unlimitedA.app, unlimitedB.app];
    // Half share an amount (serialised by the terminal-amount lock), half differ (only the unique constraint stops them).
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => createPayment(apps[i % 2]!, merchant, { ext_id: extId, amount: i % 2 === 0 ? 6000 : 6001 + i, method: 'CARD' })),
    );
    expect(tally(results)).toEqual({ '200': 1, '409 PAY_003': 29 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.data).toEqual({ ext_id: extId });
    const { rows } = await service.ctx.db.query('SELECT count(*) AS n FROM payments WHERE merchant_id = $1 AND ext_id = $2', [merchant.merchantId, extId]);
    expect(rows[0].n).toBe(1);
  });
});
