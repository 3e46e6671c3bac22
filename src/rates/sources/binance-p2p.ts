/**
 * Binance P2P: the adverts of the public C2C market page.
 *
 * Request and answer as read in public code (read, not copied):
 * - `prixrak/p2p-processing-platform`, `apps/api/src/modules/exchange-rate/binance-p2p.client.ts`:
 *   `POST https://p2p.binance.com/bapi/c2c/v2/friendly/c2c/adv/search` with `{asset: "USDT", fiat,
 *   merchantCheck: false, page: 1, payTypes, publisherType: null, rows, tradeType: "BUY"}` to buy
 *   USDT; an answer is good when `code === "000000"` and `data` is a list; each row's `adv.price`,
 *   `adv.minSingleTransAmount`, `adv.maxSingleTransAmount`, `adv.tradeMethods[]`,
 *   `advertiser.nickName`; and a PROMOTED row is one with a non-empty `privilegeType`, on the row
 *   or on its `adv` — prixrak drops those before averaging.
 * - `elisevmt/MarketEye`, `pkg/binanceP2PAPI/models.go`: the whole answer `{code, message,
 *   messageDetail, data: [{adv: {price, surplusAmount, tradableQuantity, minSingleTransAmount,
 *   maxSingleTransAmount, tradeMethods: [{payType, identifier, tradeMethodName, ...}], isTradable,
 *   ...}, advertiser: {nickName, monthOrderCount (int), monthFinishRate (float, a fraction), ...}}],
 *   total, success}` — every amount a string.
 * `transAmount` (the probe amount in the fiat, sent when `options.amount` is set) is the market
 * page's own filter by amount; it is not in the code read above. `publisherType: "merchant"`
 * narrows to merchants (`options.publisher_type`).
 */
import { amountOf, amountOption, countOf, fetchJson, listOf, objectOf, pageSizeOption, payMethodsOption, percentOf, priceOf, textOf } from './http.js';
import { type Advert, type RateSource, SourceError, type SourceQuery } from './source.js';

const NAME = 'binance_p2p' as const;

function promoted(...holders: (Record<string, unknown> | undefined)[]): boolean {
  return holders.some((h) => {
    const mark = h?.privilegeType;
    return mark !== undefined && mark !== null && textOf(mark) !== undefined;
  });
}

export const binanceP2p: RateSource = {
  name: NAME,
  label: 'Binance P2P',
  defaultBaseUrl: 'https://p2p.binance.com',
  currencies: ['RUB', 'UAH', 'KZT', 'USD', 'EUR', 'TRY', 'GEL', 'AZN', 'UZS', 'KGS', 'AED', 'INR', 'NGN', 'VND', 'IDR', 'BRL', 'ARS'],
  async fetchAdverts(query: SourceQuery): Promise<Advert[]> {
    const amount = amountOption(query.options);
    const publisherType = query.options.publisher_type;
    const body: Record<string, unknown> = {
      asset: 'USDT',
      fiat: query.currency,
      merchantCheck: false,
      page: 1,
      payTypes: payMethodsOption(query.options),
      publisherType: typeof publisherType === 'string' && publisherType !== '' ? publisherType : null,
      rows: pageSizeOption(query.options, 20, 20),
      tradeType: query.side === 'buy' ? 'BUY' : 'SELL',
    };
    if (amount !== undefined) body.transAmount = amount;
    const answer = objectOf(await fetchJson(NAME, query, this.defaultBaseUrl, { method: 'POST', path: '/bapi/c2c/v2/friendly/c2c/adv/search', body }));
    if (!answer) throw new SourceError(NAME, 'the answer is not a JSON object');
    const code = textOf(answer.code);
    if (code !== '000000' || answer.success === false) {
      const message = textOf(answer.message) ?? textOf(answer.messageDetail) ?? 'no message';
      throw new SourceError(NAME, `code ${code ?? 'missing'}: ${message}`);
    }
    return listOf(NAME, answer.data, 'data').map((raw, i) => {
      const row = objectOf(raw);
      const where = `data[${i}]`;
      const adv = objectOf(row?.adv);
      if (!row || !adv) throw new SourceError(NAME, `${where} has no adv object`);
      const advertiser = objectOf(row.advertiser);
      const methods = adv.tradeMethods;
      if (methods !== undefined && methods !== null && !Array.isArray(methods)) throw new SourceError(NAME, `${where}.adv.tradeMethods is not a list`);
      const name = textOf(advertiser?.nickName);
      return {
        price: priceOf(NAME, adv.price, where),
        available: amountOf(NAME, adv.surplusAmount ?? adv.tradableQuantity, `${where}.adv.surplusAmount`),
        min: amountOf(NAME, adv.minSingleTransAmount, `${where}.adv.minSingleTransAmount`),
        max: amountOf(NAME, adv.maxSingleTransAmount, `${where}.adv.maxSingleTransAmount`),
        pay_methods: (methods ?? [])
          .map((m) => {
            const method = objectOf(m);
            return textOf(method?.identifier) ?? textOf(method?.payType);
          })
          .filter((p): p is string => p !== undefined),
        trader:
          name === undefined ? null : { name, orders: countOf(advertiser?.monthOrderCount), completion_percent: percentOf(advertiser?.monthFinishRate, 100) },
        promoted: promoted(row, adv),
      };
    });
  },
};
