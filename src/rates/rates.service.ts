import type { AppContext } from '../context.js';
import { checkDecimal, RATE_DECIMALS } from '../lib/money.js';
import { ApiError } from '../http/errors.js';
import * as repo from './rates.repo.js';

/** Validates a rate: the price of 1 USDT in the currency, positive, at most 8 decimals. */
export function parseRate(value: unknown): string {
  const rate = checkDecimal(value, { field: 'rate', places: RATE_DECIMALS, min: 0, minExclusive: true, max: '1e11', maxExclusive: true });
  if (typeof rate === 'string') throw new ApiError('VALIDATION', rate);
  return rate.toFixed();
}

export function parseCurrency(value: string): string {
  const currency = value.toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw new ApiError('VALIDATION', `currency must be a three-letter ISO code, got "${value}"`);
  return currency;
}

export async function setRate(ctx: AppContext, currency: string, rate: unknown): Promise<repo.RateRow> {
  return repo.upsertRate(ctx.db, parseCurrency(currency), parseRate(rate));
}

export const listRates = (ctx: AppContext) => repo.listRates(ctx.db);
