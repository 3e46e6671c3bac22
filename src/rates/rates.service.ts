import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { checkDecimal, FIAT_CURRENCIES, RATE_DECIMALS } from '../lib/money.js';
import * as repo from './rates.repo.js';

/** Validates a rate: the price of 1 USDT in the currency, positive, at most 8 decimals. */
export function parseRate(value: unknown): string {
  const rate = checkDecimal(value, { field: 'rate', places: RATE_DECIMALS, min: 0, minExclusive: true, max: '1e11', maxExclusive: true });
  if (typeof rate === 'string') throw new DomainError('VALIDATION', rate);
  return rate.toFixed();
}

/** A currency that has a price in USDT: an order currency or a requisite country's (case-insensitive). */
export function parseCurrency(value: string): string {
  const currency = value.toUpperCase();
  if (!FIAT_CURRENCIES.includes(currency)) {
    throw new DomainError('VALIDATION', `currency ${JSON.stringify(value)} is not one Kassir prices; use one of ${FIAT_CURRENCIES.join(', ')}`, {
      currency: value,
    });
  }
  return currency;
}

/** A rate as the operator API shows it. */
export function toRate(row: repo.RateRow): { currency: string; rate: number; updated_at: Date } {
  return { currency: row.currency, rate: Number(row.rate), updated_at: row.updated_at };
}

export async function setRate(ctx: AppContext, currency: string, rate: unknown): Promise<repo.RateRow> {
  return repo.upsertRate(ctx.db, parseCurrency(currency), parseRate(rate));
}

export const listRates = (ctx: AppContext) => repo.listRates(ctx.db);
