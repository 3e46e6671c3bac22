import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { refreshScores } from '../src/executors/executors.repo.js';
import { switchOffUnpaidStreaks } from '../src/requisites/requisites.repo.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  type RequisiteInput,
  setRate,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

/**
 * Issue 17 item 6: requisites' limits (day and month, turnover and count, counting pending
 * hand-outs), executors' pause, priority and score in the cascade, and requisites switched off
 * after a streak of unpaid hand-outs (the expiry job, with the worker running).
 */

let service: TestService;
let app: FastifyInstance;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000', KASSIR_EXPIRY_SWEEP_SECONDS: '1' }, { worker: true });
  app = service.app;
  await setRate(app, 'RUB', 95.5);
  merchant = await createMerchant(app);
});
afterAll(async () => service?.close());

// Every test builds its own pool: whatever earlier tests created must not be offered.
beforeEach(async () => {
  await service.ctx.db.query('UPDATE requisites SET is_active = false');
  await service.ctx.db.query('UPDATE executors SET is_active = false');
});

let amountSeq = 0;
/** A payment of `amount` (+ a few kopecks so that no two pending ones share an amount on a requisite). */
async function pay(amount: number): Promise<{ status: number; id: string; requisiteId: string | null; error?: string }> {
  const res = await createPayment(app, merchant, { ext_id: uniqueExtId(), amount: amount + (amountSeq++ % 50) / 100, method: 'CARD' });
  if (res.status !== 200) return { status: res.status, id: '', requisiteId: null, error: res.body.error };
  const { rows } = await service.ctx.db.query<{ requisite_id: string }>('SELECT requisite_id FROM payments WHERE id = $1', [res.body.id]);
  return { status: 200, id: res.body.id as string, requisiteId: rows[0]!.requisite_id };
}

/** A payment of exactly `amount`. */
async function payExactly(amount: number) {
  const res = await createPayment(app, merchant, { ext_id: uniqueExtId(), amount, method: 'CARD' });
  return res;
}

async function cancel(paymentId: string): Promise<void> {
  await adminOk(app, 'POST', `/payments/${paymentId}/cancel`);
}

async function requisite(executorId: string, input: RequisiteInput & Record<string, unknown> = {}): Promise<string> {
  const { daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit, ...rest } = input;
  const { id } = await createRequisite(app, executorId, rest);
  const limits = { daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit };
  const set = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
  if (Object.keys(set).length > 0) await adminOk(app, 'PATCH', `/requisites/${id}`, set);
  return id;
}

function asExecutor(token: string, method: 'GET' | 'POST', url: string) {
  return app.inject({ method, url: `/executor/v1${url}`, headers: { authorization: `Bearer ${token}` } });
}

describe('limits', () => {
  it('hand-outs made before a limit was set count under it (counters start from the payments), for a requisite and for executor defaults', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id);
    const before = [await pay(1000), await pay(1000), await pay(1000)];
    for (const p of before) expect(p.requisiteId).toBe(id);
    await cancel(before[2]!.id);
    // No limit: nothing counted on the side; the operator's usage comes from the payments.
    const { rows: none } = await service.ctx.db.query('SELECT 1 FROM requisite_usage WHERE requisite_id = $1', [id]);
    expect(none).toHaveLength(0);
    expect((await adminOk<{ usage: unknown }>(app, 'GET', `/requisites/${id}`)).usage).toEqual({
      day: { amount: expect.any(Number), count: 2 },
      month: { amount: expect.any(Number), count: 2 },
    });

    // Two taken (the cancelled one not): a limit of three leaves room for one more.
    await adminOk(app, 'PATCH', `/requisites/${id}`, { daily_count_limit: 3 });
    expect((await pay(1000)).status).toBe(200);
    expect((await pay(1000)).error).toBe('PAY_004');

    // The same through the executor's default, on a second card of its own.
    await adminOk(app, 'PATCH', `/requisites/${id}`, { is_active: false });
    const second = await requisite(executor.id);
    expect((await pay(1000)).requisiteId).toBe(second);
    await adminOk(app, 'PATCH', `/executors/${executor.id}`, { default_daily_count_limit: 2 });
    expect((await pay(1000)).requisiteId).toBe(second);
    expect((await pay(1000)).error).toBe('PAY_004');
  });

  it('a daily count limit stops hand-outs at the limit, pending ones counting; a cancellation frees the room', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id, { daily_count_limit: 2 });
    const first = await pay(1000);
    const second = await pay(1000);
    expect([first.requisiteId, second.requisiteId]).toEqual([id, id]);
    // Both are still PENDING: they count.
    expect((await pay(1000)).error).toBe('PAY_004');
    await cancel(first.id);
    expect((await pay(1000)).requisiteId).toBe(id);
    expect((await pay(1000)).error).toBe('PAY_004');
    const shown = await adminOk<Record<string, unknown>>(app, 'GET', `/requisites/${id}`);
    expect(shown).toMatchObject({ daily_count_limit: 2, monthly_count_limit: null, daily_turnover_limit: null, disabled_reason: null });
    // Three handed out, one cancelled: two count, today and this month.
    expect(shown.usage).toMatchObject({ day: { count: 2 }, month: { count: 2 } });
  });

  it('a monthly count limit stops hand-outs at the limit; a cancellation frees the room', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id, { monthly_count_limit: 3 });
    const made = [await pay(500), await pay(500), await pay(500)];
    expect(made.every((p) => p.requisiteId === id)).toBe(true);
    expect((await pay(500)).error).toBe('PAY_004');
    await cancel(made[1]!.id);
    expect((await pay(500)).requisiteId).toBe(id);
  });

  it('a daily turnover limit admits a hand-out that reaches it exactly and refuses one past it', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id, { daily_turnover_limit: 2500 });
    expect((await payExactly(1000)).status).toBe(200);
    expect((await payExactly(1000.5)).status).toBe(200);
    // 2000.50 taken: 500 more would pass 2500.
    const over = await payExactly(500);
    expect(over.status).toBe(503);
    expect(over.body.error).toBe('PAY_004');
    const exact = await payExactly(499.5);
    expect(exact.status).toBe(200);
    expect((await service.ctx.db.query('SELECT requisite_id FROM payments WHERE id = $1', [exact.body.id])).rows[0].requisite_id).toBe(id);
    const past = await payExactly(100);
    expect(past.status, JSON.stringify(past.body)).toBe(503);
    // A cancellation gives its amount back.
    await cancel(exact.body.id as string);
    expect((await payExactly(400)).status).toBe(200);
  });

  it('a monthly turnover limit counts across days; the day limit starts afresh each day', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id, { daily_turnover_limit: 1500, monthly_turnover_limit: 2500 });
    expect((await payExactly(1200)).status).toBe(200);
    expect((await payExactly(400)).status).toBe(503); // 1600 > 1500 in the day
    // As if the 1200 had been handed out on another day of this month: the day's counter is the
    // previous day's, the month's stays.
    await service.ctx.db.query(`UPDATE requisite_usage SET starts = starts - 1 WHERE requisite_id = $1 AND period = 'day'`, [id]);
    expect((await payExactly(1000)).status).toBe(200); // day 1000, month 2200
    expect((await payExactly(400)).status).toBe(503); // month 2600 > 2500
    expect((await payExactly(300)).status).toBe(200); // month 2500 exactly
  });

  it("an executor's default applies to requisites without a limit of their own", async () => {
    const executor = await createExecutor(app);
    const updated = await adminOk<Record<string, unknown>>(app, 'PATCH', `/executors/${executor.id}`, { default_daily_count_limit: 1 });
    expect(updated).toMatchObject({ default_daily_count_limit: 1, default_daily_turnover_limit: null });
    const plain = await requisite(executor.id);
    const own = await requisite(executor.id, { daily_count_limit: 2 });
    const taken = [await pay(700), await pay(700), await pay(700)].map((p) => p.requisiteId);
    expect(taken.filter((r) => r === plain)).toHaveLength(1);
    expect(taken.filter((r) => r === own)).toHaveLength(2);
    expect((await pay(700)).error).toBe('PAY_004');
    // The executor sees each card's day against the limit in force on it (its own, else the default).
    const mine = (await asExecutor(executor.token, 'GET', '/requisites')).json().requisites as Array<Record<string, any>>;
    const { rows: sums } = await service.ctx.db.query<{ requisite_id: string; amount: string }>(
      'SELECT requisite_id, sum(payer_amount)::text AS amount FROM payments WHERE requisite_id = ANY($1::uuid[]) GROUP BY requisite_id',
      [[plain, own]],
    );
    const takenToday = (id: string) => Number(sums.find((r) => r.requisite_id === id)!.amount);
    expect(mine.find((r) => r.id === plain)).toMatchObject({
      usage: { day: { count: 1, amount: takenToday(plain) }, month: { count: 1 } },
      limits_in_force: { daily_count: 1, daily_turnover: null, monthly_count: null, monthly_turnover: null },
    });
    expect(mine.find((r) => r.id === own)).toMatchObject({
      usage: { day: { count: 2, amount: takenToday(own) }, month: { count: 2 } },
      limits_in_force: { daily_count: 2 },
    });
    // Null clears the default.
    await adminOk(app, 'PATCH', `/executors/${executor.id}`, { default_daily_count_limit: null });
    expect((await pay(700)).requisiteId).toBe(plain);
  });

  it('racing creates never pass a limit', async () => {
    const executor = await createExecutor(app);
    const ids = [await requisite(executor.id, { daily_count_limit: 3 }), await requisite(executor.id, { daily_count_limit: 3 })];
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => payExactly(2000 + i)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(6);
    expect(results.filter((r) => r.status !== 200).every((r) => r.body.error === 'PAY_004')).toBe(true);
    const { rows } = await service.ctx.db.query<{ requisite_id: string; n: number }>(
      `SELECT requisite_id, count(*)::int AS n FROM payments WHERE requisite_id = ANY($1::uuid[]) GROUP BY requisite_id`,
      [ids],
    );
    expect(rows.map((r) => r.n)).toEqual([3, 3]);
  });

  it('the counters match the payments after creates, cancellations and expiries race', async () => {
    const executor = await createExecutor(app);
    const ids = [await requisite(executor.id, { daily_count_limit: 6 }), await requisite(executor.id, { daily_turnover_limit: 9000 })];
    const created: string[] = [];
    const work = Array.from({ length: 30 }, async (_, i) => {
      const res = await payExactly(1000 + i);
      if (res.status !== 200) return;
      created.push(res.body.id as string);
      // Every other one is cancelled by the operator, every fourth expires; both race further creates.
      if (i % 2 === 0) await cancel(res.body.id as string);
      else if (i % 4 === 1) await service.ctx.db.query(`UPDATE payments SET valid_until = now() WHERE id = $1`, [res.body.id]);
    });
    await Promise.all(work);
    await until(async () => {
      const { rows } = await service.ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM payments WHERE id = ANY($1::uuid[]) AND status = 'PENDING' AND valid_until <= now()`,
        [created],
      );
      return rows[0]!.n === 0 || undefined;
    });
    const { rows } = await service.ctx.db.query<{ requisite_id: string; counted: number; taken: number; amount: string; sum: string }>(
      `SELECT r.id AS requisite_id, coalesce(u.count, 0) AS counted, coalesce(u.amount, 0)::text AS amount,
              (SELECT count(*)::int FROM payments p WHERE p.requisite_id = r.id AND (p.created_at AT TIME ZONE 'UTC')::date = u.starts
                AND p.status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL')) AS taken,
              (SELECT coalesce(sum(p.payer_amount), 0)::text FROM payments p
                WHERE p.requisite_id = r.id AND (p.created_at AT TIME ZONE 'UTC')::date = u.starts
                AND p.status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL')) AS sum
         FROM requisites r
         LEFT JOIN requisite_usage u ON u.requisite_id = r.id AND u.period = 'day' AND u.starts = (now() AT TIME ZONE 'UTC')::date
        WHERE r.id = ANY($1::uuid[])`,
      [ids],
    );
    expect(created.length).toBeGreaterThan(6);
    for (const row of rows) {
      expect(row.counted).toBe(row.taken);
      expect(Number(row.amount)).toBe(Number(row.sum));
    }
    expect(rows.find((r) => r.requisite_id === ids[0])!.taken).toBeLessThanOrEqual(6);
    expect(Number(rows.find((r) => r.requisite_id === ids[1])!.sum)).toBeLessThanOrEqual(9000);
  });

  it('refuses bad limits with a clear error', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id);
    const res = await admin(app, 'PATCH', `/requisites/${id}`, { daily_count_limit: 1.5 });
    expect(res.statusCode).toBe(400);
    const negative = await admin(app, 'PATCH', `/requisites/${id}`, { daily_turnover_limit: -1 });
    expect(negative.statusCode).toBe(400);
    const places = await admin(app, 'PATCH', `/requisites/${id}`, { daily_turnover_limit: 10.123 });
    expect(places.statusCode).toBe(400);
    expect(places.json().message).toMatch(/daily_turnover_limit/);
    const priority = await admin(app, 'PATCH', `/executors/${executor.id}`, { disable_after_expired: -1 });
    expect(priority.statusCode).toBe(400);
    expect(priority.json().message).toMatch(/disable_after_expired/);
  });

  it("the database itself refuses a malformed requisite, on insert and on update of the rule's column (migration 027)", async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id);
    const sql = (text: string, params: unknown[]) => service.ctx.db.query(text, params);
    const refused = (text: string, params: unknown[], constraint: string) => expect(sql(text, params)).rejects.toMatchObject({ code: '23514', constraint });
    await refused(
      `INSERT INTO requisites (executor_id, type, value, currency, country, methods) VALUES ($1, 'pigeon', '1', 'RUB', 'RU', '{CARD}')`,
      [executor.id],
      'requisites_type_check',
    );
    await refused(`UPDATE requisites SET value = '' WHERE id = $1`, [id], 'requisites_value_check');
    await refused(`UPDATE requisites SET currency = 'rub' WHERE id = $1`, [id], 'requisites_currency_check');
    await refused(`UPDATE requisites SET country = 'RUS' WHERE id = $1`, [id], 'requisites_country_check');
    await refused(`UPDATE requisites SET methods = '{}' WHERE id = $1`, [id], 'requisites_methods_check');
    await refused(`UPDATE requisites SET min_amount = -1 WHERE id = $1`, [id], 'requisites_min_amount_check');
    await refused(`UPDATE requisites SET min_amount = 10, max_amount = 5 WHERE id = $1`, [id], 'requisites_check');
    await refused(`UPDATE requisites SET daily_turnover_limit = -1 WHERE id = $1`, [id], 'requisites_daily_turnover_limit_check');
    await refused(`UPDATE requisites SET monthly_count_limit = -1 WHERE id = $1`, [id], 'requisites_monthly_count_limit_check');
    // Marking it used (every create does) checks none of them.
    await sql('UPDATE requisites SET last_used_at = now() WHERE id = $1', [id]);
  });
});

describe('pause', () => {
  it('an executor pauses and resumes taking payments; the operator sees and sets it', async () => {
    const executor = await createExecutor(app);
    const id = await requisite(executor.id);
    const paused = await asExecutor(executor.token, 'POST', '/pause');
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({ is_paused: true, takes_payments: false });
    expect((await pay(900)).error).toBe('PAY_004');
    expect((await asExecutor(executor.token, 'GET', '/status')).json()).toMatchObject({ is_active: true, is_paused: true });
    expect((await asExecutor(executor.token, 'GET', '/balance')).json()).toMatchObject({ is_paused: true });
    expect(await adminOk(app, 'GET', `/executors/${executor.id}`)).toMatchObject({ is_paused: true });

    expect((await asExecutor(executor.token, 'POST', '/resume')).json()).toMatchObject({ is_paused: false, takes_payments: true });
    expect((await pay(900)).requisiteId).toBe(id);

    await adminOk(app, 'PATCH', `/executors/${executor.id}`, { is_paused: true });
    expect((await pay(900)).error).toBe('PAY_004');
    await adminOk(app, 'PATCH', `/executors/${executor.id}`, { is_paused: false });
    expect((await pay(900)).requisiteId).toBe(id);
  });
});

describe('ordering', () => {
  it("the operator's priority beats least recently used", async () => {
    const low = await createExecutor(app);
    const high = await createExecutor(app);
    const lowReq = await requisite(low.id);
    const highReqs = [await requisite(high.id), await requisite(high.id)];
    await adminOk(app, 'PATCH', `/executors/${high.id}`, { priority: 10 });
    // The low-priority requisite was never used; the high-priority ones take turns (LRU among equals).
    const taken = [await pay(300), await pay(300), await pay(300), await pay(300)].map((p) => p.requisiteId);
    expect(taken).not.toContain(lowReq);
    expect(new Set(taken)).toEqual(new Set(highReqs));
    expect(taken[0]).not.toBe(taken[1]);
    expect(await adminOk(app, 'GET', `/executors/${high.id}`)).toMatchObject({ priority: 10 });
    await adminOk(app, 'PATCH', `/executors/${high.id}`, { priority: 0 });
    expect((await pay(300)).requisiteId).toBe(lowReq);
  });

  it('among equal priorities the score (conversion and speed over 24 hours) orders executors', async () => {
    const fast = await createExecutor(app);
    const failing = await createExecutor(app);
    const fastReq = await requisite(fast.id);
    const failingReq = await requisite(failing.id);
    // The failing executor's hand-outs end cancelled, first; then the fast one's complete at once.
    await adminOk(app, 'PATCH', `/executors/${fast.id}`, { is_paused: true });
    for (let i = 0; i < 2; i++) {
      const p = await pay(1100);
      expect(p.requisiteId).toBe(failingReq);
      await cancel(p.id);
    }
    await adminOk(app, 'PATCH', `/executors/${fast.id}`, { is_paused: false });
    await adminOk(app, 'PATCH', `/executors/${failing.id}`, { is_paused: true });
    for (let i = 0; i < 2; i++) {
      const res = await payExactly(1200 + i);
      expect(res.status).toBe(200);
      const notified = await app.inject({
        method: 'POST',
        url: '/executor/v1/notifications',
        headers: { authorization: `Bearer ${fast.token}`, 'content-type': 'application/json' },
        payload: { requisite_id: fastReq, amount: 1200 + i, received_at: new Date().toISOString() },
      });
      expect(notified.json()).toMatchObject({ matched: true });
    }
    await adminOk(app, 'PATCH', `/executors/${failing.id}`, { is_paused: false });
    await refreshScores(service.ctx.db);

    const fastShown = await adminOk<Record<string, any>>(app, 'GET', `/executors/${fast.id}`);
    expect(fastShown.score).toBe(1);
    expect(fastShown.score_figures).toMatchObject({ handed_out: 2, completed: 2, conversion: 1 });
    expect(fastShown.score_figures.median_minutes_to_complete).toBeLessThan(1);
    const failingShown = await adminOk<Record<string, any>>(app, 'GET', `/executors/${failing.id}`);
    expect(failingShown).toMatchObject({ score: 0, score_figures: { handed_out: 2, completed: 0, conversion: 0 } });
    // The failing executor's requisite is the least recently used, but the score comes first.
    expect((await pay(1300)).requisiteId).toBe(fastReq);
    expect((await pay(1300)).requisiteId).toBe(fastReq);
    // With a higher priority it comes first again.
    await adminOk(app, 'PATCH', `/executors/${failing.id}`, { priority: 1 });
    expect((await pay(1300)).requisiteId).toBe(failingReq);
  });
});

describe('automatic care', () => {
  it('switches a requisite off after N hand-outs expired unpaid, with the reason shown to operator and executor', async () => {
    const executor = await createExecutor(app);
    await adminOk(app, 'PATCH', `/executors/${executor.id}`, { disable_after_expired: 3 });
    const id = await requisite(executor.id, { daily_count_limit: 10 });
    const expireNow = (ids: string[]) =>
      service.ctx.db.query(`UPDATE payments SET valid_until = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [ids]);
    const isCancelled = async (paymentId: string) =>
      (await service.ctx.db.query('SELECT status FROM payments WHERE id = $1', [paymentId])).rows[0].status === 'CANCELLED' || undefined;

    // Two expired and a later one still pending: no streak of three.
    const firstTwo = [await pay(800), await pay(800)];
    const pending = await pay(800);
    await expireNow(firstTwo.map((p) => p.id));
    for (const p of firstTwo) await until(() => isCancelled(p.id), 20_000, 100, 'expiry');
    expect((await adminOk<Record<string, unknown>>(app, 'GET', `/requisites/${id}`)).is_active).toBe(true);
    // Expired hand-outs free their room under the limit.
    const usage = await service.ctx.db.query<{ count: number }>(`SELECT count FROM requisite_usage WHERE requisite_id = $1 AND period = 'day'`, [id]);
    expect(usage.rows[0]!.count).toBe(1);

    await expireNow([pending.id]);
    const off = await until(
      async () => {
        const shown = await adminOk<Record<string, any>>(app, 'GET', `/requisites/${id}`);
        return shown.is_active ? undefined : shown;
      },
      20_000,
      100,
      'switch-off',
    );
    expect(off.disabled_reason).toMatch(/last 3 hand-outs ended unpaid/);
    const mine = (await asExecutor(executor.token, 'GET', '/requisites')).json().requisites as Record<string, unknown>[];
    expect(mine.find((r) => r.id === id)).toMatchObject({ is_active: false, disabled_reason: off.disabled_reason });
    expect((await pay(800)).error).toBe('PAY_004');

    // Switched on again: the reason goes, and the old streak no longer counts.
    const on = await adminOk<Record<string, unknown>>(app, 'PATCH', `/requisites/${id}`, { is_active: true });
    expect(on).toMatchObject({ is_active: true, disabled_reason: null });
    const again = await pay(800);
    expect(again.requisiteId).toBe(id);
    await expireNow([again.id]);
    await until(() => isCancelled(again.id), 20_000, 100, 'expiry');
    // What the sweep runs after each batch finds nothing to switch off: one unpaid since switched on.
    expect(await switchOffUnpaidStreaks(service.ctx.db, [id])).toEqual([]);
    expect((await adminOk<Record<string, unknown>>(app, 'GET', `/requisites/${id}`)).is_active).toBe(true);
  });

  it('does not switch off when the executor turned the rule off (0)', async () => {
    const executor = await createExecutor(app);
    await adminOk(app, 'PATCH', `/executors/${executor.id}`, { disable_after_expired: 0 });
    const id = await requisite(executor.id);
    const made = [await pay(600), await pay(600)];
    await service.ctx.db.query(`UPDATE payments SET valid_until = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [made.map((p) => p.id)]);
    for (const p of made) {
      await until(async () => (await service.ctx.db.query('SELECT status FROM payments WHERE id = $1', [p.id])).rows[0].status === 'CANCELLED' || undefined);
    }
    expect(await switchOffUnpaidStreaks(service.ctx.db, [id])).toEqual([]);
    expect((await adminOk<Record<string, unknown>>(app, 'GET', `/requisites/${id}`)).is_active).toBe(true);
  });
});
