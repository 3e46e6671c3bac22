import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExecutor, createMerchant, createPayment, createRequisite, setRate, startTestService, uniqueExtId,
  type MerchantCredentials, type TestService,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };

beforeAll(async () => {
  service = await startTestService({ PAYMENT_TTL_SECONDS: '900' });
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { payin_rate: 2.5 });
  executor = await createExecutor(service.app);
});
afterAll(async () => service?.close());

describe('POST /v1/payments', () => {
  it('creates a PENDING payment with card requisites, the rate fixed at creation, payin_rate and a payment page URL', async () => {
    const requisite = await createRequisite(service.app, executor.id, { holder: 'Ivan P.' });
    const extId = uniqueExtId();
    const before = Date.now();
    const { status, body } = await createPayment(service.app, merchant, { ext_id: extId, amount: 1500, currency: 'RUB', method: 'CARD' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ext_id: extId,
      amount: 1500,
      currency: 'RUB',
      rate: 95.5,
      payin_rate: 2.5,
      terminal_id: merchant.terminalId,
      terminal_name: 'Main',
      status: 'PENDING',
      method: 'CARD',
      requisites: { type: 'card', value: requisite.value, bank: 'sberbank', bank_code: 'sberbank', bank_name: 'Сбербанк', holder: 'Ivan P.' },
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.payment_url).toMatch(/^http:\/\/kassir\.test\/pay\/[A-Za-z0-9_-]{32}$/);
    const ttl = Date.parse(body.valid_until) - Date.parse(body.created_at);
    expect(ttl).toBe(900_000);
    expect(Date.parse(body.created_at)).toBeGreaterThanOrEqual(before - 2000);
  });
});
