/**
 * Traffic classes and requisite velocity (issue 36 items 3 and 2's per-requisite velocity;
 * migration 048, docs/risk-classes.md): a payer's class from its completed payments with the
 * merchant (kept by the lifecycle, exact under races), executors and requisites limited to
 * classes in every mode of the cascade, sliding-window limits per requisite exact under a burst,
 * and a refusal they caused answered as the ordinary PAY_004 and explained as a risk hit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { payinHold } from '../src/ledger/credit.js';
import type { NewPayment } from '../src/payments/cascade/cascade.js';
import { type CascadeMode, insertPaymentWithCascade, insertWindowBatch } from '../src/payments/cascade/cascade.repo.js';
import { isRequisiteLimitReached } from '../src/payments/payments.repo.js';
import {
  admin,
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
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;

const sql = sqlOf(() => service);

beforeAll(async () => {
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000' });
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app);
});
afterAll(async () => service?.close());

// Every test lays out its own pool and its own rules.
beforeEach(async () => {
  await sql('UPDATE requisites SET is_active = false');
  await adminOk(service.app, 'PUT', '/risk/classes', { returning_from: 1, trusted_from: 10 });
  await adminOk(service.app, 'PUT', '/risk/requisite-limits', {});
});

let amountSeq = 0;
/** A fresh amount near `base`, so that no two payments of a test share one on a requisite. */
const amount = (base = 1000) => base + (amountSeq++ % 5000) / 100;

/** A payer with `completed` payments with the merchant, as the lifecycle would have counted them. */
async function payerWith(completed: number): Promise<string> {
  const clientId = uniqueExtId('payer');
  await sql('INSERT INTO payer_history (merchant_id, client_id, completed) VALUES ($1, $2, $3)', [merchant.merchantId, clientId, completed]);
  return clientId;
}

async function create(clientId: string | null, value = amount()) {
  const res = await createPayment(service.app, merchant, {
    ext_id: uniqueExtId(),
    amount: value,
    method: 'CARD',
    ...(clientId ? { client_id: clientId } : {}),
  });
  return res;
}

async function paymentRow(id: string) {
  const [row] = await sql<{ requisite_id: string; payer_class: string | null; status: string }>(
    'SELECT requisite_id, payer_class, status FROM payments WHERE id = $1',
    [id],
  );
  return row!;
}

/** A create as the service makes it, for the cascade's modes called directly. */
function newPayment(clientId: string | null, value = amount()): NewPayment {
  const fixed = value.toFixed(2);
  return {
    merchantId: merchant.merchantId,
    terminalId: merchant.terminalId,
    terminalName: 'Main',
    extId: uniqueExtId('direct'),
    amount: fixed,
    currency: 'RUB',
    method: 'CARD',
    rate: '100',
    rateRefreshId: null,
    payinRate: '2',
    crossBorder: false,
    clientId,
    clientLimit: null,
    notifyUrl: null,
    notificationToken: null,
    pageToken: uniqueExtId('page'),
    ttlSeconds: 900,
    hold: payinHold(fixed, '100').toFixed(),
    types: ['card'],
    bank: null,
    candidates: [{ currency: 'RUB', country: 'RU', payerAmount: fixed }],
  };
}

/** One create in `mode` (or in a batch of its own with a companion), as the service would retry it; the requisite it got, if any. */
async function createIn(mode: CascadeMode | 'batch', clientId: string | null): Promise<string | undefined> {
  let paymentId: string | undefined;
  if (mode === 'batch') {
    const [outcome] = await insertWindowBatch(service.ctx.db, [newPayment(clientId), newPayment(clientId)], 1000);
    paymentId = outcome?.payment?.id;
  } else {
    paymentId = (await insertPaymentWithCascade(service.ctx.db, newPayment(clientId), mode, 1000)).payment?.id;
  }
  return paymentId ? (await paymentRow(paymentId)).requisite_id : undefined;
}

describe('payer classes', () => {
  it('come from the payer’s completed payments with the merchant, counted on completion, with the thresholds in force at the create', async () => {
    const executor = await createExecutor(service.app, 'Classes');
    const card = await createRequisite(service.app, executor.id, { max_amount: null });
    const clientId = uniqueExtId('buyer');

    const first = await create(clientId, 1500);
    expect(first.status).toBe(200);
    expect((await paymentRow(first.body.id)).payer_class).toBe('new');
    await notifyTransfer(service.app, executor.token, card.id, 1500);
    expect((await paymentRow(first.body.id)).status).toBe('COMPLETED');

    const second = await create(clientId, 1501);
    expect((await paymentRow(second.body.id)).payer_class).toBe('returning');
    await notifyTransfer(service.app, executor.token, card.id, 1501);
    expect(await sql('SELECT completed FROM payer_history WHERE merchant_id = $1 AND client_id = $2', [merchant.merchantId, clientId])).toEqual([
      { completed: 2 },
    ]);

    // Thresholds changed: two completed payments now make a trusted payer, at once.
    await adminOk(service.app, 'PUT', '/risk/classes', { returning_from: 1, trusted_from: 2 });
    const third = await create(clientId, 1502);
    expect((await paymentRow(third.body.id)).payer_class).toBe('trusted');
    await adminOk(service.app, 'PUT', '/risk/classes', { returning_from: 3, trusted_from: 5 });
    const fourth = await create(clientId, 1503);
    expect((await paymentRow(fourth.body.id)).payer_class).toBe('new');

    // No client_id: always new. Another merchant's history is not this one's.
    const anonymous = await create(null, 1504);
    expect((await paymentRow(anonymous.body.id)).payer_class).toBe('new');
    const other = await createMerchant(service.app);
    const elsewhere = await createPayment(service.app, other, { ext_id: uniqueExtId(), amount: 1505, method: 'CARD', client_id: clientId });
    expect((await paymentRow(elsewhere.body.id)).payer_class).toBe('new');

    // The operator sees the class on the payment.
    const view = await adminOk(service.app, 'GET', `/payments/${third.body.id}`);
    expect(view.payer_class).toBe('trusted');
    const list = await adminOk<{ payments: { id: string; payer_class: string }[] }>(service.app, 'GET', `/payments?q=${clientId}`);
    expect(list.payments.find((p) => p.id === fourth.body.id)?.payer_class).toBe('new');
  });

  it('two completions of one payer at once both count', async () => {
    const executor = await createExecutor(service.app, 'Twins');
    const cards = [
      await createRequisite(service.app, executor.id, { max_amount: null }),
      await createRequisite(service.app, executor.id, { max_amount: null }),
    ];
    const clientId = uniqueExtId('twin');
    const payments = await Promise.all([create(clientId, 2000), create(clientId, 2001), create(clientId, 2002), create(clientId, 2003)]);
    const rows = await Promise.all(payments.map((p) => paymentRow(p.body.id)));
    await Promise.all(rows.map((row, i) => notifyTransfer(service.app, executor.token, row.requisite_id, 2000 + i)));
    for (const p of payments) expect((await paymentRow(p.body.id)).status).toBe('COMPLETED');
    expect(cards).toHaveLength(2);
    expect(await sql('SELECT completed FROM payer_history WHERE merchant_id = $1 AND client_id = $2', [merchant.merchantId, clientId])).toEqual([
      { completed: 4 },
    ]);
  });

  it('thresholds are the admin’s to set, checked and audited', async () => {
    const bad = await admin(service.app, 'PUT', '/risk/classes', { returning_from: 5, trusted_from: 5 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('VALIDATION');
    expect(await adminOk(service.app, 'PUT', '/risk/classes', { returning_from: 2, trusted_from: 20 })).toMatchObject({ returning_from: 2, trusted_from: 20 });
    expect(await adminOk(service.app, 'GET', '/risk/classes')).toMatchObject({ returning_from: 2, trusted_from: 20 });
    const audit = await adminOk<{ entries: { action: string; after: unknown }[] }>(service.app, 'GET', '/audit?object_type=risk_rules');
    expect(audit.entries.some((e) => e.action === 'risk.classes_set' && (e.after as { trusted_from: number }).trusted_from === 20)).toBe(true);
  });
});

describe('the cascade honours traffic classes', () => {
  for (const mode of ['window', 'all', 'wait', 'batch'] as const) {
    it(`in ${mode} mode: a requisite limited to trusted takes only trusted payers; an executor limited to new gives its requisites to new payers only`, async () => {
      const executor = await createExecutor(service.app, `Only trusted ${mode}`);
      const card = await createRequisite(service.app, executor.id, { max_amount: null });
      await adminOk(service.app, 'PATCH', `/requisites/${card.id}`, { traffic_classes: ['trusted'] });
      const trusted = await payerWith(12);
      const returning = await payerWith(3);

      expect(await createIn(mode, null)).toBeUndefined();
      expect(await createIn(mode, returning)).toBeUndefined();
      expect(await createIn(mode, trusted)).toBe(card.id);

      // The executor's classes apply to its requisites too: with new only, the trusted-only card takes nobody.
      await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { traffic_classes: ['new'] });
      expect(await createIn(mode, trusted)).toBeUndefined();
      const open = await createRequisite(service.app, executor.id, { max_amount: null });
      expect(await createIn(mode, trusted)).toBeUndefined();
      expect(await createIn(mode, null)).toBe(open.id);
      // Lifted: every class again.
      await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { traffic_classes: null });
      await adminOk(service.app, 'PATCH', `/requisites/${card.id}`, { traffic_classes: null });
      expect(await createIn(mode, returning)).toBeDefined();
    });
  }

  it('a burst of creates from every class: each payment lands only on a requisite that takes its payer’s class', async () => {
    const executor = await createExecutor(service.app, 'Burst classes');
    const byClass: Record<string, string[]> = { new: [], returning: [], trusted: [] };
    for (const cls of ['new', 'returning', 'trusted'] as const) {
      for (let i = 0; i < 4; i++) {
        const { id } = await createRequisite(service.app, executor.id, { max_amount: null });
        await adminOk(service.app, 'PATCH', `/requisites/${id}`, { traffic_classes: [cls] });
        byClass[cls]!.push(id);
      }
    }
    const payers = { new: null, returning: await payerWith(2), trusted: await payerWith(30) } as const;
    const classes = Array.from({ length: 36 }, (_, i) => (['new', 'returning', 'trusted'] as const)[i % 3]!);
    const results = await Promise.all(classes.map((cls) => create(payers[cls])));
    for (const [i, res] of results.entries()) {
      expect(res.status).toBe(200);
      const row = await paymentRow(res.body.id);
      expect(row.payer_class).toBe(classes[i]);
      expect(byClass[classes[i]!]).toContain(row.requisite_id);
    }
  });

  it('a create refused only because of classes answers the ordinary PAY_004 and is explained as a traffic_class risk hit', async () => {
    const executor = await createExecutor(service.app, 'Refuser');
    for (let i = 0; i < 4; i++) {
      const { id } = await createRequisite(service.app, executor.id, { max_amount: null });
      await adminOk(service.app, 'PATCH', `/requisites/${id}`, { traffic_classes: ['trusted'] });
    }
    const clientId = uniqueExtId('newcomer');
    const refused = await create(clientId);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('PAY_004');
    expect(JSON.stringify(refused.body)).not.toMatch(/class|trusted|risk/i);
    // Hits are written in the background, batched (RefusalLog): wait for what was recorded.
    await service.ctx.refusals.drain();

    const hits = await sql<{ rule: string; action: string; figure: string; inputs: { client_id: string; payer_class: string } }>(
      `SELECT rule, action, figure, inputs FROM risk_hits WHERE merchant_id = $1 AND inputs->>'client_id' = $2`,
      [merchant.merchantId, clientId],
    );
    expect(hits).toEqual([
      {
        rule: 'traffic_class',
        action: 'refused',
        figure: 'traffic_class new: 4 requisites take only trusted',
        inputs: expect.objectContaining({ client_id: clientId, payer_class: 'new' }),
      },
    ]);
    // A create refused for want of any requisite at all is no risk hit.
    await sql('UPDATE requisites SET is_active = false');
    const empty = uniqueExtId('nobody');
    expect((await create(empty)).status).toBe(503);
    await service.ctx.refusals.drain();
    expect(await sql(`SELECT 1 FROM risk_hits WHERE inputs->>'client_id' = $1`, [empty])).toEqual([]);
  });
});

describe('requisite velocity', () => {
  it('at most N hand-outs per requisite in the window, exact under a burst of creates; the refusals explained as velocity hits', async () => {
    const executor = await createExecutor(service.app, 'Velocity');
    const cards = [
      await createRequisite(service.app, executor.id, { max_amount: null }),
      await createRequisite(service.app, executor.id, { max_amount: null }),
    ];
    expect(await adminOk(service.app, 'PUT', '/risk/requisite-limits', { payments: { max: 3, window_seconds: 600 } })).toMatchObject({
      payments: { max: 3, window_seconds: 600 },
      amount: null,
    });
    const results = await Promise.all(Array.from({ length: 20 }, () => create(null)));
    const created = results.filter((r) => r.status === 200);
    expect(created).toHaveLength(6);
    expect(results.filter((r) => r.status === 503).every((r) => r.body.error === 'PAY_004')).toBe(true);
    const perCard = await sql<{ requisite_id: string; n: number }>(
      'SELECT requisite_id, count(*)::int AS n FROM payments WHERE requisite_id = ANY($1::uuid[]) GROUP BY requisite_id ORDER BY requisite_id',
      [cards.map((c) => c.id)],
    );
    expect(perCard.map((r) => r.n)).toEqual([3, 3]);
    await service.ctx.refusals.drain();
    const hits = await sql<{ figure: string }>(`SELECT figure FROM risk_hits WHERE rule = 'velocity' AND merchant_id = $1`, [merchant.merchantId]);
    expect(hits.length).toBe(14);
    expect(hits[0]!.figure).toBe('velocity requisite: 2 requisites at 3 in 600 s');

    // Lifted: the requisites take payments again.
    await adminOk(service.app, 'PUT', '/risk/requisite-limits', { payments: null });
    expect((await create(null)).status).toBe(200);
  });

  it('the amount window: at most so much per requisite, exact in the all mode too (a create past it looks again)', async () => {
    const executor = await createExecutor(service.app, 'Velocity amount');
    const cards = [
      await createRequisite(service.app, executor.id, { max_amount: null }),
      await createRequisite(service.app, executor.id, { max_amount: null }),
    ];
    await adminOk(service.app, 'PUT', '/risk/requisite-limits', { amount: { max: 5000, window_seconds: 3600 } });
    // 1000.xx each: four fit under 5000 on each requisite, a fifth would not. Each create walks
    // as the service's does without the window: `all`, then `wait` for held requisites, and looks
    // again when the requisite it held turned out past its velocity.
    let lookedAgain = 0;
    const attempt = async (): Promise<boolean> => {
      const payment = newPayment(null, amount(1000));
      for (let i = 0; i < 6; i++) {
        try {
          for (const mode of ['all', 'wait'] as const) {
            if ((await insertPaymentWithCascade(service.ctx.db, { ...payment, extId: uniqueExtId('all') }, mode, 1000)).payment) return true;
          }
          return false;
        } catch (err) {
          if (!isRequisiteLimitReached(err)) throw err;
          lookedAgain++;
        }
      }
      return false;
    };
    const outcomes = await Promise.all(Array.from({ length: 16 }, attempt));
    expect(outcomes.filter(Boolean)).toHaveLength(8);
    const sums = await sql<{ n: number; total: string }>(
      'SELECT count(*)::int AS n, sum(payer_amount) AS total FROM payments WHERE requisite_id = ANY($1::uuid[]) GROUP BY requisite_id',
      [cards.map((c) => c.id)],
    );
    expect(lookedAgain).toBeGreaterThan(0);
    for (const s of sums) {
      expect(s.n).toBe(4);
      expect(Number(s.total)).toBeLessThanOrEqual(5000);
    }
    const bad = await admin(service.app, 'PUT', '/risk/requisite-limits', { amount: { max: 5000, window_seconds: 0 } });
    expect(bad.statusCode).toBe(400);
  });
});
