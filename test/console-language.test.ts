/**
 * Russian everywhere, formats, and names instead of codes (issue 33 items 5 and 7), in a real
 * browser over the built app: the console, the executor's cabinet and the merchant cabinet walked
 * screen by screen in Russian, each failing on an English UI word (the English dictionary's own
 * texts) or a raw API code (a status, a posting's kind, a bank code) on the page; statements naming
 * the payment as a person says it; bank names and cards in fours; the pager's "page 1 of N"; a
 * completed payout's payer and proof; a payment card's links and time zone; and an API validation
 * error shown in the person's words on the field it concerns — in Russian and in English.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  enrolTwoFactor,
  executorCompletesPayout,
  executorTakesPayout,
  type MerchantCredentials,
  notifyTransfer,
  personSignIn,
  setRate,
  signed,
  startWebTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

const en = JSON.parse(readFileSync(new URL('../web/src/i18n/en.json', import.meta.url), 'utf8')) as Record<string, string>;
const ru = JSON.parse(readFileSync(new URL('../web/src/i18n/ru.json', import.meta.url), 'utf8')) as Record<string, string>;
type Lang = 'en' | 'ru';
const DICT = { en, ru };

const PASSWORD = 'correct horse battery';
let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let card: { id: string; value: string };
let payment: { id: string; ext_id: string };
let payout: { id: string; ext_id: string };
let staff: { email: string; codes: string[] };
let executorEmail: string;
let merchantEmail: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Магазин' });
  executor = await createExecutor(service.app, 'Трейдер Иван', { deposit: 1000 });
  card = await createRequisite(service.app, executor.id, { bank: 'sberbank' });
  // A payment paid and completed by the executor's notification.
  payment = (await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: 1500 }, origin)).json();
  await notifyTransfer(service.app, executor.token, card.id, 1500);
  // A payout the executor took and paid, with its proof.
  await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 500, reason: 'для выплат' });
  payout = (
    await signed(
      service.app,
      merchant,
      'POST',
      '/v1/payouts',
      { ext_id: uniqueExtId('po'), amount: 2750, method: 'card', requisites: '4111111111111111', holder_name: 'Иван Петров' },
      origin,
    )
  ).json();
  expect((await executorTakesPayout(service.app, executor.token, payout.id)).statusCode).toBe(200);
  expect((await executorCompletesPayout(service.app, executor.token, payout.id)).statusCode).toBe(200);
  // An admin (two-factor enrolled, as the policy requires), the executor's and the merchant's sign-ins.
  const made = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: 'lead@kassir.test', role: 'admin', password: PASSWORD });
  const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, made.email, PASSWORD), PASSWORD);
  staff = { email: made.email, codes: recoveryCodes };
  executorEmail = (
    await adminOk<{ email: string }>(service.app, 'POST', `/executors/${executor.id}/login`, { email: 'trader@kassir.test', password: PASSWORD })
  ).email;
  merchantEmail = (
    await adminOk<{ email: string }>(service.app, 'POST', `/merchants/${merchant.merchantId}/users`, { email: 'dev@shop.test', password: PASSWORD })
  ).email;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** Screenshots for the README (SCREENSHOTS=1 writes them to docs/screenshots). */
const SHOTS = screenshotDir('language');

/** A fresh browser in `lang` (the language switch's own storage), failing the test on any CSP violation or page error. */
async function open(lang: Lang): Promise<{ page: Page; problems: string[] }> {
  const opened = await watchedPage(browser, { viewport: { width: 1280, height: 900 }, timezoneId: 'Europe/Moscow' });
  await opened.page.addInitScript((l) => localStorage.setItem('kassir.lang', l), lang);
  return opened;
}

/** Signs in on an area's page with the labels of `lang`. */
async function signIn(page: Page, lang: Lang, area: string, email: string, code?: string): Promise<void> {
  const d = DICT[lang];
  await page.goto(`${origin}/${area}`);
  await page.getByLabel(d['login.email']!).fill(email);
  await page.getByLabel(new RegExp(`^${d['login.password']}`)).fill(PASSWORD);
  await page.getByRole('button', { name: d['login.submit'] }).click();
  if (code) {
    await page.getByLabel(d['login.otp']!).fill(code);
    await page.getByRole('button', { name: d['login.submit'] }).click();
  }
}

/** The English words of the interface (the English dictionary's texts that Russian does not share), for finding what was left untranslated. */
const ENGLISH_UI = [
  ...new Set(
    Object.entries(en)
      .filter(([key]) => /^(nav|common|status|error|payments|payouts|executors|statement|cabinet|merchant|ledger|timeline|method|role)\./.test(key))
      .map(([, text]) => text)
      .filter((text) => /^[A-Z][a-z]+( [a-z]+)?$/.test(text) && !Object.values(ru).includes(text)),
  ),
  'Something went wrong',
];
/** Codes of the API that a screen must name instead of showing. */
const RAW_CODES =
  /\b(PENDING|PROCESSING|COMPLETED|COMPLETED_APPEAL|CANCELLED|CANCELLED_APPEAL|DISPUTE|payin_hold|payin_hold_release|payout_settle|payout_reserve|executor_deposit|sberbank|CARD)\b/;

/** What the screen shows that is English or a raw code: none in Russian. */
async function untranslated(page: Page): Promise<string[]> {
  await page.waitForLoadState('networkidle');
  const text = await shownText(page);
  const found = ENGLISH_UI.filter((word) => new RegExp(`(^|[^A-Za-z])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^A-Za-z]|$)`).test(text));
  const code = RAW_CODES.exec(text)?.[0];
  return code ? [...found, code] : found;
}

const normalized = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

/** The page's text as a person reads it, no-break spaces as spaces. */
async function shownText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, with breaks between blocks, is what the word checks read (textContent runs words of adjacent elements together)
  return normalized(await page.locator('body').innerText());
}
/** The masked card the console shows ("2200 47** **** 0003"): in fours, its first four and last four digits. */
const maskedInFours = (digits: string) => new RegExp(`${digits.slice(0, 4)} \\d{2}\\*\\* \\*{4} ${digits.slice(-4)}`);

describe('the console in Russian', () => {
  it('has no English word and no raw code on any screen, names payments, banks and cards as people do, pages "страница 1 из N"', {
    timeout: 240_000,
  }, async () => {
    const { page, problems } = await open('ru');
    await signIn(page, 'ru', 'console', staff.email, staff.codes.shift());
    await page.getByRole('heading', { name: ru['dashboard.title'] }).waitFor();
    const screens = [
      '',
      'payments',
      `payments/${payment.id}`,
      'disputes',
      'notifications',
      'device-messages',
      'payouts?status=completed',
      'withdrawals',
      'executors',
      `executors/${executor.id}`,
      'merchants',
      `merchants/${merchant.merchantId}`,
      'providers',
      'webhooks',
      'users',
      'security',
    ];
    const left: Record<string, string[]> = {};
    for (const screen of screens) {
      await page.goto(`${origin}/console/${screen}`);
      await page.getByRole('heading').first().waitFor();
      const found = await untranslated(page);
      if (found.length > 0) left[screen] = found;
    }
    expect(left).toEqual({});

    // The executor's statement names the payment: amount in Russian format, its order, its status in words.
    await page.goto(`${origin}/console/executors/${executor.id}`);
    await expect.poll(async () => await shownText(page), { timeout: 20_000 }).toContain(`Платёж 1 500 ₽, заказ ${payment.ext_id}, завершён`);
    // The requisites are a request of their own, which may answer after the statement's.
    await expect.poll(async () => await shownText(page), { timeout: 20_000 }).toMatch(maskedInFours(card.value));
    const body = await shownText(page);
    expect(body).toContain(ru['ledger.payin_hold']);
    expect(body).toMatch(maskedInFours(card.value));
    expect(body).toContain('Сбербанк');
    expect(body).toMatch(/Страница 1 из 1/);
    await page.screenshot({ path: `${SHOTS}/console-executor-ru.png`, fullPage: true });

    // The payment's card: its merchant, terminal and executor by name, as links; every time in one named zone.
    await page.goto(`${origin}/console/payments/${payment.id}`);
    await page.getByRole('link', { name: 'Трейдер Иван' }).waitFor();
    await page.getByRole('link', { name: 'Магазин' }).click();
    await expect.poll(() => page.url()).toContain(`/console/merchants/${merchant.merchantId}`);
    await page.goBack();
    await page.getByText('Всё время — Europe/Moscow (GMT+3)').waitFor();
    await page.getByText('завершён', { exact: true }).first().waitFor();
    await page.screenshot({ path: `${SHOTS}/console-payment-ru.png`, fullPage: true });

    // A completed payout says who paid it and opens its proof.
    await page.goto(`${origin}/console/payouts?status=completed`);
    await page.getByText('Кто выплатил: трейдер Трейдер Иван').waitFor();
    const proof = await page.getByRole('link', { name: 'Подтверждение' }).getAttribute('href');
    const shown = await page.evaluate(async (href) => {
      const res = await fetch(href!);
      return { status: res.status, type: res.headers.get('content-type') };
    }, proof);
    expect(shown).toEqual({ status: 200, type: 'image/png' });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows the API\'s refusal in Russian on the field it concerns, not as "Something went wrong"', { timeout: 120_000 }, async () => {
    const { page, problems } = await open('ru');
    await signIn(page, 'ru', 'console', staff.email, staff.codes.shift());
    await page.getByRole('heading', { name: ru['dashboard.title'] }).waitFor();
    await page.goto(`${origin}/console/banks`);
    const code = page.getByLabel(ru['banks.code']!, { exact: true });
    await code.fill('Плохой-код');
    await page.getByLabel(ru['banks.name']!, { exact: true }).fill('Банк');
    await page.getByRole('button', { name: ru['banks.add'] }).click();
    await page.getByText('Код: значение не того вида').waitFor();
    expect(await code.getAttribute('aria-invalid')).toBe('true');
    // On the field, not a second time in an alert, and not in English.
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByText(/Something went wrong|must match pattern/).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the cabinets in Russian', () => {
  it("the executor's deposit, payouts and cards: statements by payment, banks by name, statuses in words", { timeout: 120_000 }, async () => {
    const { page, problems } = await open('ru');
    await signIn(page, 'ru', 'cabinet', executorEmail);
    await page.getByRole('heading', { name: ru['cabinet.shift'] }).waitFor();
    const left: Record<string, string[]> = {};
    for (const screen of ['', 'cards', 'payouts', 'deposit', 'phones']) {
      await page.goto(`${origin}/cabinet/${screen}`);
      await page.getByRole('heading').first().waitFor();
      const found = await untranslated(page);
      if (found.length > 0) left[screen] = found;
    }
    expect(left).toEqual({});
    await page.goto(`${origin}/cabinet/deposit`);
    await expect.poll(async () => await shownText(page), { timeout: 20_000 }).toContain(`Платёж 1 500 ₽, заказ ${payment.ext_id}, завершён`);
    await page.screenshot({ path: `${SHOTS}/cabinet-deposit-ru.png`, fullPage: true });
    await page.goto(`${origin}/cabinet/cards`);
    await page
      .getByText(`Сбербанк •• ${card.value.slice(-4)}`)
      .first()
      .waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the merchant cabinet: payments and payouts with statuses in words and "страница 1 из N"', { timeout: 120_000 }, async () => {
    const { page, problems } = await open('ru');
    await signIn(page, 'ru', 'merchant', merchantEmail);
    await page.getByRole('heading', { name: ru['merchant.transfer'] }).waitFor();
    const left: Record<string, string[]> = {};
    for (const screen of ['', 'payments', `payments/${payment.id}`, 'payouts', 'webhooks']) {
      await page.goto(`${origin}/merchant/${screen}`);
      await page.getByRole('heading').first().waitFor();
      const found = await untranslated(page);
      if (found.length > 0) left[screen] = found;
    }
    expect(left).toEqual({});
    await page.goto(`${origin}/merchant/payments`);
    await page.getByText('завершён', { exact: true }).first().waitFor();
    await page.getByText(/Страница 1 из 1/).waitFor();
    await page.screenshot({ path: `${SHOTS}/merchant-payments-ru.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the console in English', () => {
  it('names the same things in English: statement lines, banks, cards in fours, the pager, the payer, the refusal on its field', {
    timeout: 120_000,
  }, async () => {
    const { page, problems } = await open('en');
    await signIn(page, 'en', 'console', staff.email, staff.codes.shift());
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.goto(`${origin}/console/executors/${executor.id}`);
    await expect.poll(async () => await shownText(page), { timeout: 20_000 }).toContain(`Payment 1,500 RUB, order ${payment.ext_id}, completed`);
    await expect.poll(async () => await shownText(page), { timeout: 20_000 }).toMatch(maskedInFours(card.value));
    const body = await shownText(page);
    expect(body).toContain('Sberbank');
    expect(body).not.toMatch(/\bsberbank\b/);
    expect(body).toMatch(maskedInFours(card.value));
    expect(body).toMatch(/Page 1 of 1/);
    expect(body).not.toMatch(/\bpayin_hold\b/);
    await page.screenshot({ path: `${SHOTS}/console-executor-en.png`, fullPage: true });
    await page.goto(`${origin}/console/payments/${payment.id}`);
    await page.getByText('Completed', { exact: true }).first().waitFor();
    await page.screenshot({ path: `${SHOTS}/console-payment-en.png`, fullPage: true });

    await page.goto(`${origin}/console/payouts?status=completed`);
    await page.getByText('Paid by: executor Трейдер Иван').waitFor();
    await page.getByRole('link', { name: 'Proof' }).waitFor();

    await page.goto(`${origin}/console/banks`);
    const code = page.getByLabel('Code', { exact: true });
    await code.fill('Bad code!');
    await page.getByLabel('Name', { exact: true }).fill('A bank');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByText('Code: not in the expected form').waitFor();
    expect(await code.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByText('Something went wrong').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
