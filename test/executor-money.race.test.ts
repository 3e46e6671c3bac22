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
import type { RunningService } from '../src/instance.js';
import { payinHold } from '../src/ledger/credit.js';
import { expireDuePayments } from '../src/payments/lifecycle.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  createsSent,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  signed,
  sqlOf,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let other: RunningService;
let merchant: MerchantCredentials;

const sql = sqlOf(() => service);

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
    // The creates went through batches (src/payments/cascade/create-batches.ts), on both instances together.
    expect((await createsSent(service)).together + (await createsSent(other)).together).toBeGreaterThan(0);
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
    await expectLedgerOk(service.app);
  });

  it("operator debits racing creates on one executor's deposit never take it below zero; each is refused only for want of funds", async () => {
    await setRate(service.app, 'AZN', 1.7);
    const azn = await createMerchant(service.app, { currency: 'AZN', payin_rate: 2 });
    const executor = await createExecutor(service.app, 'Contended', { deposit: 100 });
    await createRequisite(service.app, executor.id, { currency: 'AZN', country: 'AZ', bank: null, max_amount: null });
    // Holds of 10.00–10.22 USDT (17–17.38 AZN at 1.7) and debits of 10 USDT, 20 of each, interleaved over two instances.
    const work = [
      ...Array.from({ length: 20 }, (_, i) => async () => {
        const res = await signed(instance(i), azn, 'POST', '/v1/payments', { ext_id: uniqueExtId('contend'), amount: Number((17 + i * 0.02).toFixed(2)) });
        return { kind: 'create' as const, status: res.statusCode, body: res.json() };
      }),
      ...Array.from({ length: 20 }, (_, i) => async () => {
        const res = await admin(instance(i + 1), 'POST', `/executors/${executor.id}/adjustments`, { amount: -10, reason: 'race debit' });
        return { kind: 'debit' as const, status: res.statusCode, body: res.json() };
      }),
    ];
    const order = work.map((_, i) => i).sort((x, y) => ((x * 37) % 23) - ((y * 37) % 23));
    const results = await Promise.all(order.map((i) => work[i]!()));
    for (const r of results.filter((r) => r.status >= 300)) {
      if (r.kind === 'create')
        expect(r.body, JSON.stringify(r.body)).toMatchObject({ error: 'PAY_004', message: expect.stringMatching(/deposits cannot cover/) });
      else expect(r.body, JSON.stringify(r.body)).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/is available; nothing was changed/) });
    }
    const debited = results.filter((r) => r.kind === 'debit' && r.status === 201).length;
    const [held] = await sql<{ holds: string; n: number }>(
      `SELECT coalesce(sum(hold), 0)::text AS holds, count(*)::int AS n FROM payments WHERE executor_id = $1 AND status = 'PENDING'`,
      [executor.id],
    );
    expect(held!.n).toBe(results.filter((r) => r.kind === 'create' && r.status === 200).length);
    const now = await adminOk<{ balance: number; balance_frozen: number }>(service.app, 'GET', `/executors/${executor.id}`);
    expect(now.balance).toBeGreaterThanOrEqual(0);
    expect(new Decimal(now.balance_frozen).toFixed(6)).toBe(new Decimal(held!.holds).toFixed(6));
    expect(new Decimal(now.balance).toFixed(6)).toBe(
      new Decimal(100)
        .minus(held!.holds)
        .minus(10 * debited)
        .toFixed(6),
    );
    // The balance only falls here, and 20 debits of 10 cannot all pass: one was refused, so what is
    // left is below 10 — none was refused while the deposit could pay it.
    expect(now.balance).toBeLessThan(10);
    await expectLedgerOk(service.app);
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
    await expectLedgerOk(service.app);
  });
});
