/**
 * Bybit P2P: the adverts of the public P2P market page.
 *
 * Request and answer as read in public code (read, not copied):
 * - `ayzik999/999`, `999/999/bybit_api.py`: `POST https://api2.bybit.com/fiat/otc/item/online` with
 *   `{userId: "", tokenId: "USDT", currencyId, payment: [], side, size, page}`, `side "1"` the
 *   adverts one BUYS from, `"0"` those one sells to; the adverts at `result.items`.
 * - `Nezhinskiy/Assets-Loop`, `arbitration/crypto_exchanges/crypto_exchanges_registration/bybit.py`:
 *   the same body with `payment: [<payment id>]` and `amount` (a fiat amount, as a string), SELL →
 *   `side "0"`, otherwise `"1"`; `result.count` and `result.items[].price`.
 * - DESIGN.md "Rate sources (contract)": `{ret_code: 0, result: {items: [{price, minAmount,
 *   maxAmount, lastQuantity, payments}]}}`, prices as strings — the shape tools outside Kassir send.
 * - The advertiser fields `nickName`, `recentOrderNum` (orders, 30 days) and `recentExecuteRate`
 *   (completion, already a percent: compared with 95 there) and the body's `authMaker: false,
 *   canTrade: false`, as a public P2P scanner reads them (found in the code index without its
 *   repository's name); `payments` are Bybit's payment ids ("75", "382"), which that scanner names
 *   through `/fiat/otc/configuration/queryAllPaymentList`.
 * No public code read shows how Bybit marks a paid placement in this answer: `promoted` is false.
 */
import { amountOf, amountOption, countOf, fetchJson, listOf, objectOf, pageSizeOption, payMethodsOption, percentOf, priceOf, textOf } from './http.js';
import { type Advert, type RateSource, SourceError, type SourceQuery } from './source.js';

const NAME = 'bybit_p2p' as const;

export const bybitP2p: RateSource = {
  name: NAME,
  label: 'Bybit P2P',
  defaultBaseUrl: 'https://api2.bybit.com',
  currencies: ['RUB', 'USD', 'EUR', 'KZT', 'UAH', 'TRY', 'GEL', 'AZN', 'BYN', 'UZS', 'KGS', 'AED', 'INR', 'NGN', 'VND', 'IDR', 'BRL', 'ARS'],
  async fetchAdverts(query: SourceQuery): Promise<Advert[]> {
    const amount = amountOption(query.options);
    const body = {
      userId: '',
      tokenId: 'USDT',
      currencyId: query.currency,
      payment: payMethodsOption(query.options),
      side: query.side === 'buy' ? '1' : '0',
      size: String(pageSizeOption(query.options, 10, 50)),
      page: '1',
      amount: amount ?? '',
      authMaker: false,
      canTrade: false,
    };
    const answer = objectOf(await fetchJson(NAME, query, this.defaultBaseUrl, { method: 'POST', path: '/fiat/otc/item/online', body }));
    if (!answer) throw new SourceError(NAME, 'the answer is not a JSON object');
    const code = textOf(answer.ret_code);
    if (code !== '0') {
      const message = textOf(answer.ret_msg) ?? 'no message';
      throw new SourceError(NAME, `ret_code ${code ?? 'missing'}: ${message}`);
    }
    const result = objectOf(answer.result);
    if (!result) throw new SourceError(NAME, 'the answer has no result object');
    // An empty market page comes back with `items: []` (or, as some clients guard for, null).
    if (result.items === null && textOf(result.count) === '0') return [];
    return listOf(NAME, result.items, 'result.items').map((raw, i) => {
      const item = objectOf(raw);
      const where = `result.items[${i}]`;
      if (!item) throw new SourceError(NAME, `${where} is not an object`);
      const payments = item.payments;
      if (payments !== undefined && payments !== null && !Array.isArray(payments)) throw new SourceError(NAME, `${where}.payments is not a list`);
      const name = textOf(item.nickName);
      return {
        price: priceOf(NAME, item.price, where),
        available: amountOf(NAME, item.lastQuantity, `${where}.lastQuantity`),
        min: amountOf(NAME, item.minAmount, `${where}.minAmount`),
        max: amountOf(NAME, item.maxAmount, `${where}.maxAmount`),
        pay_methods: (payments ?? []).map(textOf).filter((p): p is string => p !== undefined),
        trader: name === undefined ? null : { name, orders: countOf(item.recentOrderNum), completion_percent: percentOf(item.recentExecuteRate, 1) },
        promoted: false,
      };
    });
  },
};
