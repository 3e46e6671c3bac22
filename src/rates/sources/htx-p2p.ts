/**
 * HTX (Huobi) P2P / OTC: the adverts of the public OTC market page.
 *
 * Request and answer as read in public code (read, not copied):
 * - `gyn7561/cryptocurrency_data_aggregation`, `otc/otc_data_parser.py`: the answer's `data[]` with
 *   `userName`, `price`, `minTradeLimit` and the maximum; coin id 2 is USDT.
 * - A public P2P scanner (found in the code index without its repository's name): `GET
 *   https://www.htx.com/-/x/otc/v1/data/trade-market?coinId=2&currency=11&tradeType=<sell to buy
 *   USDT, buy to sell it>&currPage=1&payMethod=0&acceptOrder=0&blockType=general&online=1&range=0
 *   &amount=<fiat amount>&onlyTradable=false&isFollowed=false`, RUB = currency 11; each advert's
 *   `price`, `minTradeLimit`, `maxTradeLimit`, `tradeCount` (USDT on offer), `payMethods[].name`,
 *   `userName`, `tradeMonthTimes` (orders this month), `orderCompleteRate` (a percent: compared
 *   with 95 there). Other public scripts in the index call the same path on HTX's OTC hosts
 *   (`otc-api.trygofast.com`, `otc-api-hk.eiijo.cn`) with `currency=1` for CNY, `payMethod` one
 *   method's id (28, 29, 69…) or 0 for all, and check `code == 200` before reading `data`.
 * Currency ids are HTX's own: only those confirmed there are mapped; another currency takes its id
 * from `options.currency_id`. HTX marks no paid placement in what was read: `promoted` is false.
 */
import { amountOf, amountOption, countOf, fetchJson, listOf, objectOf, payMethodsOption, percentOf, priceOf, textOf } from './http.js';
import { type Advert, type RateSource, SourceError, type SourceQuery } from './source.js';

const NAME = 'htx_p2p' as const;

/** HTX's ids of the currencies it quotes USDT in, as public code confirms them. */
export const HTX_CURRENCY_IDS: Readonly<Record<string, number>> = { RUB: 11, CNY: 1 };
/** HTX's id of USDT. */
const USDT_COIN_ID = '2';

function currencyId(query: SourceQuery): string {
  const given = query.options.currency_id;
  if (typeof given === 'number' && Number.isInteger(given) && given > 0) return String(given);
  if (typeof given === 'string' && /^\d{1,6}$/.test(given)) return given;
  const id = HTX_CURRENCY_IDS[query.currency];
  if (id === undefined) throw new SourceError(NAME, `no HTX currency id is known for ${query.currency}; set options.currency_id`);
  return String(id);
}

export const htxP2p: RateSource = {
  name: NAME,
  label: 'HTX P2P',
  defaultBaseUrl: 'https://www.htx.com/-/x/otc',
  currencies: Object.keys(HTX_CURRENCY_IDS),
  async fetchAdverts(query: SourceQuery): Promise<Advert[]> {
    const methods = payMethodsOption(query.options);
    // The page filters by one payment method (its numeric id) or by none (0).
    const payMethod = methods.length === 1 && /^\d+$/.test(methods[0] ?? '') ? (methods[0] as string) : '0';
    const params: Record<string, string> = {
      coinId: USDT_COIN_ID,
      currency: currencyId(query),
      // HTX names the advertiser's side: to buy USDT one answers adverts that sell it.
      tradeType: query.side === 'buy' ? 'sell' : 'buy',
      currPage: '1',
      payMethod,
      acceptOrder: '0',
      country: '',
      blockType: 'general',
      online: '1',
      range: '0',
      amount: amountOption(query.options) ?? '',
      onlyTradable: 'false',
      isFollowed: 'false',
    };
    const answer = objectOf(await fetchJson(NAME, query, this.defaultBaseUrl, { method: 'GET', path: '/v1/data/trade-market', query: params }));
    if (!answer) throw new SourceError(NAME, 'the answer is not a JSON object');
    const code = textOf(answer.code);
    if (code !== '200') {
      const message = textOf(answer.message) ?? textOf(answer.msg) ?? 'no message';
      throw new SourceError(NAME, `code ${code ?? 'missing'}: ${message}`);
    }
    return listOf(NAME, answer.data, 'data').map((raw, i) => {
      const item = objectOf(raw);
      const where = `data[${i}]`;
      if (!item) throw new SourceError(NAME, `${where} is not an object`);
      const pays = item.payMethods;
      if (pays !== undefined && pays !== null && !Array.isArray(pays)) throw new SourceError(NAME, `${where}.payMethods is not a list`);
      const name = textOf(item.userName);
      return {
        price: priceOf(NAME, item.price, where),
        available: amountOf(NAME, item.tradeCount, `${where}.tradeCount`),
        min: amountOf(NAME, item.minTradeLimit, `${where}.minTradeLimit`),
        max: amountOf(NAME, item.maxTradeLimit, `${where}.maxTradeLimit`),
        pay_methods: (pays ?? [])
          .map((p) => {
            const method = objectOf(p);
            return textOf(method?.payMethodId) ?? textOf(method?.name);
          })
          .filter((p): p is string => p !== undefined),
        trader: name === undefined ? null : { name, orders: countOf(item.tradeMonthTimes), completion_percent: percentOf(item.orderCompleteRate, 1) },
        promoted: false,
      };
    });
  },
};
