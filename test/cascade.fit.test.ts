/**
 * The rule "does this requisite fit a payment" is written twice: in payment_create_window
 * (src/db/functions/, the cascade's `window` mode) and in payments/cascade/cascade.repo.ts's statement (the
 * `all` and `wait` modes), with the executor's deposit covering the hold (migration 017), and its
 * pause, priority, score and the requisite's limits (migration 019). On the
 * same generated pools and requests, both must choose the same
 * requisite — or both none. Each choice is made in a transaction that is rolled back, so the two
 * walk exactly the same data.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payinHold } from '../src/ledger/credit.js';
import type { NewPayment } from '../src/payments/cascade/cascade.js';
import { CASCADE_WINDOW, type CascadeMode, insertPaymentWithCascade, insertWindowBatch } from '../src/payments/cascade/cascade.repo.js';
import { createMerchant, type MerchantCredentials, startTestService, type TestService, uniqueExtId } from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;
/** One connection: a transaction begun on it spans every query the cascade makes through it. */
let session: pg.Pool;

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000' });
  merchant = await createMerchant(service.app);
  session = new pg.Pool({ connectionString: service.databaseUrl, max: 1 });
});
afterAll(async () => {
  await session?.end();
  await service?.close();
});

const BANKS = ['sberbank', 'tinkoff', null] as const;
const AMOUNTS = ['100.00', '500.00', '1500.00', '2500.00', '10000.00'];

/** One requisite of the generated pool: every attribute the rule looks at, drawn from a few values so that ties and misses happen. */
const arbRequisite = fc.record({
  executor: fc.nat({ max: 2 }),
  active: fc.constantFrom(true, true, true, false),
  type: fc.constantFrom('card', 'card', 'card', 'sbp'),
  country: fc.constantFrom('RU', 'RU', 'RU', 'KZ'),
  methods: fc.constantFrom(['CARD'], ['CARD', 'SBP'], ['CARD', 'PHONE'], ['SBP'], ['PHONE']),
  bank: fc.constantFrom(...BANKS),
  min: fc.constantFrom('0', '100', '1000', '2000'),
  max: fc.constantFrom(null, '1000', '2500', '100000'),
  /** Minutes ago it was last used (null: never); equal values make ties broken by id. */
  usedMinutesAgo: fc.constantFrom(null, 1, 5, 5, 60),
  /** Payer amounts it has a PENDING payment of. */
  pending: fc.subarray(AMOUNTS, { maxLength: 2 }),
  /** Its own limits (migration 019); null: its executor's default. */
  limits: fc.record({
    dailyTurnover: fc.constantFrom(null, null, null, null, null, '3000', '12000'),
    monthlyTurnover: fc.constantFrom(null, null, null, null, null, '20000'),
    dailyCount: fc.constantFrom(null, null, null, null, null, 0, 2, 4),
    monthlyCount: fc.constantFrom(null, null, null, null, null, 6),
  }),
  /** What it has taken today and this month (requisite_usage). */
  usedToday: fc.constantFrom(null, null, { amount: '1000', count: 1 }, { amount: '9000', count: 3 }),
  usedThisMonth: fc.constantFrom(null, null, { amount: '10000', count: 5 }, { amount: '19000', count: 2 }),
});

/** An executor's defaults for requisites without limits of their own. */
const arbExecutorDefaults = fc.record({
  dailyTurnover: fc.constantFrom(null, null, null, null, '2000', '11000'),
  dailyCount: fc.constantFrom(null, null, null, null, 3),
  monthlyTurnover: fc.constantFrom(null, null, null, null, '25000'),
  monthlyCount: fc.constantFrom(null, null, null, null, 5),
});

const arbCase = fc.record({
  executorsActive: fc.tuple(fc.constantFrom(true, true, false), fc.constantFrom(true, false), fc.boolean()),
  /** Each executor's available balance: holds run from 1.05 (100 RUB) to 104.71 USDT (10000 RUB) at 95.5. */
  executorsFunded: fc.tuple(fc.constantFrom('1000', '1000', '20', '0'), fc.constantFrom('1000', '20', '0'), fc.constantFrom('1000', '5', '0')),
  /** Paused by the executor itself: skipped like an inactive one. */
  executorsPaused: fc.tuple(fc.constantFrom(false, false, false, true), fc.constantFrom(false, false, false, true), fc.constantFrom(false, false, false, true)),
  /** Priority (higher first) and score (then higher first), drawn so that ties happen. */
  executorsPriority: fc.tuple(fc.constantFrom(0, 0, 1, -1), fc.constantFrom(0, 1), fc.constantFrom(0, 0, 5)),
  executorsScore: fc.tuple(fc.constantFrom('0.5', '0.7', '0.0'), fc.constantFrom('0.5', '0.7'), fc.constantFrom('0.5', '1.0', '0.3')),
  executorsDefaults: fc.tuple(arbExecutorDefaults, arbExecutorDefaults, arbExecutorDefaults),
  pool: fc.array(arbRequisite, { minLength: 1, maxLength: 25 }),
  request: fc.record({
    type: fc.constantFrom('card', 'card', 'card', 'sbp'),
    country: fc.constantFrom('RU', 'RU', 'RU', 'KZ'),
    method: fc.constantFrom('CARD', 'CARD', 'SBP', 'PHONE'),
    bank: fc.constantFrom(null, null, 'sberbank', 'tinkoff'),
    payerAmount: fc.constantFrom(...AMOUNTS),
  }),
});

type Case = typeof arbCase extends fc.Arbitrary<infer T> ? T : never;

/**
 * Pools where every requisite serves the request but for its executor (active, paused, funded,
 * its defaults) and its own limits and activity: most cases then have several candidates, so
 * that the order (priority, score, least recently used, id) decides which one is chosen.
 */
const arbOrderCase = arbCase.map(
  (c): Case => ({
    ...c,
    pool: c.pool.map((r) => ({ ...r, type: 'card', country: 'RU', methods: ['CARD'], bank: null, min: '0', max: null, pending: [] })),
    request: { type: 'card', country: 'RU', method: 'CARD', bank: null, payerAmount: c.request.payerAmount },
  }),
);

/** The same ids in every lay-out of a pool, so that ties on last_used_at are broken alike (by id). */
const requisiteId = (index: number) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;

/** Lays out the case's pool (in the open transaction): nothing else is active. */
async function layOut(c: Case): Promise<void> {
  await session.query('UPDATE requisites SET is_active = false');
  await session.query('UPDATE executors SET is_active = false');
  const executors: string[] = [];
  for (const [index, active] of c.executorsActive.entries()) {
    const d = c.executorsDefaults[index]!;
    const { rows } = await session.query<{ id: string }>(
      `INSERT INTO executors (name, token_hash, is_active, is_paused, priority, score, default_daily_turnover_limit, default_monthly_turnover_limit,
                              default_daily_count_limit, default_monthly_count_limit)
       VALUES ('fit', decode(md5(random()::text), 'hex'), $1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [active, c.executorsPaused[index], c.executorsPriority[index], c.executorsScore[index], d.dailyTurnover, d.monthlyTurnover, d.dailyCount, d.monthlyCount],
    );
    executors.push(rows[0]!.id);
    // The balance alone, without the entries behind it: the transaction is rolled back.
    await session.query(`INSERT INTO ledger_accounts (kind, executor_id, balance) VALUES ('executor_available', $1, $2), ('executor_frozen', $1, 0)`, [
      rows[0]!.id,
      c.executorsFunded[index],
    ]);
  }
  for (const [index, r] of c.pool.entries()) {
    const { rows } = await session.query<{ id: string }>(
      `INSERT INTO requisites (id, executor_id, type, value, bank_code, currency, country, methods, min_amount, max_amount, is_active, last_used_at,
                              daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit)
       VALUES ($11, $1, $2, $3, $4, 'RUB', $5, $6, $7, $8, $9, now() - make_interval(mins => $10), $12, $13, $14, $15)
       RETURNING id`,
      [
        executors[r.executor],
        r.type,
        `fit-${index}`,
        r.bank,
        r.country,
        r.methods,
        r.min,
        r.max && String(Math.max(Number(r.max), Number(r.min))),
        r.active,
        r.usedMinutesAgo,
        requisiteId(index),
        r.limits.dailyTurnover,
        r.limits.monthlyTurnover,
        r.limits.dailyCount,
        r.limits.monthlyCount,
      ],
    );
    for (const [period, used] of [
      ['day', r.usedToday],
      ['month', r.usedThisMonth],
    ] as const) {
      if (!used) continue;
      await session.query(
        `INSERT INTO requisite_usage (requisite_id, period, starts, amount, count)
         VALUES ($1, $2, CASE WHEN $2 = 'day' THEN (now() AT TIME ZONE 'UTC')::date ELSE date_trunc('month', now() AT TIME ZONE 'UTC')::date END, $3, $4)`,
        [rows[0]!.id, period, used.amount, used.count],
      );
    }
    for (const amount of r.pending) {
      await session.query(
        `INSERT INTO payments (merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate, requisite_id,
                               req_type, req_value, req_holder, req_country, req_currency, payer_amount, cross_border, page_token, valid_until)
         VALUES ($1, $2, $3, $4, 'RUB', 'CARD', 'PENDING', 95.5, 0, $5, $6, 'x', '', $7, 'RUB', $4, false, $8, now() + interval '1 hour')`,
        [merchant.merchantId, merchant.terminalId, uniqueExtId(), amount, rows[0]!.id, r.type, r.country, uniqueExtId()],
      );
    }
  }
}

/**
 * The requisite (its value, `fit-<index>`) `mode` chooses for the request on the case's pool, or
 * null; nothing is kept. `batch` is the window as a batch of creates sends it (migration 034).
 */
async function choice(c: Case, mode: CascadeMode | 'batch'): Promise<string | null> {
  await session.query('BEGIN');
  try {
    await layOut(c);
    const payment: NewPayment = {
      merchantId: merchant.merchantId,
      terminalId: merchant.terminalId,
      terminalName: 'fit',
      extId: uniqueExtId(),
      amount: c.request.payerAmount,
      hold: payinHold(c.request.payerAmount, '95.5').toFixed(),
      currency: 'RUB',
      method: c.request.method,
      rate: '95.5',
      rateRefreshId: null,
      payinRate: '0',
      crossBorder: false,
      clientId: null,
      clientLimit: null,
      notifyUrl: null,
      notificationToken: null,
      pageToken: uniqueExtId(),
      ttlSeconds: 900,
      types: [c.request.type],
      bank: c.request.bank,
      candidates: [{ currency: 'RUB', country: c.request.country, payerAmount: c.request.payerAmount }],
    };
    // In a batch, a create that finds nothing it can take without waiting comes back busy
    // (undefined): with nothing else running here, nothing fits.
    const { payment: created } =
      mode === 'batch'
        ? ((await insertWindowBatch(session, [payment], 1000))[0] ?? { payment: undefined })
        : await insertPaymentWithCascade(session, payment, mode, 1000);
    // The requisite's value names its place in the generated pool.
    return created ? created.req_value : null;
  } finally {
    await session.query('ROLLBACK');
  }
}

// 800 generated pools, each written and chosen from three times: 20–40 s on an idle machine, past
// 120 s when the machine is shared with other suites (a timed-out property keeps running on the
// shared session and fails the next test too), hence the margin.
describe('the requisite-fit rule', { timeout: 300_000 }, () => {
  it('payment_create_window (src/db/functions/), alone and in a batch, and the cascade statement choose the same requisite on the same pool', async () => {
    expect(CASCADE_WINDOW).toBeGreaterThanOrEqual(25); // the window covers every generated pool
    let chosen = 0;
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const byWindow = await choice(c, 'window');
        const byStatement = await choice(c, 'all');
        expect(byWindow).toBe(byStatement);
        expect(await choice(c, 'batch')).toBe(byWindow);
        if (byWindow) chosen++;
      }),
      { numRuns: 500 },
    );
    // The generator must exercise both outcomes, not only "nothing fits": with deposits, pauses
    // and limits about one case in twenty-two fits (20–23 of 500 seen, once 10; 34 with no pause or
    // limit). The cases are drawn anew each run: 5 or more fail one run in about 100,000.
    expect(chosen).toBeGreaterThan(4);
  });

  it('both walk the pool in the same order: priority, score, least recently used', async () => {
    let chosen = 0;
    await fc.assert(
      fc.asyncProperty(arbOrderCase, async (c) => {
        const byWindow = await choice(c, 'window');
        const byStatement = await choice(c, 'all');
        expect(byWindow).toBe(byStatement);
        if (byWindow) chosen++;
      }),
      { numRuns: 300 },
    );
    // About one case in three chooses (99 of 300 seen): far more than 50 in any run.
    expect(chosen).toBeGreaterThan(50);
  });
});
