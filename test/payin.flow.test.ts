import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha1Base64 } from '../src/lib/crypto.js';
import {
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
  webhookReceiver,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let hook: Awaited<ReturnType<typeof webhookReceiver>>;

beforeAll(async () => {
  service = await startTestService({}, { worker: true });
  hook = await webhookReceiver();
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { payin_rate: 2.5 });
  executor = await createExecutor(service.app);
});
afterAll(async () => {
  hook?.server.close();
  await service?.close();
});

describe('pay-in end to end', () => {
  it('create → executor notification → COMPLETED → terminal credited → signed webhook with the notification token', async () => {
    const requisite = await createRequisite(service.app, executor.id);
    const before = (await signed(service.app, merchant, 'GET', '/v1/balance')).json();
    const { body: payment } = await createPayment(service.app, merchant, {
      ext_id: uniqueExtId(),
      amount: 1500,
      notify_url: hook.url,
      notification_token: 'merchant-token-42',
    });

    const notified = await service.app.inject({
      method: 'POST',
      url: '/executor/v1/notifications',
      headers: { authorization: `Bearer ${executor.token}`, 'content-type': 'application/json' },
      payload: { requisite_id: requisite.id, amount: 1500, received_at: new Date().toISOString() },
    });
    expect(notified.statusCode).toBe(200);
    expect(notified.json()).toMatchObject({ matched: true, payment_id: payment.id });

    const read = (await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`)).json();
    expect(read.status).toBe('COMPLETED');

    // DESIGN.md decision 11: amount / rate × (1 − payin_rate / 100), to 6 decimals.
    const expected = new Decimal(1500)
      .div('95.5')
      .mul(new Decimal(1).minus(new Decimal('2.5').div(100)))
      .toDecimalPlaces(6);
    const after = (await signed(service.app, merchant, 'GET', '/v1/balance')).json();
    expect(new Decimal(after.balance).minus(before.balance).toFixed(6)).toBe(expected.toFixed(6));
    const terminals = (await signed(service.app, merchant, 'GET', '/v1/terminals')).json();
    expect(terminals.terminals[0]).toMatchObject({ id: merchant.terminalId, balance: Number(expected.toFixed(6)), balance_frozen: 0, currency: 'USDT' });

    const delivery = await until(() => hook.received.find((r) => JSON.parse(r.body).data.id === payment.id));
    expect(delivery.headers['x-notification-token']).toBe('merchant-token-42');
    expect(delivery.headers['x-signature']).toBe(hmacSha1Base64(merchant.secretKey, delivery.body));
    const event = JSON.parse(delivery.body);
    expect(event).toMatchObject({ event: 'payment.completed', data: { id: payment.id, status: 'COMPLETED', ext_id: payment.ext_id } });
    expect(delivery.headers['x-event-id']).toBe(event.id);

    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});
