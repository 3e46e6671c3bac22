/**
 * Linking Telegram on the screens (issue 37 item 1) in a real browser over the built app: the
 * executor's cabinet on a 360 px phone, the console's Security screen (staff, beside two-factor)
 * and the merchant cabinet's. The people, their sign-ins and the app are the real service; the
 * four Telegram routes are answered here, in the browser, by a stand-in keeping to the contract
 * (POST {prefix}/telegram/link, GET/PATCH/DELETE {prefix}/telegram, 409/503 when the bot is off),
 * so these screens are tested on their own; the server's side has tests of its own.
 */
import { readFileSync } from 'node:fs';
import jsQRModule from 'jsqr';
import type { Browser, Page, Route } from 'playwright-core';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import { adminOk, createExecutor, createMerchant, personSignIn, startWebTestService, type TestService } from './helpers.js';

// jsqr is CommonJS with an ES-style default: under NodeNext the function is `.default`.
const jsQR = (jsQRModule as unknown as { default: typeof jsQRModule.default }).default;

const en = JSON.parse(readFileSync(new URL('../web/src/i18n/en.json', import.meta.url), 'utf8')) as Record<string, string>;
const ru = JSON.parse(readFileSync(new URL('../web/src/i18n/ru.json', import.meta.url), 'utf8')) as Record<string, string>;
type Lang = 'en' | 'ru';
const DICT = { en, ru };

/** A text of the app in `lang` (a key missing from the dictionary fails the test). */
function text(lang: Lang, key: string): string {
  const value = DICT[lang][key];
  if (value === undefined) throw new Error(`no ${key} in ${lang}.json`);
  return value;
}

const SHOTS = screenshotDir('telegram');
const PASSWORD = 'correct horse battery';
const PHONE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 900 };

const EXECUTOR_KINDS = ['dispute_opened', 'payout_available', 'phone_silent', 'deposit_low', 'requisite_off'];
const STAFF_KINDS = [
  'alert_rate_stale',
  'alert_ledger',
  'alert_webhooks',
  'alert_provider',
  'alert_disputes_overdue',
  'alert_conversion',
  'alert_executor_off',
];
const MERCHANT_KINDS = ['webhook_failing', 'withdrawal_sent'];
/** The same kinds as the server's first catalogue spells some of them (src/telegram/texts.ts): named on the screen alike. */
const SERVER_SPELLINGS = [
  'devices_silent',
  'requisite_disabled',
  'alert_ledger_check',
  'alert_webhook_failing',
  'alert_provider_breaker',
  'alert_conversion_low',
  'alert_executor_disabled',
];

let service: TestService;
let browser: Browser;
let origin: string;
let executorEmail: string;
let merchantEmail: string;
let staffEmail: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  const executor = await createExecutor(service.app, 'Трейдер Иван');
  executorEmail = (await adminOk<{ email: string }>(service.app, 'POST', `/executors/${executor.id}/login`, { email: 'trader@tg.test', password: PASSWORD }))
    .email;
  const merchant = await createMerchant(service.app, { name: 'Shop' });
  merchantEmail = (
    await adminOk<{ email: string }>(service.app, 'POST', `/merchants/${merchant.merchantId}/users`, { email: 'dev@tg.test', password: PASSWORD })
  ).email;
  // Support: a staff role two-factor is not required of by default, so the session is the password's.
  staffEmail = (await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: 'support@tg.test', role: 'support', password: PASSWORD })).email;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

/** The contract's answers for one person, changed by the test as the bot and the person would change them. */
interface StandIn {
  /** False: every route answers `offStatus` with the server's sentence, as when TELEGRAM_BOT_TOKEN is unset. */
  configured: boolean;
  offStatus: 409 | 503;
  linked: boolean;
  username: string;
  language: 'ru' | 'en';
  switches: { kind: string; enabled: boolean }[];
  /** Seconds a new code is good for. */
  validFor: number;
  codes: string[];
  requests: Recorded[];
  /** While set, PATCH waits for it: the screen is looked at while the change is on its way. */
  hold: Promise<void> | null;
}

const NOT_CONFIGURED = 'Telegram is not configured: the operator sets TELEGRAM_BOT_TOKEN';

/** Answers the Telegram routes under every prefix in `page`, from `s` (which records what was asked). */
async function standIn(page: Page, kinds: string[], init: Partial<StandIn> = {}): Promise<StandIn> {
  const s: StandIn = {
    configured: true,
    offStatus: 503,
    linked: false,
    username: 'ivan_trader',
    language: 'ru',
    switches: kinds.map((kind) => ({ kind, enabled: true })),
    validFor: 600,
    codes: [],
    requests: [],
    hold: null,
    ...init,
  };
  const json = (route: Route, status: number, body: unknown) => route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(body) });
  const state = () => ({
    linked: s.linked,
    username: s.linked ? s.username : null,
    linked_at: s.linked ? '2026-11-27T09:30:00.000Z' : null,
    language: s.linked ? s.language : null,
    switches: s.linked ? s.switches : [],
    bot_username: 'KassirTestBot',
  });
  await page.route(
    (url) => /^\/(executor|merchant|auth)\/v1\/telegram(\/link)?$/.test(url.pathname),
    async (route) => {
      const request = route.request();
      const path = new URL(request.url()).pathname;
      const method = request.method();
      s.requests.push({ method, path, body: request.postData() ? request.postDataJSON() : undefined });
      if (!s.configured) return json(route, s.offStatus, { error: 'TELEGRAM_001', message: NOT_CONFIGURED });
      if (method === 'POST' && path.endsWith('/link')) {
        const code = `c${s.codes.length + 1}${Math.random().toString(36).slice(2, 12)}`;
        s.codes.push(code);
        const url = `https://t.me/KassirTestBot?start=${code}`;
        const qr_svg = await QRCode.toString(url, { type: 'svg', margin: 2 });
        return json(route, 201, { code, url, expires_at: new Date(Date.now() + s.validFor * 1000).toISOString(), qr_svg });
      }
      if (method === 'GET') return json(route, 200, state());
      if (method === 'PATCH') {
        await s.hold;
        const change = request.postDataJSON() as { language?: 'ru' | 'en'; switches?: Record<string, boolean> };
        if (change.language) s.language = change.language;
        for (const [kind, enabled] of Object.entries(change.switches ?? {})) {
          s.switches = s.switches.map((x) => (x.kind === kind ? { kind, enabled } : x));
        }
        return json(route, 200, state());
      }
      if (method === 'DELETE') {
        s.linked = false;
        return route.fulfill({ status: 204 });
      }
      return json(route, 404, { error: 'NOT_FOUND', message: 'Not found' });
    },
  );
  return s;
}

/** A fresh browser in `lang`, signed in as `email` (the session cookie of a real sign-in), failing the test on any CSP violation or page error. */
async function openAs(email: string, lang: Lang, phone: boolean): Promise<{ page: Page; problems: string[] }> {
  const opened = await watchedPage(browser, phone ? { viewport: PHONE, isMobile: true, hasTouch: true } : { viewport: DESKTOP });
  await opened.page.addInitScript((l) => localStorage.setItem('kassir.lang', l), lang);
  const session = await personSignIn(service.app, email, PASSWORD);
  const [name, ...value] = session.cookie.split('=');
  await opened.page.context().addCookies([{ name: name!, value: value.join('='), url: origin }]);
  return opened;
}

/** The QR image on the screen, read back: what a phone's camera would open. */
async function readQr(page: Page, lang: Lang): Promise<string | undefined> {
  const shot = PNG.sync.read(await page.getByRole('img', { name: text(lang, 'telegram.qr') }).screenshot());
  return jsQR(new Uint8ClampedArray(shot.data), shot.width, shot.height)?.data;
}

/** The countdown's seconds left, read from the screen ("9 min 58 s" / "9 мин 58 с"). */
async function secondsShown(page: Page): Promise<number> {
  const text = (await page.getByRole('timer').textContent()) ?? '';
  const min = /(\d+)\s(min|мин)/.exec(text)?.[1] ?? '0';
  const sec = /(\d+)\s(s|с)(\s|$)/.exec(text)?.[1] ?? '0';
  return Number(min) * 60 + Number(sec);
}

/** Nothing wider than the phone: no sideways scrolling at 360 px. */
async function fitsWidth(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth);
}

/**
 * Not linked → "Connect Telegram" → the link, the QR (decoding to the link), the countdown ticking,
 * the chat asked for every few seconds → linked as @username once the bot linked it. Answers the
 * code shown.
 */
async function linksByCode(page: Page, s: StandIn, lang: Lang, prefix: string): Promise<void> {
  await page.getByRole('button', { name: text(lang, 'telegram.connect') }).click();
  const open = page.getByRole('link', { name: text(lang, 'telegram.open') });
  await open.waitFor();
  const url = `https://t.me/KassirTestBot?start=${s.codes.at(-1)}`;
  expect(await open.getAttribute('href')).toBe(url);
  expect(await readQr(page, lang)).toBe(url);
  await page.getByText(`/start ${s.codes.at(-1)}`).waitFor();
  const first = await secondsShown(page);
  expect(first).toBeGreaterThan(590);
  expect(first).toBeLessThanOrEqual(600);
  await expect.poll(() => secondsShown(page), { timeout: 5_000 }).toBeLessThan(first);
  expect(s.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([`${prefix}/telegram/link`]);
}

/** The person pressed Start in Telegram: the screen, asking every few seconds, shows the chat linked without a reload. */
async function becomesLinked(page: Page, s: StandIn, lang: Lang): Promise<void> {
  const asked = s.requests.filter((r) => r.method === 'GET').length;
  s.linked = true;
  await page.getByText(text(lang, 'telegram.linkedAs').replace('{name}', `@${s.username}`)).waitFor({ timeout: 10_000 });
  expect(s.requests.filter((r) => r.method === 'GET').length).toBeGreaterThan(asked);
  await expect.poll(() => page.getByRole('link', { name: text(lang, 'telegram.open') }).count()).toBe(0);
}

/** A switch per kind the server listed, named in `lang`; toggling one sends PATCH and is off while it runs. */
async function togglesAndUnlinks(page: Page, s: StandIn, lang: Lang, prefix: string, kinds: string[]): Promise<void> {
  const group = page.getByRole('group', { name: text(lang, 'telegram.switches') });
  await expect.poll(() => group.getByRole('switch').count()).toBe(kinds.length);
  for (const kind of kinds) expect(await group.getByRole('switch', { name: text(lang, `telegram.kind.${kind}`) }).isChecked()).toBe(true);

  let release = () => {};
  s.hold = new Promise((resolve) => {
    release = resolve;
  });
  const toggle = group.getByRole('switch', { name: text(lang, `telegram.kind.${kinds[1]}`) });
  await toggle.click({ force: true });
  // On its way: every switch waits, the one asked shows the value asked for.
  await expect.poll(() => toggle.isDisabled()).toBe(true);
  expect(await toggle.isChecked()).toBe(false);
  release();
  s.hold = null;
  await expect.poll(() => toggle.isDisabled()).toBe(false);
  expect(await toggle.isChecked()).toBe(false);
  expect(s.switches.find((x) => x.kind === kinds[1])?.enabled).toBe(false);
  const patches = s.requests.filter((r) => r.method === 'PATCH');
  expect(patches).toEqual([{ method: 'PATCH', path: `${prefix}/telegram`, body: { switches: { [kinds[1]!]: false } } }]);

  // The language of the messages.
  await page.getByRole('combobox', { name: text(lang, 'telegram.language') }).click();
  await page.getByRole('option', { name: 'English' }).click();
  await expect.poll(() => s.requests.filter((r) => r.method === 'PATCH').at(-1)?.body).toEqual({ language: 'en' });
  await expect.poll(() => page.getByRole('combobox', { name: text(lang, 'telegram.language') }).inputValue()).toBe('English');

  // Unlinking asks first; "back" unlinks nothing.
  await page.getByRole('button', { name: text(lang, 'telegram.unlink') }).click();
  const dialog = page.getByRole('dialog', { name: text(lang, 'telegram.unlinkTitle') });
  await dialog.getByText(text(lang, 'telegram.unlinkText').replace('{name}', `@${s.username}`)).waitFor();
  await dialog.getByRole('button', { name: text(lang, 'action.back') }).click();
  await dialog.waitFor({ state: 'detached' });
  expect(s.requests.some((r) => r.method === 'DELETE')).toBe(false);
  await page.getByRole('button', { name: text(lang, 'telegram.unlink') }).click();
  await page
    .getByRole('dialog', { name: text(lang, 'telegram.unlinkTitle') })
    .getByRole('button', { name: text(lang, 'telegram.unlink') })
    .click();
  await page.getByRole('button', { name: text(lang, 'telegram.connect') }).waitFor();
  expect(s.requests.filter((r) => r.method === 'DELETE')).toEqual([{ method: 'DELETE', path: `${prefix}/telegram`, body: undefined }]);
}

/** Staff's kinds as the server's first catalogue lists them. */
const SERVER_STAFF_KINDS = ['alert_rate_stale', ...SERVER_SPELLINGS.slice(2, 5), 'alert_disputes_overdue', ...SERVER_SPELLINGS.slice(5)];

describe('the kinds of message', () => {
  it('each has a name in Russian and in English, in both spellings', () => {
    for (const kind of [...EXECUTOR_KINDS, ...STAFF_KINDS, ...MERCHANT_KINDS, ...SERVER_SPELLINGS]) {
      expect(text('ru', `telegram.kind.${kind}`)).not.toBe(text('en', `telegram.kind.${kind}`));
    }
  });
});

describe("the executor's cabinet on a 360 px phone", () => {
  it('links by the deep link and QR with a countdown, shows the switches once linked, toggles, changes language and unlinks (Russian)', {
    timeout: 90_000,
  }, async () => {
    const { page, problems } = await openAs(executorEmail, 'ru', true);
    const s = await standIn(page, EXECUTOR_KINDS);
    await page.goto(`${origin}/cabinet`);
    // Not linked yet: Today offers it, below the work.
    const nudge = page.getByRole('region', { name: text('ru', 'telegram.title') });
    await nudge.getByText(text('ru', 'telegram.nudge')).waitFor();
    await nudge.getByRole('link', { name: text('ru', 'telegram.connect') }).click();
    await page.getByText(text('ru', 'telegram.intro.executor')).waitFor();
    await linksByCode(page, s, 'ru', '/executor/v1');
    expect(await fitsWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: `${SHOTS}/telegram-cabinet-link-ru.png` });

    // A new code replaces the one shown.
    await page.getByRole('button', { name: text('ru', 'telegram.newCode') }).click();
    await page.getByText(`/start ${s.codes[1]}`).waitFor();
    expect(s.codes).toHaveLength(2);
    expect(await readQr(page, 'ru')).toBe(`https://t.me/KassirTestBot?start=${s.codes[1]}`);

    await becomesLinked(page, s, 'ru');
    expect(await fitsWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: `${SHOTS}/telegram-cabinet-linked-ru.png` });
    await togglesAndUnlinks(page, s, 'ru', '/executor/v1', EXECUTOR_KINDS);
    expect(s.requests.every((r) => r.path.startsWith('/executor/v1/'))).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('says the bot is not set up, and what the operator does, when the routes answer 503 (English)', async () => {
    const { page, problems } = await openAs(executorEmail, 'en', true);
    const s = await standIn(page, EXECUTOR_KINDS, { configured: false, offStatus: 503 });
    await page.goto(`${origin}/cabinet`);
    await page.getByRole('heading', { name: text('en', 'cabinet.shift') }).waitFor();
    await expect.poll(() => s.requests.length).toBeGreaterThan(0);
    expect(await page.getByRole('region', { name: text('en', 'telegram.title') }).count()).toBe(0);
    // One tap from every screen: the Telegram button in the cabinet's header (Today offers nothing while the bot is off).
    await page.getByRole('link', { name: text('en', 'telegram.title') }).click();
    await page.getByText(text('en', 'telegram.notConfigured')).waitFor();
    expect(s.requests.filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(2);
    await page.getByText(/TELEGRAM_BOT_TOKEN in Kassir's environment/).waitFor();
    await page.getByText(NOT_CONFIGURED).waitFor();
    expect(await page.getByRole('button', { name: text('en', 'telegram.connect') }).count()).toBe(0);
    expect(await fitsWidth(page)).toBeLessThanOrEqual(PHONE.width);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the console (staff, on the Security screen beside two-factor)', () => {
  it('links under /auth/v1 with the QR and countdown, then shows the alerts of the role as switches (English, desktop)', { timeout: 90_000 }, async () => {
    const { page, problems } = await openAs(staffEmail, 'en', false);
    const s = await standIn(page, SERVER_STAFF_KINDS, { username: 'olga_support' });
    await page.goto(`${origin}/console/security`);
    await page.getByRole('heading', { name: text('en', 'security.twoFactor') }).waitFor();
    await page.getByText(text('en', 'telegram.intro.staff')).waitFor();
    await linksByCode(page, s, 'en', '/auth/v1');
    await page.screenshot({ path: `${SHOTS}/telegram-console-link-en.png`, fullPage: true });
    await becomesLinked(page, s, 'en');
    await togglesAndUnlinks(page, s, 'en', '/auth/v1', SERVER_STAFF_KINDS);
    expect(s.requests.every((r) => r.path.startsWith('/auth/v1/'))).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('in Russian on a 360 px phone: the not-configured answer (409) with the operator’s step', async () => {
    const { page, problems } = await openAs(staffEmail, 'ru', true);
    await standIn(page, STAFF_KINDS, { configured: false, offStatus: 409 });
    await page.goto(`${origin}/console/security`);
    await page.getByText(text('ru', 'telegram.notConfigured')).waitFor();
    await page.getByText(/TELEGRAM_BOT_TOKEN в окружении Kassir/).waitFor();
    // The server's English sentence is not put on a Russian screen: the hint says it in Russian.
    expect(await page.getByText(NOT_CONFIGURED).count()).toBe(0);
    expect(await fitsWidth(page)).toBeLessThanOrEqual(PHONE.width);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the merchant cabinet', () => {
  it('links under /merchant/v1; an expired code offers only a new one; linked, its two kinds as switches (Russian, phone)', { timeout: 90_000 }, async () => {
    const { page, problems } = await openAs(merchantEmail, 'ru', true);
    const s = await standIn(page, MERCHANT_KINDS, { username: 'shop_dev', validFor: 3 });
    await page.goto(`${origin}/merchant/security`);
    await page.getByText(text('ru', 'telegram.intro.merchant')).waitFor();
    await page.getByRole('button', { name: text('ru', 'telegram.connect') }).click();
    await page.getByRole('link', { name: text('ru', 'telegram.open') }).waitFor();
    expect(await readQr(page, 'ru')).toBe(`https://t.me/KassirTestBot?start=${s.codes[0]}`);
    // Three seconds later the code is gone from the screen: nothing to scan that would not work.
    await page.getByText(text('ru', 'telegram.expired')).waitFor({ timeout: 8_000 });
    expect(await page.getByRole('link', { name: text('ru', 'telegram.open') }).count()).toBe(0);
    expect(await page.getByRole('img', { name: text('ru', 'telegram.qr') }).count()).toBe(0);
    s.validFor = 600;
    await page.getByRole('button', { name: text('ru', 'telegram.newCode') }).click();
    await page.getByText(`/start ${s.codes[1]}`).waitFor();
    expect(await secondsShown(page)).toBeGreaterThan(590);
    expect(await fitsWidth(page)).toBeLessThanOrEqual(PHONE.width);
    await becomesLinked(page, s, 'ru');
    await togglesAndUnlinks(page, s, 'ru', '/merchant/v1', MERCHANT_KINDS);
    expect(s.requests.every((r) => r.path.startsWith('/merchant/v1/'))).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
