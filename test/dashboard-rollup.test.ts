/**
 * The dashboard's roll-up (migration 063, src/reports/dashboard.rollup.ts): its answer, read from
 * the minutes' and hours' rows, the completions since the roll-up and the payments created since,
 * is exactly the answer summed from every payment of the window (windowFiguresRaw) — also for
 * payments that complete after their minute was rolled up, in a transaction open across a roll-up,
 * and for payments created after it.
 *
 * Two terminals (and a test terminal whose payments count nowhere), two executors; payments spread
 * over the last hours (their creation moved back before the first roll-up, as if made then), so that
 * the day window reads whole hours, minutes and the tail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/pool.js';
import { changePayment } from '../src/payments/lifecycle.js';
import * as repo from '../src/reports/dashboard.repo.js';
import { refreshDashboardRollup, resetDashboardRollup } from '../src/reports/dashboard.rollup.js';
import { windowBounds } from '../src/reports/dashboard.service.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  notifyTransfer,
  setRate,
  sqlOf,
  startTestService,
  type TestService,
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
let amount = 1000;

const sql = sqlOf(() => service);

async function create(shop: MerchantCredentials, method: 'CARD' | 'SBP'): Promise<{ id: string; amount: number }> {
  amount += 7;
  const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount, method });
  expect(status, JSON.stringify(body)).toBe(200);
  return { id: body.id, amount };
}

async function complete(p: { id: string; amount: number }, method: 'CARD' | 'SBP'): Promise<void> {
  const [executor, requisite] = method === 'CARD' ? [ivan, card] : [petr, phone];
  expect(await notifyTransfer(service.app, executor.token, requisite.id, p.amount)).toMatchObject({ matched: true, payment_id: p.id });
}

/** The day's and the hour's figures both ways, in one snapshot: they must be equal; returns the roll-up's. */
async function bothWays(now = new Date()): Promise<Record<'hour' | 'day', Awaited<ReturnType<typeof repo.windowFigures>>>> {
  return transaction(service.ctx.db, async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const out = {} as Record<'hour' | 'day', Awaited<ReturnType<typeof repo.windowFigures>>>;
    for (const window of ['hour', 'day'] as const) {
      const bounds = windowBounds(window, now);
      const raw = await repo.windowFiguresRaw(tx, bounds);
      const rolled = await repo.windowFigures(tx, bounds);
      expect(rolled, window).toEqual(raw);
      out[window] = rolled;
    }
    return out;
  });
}

const total = (f: Awaited<ReturnType<typeof repo.windowFigures>>) => f.figures.find((x) => x.group === 'total')!;

/**
 * How many completed payments the roll-up's row for the minute of `paymentId`'s creation counts,
 * less how many of that minute's payments are COMPLETED now: 0 when the row is up to date, −1 when
 * it does not count that payment's completion yet.
 */
async function rolledLessCompleted(paymentId: string): Promise<number> {
  const [row] = await sql<{ behind: number }>(
    `WITH m AS (SELECT date_bin('1 minute', created_at, timestamptz '2000-01-01 00:00:00+00') AS at FROM payments WHERE id = $1)
     SELECT ((SELECT coalesce(sum(r.completed), 0) FROM dashboard_rollup r, m WHERE r.level = 'minute' AND r.kind = 's' AND r.at = m.at)
           - (SELECT count(*) FROM payments p, m WHERE p.created_at >= m.at AND p.created_at < m.at + interval '1 minute'
                 AND p.status = 'COMPLETED' AND NOT p.is_test))::int AS behind`,
    [paymentId],
  );
  return row!.behind;
}

beforeAll(async () => {
  service = await startTestService({ PAYMENT_TTL_SECONDS: '3600' });
  await setRate(service.app, 'RUB', 95.5);
  shopA = await createMerchant(service.app, { name: 'Alpha' });
  shopB = await createMerchant(service.app, { name: 'Beta' });
  ivan = await createExecutor(service.app, 'Ivan');
  petr = await createExecutor(service.app, 'Petr');
  card = await createRequisite(service.app, ivan.id);
  phone = await createRequisite(service.app, petr.id, { type: 'sbp', value: testPhone(), methods: ['SBP'] });
  const tester = await createMerchant(service.app, { name: 'Sandbox', is_test: true });

  // 24 payments over the last 5 hours (created i × 12.5 minutes ago), two in three completed, a
  // third of them through Petr's phone; each completed one took i × 10 + 5 seconds.
  for (let i = 0; i < 24; i++) {
    const method = i % 3 === 2 ? 'SBP' : 'CARD';
    const p = await create(i % 2 === 0 ? shopA : shopB, method);
    if (i % 3 !== 1) await complete(p, method);
    await sql(
      `UPDATE payments SET created_at = now() - make_interval(secs => $2),
              completed_at = CASE WHEN completed_at IS NOT NULL THEN now() - make_interval(secs => $2) + make_interval(secs => $3) END
        WHERE id = $1`,
      [p.id, i * 750 + 30, i * 10 + 5],
    );
  }
  const test = await createPayment(service.app, tester, { ext_id: uniqueExtId(), amount: 555 });
  expect(test.status, JSON.stringify(test.body)).toBe(200);
  // The roll-up starts now, over payments created "before" it.
  await resetDashboardRollup(service.ctx.db);
  expect(await refreshDashboardRollup(service.ctx.db, { wait: true })).toBe(true);
});
afterAll(async () => service?.close());

describe('the dashboard from its roll-up', () => {
  it('equals the figures summed from every payment, with whole hours read from the hours’ rows', async () => {
    const { day, hour } = await bothWays();
    expect(total(day)).toMatchObject({ created: 24, completed: 16 });
    expect(total(day).median_seconds).not.toBeNull();
    expect(day.figures.filter((f) => f.group === 'terminal')).toHaveLength(2);
    expect(day.figures.filter((f) => f.group === 'executor')).toHaveLength(2);
    expect(total(hour).created).toBeGreaterThan(0);
    expect(total(hour).created).toBeLessThan(24);
    const [rows] = await sql<{ hours: number; minutes: number }>(
      `SELECT count(*) FILTER (WHERE level = 'hour')::int AS hours, count(*) FILTER (WHERE level = 'minute')::int AS minutes FROM dashboard_rollup`,
    );
    expect(rows!.hours).toBeGreaterThan(0);
    expect(rows!.minutes).toBeGreaterThan(0);
  });

  it('a payment completed after its minute was rolled up counts as the payments count it, before the next roll-up and after it', async () => {
    // Created "7 minutes ago" (its minute rolled up), completed now.
    const p = await create(shopA, 'CARD');
    await sql(`UPDATE payments SET created_at = now() - interval '7 minutes' WHERE id = $1`, [p.id]);
    await resetDashboardRollup(service.ctx.db);
    await refreshDashboardRollup(service.ctx.db, { wait: true });
    const before = await bothWays();
    expect(await rolledLessCompleted(p.id)).toBe(0);

    await complete(p, 'CARD');
    const after = await bothWays();
    expect(total(after.day).completed).toBe(total(before.day).completed + 1);
    expect(total(after.hour).completed).toBe(total(before.hour).completed + 1);
    // Counted from its pay-in, not from the roll-up's rows yet.
    expect(await rolledLessCompleted(p.id)).toBe(-1);

    await refreshDashboardRollup(service.ctx.db, { wait: true });
    expect(await rolledLessCompleted(p.id)).toBe(0);
    const rolled = await bothWays();
    expect(total(rolled.day)).toEqual(total(after.day));
  });

  it('a completion in a transaction open across a roll-up: the roll-up stops before it, and it is counted once it commits', async () => {
    const p = await create(shopB, 'SBP');
    await refreshDashboardRollup(service.ctx.db, { wait: true });
    const before = await bothWays();
    const client = await service.ctx.db.connect();
    try {
      await client.query('BEGIN');
      const change = await changePayment(client, service.ctx, p.id, 'complete', { receivedAmount: String(p.amount) });
      expect(change?.to).toBe('COMPLETED');
      const [{ started }] = (await client.query<{ started: Date }>('SELECT now() AS started')).rows as [{ started: Date }];
      await refreshDashboardRollup(service.ctx.db, { wait: true });
      const [state] = await sql<{ upto: Date }>('SELECT upto FROM dashboard_rollup_state');
      expect(state!.upto.getTime()).toBeLessThanOrEqual(started.getTime());
      expect(total((await bothWays()).day).completed).toBe(total(before.day).completed);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const after = await bothWays();
    expect(total(after.day).completed).toBe(total(before.day).completed + 1);
    expect(await rolledLessCompleted(p.id)).toBe(-1);
    await refreshDashboardRollup(service.ctx.db, { wait: true });
    expect(await rolledLessCompleted(p.id)).toBe(0);
    expect(total((await bothWays()).day)).toEqual(total(after.day));
  });

  it('payments created after the roll-up, and a window beyond it, a window before its reach', async () => {
    await refreshDashboardRollup(service.ctx.db, { wait: true });
    const before = await bothWays();
    const p = await create(shopA, 'CARD');
    await complete(p, 'CARD');
    const after = await bothWays();
    expect(total(after.hour)).toMatchObject({ created: total(before.hour).created + 1, completed: total(before.hour).completed + 1 });
    // Hours ahead: nothing; two days back: before the roll-up's reach, summed from the payments.
    await bothWays(new Date(Date.now() + 3 * 3_600_000));
    await bothWays(new Date(Date.now() - 2 * 86_400_000));
  });

  it('the dashboard route answers from the roll-up as from the payments', async () => {
    const d = await adminOk<{ totals: { created: number; completed: number } }>(service.app, 'GET', '/dashboard?window=day');
    const { day } = await bothWays();
    expect(d.totals).toMatchObject({ created: total(day).created, completed: total(day).completed });
    const [state] = await sql<{ upto: Date }>('SELECT upto FROM dashboard_rollup_state');
    expect(Date.now() - state!.upto.getTime()).toBeLessThan(60_000);
  });
});
