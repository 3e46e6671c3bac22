/**
 * Disputes with the executor in them, in a real browser (issue 35 item 5): the executor accepts
 * one and contests another from its cabinet on a phone (the photo from the camera), and support
 * decides the contested one in the console with the executor's answer beside the merchant's
 * receipt. Every outcome is read back from the API and the database.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startWebTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

const SHOTS = screenshotDir('disputes');
const PASSWORD = 'correct horse battery';
const PHONE = { width: 390, height: 844 };

let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let email: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Shop' });
  executor = await createExecutor(service.app, 'Trader');
  await createRequisite(service.app, executor.id);
  email = (await adminOk<{ email: string }>(service.app, 'POST', `/executors/${executor.id}/login`, { email: 'trader@kassir.test', password: PASSWORD })).email;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

function merchantCall(method: string, url: string, body?: unknown) {
  return signed(service.app, merchant, method, url, body, origin);
}

/** A payment handed to the executor, cancelled, and disputed by the merchant with a receipt image; its dispute's id. */
async function disputed(amount: number): Promise<{ payment: { id: string; ext_id: string }; disputeId: string }> {
  const payment = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount })).json();
  await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
  const opened = await signedMultipart(
    service.app,
    merchant,
    `/v1/payments/${payment.id}/dispute`,
    multipartBody({ data: JSON.stringify({ comment: 'The payer sent it, receipt attached' }) }, { field: 'proof', content: TINY_PNG }),
    origin,
  );
  expect(opened.statusCode, opened.body).toBe(200);
  const { rows } = await service.ctx.db.query<{ id: string }>(`SELECT id FROM disputes WHERE payment_id = $1 AND status = 'open'`, [payment.id]);
  return { payment, disputeId: rows[0]!.id };
}

/** The executor in its cabinet on a phone, on the Disputes tab. */
async function cabinet(): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true });
  await page.goto(`${origin}/cabinet`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Shift' }).waitFor();
  await page.getByRole('navigation', { name: 'cabinet' }).getByRole('link', { name: 'Disputes' }).click();
  return { page, problems };
}

describe('disputes in the cabinet and the console', () => {
  it('the executor accepts a dispute on its phone: the countdown, the receipt inline, the amount that came; the payment completes', async () => {
    const { payment, disputeId } = await disputed(2100);
    const { page, problems } = await cabinet();
    const card = page.getByLabel(`dispute ${disputeId}`);
    await card.waitFor();
    await expect.poll(() => card.getByLabel('Time left to answer').textContent()).toMatch(/^(29|30):\d\d$/);
    const receipt = card.getByRole('img', { name: 'Receipt' });
    await expect.poll(() => receipt.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
    await expect.poll(() => card.getByLabel('Amount that came').inputValue()).toBe('2100');
    await page.screenshot({ path: `${SHOTS}/cabinet-dispute.png` });
    await card.getByRole('button', { name: 'The money came — accept' }).click();
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('COMPLETED');
    await page.getByLabel(`dispute ${disputeId}`).getByText('Approved').waitFor();
    const { rows } = await service.ctx.db.query(`SELECT actor FROM audit_log WHERE action = 'dispute.accept' AND object_id = $1`, [disputeId]);
    expect(rows).toEqual([{ actor: email }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the executor contests with a photo from the camera, and support rejects the contested dispute in the console with the answer beside the receipt', async () => {
    const { payment, disputeId } = await disputed(2200);
    const { page, problems } = await cabinet();
    const card = page.getByLabel(`dispute ${disputeId}`);
    await card.getByRole('button', { name: 'The money did not come' }).click();
    await card.getByLabel('What you see in your bank').fill('Nothing for 2 200 on that day');
    const input = card.locator('input[type=file]');
    expect([await input.getAttribute('accept'), await input.getAttribute('capture')]).toEqual(['image/*', 'environment']);
    await input.setInputFiles({ name: 'history.png', mimeType: 'image/png', buffer: TINY_PNG });
    await card.getByRole('button', { name: 'Send to support' }).click();
    await card.getByText('You contested it: support decides.').waitFor();
    expect(problems).toEqual([]);
    await page.context().close();

    const support = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: 'support@kassir.test', role: 'support', password: PASSWORD });
    const { page: console, problems: seen } = await watchedPage(browser, { viewport: { width: 1280, height: 900 } });
    await console.goto(`${origin}/console`);
    await console.getByLabel('Email').fill(support.email);
    await console.getByLabel(/^Password/).fill(PASSWORD);
    await console.getByRole('button', { name: 'Sign in' }).click();
    await console.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await console.getByRole('navigation').getByRole('link', { name: 'Disputes' }).click();
    await console.getByRole('radiogroup', { name: 'Stage' }).getByText('Contested').click();
    await console.getByRole('button', { name: `dispute ${payment.ext_id}` }).click();
    const answer = console.getByLabel("Executor's answer");
    await answer.getByText('Contested: says the money did not come').waitFor();
    await answer.getByText('«Nothing for 2 200 on that day»').waitFor();
    await expect
      .poll(() => answer.getByRole('img', { name: "Executor's bank history" }).evaluate((img: HTMLImageElement) => img.naturalWidth))
      .toBeGreaterThan(0);
    await console.getByRole('img', { name: 'Receipt' }).waitFor();
    await console.screenshot({ path: `${SHOTS}/console-contested.png` });
    await console.getByRole('button', { name: 'Reject (R)' }).click();
    const reject = console.getByRole('dialog', { name: 'Reject this dispute?' });
    await reject.getByLabel('Reason').fill('The executor’s history shows no such transfer');
    await reject.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('CANCELLED');
    const { rows } = await service.ctx.db.query(`SELECT status, executor_answer FROM disputes WHERE id = $1`, [disputeId]);
    expect(rows).toEqual([{ status: 'rejected', executor_answer: 'contested' }]);
    expect(seen).toEqual([]);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });
});
