/**
 * One interface for every exchange Kassir reads USDT prices from (DESIGN.md "Rate sources
 * (contract)"). An adapter turns the exchange's answer into adverts — a P2P advert, or one level
 * of an exchange's order book — and nothing else: which adverts count and what figure they make is
 * decided in one place (rates/figure.ts), the same for every source.
 */

/** The sources an operator can name (`PUT /admin/v1/rates/{currency}` `source`). */
export const SOURCE_NAMES = ['bybit_p2p', 'binance_p2p', 'htx_p2p', 'rapira', 'grinex'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

/** One offer to sell (or buy) USDT for the currency, as the exchange showed it. */
export interface Advert {
  /** Price of 1 USDT in the currency, as a decimal string exactly as the exchange wrote it. */
  price: string;
  /** USDT on offer (an advert's remaining quantity, an order book level's volume); null when not shown. */
  available: string | null;
  /** The smallest and largest deal in the currency the advert accepts; null when it sets none. */
  min: string | null;
  max: string | null;
  /** The exchange's own names or ids of the payment methods the advert takes (empty: not shown). */
  pay_methods: string[];
  /** Who posted it, with the quality the exchange shows; null for an order book level. */
  trader: { name: string; orders: number | null; completion_percent: number | null } | null;
  /** A paid, promoted placement (shown first whatever its price). */
  promoted: boolean;
}

/** Which adverts to ask for. `buy`: adverts a person buys USDT from (sellers' prices); `sell`: the other side. */
export interface SourceQuery {
  currency: string;
  side: 'buy' | 'sell';
  /** The operator's options for this source: `base_url`, `pay_methods`, `amount` (a probe, in the currency), the source's own. */
  options: Record<string, unknown>;
  /** Aborts the request when the refresh gives up. */
  signal: AbortSignal;
}

/** The exchange answered, but not with adverts (an error code, an unexpected shape, a refused request). */
export class SourceError extends Error {
  constructor(
    readonly source: SourceName,
    message: string,
  ) {
    super(`${source}: ${message}`);
    this.name = 'SourceError';
  }
}

export interface RateSource {
  name: SourceName;
  /** How people call it: "Bybit P2P". */
  label: string;
  /** The exchange's public address; `options.base_url` replaces it. */
  defaultBaseUrl: string;
  /** Currencies the exchange quotes against USDT. */
  currencies: readonly string[];
  /** The adverts of one page of the exchange's answer, best price first as the exchange ordered them. Throws SourceError. */
  fetchAdverts(query: SourceQuery): Promise<Advert[]>;
}
