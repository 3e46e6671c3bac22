import { DomainError } from '../errors.js';
import type { RateQuoteRow } from './rates.repo.js';

/** A terminal's rate in one currency, as a create reads it (rates.repo effectiveRatesSql). */
export interface RateQuote {
  /** Price of 1 USDT in the currency for payments; null while a feed has given none. */
  rate: string | null;
  /** The same for payouts (the sell side's markup where one is set). */
  payoutRate: string | null;
  /** Epoch milliseconds after which a feed's rate is stale; null for a rate that does not age (typed by a person). */
  freshUntil: number | null;
  /** The rate refresh that gave `rate` (rate_refreshes.id). */
  refreshId: string | null;
  /** The feed that keeps it; null for a typed rate. */
  source: string | null;
}

export function toQuote(row: RateQuoteRow): RateQuote {
  return {
    rate: row.rate,
    payoutRate: row.payout_rate,
    freshUntil: row.fresh_until === null ? null : row.fresh_until * 1000,
    refreshId: row.refresh_id,
    source: row.source,
  };
}

/** Whether the quote may price a deal now: it has a rate, and a feed's rate is not older than its max age. */
export function isUsable(quote: RateQuote, now: number): quote is RateQuote & { rate: string; payoutRate: string } {
  return quote.rate !== null && quote.payoutRate !== null && (quote.freshUntil === null || now < quote.freshUntil);
}

/** The rates that may price a deal now, by currency (stale ones left out, as if unset). */
export function usableRates(quotes: ReadonlyMap<string, RateQuote>, now: number): Map<string, string> {
  const usable = new Map<string, string>();
  for (const [currency, quote] of quotes) if (isUsable(quote, now)) usable.set(currency, quote.rate);
  return usable;
}

/**
 * The refusal of a deal whose currency's rate a feed keeps but no longer knows (DESIGN.md "Rate
 * sources (contract)"): 503 PAY_004 with data.reason "rate_stale". Nothing stands in for it; the
 * deal can be asked again once the feed answers.
 */
export function staleRate(currency: string, what: 'Payments' | 'Payouts'): DomainError {
  return new DomainError(
    'PAY_004',
    `${what} in ${currency} are paused: the USDT rate of ${currency} is out of date (its exchange feed has not answered recently); retry in a few minutes`,
    { reason: 'rate_stale', currency },
  );
}
