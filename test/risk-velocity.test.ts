/*
 * Risk rules, velocity (issue 36 item 2; DESIGN.md "Risk rules (contract)"): PUT/GET/DELETE
 * /admin/v1/risk/limits, a sliding window per client_id counted in PostgreSQL — exact under a
 * burst split across two instances on one database — by count and by amount, refusals answering
 * the pool's own PAY_004 with the hit's figure, failed creates and creates without client_id not
 * counted, merchant isolation, and no statement at all when no rule is set.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningService } from '../src/instance.js';
import { type Count, checkClientIds } from '../src/risk/velocity.repo.js';
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

describe('client_id checks taken together (risk_client_checks)', () => {
  const count = (key: string, over: Partial<Count> = {}): Count => ({
    scope: 'client_id',
    key,
    amount: '100.00',
    id: randomUUID(),
    windowSeconds: 600,
    maxPayments: 2,
    maxAmount: null,
    ...over,
  });
  const windowOf = async (key: string) =>
    (await sql<{ n: number }>("SELECT cardinality(ids) AS n FROM risk_velocity WHERE scope = 'client_id' AND key = $1", [key]))[0]?.n ?? 0;

  it('one statement answers each check as alone: a blocked payer is not counted, three entries of one key at max 2 → the first two, amounts past max_amount refused, in the order given', async () => {
    const blocked = await adminOk<{ id: string }>(app, 'POST', '/risk/blocks', {
      kind: 'client_id',
      value: 'batch-blocked',
      merchant_id: a.merchantId,
      reason: 'batch test',
    });
    const hash = service.ctx.risk.hash('client_id', 'batch-blocked');
    const [k1, k2, k3, k4] = ['z', 'a', 'm', 'b'].map((p) => `${p}-batch-${randomUUID()}`);
    const answers = await checkClientIds(service.ctx.db, [
      { count: count(k1!) },
      { block: { hash, merchantId: a.merchantId }, count: count(k2!) },
      { count: count(k1!) },
      { block: { hash, merchantId: b.merchantId }, count: count(k3!) },
      { count: count(k1!) },
      { count: count(k4!, { maxAmount: '150.00', amount: '200.00' }) },
      { block: { hash: service.ctx.risk.hash('client_id', 'not-blocked'), merchantId: a.merchantId } },
    ]);
    expect(answers).toEqual([
      { blockId: null, counted: true },
      { blockId: blocked.id, counted: false },
      { blockId: null, counted: true },
      // The block is merchant A's: merchant B's payer of the same id passes and is counted.
      { blockId: null, counted: true },
      { blockId: null, counted: false },
      { blockId: null, counted: false },
      { blockId: null, counted: false },
    ]);
    expect([await windowOf(k1!), await windowOf(k2!), await windowOf(k3!), await windowOf(k4!)]).toEqual([2, 0, 1, 0]);
  });

  it('60 checks of one key at once, over two instances, at max 5: exactly 5 counted; a failed statement counts nothing', async () => {
    const key = `burst-batch-${randomUUID()}`;
    const checks = Array.from({ length: 60 }, (_, i) =>
      ((i % 2 === 0 ? service.ctx : other.ctx).risk as any).clientChecks.check({ count: count(key, { maxPayments: 5 }) }),
    );
    const answers = await Promise.all(checks);
    expect(answers.filter((x: { counted: boolean }) => x.counted)).toHaveLength(5);
    expect(await windowOf(key)).toBe(5);
    // An entry id that is no uuid fails the whole statement: nothing of it is kept.
    const fresh = `failed-batch-${randomUUID()}`;
    await expect(checkClientIds(service.ctx.db, [{ count: count(fresh) }, { count: count(fresh, { id: 'not-a-uuid' }) }])).rejects.toThrow();
    expect(await windowOf(fresh)).toBe(0);
  });
});
