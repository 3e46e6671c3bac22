/**
 * The console on a 360 px phone (issue 33, item 6): a desk lead checks it from a phone, in Russian
 * and in English. Every screen, in a real Chromium at 360×740: nothing scrolls sideways, lists are
 * cards (no table), filters fold behind a "Filters" button that counts what is set and opens, the
 * menu is a burger, dialogs take the whole screen — and real work is done from the phone.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  enrolTwoFactor,
  type MerchantCredentials,
  multipartBody,
  notifyTransfer,
  personSignIn,
  setRate,
  signed,
  signedMultipart,
  startWebTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

const SHOTS = screenshotDir('console-phone');
const PASSWORD = 'correct horse battery';
const PHONE = { width: 360, height: 740 };

let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let payment: { id: string; ext_id: string };
const disputed: { id: string; ext_id: string }[] = [];
let notificationId: string;
let linkTo: { id: string };
let messageId: string;
let payoutExtId: string;

function merchantCall(method: string, url: string, body?: unknown) {
  return signed(service.app, merchant, method, url, body, origin);
}

/** A receipt as a payer's banking app would show it, drawn by the browser itself, as PNG. */
async function receiptImage(): Promise<Buffer> {
  const page = await browser.newPage({ viewport: { width: 360, height: 480 } });
  await page.setContent('<body style="font-family:sans-serif"><div style="margin:24px;font-size:32px">✓ Перевод выполнен · 1 450 ₽</div></body>');
  const png = await page.screenshot();
  await page.close();
  return png;
}

/** A cancelled payment the merchant disputes with a receipt. */
async function dispute(amount: number): Promise<{ id: string; ext_id: string }> {
  const created = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('disputed'), amount })).json();
  await adminOk(service.app, 'POST', `/payments/${created.id}/cancel`);
  const opened = await signedMultipart(
    service.app,
    merchant,
    `/v1/payments/${created.id}/dispute`,
    multipartBody({ data: JSON.stringify({ amount, comment: 'The payer sent it, receipt attached' }) }, { field: 'proof', content: await receiptImage() }),
    origin,
  );
  expect(opened.statusCode, opened.body).toBe(200);
  return created;
}

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Main' });
  executor = await createExecutor(service.app, 'Trader', { deposit: 2000 });
  const requisite = await createRequisite(service.app, executor.id);

  // Payments waiting; one cancelled with a webhook address no one listens on (its delivery waits and fails).
  payment = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: 1500 })).json();
  const hooked = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: 1600, notify_url: 'http://127.0.0.1:9/hook' })).json();
  await adminOk(service.app, 'POST', `/payments/${hooked.id}/cancel`);
  linkTo = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: 2000 })).json();
  // A bank notification no payment matches (its amount is off by ten): support links it from the phone.
  const notice = await notifyTransfer(service.app, executor.token, requisite.id, 1990);
  expect(notice.status).toBe('unmatched');
  notificationId = notice.notification_id;
  // Disputes, one for each language's run.
  disputed.push(await dispute(1450), await dispute(1460));

  // A payout and a withdrawal waiting for finance.
  await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 500, reason: 'top-up for payouts' });
  payoutExtId = uniqueExtId('po');
  const payout = await merchantCall('POST', '/v1/payouts', {
    ext_id: payoutExtId,
    amount: 3000,
    method: 'card',
    requisites: '4111111111111111',
    holder_name: 'Ivan Petrov',
  });
  expect(payout.statusCode, payout.body).toBe(200);
  const withdrawal = await merchantCall('POST', '/v1/withdrawals', {
    terminal_id: merchant.terminalId,
    amount: 20,
    address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
  });
  expect(withdrawal.statusCode, withdrawal.body).toBe(200);

  // The executor's phone, and a forwarded message naming no card that nothing matches.
  const device = await adminOk<{ token: string }>(service.app, 'POST', `/executors/${executor.id}/devices`, { name: 'Pixel 7' });
  const sent = await service.app.inject({
    method: 'POST',
    url: '/device/v1/messages',
    headers: { authorization: `Bearer ${device.token}`, 'content-type': 'application/json' },
    payload: { text: 'Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам 777.00 RUB', sender: '900', battery: 64, app_version: '3.2.1' },
  });
  expect(sent.statusCode, sent.body).toBe(200);
  messageId = sent.json().message_id;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

let seq = 0;
/** An admin (two-factor enrolled, as their role requires) signed in on a phone; the console in `lang`. */
async function adminOnPhone(lang: 'en' | 'ru'): Promise<{ page: Page; problems: string[]; email: string }> {
  const email = `lead.${++seq}@kassir.test`;
  await adminOk(service.app, 'POST', '/users', { email, role: 'admin', password: PASSWORD });
  const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, email, PASSWORD), PASSWORD);
  const { page, problems } = await watchedPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true });
  await page.goto(`${origin}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Code from the authenticator app').fill(recoveryCodes[0]!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  if (lang === 'ru') {
    // The menu is a burger on a phone; the language switch is in it.
    await page.getByRole('button', { name: 'menu' }).click();
    await page.getByRole('navigation').getByText('Русский').click();
    await page.getByRole('button', { name: 'menu' }).click();
    await page.getByRole('heading', { name: 'Сводка' }).waitFor();
  }
  return { page, problems, email };
}

/** How much wider than the screen the page is (0: nothing scrolls sideways), with what sticks out when it is. */
async function overflow(page: Page): Promise<{ width: number; culprits: string[] }> {
  return page.evaluate(() => {
    const width = document.scrollingElement!.scrollWidth;
    const culprits = [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 60)} "${(el.textContent ?? '').slice(0, 40)}"`);
    return { width, culprits };
  });
}

async function expectNoSidewaysScroll(page: Page, screen: string): Promise<void> {
  // Fonts and late data settle the width: it is measured once nothing moves for a moment.
  await page.waitForTimeout(150);
  const { width, culprits } = await overflow(page);
  expect(width, `${screen} is ${width}px wide: ${culprits.join(' | ')}`).toBeLessThanOrEqual(PHONE.width + 1);
}

/** Rows are cards on a phone: at least one card, no table. */
async function expectCards(page: Page, screen: string): Promise<void> {
  await page.locator('[data-card]').first().waitFor();
  expect(await page.locator('[data-card]').count(), screen).toBeGreaterThan(0);
  expect(await page.locator('main table').count(), `${screen} shows a table`).toBe(0);
}

/** The filters are folded behind the button, which opens them. */
async function expectFolded(page: Page, filtersLabel: string, field: string | RegExp): Promise<void> {
  const button = page.getByRole('button', { name: new RegExp(`^${filtersLabel}`) });
  const input = page.getByLabel(field, { exact: typeof field === 'string' }).first();
  await button.waitFor();
  expect(await input.isVisible()).toBe(false);
  await button.click();
  await input.waitFor({ state: 'visible' });
  await expectNoSidewaysScroll(page, `filters open (${String(field)})`);
  await button.click();
}

type Lang = 'en' | 'ru';
const T = {
  en: { filters: 'Filters', search: 'Search', status: 'Status', executor: 'Executor', resource: 'Payment, payout or withdrawal id', actor: 'Who' },
  ru: { filters: 'Фильтры', search: 'Поиск', status: 'Статус', executor: 'Трейдер', resource: /ID платежа, выплаты или вывода/, actor: 'Кто' },
};

/** Every console screen, with what shows it has loaded and what is checked there. */
function screens(lang: Lang): { path: string; name: string; list?: boolean; filter?: string | RegExp; ready(page: Page): Promise<unknown> }[] {
  const t = T[lang];
  return [
    { path: '/', name: 'dashboard', ready: (page) => page.locator('.recharts-surface').first().waitFor() },
    { path: '/payments', name: 'payments', list: true, filter: t.search, ready: (page) => page.getByLabel(`payment ${payment.ext_id}`).waitFor() },
    { path: `/payments/${payment.id}`, name: 'payment card', ready: (page) => page.getByText(payment.ext_id).first().waitFor() },
    { path: '/payouts?status=all', name: 'payouts', list: true, filter: t.status, ready: (page) => page.getByLabel(`payout ${payoutExtId}`).waitFor() },
    {
      path: '/disputes',
      name: 'disputes',
      list: true,
      filter: t.status,
      ready: (page) =>
        page
          .getByRole('button', { name: /^dispute / })
          .first()
          .waitFor(),
    },
    { path: '/withdrawals?status=all', name: 'withdrawals', list: true, filter: t.status, ready: (page) => page.locator('[data-card]').first().waitFor() },
    { path: '/merchants', name: 'merchants', list: true, ready: (page) => page.locator('[data-card]').first().waitFor() },
    { path: `/merchants/${merchant.merchantId}`, name: 'merchant', list: true, ready: (page) => page.getByText('Main').first().waitFor() },
    { path: '/executors', name: 'executors', list: true, ready: (page) => page.getByRole('link', { name: 'Trader' }).waitFor() },
    { path: `/executors/${executor.id}`, name: 'executor', list: true, ready: (page) => page.getByLabel('phone Pixel 7').waitFor() },
    { path: '/banks', name: 'banks', list: true, ready: (page) => page.locator('[data-card]').first().waitFor() },
    { path: '/providers', name: 'providers', ready: (page) => page.getByRole('heading', { level: 2 }).first().waitFor() },
    {
      path: '/device-messages?status=all',
      name: 'phone messages',
      filter: t.executor,
      ready: (page) => page.getByLabel(`message ${messageId}`).waitFor(),
    },
    { path: '/notifications', name: 'notifications', filter: t.status, ready: (page) => page.getByLabel(`notification ${notificationId}`).waitFor() },
    { path: '/webhooks?status=all', name: 'webhooks', list: true, filter: t.resource, ready: (page) => page.locator('[data-card]').first().waitFor() },
    { path: '/ledger', name: 'ledger', ready: (page) => page.getByRole('heading', { level: 2 }).first().waitFor() },
    { path: '/rates', name: 'rates', ready: (page) => page.getByRole('link', { name: 'RUB' }).first().waitFor() },
    { path: '/rates/RUB', name: 'rate RUB', list: true, ready: (page) => page.getByRole('heading').first().waitFor() },
    { path: '/users', name: 'users', list: true, filter: t.search, ready: (page) => page.locator('[data-card]').first().waitFor() },
    { path: '/security', name: 'security', list: true, ready: (page) => page.locator('[data-card]').first().waitFor() },
    { path: '/audit', name: 'audit', list: true, filter: t.actor, ready: (page) => page.locator('[data-card]').first().waitFor() },
  ];
}

describe('the console on a 360 px phone', () => {
  for (const lang of ['en', 'ru'] as const) {
    it(`every screen fits the phone in ${lang}: no sideways scroll, cards for rows, filters folded and opening`, async () => {
      const { page, problems } = await adminOnPhone(lang);
      for (const screen of screens(lang)) {
        try {
          await page.goto(`${origin}/console${screen.path}`);
          await screen.ready(page);
          await expectNoSidewaysScroll(page, screen.name);
          if (screen.list) await expectCards(page, screen.name);
          if (screen.filter) await expectFolded(page, T[lang].filters, screen.filter);
        } catch (error) {
          await page.screenshot({ path: `${SHOTS}/failed-${lang}-${screen.name}.png`, fullPage: true });
          throw new Error(`${screen.name} (${lang}): ${(error as Error).message}`);
        }
        if (screen.name === 'payments' && lang === 'ru') await page.screenshot({ path: `${SHOTS}/console-phone-payments-ru.png` });
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }, 240_000);
  }

  it('the Filters button counts the filters set, and the list follows them', async () => {
    const { page, problems } = await adminOnPhone('en');
    await page.goto(`${origin}/console/payments?status=PENDING&method=CARD`);
    const button = page.getByRole('button', { name: /^Filters/ });
    await button.getByText('2', { exact: true }).waitFor();
    await page.getByLabel(`payment ${payment.ext_id}`).waitFor();
    // A status tab that is not the screen's first counts as a filter too.
    await page.goto(`${origin}/console/disputes?status=all`);
    await page
      .getByRole('button', { name: /^Filters/ })
      .getByText('1', { exact: true })
      .waitFor();
    await page.goto(`${origin}/console/disputes`);
    await page.getByRole('button', { name: /^Filters/ }).waitFor();
    expect(
      await page
        .getByRole('button', { name: /^Filters/ })
        .getByText(/^\d+$/)
        .count(),
    ).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a desk lead approves a dispute from the phone, the confirmation filling the screen', async () => {
    const { page, problems, email } = await adminOnPhone('en');
    const target = disputed[0]!;
    await page.getByRole('button', { name: 'menu' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Disputes' }).click();
    await page.getByRole('button', { name: `dispute ${target.ext_id}` }).click();
    await page.getByRole('img', { name: 'Receipt' }).waitFor();
    await expectNoSidewaysScroll(page, 'dispute selected');
    await page.getByRole('button', { name: 'Approve (A)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve this dispute?' });
    await dialog.waitFor();
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.width).toBeGreaterThanOrEqual(PHONE.width - 1);
    expect(box.width).toBeLessThanOrEqual(PHONE.width + 1);
    await page.screenshot({ path: `${SHOTS}/console-phone-dispute-en.png` });
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${target.id}`)).json().status).toMatch(/^COMPLETED/);
    const { rows } = await service.ctx.db.query(`SELECT actor FROM audit_log WHERE action = 'dispute.approve' AND object_id = $1`, [target.id]);
    expect(rows).toEqual([{ actor: email }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('support in Russian links a bank notification to its payment from the phone', async () => {
    const { page, problems } = await adminOnPhone('ru');
    await page.getByRole('button', { name: 'menu' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Уведомления' }).click();
    const card = page.getByLabel(`notification ${notificationId}`);
    await card.getByLabel('ID платежа').fill(linkTo.id);
    await expectNoSidewaysScroll(page, 'notification filled in');
    await card.getByRole('button', { name: 'Привязать к платежу' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await merchantCall('GET', `/v1/payments/${linkTo.id}`)).json().status).toBe('COMPLETED');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
