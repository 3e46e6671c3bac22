/*
 * The payout and withdrawal lifecycles (src/payouts/lifecycle.ts, src/withdrawals/lifecycle.ts)
 * refuse an event from a status it does not apply from: the change returns undefined and nothing
 * moves — no status, no posting, no webhook event. Every path (executor, operator, provider, jobs)
 * goes through them, so this is the one place an illegal transition is stopped.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Queryable, transaction } from '../src/db/pool.js';
import { changePayout, TRANSITIONS as PAYOUT_TRANSITIONS } from '../src/payouts/lifecycle.js';
import { PAYOUT_STATUSES } from '../src/payouts/payouts.repo.js';
import { changeWithdrawal, TRANSITIONS as WITHDRAWAL_TRANSITIONS } from '../src/withdrawals/lifecycle.js';
import { WITHDRAWAL_STATUSES } from '../src/withdrawals/withdrawals.repo.js';
import { adminOk, createMerchant, type MerchantCredentials, setRate, signed, startTestService, type TestService, testCard, uniqueExtId } from './helpers.js';

/** What a resource's changes leave behind: its status, its ledger postings and its webhook events. */
async function traces(db: Queryable, table: 'payouts' | 'withdrawals', id: string) {
  const { rows } = await db.query<{ status: string; postings: number; events: number }>(
    `SELECT r.status,
            (SELECT count(*)::int FROM ledger_transactions t WHERE t.ref_id = r.id) AS postings,
            (SELECT count(*)::int FROM webhook_events e WHERE e.resource_id = r.id) AS events
       FROM ${table} r WHERE r.id = $1`,
    [id],
  );
  return rows[0]!;
}

describe('lifecycles refuse illegal transitions', () => {
  let service: TestService;
  let app: FastifyInstance;
  let m: MerchantCredentials;

  beforeAll(async () => {
    service = await startTestService();
    app = service.app;
    await setRate(app, 'RUB', 95.5);
    m = await createMerchant(app);
    await adminOk(app, 'POST', `/terminals/${m.terminalId}/adjustments`, { amount: 1000, reason: 'test funds' });
  });
  afterAll(async () => service?.close());

  it('the tables name only known statuses, and nothing leaves a finished payout or withdrawal', () => {
    for (const rule of Object.values(PAYOUT_TRANSITIONS)) {
      expect(PAYOUT_STATUSES).toContain(rule.to);
      expect(rule.from).not.toContain('completed');
      expect(rule.from).not.toContain('failed');
      expect(rule.from).not.toContain('cancelled');
    }
    for (const rule of Object.values(WITHDRAWAL_TRANSITIONS)) {
      expect(WITHDRAWAL_STATUSES).toContain(rule.to);
      expect(rule.from).not.toContain('completed');
      expect(rule.from).not.toContain('failed');
    }
  });

  it('a failed payout cannot be completed, taken, cancelled or failed again: nothing posted, no event', async () => {
    const res = await signed(app, m, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('lc'),
      amount: 1000,
      method: 'card',
      requisites: testCard('4111'),
      holder_name: 'Ivan Petrov',
      notify_url: 'https://merchant.example/hooks',
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id as string;
    const db = service.ctx.db;

    const failed = await transaction(db, (tx) => changePayout(tx, id, 'fail', { reason: 'test' }));
    expect(failed?.status).toBe('failed');
    const after = await traces(db, 'payouts', id);
    expect(after).toMatchObject({ status: 'failed', postings: 2, events: 1 }); // the reserve and its release

    for (const event of ['complete', 'take', 'cancel', 'fail'] as const) {
      expect(await transaction(db, (tx) => changePayout(tx, id, event, { reason: 'again' }))).toBeUndefined();
    }
    expect(await traces(db, 'payouts', id)).toEqual(after);
  });

  it('a failed withdrawal cannot be completed, signed or failed again: nothing posted', async () => {
    const res = await signed(app, m, 'POST', '/v1/withdrawals', { terminal_id: m.terminalId, amount: 10, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id as string;
    const db = service.ctx.db;

    const failed = await transaction(db, (tx) => changeWithdrawal(tx, id, { event: 'fail', reason: 'test' }));
    expect(failed?.status).toBe('failed');
    const after = await traces(db, 'withdrawals', id);
    expect(after).toMatchObject({ status: 'failed', postings: 2 }); // the freeze and its release

    const signedTx = { signedTx: { txID: 'ab'.repeat(32) }, txHash: 'ab'.repeat(32), expiresAt: new Date(Date.now() + 60_000), previousTxHash: null };
    expect(await transaction(db, (tx) => changeWithdrawal(tx, id, { event: 'complete', txHash: 'cd'.repeat(32) }))).toBeUndefined();
    expect(await transaction(db, (tx) => changeWithdrawal(tx, id, { event: 'sign', signed: signedTx }))).toBeUndefined();
    expect(await transaction(db, (tx) => changeWithdrawal(tx, id, { event: 'fail', reason: 'again', byChain: true }))).toBeUndefined();
    expect(await traces(db, 'withdrawals', id)).toEqual(after);
  });
});
