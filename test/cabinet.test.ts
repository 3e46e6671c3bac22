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
  TINY_PNG,
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

  it('takes a payout, copies the recipient, uploads the proof; the deposit shows the credit and a withdrawal asks to confirm', async () => {
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 500, reason: 'funds for payouts' });
    const recipient = '4111111111111111';
    const created = await merchantCall('POST', '/v1/payouts', {
      ext_id: uniqueExtId('cab-po'),
      amount: 2750,
      method: 'card',
      requisites: recipient,
      holder_name: 'Ivan Petrov',
    });
    expect(created.statusCode, created.body).toBe(200);
    const payout = created.json();
    const before = (await executorCall(service.app, executor.token, 'GET', '/balance')).json().balance as number;

    const { page, problems } = await open();
    await page.getByRole('navigation', { name: 'cabinet' }).getByRole('link', { name: 'Payouts' }).click();
    const card = page.getByLabel(`payout ${payout.id}`);
    // Before it is taken the recipient is masked; taken, it is there in full to copy.
    await card.getByText('2,750 RUB').waitFor();
    expect(await card.getByText(recipient).count()).toBe(0);
    await card.getByRole('button', { name: 'Take' }).click();
    // Read in fours, as on the card itself (and copied as digits).
    await card.getByText(recipient.replace(/(\d{4})(?=\d)/g, '$1 ')).waitFor();
    await card.getByText('Ivan Petrov').waitFor();
    await page.screenshot({ path: `${SHOTS}/cabinet-payout.png` });
    expect(await card.getByRole('button', { name: 'Paid — send the proof' }).isDisabled()).toBe(true);
    await card.locator('input[type=file]').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: TINY_PNG });
    await card.getByRole('button', { name: 'Paid — send the proof' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await merchantCall('GET', `/v1/payouts/${payout.id}`)).json().status).toBe('completed');

    // The payout's money is on the deposit, and the statement says what it was.
    await page.getByRole('navigation', { name: 'cabinet' }).getByRole('link', { name: 'Deposit' }).click();
    await page.getByText('Payout paid: credited').first().waitFor();
    const after = (await executorCall(service.app, executor.token, 'GET', '/balance')).json().balance as number;
    expect(after).toBeGreaterThan(before);

    // Sending the deposit out asks for the password again first.
    await page.getByLabel('Amount, USDT').fill('1');
    await page.getByLabel('Address').fill('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf');
    await page.getByRole('button', { name: 'Request the withdrawal' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
    await dialog.getByLabel(/^Password/).fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('Requested: the amount is frozen').waitFor();
    const withdrawals = (await executorCall(service.app, executor.token, 'GET', '/withdrawals')).json().withdrawals;
    expect(withdrawals).toMatchObject([{ amount: 1, address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', status: 'pending' }]);
    await page.getByText('Withdrawal requested').first().waitFor();
    await page.screenshot({ path: `${SHOTS}/cabinet-deposit.png` });
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
