/**
 * The executor's cabinet (issue 19) on a phone-sized screen in Chromium: the executor signs in,
 * sees what waits on each card, links a message the phone sent that could not be matched, switches
 * a card off and the shift off. Every screen works on the executor API with the executor's session.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { launchChromium } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  executorCall,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SHOTS = process.env.SCREENSHOTS ? `${ROOT}docs/screenshots` : mkdtempSync(join(tmpdir(), 'kassir-cabinet-'));
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
  if (!existsSync(`${ROOT}dist/console/index.html`)) execFileSync('npm', ['run', 'build:web'], { cwd: ROOT, stdio: 'ignore' });
  mkdirSync(SHOTS, { recursive: true });
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = await startTestService({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: origin, LOGIN_ATTEMPTS_PER_MINUTE: '1000' }, { listen: true });
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

async function open(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: PHONE, locale: 'en-US', reducedMotion: 'reduce', isMobile: true, hasTouch: true });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused/.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
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
    const context = await browser.newContext({ viewport: PHONE, locale: 'en-US', reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto(`${origin}/cabinet`);
    await page.getByLabel('Email').fill(staff.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The cabinet is for executors').waitFor();
    await context.close();
  });
});
