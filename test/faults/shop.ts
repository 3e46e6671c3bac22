import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import type { Client, Merchant } from './harness.js';

/**
 * What the scenarios trade on, set up through the operator API like an operator would: a rate,
 * a merchant with terminals and funds, executors with card requisites.
 */

/** RUB's price of 1 USDT in every scenario. */
export const RUB_RATE = '95.5';
export const PAYIN_RATE = '2.5';
export const PAYOUT_RATE = '1.5';
export const WITHDRAWAL_FEE = '1';

export interface Terminal extends Merchant {
  terminalId: string;
}

export interface Executor {
  id: string;
  token: string;
  /** Requisite id by card number (digits only). */
  requisites: Map<string, string>;
}

export interface Shop {
  terminals: Terminal[];
  executors: Executor[];
}

/** A fresh Luhn-valid 16-digit card number. */
export function cardNumber(prefix = '2200'): string {
  const body = prefix + Array.from(randomBytes(11), (b) => String(b % 10)).join('');
  for (let check = 0; check < 10; check++) if (luhn(body + check)) return body + check;
  throw new Error('unreachable');
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Sets up a shop: the RUB rate, one merchant with `funds.length` RUB terminals each credited
 * funds[i] USDT by an operator adjustment, and `executors` executors with `requisitesEach` card
 * requisites (CARD, 10–100,000 RUB).
 */
export async function openShop(client: Client, options: { funds: string[]; executors: number; requisitesEach: number }): Promise<Shop> {
  await client.adminOk('PUT', '/rates/RUB', { rate: Number(RUB_RATE) });
  const merchant = await client.adminOk('POST', '/merchants', { name: `Faults ${randomBytes(3).toString('hex')}` });
  const terminals: Terminal[] = [];
  for (const [i, funds] of options.funds.entries()) {
    const terminal = await client.adminOk('POST', `/merchants/${merchant.id}/terminals`, {
      name: `T${i + 1}`,
      currency: 'RUB',
      payin_rate: Number(PAYIN_RATE),
      payout_rate: Number(PAYOUT_RATE),
      withdrawal_fee: Number(WITHDRAWAL_FEE),
    });
    if (new Decimal(funds).gt(0)) await client.adminOk('POST', `/terminals/${terminal.id}/adjustments`, { amount: Number(funds), reason: 'fault suite funds' });
    terminals.push({ merchantId: merchant.id, terminalId: terminal.id, apiKey: terminal.api_key, secretKey: merchant.secret_key });
  }
  const executors: Executor[] = [];
  for (let e = 0; e < options.executors; e++) {
    const executor = await client.adminOk('POST', '/executors', { name: `Trader ${e + 1}` });
    await client.adminOk('POST', `/executors/${executor.id}/adjustments`, { amount: 1_000_000, reason: 'fault suite deposit' });
    // The scenarios leave most payments unpaid to expire, by design: the automatic switch-off after
    // unpaid hand-outs (test/limits.test.ts covers it) would take every card out mid-scenario.
    await client.adminOk('PATCH', `/executors/${executor.id}`, { disable_after_expired: 0 });
    const requisites = new Map<string, string>();
    for (let r = 0; r < options.requisitesEach; r++) {
      const value = cardNumber();
      const requisite = await client.adminOk('POST', `/executors/${executor.id}/requisites`, {
        type: 'card',
        value,
        bank: 'sberbank',
        holder: 'Ivan I.',
        currency: 'RUB',
        country: 'RU',
        methods: ['CARD'],
        min_amount: 10,
        max_amount: 100000,
      });
      requisites.set(value, requisite.id);
    }
    executors.push({ id: executor.id, token: executor.token, requisites });
  }
  return { terminals, executors };
}

/** The requisite a payment answer hands out, as the id of the shop's requisite. */
export function requisiteOf(shop: Shop, payment: { requisites: { value: string } }): { executor: Executor; requisiteId: string } {
  const digits = payment.requisites.value.replace(/\D/g, '');
  for (const executor of shop.executors) {
    const id = executor.requisites.get(digits);
    if (id) return { executor, requisiteId: id };
  }
  throw new Error(`payment handed out a requisite the shop does not know: ${payment.requisites.value}`);
}

/** A random RUB amount with kopecks in [min, max). */
export function rubles(min: number, max: number): string {
  const kopecks = min * 100 + Math.floor(Math.random() * (max - min) * 100);
  return new Decimal(kopecks).div(100).toFixed(2);
}

/**
 * DESIGN.md decision 11, computed here on its own (not with the service's function): the
 * terminal's credit for a completed payment, amount / rate × (1 − payin_rate / 100), half-up to 6 dp.
 */
export function payinCredit(amount: string): Decimal {
  return new Decimal(amount)
    .div(RUB_RATE)
    .mul(new Decimal(1).minus(new Decimal(PAYIN_RATE).div(100)))
    .toDecimalPlaces(6, Decimal.ROUND_HALF_UP);
}

/** DESIGN.md decision 12: a payout's reserve, amount / rate × (1 + payout_rate / 100), half-up to 6 dp. */
export function payoutReserve(amount: string): Decimal {
  return new Decimal(amount)
    .div(RUB_RATE)
    .mul(new Decimal(1).plus(new Decimal(PAYOUT_RATE).div(100)))
    .toDecimalPlaces(6, Decimal.ROUND_HALF_UP);
}

/** DESIGN.md decision 13: a withdrawal (fee not subtracted) freezes amount + fee. */
export function withdrawalHold(amount: string): Decimal {
  return new Decimal(amount).plus(WITHDRAWAL_FEE);
}
