/**
 * Grinex (grinex.io): an exchange's order book, each level an "advert".
 *
 * Request and answer as read in public code (read, not copied):
 * - `qquiqlerr/usdt-rate-service`, `internal/infra/grinex/client.go`: `GET {base}/api/v2/depth`
 *   with the query `market=<market>` (its doc comment and `client_test.go` use "usdtrub"), any
 *   status but 200 an error; `internal/infra/grinex/dto.go`: the answer `{timestamp, asks: [{price,
 *   volume, amount, factor, type}], bids: [...]}`, every level field a string;
 *   `internal/service/rates.go`: the best ask is `asks[0]`, the best bid `bids[0]`.
 * - A public script in the code index (repository not named by it) calls
 *   `https://grinex.io/api/v2/depth?market=...` the same way, next to `https://grinex.io/trading/<market>`.
 * Which USDT market Grinex lists against the rouble could not be confirmed from public code (it
 * quotes USDT against A7A5, a rouble token): `options.market` names it, default `usdta7a5`.
 *
 * `buy` reads the asks (what one pays for USDT), `sell` the bids; `available` is a level's volume
 * (USDT); a level has no limits and no trader. A Peatio-style error answer (`{error: {code,
 * message}}`) is a SourceError.
 */
import { amountOf, fetchJson, listOf, objectOf, priceOf, textOf } from './http.js';
import { type Advert, type RateSource, SourceError, type SourceQuery } from './source.js';

const NAME = 'grinex' as const;
export const GRINEX_DEFAULT_MARKET = 'usdta7a5';

export const grinex: RateSource = {
  name: NAME,
  label: 'Grinex',
  defaultBaseUrl: 'https://grinex.io',
  currencies: ['RUB'],
  async fetchAdverts(query: SourceQuery): Promise<Advert[]> {
    const given = query.options.market;
    const market = typeof given === 'string' && /^[a-z0-9]{2,32}$/.test(given) ? given : GRINEX_DEFAULT_MARKET;
    const answer = objectOf(await fetchJson(NAME, query, this.defaultBaseUrl, { method: 'GET', path: '/api/v2/depth', query: { market } }));
    if (!answer) throw new SourceError(NAME, 'the answer is not a JSON object');
    const error = objectOf(answer.error);
    if (error || typeof answer.error === 'string') {
      const code = textOf(error?.code);
      const message = textOf(error?.message) ?? textOf(answer.error) ?? 'no message';
      throw new SourceError(NAME, code ? `error ${code}: ${message}` : `error: ${message}`);
    }
    const key = query.side === 'buy' ? 'asks' : 'bids';
    return listOf(NAME, answer[key], key).map((raw, i) => {
      const level = objectOf(raw);
      const where = `${key}[${i}]`;
      if (!level) throw new SourceError(NAME, `${where} is not an object`);
      return {
        price: priceOf(NAME, level.price, where),
        available: amountOf(NAME, level.volume, `${where}.volume`),
        min: null,
        max: null,
        pay_methods: [],
        trader: null,
        promoted: false,
      };
    });
  },
};
