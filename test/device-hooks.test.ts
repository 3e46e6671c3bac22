import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskUrl } from '../src/lib/mask.js';
import {
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  executorCall,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
} from './helpers.js';

// The Android forwarders' webhooks (docs/devices.md), each in its own format and signature.
let service: TestService;
let app: FastifyInstance;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  app = service.app;
  await setRate(app, 'RUB', 95.5);
  merchant = await createMerchant(app);
});
afterAll(async () => service?.close());

let amountSeq = 0;
const nextAmount = () => 2000 + ++amountSeq * 11;
const sms = (last4: string, amount: number) => `MIR-${last4} 10:05 зачисление ${amount}р Баланс: 10000р`;

/** A fresh executor with one card and one phone (earlier cards switched off), and a payment waiting on that card. */
async function setup() {
  await service.ctx.db.query('UPDATE requisites SET is_active = false');
  const executor = await createExecutor(app);
  const card = await createRequisite(app, executor.id);
  const device = (await executorCall(app, executor.token, 'POST', '/devices', { name: 'Redmi' })).json() as {
    id: string;
    token: string;
    signing_secret: string;
  };
  const amount = nextAmount();
  const payment = (await createPayment(app, merchant, { ext_id: `hook-${Date.now()}-${amount}`, amount })).body as { id: string };
  return { executor, card, device, amount, payment };
}

function post(token: string, format: string, body: string, headers: Record<string, string>) {
  return app.inject({ method: 'POST', url: `/device/v1/hooks/${token}/${format}`, headers, payload: body });
}

async function statusOf(paymentId: string): Promise<string> {
  return (await signed(app, merchant, 'GET', `/v1/payments/${paymentId}`)).json().status;
}

describe('SmsForwarder (pppscn/SmsForwarder)', () => {
  const signOf = (secret: string, ts: string) => encodeURIComponent(createHmac('sha256', secret).update(`${ts}\n${secret}`).digest('base64'));

  it('a JSON template completes the payment; a retry answers the same; the same timestamp with another body is a replay', async () => {
    const { card, device, amount, payment } = await setup();
    const ts = String(Date.now());
    const body = JSON.stringify({
      from: '900',
      text: sms(card.value.slice(-4), amount),
      title: 'SIM1_Sber',
      timestamp: ts,
      sign: signOf(device.signing_secret, ts),
    });
    const res = await post(device.token, 'smsforwarder', body, { 'content-type': 'application/json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
    expect(await statusOf(payment.id)).toBe('COMPLETED');
    expect((await post(device.token, 'smsforwarder', body, { 'content-type': 'application/json' })).json()).toMatchObject({ duplicate: true });

    const forged = JSON.stringify({ from: '900', text: sms(card.value.slice(-4), amount + 1), timestamp: ts, sign: signOf(device.signing_secret, ts) });
    const replay = await post(device.token, 'smsforwarder', forged, { 'content-type': 'application/json' });
    expect([replay.statusCode, replay.json().error]).toEqual([401, 'AUTH_002']);
    expect(replay.json().message).toMatch(/replay/);
  });

  it('the default form (sign encoded twice) works; a wrong sign, a stale timestamp and no sign are refused', async () => {
    const { card, device, amount, payment } = await setup();
    const ts = String(Date.now());
    const form = new URLSearchParams({ from: '900', content: sms(card.value.slice(-4), amount), timestamp: ts, sign: signOf(device.signing_secret, ts) });
    const res = await post(device.token, 'smsforwarder', form.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });

    const wrong = new URLSearchParams({ from: '900', content: 'x', timestamp: ts, sign: signOf('another secret', ts) });
    expect((await post(device.token, 'smsforwarder', wrong.toString(), { 'content-type': 'application/x-www-form-urlencoded' })).statusCode).toBe(401);
    const old = String(Date.now() - 3_600_000);
    const stale = new URLSearchParams({ from: '900', content: 'x', timestamp: old, sign: signOf(device.signing_secret, old) });
    const staleRes = await post(device.token, 'smsforwarder', stale.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    expect([staleRes.statusCode, staleRes.json().message]).toEqual([401, "The timestamp is more than 15 minutes off: check the phone's clock"]);
    const unsigned = await post(device.token, 'smsforwarder', JSON.stringify({ from: '900', text: 'x' }), { 'content-type': 'application/json' });
    expect(unsigned.statusCode).toBe(401);
  });
});

describe('SMS Gateway for Android (capcom6/android-sms-gateway)', () => {
  const headersFor = (secret: string, body: string, ts = String(Math.floor(Date.now() / 1000))) => ({
    'content-type': 'application/json',
    'x-timestamp': ts,
    'x-signature': createHmac('sha256', secret)
      .update(body + ts)
      .digest('hex'),
  });

  it('sms:received completes the payment; system:ping records the battery; other events are acknowledged', async () => {
    const { executor, card, device, amount, payment } = await setup();
    const body = JSON.stringify({
      deviceId: 'ffffffffceb0b1db',
      event: 'sms:received',
      id: 'Ey6ECgOkVVFjz3CL48B8C',
      payload: { messageId: 'abc', message: sms(card.value.slice(-4), amount), sender: '900', simNumber: 1, receivedAt: '2026-11-24T15:46:11.000+03:00' },
      webhookId: 'kassir',
    });
    const res = await post(device.token, 'sms-gateway', body, headersFor(device.signing_secret, body));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });

    const ping = JSON.stringify({
      event: 'system:ping',
      id: 'p1',
      payload: { health: { status: 'pass', version: '1.40.0', checks: { 'battery:level': { observedValue: 64 } } } },
    });
    expect((await post(device.token, 'sms-gateway', ping, headersFor(device.signing_secret, ping))).json()).toEqual({ alive: true });
    const listed = (await executorCall(app, executor.token, 'GET', '/devices')).json().devices;
    expect(listed).toEqual([expect.objectContaining({ battery: 64, app_version: '1.40.0' })]);

    const sent = JSON.stringify({ event: 'sms:sent', id: 's1', payload: {} });
    expect((await post(device.token, 'sms-gateway', sent, headersFor(device.signing_secret, sent))).json()).toEqual({
      ignored: 'event sms:sent is not a received message',
    });
  });

  it('a wrong signature, a stale timestamp and an unsigned request are refused', async () => {
    const { device } = await setup();
    const body = JSON.stringify({ event: 'sms:received', id: 'x', payload: { message: 'x', sender: '900' } });
    const bad = await post(device.token, 'sms-gateway', body, headersFor('wrong', body));
    expect([bad.statusCode, bad.json().error]).toEqual([401, 'AUTH_002']);
    const old = String(Math.floor(Date.now() / 1000) - 3600);
    expect((await post(device.token, 'sms-gateway', body, headersFor(device.signing_secret, body, old))).statusCode).toBe(401);
    expect((await post(device.token, 'sms-gateway', body, { 'content-type': 'application/json' })).statusCode).toBe(401);
  });
});

describe('Incoming SMS to URL forwarder (bogkonstantin/android_income_sms_gateway_webhook)', () => {
  it('the default template, signed, completes the payment; unsigned or wrongly signed is refused', async () => {
    const { card, device, amount, payment } = await setup();
    const body = `{\n  "from":"900",\n  "text":"${sms(card.value.slice(-4), amount)}",\n  "sentStamp":${Date.now()},\n  "receivedStamp":${Date.now()},\n  "sim":"sim1"\n}`;
    const signature = createHmac('sha256', device.signing_secret).update(body).digest('hex');
    const res = await post(device.token, 'incoming-sms', body, { 'content-type': 'application/json; charset=utf-8', 'x-signature': signature });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ matched: true, payment_id: payment.id });
    expect((await post(device.token, 'incoming-sms', body, { 'content-type': 'application/json' })).statusCode).toBe(401);
    // A notification title as long as an app likes is kept (cut), never a 500; an endless text is refused by name.
    const long = JSON.stringify({ from: 'x'.repeat(500), text: 'непонятный текст' });
    const kept = await post(device.token, 'incoming-sms', long, {
      'content-type': 'application/json',
      'x-signature': createHmac('sha256', device.signing_secret).update(long).digest('hex'),
    });
    expect([kept.statusCode, kept.json().status]).toEqual([200, 'unreadable']);
    const huge = JSON.stringify({ from: '900', text: 'я'.repeat(5000) });
    const refused = await post(device.token, 'incoming-sms', huge, {
      'content-type': 'application/json',
      'x-signature': createHmac('sha256', device.signing_secret).update(huge).digest('hex'),
    });
    expect([refused.statusCode, refused.json().error]).toEqual([400, 'VALIDATION']);
    const wrong = createHmac('sha256', 'nope').update(body).digest('hex');
    expect((await post(device.token, 'incoming-sms', body, { 'content-type': 'application/json', 'x-signature': wrong })).statusCode).toBe(401);
  });
});

describe('the hook URL', () => {
  it('refuses an unknown token and format, and never writes the token to the log', async () => {
    const { device } = await setup();
    expect((await post('dev_unknown_token_xxxxxxxxxxxxxxxxxxxxxx', 'smsforwarder', '{}', { 'content-type': 'application/json' })).statusCode).toBe(401);
    const unknown = await post(device.token, 'telegram', '{}', { 'content-type': 'application/json' });
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'NOT_FOUND']);
    expect(maskUrl(`/device/v1/hooks/${device.token}/smsforwarder`, '/pay', '/device/v1/hooks')).toBe(
      `/device/v1/hooks/${device.token.slice(0, 6)}***/smsforwarder`,
    );
  });
});
