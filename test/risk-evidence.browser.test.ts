/**
 * Evidence flags where a person looks (issue 36 item 4), in a real browser on a 360 px phone:
 * a dispute whose proof was already sent for another merchant's payment carries the red "Check:
 * receipt reused" badge on its row and its card (with the figure), "Flagged only" keeps it and
 * drops a clean one, and the payment's card has the badge too — in English and in Russian.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, watchedPage } from './browser.js';
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

const PASSWORD = 'correct horse battery';
const PHONE = { width: 360, height: 780 };

let service: TestService;
let browser: Browser;
let origin: string;
let shopA: MerchantCredentials;
let shopB: MerchantCredentials;
let email: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95);
  shopA = await createMerchant(service.app, { name: 'Shop A' });
  shopB = await createMerchant(service.app, { name: 'Shop B' });
  const executor = await createExecutor(service.app, 'Trader');
  for (let i = 0; i < 3; i++) await createRequisite(service.app, executor.id);
  email = (await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: 'support@kassir.test', role: 'support', password: PASSWORD })).email;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

async function pay(shop: MerchantCredentials, amount: number): Promise<{ id: string; ext_id: string }> {
  const res = await signed(service.app, shop, 'POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount }, origin);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A dispute opened by `shop` with `file` as its proof. */
async function disputed(shop: MerchantCredentials, amount: number, file: Buffer): Promise<{ id: string; ext_id: string }> {
  const payment = await pay(shop, amount);
  await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
  const opened = await signedMultipart(
    service.app,
    shop,
    `/v1/payments/${payment.id}/dispute`,
    multipartBody({ data: JSON.stringify({ comment: 'paid' }) }, { field: 'proof', content: file, contentType: 'image/png' }),
    origin,
  );
  expect(opened.statusCode, opened.body).toBe(200);
  return payment;
}

async function signIn(lang: 'en' | 'ru', path: string): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true });
  await page.addInitScript((l) => localStorage.setItem('kassir.lang', l), lang);
  await page.goto(`${origin}/console${path}`);
  await page.getByLabel(lang === 'en' ? 'Email' : 'Эл. почта').fill(email);
  await page.getByLabel(lang === 'en' ? /^Password/ : /^Пароль/).fill(PASSWORD);
  await page.getByRole('button', { name: lang === 'en' ? 'Sign in' : 'Войти' }).click();
  return { page, problems };
}

describe('evidence flags in the console', () => {
  it('the reused receipt’s dispute row and card carry the red badge, Flagged only keeps it, the payment card too (en, ru), on a phone', async () => {
    const file = Buffer.concat([TINY_PNG, randomBytes(16)]);
    const first = await pay(shopB, 3100);
    const confirm = await signedMultipart(
      service.app,
      shopB,
      `/v1/payments/${first.id}/confirm`,
      multipartBody({}, { content: file, contentType: 'image/png' }),
      origin,
    );
    expect(confirm.statusCode, confirm.body).toBe(200);
    const reused = await disputed(shopA, 3200, file);
    const clean = await disputed(shopA, 3300, Buffer.concat([TINY_PNG, randomBytes(16)]));

    const { page, problems } = await signIn('en', '/disputes?flagged=true');
    const row = page.getByRole('button', { name: `dispute ${reused.ext_id}` });
    await row.getByLabel('Check: receipt reused').waitFor();
    await expect(page.getByRole('button', { name: `dispute ${clean.ext_id}` }).count()).resolves.toBe(0);
    await row.click();
    const flags = page.getByLabel('Risk checks');
    await flags.getByText(`already used for payment ${first.id}`, { exact: false }).waitFor();
    await page.getByRole('switch', { name: 'Flagged only' }).uncheck({ force: true });
    await page.getByRole('button', { name: `dispute ${clean.ext_id}` }).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(PHONE.width);

    await page.goto(`${origin}/console/payments/${reused.id}`);
    await page.getByLabel('Check: receipt reused').first().waitFor();
    await page.goto(`${origin}/console/payments/${first.id}`);
    await page.getByText(first.ext_id).first().waitFor();
    await expect(page.getByLabel('Check: receipt reused').count()).resolves.toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();

    const ru = await signIn('ru', `/disputes?flagged=true`);
    await ru.page
      .getByRole('button', { name: `dispute ${reused.ext_id}` })
      .getByLabel('Проверить: чек уже использован')
      .waitFor();
    expect(ru.problems).toEqual([]);
    await ru.page.context().close();
  });
});
