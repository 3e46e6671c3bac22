/*
 * Risk rules, blocks (issue 36 items 1 and 5; DESIGN.md "Risk rules (contract)"): the operator's
 * routes (roles, audit, validation, "block from a payment"), a blocked client_id's create answering
 * exactly the pool's own PAY_004, hits and lost demand recorded, per-merchant vs global, expiry,
 * removal, and a payout to a blocked card or phone refused as bad requisites are.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  testCard,
  testPhone,
  uniqueExtId,
  until,
} from './helpers.js';

let service: TestService;
let app: FastifyInstance;
let a: MerchantCredentials;
let b: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  app = service.app;
  await setRate(app, 'RUB', 95);
  a = await createMerchant(app);
  b = await createMerchant(app);
  const executor = await createExecutor(app);
  for (let i = 0; i < 6; i++) await createRequisite(app, executor.id);
});
afterAll(async () => service?.close());

const sql = async <T = Record<string, any>>(text: string, values: unknown[] = []) => (await service.ctx.db.query(text, values)).rows as T[];
const pay = (creds: MerchantCredentials, body: Record<string, unknown> = {}) =>
  createPayment(app, creds, { ext_id: uniqueExtId(), amount: 1000 + Math.floor(Math.random() * 9000), ...body });

describe('blocks: the operator routes', () => {
  it('POST answers 201 with the shown value only; GET lists it; the audit names the person; DELETE answers 204 and keeps it', async () => {
    const card = testCard();
    const res = await admin(app, 'POST', '/risk/blocks', { kind: 'card', value: card.replace(/(\d{4})/g, '$1 ').trim(), reason: 'chargebacks' });
    expect(res.statusCode).toBe(201);
    const block = res.json();
    expect(block).toMatchObject({
      kind: 'card',
      value_shown: `${card.slice(0, 6)}…${card.slice(-4)}`,
      merchant_id: null,
      reason: 'chargebacks',
      expires_at: null,
      created_by: 'token',
      active: true,
    });
    expect(JSON.stringify(block)).not.toContain(card);
    // Never in clear in the table either.
    const [row] = await sql('SELECT * FROM risk_blocks WHERE id = $1', [block.id]);
    expect(JSON.stringify(row)).not.toContain(card);
    expect(row!.value_hash).toMatch(/^[0-9a-f]{64}$/);

    const list = await adminOk<{ blocks: any[]; total: number; limit: number; offset: number }>(app, 'GET', '/risk/blocks?kind=card&active=true');
    expect(list.blocks.map((x) => x.id)).toContain(block.id);
    expect(list).toMatchObject({ limit: 100, offset: 0 });

    const [audit] = await sql("SELECT actor, before, after FROM audit_log WHERE action = 'risk.block' AND object_id = $1", [block.id]);
    expect(audit).toMatchObject({ actor: 'token', before: null, after: expect.objectContaining({ kind: 'card', reason: 'chargebacks' }) });

    expect((await admin(app, 'DELETE', `/risk/blocks/${block.id}`)).statusCode).toBe(204);
    expect((await admin(app, 'DELETE', `/risk/blocks/${block.id}`)).statusCode).toBe(404);
    const removed = await adminOk<{ blocks: any[] }>(app, 'GET', '/risk/blocks?active=false&kind=card');
    expect(removed.blocks.find((x) => x.id === block.id)).toMatchObject({ removed_by: 'token', active: false });
    const [unblock] = await sql("SELECT before, after FROM audit_log WHERE action = 'risk.unblock' AND object_id = $1", [block.id]);
    expect(unblock).toMatchObject({ before: expect.objectContaining({ active: true }), after: expect.objectContaining({ active: false }) });
  });

  it('bad input answers 400 VALIDATION with what is wrong', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ kind: 'card', value: '1234', reason: 'x' }, /Luhn/],
      [{ kind: 'phone', value: 'abc', reason: 'x' }, /phone/],
      [{ kind: 'ip', value: '999.1.1.1', reason: 'x' }, /IPv4/],
      [{ kind: 'client_id', reason: 'x' }, /exactly one of value, payment_id or dispute_id/],
      [{ kind: 'client_id', value: 'c', payment_id: 'x', reason: 'x' }, /exactly one/],
      [{ kind: 'client_id', value: 'c', reason: '   ' }, /reason/],
      [{ kind: 'client_id', value: 'c', reason: 'x', expires_at: '2001-01-01T00:00:00Z' }, /future/],
      [{ kind: 'client_id', value: 'c', reason: 'x', merchant_id: 'nope' }, /merchant_id/],
    ];
    for (const [body, message] of cases) {
      const res = await admin(app, 'POST', '/risk/blocks', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('VALIDATION');
      expect(res.json().message).toMatch(message);
    }
    const kind = await admin(app, 'POST', '/risk/blocks', { kind: 'email', value: 'x', reason: 'x' });
    expect(kind.statusCode).toBe(400);
  });

  it('block from an unknown payment is 404', async () => {
    expect((await admin(app, 'POST', '/risk/blocks', { kind: 'client_id', payment_id: '00000000-0000-4000-8000-000000000000', reason: 'x' })).statusCode).toBe(
      404,
    );
  });
});

describe('blocks: a blocked client_id is refused as an empty pool refuses', () => {
  it('the refusal body equals the ordinary "no requisites" PAY_004 byte for byte; the hit and the lost demand are recorded', async () => {
    // The ordinary refusal: a currency and method no requisite serves (KZT terminal with a rate, no KZT requisites).
    const kzt = await createMerchant(app, { currency: 'KZT' });
    await setRate(app, 'KZT', 480);
    const body = (clientId: string) => ({ ext_id: 'same-ext', amount: 5000, currency: 'KZT', client_id: clientId });
    const ordinary = await signed(app, kzt, 'POST', '/v1/payments', body('innocent'));
    expect(ordinary.statusCode).toBe(503);

    // Now a KZT requisite exists, so only the block can refuse.
    const executor = await createExecutor(app);
    await createRequisite(app, executor.id, { currency: 'KZT', country: 'KZ', bank: null });
    const block = await adminOk<{ id: string }>(app, 'POST', '/risk/blocks', { kind: 'client_id', value: 'fraudster-1', reason: 'disputes everything' });
    const refused = await signed(app, kzt, 'POST', '/v1/payments', body('fraudster-1'));
    expect(refused.statusCode).toBe(503);
    expect(refused.body).toBe(ordinary.body);
    expect(refused.headers['retry-after']).toBe(ordinary.headers['retry-after']);
    // The innocent payer is served (the requisite exists), so the block alone refused.
    expect((await signed(app, kzt, 'POST', '/v1/payments', body('innocent'))).statusCode).toBe(200);

    await service.ctx.refusals.drain();
    const hits = await sql("SELECT * FROM risk_hits WHERE rule = 'block' AND merchant_id = $1", [kzt.merchantId]);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({
      action: 'refused',
      terminal_id: kzt.terminalId,
      payment_id: null,
      inputs: { kind: 'client_id', block_id: block.id, client_id: 'fraudster-1' },
      figure: `block client_id (block ${block.id}): disputes everything`,
    });
    const refusals = await sql('SELECT code, risk_rule FROM payment_refusals WHERE merchant_id = $1 ORDER BY created_at', [kzt.merchantId]);
    expect(refusals).toEqual([
      { code: 'PAY_004', risk_rule: null },
      { code: 'PAY_004', risk_rule: 'block' },
    ]);
  });

  it('a block for merchant A holds for A only; a global block for every merchant', async () => {
    await adminOk(app, 'POST', '/risk/blocks', { kind: 'client_id', value: 'only-at-a', merchant_id: a.merchantId, reason: 'A asked' });
    expect((await pay(a, { client_id: 'only-at-a' })).status).toBe(503);
    expect((await pay(b, { client_id: 'only-at-a' })).status).toBe(200);
    await adminOk(app, 'POST', '/risk/blocks', { kind: 'client_id', value: 'everywhere', reason: 'known fraud' });
    expect((await pay(a, { client_id: 'everywhere' })).status).toBe(503);
    expect((await pay(b, { client_id: 'everywhere' })).status).toBe(503);
    // Merchant B's listing filter finds nothing of A's.
    const bList = await adminOk<{ blocks: any[] }>(app, 'GET', `/risk/blocks?merchant_id=${b.merchantId}`);
    expect(bList.blocks).toEqual([]);
  });

  it('an expired block and a removed one no longer refuse; a second instance sees a new block at once', async () => {
    const block = await adminOk<{ id: string }>(app, 'POST', '/risk/blocks', {
      kind: 'client_id',
      value: 'short-lived',
      reason: 'cooling off',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await pay(a, { client_id: 'short-lived' })).status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    expect((await pay(a, { client_id: 'short-lived' })).status).toBe(200);
    expect((await adminOk<{ blocks: any[] }>(app, 'GET', '/risk/blocks?active=false')).blocks.map((x) => x.id)).toContain(block.id);

    const other = await service.startAnother();
    expect((await createPayment(other.app, a, { ext_id: uniqueExtId(), amount: 1234, client_id: 'late' })).status).toBe(200);
    const late = await adminOk<{ id: string }>(app, 'POST', '/risk/blocks', { kind: 'client_id', value: 'late', reason: 'found later' });
    // The other instance forgets its rules on the announcement (milliseconds).
    await until(async () => (await createPayment(other.app, a, { ext_id: uniqueExtId(), amount: 1235, client_id: 'late' })).status === 503 || undefined);
    await adminOk(app, 'DELETE', `/risk/blocks/${late.id}`);
    await until(async () => (await createPayment(other.app, a, { ext_id: uniqueExtId(), amount: 1236, client_id: 'late' })).status === 200 || undefined);
  });

  it('block from a payment in one step: the server takes the client_id the payment carries', async () => {
    const created = await pay(a, { client_id: 'from-payment' });
    expect(created.status).toBe(200);
    const block = await adminOk<{ value_shown: string; kind: string }>(app, 'POST', '/risk/blocks', {
      kind: 'client_id',
      payment_id: created.body.id,
      reason: 'seen on payment',
    });
    expect(block).toMatchObject({ kind: 'client_id', value_shown: 'from-payment' });
    expect((await pay(b, { client_id: 'from-payment' })).status).toBe(503);
    // A payment whose page was never opened has no IP.
    const noIp = await admin(app, 'POST', '/risk/blocks', { kind: 'ip', payment_id: created.body.id, reason: 'x' });
    expect(noIp.statusCode).toBe(400);
    expect(noIp.json().message).toMatch(/no ip/);
  });
});

describe('blocks: payouts', () => {
  it('a payout to a blocked card or phone is refused with PAY_002 as bad requisites are, with a hit; other requisites pass the check', async () => {
    const card = testCard();
    const phone = testPhone();
    await adminOk(app, 'POST', '/risk/blocks', { kind: 'card', value: card, reason: 'stolen card' });
    await adminOk(app, 'POST', '/risk/blocks', { kind: 'phone', value: phone.replace('+7', '8'), reason: 'mule' });
    const payout = (requisites: string, method: string, bank?: string) =>
      signed(app, a, 'POST', '/v1/payouts', { ext_id: uniqueExtId('po'), amount: 500, method, requisites, holder_name: 'Ivan I.', ...(bank ? { bank } : {}) });
    const byCard = await payout(card, 'card');
    expect(byCard.statusCode).toBe(400);
    expect(byCard.json()).toMatchObject({ error: 'PAY_002', message: 'requisites cannot receive a payout; use other requisites' });
    const byPhone = await payout(phone, 'sbp', 'sberbank');
    expect(byPhone.statusCode).toBe(400);
    expect(byPhone.json().error).toBe('PAY_002');
    // Another card is not refused by the block (it fails later, on the balance, or passes).
    const other = await payout(testCard(), 'card');
    expect(other.json().message ?? '').not.toMatch(/cannot receive a payout/);

    const hits = await sql("SELECT inputs, figure FROM risk_hits WHERE rule = 'block' AND inputs->>'kind' IN ('card', 'phone') ORDER BY created_at");
    expect(hits).toHaveLength(2);
    expect(hits[0]!.inputs.requisites).toBe(`${card.slice(0, 6)}******${card.slice(-4)}`);
    expect(hits[0]!.figure).toMatch(/^block card \(block [0-9a-f-]+\): stolen card$/);
    expect(JSON.stringify(hits)).not.toContain(card);
    expect(JSON.stringify(hits)).not.toContain(phone.slice(1));
  });
});

describe('blocks and IP velocity on the payment page', () => {
  const pathOf = (url: string) => new URL(url).pathname;
  const openPage = (url: string, ip: string) => app.inject({ method: 'GET', url: pathOf(url), remoteAddress: ip });
  const merchantView = async (creds: MerchantCredentials, id: string) => (await signed(app, creds, 'GET', `/v1/payments/${id}`)).json();

  it('a blocked IP is not shown the requisites: the payment is cancelled through its lifecycle, with a hit; the merchant learns nothing of why', async () => {
    const created = await pay(a, { client_id: 'page-ip', notify_url: 'http://127.0.0.1:9/hook' });
    expect(created.status).toBe(200);
    const block = await adminOk<{ id: string }>(app, 'POST', '/risk/blocks', { kind: 'ip', value: '::ffff:203.0.113.7', reason: 'bot farm' });
    const page = await openPage(created.body.payment_url, '203.0.113.7');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-state="cancelled"');
    expect(page.body).not.toContain(created.body.requisites.card ?? created.body.requisites.value ?? '\u0000');
    const view = await merchantView(a, created.body.id);
    expect(view.status).toBe('CANCELLED');
    expect(JSON.stringify(view)).not.toMatch(/risk|block|bot farm/);
    // The ordinary webhook of a cancelled payment, nothing in it of why.
    const events = await sql('SELECT payload FROM webhook_events WHERE resource_id = $1', [created.body.id]);
    expect(events.map((e) => e.payload.status)).toEqual(['CANCELLED']);
    expect(JSON.stringify(events)).not.toMatch(/risk|block|bot farm/);
    const hits = await sql('SELECT figure, inputs, payment_id FROM risk_hits WHERE payment_id = $1', [created.body.id]);
    expect(hits).toEqual([
      { payment_id: created.body.id, inputs: { kind: 'ip', block_id: block.id, ip: '203.0.113.7' }, figure: `block ip (block ${block.id}): bot farm` },
    ]);
    // Another payer's address is served.
    const fine = await pay(a, { client_id: 'page-ip-2' });
    const ok = await openPage(fine.body.payment_url, '198.51.100.1');
    expect(ok.body).toContain('data-state="pay"');
    expect((await merchantView(a, fine.body.id)).status).toBe('PENDING');
    // What the page saw is kept: block from that payment in one step.
    const [row] = await sql('SELECT payer_ip FROM payments WHERE id = $1', [fine.body.id]);
    expect(row!.payer_ip).toBe('198.51.100.1');
    const fromPayment = await adminOk<{ value_shown: string }>(app, 'POST', '/risk/blocks', {
      kind: 'ip',
      payment_id: fine.body.id,
      reason: 'same farm',
      merchant_id: b.merchantId,
    });
    expect(fromPayment.value_shown).toBe('198.51.100.1');
  });

  it('a blocked device fingerprint: the status the page script polls cancels the payment', async () => {
    const created = await pay(b, { client_id: 'page-device' });
    const device = 'k3j4h5g6f7d8s9a0.1a2b3c4d';
    await adminOk(app, 'POST', '/risk/blocks', { kind: 'device', value: device, reason: 'same browser, ten cards', merchant_id: b.merchantId });
    const base = pathOf(created.body.payment_url);
    // Another device is served.
    const other = await app.inject({ method: 'GET', url: `${base}/status?device=zzzzzzzzzzzzzzzz.00000000` });
    expect(other.json().state).toBe('pay');
    const status = await app.inject({ method: 'GET', url: `${base}/status?device=${encodeURIComponent(device)}` });
    expect(status.json()).toMatchObject({ state: 'cancelled', status: 'CANCELLED' });
    const [row] = await sql('SELECT payer_device, cancel_reason FROM payments WHERE id = $1', [created.body.id]);
    // The first device the page saw is the one kept.
    expect(row).toEqual({ payer_device: 'zzzzzzzzzzzzzzzz.00000000', cancel_reason: 'risk' });
    // The block holds for merchant B only.
    const atA = await pay(a, { client_id: 'page-device' });
    expect((await app.inject({ method: 'GET', url: `${pathOf(atA.body.payment_url)}/status?device=${encodeURIComponent(device)}` })).json().state).toBe('pay');
  });

  it('IP velocity: the pages one address opens are counted once each; past the limit the payment is cancelled with the figure', async () => {
    await adminOk(app, 'PUT', '/risk/limits', { scope: 'ip', window_seconds: 600, max_payments: 2 });
    try {
      const ip = '192.0.2.44';
      const payments: Record<string, any>[] = [];
      for (let i = 0; i < 3; i++) payments.push((await pay(a, { amount: 2000 + i })).body);
      expect((await openPage(payments[0]!.payment_url, ip)).body).toContain('data-state="pay"');
      // Reopening one's own page is no new payment.
      expect((await openPage(payments[0]!.payment_url, ip)).body).toContain('data-state="pay"');
      expect((await openPage(payments[1]!.payment_url, ip)).body).toContain('data-state="pay"');
      expect((await openPage(payments[2]!.payment_url, ip)).body).toContain('data-state="cancelled"');
      const [hit] = await sql("SELECT figure FROM risk_hits WHERE rule = 'velocity' AND payment_id = $1", [payments[2]!.id]);
      expect(hit!.figure).toBe('velocity ip 3 in 600 s > 2');
    } finally {
      await adminOk(app, 'DELETE', '/risk/limits?scope=ip');
    }
  });
});
