/**
 * Rates kept by exchange feeds (issue 31; DESIGN.md "Rate sources (contract)"), end to end: a
 * local server answers as Bybit's P2P market does, the service's job worker fetches it, and
 * payments, payouts and the operator API see the result.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  testCard,
  uniqueExtId,
  until,
} from './helpers.js';

/** A Bybit P2P market that the test steers: its prices, or an error answer. */
interface FakeMarket {
  url: string;
  prices: string[];
  /** 'ok', an HTTP 500, or Bybit's own error code. */
  mode: 'ok' | 'http500' | 'ret_code';
  hits: number;
  bodies: Record<string, unknown>[];
  server: Server;
}

async function fakeBybit(prices: string[]): Promise<FakeMarket> {
  const market: FakeMarket = { url: '', prices, mode: 'ok', hits: 0, bodies: [], server: undefined as unknown as Server };
  market.server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      market.hits++;
      if (req.method !== 'POST' || req.url !== '/fiat/otc/item/online') return void res.writeHead(404).end();
      market.bodies.push(JSON.parse(raw));
      if (market.mode === 'http500') return void res.writeHead(500).end('upstream down');
      const answer =
        market.mode === 'ret_code'
          ? { ret_code: 10006, ret_msg: 'Too many visits', result: null }
          : {
              ret_code: 0,
              ret_msg: 'SUCCESS',
              result: {
                count: market.prices.length,
                items: market.prices.map((price, i) => ({
                  price,
                  minAmount: '1000',
                  maxAmount: '500000',
                  lastQuantity: '1500',
                  payments: ['75'],
                  nickName: `trader${i}`,
                  recentOrderNum: 300 + i,
                  recentExecuteRate: 99,
                })),
              },
            };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => market.server.listen(0, '127.0.0.1', resolve));
  market.url = `http://127.0.0.1:${(market.server.address() as AddressInfo).port}`;
  return market;
}

let service: TestService;
let market: FakeMarket;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };

type Setting = Record<string, any>;
const rateOf = async (currency: string): Promise<Setting> =>
  (await adminOk<{ rates: Setting[] }>(service.app, 'GET', '/rates')).rates.find((r) => r.currency === currency)!;

/** Waits for the feed of `currency` to give a rate other than `not`. */
const nextRate = (currency: string, not: number | null = null, what = `${currency} rate from its feed`) =>
  until(
    async () => {
      const r = await rateOf(currency);
      return r.rate !== null && r.rate !== not && r.state === 'fresh' ? r : undefined;
    },
    20_000,
    100,
    what,
  );

const sql = async <T = Record<string, any>>(text: string, values: unknown[] = []) => (await service.ctx.db.query(text, values)).rows as T[];

async function pay(amount: number, currency = 'RUB', creds = merchant) {
  await createRequisite(service.app, executor.id, { min_amount: 0 });
  return createPayment(service.app, creds, { ext_id: uniqueExtId(), amount, currency, method: 'CARD' });
}

beforeAll(async () => {
  market = await fakeBybit(['95.00', '95.10', '95.20', '95.30', '95.40']);
  service = await startTestService({}, { worker: true });
  merchant = await createMerchant(service.app);
  executor = await createExecutor(service.app);
});
afterAll(async () => {
  await service?.close();
  market?.server.close();
});
// Each test starts from a typed RUB rate, so that the feed it sets is a new one (no figure yet).
beforeEach(async () => {
  market.mode = 'ok';
  market.prices = ['95.00', '95.10', '95.20', '95.30', '95.40'];
  await setRate(service.app, 'RUB', 95);
});

describe('a feed keeps the rate', () => {
  it("a payment's rate follows the feed with the markup, earlier payments keep theirs, and each names the refresh that gave it", async () => {
    const set = await adminOk(service.app, 'PUT', '/rates/RUB', {
      source: 'bybit_p2p',
      markup_percent: 1.5,
      refresh_seconds: 5,
      options: { base_url: market.url, pay_methods: ['75'], amount: 5000 },
    });
    // The contract's fields: rate null until the first fetch succeeds.
    expect(set).toMatchObject({ currency: 'RUB', source: 'bybit_p2p', markup_percent: 1.5, stale: true });
    expect(set.rate === null || typeof set.rate === 'number').toBe(true);
    const first = await nextRate('RUB');
    // Median of 95.00…95.40 is 95.20; × 1.015.
    expect(first).toMatchObject({ rate: 96.628, figure: 95.2, stale: false, source: 'bybit_p2p', failures: 0 });
    // The exchange was asked as Bybit is: USDT against RUB, the adverts one buys from, the pay method and probe amount.
    expect(market.bodies.at(-1)).toMatchObject({ tokenId: 'USDT', currencyId: 'RUB', side: '1', payment: ['75'], amount: '5000' });

    const before = await pay(1000);
    expect(before.status).toBe(200);
    expect(before.body.rate).toBe(96.628);

    // Only the markup changes (the options sent in another key order): the same feed keeps its figure, priced anew.
    const repriced = await adminOk(service.app, 'PUT', '/rates/RUB', {
      options: { amount: 5000, pay_methods: ['75'], base_url: market.url },
      refresh_seconds: 5,
      markup_percent: 2,
      source: 'bybit_p2p',
    });
    expect(repriced).toMatchObject({ rate: 97.104, figure: 95.2, stale: false });
    expect((await pay(1000.5)).body.rate).toBe(97.104);
    await adminOk(service.app, 'PUT', '/rates/RUB', {
      source: 'bybit_p2p',
      markup_percent: 1.5,
      refresh_seconds: 5,
      options: { base_url: market.url, pay_methods: ['75'], amount: 5000 },
    });

    market.prices = ['96.00', '96.10', '96.20', '96.30', '96.40'];
    await adminOk(service.app, 'POST', '/rates/RUB/refresh');
    const second = await nextRate('RUB', 96.628);
    expect(second.rate).toBe(97.643);
    const after = await pay(1001);
    expect(after.body.rate).toBe(97.643);

    // The earlier payment keeps its rate; each names the refresh that gave it, with its sample.
    const stored = await sql<{ id: string; rate: string; rate_refresh_id: number }>(
      'SELECT id, rate::text, rate_refresh_id FROM payments WHERE id = ANY($1) ORDER BY created_at',
      [[before.body.id, after.body.id]],
    );
    expect(stored.map((p) => p.rate)).toEqual(['96.62800000', '97.64300000']);
    expect(String(stored[0]!.rate_refresh_id)).toBe(first.refresh_id);
    expect(String(stored[1]!.rate_refresh_id)).toBe(second.refresh_id);
    // The operator's view of the payment names it: "why was this payment 97.643?"
    expect(await adminOk(service.app, 'GET', `/payments/${after.body.id}`)).toMatchObject({ rate: 97.643, rate_refresh_id: second.refresh_id });
    const why = await adminOk(service.app, 'GET', `/rate-refreshes/${second.refresh_id}`);
    expect(why).toMatchObject({ kind: 'fetched', source: 'bybit_p2p', figure: 96.2, markup_percent: 1.5, rate: 97.643, gave_rate: true });
    expect((why.sample as { sources: unknown[] }).sources[0]).toMatchObject({
      source: 'bybit_p2p',
      figure: '96.2',
      used: ['96.00', '96.10', '96.20', '96.30', '96.40'],
    });
    expect((await admin(service.app, 'GET', '/rate-refreshes/999999999')).statusCode).toBe(404);
  });

  it('a stale feed refuses creates and payouts in its currency only, saying which; the feed answering again resumes them', async () => {
    await adminOk(service.app, 'PUT', '/rates/RUB', { source: 'bybit_p2p', refresh_seconds: 5, max_age_seconds: 10, options: { base_url: market.url } });
    await nextRate('RUB');
    await setRate(service.app, 'KZT', 0.19);
    const kzt = await createMerchant(service.app, { currency: 'KZT' });
    await createRequisite(service.app, executor.id, { currency: 'KZT', country: 'KZ', bank: null, methods: ['CARD'] });

    market.mode = 'http500';
    // The rate ages past max_age_seconds while the exchange fails (moved back rather than waited for).
    await sql("UPDATE rates SET fetched_at = now() - interval '1 minute' WHERE currency = 'RUB' AND terminal_id IS NULL");
    const stale = await pay(1500);
    expect(stale.status).toBe(503);
    expect(stale.body).toMatchObject({ error: 'PAY_004', data: { reason: 'rate_stale', currency: 'RUB' } });
    expect(stale.body.message).toContain('RUB');
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 1000, reason: 'payout funds' });
    const payout = await signed(service.app, merchant, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 1000,
      method: 'card',
      requisites: testCard('4111'),
      holder_name: 'Ivan Petrov',
    });
    expect(payout.statusCode).toBe(503);
    expect(payout.json()).toMatchObject({ error: 'PAY_004', data: { reason: 'rate_stale' } });
    // Another currency's typed rate keeps working.
    const other = await createPayment(service.app, kzt, { ext_id: uniqueExtId(), amount: 5000, currency: 'KZT', method: 'CARD' });
    expect(other.status).toBe(200);
    expect(other.body.rate).toBe(0.19);

    // The operator sees it: stale, the failures and the exchange's error; /metrics too.
    const seen = await until(async () => {
      const r = await rateOf('RUB');
      return r.failures > 0 ? r : undefined;
    });
    expect(seen).toMatchObject({ stale: true, state: 'stale' });
    expect(seen.last_error).toContain('500');
    const metrics = await service.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/kassir_rate_stale\{currency="RUB",terminal=""\} 1/);
    expect(metrics.body).toMatch(/kassir_rate_fetches_total\{source="bybit_p2p",outcome="error"\} [1-9]/);

    market.mode = 'ok';
    await adminOk(service.app, 'POST', '/rates/RUB/refresh');
    await until(async () => ((await rateOf('RUB')).state === 'fresh' ? true : undefined), 20_000, 100, 'RUB fresh again');
    expect((await pay(1502)).status).toBe(200);
  });

  it("an exchange's error answer, or too few adverts, is a failed fetch: nothing stands in for the rate", async () => {
    // Another feed (its options differ from the last test's): it starts with no rate.
    market.mode = 'ret_code';
    await adminOk(service.app, 'PUT', '/rates/RUB', { source: 'bybit_p2p', refresh_seconds: 5, options: { base_url: market.url, ranks: [1, 5] } });
    const failed = await until(async () => {
      const r = await rateOf('RUB');
      return r.failures > 0 ? r : undefined;
    });
    // A new feed has no rate until its first fetch succeeds: creates wait for it, refused as stale.
    expect(failed).toMatchObject({ rate: null, stale: true });
    expect(failed.last_error).toContain('10006');
    expect((await pay(1600)).body).toMatchObject({ error: 'PAY_004', data: { reason: 'rate_stale' } });

    market.mode = 'ok';
    market.prices = ['95.00', '95.10'];
    await adminOk(service.app, 'POST', '/rates/RUB/refresh');
    const few = await until(async () => {
      const r = await rateOf('RUB');
      return r.last_error?.includes('advert') ? r : undefined;
    });
    expect(few.rate).toBeNull();
    const history = await adminOk(service.app, 'GET', '/rates/RUB/history');
    expect((history.refreshes as Setting[]).filter((r) => r.kind === 'failed').length).toBeGreaterThanOrEqual(2);
  });

  it('a jump beyond max_jump_percent is held for a person, who accepts it or keeps the rate', async () => {
    await adminOk(service.app, 'PUT', '/rates/RUB', { source: 'bybit_p2p', refresh_seconds: 5, max_jump_percent: 5, options: { base_url: market.url } });
    const steady = await nextRate('RUB');
    expect(steady.rate).toBe(95.2);

    market.prices = ['104.00', '104.10', '104.20', '104.30', '104.40'];
    await adminOk(service.app, 'POST', '/rates/RUB/refresh');
    const held = await until(async () => {
      const r = await rateOf('RUB');
      return r.state === 'held' ? r : undefined;
    });
    expect(held.rate).toBe(95.2);
    expect(held.held).toMatchObject({ rate: 104.2, figure: 104.2 });
    // Creates still price at the rate in force.
    expect((await pay(1700)).body.rate).toBe(95.2);

    const kept = await adminOk(service.app, 'POST', '/rates/RUB/held/keep');
    expect(kept).toMatchObject({ rate: 95.2, held: null, stale: false });
    await adminOk(service.app, 'POST', '/rates/RUB/refresh');
    await until(async () => ((await rateOf('RUB')).state === 'held' ? true : undefined), 20_000, 100, 'held again');
    const accepted = await adminOk(service.app, 'POST', '/rates/RUB/held/accept');
    expect(accepted).toMatchObject({ rate: 104.2, figure: 104.2, held: null, state: 'fresh' });
    expect((await pay(1701)).body.rate).toBe(104.2);
    expect((await admin(service.app, 'POST', '/rates/RUB/held/accept')).json()).toMatchObject({ error: 'CONFLICT' });
    const decisions = await sql("SELECT action, actor FROM audit_log WHERE action IN ('rate.keep_jump', 'rate.accept_jump') ORDER BY id");
    expect(decisions).toEqual([
      { action: 'rate.keep_jump', actor: 'token' },
      { action: 'rate.accept_jump', actor: 'token' },
    ]);
  });
});

describe("a terminal's rates", () => {
  it("the currency's figure with the terminal's own markup, its own typed rate, and payouts' own markup", async () => {
    await adminOk(service.app, 'PUT', '/rates/RUB', { source: 'bybit_p2p', refresh_seconds: 5, markup_percent: 1, options: { base_url: market.url } });
    await nextRate('RUB');
    const shop = await createMerchant(service.app, { payout_rate: 0 });
    const own = await adminOk(service.app, 'PUT', `/terminals/${shop.terminalId}/rates/RUB`, { markup_percent: 3, payout_markup_percent: -2 });
    expect(own).toMatchObject({ terminal_id: shop.terminalId, currency: 'RUB', mode: 'markup', markup_percent: 3, rate: null });
    const listed = await adminOk(service.app, 'GET', `/terminals/${shop.terminalId}/rates`);
    expect(listed.effective).toContainEqual({
      currency: 'RUB',
      rate: 98.056,
      payout_rate: 93.296,
      source: 'bybit_p2p',
      stale: false,
      refresh_id: expect.any(String),
    });
    expect((await pay(1800, 'RUB', shop)).body.rate).toBe(98.056);
    // The other merchant still prices with the currency's own markup.
    expect((await pay(1801)).body.rate).toBe(96.152);

    // Payouts price with the sell side's markup.
    await adminOk(service.app, 'POST', `/terminals/${shop.terminalId}/adjustments`, { amount: 1000, reason: 'payout funds' });
    const payout = await signed(service.app, shop, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 9329.6,
      method: 'card',
      requisites: testCard('4111'),
      holder_name: 'Ivan Petrov',
    });
    expect(payout.statusCode).toBe(200);
    const [row] = await sql<{ rate: string; reserve: string; rate_refresh_id: number }>(
      'SELECT rate::text, reserve::text, rate_refresh_id FROM payouts WHERE id = $1',
      [payout.json().id],
    );
    expect(row).toMatchObject({ rate: '93.29600000', reserve: '100.000000' });
    expect(row!.rate_refresh_id).not.toBeNull();

    // Its own typed rate, then back to the currency's.
    await adminOk(service.app, 'PUT', `/terminals/${shop.terminalId}/rates/RUB`, { rate: 90 });
    expect((await pay(1802, 'RUB', shop)).body.rate).toBe(90);
    expect((await admin(service.app, 'DELETE', `/terminals/${shop.terminalId}/rates/RUB`)).statusCode).toBe(204);
    expect((await pay(1803, 'RUB', shop)).body.rate).toBe(96.152);
    const audit = await sql("SELECT action FROM audit_log WHERE object_id = $1 AND action LIKE 'terminal.%rate' ORDER BY id", [shop.terminalId]);
    expect(audit.map((a) => a.action)).toEqual(['terminal.set_rate', 'terminal.set_rate', 'terminal.remove_rate']);
  });

  it("a terminal's own feed is stale on its own: the currency's rate keeps serving the other terminals", async () => {
    await adminOk(service.app, 'PUT', '/rates/RUB', { rate: 95 });
    const shop = await createMerchant(service.app);
    const dead = await fakeBybit(['99.00', '99.10', '99.20']);
    await adminOk(service.app, 'PUT', `/terminals/${shop.terminalId}/rates/RUB`, { source: 'bybit_p2p', refresh_seconds: 5, options: { base_url: dead.url } });
    await until(async () => {
      const { rates } = await adminOk<{ rates: Setting[] }>(service.app, 'GET', `/terminals/${shop.terminalId}/rates`);
      return rates[0]?.state === 'fresh' ? true : undefined;
    });
    expect((await pay(1900, 'RUB', shop)).body.rate).toBe(99.1);
    dead.server.close();
    await sql("UPDATE rates SET fetched_at = now() - interval '1 hour' WHERE terminal_id = $1", [shop.terminalId]);
    expect((await pay(1901, 'RUB', shop)).body).toMatchObject({ error: 'PAY_004', data: { reason: 'rate_stale' } });
    expect((await pay(1902)).body.rate).toBe(95);
  });
});

describe('two instances', () => {
  it('one fetch per refresh however many instances run the job, and every instance reads the rate', async () => {
    const other = await service.startAnother({ KASSIR_WORKER: 'true' });
    await adminOk(service.app, 'PUT', '/rates/RUB', { source: 'bybit_p2p', refresh_seconds: 5, options: { base_url: `${market.url}/` } });
    await nextRate('RUB');
    const start = market.hits;
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    // 11 s at one fetch per 5 s: two or three fetches, never one per instance each time.
    expect(market.hits - start).toBeGreaterThanOrEqual(1);
    expect(market.hits - start).toBeLessThanOrEqual(3);
    const fromOther = await createRequisite(other.app, executor.id).then(() =>
      createPayment(other.app, merchant, { ext_id: uniqueExtId(), amount: 2000, currency: 'RUB', method: 'CARD' }),
    );
    expect(fromOther.body.rate).toBe(95.2);
  });
});

describe('what the operator may send', () => {
  it.each([
    ['an unknown source', { source: 'kraken' }, 'source must be one of'],
    ['a rate and a source at once', { rate: 95, source: 'bybit_p2p' }, 'A typed rate takes nothing else'],
    ['a source that does not quote the currency', { source: 'rapira' }, 'does not quote USDT in KZT'],
    ['refresh_seconds under 5', { source: 'bybit_p2p', refresh_seconds: 4 }, 'refresh_seconds'],
    ['max_age_seconds under 10', { source: 'bybit_p2p', max_age_seconds: 9 }, 'max_age_seconds'],
    ['a base_url that is not http(s)', { source: 'bybit_p2p', options: { base_url: 'ftp://x' } }, 'base_url'],
    ['ranks the wrong way round', { source: 'bybit_p2p', options: { ranks: [5, 3] } }, 'ranks'],
    ['a markup of -100 %', { source: 'bybit_p2p', markup_percent: -100 }, 'markup_percent'],
    ['nothing', {}, 'Send {rate}'],
    ['a markup alone on the currency itself', { markup_percent: 2 }, 'Send {rate}'],
  ])('refuses %s with 400 VALIDATION and a sentence', async (_what, body, message) => {
    const res = await admin(service.app, 'PUT', '/rates/KZT', body);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain(message);
  });

  it('a currency without a feed has nothing to refresh and no history', async () => {
    expect((await admin(service.app, 'POST', '/rates/AZN/refresh')).statusCode).toBe(404);
    expect((await admin(service.app, 'GET', '/rates/AZN/history')).statusCode).toBe(404);
  });
});
