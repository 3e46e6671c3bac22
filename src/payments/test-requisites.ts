import { randomInt } from 'node:crypto';
import { COUNTRY_CURRENCY, CURRENCY_COUNTRY, METHOD_TYPES, type Method, type OrderCurrency } from '../lib/methods.js';
import { money, roundTo } from '../lib/money.js';

/**
 * The requisites a test terminal's payment shows (issue 33 item 4, Stripe's test mode): made up
 * here, from no executor, and plainly test numbers — a card `4000 00…` (Luhn-valid, so a payment
 * page or a merchant's own check accepts it; the 4000 00 range is the one card networks and
 * Stripe keep for tests), a phone `+7 900 000-xx-xx`, a QR payload `kassir-test-qr:…`. Nobody
 * can send real money to any of them.
 */
export interface TestRequisites {
  type: string;
  value: string;
  holder: string;
  country: string;
  currency: string;
  /** What the payer is asked to pay, in `currency` (the order amount, or its local value abroad). */
  payerAmount: string;
}

export const TEST_HOLDER = 'TEST CARDHOLDER';

/** A 16-digit card number starting 4000 00 that passes the Luhn check. */
export function testCardNumber(): string {
  let body = '400000';
  while (body.length < 15) body += String(randomInt(10));
  return body + luhnDigit(body);
}

/** The check digit that makes `body` + digit pass the Luhn check. */
function luhnDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    // Counting from the right of the finished number, the body's last digit is doubled.
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

/** A Russian mobile number in the +7 900 000-xx-xx test range. */
export function testPhoneNumber(): string {
  return `+7900000${String(randomInt(10_000)).padStart(4, '0')}`;
}

/**
 * The test requisites of a payment of `amount` in `currency` by `method`. A cross-border payment
 * asked for a country whose rate is known shows requisites there, with the local amount converted
 * as a live one is (amount / order rate × local rate); otherwise the order currency's own country.
 */
export function testRequisites(input: {
  method: Method;
  currency: OrderCurrency;
  amount: string;
  country: string | null;
  crossBorder: boolean;
  rate: string;
  rates: ReadonlyMap<string, string>;
}): TestRequisites {
  const type = METHOD_TYPES[input.method][0]!;
  const value = type === 'card' ? testCardNumber() : type === 'qr' ? `kassir-test-qr:${randomInt(1e9).toString(16)}` : testPhoneNumber();
  let country = CURRENCY_COUNTRY[input.currency];
  let currency: string = input.currency;
  let payerAmount = money(input.amount);
  const local = input.crossBorder && input.country ? COUNTRY_CURRENCY[input.country] : undefined;
  const localRate = local ? input.rates.get(local) : undefined;
  if (input.country && local && (local === input.currency || localRate)) {
    country = input.country;
    currency = local;
    if (local !== input.currency) payerAmount = roundTo(payerAmount.div(input.rate).times(localRate!), local);
  }
  return { type, value, holder: TEST_HOLDER, country, currency, payerAmount: payerAmount.toFixed(2) };
}
