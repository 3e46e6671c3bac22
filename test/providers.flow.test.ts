import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import {
  adminOk, createExecutor, createMerchant, createRequisite, setRate, signed, startTestService, uniqueExtId,
  type MerchantCredentials, type TestService,
} from './helpers.js';

// Two Kassir instances on separate databases: A routes its payments to B, which executes them.
let a: TestService;
let b: TestService;
let merchantA: MerchantCredentials;
let executorB: { id: string; token: string };
let requisiteB: { id: string; value: string };

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

beforeAll(async () => {
  const [portA, portB] = [await freePort(), await freePort()];
  b = await startTestService({ PORT: String(portB), PUBLIC_BASE_URL: `http://127.0.0.1:${portB}`, KASSIR_WEBHOOK_RETRY_BASE_MS: '200' }, { worker: true, listen: true });
  a = await startTestService({ PORT: String(portA), PUBLIC_BASE_URL: `http://127.0.0.1:${portA}`, KASSIR_WEBHOOK_RETRY_BASE_MS: '200' }, { worker: true, listen: true });
  // At B: A is a merchant.
  await setRate(b.app, 'RUB', 90);
  const aAtB = await createMerchant(b.app, { payin_rate: 1 });
  executorB = await createExecutor(b.app);
  requisiteB = await createRequisite(b.app, executorB.id, { holder: 'B holder' });
  // At A: B is a provider, and A's merchant's terminal routes to it.
  await setRate(a.app, 'RUB', 95);
  merchantA = await createMerchant(a.app, { payin_rate: 3 });
  const provider = await adminOk<{ id: string; callback_url: string }>(a.app, 'POST', '/providers', {
    name: 'Kassir B', kind: 'kassir', base_url: `http://127.0.0.1:${portB}`, api_key: aAtB.apiKey, secret_key: aAtB.secretKey,
  });
  expect(provider.callback_url).toBe(`http://127.0.0.1:${portA}/callbacks/providers/${provider.id}`);
  await adminOk(a.app, 'PUT', `/terminals/${merchantA.terminalId}/routes`, [{ provider_id: provider.id }]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('A routes to B', () => {
  it('a payment created at A gets B requisites; B completes it; B webhook completes it at A', async () => {
    const { status, body } = await createPayment();
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.requisites).toMatchObject({ type: 'card', value: requisiteB.value, holder: 'B holder' });
    const notified = await b.app.inject({
      method: 'POST', url: '/executor/v1/notifications',
      headers: { authorization: `Bearer ${executorB.token}`, 'content-type': 'application/json' },
      payload: { requisite_id: requisiteB.id, amount: 2000 },
    });
    expect(notified.json()).toMatchObject({ matched: true });
    const completed = await until(async () => {
      const res = (await signed(a.app, merchantA, 'GET', `/v1/payments/${body.id}`, undefined, a.config.publicBaseUrl)).json();
      return res.status === 'COMPLETED' ? res : undefined;
    });
    expect(completed.status).toBe('COMPLETED');
    const balance = (await signed(a.app, merchantA, 'GET', '/v1/balance', undefined, a.config.publicBaseUrl)).json();
    expect(balance.balance).toBeGreaterThan(0);
    expect(await adminOk(a.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});

async function createPayment() {
  const res = await signed(a.app, merchantA, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 2000 }, a.config.publicBaseUrl);
  return { status: res.statusCode, body: res.json() };
}
