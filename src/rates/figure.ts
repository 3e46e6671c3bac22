import type { Decimal } from 'decimal.js';
import { money, RATE_DECIMALS } from '../lib/money.js';
import type { Advert } from './sources/source.js';

/**
 * How a market's adverts become one figure, the same for every source (issue 31, "The working
 * rate"). Adverts that a payer of this desk could not use are dropped first: promoted ones, those
 * that take none of the pay methods asked for, those whose limits leave out the probe amount, and
 * traders below the quality asked for. Of the rest, best price first, the ranks asked for are
 * taken (the first ones are often bait), a price further than `outlier_percent` from their median
 * is left out, and the figure is the median of what remains: one advert far from the rest cannot
 * move it, and neither can a few.
 */
export interface FigureRules {
  /** Keep adverts taking at least one of these (the exchange's names or ids, any case); empty: any. */
  payMethods: string[];
  /** A deal of this size, in the currency, must fit the advert's min and max. */
  amount: string | null;
  minOrders: number;
  minCompletionPercent: number;
  /** Ranks taken, 1-based and inclusive, after the filters. */
  ranks: [number, number];
  outlierPercent: number;
  /** Fewer fitting adverts than this and the source gives no figure. */
  minAdverts: number;
}

export const DEFAULT_FIGURE_RULES: FigureRules = {
  payMethods: [],
  amount: null,
  minOrders: 0,
  minCompletionPercent: 0,
  ranks: [1, 10],
  outlierPercent: 2,
  minAdverts: 3,
};

/** Why an advert did not count. */
export type LeftOut = 'promoted' | 'pay_method' | 'amount' | 'trader' | 'rank' | 'outlier';

export interface SourceFigure {
  figure: string;
  /** Prices that made the figure, best first. */
  used: string[];
  /** Every advert seen, with why it was left out (absent: used). */
  adverts: (Advert & { left_out?: LeftOut })[];
}

/** There were not enough adverts a payer could use to make a figure from. */
export class TooFewAdverts extends Error {
  constructor(
    readonly fitting: number,
    readonly needed: number,
  ) {
    super(`only ${fitting} advert${fitting === 1 ? '' : 's'} fit (at least ${needed} needed)`);
    this.name = 'TooFewAdverts';
  }
}

/** The figure of one source's adverts for the given side; throws TooFewAdverts. */
export function sourceFigure(adverts: Advert[], side: 'buy' | 'sell', rules: FigureRules): SourceFigure {
  const wanted = new Set(rules.payMethods.map((m) => m.toLowerCase()));
  const amount = rules.amount === null ? null : money(rules.amount);
  const seen: (Advert & { left_out?: LeftOut })[] = adverts.map((advert) => {
    const reason = leftOutBy(advert, wanted, amount, rules);
    return reason ? { ...advert, left_out: reason } : { ...advert };
  });
  // Best for the person who takes the advert first: the cheapest seller when buying USDT.
  const fitting = seen.filter((a) => !a.left_out).sort((a, b) => (side === 'buy' ? money(a.price).cmp(money(b.price)) : money(b.price).cmp(money(a.price))));
  const [from, to] = rules.ranks;
  fitting.forEach((advert, index) => {
    if (index + 1 < from || index + 1 > to) advert.left_out = 'rank';
  });
  const ranked = fitting.filter((a) => !a.left_out);
  if (ranked.length < rules.minAdverts) throw new TooFewAdverts(ranked.length, rules.minAdverts);
  const middle = median(ranked.map((a) => money(a.price)));
  for (const advert of ranked) {
    if (distancePercent(money(advert.price), middle).gt(rules.outlierPercent)) advert.left_out = 'outlier';
  }
  const used = ranked.filter((a) => !a.left_out);
  if (used.length < rules.minAdverts) throw new TooFewAdverts(used.length, rules.minAdverts);
  return {
    figure: round(median(used.map((a) => money(a.price)))).toFixed(),
    used: used.map((a) => a.price),
    adverts: seen,
  };
}

function leftOutBy(advert: Advert, wanted: Set<string>, amount: Decimal | null, rules: FigureRules): LeftOut | undefined {
  if (advert.promoted) return 'promoted';
  // An order book's level names no pay methods and no trader: those rules are the P2P adverts'.
  if (wanted.size > 0 && advert.pay_methods.length > 0 && !advert.pay_methods.some((m) => wanted.has(m.toLowerCase()))) return 'pay_method';
  if (amount && ((advert.min !== null && amount.lt(money(advert.min))) || (advert.max !== null && amount.gt(money(advert.max))))) return 'amount';
  const trader = advert.trader;
  if (trader && trader.orders !== null && trader.orders < rules.minOrders) return 'trader';
  if (trader && trader.completion_percent !== null && trader.completion_percent < rules.minCompletionPercent) return 'trader';
  return undefined;
}

/** One figure per source that answered; `left_out` marks a source too far from the others. */
export interface SourceResult {
  source: string;
  figure: string;
  left_out?: boolean;
}

/**
 * The figure of several sources' figures. One source: its figure. Two: the second is left out
 * when it is further than `maxSpreadPercent` from the first (the setting's own source). Three or
 * more: a source further than that from the median of all is left out, and should every one be,
 * the setting's own source is kept. The figure is the median of those kept; the results come back
 * with `left_out` set where it applies (the operator is told).
 */
export function combine(results: SourceResult[], maxSpreadPercent: number): { figure: string; results: SourceResult[] } {
  if (results.length === 0) throw new Error('combine needs at least one source figure');
  const marked = results.map((r) => ({ ...r }));
  const reference = marked.length === 2 ? money(marked[0]!.figure) : median(marked.map((r) => money(r.figure)));
  for (const result of marked) {
    if (distancePercent(money(result.figure), reference).gt(maxSpreadPercent)) result.left_out = true;
  }
  if (marked.every((r) => r.left_out)) marked[0]!.left_out = false;
  const kept = marked.filter((r) => !r.left_out);
  return { figure: round(median(kept.map((r) => money(r.figure)))).toFixed(), results: marked };
}

/** The figure with a markup: figure × (1 + percent / 100), to the rate's 8 places. */
export function withMarkup(figure: string, markupPercent: string | number): string {
  return round(money(figure).mul(money(1).plus(money(markupPercent).div(100)))).toFixed();
}

/** How far `value` is from `reference`, percent of the reference. */
export function distancePercent(value: Decimal, reference: Decimal): Decimal {
  return value.minus(reference).abs().div(reference).mul(100);
}

function median(values: Decimal[]): Decimal {
  const sorted = [...values].sort((a, b) => a.cmp(b));
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : sorted[mid - 1]!.plus(sorted[mid]!).div(2);
}

function round(value: Decimal): Decimal {
  return value.toDecimalPlaces(RATE_DECIMALS);
}
