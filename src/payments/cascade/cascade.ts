import type { Decimal } from 'decimal.js';
import { COUNTRY_CURRENCY, CROSS_BORDER_METHODS, CURRENCY_COUNTRY, type Method, type OrderCurrency } from '../../lib/methods.js';
import { money, roundTo } from '../../lib/money.js';
import type { ClientLimit } from '../../risk/velocity.repo.js';

/** One place a payment may go: requisites of `currency` (in `country`) and what the payer pays there. */
export interface Candidate {
  currency: string;
  country: string;
  payerAmount: string;
}

export interface NewPayment {
  merchantId: string;
  terminalId: string;
  /** Answered as the payment's terminal_name. */
  terminalName: string;
  extId: string;
  amount: string;
  currency: string;
  method: string;
  rate: string;
  /** The rate refresh that gave `rate` (rate_refreshes.id). */
  rateRefreshId: string | null;
  payinRate: string;
  crossBorder: boolean;
  clientId: string | null;
  /** The client_id velocity limit the create is held to (null: none, or no client_id). */
  clientLimit: ClientLimit | null;
  notifyUrl: string | null;
  notificationToken: string | null;
  pageToken: string;
  ttlSeconds: number;
  /** What the hand-out freezes on the executor: amount / rate, USDT (payinHold). */
  hold: string;
  /** Requisite types that serve the method. */
  types: string[];
  bank: string | null;
  candidates: Candidate[];
}

/**
 * Where a payment may go and what the payer pays there (spec "Cross-border rules" 2–6):
 * - domestic methods: requisites of the order currency in its home country, amount as ordered;
 * - cross-border: requisites in `country` (or, without it, in any country — rule 6), paying
 *   `amount_local` = amount converted through the USDT rates and rounded to the local currency's
 *   minor unit (rule 2), or exactly `amount` where the local currency is the order currency
 *   (rule 3). Countries whose currency has no rate cannot be priced and are left out.
 */
export function candidatesFor(input: {
  method: Method;
  orderCurrency: OrderCurrency;
  amount: Decimal;
  country: string | null;
  /** Price of 1 USDT per currency, as the terminal sees it. */
  rates: ReadonlyMap<string, string>;
}): Candidate[] {
  const { method, orderCurrency, amount, rates } = input;
  if (!CROSS_BORDER_METHODS.has(method)) {
    return [{ currency: orderCurrency, country: CURRENCY_COUNTRY[orderCurrency], payerAmount: amount.toFixed(2) }];
  }
  const countries = input.country ? [input.country] : method === 'VIET_QR' ? ['VN'] : Object.keys(COUNTRY_CURRENCY);
  const candidates: Candidate[] = [];
  for (const country of countries) {
    const local = COUNTRY_CURRENCY[country];
    if (!local) continue;
    const payerAmount = local === orderCurrency ? amount : convert(amount, orderCurrency, local, rates);
    if (payerAmount?.gt(0)) candidates.push({ currency: local, country, payerAmount: payerAmount.toFixed() });
  }
  return candidates;
}

/** amount × (price of 1 USDT in `to`) ÷ (price of 1 USDT in `from`), rounded to `to`'s minor unit. */
export function convert(amount: Decimal, from: string, to: string, rates: ReadonlyMap<string, string>): Decimal | undefined {
  const fromRate = rates.get(from);
  const toRate = rates.get(to);
  if (!fromRate || !toRate) return undefined;
  return roundTo(amount.mul(money(toRate)).div(money(fromRate)), to);
}
