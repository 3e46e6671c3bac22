/**
 * Races on executors' deposits, over two service instances on one database: concurrent creates
 * never freeze more than a deposit (and hand out exactly what the deposits allow), and completions
 * racing expiries settle each payment exactly once — completed with its settlement, or cancelled
 * with its hold released, never both.
 */
import { Decimal } from 'decimal.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/pool.js';
import { payinHold } from '../src/ledger/credit.js';
import { expireDuePayments } from '../src/payments/lifecycle.js';
import type { RunningService } from '../src/service.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let other: RunningService;
let merchant: MerchantCredentials;

const sql = <T extends Record<string, unknown>>(text: string, params: unknown[] = []) => service.ctx.db.query<T>(text, params).then((r) => r.rows);
const check = () => adminOk<{ ok: boolean; problems: unknown[] }>(service.app, 'GET', '/ledger/check');

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000' });
  other = await service.startAnother();
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app, { payin_rate: 2 });
});
afterAll(async () => service?.close());

/** Instance `i % 2` of the two. */
const instance = (i: number): FastifyInstance => (i % 2 === 0 ? service.app : other.app);

describe('deposits under concurrency', () => {
  it('200 concurrent creates over two instances never freeze more than a deposit, and take what the deposits allow', async () => {
    // Holds of 10.00–11.99 USDT (1000–1199 RUB at 100) against deposits that cover only some.
    const deposits = [30, 55, 0, 100, 12.5, 41];
    const executors: { id: string; deposit: number }[] = [];
    for (const [i, deposit] of deposits.entries()) {
      const executor = await createExecutor(service.app, `Racer ${i}`, { deposit });
      for (let r = 0; r < 3; r++) await createRequisite(service.app, executor.id, { max_amount: null });
      executors.push({ id: executor.id, deposit });
    }
    const amounts = Array.from({ length: 200 }, (_, i) => 1000 + i);
    const results = await Promise.all(
      amounts.map((amount, i) => signed(instance(i), merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('race'), amount, method: 'CARD' })),
    );
    const created = results.filter((r) => r.statusCode === 200);
    for (const refused of results.filter((r) => r.statusCode !== 200)) {
      expect(refused.json(), refused.body).toMatchObject({ error: 'PAY_004', message: expect.stringMatching(/deposits cannot cover/) });
    }

    const rows = await sql<{ executor_id: string; balance: string; frozen: string; holds: string; n: number }>(
      `SELECT a.executor_id, a.balance::text, f.balance::text AS frozen,
              coalesce((SELECT sum(hold) FROM payments p WHERE p.executor_id = a.executor_id AND p.status = 'PENDING'), 0)::text AS holds,
              (SELECT count(*)::int FROM payments p WHERE p.executor_id = a.executor_id) AS n
         FROM ledger_accounts a JOIN ledger_accounts f ON f.executor_id = a.executor_id AND f.kind = 'executor_frozen'
        WHERE a.kind = 'executor_available' AND a.executor_id = ANY($1::uuid[])`,
      [executors.map((e) => e.id)],
    );
    let minimum = 0;
    let maximum = 0;
    for (const executor of executors) {
      const row = rows.find((r) => r.executor_id === executor.id)!;
      // Never more frozen than the deposit; available never below zero (no credit line here).
      expect(new Decimal(row.frozen).lte(executor.deposit), `executor with ${executor.deposit}`).toBe(true);
      expect(new Decimal(row.balance).gte(0)).toBe(true);
      expect(new Decimal(row.balance).plus(row.frozen).toFixed(6)).toBe(new Decimal(executor.deposit).toFixed(6));
      expect(row.frozen).toBe(new Decimal(row.holds).toFixed(6));
      // Whatever it took is between what its deposit allows at the largest and at the smallest hold…
      expect(row.n).toBeLessThanOrEqual(Math.floor(executor.deposit / 10));
      // …and it was left with too little for another: no create was refused while it could take one.
      expect(new Decimal(row.balance).lt('11.99')).toBe(true);
      minimum += Math.floor(executor.deposit / 11.99);
      maximum += Math.floor(executor.deposit / 10);
    }
    expect(created.length).toBeGreaterThanOrEqual(minimum);
    expect(created.length).toBeLessThanOrEqual(maximum);
    expect(await check()).toEqual({ ok: true, problems: [] });
  });

  it('completions racing expiries on two instances settle each payment exactly once', async () => {
    const executor = await createExecutor(service.app, 'Settler', { deposit: 1000 });
    const requisites = [];
    for (let r = 0; r < 4; r++) requisites.push(await createRequisite(service.app, executor.id, { currency: 'KZT', country: 'KZ', bank: 'kaspi' }));
    await setRate(service.app, 'KZT', 500);
    const kzt = await createMerchant(service.app, { currency: 'KZT', payin_rate: 2 });
    const payments: { id: string; amount: number; requisiteId: string; hold: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const amount = 5000 + i * 10;
      const res = await signed(service.app, kzt, 'POST', '/v1/payments', { ext_id: uniqueExtId('settle'), amount });
      expect(res.statusCode, res.body).toBe(200);
      const [row] = await sql<{ requisite_id: string; hold: string }>('SELECT requisite_id, hold::text FROM payments WHERE id = $1', [res.json().id]);
      payments.push({ id: res.json().id, amount, requisiteId: row!.requisite_id, hold: row!.hold });
    }
    await sql(`UPDATE payments SET valid_until = now() WHERE id = ANY($1::uuid[])`, [payments.map((p) => p.id)]);

    const notifications = payments.map((p, i) =>
      instance(i)
        .inject({
          method: 'POST',
          url: '/executor/v1/notifications',
          headers: { authorization: `Bearer ${executor.token}`, 'content-type': 'application/json' },
          payload: { requisite_id: p.requisiteId, amount: p.amount, received_at: new Date().toISOString() },
        })
        .then((res) => ({ status: res.statusCode, body: res.json() as { matched: boolean; payment_id: string | null } })),
    );
    // Small sweeps on both instances, started once the first notifications are answered, so that
    // the two kinds of change meet on the payments still open.
    let answered = 0;
    const started = new Promise<void>((resolve) => {
      for (const n of notifications) void n.then(() => ++answered === 3 && resolve());
    });
    const sweeps = Array.from({ length: 20 }, async (_, i) => {
      const running = i % 2 === 0 ? service : other;
      await started;
      return transaction(running.ctx.db, (tx) => expireDuePayments(tx, running.ctx.config, 1));
    });
    const [answers] = await Promise.all([Promise.all(notifications), Promise.all(sweeps)]);
    // Whatever the sweeps left, the job would expire: sweep to the end.
    while ((await transaction(service.ctx.db, (tx) => expireDuePayments(tx, service.config, 100))).length > 0);

    for (const answer of answers) expect(answer.status).toBe(200);
    const outcome = await sql<{ id: string; status: string; payins: number; releases: number }>(
      `SELECT p.id, p.status,
              (SELECT count(*)::int FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) AS payins,
              (SELECT count(*)::int FROM ledger_transactions t WHERE t.kind = 'payin_hold_release' AND t.ref_id = p.id) AS releases
         FROM payments p WHERE p.id = ANY($1::uuid[])`,
      [payments.map((p) => p.id)],
    );
    let owed = new Decimal(0);
    for (const row of outcome) {
      const answer = answers[payments.findIndex((p) => p.id === row.id)]!;
      if (row.status === 'COMPLETED') {
        expect(row).toMatchObject({ payins: 1, releases: 0 });
        expect(answer.body).toMatchObject({ matched: true, payment_id: row.id });
        owed = owed.plus(payinHold(payments.find((p) => p.id === row.id)!.amount, '500'));
      } else {
        expect(row).toMatchObject({ status: 'CANCELLED', payins: 0, releases: 1 });
        expect(answer.body.matched).toBe(false);
      }
    }
    // Which of the two won each payment depends on the schedule; each was settled exactly once either way.
    expect(outcome).toHaveLength(payments.length);
    const executorNow = await adminOk<{ balance: number; balance_frozen: number }>(service.app, 'GET', `/executors/${executor.id}`);
    expect(executorNow.balance_frozen).toBe(0);
    expect(new Decimal(executorNow.balance).toFixed(6)).toBe(new Decimal(1000).minus(owed).toFixed(6));
    expect(await check()).toEqual({ ok: true, problems: [] });
  });
});
