/**
 * Screenshots of the hosted payment page for the docs (docs/screenshots/): a RUB card, an SBP QR
 * and a cross-border RUB→TJS card payment in Russian and English, plus the success, checking and
 * not-found screens.
 * Starts the whole service on an embedded database in a temporary folder and drives Chromium at
 * a phone viewport (a system one on PATH, else the one @sparticuz/chromium ships: test/browser.ts).
 *
 *   npx tsx scripts/screenshots.ts            (CHROMIUM=/path/to/chromium to use another browser)
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';
import { startService } from '../src/instance.js';
import { createLogger } from '../src/lib/logger.js';
import { crc16ccitt, luhnValid } from '../src/lib/validators.js';
import { launchChromium } from '../test/browser.js';

const OUT = 'docs/screenshots';
const ADMIN = 'screenshots-admin';

function cardNumber(prefix: string): string {
  for (let check = 0; check < 10; check++) if (luhnValid(prefix + check)) return prefix + check;
  throw new Error('no check digit');
}

function emv(): string {
  const tlv = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
  const body =
    tlv('00', '01') +
    tlv('01', '12') +
    tlv('26', tlv('00', 'ru.nspk.sbp') + tlv('01', 'AD10006M8KH6PQ7B8V9SR4ODFTGSV3M')) +
    tlv('53', '643') +
    tlv('54', '3100.00') +
    tlv('58', 'RU') +
    tlv('59', 'OOO ROMASHKA') +
    tlv('60', 'Moscow') +
    '6304';
  return body + crc16ccitt(body);
}

const dir = await mkdtemp(join(tmpdir(), 'kassir-shots-'));
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const config = loadConfig({
  KASSIR_DATA_DIR: dir,
  PORT: String(port),
  PUBLIC_BASE_URL: origin,
  ADMIN_TOKEN: ADMIN,
  KASSIR_MASTER_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'silent',
  KASSIR_WORKER: 'false',
});
const service = await startService(config, createLogger('silent'), { listen: true });
const browser = await launchChromium();

try {
  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await service.app.inject({
      method: method as 'GET',
      url,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url} → ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, any>;
  };
  const adminCall = (method: string, url: string, body?: unknown) => call(method, `/admin/v1${url}`, body, { authorization: `Bearer ${ADMIN}` });

  await adminCall('PUT', '/rates/RUB', { rate: 95.5 });
  await adminCall('PUT', '/rates/TJS', { rate: 10.95 });
  const merchant = await adminCall('POST', '/merchants', { name: 'Romashka' });
  const terminal = await adminCall('POST', `/merchants/${merchant.id}/terminals`, {
    name: 'Web store',
    currency: 'RUB',
    payin_rate: 2.5,
    payout_rate: 1.5,
    withdrawal_fee: 1,
  });
  await adminCall('PATCH', `/terminals/${terminal.id}`, { return_url: 'https://romashka.example/orders/1042' });
  const executor = await adminCall('POST', '/executors', { name: 'Trader' });
  await adminCall('POST', `/executors/${executor.id}/adjustments`, { amount: 5000, reason: 'deposit' });
  const requisite = (body: Record<string, unknown>) =>
    adminCall('POST', `/executors/${executor.id}/requisites`, { currency: 'RUB', country: 'RU', min_amount: 0, ...body });
  const card = await requisite({ type: 'card', value: cardNumber('220070012345678'), bank: 'sberbank', holder: 'Иван П.', methods: ['CARD'] });
  await requisite({ type: 'qr', value: emv(), bank: 'tinkoff', holder: 'ООО «Ромашка»', methods: ['SBP_QR'] });
  await requisite({
    type: 'card',
    value: cardNumber('444455556666777'),
    bank: 'eskhata',
    holder: 'Рустам К.',
    currency: 'TJS',
    country: 'TJ',
    methods: ['CROSS_BORDER_CARD'],
  });

  const pay = (body: Record<string, unknown>) => {
    const raw = JSON.stringify({ ext_id: `shot-${randomBytes(4).toString('hex')}`, ...body });
    return call('POST', '/v1/payments', JSON.parse(raw), {
      'x-identity': terminal.api_key,
      'x-signature': signRequest(merchant.secret_key, 'POST', `${origin}/v1/payments`, raw),
    });
  };
  const shots: Array<[name: string, url: string]> = [];
  const rubCard = await pay({ amount: 1500 });
  const sbpQr = await pay({ amount: 3100, method: 'SBP_QR' });
  const crossBorder = await pay({ amount: 5000, currency: 'RUB', method: 'CROSS_BORDER_CARD', country: 'TJ' });
  const paid = await pay({ amount: 2490 });
  const confirmed = await pay({ amount: 1990 });
  for (const lang of ['ru', 'en']) {
    shots.push([`rub-card-${lang}`, `${rubCard.payment_url}?lang=${lang}`]);
    shots.push([`sbp-qr-${lang}`, `${sbpQr.payment_url}?lang=${lang}`]);
    shots.push([`cross-border-tjs-${lang}`, `${crossBorder.payment_url}?lang=${lang}`]);
  }
  await call('POST', '/executor/v1/notifications', { requisite_id: card.id, amount: 2490 }, { authorization: `Bearer ${executor.token}` });
  shots.push(['success-ru', `${paid.payment_url}?lang=ru`], ['success-en', `${paid.payment_url}?lang=en`]);
  await call('POST', `${new URL(confirmed.payment_url).pathname}/confirm`, {}, { accept: 'application/json' });
  shots.push(['checking-en', `${confirmed.payment_url}?lang=en`], ['not-found-ru', `${origin}/pay/${'0'.repeat(32)}`]);

  await mkdir(OUT, { recursive: true });
  const contexts = {
    ru: await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'ru-RU' }),
    en: await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US' }),
  };
  for (const [name, url] of shots) {
    const page = await contexts[name.endsWith('-ru') ? 'ru' : 'en'].newPage();
    await page.goto(url, { waitUntil: 'networkidle' });
    await page
      .locator('button[data-copy]')
      .first()
      .waitFor({ state: 'visible' })
      .catch(() => undefined);
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
    await page.close();
    console.log(`${OUT}/${name}.png`);
  }
} finally {
  await browser.close();
  await service.stop();
  await rm(dir, { recursive: true, force: true });
}
