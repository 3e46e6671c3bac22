import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createTerminal,
  executorCompletesPayout,
  executorTakesPayout,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app, { payout_rate: 2, withdrawal_fee: 1.5 });
  await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 1000, reason: 'test funds' });
});
afterAll(async () => service?.close());

describe('money out', () => {
  it('payout: reserve, take by an executor, complete with proof → frozen debited; ledger balanced', async () => {
    const created = await signed(service.app, merchant, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId(),
      amount: 5000,
      method: 'card',
      requisites: '4111 1111 1111 1111',
      holder_name: 'Ivan Petrov',
    });
    expect(created.statusCode).toBe(200);
    const payout = created.json();
    expect(payout).toMatchObject({ amount: 5000, currency: 'RUB', method: 'card', requisites: '4111111111111111', bank: '', status: 'pending' });
    expect(payout).not.toHaveProperty('completed_at');
    let balance = (await signed(service.app, merchant, 'GET', '/v1/balance')).json();
    expect(balance).toEqual({ balance: 949, balance_frozen: 51, currency: 'USDT' });

    const executor = await createExecutor(service.app);
    const take = await executorTakesPayout(service.app, executor.token, payout.id);
    expect(take.statusCode).toBe(200);
    const done = await executorCompletesPayout(service.app, executor.token, payout.id);
    expect(done.statusCode, done.body).toBe(200);
    const read = (await signed(service.app, merchant, 'GET', `/v1/payouts/${payout.id}`)).json();
    expect(read.status).toBe('completed');
    expect(read.completed_at).toEqual(expect.any(String));
    balance = (await signed(service.app, merchant, 'GET', '/v1/balance')).json();
    expect(balance).toEqual({ balance: 949, balance_frozen: 0, currency: 'USDT' });
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('withdrawal (manual adapter): freeze amount + fee, operator completes with tx_hash', async () => {
    const res = await signed(service.app, merchant, 'POST', '/v1/withdrawals', {
      terminal_id: merchant.terminalId,
      amount: 100,
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    });
    expect(res.statusCode, res.body).toBe(200);
    const withdrawal = res.json();
    expect(withdrawal).toMatchObject({ amount: 100, fee: 1.5, currency: 'USDT', tx_hash: null, status: 'pending' });
    const fee = (await signed(service.app, merchant, 'GET', '/v1/withdrawals/fee')).json();
    expect(fee).toEqual({ fee: 1.5, currency: 'USDT' });
    const bad = await signed(service.app, merchant, 'POST', '/v1/withdrawals', {
      terminal_id: merchant.terminalId,
      amount: 100,
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u',
    });
    expect(bad.json().error).toBe('WDR_001');
    const tooMuch = await signed(service.app, merchant, 'POST', '/v1/withdrawals', {
      terminal_id: merchant.terminalId,
      amount: 5000,
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    });
    expect(tooMuch.json().error).toBe('WDR_002');
    const txHash = 'ab'.repeat(32);
    await adminOk(service.app, 'POST', `/withdrawals/${withdrawal.id}/complete`, { tx_hash: txHash });
    const read = (await signed(service.app, merchant, 'GET', `/v1/withdrawals/${withdrawal.id}`)).json();
    expect(read).toMatchObject({ status: 'completed', tx_hash: txHash });
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('transfer between terminals of one merchant; idempotency key replays', async () => {
    const second = await createTerminal(service.app, merchant.merchantId, { name: 'Second' });
    const body = { from_terminal_id: merchant.terminalId, to_terminal_id: second.id, amount: 10.5 };
    const first = await service.app.inject({
      method: 'POST',
      url: '/v1/transfers',
      headers: { ...(await signedHeaders(body)), 'idempotency-key': 'trf-1' },
      payload: JSON.stringify(body),
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({ success: true, ...body, currency: 'USDT' });
    const replay = await service.app.inject({
      method: 'POST',
      url: '/v1/transfers',
      headers: { ...(await signedHeaders(body)), 'idempotency-key': 'trf-1' },
      payload: JSON.stringify(body),
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    const terminals = (await signed(service.app, merchant, 'GET', '/v1/terminals')).json().terminals;
    expect(terminals.find((t: { id: string }) => t.id === second.id).balance).toBe(10.5);
    const other = { ...body, amount: 11 };
    const conflict = await service.app.inject({
      method: 'POST',
      url: '/v1/transfers',
      headers: { ...(await signedHeaders(other)), 'idempotency-key': 'trf-1' },
      payload: JSON.stringify(other),
    });
    expect(conflict.statusCode).toBe(409);
  });
});

async function signedHeaders(body: unknown) {
  const { signRequest } = await import('../src/http/signature.js');
  return {
    'content-type': 'application/json',
    'x-identity': merchant.apiKey,
    'x-signature': signRequest(merchant.secretKey, 'POST', 'http://kassir.test/v1/transfers', JSON.stringify(body)),
  };
}
