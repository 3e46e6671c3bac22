/**
 * Every rate source adapter against a local server that answers as the exchange does (fixtures in
 * test/fixtures/rates/, shaped after the public code each adapter cites): the adverts it maps, the
 * request it sends, an empty page, the exchange's own error answer, HTTP and JSON failures, a
 * server too slow for the refresh. No database.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES } from '../src/rates/sources/http.js';
import { SOURCES, sourceOf } from '../src/rates/sources/index.js';
import { type Advert, SOURCE_NAMES, SourceError, type SourceName, type SourceQuery } from '../src/rates/sources/source.js';

function fixture(name: SourceName): string {
  return readFileSync(new URL(`./fixtures/rates/${name}.json`, import.meta.url), 'utf8');
}

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: Seen, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let handler: Handler;
let seen: Seen[];
/** Answers the slow handler has left hanging; ended when the test ends. */
const hanging = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const entry: Seen = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(entry);
      handler(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
  for (const res of hanging) res.destroy();
  hanging.clear();
});

function answer(status: number, body: string, type = 'application/json'): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  };
}

function query(side: 'buy' | 'sell', options: Record<string, unknown> = {}, currency = 'RUB', signal: AbortSignal = new AbortController().signal): SourceQuery {
  return { currency, side, options: { base_url: baseUrl, ...options }, signal };
}

async function sourceError(promise: Promise<unknown>): Promise<SourceError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a SourceError, the adapter resolved');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return err as SourceError;
}

/** What differs per exchange: its fixture's adverts, its request, its empty page and its error answer. */
interface Case {
  name: SourceName;
  /** The adverts the fixture maps to, for `side: 'buy'` (what `options` below asks). */
  buyAdverts: Advert[];
  options: Record<string, unknown>;
  checkRequest(req: Seen): void;
  empty: unknown;
  error: { status?: number; body: unknown; says: RegExp };
  /** A copy of the fixture with its first price broken. */
  badPrice(fixture: any): void;
}

const trader = (name: string, orders: number | null, completion_percent: number | null) => ({ name, orders, completion_percent });

const cases: Case[] = [
  {
    name: 'bybit_p2p',
    options: { pay_methods: ['75', '382'], amount: 10000, page_size: 5 },
    buyAdverts: [
      {
        price: '81.52',
        available: '2450.1234',
        min: '5000',
        max: '199730.19',
        pay_methods: ['75', '382'],
        trader: trader('FastRub_24', 1843, 99),
        promoted: false,
      },
      { price: '81.55', available: '980.5', min: '1000', max: '79960.78', pay_methods: ['75'], trader: trader('UsdtDesk', 412, 97), promoted: false },
      {
        price: '81.60',
        available: '15000',
        min: '50000',
        max: '1224000',
        pay_methods: ['64', '75', '377'],
        trader: trader('Nord P2P', 5210, 100),
        promoted: false,
      },
      { price: '81.61', available: '120', min: '500', max: '9793.2', pay_methods: ['382'], trader: trader('newbie_trader', 3, 60), promoted: false },
      { price: '94.90', available: '300', min: '1000', max: '28470', pay_methods: ['75'], trader: trader('Outlier_Ltd', 57, 95), promoted: false },
    ],
    checkRequest(req) {
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/fiat/otc/item/online');
      expect(req.headers['content-type']).toBe('application/json');
      expect(JSON.parse(req.body)).toEqual({
        userId: '',
        tokenId: 'USDT',
        currencyId: 'RUB',
        payment: ['75', '382'],
        side: '1',
        size: '5',
        page: '1',
        amount: '10000',
        authMaker: false,
        canTrade: false,
      });
    },
    empty: { ret_code: 0, ret_msg: 'SUCCESS', result: { count: 0, items: [] }, ext_code: '', ext_info: {}, time_now: '1795778400.1' },
    error: {
      body: { ret_code: 10001, ret_msg: 'Request parameter error', result: {}, ext_code: '', ext_info: {} },
      says: /ret_code 10001: Request parameter error/,
    },
    badPrice(f) {
      f.result.items[0].price = '-81.52';
    },
  },
  {
    name: 'binance_p2p',
    options: { pay_methods: ['TinkoffNew'], amount: '20000', page_size: 10 },
    buyAdverts: [
      {
        price: '82.10',
        available: '3120.45',
        min: '3000.00',
        max: '256187.00',
        pay_methods: ['TinkoffNew'],
        trader: trader('PromoSeller', 210, 97.2),
        promoted: true,
      },
      {
        price: '81.48',
        available: '845.00',
        min: '1000.00',
        max: '68850.60',
        pay_methods: ['TinkoffNew', 'RosBankNew'],
        trader: trader('MoscowOTC', 1532, 98.76),
        promoted: false,
      },
      {
        price: '81.50',
        available: '12000.00',
        min: '50000.00',
        max: '978000.00',
        pay_methods: ['RUBfiatbalance'],
        trader: trader('BigDesk', 4410, 100),
        promoted: false,
      },
      { price: '81.53', available: '60.10', min: '500.00', max: '4899.95', pay_methods: ['TinkoffNew'], trader: trader('casual_user', 7, 57), promoted: false },
      {
        price: '69.00',
        available: '500.00',
        min: '1000.00',
        max: '34500.00',
        pay_methods: ['TinkoffNew'],
        trader: trader('TooGoodToBeTrue', 12, 90),
        promoted: false,
      },
    ],
    checkRequest(req) {
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/bapi/c2c/v2/friendly/c2c/adv/search');
      expect(JSON.parse(req.body)).toEqual({
        asset: 'USDT',
        fiat: 'RUB',
        merchantCheck: false,
        page: 1,
        payTypes: ['TinkoffNew'],
        publisherType: null,
        rows: 10,
        tradeType: 'BUY',
        transAmount: '20000',
      });
    },
    empty: { code: '000000', message: null, messageDetail: null, data: [], total: 0, success: true },
    error: { body: { code: '000002', message: 'illegal parameter', messageDetail: null, data: null, success: false }, says: /code 000002: illegal parameter/ },
    badPrice(f) {
      f.data[0].adv.price = 'N/A';
    },
  },
  {
    name: 'htx_p2p',
    options: { pay_methods: ['28'], amount: 15000 },
    buyAdverts: [
      {
        price: '81.70',
        available: '3059.9900',
        min: '3000',
        max: '250000',
        pay_methods: ['28', '69'],
        trader: trader('htx_rub_pro', 2213, 99),
        promoted: false,
      },
      { price: '81.74', available: '489.3700', min: '1000', max: '40000', pay_methods: ['29'], trader: trader('SibExchange', 131, 96), promoted: false },
      { price: '81.80', available: '97.8000', min: '500', max: '8000', pay_methods: ['28'], trader: trader('fresh_seller', 0, null), promoted: false },
      { price: '99.99', available: '600.0000', min: '1000', max: '60000', pay_methods: ['69'], trader: trader('ShadyDeals', 18, 88), promoted: false },
    ],
    checkRequest(req) {
      expect(req.method).toBe('GET');
      expect(req.path).toBe('/v1/data/trade-market');
      expect(Object.fromEntries(req.query)).toEqual({
        coinId: '2',
        currency: '11',
        tradeType: 'sell',
        currPage: '1',
        payMethod: '28',
        acceptOrder: '0',
        country: '',
        blockType: 'general',
        online: '1',
        range: '0',
        amount: '15000',
        onlyTradable: 'false',
        isFollowed: 'false',
      });
    },
    empty: { code: 200, message: 'Success', totalCount: 0, pageSize: 10, totalPage: 0, currPage: 1, data: [], success: true },
    error: { body: { code: 1002, message: 'Currency not supported', data: null, success: false }, says: /code 1002: Currency not supported/ },
    badPrice(f) {
      f.data[0].price = '0';
    },
  },
  {
    name: 'rapira',
    options: {},
    buyAdverts: [{ price: '81.58', available: null, min: null, max: null, pay_methods: [], trader: null, promoted: false }],
    checkRequest(req) {
      expect(req.method).toBe('GET');
      expect(req.path).toBe('/open/market/rates');
      expect(req.body).toBe('');
    },
    empty: { code: 0, message: 'success', data: [] },
    error: { body: { code: 1, message: 'Service temporarily unavailable', data: [] }, says: /code 1: Service temporarily unavailable/ },
    badPrice(f) {
      f.data[1].askPrice = null;
    },
  },
  {
    name: 'grinex',
    options: { market: 'usdtrub' },
    buyAdverts: [
      { price: '81.62', available: '1520.35', min: null, max: null, pay_methods: [], trader: null, promoted: false },
      { price: '81.65', available: '8000.0', min: null, max: null, pay_methods: [], trader: null, promoted: false },
      { price: '81.70', available: '312.5', min: null, max: null, pay_methods: [], trader: null, promoted: false },
      { price: '88.00', available: '10.0', min: null, max: null, pay_methods: [], trader: null, promoted: false },
    ],
    checkRequest(req) {
      expect(req.method).toBe('GET');
      expect(req.path).toBe('/api/v2/depth');
      expect(Object.fromEntries(req.query)).toEqual({ market: 'usdtrub' });
    },
    empty: { timestamp: 1795778400, asks: [], bids: [] },
    error: { status: 200, body: { error: { code: 2002, message: 'Market does not exist' } }, says: /error 2002: Market does not exist/ },
    badPrice(f) {
      f.asks[0].price = '81,62';
    },
  },
];

describe.each(cases)('$name', (c) => {
  const source = sourceOf(c.name);

  it('maps the exchange answer to adverts exactly, prices as the exchange wrote them', async () => {
    handler = answer(200, fixture(c.name));
    const adverts = await source.fetchAdverts(query('buy', c.options));
    expect(adverts).toEqual(c.buyAdverts);
    for (const a of adverts) expect(typeof a.price).toBe('string');
  });

  it('sends the request the exchange takes', async () => {
    handler = answer(200, fixture(c.name));
    await source.fetchAdverts(query('buy', c.options));
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.accept).toBe('application/json');
    c.checkRequest(seen[0] as Seen);
  });

  it('answers [] for an empty page', async () => {
    handler = answer(200, JSON.stringify(c.empty));
    expect(await source.fetchAdverts(query('buy', c.options))).toEqual([]);
  });

  it("throws SourceError naming the exchange's own error code and message", async () => {
    handler = answer(c.error.status ?? 200, JSON.stringify(c.error.body));
    const err = await sourceError(source.fetchAdverts(query('buy', c.options)));
    expect(err.source).toBe(c.name);
    expect(err.message).toMatch(c.error.says);
  });

  it('throws SourceError for a price that is not a positive decimal', async () => {
    const broken = JSON.parse(fixture(c.name));
    c.badPrice(broken);
    handler = answer(200, JSON.stringify(broken));
    const err = await sourceError(source.fetchAdverts(query('buy', c.options)));
    expect(err.message).toMatch(/price .* is not a positive decimal/);
  });

  it('throws SourceError for an answer without its list', async () => {
    handler = answer(200, JSON.stringify({ ...(c.empty as object), data: 'nope', asks: null, bids: null, result: { count: 1, items: 'x' } }));
    const err = await sourceError(source.fetchAdverts(query('buy', c.options)));
    expect(err.message).toMatch(/has no .* list|no result object/);
  });

  it('throws SourceError with the status and an excerpt for HTTP 500', async () => {
    handler = answer(500, '<html><body>502 Bad Gateway from upstream</body></html>', 'text/html');
    const err = await sourceError(source.fetchAdverts(query('buy', c.options)));
    expect(err.message).toMatch(/HTTP 500: <html><body>502 Bad Gateway/);
  });

  it('throws SourceError for an answer that is not JSON', async () => {
    handler = answer(200, 'Access denied: please enable cookies', 'text/plain');
    const err = await sourceError(source.fetchAdverts(query('buy', c.options)));
    expect(err.message).toMatch(/not JSON: Access denied/);
  });

  it('rejects when the refresh aborts while the exchange is slow', async () => {
    handler = (_req, res) => {
      hanging.add(res);
    };
    const controller = new AbortController();
    const pending = source.fetchAdverts(query('buy', c.options, 'RUB', controller.signal));
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort(new Error('refresh gave up'));
    await expect(pending).rejects.toThrow('refresh gave up');
  });

  it('has a name, a label, an https default address and its currencies', () => {
    expect(source.name).toBe(c.name);
    expect(source.label).not.toBe('');
    expect(new URL(source.defaultBaseUrl).protocol).toBe('https:');
    expect(source.currencies).toContain('RUB');
  });
});

describe('the sell side', () => {
  it('Bybit asks side "0"', async () => {
    handler = answer(200, fixture('bybit_p2p'));
    await SOURCES.bybit_p2p.fetchAdverts(query('sell'));
    expect(JSON.parse(seen[0]?.body ?? '{}')).toMatchObject({ side: '0', size: '10', payment: [], amount: '' });
  });

  it('Binance asks tradeType SELL, 20 rows by default and no transAmount without a probe amount', async () => {
    handler = answer(200, fixture('binance_p2p'));
    await SOURCES.binance_p2p.fetchAdverts(query('sell', { publisher_type: 'merchant' }));
    const body = JSON.parse(seen[0]?.body ?? '{}');
    expect(body).toMatchObject({ tradeType: 'SELL', rows: 20, payTypes: [], publisherType: 'merchant' });
    expect(body).not.toHaveProperty('transAmount');
  });

  it('HTX asks tradeType buy, and payMethod 0 when several methods are wanted', async () => {
    handler = answer(200, fixture('htx_p2p'));
    await SOURCES.htx_p2p.fetchAdverts(query('sell', { pay_methods: ['28', '29'] }));
    expect(seen[0]?.query.get('tradeType')).toBe('buy');
    expect(seen[0]?.query.get('payMethod')).toBe('0');
    expect(seen[0]?.query.get('amount')).toBe('');
  });

  it('Rapira gives the bid price', async () => {
    handler = answer(200, fixture('rapira'));
    expect(await SOURCES.rapira.fetchAdverts(query('sell'))).toEqual([
      { price: '81.31', available: null, min: null, max: null, pay_methods: [], trader: null, promoted: false },
    ]);
  });

  it('Grinex gives the bids, best first as the book orders them, on its default market', async () => {
    handler = answer(200, fixture('grinex'));
    const adverts = await SOURCES.grinex.fetchAdverts(query('sell'));
    expect(seen[0]?.query.get('market')).toBe('usdta7a5');
    expect(adverts.map((a) => [a.price, a.available])).toEqual([
      ['81.41', '2200.0'],
      ['81.38', '640.12'],
      ['81.30', '15000.0'],
      ['70.00', '5.0'],
    ]);
  });
});

describe('exchange specifics', () => {
  it('Bybit takes the minimal answer DESIGN.md fixes for outside tools (no trader fields: trader null)', async () => {
    handler = answer(
      200,
      JSON.stringify({ ret_code: 0, result: { items: [{ price: '97.31', minAmount: '1000', maxAmount: '500000', lastQuantity: '250.5', payments: ['75'] }] } }),
    );
    expect(await SOURCES.bybit_p2p.fetchAdverts(query('buy'))).toEqual([
      { price: '97.31', available: '250.5', min: '1000', max: '500000', pay_methods: ['75'], trader: null, promoted: false },
    ]);
  });

  it('Rapira keeps a JSON number exactly as written (no float round trip)', async () => {
    handler = answer(200, '{"code":0,"data":[{"symbol":"USDT/RUB","askPrice":81.580000000000000001,"bidPrice":81.3100}]}');
    expect((await SOURCES.rapira.fetchAdverts(query('buy')))[0]?.price).toBe('81.580000000000000001');
    expect((await SOURCES.rapira.fetchAdverts(query('sell')))[0]?.price).toBe('81.3100');
  });

  it('Rapira answers [] when its rates do not list the currency', async () => {
    handler = answer(200, fixture('rapira'));
    expect(await SOURCES.rapira.fetchAdverts(query('buy', {}, 'KZT'))).toEqual([]);
  });

  it('HTX refuses a currency whose id it does not know, unless options.currency_id gives it', async () => {
    handler = answer(200, fixture('htx_p2p'));
    const err = await sourceError(SOURCES.htx_p2p.fetchAdverts(query('buy', {}, 'KZT')));
    expect(err.message).toMatch(/no HTX currency id is known for KZT/);
    expect(seen).toHaveLength(0);
    await SOURCES.htx_p2p.fetchAdverts(query('buy', { currency_id: 57 }, 'KZT'));
    expect(seen[0]?.query.get('currency')).toBe('57');
  });

  it('Binance marks a row promoted when privilegeType is on the row itself', async () => {
    const f = JSON.parse(fixture('binance_p2p'));
    f.data[1].privilegeType = 'TOP';
    handler = answer(200, JSON.stringify(f));
    const adverts = await SOURCES.binance_p2p.fetchAdverts(query('buy'));
    expect(adverts.map((a) => a.promoted)).toEqual([true, true, false, false, false]);
  });

  it('Binance asks at most 20 rows, Bybit at most 50', async () => {
    handler = answer(200, fixture('binance_p2p'));
    await SOURCES.binance_p2p.fetchAdverts(query('buy', { page_size: 50 }));
    expect(JSON.parse(seen[0]?.body ?? '{}').rows).toBe(20);
    handler = answer(200, fixture('bybit_p2p'));
    await SOURCES.bybit_p2p.fetchAdverts(query('buy', { rows: 500 }));
    expect(JSON.parse(seen[1]?.body ?? '{}').size).toBe('50');
  });

  it('Binance success: false is an error even with code 000000', async () => {
    handler = answer(200, JSON.stringify({ code: '000000', message: 'system busy', data: [], success: false }));
    const err = await sourceError(SOURCES.binance_p2p.fetchAdverts(query('buy')));
    expect(err.message).toMatch(/code 000000: system busy/);
  });

  it('Grinex: an error answer with a non-2xx status quotes it', async () => {
    handler = answer(404, JSON.stringify({ error: { code: 2002, message: 'Market does not exist' } }));
    const err = await sourceError(SOURCES.grinex.fetchAdverts(query('buy')));
    expect(err.message).toMatch(/HTTP 404: .*Market does not exist/);
  });
});

describe('the HTTP helper', () => {
  it('keeps a base_url path as a prefix', async () => {
    handler = answer(200, fixture('grinex'));
    await SOURCES.grinex.fetchAdverts(query('buy', { base_url: `${baseUrl}/mirror/grinex/` }));
    expect(seen[0]?.path).toBe('/mirror/grinex/api/v2/depth');
  });

  it.each([['ftp://127.0.0.1/'], ['not a url'], [''], [42], ['http://user:pw@127.0.0.1/']])('refuses base_url %j before calling anything', async (bad) => {
    handler = answer(200, fixture('grinex'));
    const err = await sourceError(SOURCES.grinex.fetchAdverts(query('buy', { base_url: bad })));
    expect(err.message).toMatch(/base_url/);
    expect(seen).toHaveLength(0);
  });

  it('gives up on a slow exchange after options.timeout_ms with a SourceError', async () => {
    handler = (_req, res) => {
      hanging.add(res);
    };
    const started = Date.now();
    const err = await sourceError(SOURCES.bybit_p2p.fetchAdverts(query('buy', { timeout_ms: 150 })));
    expect(err.message).toMatch(/no answer within 150 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('rejects at once when the signal is already aborted', async () => {
    handler = answer(200, fixture('bybit_p2p'));
    const controller = new AbortController();
    controller.abort(new Error('already gone'));
    await expect(SOURCES.bybit_p2p.fetchAdverts(query('buy', {}, 'RUB', controller.signal))).rejects.toThrow('already gone');
    expect(seen).toHaveLength(0);
  });

  it('drops an answer larger than the cap', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"ret_code":0,"pad":"${'x'.repeat(MAX_ANSWER_BYTES)}"}`);
    };
    const err = await sourceError(SOURCES.bybit_p2p.fetchAdverts(query('buy')));
    expect(err.message).toMatch(/larger than 2097152 bytes/);
  });

  it('turns a refused connection into a SourceError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await sourceError(SOURCES.rapira.fetchAdverts(query('buy', { base_url: `http://127.0.0.1:${port}` })));
    expect(err.message).toMatch(/request failed/);
  });
});

describe('the registry', () => {
  it('has one adapter per source name, under its own name', () => {
    expect(Object.keys(SOURCES).sort()).toEqual([...SOURCE_NAMES].sort());
    for (const name of SOURCE_NAMES) expect(sourceOf(name).name).toBe(name);
  });

  it('refuses a name that is not a source', () => {
    expect(() => sourceOf('toString' as SourceName)).toThrow(/Unknown rate source/);
  });
});
