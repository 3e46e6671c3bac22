/**
 * Executors' money (DESIGN.md "Executors' money (contract)"), walked end to end through the public
 * routes: a deposit, a hold frozen at hand-out, completion paying the terminal, the executor's
 * reward and the platform's revenue exactly, expiry releasing the hold, a payout paid back with
 * reward, disputes approved against the deposit, the credit line, and what an unfunded pool answers.
 */
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/pool.js';
import { payinSettlement, payoutSettlement } from '../src/ledger/credit.js';
import { expireDuePayments } from '../src/payments/lifecycle.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorCall,
  executorCompletesPayout,
  executorTakesPayout,
  expectLedgerOk,
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
  uniqueExtId,
} from './helpers.js';

let service: TestService;

interface Balance {
  balance: number;
  balance_frozen: number;
  currency: string;
}

const executorBalance = (id: string) => adminOk<Balance & Record<string, unknown>>(service.app, 'GET', `/executors/${id}`);
const sql = sqlOf(() => service);

async function executorGet(token: string, url: string) {
  const res = await executorCall(service.app, token, 'GET', url);
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

const notify = (token: string, requisiteId: string, amount: number) => notifyTransfer(service.app, token, requisiteId, amount);

/** A fresh pool of its own: one merchant and one executor with one requisite, in a currency nobody else in this file uses. */
async function pool(currency: 'KZT' | 'AZN' | 'TJS' | 'RUB', options: { deposit: number; payinRate?: number; payinReward?: number }) {
  const country = { RUB: 'RU', KZT: 'KZ', AZN: 'AZ', TJS: 'TJ' }[currency];
  const bank = { RUB: 'sberbank', KZT: 'kaspi', AZN: null, TJS: null }[currency];
  const merchant = await createMerchant(service.app, { currency, payin_rate: options.payinRate ?? 2.5, payout_rate: 1.5 });
  const executor = await createExecutor(service.app, `Trader ${currency}`, { deposit: options.deposit });
  if (options.payinReward !== undefined) await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { payin_reward: options.payinReward });
  const requisite = await createRequisite(service.app, executor.id, { currency, country, bank, max_amount: null });
  return { merchant, executor, requisite };
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  await setRate(service.app, 'KZT', 480);
  await setRate(service.app, 'AZN', 1.7);
  await setRate(service.app, 'TJS', 10.9);
});
afterAll(async () => service?.close());

describe('money end to end through an executor', () => {
  let merchant: MerchantCredentials;
  let executor: { id: string; token: string };
  let requisite: { id: string };

  beforeAll(async () => {
    ({ merchant, executor, requisite } = await pool('RUB', { deposit: 0, payinReward: 1.5 }));
    await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { payout_reward: 0.5 });
  });

  it('a new executor has an empty deposit in USDT, and funding it is one audited posting', async () => {
    expect(await executorBalance(executor.id)).toMatchObject({ balance: 0, balance_frozen: 0, currency: 'USDT', credit_limit: 0, payin_reward: 1.5 });
    const funded = await admin(service.app, 'POST', `/executors/${executor.id}/adjustments`, { amount: 100, reason: 'deposit received in cash' });
    expect(funded.statusCode).toBe(201);
    expect(funded.json()).toEqual({ balance: 100, balance_frozen: 0 });
    const [audited] = await sql<{ action: string; after: Record<string, unknown> }>(
      `SELECT action, after FROM audit_log WHERE object_id = $1 AND action = 'executor.adjust_deposit'`,
      [executor.id],
    );
    expect(audited).toMatchObject({ action: 'executor.adjust_deposit', after: { balance: 100, amount: 100, reason: 'deposit received in cash' } });
    expect((await executorGet(executor.token, '/balance')).body).toMatchObject({ balance: 100, balance_frozen: 0, currency: 'USDT' });
  });

  it('fund 100 → a payment holds its value → the notification completes it → terminal, reward and revenue exactly as the contract says', async () => {
    const { status, body: payment } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1500 });
    expect(status, JSON.stringify(payment)).toBe(200);
    // hold = 1500 / 95.5 = 15.706806 (6 dp half-up), frozen in the creating transaction.
    expect(await executorBalance(executor.id)).toMatchObject({ balance: 84.293194, balance_frozen: 15.706806 });
    const [held] = await sql<{ executor_id: string; hold: string }>('SELECT executor_id, hold::text FROM payments WHERE id = $1', [payment.id]);
    expect(held).toEqual({ executor_id: executor.id, hold: '15.706806' });

    expect(await notify(executor.token, requisite.id, 1500)).toMatchObject({ matched: true, payment_id: payment.id });

    // Terminal +15.314136 (decision 11's worked example), reward 15.706806 × 1.5 % = 0.235602,
    // revenue the remainder 0.157068.
    const s = payinSettlement('1500', '95.5', '2.5', '1.5');
    expect([s.gross, s.net, s.reward, s.revenue].map((d) => d.toFixed(6))).toEqual(['15.706806', '15.314136', '0.235602', '0.157068']);
    const entries = await sql<{ kind: string; amount: string }>(
      `SELECT a.kind, e.amount::text FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.kind = 'payin' AND t.ref_id = $1 ORDER BY a.kind`,
      [payment.id],
    );
    expect(entries).toEqual([
      { kind: 'executor_available', amount: '0.235602' },
      { kind: 'executor_frozen', amount: '-15.706806' },
      { kind: 'system_fee_revenue', amount: '0.157068' },
      { kind: 'terminal_available', amount: '15.314136' },
    ]);
    expect(await executorBalance(executor.id)).toMatchObject({ balance: 84.528796, balance_frozen: 0 });
    expect((await signed(service.app, merchant, 'GET', '/v1/balance')).json()).toEqual({ balance: 15.314136, balance_frozen: 0, currency: 'USDT' });
    await expectLedgerOk(service.app);
  });

  it('another payment expires → its hold is released', async () => {
    const { body: payment } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 2000 });
    expect(await executorBalance(executor.id)).toMatchObject({ balance: 63.586388, balance_frozen: 20.942408 });
    await sql(`UPDATE payments SET valid_until = now() - interval '1 second' WHERE id = $1`, [payment.id]);
    const expired = await transaction(service.ctx.db, (tx) => expireDuePayments(tx, service.config, 100));
    expect(expired.map((p) => p.id)).toContain(payment.id);
    expect(await executorBalance(executor.id)).toMatchObject({ balance: 84.528796, balance_frozen: 0 });
    const [release] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'payin_hold_release' AND ref_id = $1`, [
      payment.id,
    ]);
    expect(release!.n).toBe(1);
    await expectLedgerOk(service.app);
  });

  it('a payout the executor takes and completes pays it back with its reward; the platform keeps the rest of the reserve', async () => {
    const created = await signed(service.app, merchant, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId(),
      amount: 1000,
      method: 'card',
      requisites: '4111 1111 1111 1111',
      holder_name: 'Ivan Petrov',
    });
    expect(created.statusCode, created.body).toBe(200);
    const payout = created.json();
    expect((await executorTakesPayout(service.app, executor.token, payout.id)).statusCode).toBe(200);
    const done = await executorCompletesPayout(service.app, executor.token, payout.id);
    expect(done.statusCode, done.body).toBe(200);
    // reserve 1000 / 95.5 × 1.015 = 10.628272; p = 10.471204…; credit p × 1.005 = 10.523560; revenue 0.104712.
    const settlement = payoutSettlement('1000', '95.5', '10.628272', '0.5');
    expect([settlement.executorCredit.toFixed(6), settlement.revenue.toFixed(6)]).toEqual(['10.523560', '0.104712']);
    expect(await executorBalance(executor.id)).toMatchObject({ balance: 95.052356, balance_frozen: 0 });
    expect((await signed(service.app, merchant, 'GET', '/v1/balance')).json()).toEqual({ balance: 4.685864, balance_frozen: 0, currency: 'USDT' });
    await expectLedgerOk(service.app);
  });

  it('a payout the executor took and the operator completed settles to that executor too', async () => {
    const created = await signed(service.app, merchant, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId(),
      amount: 300,
      method: 'card',
      requisites: '4111 1111 1111 1111',
      holder_name: 'Ivan Petrov',
    });
    const payout = created.json();
    expect((await executorTakesPayout(service.app, executor.token, payout.id)).statusCode).toBe(200);
    const before = new Decimal((await executorBalance(executor.id)).balance);
    await adminOk(service.app, 'POST', `/payouts/${payout.id}/complete`);
    const reserve = (await sql<{ reserve: string }>('SELECT reserve::text FROM payouts WHERE id = $1', [payout.id]))[0]!.reserve;
    const credit = payoutSettlement('300', '95.5', reserve, '0.5').executorCredit;
    expect(new Decimal((await executorBalance(executor.id)).balance).minus(before).toFixed(6)).toBe(credit.toFixed(6));
    await expectLedgerOk(service.app);
  });

  it('the statement lists every posting with the running balance of its account, newest first; the executor reads its own', async () => {
    const { status, body } = await executorGet(executor.token, '/statement?limit=3');
    expect(status).toBe(200);
    expect(body).toMatchObject({ currency: 'USDT', limit: 3, offset: 0, total: expect.any(Number) });
    expect(body.entries).toHaveLength(3);
    const all = (await adminOk<{ entries: any[]; balance: number }>(service.app, 'GET', `/executors/${executor.id}/statement?limit=1000`)).entries;
    expect(all.length).toBe(body.total);
    // Oldest first, each account's running balance is the sum of its amounts so far, ending at the balance.
    const running = new Map<string, Decimal>();
    for (const entry of [...all].reverse()) {
      const next = (running.get(entry.account) ?? new Decimal(0)).plus(entry.amount);
      running.set(entry.account, next);
      expect(new Decimal(entry.balance_after).toFixed(6)).toBe(next.toFixed(6));
    }
    const now = await executorBalance(executor.id);
    expect(running.get('available')!.toNumber()).toBe(now.balance);
    expect(all.at(-1)).toMatchObject({ kind: 'executor_adjustment', account: 'available', amount: 100, balance_after: 100, memo: 'deposit received in cash' });
    expect(all.map((e) => e.kind)).toEqual(expect.arrayContaining(['payin_hold', 'payin', 'payin_hold_release', 'payout_settle']));
    expect((await executorGet(executor.token, '/statement?limit=5000')).body).toMatchObject({ error: 'VALIDATION' });
  });

  it('an adjustment taking more than is available is refused and changes nothing', async () => {
    const before = await executorBalance(executor.id);
    const res = await admin(service.app, 'POST', `/executors/${executor.id}/adjustments`, { amount: -1000, reason: 'too much' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/only .* USDT is available; nothing was changed/) });
    expect(await executorBalance(executor.id)).toMatchObject({ balance: before.balance, balance_frozen: 0 });
    for (const bad of [{ amount: 0, reason: 'x' }, { amount: 1.0000001, reason: 'x' }, { amount: 'ten', reason: 'x' }, { amount: 5 }]) {
      const refused = await admin(service.app, 'POST', `/executors/${executor.id}/adjustments`, bad);
      expect(refused.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await admin(service.app, 'POST', '/executors/00000000-0000-4000-8000-000000000000/adjustments', { amount: 5, reason: 'x' })).statusCode).toBe(404);
  });
});

describe('who receives payments', () => {
  it('an unfunded pool answers PAY_004 with a message the operator can act on', async () => {
    const { merchant } = await pool('KZT', { deposit: 0 });
    const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 4800 });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: 'PAY_004',
      message: expect.stringMatching(/deposits cannot cover this payment's 10 USDT.*POST \/admin\/v1\/executors\/\{id\}\/adjustments/),
      data: { currency: 'KZT', hold: 10 },
    });
  });

  it('a requisite whose executor cannot cover the hold is skipped for one that can', async () => {
    const { merchant, executor: poor } = await pool('AZN', { deposit: 5 });
    const rich = await createExecutor(service.app, 'Rich AZN', { deposit: 1000 });
    const richCard = await createRequisite(service.app, rich.id, { currency: 'AZN', country: 'AZ', bank: null, max_amount: null });
    // 17 AZN at 1.7 is 10 USDT: more than the poor executor's 5.
    const { body } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 17 });
    expect(body.status).toBe('PENDING');
    const [row] = await sql<{ executor_id: string; requisite_id: string }>('SELECT executor_id, requisite_id FROM payments WHERE id = $1', [body.id]);
    expect(row).toEqual({ executor_id: rich.id, requisite_id: richCard.id });
    // A small one fits the poor executor's deposit (least recently used first).
    const small = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 3.4 });
    expect((await sql<{ executor_id: string }>('SELECT executor_id FROM payments WHERE id = $1', [small.body.id]))[0]!.executor_id).toBe(poor.id);
    expect(await executorBalance(poor.id)).toMatchObject({ balance: 3, balance_frozen: 2 });
  });

  it('a credit line lets a trusted executor take payments below zero, down to −credit_limit and no further', async () => {
    const { merchant, executor } = await pool('TJS', { deposit: 0 });
    expect((await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 109 })).status).toBe(503);
    const patched = await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { credit_limit: 25 });
    expect(patched).toMatchObject({ credit_limit: 25 });
    // 109 TJS at 10.9 is 10 USDT: two fit in a credit line of 25, the third does not.
    for (const amount of [109, 110.09]) {
      const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    expect(await executorBalance(executor.id)).toMatchObject({ balance: -20.1, balance_frozen: 20.1 });
    const third = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 111 });
    expect(third.body).toMatchObject({ error: 'PAY_004' });
    // It owes 20.1: the line cannot be cut below that.
    const cut = await admin(service.app, 'PATCH', `/executors/${executor.id}`, { credit_limit: 20 });
    expect(cut.statusCode).toBe(400);
    expect(cut.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/cannot be less than what it owes \(20\.1 USDT\)/) });
    expect(await executorBalance(executor.id)).toMatchObject({ credit_limit: 25 });
    for (const bad of [{ credit_limit: -1 }, { payin_reward: 100 }, { payout_reward: -0.1 }, { payin_reward: 1.00001 }]) {
      expect((await admin(service.app, 'PATCH', `/executors/${executor.id}`, bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    await expectLedgerOk(service.app);
  });

  it('an approval the deposit cannot cover is refused and changes nothing; once topped up, COMPLETED_APPEAL debits v = X / rate', async () => {
    const { merchant, executor } = await pool('RUB', { deposit: 0 });
    // Its own pool: only this executor serves RUB CARD with min 100 000… instead give it a dedicated amount.
    await adminOk(service.app, 'POST', `/executors/${executor.id}/adjustments`, { amount: 20, reason: 'deposit' });
    const ours = (await sql<{ id: string }>('SELECT id FROM requisites WHERE executor_id = $1', [executor.id]))[0]!.id;
    // Others' RUB requisites are switched off for this test, so that the payment lands on ours.
    const others = await sql<{ id: string }>(`UPDATE requisites SET is_active = false WHERE currency = 'RUB' AND id <> $1 AND is_active RETURNING id`, [ours]);
    try {
      const { body: payment } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1910 });
      expect(payment.status, JSON.stringify(payment)).toBe('PENDING');
      expect(await executorBalance(executor.id)).toMatchObject({ balance: 0, balance_frozen: 20 });
      await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
      expect(await executorBalance(executor.id)).toMatchObject({ balance: 20, balance_frozen: 0 });
      // The executor spends its deposit elsewhere meanwhile.
      await adminOk(service.app, 'POST', `/executors/${executor.id}/adjustments`, { amount: -15, reason: 'withdrawn' });
      const dispute = await signedMultipart(
        service.app,
        merchant,
        `/v1/payments/${payment.id}/dispute`,
        multipartBody({ data: JSON.stringify({ amount: 955, comment: 'paid half' }) }, { field: 'proof', content: TINY_PNG }),
      );
      expect(dispute.statusCode, dispute.body).toBe(200);

      const refused = await admin(service.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: 955 });
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({
        error: 'EXE_001',
        message: expect.stringMatching(/needs 10 USDT from its deposit, which has 5 USDT available.*adjustments/),
      });
      expect((await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`)).json()).toMatchObject({ status: 'DISPUTE' });
      expect(await executorBalance(executor.id)).toMatchObject({ balance: 5, balance_frozen: 0 });

      await adminOk(service.app, 'POST', `/executors/${executor.id}/adjustments`, { amount: 5, reason: 'top-up' });
      const approved = await adminOk<{ status: string }>(service.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: 955 });
      expect(approved.status).toBe('COMPLETED_APPEAL');
      // v = 955 / 95.5 = 10 USDT debited; the terminal gets 10 × 0.975.
      expect(await executorBalance(executor.id)).toMatchObject({ balance: 0, balance_frozen: 0 });
      expect((await signed(service.app, merchant, 'GET', '/v1/balance')).json()).toMatchObject({ balance: 9.75 });
      await expectLedgerOk(service.app);
    } finally {
      await sql('UPDATE requisites SET is_active = true WHERE id = ANY($1::uuid[])', [others.map((o) => o.id)]);
    }
  });

  it('a provider-executed payment holds nothing on our executors (covered by providers.flow); an executor reads only its own balance', async () => {
    const a = await createExecutor(service.app, 'A', { deposit: 7 });
    const b = await createExecutor(service.app, 'B', { deposit: 9 });
    expect((await executorGet(a.token, '/balance')).body).toMatchObject({ balance: 7 });
    expect((await executorGet(b.token, '/balance')).body).toMatchObject({ balance: 9 });
    expect((await executorGet('ex_nope', '/balance')).status).toBe(401);
  });
});
