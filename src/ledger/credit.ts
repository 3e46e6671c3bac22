import { Decimal } from 'decimal.js';
import { Money, USDT_DECIMALS } from '../lib/money.js';

export interface PayinCredit {
  /** What the payer's money is worth in USDT: amount / rate. */
  gross: Decimal;
  /** The merchant's share, credited to the terminal: amount / rate × (1 − payin_rate / 100). */
  net: Decimal;
  /** The service's fee: gross − net. */
  fee: Decimal;
}

/**
 * DESIGN.md decision 11: on completion the terminal is credited
 * `amount / rate × (1 − payin_rate / 100)` USDT, `rate` being the order currency's price of 1 USDT
 * fixed at creation. The net credit is computed from the formula in one go and rounded once,
 * half-up, to USDT's 6 decimals; the fee is whatever the rounded gross leaves, so the posting
 * always balances to the micro-USDT.
 */
export function creditForPayin(amount: Decimal.Value, rate: Decimal.Value, payinRate: Decimal.Value): PayinCredit {
  const a = new Money(amount);
  const r = new Money(rate);
  const p = new Money(payinRate);
  if (!a.isFinite() || a.lte(0)) throw new RangeError('amount must be positive');
  if (!r.isFinite() || r.lte(0)) throw new RangeError('rate must be positive');
  // NaN compares false both ways, so it must be refused explicitly (numeric columns can hold 'NaN').
  if (p.isNaN() || p.lt(0) || p.gte(100)) throw new RangeError('payin_rate must be in [0, 100)');
  const gross = a.div(r).toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
  const net = a
    .div(r)
    .mul(new Money(1).minus(p.div(100)))
    .toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
  return { gross, net, fee: gross.minus(net) };
}

export interface PayoutReserve {
  /** What the payout freezes on the terminal: amount / rate × (1 + payout_rate / 100). */
  reserve: Decimal;
  /** The service's fee, taken on completion: what the reserve holds beyond amount / rate. */
  fee: Decimal;
}

/**
 * DESIGN.md decision 12: a payout reserves `amount / rate × (1 + payout_rate / 100)` USDT,
 * `rate` being the price of 1 USDT in the payout's currency fixed at creation, rounded once,
 * half-up, to USDT's 6 decimals. The fee is what the reserve holds beyond amount / rate (itself
 * rounded the same way), so what leaves on completion plus the fee is exactly the reserve.
 */
export function payoutReserve(amount: Decimal.Value, rate: Decimal.Value, payoutRate: Decimal.Value): PayoutReserve {
  const a = new Money(amount);
  const r = new Money(rate);
  const p = new Money(payoutRate);
  if (!a.isFinite() || a.lte(0)) throw new RangeError('amount must be positive');
  if (!r.isFinite() || r.lte(0)) throw new RangeError('rate must be positive');
  // NaN compares false both ways, so it must be refused explicitly (numeric columns can hold 'NaN').
  if (p.isNaN() || p.lt(0) || p.gte(100)) throw new RangeError('payout_rate must be in [0, 100)');
  const base = a.div(r);
  const reserve = base.mul(new Money(1).plus(p.div(100))).toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP);
  return { reserve, fee: reserve.minus(base.toDecimalPlaces(USDT_DECIMALS, Decimal.ROUND_HALF_UP)) };
}
