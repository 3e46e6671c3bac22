import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  executorCall,
  type MerchantCredentials,
  setRate,
  signed,
  startWebTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

const SHOTS = screenshotDir('cabinet');
const PASSWORD = 'correct horse battery';
const PHONE = { width: 390, height: 844 };

let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let cards: { id: string; value: string }[];
let email: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Shop' });
  executor = await createExecutor(service.app, 'Trader');
  cards = [await createRequisite(service.app, executor.id), await createRequisite(service.app, executor.id)];
  email = (await adminOk<{ email: string }>(service.app, 'POST', `/executors/${executor.id}/login`, { email: 'trader@kassir.test', password: PASSWORD })).email;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

function merchantCall(method: string, url: string, body?: unknown) {
  return signed(service.app, merchant, method, url, body, origin);
}

/** The executor signed in to the cabinet on a phone, in a fresh browser that fails the test on any CSP violation or page error. */
async function open(): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true });
  await page.goto(`${origin}/cabinet`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Shift' }).waitFor();
  return { page, problems };
}

describe("the executor's cabinet", () => {
  it('shows what waits on each card, links a message the phone could not match, switches a card and the shift off', async () => {
    // Two payments of one amount (one on each card) and a bank message that names no card: ambiguous.
    const first = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('cab'), amount: 1500 })).json();
    const second = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('cab'), amount: 1500 })).json();
    const device = (await executorCall(service.app, executor.token, 'POST', '/devices', { name: 'Redmi 12' })).json();
    const message = await service.app.inject({
      method: 'POST',
      url: '/device/v1/messages',
      headers: { authorization: `Bearer ${device.token}`, 'content-type': 'application/json' },
      payload: { text: 'Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам 1500.00 RUB', sender: '900' },
    });
    expect(message.json().status).toBe('ambiguous');

    const { page, problems } = await open();
    await expect.poll(() => page.getByText('1,500.00 RUB').count()).toBe(2);
    await page.screenshot({ path: `${SHOTS}/cabinet-today.png` });

    await page.getByRole('navigation', { name: 'cabinet' }).getByRole('link', { name: 'Messages' }).click();
    const card = page.getByLabel(`message ${message.json().message_id}`);
    await card.getByRole('combobox', { name: 'Which payment' }).click();
    await page.getByRole('option').first().click();
    await page.screenshot({ path: `${SHOTS}/cabinet-messages.png` });
    await card.getByRole('button', { name: 'Link to payment' }).click();
    await card.waitFor({ state: 'detached' });
    const statuses = await Promise.all([first.id, second.id].map(async (id) => (await merchantCall('GET', `/v1/payments/${id}`)).json().status));
    expect(statuses.sort()).toEqual(['COMPLETED', 'PENDING']);

    await page.getByRole('navigation', { name: 'cabinet' }).getByRole('link', { name: 'Cards' }).click();
    const last4 = cards[0]!.value.slice(-4);
    const toggle = page.getByRole('switch', { name: new RegExp(`${last4}$`) });
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await toggle.click({ force: true });
    await expect.poll(async () => (await adminOk<{ is_active: boolean }>(service.app, 'GET', `/requisites/${cards[0]!.id}`)).is_active).toBe(false);
    await page.screenshot({ path: `${SHOTS}/cabinet-cards.png` });

    await page.getByRole('navigation', { name: 'cabinet' }).getByRole('link', { name: 'Today' }).click();
    await page.getByRole('switch', { name: 'Shift' }).click({ force: true });
    await page.getByText('Your cards are not handed out now').waitFor();
    expect((await executorCall(service.app, executor.token, 'GET', '/status')).json()).toMatchObject({ is_paused: true, takes_payments: false });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a staff sign-in is told the cabinet is for executors', async () => {
    const staff = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: 'ops@kassir.test', role: 'support', password: PASSWORD });
    const { page } = await watchedPage(browser, { viewport: PHONE });
    await page.goto(`${origin}/cabinet`);
    await page.getByLabel('Email').fill(staff.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The cabinet is for executors').waitFor();
    await page.context().close();
  });
});
