/**
 * Issue 30, items 5 and 6 on the API. A payment's cancellation and a dispute's rejection take the
 * reason a person gives (`{reason}`, optional on the API — DESIGN lists them with no body — and
 * always sent by the console): it is stored on the payment and the dispute, and shown in the
 * payment's detail, its timeline and the audit row. A payment completed through a dispute shows no
 * cancel reason anywhere: the operator's and the merchant cabinet's views and CSVs, and the API.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
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

const PASSWORD = 'correct horse battery';

let service: TestService;
let app: FastifyInstance;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  app = service.app;
  await setRate(app, 'RUB', 100);
  merchant = await createMerchant(app);
  const executor = await createExecutor(app, 'Trader', { deposit: 1000 });
  for (let i = 0; i < 3; i++) await createRequisite(app, executor.id);
});
afterAll(async () => service?.close());

async function pay(amount: number): Promise<{ id: string; ext_id: string }> {
  const res = await signed(app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('decide'), amount });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function dispute(paymentId: string, amount: number): Promise<void> {
  const res = await signed(app, merchant, 'POST', `/v1/payments/${paymentId}/dispute`, { amount });
  expect(res.statusCode, res.body).toBe(200);
}

async function auditAfter(action: string, paymentId: string): Promise<unknown[]> {
  const { rows } = await service.ctx.db.query('SELECT after FROM audit_log WHERE action = $1 AND object_id = $2', [action, paymentId]);
  return rows.map((r) => r.after);
}

type Item = Record<string, unknown> & { kind: string };
async function timeline(paymentId: string): Promise<Item[]> {
  return (await adminOk<{ timeline: Item[] }>(app, 'GET', `/payments/${paymentId}/timeline`)).timeline;
}

describe('a cancellation’s reason (item 5)', () => {
  it('is stored on the payment, shown in its detail and timeline, and in the audit row', async () => {
    const payment = await pay(1000);
    const cancelled = await admin(app, 'POST', `/payments/${payment.id}/cancel`, { reason: 'The payer asked to stop' });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().status).toBe('CANCELLED');
    expect(await adminOk(app, 'GET', `/payments/${payment.id}`)).toMatchObject({ cancel_reason: 'manual', cancel_note: 'The payer asked to stop' });
    expect((await timeline(payment.id)).find((i) => i.kind === 'status_changed' && i.to === 'CANCELLED')).toMatchObject({
      reason: 'manual',
      note: 'The payer asked to stop',
      by: 'token',
    });
    expect(await auditAfter('payment.cancel', payment.id)).toEqual([{ status: 'CANCELLED', reason: 'The payer asked to stop' }]);
  });

  it('is optional on the API (older clients send no body); a blank one is refused and changes nothing', async () => {
    const blank = await pay(1001);
    const refused = await admin(app, 'POST', `/payments/${blank.id}/cancel`, { reason: '   ' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(/reason/) });
    expect((await adminOk<{ status: string }>(app, 'GET', `/payments/${blank.id}`)).status).toBe('PENDING');

    const bare = await app.inject({ method: 'POST', url: `/admin/v1/payments/${blank.id}/cancel`, headers: { authorization: 'Bearer test-admin-token' } });
    expect(bare.statusCode, bare.body).toBe(200);
    expect(await adminOk(app, 'GET', `/payments/${blank.id}`)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'manual', cancel_note: null });
  });
});

describe('a dispute’s rejection reason (item 5)', () => {
  it('is stored on the dispute and the payment, shown on the dispute card, the timeline and the audit row', async () => {
    const payment = await pay(1100);
    await adminOk(app, 'POST', `/payments/${payment.id}/cancel`, { reason: 'Expired at the bank' });
    await dispute(payment.id, 1100);
    const rejected = await admin(app, 'POST', `/payments/${payment.id}/dispute/reject`, { reason: 'The receipt is for another card' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json().status).toBe('CANCELLED');

    const cards = await adminOk<{ disputes: { payment: { id: string }; status: string; decision_reason: string | null }[] }>(
      app,
      'GET',
      '/disputes?status=rejected',
    );
    expect(cards.disputes.find((d) => d.payment.id === payment.id)).toMatchObject({ status: 'rejected', decision_reason: 'The receipt is for another card' });
    expect(await adminOk(app, 'GET', `/payments/${payment.id}`)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'dispute_rejected',
      cancel_note: 'The receipt is for another card',
    });
    const items = await timeline(payment.id);
    expect(items.find((i) => i.kind === 'dispute_decided')).toMatchObject({ outcome: 'rejected', decision_reason: 'The receipt is for another card' });
    // The first cancellation keeps its own reason in the history.
    expect(items.filter((i) => i.kind === 'status_changed' && i.to === 'CANCELLED').map((i) => i.note)).toEqual([
      'Expired at the bank',
      'The receipt is for another card',
    ]);
    expect(await auditAfter('dispute.reject', payment.id)).toEqual([{ status: 'CANCELLED', reason: 'The receipt is for another card' }]);
  });

  it('is optional on the API, as DESIGN lists reject with no body; a blank one is refused', async () => {
    const payment = await pay(1101);
    await adminOk(app, 'POST', `/payments/${payment.id}/cancel`);
    await dispute(payment.id, 1101);
    const refused = await admin(app, 'POST', `/payments/${payment.id}/dispute/reject`, { reason: '' });
    expect(refused.statusCode).toBe(400);
    expect((await adminOk<{ status: string }>(app, 'GET', `/payments/${payment.id}`)).status).toBe('DISPUTE');
    const bare = await app.inject({
      method: 'POST',
      url: `/admin/v1/payments/${payment.id}/dispute/reject`,
      headers: { authorization: 'Bearer test-admin-token' },
    });
    expect(bare.statusCode, bare.body).toBe(200);
    expect(await adminOk(app, 'GET', `/payments/${payment.id}`)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute_rejected', cancel_note: null });
  });
});

describe('a payment completed through a dispute shows no cancel reason (item 6)', () => {
  it('in the operator’s and the merchant cabinet’s views and CSVs, and on the merchant API', async () => {
    const payment = await pay(1200);
    await adminOk(app, 'POST', `/payments/${payment.id}/cancel`, { reason: 'The payer gave up' });
    await dispute(payment.id, 1150);
    await adminOk(app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: 1150 });

    // The operator.
    expect(await adminOk(app, 'GET', `/payments/${payment.id}`)).toMatchObject({ status: 'COMPLETED_APPEAL', cancel_reason: null, cancel_note: null });
    const list = await adminOk<{ payments: { id: string; cancel_reason: string | null }[] }>(app, 'GET', `/payments?q=${payment.ext_id}`);
    expect(list.payments).toEqual([expect.objectContaining({ id: payment.id, cancel_reason: null })]);
    const csv = (await admin(app, 'GET', `/payments?q=${payment.ext_id}&format=csv`)).body;
    expect(csvRow(csv, payment.ext_id).cancel_reason).toBe('');
    const cards = await adminOk<{ disputes: { payment: { id: string; cancel_reason: string | null } }[] }>(app, 'GET', '/disputes?status=approved');
    expect(cards.disputes.find((d) => d.payment.id === payment.id)!.payment.cancel_reason).toBeNull();

    // The merchant cabinet.
    const session = await merchantSession();
    const detail = await cabinet(session, `/merchant/v1/payments/${payment.id}`);
    expect(detail.json()).toMatchObject({ status: 'COMPLETED_APPEAL', cancel_reason: null });
    const found = await cabinet(session, `/merchant/v1/payments?q=${payment.ext_id}`);
    expect(found.json().payments).toEqual([expect.objectContaining({ id: payment.id, cancel_reason: null })]);
    expect(csvRow((await cabinet(session, `/merchant/v1/payments?q=${payment.ext_id}&format=csv`)).body, payment.ext_id).cancel_reason).toBe('');

    // The merchant API: the spec's payment has no cancel reason at all.
    const api = (await signed(app, merchant, 'GET', `/v1/payments/${payment.id}`)).json();
    expect(api.status).toBe('COMPLETED_APPEAL');
    expect(api).not.toHaveProperty('cancel_reason');

    // The history still tells the cancellation and why.
    expect((await timeline(payment.id)).find((i) => i.kind === 'status_changed' && i.to === 'CANCELLED')).toMatchObject({
      reason: 'manual',
      note: 'The payer gave up',
    });
  });
});

/** The row of a CSV whose ext_id is `extId`, by the header's column names. */
function csvRow(csv: string, extId: string): Record<string, string> {
  const [header, ...rows] = csv.trim().split(/\r?\n/);
  const names = header!.split(',');
  const row = rows.find((r) => r.includes(extId));
  expect(row, csv).toBeDefined();
  const values = row!.split(',');
  return Object.fromEntries(names.map((name, i) => [name, values[i] ?? '']));
}

interface Session {
  cookie: string;
  csrf: string;
}

async function merchantSession(): Promise<Session> {
  const user = await adminOk<{ email: string }>(app, 'POST', `/merchants/${merchant.merchantId}/users`, {
    email: `m.${Date.now()}@kassir.test`,
    password: PASSWORD,
  });
  const res = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: user.email, password: PASSWORD } });
  expect(res.statusCode, res.body).toBe(200);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().csrf_token };
}

function cabinet(session: Session, url: string) {
  return app.inject({ method: 'GET', url, headers: { cookie: session.cookie } });
}
