import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string };

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app, { payin_rate: 2 });
  executor = await createExecutor(service.app);
  for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close());

describe('confirm, receipt, dispute and operator review', () => {
  it('confirm with a PNG keeps PENDING; cancelled → dispute with file → receipt link → approve with another amount → COMPLETED_APPEAL', async () => {
    const { body: payment } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1000 });

    const confirm = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/confirm`, multipartBody({}, { content: TINY_PNG }));
    expect(confirm.statusCode).toBe(200);
    expect(confirm.json()).toMatchObject({ id: payment.id, status: 'PENDING', message: expect.any(String) });

    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    const dispute = await signedMultipart(
      service.app,
      merchant,
      `/v1/payments/${payment.id}/dispute`,
      multipartBody({ data: JSON.stringify({ amount: 900, comment: 'paid 900 by mistake' }) }, { field: 'proof', content: TINY_PNG }),
    );
    expect(dispute.statusCode).toBe(200);
    const opened = dispute.json();
    expect(opened).toMatchObject({ id: payment.id, status: 'dispute', dispute: { amount: 900, comment: 'paid 900 by mistake' } });
    expect(opened.dispute.receipt_url).toMatch(/^http:\/\/kassir\.test\/v1\/receipts\/[0-9a-f-]{36}$/);

    const download = await signed(service.app, merchant, 'GET', new URL(opened.dispute.receipt_url).pathname);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-disposition']).toMatch(/^attachment/);
    expect(download.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(download.rawPayload, TINY_PNG)).toBe(0);

    const receipt = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/receipt`, { receipt_url: 'https://shop.example/r/1.pdf' });
    expect(receipt.statusCode).toBe(200);
    expect(receipt.json()).toEqual({ id: payment.id, ext_id: payment.ext_id, status: 'DISPUTE', receipt_url: 'https://shop.example/r/1.pdf' });

    const disputes = await adminOk<{ disputes: any[] }>(service.app, 'GET', '/disputes');
    const card = disputes.disputes.find((d) => d.payment.id === payment.id);
    expect(card.receipts).toHaveLength(3);
    expect(card.confirmations).toHaveLength(1);
    // The dispute card keeps its first receipt.
    expect(card.receipt.url).toContain('/admin/v1/receipts/');
    // The operator downloads it, or (the console) shows it inline; sandboxed and never sniffed either way.
    const path = new URL(card.receipt.url).pathname;
    const attachment = await admin(service.app, 'GET', path.replace('/admin/v1', ''));
    expect(attachment.headers['content-disposition']).toMatch(/^attachment; filename="receipt-.+\.png"$/);
    const inline = await admin(service.app, 'GET', `${path.replace('/admin/v1', '')}?inline=true`);
    expect(inline.headers['content-disposition']).toMatch(/^inline; /);
    expect(inline.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(Buffer.compare(inline.rawPayload, TINY_PNG)).toBe(0);

    const approved = await adminOk<{ status: string }>(service.app, 'POST', `/payments/${payment.id}/dispute/approve`, { amount: 900 });
    expect(approved.status).toBe('COMPLETED_APPEAL');
    const balance = (await signed(service.app, merchant, 'GET', '/v1/balance')).json();
    expect(balance.balance).toBe(Number(new Decimal(900).div(100).mul(0.98).toFixed(6)));
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });

    const again = await adminOk(service.app, 'GET', `/payments/${payment.id}`).catch((e) => e);
    expect(again.status).toBe('COMPLETED_APPEAL');
  });
});
