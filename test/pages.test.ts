/**
 * The hosted payment page (issue 7) in a real browser: Chromium (a system one, else the one
 * @sparticuz/chromium ships; see test/browser.ts) driven by
 * playwright-core, at a phone-sized viewport, against the whole service listening on a real port
 * (PUBLIC_BASE_URL is that address, so `payment_url` opens as a payer would open it).
 */

import jsQRModule from 'jsqr';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { maskUrl } from '../src/lib/mask.js';
import { crc16ccitt } from '../src/lib/validators.js';
import { launchChromium } from './browser.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  startTestService,
  type TestService,
  TINY_PNG,
  testCard,
  uniqueExtId,
  until,
} from './helpers.js';

const PHONE = { width: 390, height: 844 };
const NBSP = '\u00a0';
// jsqr is CommonJS with an ES-style default: under NodeNext the function is `.default`.
const jsQR = (jsQRModule as unknown as { default: typeof jsQRModule.default }).default;

/** A minimal merchant-presented EMV QR payload (SBP-style) with a correct CRC. */
function emvPayload(shop = 'Shop'): string {
  const body = `00020101021226160012ru.sbp.tests53036435802RU59${String(shop.length).padStart(2, '0')}${shop}6006Moscow6304`;
  return body + crc16ccitt(body);
}

let service: TestService;
let origin: string;
let browser: Browser;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let card: { id: string; value: string };
let qr: { id: string; value: string };
let tjCard: { id: string; value: string };
let sbp: { id: string; value: string };
/** Every CSP report and console error seen by any page of this file. */
const cspViolations: string[] = [];
// Distinct from the amounts some tests pick themselves.
let amountSeq = 0;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = await startTestService({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: origin }, { listen: true, worker: true });
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  await setRate(service.app, 'TJS', 10.95);
  merchant = await createMerchant(service.app, { name: 'Main' });
  executor = await createExecutor(service.app);
  card = await createRequisite(service.app, executor.id, { type: 'card', value: testCard('2200'), bank: 'sberbank', holder: 'Ivan I.', methods: ['CARD'] });
  qr = await createRequisite(service.app, executor.id, { type: 'qr', value: emvPayload(), bank: 'vtb', holder: 'Petr P.', methods: ['SBP_QR'] });
  sbp = await createRequisite(service.app, executor.id, { type: 'sbp', value: '+7 (912) 345-67-89', bank: 'tinkoff', holder: 'Anna S.', methods: ['SBP'] });
  tjCard = await createRequisite(service.app, executor.id, {
    type: 'card',
    value: testCard('4444'),
    bank: 'eskhata',
    holder: 'Rustam K.',
    currency: 'TJS',
    country: 'TJ',
    methods: ['CROSS_BORDER_CARD'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  // Pages opened after the CSP test count too.
  expect(cspViolations).toEqual([]);
});

/** A fresh payment (a distinct amount each time: one requisite never serves two equal amounts at once). */
async function newPayment(body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const amount = body.amount ?? 1000 + amountSeq++;
  const res = await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('page'), amount, ...body }, origin);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function getPayment(id: string): Promise<Record<string, any>> {
  return (await signed(service.app, merchant, 'GET', `/v1/payments/${id}`, undefined, origin)).json();
}

async function phoneContext(options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'ru-RU', ...options });
  context.on('page', watch);
  return context;
}

/** Records CSP violations, both as the browser reports them to the page and on its console. */
function watch(page: Page): void {
  void page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  page.on('console', (message: ConsoleMessage) => {
    if (/Content Security Policy|CSP violation/i.test(message.text())) cspViolations.push(message.text());
  });
}

async function openPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  return page;
}

describe('reading the requisites', () => {
  it('a RUB card payment shows the amount, the grouped card number, bank and holder; the title has no card number', async () => {
    const payment = await newPayment({ amount: 1500 });
    expect(payment.payment_url).toMatch(new RegExp(`^${origin}/pay/[0-9a-f]{12}[A-Za-z0-9_-]{32}$`));
    const context = await phoneContext();
    const page = await openPage(context, payment.payment_url);

    await expect.poll(() => page.locator('#amount').textContent()).toBe(`1${NBSP}500${NBSP}₽`);
    const grouped = card.value.replace(/(\d{4})(?=\d)/g, '$1 ');
    expect(await page.locator('#v-number').textContent()).toBe(grouped);
    expect(await page.locator('#v-bank').textContent()).toBe('Сбербанк');
    expect(await page.locator('#v-holder').textContent()).toBe('Ivan I.');
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    await expect.poll(() => page.locator('#countdown').textContent()).toMatch(/^1[45]:\d\d$/);
    const title = await page.title();
    expect(title).toContain('1');
    expect(title.replace(/\D/g, '')).not.toContain(card.value.slice(0, 6));
    // Everything fits the phone's width: nothing scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await context.close();
  });

  it('copy buttons put the card number and the amount on the clipboard', async () => {
    const payment = await newPayment({ amount: 2750.5 });
    const context = await phoneContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await openPage(context, payment.payment_url);

    const copyCard = page.getByRole('button', { name: 'Копировать: номер карты' });
    await copyCard.click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(card.value);
    await expect.poll(() => copyCard.textContent()).toBe('Скопировано');
    await expect.poll(() => page.locator('#announce').textContent()).toBe('Скопировано');

    await page.getByRole('button', { name: 'Копировать: сумму' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('2750,50');
    await context.close();
  });

  it('an SBP payment shows the phone number formatted, copies it as +digits, and names the bank in the steps', async () => {
    const payment = await newPayment({ method: 'SBP', amount: 4100 });
    expect(payment.requisites).toMatchObject({ type: 'sbp', value: '+79123456789' });
    const context = await phoneContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await openPage(context, payment.payment_url);
    expect(await page.locator('#v-number').textContent()).toBe('+7 912 345-67-89');
    expect(await page.locator('#v-bank').textContent()).toBe('Т-Банк');
    expect(await page.locator('.steps li').first().textContent()).toContain('по СБП');
    await page.getByRole('button', { name: 'Копировать: номер телефона' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(sbp.value);
    await context.close();
  });

  it('an SBP QR payment shows a QR image that decodes back to the EMV string', async () => {
    const payment = await newPayment({ method: 'SBP_QR', amount: 3100 });
    expect(payment.requisites).toMatchObject({ type: 'qr', value: qr.value });
    const context = await phoneContext({ deviceScaleFactor: 1 });
    const page = await openPage(context, payment.payment_url);

    const shot = PNG.sync.read(await page.locator('#qr-image').screenshot());
    const decoded = jsQR(new Uint8ClampedArray(shot.data), shot.width, shot.height);
    expect(decoded?.data).toBe(qr.value);
    expect(await page.locator('#qr-image').getAttribute('aria-label')).toMatch(/QR/);
    // The raw string is there too, with its own copy button, behind a disclosure.
    await page.locator('.qr-data summary').click();
    expect(await page.locator('#v-qrdata').textContent()).toBe(qr.value);
    await context.close();
  });

  it('a cross-border RUB→TJS payment shows amount_local in somoni first and the order amount in roubles', async () => {
    const payment = await newPayment({ method: 'CROSS_BORDER_CARD', country: 'TJ', currency: 'RUB', amount: 5000 });
    expect(payment.requisites).toMatchObject({ currency: 'TJS', country: 'TJ', value: tjCard.value });
    const context = await phoneContext({ locale: 'en-US' });
    const page = await openPage(context, payment.payment_url);

    const local = String(payment.requisites.amount_local);
    const [whole, cents] = local.split('.');
    const expected = `${Number(whole).toLocaleString('en-US')}${cents ? `.${cents.padEnd(2, '0')}` : ''}${NBSP}TJS`;
    expect(await page.locator('#amount').textContent()).toBe(expected);
    expect(await page.locator('.amount-card').textContent()).toContain(`Order amount: 5,000${NBSP}₽`);
    expect(await page.locator('#v-country').textContent()).toBe('Tajikistan');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await context.close();
  });

  it('the language follows Accept-Language and the visible switch (?lang=)', async () => {
    const payment = await newPayment();
    const context = await phoneContext({ locale: 'en-GB' });
    const page = await openPage(context, payment.payment_url);
    expect(await page.locator('#h-amount').textContent()).toBe('Amount to pay');
    await page.getByRole('link', { name: 'RU' }).click();
    await page.waitForURL(/\?lang=ru$/);
    expect(await page.locator('#h-amount').textContent()).toBe('К оплате');
    expect(await page.getByRole('link', { name: 'RU' }).getAttribute('aria-current')).toBe('true');
    await context.close();
  });

  it('without JavaScript the requisites are readable, copy buttons do not pretend to work, and a hint says to reload', async () => {
    const payment = await newPayment();
    const context = await phoneContext({ javaScriptEnabled: false });
    const page = await openPage(context, payment.payment_url);
    expect(await page.locator('#v-number').isVisible()).toBe(true);
    expect(await page.locator('#v-number').textContent()).toBe(card.value.replace(/(\d{4})(?=\d)/g, '$1 '));
    expect(await page.locator('#amount').isVisible()).toBe(true);
    expect(await page.locator('button[data-copy]').first().isVisible()).toBe(false);
    expect(await page.locator('noscript').count()).toBe(1);
    await context.close();
  });
});

describe('"I paid"', () => {
  it('with a PNG receipt confirms through the same flow as the API: source page, receipt stored, page shows "checking"', async () => {
    const payment = await newPayment();
    const context = await phoneContext();
    const page = await openPage(context, payment.payment_url);

    await page.locator('#receipt').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: TINY_PNG });
    await page.getByRole('button', { name: 'Я оплатил' }).click();
    await expect.poll(() => page.locator('#h-checking').isVisible()).toBe(true);
    expect(await page.locator('#confirm-form').isVisible()).toBe(false);
    expect(await page.locator('#countdown').isVisible()).toBe(false);

    const { rows } = await service.ctx.db.query(
      `SELECT c.source, r.id AS receipt_id, r.source AS receipt_source, r.content_type
         FROM payment_confirmations c LEFT JOIN receipts r ON r.id = c.receipt_id WHERE c.payment_id = $1`,
      [payment.id],
    );
    expect(rows).toEqual([{ source: 'page', receipt_id: expect.any(String), receipt_source: 'page', content_type: 'image/png' }]);
    // The dispute reviewer gets exactly the bytes the payer picked.
    const download = await admin(service.app, 'GET', `/receipts/${rows[0].receipt_id}`);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(TINY_PNG)).toBe(true);
    // The spec: confirm leaves the payment PENDING; verification has started.
    expect((await getPayment(payment.id)).status).toBe('PENDING');
    const verify = await service.ctx.db.query('SELECT verify_until FROM payments WHERE id = $1', [payment.id]);
    expect(verify.rows[0].verify_until).not.toBeNull();

    // A reload keeps the payer on "checking", rendered by the server.
    await page.reload();
    expect(await page.locator('#h-checking').isVisible()).toBe(true);
    await context.close();
  });

  it('a file the server refuses (not an image, despite its name) is answered in plain words, and nothing is recorded', async () => {
    const payment = await newPayment();
    const context = await phoneContext({ locale: 'en-US' });
    const page = await openPage(context, payment.payment_url);
    await page.locator('#receipt').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: Buffer.from('not really a picture') });
    await page.getByRole('button', { name: 'I paid' }).click();
    await expect.poll(() => page.locator('#form-error').textContent()).toBe('This file type does not work here. Attach a PNG, JPG, WEBP, HEIC or PDF.');
    expect(await page.locator('#confirm-form').isVisible()).toBe(true);
    const { rows } = await service.ctx.db.query('SELECT 1 FROM payment_confirmations WHERE payment_id = $1', [payment.id]);
    expect(rows).toHaveLength(0);
    await context.close();
  });

  it('a receipt over 10 MB is stopped in the browser before it is sent', async () => {
    const payment = await newPayment();
    const context = await phoneContext();
    const page = await openPage(context, payment.payment_url);
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') sent.push(request.url());
    });
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0);
    TINY_PNG.copy(big);
    await page.locator('#receipt').setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: big });
    await expect.poll(() => page.locator('#form-error').textContent()).toBe('Файл больше 10 МБ. Выберите файл поменьше или сделайте скриншот.');
    await page.getByRole('button', { name: 'Я оплатил' }).click();
    expect(await page.locator('#receipt').getAttribute('aria-invalid')).toBe('true');
    expect(sent).toEqual([]);
    await context.close();
  });

  it('without JavaScript the form still confirms (an untouched file input is no receipt) and comes back to "checking"', async () => {
    const payment = await newPayment();
    const context = await phoneContext({ javaScriptEnabled: false });
    const page = await openPage(context, payment.payment_url);
    await Promise.all([page.waitForURL(/\?lang=ru$/), page.getByRole('button', { name: 'Я оплатил' }).click()]);
    expect(await page.locator('#h-checking').isVisible()).toBe(true);
    const { rows } = await service.ctx.db.query('SELECT source, receipt_id FROM payment_confirmations WHERE payment_id = $1', [payment.id]);
    expect(rows).toEqual([{ source: 'page', receipt_id: null }]);
    await context.close();
  });

  it("the confirm endpoint takes JSON too and answers a finished payment with PAY_008 in the payer's words", async () => {
    const payment = await newPayment();
    const token = payment.payment_url.split('/').pop();
    const first = await service.app.inject({
      method: 'POST',
      url: `/pay/${token}/confirm?lang=en`,
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ state: 'checking', status: 'PENDING' });

    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    const form = multipartBody({}, { content: TINY_PNG });
    const refused = await service.app.inject({
      method: 'POST',
      url: `/pay/${token}/confirm?lang=ru`,
      headers: { accept: 'application/json', 'content-type': form.contentType },
      payload: form.body,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      error: 'PAY_008',
      message: 'Этот платёж уже не ждёт подтверждения. Показываем его текущий статус.',
      data: { status: 'CANCELLED' },
    });
  });
});

describe('live status', () => {
  it("an executor notification turns the page to success without a reload, with the terminal's return link", async () => {
    const returnUrl = 'https://shop.example/thanks?order=42';
    const bad = await admin(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { return_url: 'javascript:alert(1)' });
    expect(bad.statusCode).toBe(400);
    expect((await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { return_url: returnUrl })).return_url).toBe(returnUrl);

    const payment = await newPayment();
    const context = await phoneContext();
    const page = await openPage(context, payment.payment_url);
    await page.evaluate(() => {
      (window as unknown as { marker: string }).marker = 'same document';
    });
    expect(await page.locator('#h-success').isVisible()).toBe(false);

    const notified = await service.app.inject({
      method: 'POST',
      url: '/executor/v1/notifications',
      headers: { authorization: `Bearer ${executor.token}`, 'content-type': 'application/json' },
      payload: { requisite_id: card.id, amount: payment.amount, received_at: new Date().toISOString() },
    });
    expect(notified.json()).toMatchObject({ matched: true, payment_id: payment.id });

    await expect.poll(() => page.locator('#h-success').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe('same document');
    expect(await page.locator('#v-number').isVisible()).toBe(false);
    expect(await page.getByRole('link', { name: 'Вернуться в магазин' }).getAttribute('href')).toBe(returnUrl);
    await expect.poll(() => page.locator('#announce').textContent()).toBe('Статус платежа: Оплата получена');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('h-success');

    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { return_url: null });
    await context.close();
  });

  it('a payment whose time runs out shows the expired screen live, and the server agrees (sweep: CANCELLED, expired)', async () => {
    const payment = await newPayment();
    await service.ctx.db.query(`UPDATE payments SET valid_until = now() + interval '8 seconds' WHERE id = $1`, [payment.id]);
    const context = await phoneContext({ locale: 'en-US' });
    const page = await openPage(context, payment.payment_url);
    expect(await page.locator('#countdown').textContent()).toMatch(/^0:0\d$/);

    await expect.poll(() => page.locator('#h-expired').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator('#v-number').isVisible()).toBe(false);
    expect(await page.locator('#h-expired').textContent()).toBe('The time to pay has run out');

    await until(async () => ((await getPayment(payment.id)).status === 'CANCELLED' ? true : undefined));
    await page.reload();
    expect(await page.locator('#h-expired').isVisible()).toBe(true);
    // Once expired, the server does not send the requisites at all.
    expect(await page.content()).not.toContain(card.value.slice(-4));
    await context.close();
  });

  it('a cancelled payment switches to the cancelled screen, then to the dispute screen when the merchant opens one', async () => {
    const payment = await newPayment();
    const context = await phoneContext();
    const page = await openPage(context, payment.payment_url);
    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    await expect.poll(() => page.locator('#h-cancelled').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await page.locator('#confirm-form').isVisible()).toBe(false);

    const dispute = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/dispute`, { comment: 'payer sent a receipt' }, origin);
    expect(dispute.statusCode, dispute.body).toBe(200);
    // Off the fast lane (a cancelled page polls every 15 s); coming back to the tab polls at once.
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await expect.poll(() => page.locator('#h-dispute').isVisible(), { timeout: 20_000 }).toBe(true);
    await context.close();
  });

  it('the status document holds the state and the deadline, nothing of the merchant', async () => {
    const payment = await newPayment();
    const token = payment.payment_url.split('/').pop();
    const res = await service.app.inject({ method: 'GET', url: `/pay/${token}/status` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.json()).sort()).toEqual(['server_time', 'state', 'status', 'valid_until']);
    expect(res.json()).toMatchObject({ state: 'pay', status: 'PENDING', valid_until: payment.valid_until });
  });
});

describe('not found, safety, size', () => {
  it('an unknown token shows a friendly 404 page in both languages', async () => {
    const context = await phoneContext();
    const page = await context.newPage();
    const response = await page.goto(`${origin}/pay/${'x'.repeat(32)}`);
    expect(response?.status()).toBe(404);
    expect(response?.headers()['content-type']).toMatch(/^text\/html/);
    expect(await page.locator('h1').textContent()).toBe('Страница оплаты не найдена');
    expect(await page.locator('section[lang="en"] h2').textContent()).toBe('Payment page not found');
    const other = await page.goto(`${origin}/pay/nothing/here`);
    expect(other?.status()).toBe(404);
    await context.close();
  });

  it("an unknown token's status is a JSON 404", async () => {
    const status = await service.app.inject({ method: 'GET', url: `/pay/${'y'.repeat(32)}/status?lang=en` });
    expect(status.statusCode).toBe(404);
    expect(status.json()).toEqual({ error: 'PAY_006', message: 'Payment not found. Check the link.' });
  });

  it('every page response carries a strict CSP and friends; no page of this file saw a CSP violation', async () => {
    const payment = await newPayment({ method: 'SBP_QR', amount: 3200 });
    const res = await fetch(payment.payment_url);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    // No inline script or style, nothing from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/(src|href)="https?:/);

    const context = await phoneContext();
    const page = await openPage(context, payment.payment_url);
    await expect.poll(() => page.locator('button[data-copy]').first().isVisible()).toBe(true);
    await context.close();
    expect(cspViolations).toEqual([]);
  });

  it('the first render transfers under 100 KB in total (HTML, CSS, JS, icon)', async () => {
    const payment = await newPayment({ method: 'SBP_QR', amount: 3300 });
    const context = await phoneContext();
    const page = await context.newPage();
    const sizes: Array<Promise<number>> = [];
    page.on('requestfinished', (request) => {
      sizes.push(request.sizes().then((s) => s.responseBodySize + s.responseHeadersSize));
    });
    await page.goto(payment.payment_url, { waitUntil: 'load' });
    await page.waitForLoadState('networkidle');
    const total = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    expect(total).toBeGreaterThan(5_000);
    expect(total).toBeLessThan(100 * 1024);
    await context.close();
  });

  it('requests are rate-limited per token with a friendly answer; another token is unaffected', async () => {
    const payment = await newPayment();
    const token = payment.payment_url.split('/').pop();
    let last = await service.app.inject({ method: 'GET', url: `/pay/${token}/status` });
    for (let i = 0; i < 100 && last.statusCode === 200; i++) {
      last = await service.app.inject({ method: 'GET', url: `/pay/${token}/status?lang=en` });
    }
    expect(last.statusCode).toBe(429);
    expect(last.json()).toEqual({ error: 'RATE_LIMITED', message: 'Too many attempts. Wait a minute and try again.' });
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);

    let page = await service.app.inject({ method: 'GET', url: `/pay/${token}` });
    for (let i = 0; i < 100 && page.statusCode === 200; i++) page = await service.app.inject({ method: 'GET', url: `/pay/${token}` });
    expect(page.statusCode).toBe(429);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Слишком много запросов');

    const other = await newPayment();
    const fresh = await service.app.inject({ method: 'GET', url: `/pay/${other.payment_url.split('/').pop()}/status` });
    expect(fresh.statusCode).toBe(200);
  });

  it('the request log never holds a page token in full', () => {
    const token = 'AbCdEfGhIjKlMnOpQrStUvWxYz012345';
    expect(maskUrl(`/pay/${token}`, '/pay')).toBe('/pay/AbCdEf***');
    expect(maskUrl(`/pay/${token}/status?lang=en`, '/pay')).toBe('/pay/AbCdEf***/status?lang=en');
    expect(maskUrl('/pay/assets/page.c0ffeebadf00.css', '/pay')).toBe('/pay/assets/page.c0ffeebadf00.css');
    expect(maskUrl(`/v1/payments/${token}`, '/pay')).toBe(`/v1/payments/${token}`);
  });
});
