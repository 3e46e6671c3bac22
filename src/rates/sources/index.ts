/** Every rate source by the name an operator gives it (DESIGN.md "Rate sources (contract)"). */
import { binanceP2p } from './binance-p2p.js';
import { bybitP2p } from './bybit-p2p.js';
import { grinex } from './grinex.js';
import { htxP2p } from './htx-p2p.js';
import { rapira } from './rapira.js';
import type { RateSource, SourceName } from './source.js';

export const SOURCES: Readonly<Record<SourceName, RateSource>> = {
  bybit_p2p: bybitP2p,
  binance_p2p: binanceP2p,
  htx_p2p: htxP2p,
  rapira,
  grinex,
};

/** The adapter of a source name; throws for a name that is not one (the core validates names first). */
export function sourceOf(name: SourceName): RateSource {
  if (!Object.hasOwn(SOURCES, name)) throw new Error(`Unknown rate source: ${String(name)}`);
  return SOURCES[name];
}
