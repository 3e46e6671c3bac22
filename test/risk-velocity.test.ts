/*
 * Risk rules, velocity (issue 36 item 2; DESIGN.md "Risk rules (contract)"): PUT/GET/DELETE
 * /admin/v1/risk/limits, a sliding window per client_id counted in PostgreSQL — exact under a
 * burst split across two instances on one database — by count and by amount, refusals answering
 * the pool's own PAY_004 with the hit's figure, failed creates and creates without client_id not
 * counted, merchant isolation, and no statement at all when no rule is set. The window is the
 * payer's payments, counted by the create's own transaction under the payer's lock (migration 057).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningService } from '../src/instance.js';
import { payinHold } from '../src/ledger/credit.js';
import type { NewPayment } from '../src/payments/cascade/cascade.js';
import { creationFacts, insertWindowBatch } from '../src/payments/cascade/cascade.repo.js';
import type { ClientLimit } from '../src/risk/velocity.repo.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

let service: TestService;
let app: FastifyInstance;
let other: RunningService;
let a: MerchantCredentials;
let b: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000' });
  app = service.app;
  other = await service.startAnother({ SAME_AMOUNT_LIMIT: '1000' });
  await setRate(app, 'RUB', 95);
  a = await createMerchant(app);
  b = await createMerchant(app);
  const executor = await createExecutor(app);
  for (let i = 0; i < 8; i++) await createRequisite(app, executor.id, { max_amount: 50_000 });
});
afterAll(async () => service?.close());

const sql = async <T = Record<string, any>>(text: string, values: unknown[] = []) => (await service.ctx.db.query(text, values)).rows as T[];
let amountSeq = 0;
const pay = (creds: MerchantCredentials, body: Record<string, unknown> = {}, on: FastifyInstance = app) =>
  createPayment(on, creds, { ext_id: uniqueExtId(), amount: 1000 + (amountSeq++ % 5000), ...body });
/** Sets the limit and waits until the other instance applies it too (its rules are forgotten on the announcement). */
async function setLimit(body: Record<string, unknown>): Promise<void> {
  await adminOk(app, 'PUT', '/risk/limits', body);
  const scope = body.scope ?? 'client_id';
  await until(async () => {
    const limits = (await (other.ctx.risk as any).rules()).limits;
    return limits.get(scope)?.window_seconds === body.window_seconds || undefined;
  });
}

describe('velocity: the operator routes', () => {
  it('PUT sets the one limit (a later PUT replaces it), GET shows it, DELETE clears it; each audited', async () => {
    const first = await adminOk(app, 'PUT', '/risk/limits', { window_seconds: 600, max_payments: 5 });
    expect(first).toMatchObject({ scope: 'client_id', window_seconds: 600, max_payments: 5, max_amount: null, updated_by: 'token' });
    await adminOk(app, 'PUT', '/risk/limits', { window_seconds: 300, max_amount: 60000 });
    expect(await adminOk(app, 'GET', '/risk/limits')).toEqual({
      limits: [expect.objectContaining({ scope: 'client_id', window_seconds: 300, max_payments: null, max_amount: 60000 })],
    });
    await adminOk(app, 'PUT', '/risk/limits', { scope: 'ip', window_seconds: 60, max_payments: 3 });
    expect((await adminOk<{ limits: unknown[] }>(app, 'GET', '/risk/limits')).limits).toHaveLength(2);
    expect((await admin(app, 'DELETE', '/risk/limits?scope=ip')).statusCode).toBe(204);
    expect((await admin(app, 'DELETE', '/risk/limits?scope=ip')).statusCode).toBe(404);
    expect((await admin(app, 'DELETE', '/risk/limits')).statusCode).toBe(204);
    expect(await adminOk(app, 'GET', '/risk/limits')).toEqual({ limits: [] });
    const audit = await sql("SELECT action, before, after FROM audit_log WHERE action LIKE 'risk.limit.%' ORDER BY id");
    expect(audit.map((r) => r.action)).toEqual(['risk.limit.set', 'risk.limit.set', 'risk.limit.set', 'risk.limit.clear', 'risk.limit.clear']);
    expect(audit[1]).toMatchObject({ before: expect.objectContaining({ max_payments: 5 }), after: expect.objectContaining({ max_amount: 60000 }) });

    for (const body of [
      { window_seconds: 60 },
      { window_seconds: 0, max_payments: 1 },
      { window_seconds: 60, max_amount: -1 },
      { window_seconds: 60, max_payments: 0 },
    ]) {
      const res = await admin(app, 'PUT', '/risk/limits', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('VALIDATION');
    }
  });
});

describe('velocity per client_id', () => {
  it('no limit and no block: a create with a client_id runs no risk statement at all', async () => {
    const spy = vi.spyOn(service.ctx.db, 'query');
    try {
      await (service.ctx.risk as any).rules();
      spy.mockClear();
      for (let i = 0; i < 3; i++) expect((await pay(a, { client_id: 'cheap' })).status).toBe(200);
      const texts = spy.mock.calls.map((call) => String(typeof call[0] === 'string' ? call[0] : (call[0] as { text: string }).text));
      expect(texts.filter((text) => /risk_/.test(text))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it('a burst of 20 creates at once, split across two instances, with max_payments 5 → exactly 5 accepted; the refusals equal the ordinary PAY_004', async () => {
    await setLimit({ window_seconds: 600, max_payments: 5 });
    const apps = [app, other.app];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(a, { client_id: 'burst' }, apps[i % 2]!)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(15);
    // The pool's own refusal for the same request: an amount no requisite takes (max_amount 50 000).
    const ordinary = await signed(app, a, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 90000 });
    expect(ordinary.statusCode).toBe(503);
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(JSON.stringify(r.body)).toBe(ordinary.body);
    }
    // Another client_id and another merchant's payer of the same id have windows of their own.
    expect((await pay(a, { client_id: 'burst-2' })).status).toBe(200);
    expect((await pay(b, { client_id: 'burst' })).status).toBe(200);
    // Creates without a client_id are not counted.
    for (let i = 0; i < 7; i++) expect((await pay(a)).status).toBe(200);

    await service.ctx.refusals.drain();
    await (other as any).ctx.refusals.drain();
    const hits = await sql("SELECT figure, inputs FROM risk_hits WHERE rule = 'velocity' AND inputs->>'client_id' = 'burst'");
    expect(hits).toHaveLength(15);
    for (const hit of hits) expect(hit.figure).toBe('velocity client_id 6 in 600 s > 5');
    const refusals = await sql("SELECT count(*)::int AS n FROM payment_refusals WHERE merchant_id = $1 AND risk_rule = 'velocity'", [a.merchantId]);
    expect(refusals[0]!.n).toBe(15);
  });

  it('a create that fails after being counted (no requisites) gives its room back', async () => {
    await setLimit({ window_seconds: 601, max_payments: 1 });
    const failed = await pay(a, { client_id: 'give-back', amount: 90000 });
    expect(failed.status).toBe(503);
    expect((await pay(a, { client_id: 'give-back' })).status).toBe(200);
    expect((await pay(a, { client_id: 'give-back' })).status).toBe(503);
  });

  it('by amount: 30 000 + 30 000 pass, 1 000 more is past 60 000 in the window', async () => {
    await setLimit({ window_seconds: 602, max_amount: 60000 });
    expect((await pay(a, { client_id: 'amounts', amount: 30000 })).status).toBe(200);
    expect((await pay(a, { client_id: 'amounts', amount: 30000 })).status).toBe(200);
    expect((await pay(a, { client_id: 'amounts', amount: 1000 })).status).toBe(503);
    await service.ctx.refusals.drain();
    const [hit] = await sql("SELECT figure FROM risk_hits WHERE rule = 'velocity' AND inputs->>'client_id' = 'amounts'");
    expect(hit!.figure).toBe('velocity client_id amount 61000.00 RUB in 602 s > 60000.00');
  });

  it('the window slides: once the first entries leave it, creates pass again', async () => {
    await setLimit({ window_seconds: 2, max_payments: 2 });
    expect((await pay(a, { client_id: 'sliding' })).status).toBe(200);
    expect((await pay(a, { client_id: 'sliding' })).status).toBe(200);
    expect((await pay(a, { client_id: 'sliding' })).status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect((await pay(a, { client_id: 'sliding' })).status).toBe(200);
    expect((await pay(a, { client_id: 'sliding' })).status).toBe(200);
    expect((await pay(a, { client_id: 'sliding' })).status).toBe(503);
  });

  it('cleared, the limit no longer refuses (on both instances)', async () => {
    await setLimit({ window_seconds: 603, max_payments: 1 });
    expect((await pay(a, { client_id: 'cleared' })).status).toBe(200);
    expect((await pay(a, { client_id: 'cleared' }, other.app)).status).toBe(503);
    await adminOk(app, 'DELETE', '/risk/limits');
    await until(async () => (await (other.ctx.risk as any).rules()).limits.size === 0 || undefined);
    expect((await pay(a, { client_id: 'cleared' }, other.app)).status).toBe(200);
  });
});

describe('the client_id window counted in the create (payment_creation_facts, migration 057)', () => {
  /** A create of `clientId` as the service makes it, held to `limit`, for the cascade called directly. */
  function direct(clientId: string, limit: ClientLimit | null, over: Partial<NewPayment> = {}): NewPayment {
    const fixed = (1000 + (amountSeq++ % 5000)).toFixed(2);
    return {
      merchantId: a.merchantId,
      terminalId: a.terminalId,
      terminalName: 'Main',
      extId: uniqueExtId('direct'),
      amount: fixed,
      currency: 'RUB',
      method: 'CARD',
      rate: '95',
      rateRefreshId: null,
      payinRate: '0',
      crossBorder: false,
      clientId,
      clientLimit: limit,
      notifyUrl: null,
      notificationToken: null,
      pageToken: uniqueExtId('page'),
      ttlSeconds: 900,
      hold: payinHold(fixed, '95').toFixed(),
      types: ['card'],
      bank: null,
      candidates: [{ currency: 'RUB', country: 'RU', payerAmount: fixed }],
      ...over,
    };
  }
  const atMost = (maxPayments: number | null, maxAmount: string | null = null): ClientLimit => ({ windowSeconds: 600, maxPayments, maxAmount });

  it('one batch answers each create as alone: a payer at max 2 gets the first two, the third refused with the window it found; another payer and the amount limit apart', async () => {
    const [p1, p2, p3] = ['one', 'two', 'three'].map((x) => `${x}-${randomUUID()}`);
    const outcomes = await insertWindowBatch(
      service.ctx.db,
      [
        direct(p1!, atMost(2)),
        direct(p2!, atMost(2)),
        direct(p1!, atMost(2)),
        direct(p1!, atMost(2)),
        direct(p3!, atMost(null, '1500.00'), {
          amount: '1600.00',
          hold: payinHold('1600.00', '95').toFixed(),
          candidates: [{ currency: 'RUB', country: 'RU', payerAmount: '1600.00' }],
        }),
      ],
      1000,
    );
    expect(outcomes.map((o) => [o?.payment !== undefined, o?.facts.client_refused, o?.facts.client_count])).toEqual([
      [true, false, 0],
      [true, false, 0],
      [true, false, 1],
      [false, true, 2],
      [false, true, 0],
    ]);
    expect(outcomes[3]!.facts.client_sum).toBe((Number(outcomes[0]!.payment!.amount) + Number(outcomes[2]!.payment!.amount)).toFixed(2));
  });

  it('60 creates of one payer at once, over both instances and their batches, at max 5: exactly 5 payments', async () => {
    const payer = `burst-direct-${randomUUID()}`;
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? service.ctx : other.ctx).creates.window(direct(payer, atMost(5)))));
    expect(outcomes.filter((o) => o.payment)).toHaveLength(5);
    expect(outcomes.filter((o) => o.facts.client_refused)).toHaveLength(55);
    const [row] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE client_id = $1', [payer]);
    expect(row!.n).toBe(5);
  });

  it("the window is the payer's payments: those made before the limit count; another currency or merchant, or older than the window, do not", async () => {
    const payer = `history-${randomUUID()}`;
    // Made with no limit set, then one moved out of the window: the limit counts the two left.
    for (let i = 0; i < 3; i++) expect((await pay(a, { client_id: payer })).status).toBe(200);
    await sql("UPDATE payments SET created_at = now() - interval '700 seconds' WHERE id = (SELECT id FROM payments WHERE client_id = $1 LIMIT 1)", [payer]);
    expect((await pay(b, { client_id: payer })).status).toBe(200);
    const three = await insertWindowBatch(service.ctx.db, [direct(payer, atMost(3)), direct(payer, atMost(3))], 1000);
    expect(three.map((o) => [o?.facts.client_count, o?.facts.client_refused])).toEqual([
      [2, false],
      [3, true],
    ]);
    // The facts alone, in a transaction rolled back: the same payer's window in another order currency is empty.
    const tx = await service.ctx.db.connect();
    try {
      await tx.query('BEGIN');
      expect(await creationFacts(tx, { ...direct(payer, atMost(3)), currency: 'USD' })).toMatchObject({
        client_count: 0,
        client_sum: '0',
        client_refused: false,
      });
      expect(await creationFacts(tx, direct(payer, atMost(3)))).toMatchObject({ client_count: 3, client_refused: true });
    } finally {
      await tx.query('ROLLBACK');
      tx.release();
    }
  });

  it('a client_id block is checked from memory: no statement per create, and a block added or removed applies on both instances', async () => {
    const payer = `memory-${randomUUID()}`;
    const block = await adminOk<{ id: string }>(app, 'POST', '/risk/blocks', { kind: 'client_id', value: payer, reason: 'memory test' });
    await until(async () => (await (other.ctx.risk as any).rules()).clientBlocks?.has(service.ctx.risk.hash('client_id', payer)) || undefined);
    const spy = vi.spyOn(other.ctx.db, 'query');
    try {
      spy.mockClear();
      expect((await pay(a, { client_id: payer }, other.app)).status).toBe(503);
      expect((await pay(a, { client_id: `free-${randomUUID()}` }, other.app)).status).toBe(200);
      const texts = spy.mock.calls.map((call) => String(typeof call[0] === 'string' ? call[0] : (call[0] as { text: string }).text));
      expect(texts.filter((text) => /risk_blocks/.test(text))).toEqual([]);
    } finally {
      spy.mockRestore();
    }
    expect((await admin(app, 'DELETE', `/risk/blocks/${block.id}`)).statusCode).toBe(204);
    await until(async () =>
      (await (other.ctx.risk as any).rules()).clientBlocks?.has(service.ctx.risk.hash('client_id', payer)) === false ? true : undefined,
    );
    expect((await pay(a, { client_id: payer }, other.app)).status).toBe(200);
  });
});
