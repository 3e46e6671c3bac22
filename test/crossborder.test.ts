/**
 * Cross-border pay-in through POST /v1/payments (spec "POST /v1/payments": methods by currency and
 * "Cross-border rules" 1–7).
 *
 * The spec's descriptions disagree on whether `currency` is required for cross-border methods and
 * must equal the terminal's currency. Kassir takes the lenient reading: `currency` is optional for
 * every method and defaults to the terminal's currency ("Default: the terminal's currency"); when
 * given, it must be a supported order currency AND equal the terminal's currency (PAY_002
 * otherwise). Rule 4 ("currency omitted → rubles") is then the RUB-terminal case of the default.
 *
 * Expected local amounts are computed here independently with decimal.js (exact product, then
 * half-up rounding to the local currency's minor unit), never with the service's own helpers.
 */
import { randomInt } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { crc16ccitt } from '../src/lib/validators.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  type RequisiteInput,
  setRate,
  signed,
  startTestService,
  type TestService,
  testCard,
  uniqueExtId,
} from './helpers.js';

/** Price of 1 USDT in each currency. */
const RATES = { RUB: 95.5, KZT: 480.25, TJS: 10.95, UZS: 12650, KGS: 87.3, AZN: 1.7, VND: 25400 } as const;
const MINOR: Record<string, number> = { RUB: 2, KZT: 2, TJS: 2, UZS: 2, KGS: 2, AZN: 2, AMD: 2, VND: 0 };

// Enough precision that A × to ÷ from is exact before the one rounding the spec implies.
const Exact = Decimal.clone({ precision: 80 });

/** What the payer should pay in `to` for `amount` in `from`: amount ÷ rate(from) × rate(to), half up. */
function expectedLocal(amount: number | string, from: keyof typeof RATES, to: keyof typeof RATES): number {
  const exact = new Exact(String(amount)).times(String(RATES[to])).div(String(RATES[from]));
  return Number(exact.toDecimalPlaces(MINOR[to]!, Decimal.ROUND_HALF_UP).toFixed());
}

function phone(prefix: string): string {
  return `${prefix}${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
}
const tjPhone = () => phone('+99290');
const kzPhone = () => phone('+7701');
const uzPhone = () => phone('+99890');
const kgPhone = () => phone('+996555');

function tlv(tag: string, value: string): string {
  return `${tag}${String(value.length).padStart(2, '0')}${value}`;
}

/** A static VietQR-style EMV payload (Napas 247 account) with a correct CRC. */
function vietQr(account: string): string {
  const body =
    tlv('00', '01') +
    tlv('01', '11') +
    tlv('38', tlv('00', 'A000000727') + tlv('01', tlv('00', '970436') + tlv('01', account)) + tlv('02', 'QRIBFTTA')) +
    tlv('53', '704') +
    tlv('58', 'VN') +
    '6304';
  return body + crc16ccitt(body);
}

let service: TestService;
let rub: MerchantCredentials;
let kzt: MerchantCredentials;
let tjs: MerchantCredentials;
/** A fresh executor per test; the previous one is deactivated so earlier requisites leave the pool. */
let executor: { id: string };

beforeAll(async () => {
  service = await startTestService();
  for (const [currency, rate] of Object.entries(RATES)) await setRate(service.app, currency, rate);
  rub = await createMerchant(service.app, { currency: 'RUB', name: 'RUB desk' });
  kzt = await createMerchant(service.app, { currency: 'KZT', name: 'KZT desk' });
  tjs = await createMerchant(service.app, { currency: 'TJS', name: 'TJS desk' });
});
afterAll(async () => service?.close());

beforeEach(async () => {
  if (executor) await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { is_active: false });
  executor = await createExecutor(service.app, 'Cross-border trader');
});

const requisite = (input: RequisiteInput) => createRequisite(service.app, executor.id, input);
const pay = (creds: MerchantCredentials, body: Record<string, unknown>) => createPayment(service.app, creds, { ext_id: uniqueExtId('xb'), ...body });

async function expectPay002(creds: MerchantCredentials, body: Record<string, unknown>, message: RegExp) {
  const res = await pay(creds, body);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error).toBe('PAY_002');
  expect(res.body.message).toMatch(message);
  return res.body;
}

async function expectPay004(creds: MerchantCredentials, body: Record<string, unknown>) {
  const res = await pay(creds, body);
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(res.body.error).toBe('PAY_004');
  return res.body;
}

describe('rule 1: requisite types per cross-border method', () => {
  it('CROSS_BORDER and CROSS_BORDER_CARD hand out card or phone requisites, never a sim', async () => {
    const sim = await requisite({ type: 'sim', value: tjPhone(), bank: 'tcell', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    const card = await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER', 'CROSS_BORDER_CARD'] });
    const phoneReq = await requisite({
      type: 'phone',
      value: tjPhone(),
      bank: 'alif_bank',
      currency: 'TJS',
      country: 'TJ',
      methods: ['CROSS_BORDER', 'CROSS_BORDER_CARD'],
    });

    const seen = new Map<string, string>();
    for (const [i, method] of ['CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER', 'CROSS_BORDER_CARD'].entries()) {
      const { status, body } = await pay(rub, { amount: 1000 + i, currency: 'RUB', method, country: 'TJ' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.method).toBe(method);
      expect(['card', 'phone']).toContain(body.requisites.type);
      expect(body.requisites.value).not.toBe(sim.value);
      seen.set(body.requisites.value, body.requisites.type);
    }
    // Least recently used spreading: both the card and the phone were handed out.
    expect(seen.get(card.value)).toBe('card');
    expect(seen.get(phoneReq.value)).toBe('phone');
  });

  it('CROSS_BORDER_SIM hands out a sim (operator) requisite and nothing else', async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER', 'CROSS_BORDER_CARD'] });
    const sim = await requisite({
      type: 'sim',
      value: tjPhone(),
      bank: 'megafon_tjs',
      holder: 'Rustam K.',
      currency: 'TJS',
      country: 'TJ',
      methods: ['CROSS_BORDER_SIM'],
    });

    const { status, body } = await pay(rub, { amount: 1200, currency: 'RUB', method: 'CROSS_BORDER_SIM', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.requisites).toMatchObject({
      type: 'sim',
      value: sim.value,
      bank: 'megafon_tjs',
      bank_code: 'megafon_tjs',
      bank_name: 'МегаФон Таджикистан',
      holder: 'Rustam K.',
      country: 'TJ',
      currency: 'TJS',
      amount_local: expectedLocal(1200, 'RUB', 'TJS'),
    });
  });

  it('with only a sim in the country, CROSS_BORDER has no requisites (503 PAY_004), and a sim cannot be set up for it', async () => {
    await requisite({ type: 'sim', value: tjPhone(), bank: 'tcell', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    await expectPay004(rub, { amount: 1300, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    await expectPay004(rub, { amount: 1301, currency: 'RUB', method: 'CROSS_BORDER_CARD', country: 'TJ' });

    const res = await admin(service.app, 'POST', `/executors/${executor.id}/requisites`, {
      type: 'sim',
      value: tjPhone(),
      bank: 'tcell',
      holder: 'X',
      currency: 'TJS',
      country: 'TJ',
      methods: ['CROSS_BORDER'],
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('the shared creation rules where no country can be priced', () => {
  it('a repeated ext_id is still PAY_003 (not PAY_004) when the requested country has no rate', async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_CARD'] });
    const extId = uniqueExtId('xb-dup');
    const first = await createPayment(service.app, rub, { ext_id: extId, amount: 1310, method: 'CROSS_BORDER_CARD', country: 'TJ' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // AMD has no USDT rate here, so Armenia cannot be priced: there is nowhere to look.
    const again = await createPayment(service.app, rub, { ext_id: extId, amount: 1310, method: 'CROSS_BORDER_CARD', country: 'AM' });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body).toMatchObject({ error: 'PAY_003', data: { ext_id: extId } });
    await expectPay004(rub, { amount: 1311, method: 'CROSS_BORDER_CARD', country: 'AM' });
  });
});

describe('rule 2: conversion when the order currency is not the requisites currency', () => {
  it('a RUB order paid in TJ: requisites in TJS with amount_local converted through the USDT rates, the order stays in RUB', async () => {
    const card = await requisite({ type: 'card', bank: 'alif_bank', holder: 'Farhod S.', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const extId = uniqueExtId('rule2');
    const { status, body } = await createPayment(service.app, rub, { ext_id: extId, amount: 5000, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    // 5000 ÷ 95.5 × 10.95 = 573.29842… → 573.30
    expect(expectedLocal(5000, 'RUB', 'TJS')).toBe(573.3);
    expect(body).toMatchObject({
      ext_id: extId,
      amount: 5000,
      currency: 'RUB',
      rate: RATES.RUB,
      status: 'PENDING',
      method: 'CROSS_BORDER',
      requisites: {
        type: 'card',
        value: card.value,
        bank: 'alif_bank',
        bank_code: 'alif_bank',
        bank_name: 'Алиф Банк',
        holder: 'Farhod S.',
        country: 'TJ',
        currency: 'TJS',
        amount_local: 573.3,
      },
    });

    // The stored payment reads back the same: the conversion was fixed at creation.
    const read = await signed(service.app, rub, 'GET', `/v1/payments/${body.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ amount: 5000, currency: 'RUB', rate: RATES.RUB, requisites: { currency: 'TJS', country: 'TJ', amount_local: 573.3 } });
  });

  it("uses the terminal's own rates where the operator set them, for both currencies", async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const own = await createMerchant(service.app, { currency: 'RUB' });
    await adminOk(service.app, 'PUT', `/terminals/${own.terminalId}/rates/RUB`, { rate: 96 });
    await adminOk(service.app, 'PUT', `/terminals/${own.terminalId}/rates/TJS`, { rate: 11 });
    const { status, body } = await pay(own, { amount: 1000, method: 'CROSS_BORDER', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    // 1000 ÷ 96 × 11 = 114.58333… → 114.58
    expect(body).toMatchObject({ rate: 96, requisites: { currency: 'TJS', amount_local: 114.58 } });
  });

  it('rounds half up at an exact .xx5 boundary (105.05 RUB → 12.045 TJS → 12.05)', async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    // 105.05 ÷ 95.5 = 1.1 exactly, × 10.95 = 12.045: a true tie, which float arithmetic would not see.
    expect(new Exact('105.05').times('10.95').div('95.5').toFixed()).toBe('12.045');
    const { status, body } = await pay(rub, { amount: 105.05, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.amount).toBe(105.05);
    expect(body.requisites.amount_local).toBe(12.05);

    // Another tie: 124.15 ÷ 95.5 × 10.95 = 14.235 → 14.24.
    const second = await pay(rub, { amount: 124.15, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    expect(second.status).toBe(200);
    expect(second.body.requisites.amount_local).toBe(14.24);
  });

  it("converts into every priced country with that currency's rate (UZ, KG, AZ, KZ)", async () => {
    await requisite({ type: 'card', bank: 'kapitalbank', currency: 'UZS', country: 'UZ', methods: ['CROSS_BORDER'] });
    await requisite({ type: 'phone', value: kgPhone(), bank: 'mbank', currency: 'KGS', country: 'KG', methods: ['CROSS_BORDER'] });
    await requisite({ type: 'card', bank: 'kapital_bank_az', currency: 'AZN', country: 'AZ', methods: ['CROSS_BORDER'] });
    await requisite({ type: 'card', bank: 'kaspi', currency: 'KZT', country: 'KZ', methods: ['CROSS_BORDER'] });
    const cases = [
      ['UZ', 'UZS', 7777.77],
      ['KG', 'KGS', 2500],
      ['AZ', 'AZN', 3333.33],
      ['KZ', 'KZT', 1234.56],
    ] as const;
    for (const [country, currency, amount] of cases) {
      const { status, body } = await pay(rub, { amount, currency: 'RUB', method: 'CROSS_BORDER', country });
      expect(status, `${country}: ${JSON.stringify(body)}`).toBe(200);
      expect(body).toMatchObject({ amount, currency: 'RUB', rate: RATES.RUB });
      expect(body.requisites).toMatchObject({ country, currency, amount_local: expectedLocal(amount, 'RUB', currency) });
    }
  });

  it('VIET_QR pays a QR in Vietnam in whole dong (VND has no minor unit)', async () => {
    const payload = vietQr('0011001234567');
    const qr = await requisite({ type: 'qr', value: payload, bank: 'vietcombank', holder: 'NGUYEN V A', currency: 'VND', country: 'VN', methods: ['VIET_QR'] });
    expect(qr.value).toBe(payload);

    const { status, body } = await pay(rub, { amount: 1000, currency: 'RUB', method: 'VIET_QR' });
    expect(status, JSON.stringify(body)).toBe(200);
    // 1000 ÷ 95.5 × 25400 = 265968.586… → 265969
    expect(expectedLocal(1000, 'RUB', 'VND')).toBe(265969);
    expect(body).toMatchObject({
      amount: 1000,
      currency: 'RUB',
      rate: RATES.RUB,
      method: 'VIET_QR',
      requisites: { type: 'qr', value: payload, bank_code: 'vietcombank', country: 'VN', currency: 'VND', amount_local: 265969 },
    });
    expect(Number.isInteger(body.requisites.amount_local)).toBe(true);

    // With an explicit country too; 1234.56 ÷ 95.5 × 25400 = 328354.178… → 328354 (down).
    const second = await pay(rub, { amount: 1234.56, currency: 'RUB', method: 'VIET_QR', country: 'VN' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.requisites.amount_local).toBe(328354);
    expect(expectedLocal(1234.56, 'RUB', 'VND')).toBe(328354);
    expect(Number.isInteger(second.body.requisites.amount_local)).toBe(true);
  });

  it('VIET_QR only pays in VN (another country is PAY_002)', async () => {
    await expectPay002(rub, { amount: 1000, currency: 'RUB', method: 'VIET_QR', country: 'TJ' }, /VN/);
  });
});

describe('rule 3: no conversion when the order currency is the requisites currency', () => {
  it('a KZT terminal paying in KZ: amount_local equals amount and rate is the KZT rate', async () => {
    const card = await requisite({ type: 'card', bank: 'kaspi', currency: 'KZT', country: 'KZ', methods: ['CROSS_BORDER', 'CROSS_BORDER_CARD'] });
    const { status, body } = await pay(kzt, { amount: 48025.37, currency: 'KZT', method: 'CROSS_BORDER', country: 'KZ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      amount: 48025.37,
      currency: 'KZT',
      rate: RATES.KZT,
      terminal_id: kzt.terminalId,
      terminal_name: 'KZT desk',
      requisites: { type: 'card', value: card.value, bank_code: 'kaspi', country: 'KZ', currency: 'KZT', amount_local: 48025.37 },
    });
  });

  it('a TJS terminal paying a sim in TJ: amount_local equals amount and rate is the TJS rate', async () => {
    const sim = await requisite({ type: 'sim', value: tjPhone(), bank: 'zet_mobile', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    const { status, body } = await pay(tjs, { amount: 250.05, currency: 'TJS', method: 'CROSS_BORDER_SIM', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      amount: 250.05,
      currency: 'TJS',
      rate: RATES.TJS,
      requisites: { type: 'sim', value: sim.value, bank_code: 'zet_mobile', country: 'TJ', currency: 'TJS', amount_local: 250.05 },
    });
  });

  it('a KZT order paid in TJ is converted from KZT, not from RUB', async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_CARD'] });
    const { status, body } = await pay(kzt, { amount: 10000, method: 'CROSS_BORDER_CARD', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    // 10000 ÷ 480.25 × 10.95 = 228.0062… → 228.01
    expect(body).toMatchObject({
      amount: 10000,
      currency: 'KZT',
      rate: RATES.KZT,
      requisites: { currency: 'TJS', amount_local: expectedLocal(10000, 'KZT', 'TJS') },
    });
    expect(body.requisites.amount_local).toBe(228.01);
  });
});

describe('rule 4: currency omitted', () => {
  it('on a RUB terminal the order is in rubles and converted', async () => {
    await requisite({ type: 'card', bank: 'vasl_bank', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const { status, body } = await pay(rub, { amount: 3500, method: 'CROSS_BORDER', country: 'TJ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      amount: 3500,
      currency: 'RUB',
      rate: RATES.RUB,
      requisites: { currency: 'TJS', country: 'TJ', amount_local: expectedLocal(3500, 'RUB', 'TJS') },
    });
  });

  it('without method either, a RUB terminal makes a domestic CARD payment (no cross-border fields)', async () => {
    const card = await requisite({ type: 'card', value: testCard(), bank: 'sberbank', currency: 'RUB', country: 'RU', methods: ['CARD'] });
    const { status, body } = await pay(rub, { amount: 3600 });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ amount: 3600, currency: 'RUB', method: 'CARD', requisites: { type: 'card', value: card.value } });
    expect(body.requisites).not.toHaveProperty('amount_local');
    expect(body.requisites).not.toHaveProperty('country');
  });
});

describe('rule 5: no requisites in the requested country', () => {
  it('a non-ruble order is routed as if no country were given', async () => {
    const uz = await requisite({ type: 'card', bank: 'hamkorbank', currency: 'UZS', country: 'UZ', methods: ['CROSS_BORDER'] });
    const { status, body } = await pay(tjs, { amount: 640.5, currency: 'TJS', method: 'CROSS_BORDER', country: 'KZ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      amount: 640.5,
      currency: 'TJS',
      rate: RATES.TJS,
      requisites: { value: uz.value, country: 'UZ', currency: 'UZS', amount_local: expectedLocal(640.5, 'TJS', 'UZS') },
    });
  });

  it('a non-ruble order falls back to its home country too (TJS order asking KZ → TJ, unconverted)', async () => {
    const tj = await requisite({ type: 'phone', value: tjPhone(), bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_CARD'] });
    const { status, body } = await pay(tjs, { amount: 777.7, method: 'CROSS_BORDER_CARD', country: 'KZ' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      amount: 777.7,
      currency: 'TJS',
      requisites: { type: 'phone', value: tj.value, country: 'TJ', currency: 'TJS', amount_local: 777.7 },
    });
  });

  it('a non-ruble order keeps the requested country when it has requisites', async () => {
    await requisite({ type: 'card', bank: 'hamkorbank', currency: 'UZS', country: 'UZ', methods: ['CROSS_BORDER'] });
    const kz = await requisite({ type: 'phone', value: kzPhone(), bank: 'halyk_bank', currency: 'KZT', country: 'KZ', methods: ['CROSS_BORDER'] });
    for (const amount of [100.1, 100.2, 100.3]) {
      const { status, body } = await pay(tjs, { amount, method: 'CROSS_BORDER', country: 'KZ' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.requisites).toMatchObject({ value: kz.value, country: 'KZ', currency: 'KZT', amount_local: expectedLocal(amount, 'TJS', 'KZT') });
    }
  });

  it('a RUB order with no requisites in the requested country is 503 PAY_004, even with requisites elsewhere', async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const body = await expectPay004(rub, { amount: 2000, currency: 'RUB', method: 'CROSS_BORDER', country: 'KZ' });
    expect(body.data).toMatchObject({ currency: 'RUB', method: 'CROSS_BORDER', country: 'KZ' });
    // The same order without a country is served (rule 6).
    const ok = await pay(rub, { amount: 2000, currency: 'RUB', method: 'CROSS_BORDER' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.requisites.country).toBe('TJ');
  });

  it('a non-ruble order with no requisites anywhere is 503 PAY_004', async () => {
    await expectPay004(tjs, { amount: 99.99, method: 'CROSS_BORDER', country: 'KZ' });
  });
});

describe('rule 6: no country given', () => {
  it('requisites of any available country are used, each priced in its own currency', async () => {
    const uz = await requisite({ type: 'card', bank: 'kapitalbank', currency: 'UZS', country: 'UZ', methods: ['CROSS_BORDER'] });
    const kg = await requisite({ type: 'phone', value: kgPhone(), bank: 'optima_bank', currency: 'KGS', country: 'KG', methods: ['CROSS_BORDER'] });
    const used = new Map<string, string>();
    for (const amount of [4100, 4200, 4300, 4400]) {
      const { status, body } = await pay(rub, { amount, method: 'CROSS_BORDER' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({ amount, currency: 'RUB', rate: RATES.RUB });
      const { country, currency, amount_local } = body.requisites;
      expect(['UZ', 'KG']).toContain(country);
      expect(currency).toBe(country === 'UZ' ? 'UZS' : 'KGS');
      expect(amount_local).toBe(expectedLocal(amount, 'RUB', currency));
      used.set(body.requisites.value, country);
    }
    expect(used.get(uz.value)).toBe('UZ');
    expect(used.get(kg.value)).toBe('KG');
  });

  it('a country whose currency has no rate is skipped, without failing the request', async () => {
    // No AMD rate is set: the Armenian card cannot be priced.
    const am = await requisite({ type: 'card', bank: 'ameriabank', currency: 'AMD', country: 'AM', methods: ['CROSS_BORDER'] });
    const tj = await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    for (const amount of [4500, 4600, 4700]) {
      const { status, body } = await pay(rub, { amount, method: 'CROSS_BORDER' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.requisites).toMatchObject({ value: tj.value, country: 'TJ', currency: 'TJS' });
      expect(body.requisites.value).not.toBe(am.value);
    }
    // Asked for explicitly, the unpriced country has nothing to offer.
    await expectPay004(rub, { amount: 4800, method: 'CROSS_BORDER', country: 'AM' });
    // A non-ruble order asking for it falls back to a priced country (rule 5).
    const fallback = await pay(tjs, { amount: 480, method: 'CROSS_BORDER', country: 'AM' });
    expect(fallback.status, JSON.stringify(fallback.body)).toBe(200);
    expect(fallback.body.requisites).toMatchObject({ value: tj.value, country: 'TJ', amount_local: 480 });
  });
});

describe('rule 7: the payer pays the same way whatever the order currency', () => {
  it('a RUB order and a TJS order paid into the same TJ requisite have the same response shape', async () => {
    await requisite({ type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
    const fromRub = await pay(rub, { amount: 1095, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' });
    const fromTjs = await pay(tjs, { amount: 125.56, currency: 'TJS', method: 'CROSS_BORDER', country: 'TJ' });
    expect(fromRub.status).toBe(200);
    expect(fromTjs.status).toBe(200);
    expect(Object.keys(fromRub.body).sort()).toEqual(Object.keys(fromTjs.body).sort());
    expect(Object.keys(fromRub.body.requisites).sort()).toEqual(Object.keys(fromTjs.body.requisites).sort());
    expect(Object.keys(fromRub.body.requisites).sort()).toEqual([
      'amount_local',
      'bank',
      'bank_code',
      'bank_name',
      'country',
      'currency',
      'holder',
      'type',
      'value',
    ]);
    expect(fromRub.body.requisites.value).toBe(fromTjs.body.requisites.value);
    // Only the order side differs.
    expect(fromRub.body).toMatchObject({ currency: 'RUB', rate: RATES.RUB, requisites: { currency: 'TJS', amount_local: expectedLocal(1095, 'RUB', 'TJS') } });
    expect(fromTjs.body).toMatchObject({ currency: 'TJS', rate: RATES.TJS, requisites: { currency: 'TJS', amount_local: 125.56 } });
  });
});

describe('CROSS_BORDER_SIM operators', () => {
  it("bank=<operator code> picks only that operator's sim", async () => {
    const tcell = await requisite({ type: 'sim', value: tjPhone(), bank: 'tcell', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    await requisite({ type: 'sim', value: tjPhone(), bank: 'babilon_mobile', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    for (const amount of [1500, 1501, 1502]) {
      const { status, body } = await pay(rub, { amount, method: 'CROSS_BORDER_SIM', country: 'TJ', bank: 'tcell' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.requisites).toMatchObject({ type: 'sim', value: tcell.value, bank_code: 'tcell', bank_name: 'Tcell', currency: 'TJS' });
    }
  });

  it('bank=<operator without sims> is 503 PAY_004', async () => {
    await requisite({ type: 'sim', value: tjPhone(), bank: 'tcell', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    const body = await expectPay004(rub, { amount: 1600, method: 'CROSS_BORDER_SIM', country: 'TJ', bank: 'beeline_tj' });
    expect(body.data).toMatchObject({ bank: 'beeline_tj' });
  });

  it('without bank the cascade spreads payments over all operators of the country', async () => {
    const tcell = await requisite({ type: 'sim', value: tjPhone(), bank: 'tcell', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    const megafon = await requisite({ type: 'sim', value: tjPhone(), bank: 'megafon_tjs', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER_SIM'] });
    const counts = new Map<string, number>();
    for (const amount of [1700, 1710, 1720, 1730]) {
      const { status, body } = await pay(rub, { amount, method: 'CROSS_BORDER_SIM', country: 'TJ' });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.requisites.type).toBe('sim');
      expect(body.requisites.amount_local).toBe(expectedLocal(amount, 'RUB', 'TJS'));
      counts.set(body.requisites.bank_code, (counts.get(body.requisites.bank_code) ?? 0) + 1);
      expect([tcell.value, megafon.value]).toContain(body.requisites.value);
    }
    // Least recently used first: two sims, four payments → two each.
    expect(counts.get('tcell')).toBe(2);
    expect(counts.get('megafon_tjs')).toBe(2);
  });

  it('without country, CROSS_BORDER_SIM may use operators of any country', async () => {
    const uz = await requisite({ type: 'sim', value: uzPhone(), bank: 'ucell', currency: 'UZS', country: 'UZ', methods: ['CROSS_BORDER_SIM'] });
    const { status, body } = await pay(rub, { amount: 1800, method: 'CROSS_BORDER_SIM' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.requisites).toMatchObject({ type: 'sim', value: uz.value, country: 'UZ', currency: 'UZS', amount_local: expectedLocal(1800, 'RUB', 'UZS') });
  });
});

describe('PAY_002: parameters the cross-border rules refuse', () => {
  it('an unsupported country', async () => {
    const body = await expectPay002(rub, { amount: 1000, method: 'CROSS_BORDER', country: 'US' }, /unsupported country/i);
    expect(body.data).toMatchObject({ country: 'US' });
  });

  it('an unsupported currency', async () => {
    const body = await expectPay002(rub, { amount: 1000, currency: 'USD', method: 'CROSS_BORDER', country: 'TJ' }, /unsupported currency/i);
    expect(body.data).toMatchObject({ currency: 'USD' });
  });

  it('a currency that differs from the terminal currency', async () => {
    const body = await expectPay002(rub, { amount: 1000, currency: 'KZT', method: 'CROSS_BORDER', country: 'KZ' }, /terminal currency/i);
    expect(body.data).toMatchObject({ currency: 'KZT', terminal_currency: 'RUB' });
    await expectPay002(kzt, { amount: 1000, currency: 'RUB', method: 'CROSS_BORDER', country: 'TJ' }, /terminal currency/i);
  });

  it('a method not offered for the currency', async () => {
    const cases: Array<[MerchantCredentials, string, string]> = [
      [kzt, 'KZT', 'SBP'],
      [kzt, 'KZT', 'CROSS_BORDER_SIM'],
      [kzt, 'KZT', 'VIET_QR'],
      [rub, 'RUB', 'PHONE'],
      [tjs, 'TJS', 'PHONE'],
    ];
    for (const [creds, currency, method] of cases) {
      const body = await expectPay002(creds, { amount: 1000, currency, method }, new RegExp(`${method}.*${currency}`));
      expect(body.data).toMatchObject({ method, currency });
    }
  });

  it('a bank code (not an operator) with CROSS_BORDER_SIM', async () => {
    const body = await expectPay002(rub, { amount: 1000, method: 'CROSS_BORDER_SIM', country: 'TJ', bank: 'eskhata' }, /operator/);
    expect(body.data).toMatchObject({ bank: 'eskhata' });
  });

  it('an operator code with CARD (or another non-sim method)', async () => {
    await expectPay002(rub, { amount: 1000, method: 'CARD', bank: 'tcell' }, /operator/);
    await expectPay002(rub, { amount: 1000, method: 'CROSS_BORDER', country: 'TJ', bank: 'megafon_tjs' }, /operator/);
  });

  it('a country outside the home country for a domestic method', async () => {
    await expectPay002(rub, { amount: 1000, method: 'CARD', country: 'TJ' }, /cross-border/);
  });
});

describe('with rates missing', () => {
  let bare: TestService;
  let merchant: MerchantCredentials;
  let trader: { id: string };

  beforeAll(async () => {
    bare = await startTestService();
    merchant = await createMerchant(bare.app, { currency: 'RUB' });
    trader = await createExecutor(bare.app);
    await createRequisite(bare.app, trader.id, { type: 'card', bank: 'eskhata', currency: 'TJS', country: 'TJ', methods: ['CROSS_BORDER'] });
  });
  afterAll(async () => bare?.close());

  it('no USDT rate for the order currency is 503 PAY_004 telling the operator to set one', async () => {
    const res = await createPayment(bare.app, merchant, { ext_id: uniqueExtId(), amount: 1000, method: 'CROSS_BORDER', country: 'TJ' });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('PAY_004');
    expect(res.body.message).toMatch(/RUB/);
    expect(res.body.message).toMatch(/rate/i);
    expect(res.body.message).toMatch(/\/rates\/RUB/);
  });

  it('with the order rate but not the local one, the country cannot be priced: 503 PAY_004, no crash', async () => {
    await setRate(bare.app, 'RUB', RATES.RUB);
    const res = await createPayment(bare.app, merchant, { ext_id: uniqueExtId(), amount: 1000, method: 'CROSS_BORDER', country: 'TJ' });
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body.error).toBe('PAY_004');
    const anywhere = await createPayment(bare.app, merchant, { ext_id: uniqueExtId(), amount: 1000, method: 'CROSS_BORDER' });
    expect(anywhere.status).toBe(503);
    expect(anywhere.body.error).toBe('PAY_004');

    // Once the TJS rate exists, the same request is served.
    await setRate(bare.app, 'TJS', RATES.TJS);
    const ok = await createPayment(bare.app, merchant, { ext_id: uniqueExtId(), amount: 1000, method: 'CROSS_BORDER', country: 'TJ' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.requisites.amount_local).toBe(expectedLocal(1000, 'RUB', 'TJS'));
  });
});
