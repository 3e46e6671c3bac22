/**
 * Rapira (rapira.net): a Russian exchange's own USDT/RUB market, read from its open market rates.
 *
 * Request and answer as read in public code (read, not copied): several public clients in the code
 * index (their repositories not named by it) call `GET https://api.rapira.net/open/market/rates`
 * and read `{code: 0, data: [{symbol: "USDT/RUB", baseCurrency, quoteCurrency, close, change,
 * askPrice, bidPrice, ...}]}`: one takes `askPrice` as the price to buy and `bidPrice` as the price
 * to sell, others `close`; they treat `code` other than 0, or `data` not a list, as a failure. The
 * numbers are JSON numbers (`"close": 87.89`), kept here as the literal text they were written in.
 * `Nopass0/quarttex`, `backend/src/services/rapira.service.ts`, reads Rapira's candles instead
 * (`GET /market/history?symbol=USDT%2FRUB&...&resolution=15`, `[time, open, high, low, close,
 * volume]` rows); the rates answer is used here because it carries both sides.
 *
 * One advert per side: `buy` → `askPrice`, `sell` → `bidPrice`; no limits, no trader.
 */
import { fetchJson, listOf, objectOf, priceOf, textOf } from './http.js';
import { type Advert, type RateSource, SourceError, type SourceQuery } from './source.js';

const NAME = 'rapira' as const;

export const rapira: RateSource = {
  name: NAME,
  label: 'Rapira',
  defaultBaseUrl: 'https://api.rapira.net',
  currencies: ['RUB'],
  async fetchAdverts(query: SourceQuery): Promise<Advert[]> {
    const answer = objectOf(await fetchJson(NAME, query, this.defaultBaseUrl, { method: 'GET', path: '/open/market/rates' }));
    if (!answer) throw new SourceError(NAME, 'the answer is not a JSON object');
    if (answer.code !== undefined) {
      const code = textOf(answer.code);
      if (code !== '0') {
        const message = textOf(answer.message) ?? textOf(answer.error) ?? 'no message';
        throw new SourceError(NAME, `code ${code ?? 'not a number'}: ${message}`);
      }
    }
    const symbol = `USDT/${query.currency}`;
    const rows = listOf(NAME, answer.data, 'data');
    const row = rows.map(objectOf).find((r) => textOf(r?.symbol)?.toUpperCase() === symbol);
    if (!row) return [];
    const field = query.side === 'buy' ? 'askPrice' : 'bidPrice';
    return [
      {
        price: priceOf(NAME, row[field], `${symbol} ${field}`),
        available: null,
        min: null,
        max: null,
        pay_methods: [],
        trader: null,
        promoted: false,
      },
    ];
  },
};
