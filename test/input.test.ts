/**
 * Hostile input on every API (issue 15, item 5): what the issue found breaking, and the rules of
 * src/lib/input.ts as each API answers them — the route's own invalid-parameters code, a sentence
 * naming the field, and nothing stored. test/fuzz.test.ts throws everything else at every route.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kassirProvider } from '../src/providers/kassir/adapter.js';
import { ProviderError } from '../src/providers/provider.js';
import {
  ADMIN_TOKEN,
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  testCard,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let requisiteId: string;

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app);
  executor = await createExecutor(service.app);
  requisiteId = (await createRequisite(service.app, executor.id, { min_amount: 0, max_amount: 1_000_000 })).id;
  await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 1000, reason: 'float' });
});
afterAll(async () => {
  await service?.close();
});

function raw(method: string, url: string, payload: string, headers: Record<string, string> = {}) {
  return service.app.inject({ method: method as 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });
}

async function paymentCount(): Promise<number> {
  return (await adminOk<{ total: number }>(service.app, 'GET', `/payments?terminal_id=${merchant.terminalId}`)).total;
}

describe('a NUL in a correctly signed create answers 400, never 500, and stores nothing', () => {
  const payment = () => ({ ext_id: uniqueExtId(), amount: 1500, method: 'CARD', bank: 'sberbank', client_id: 'c1', notification_token: 't1' });
  const payout = () => ({ ext_id: uniqueExtId(), amount: 1000, method: 'card', requisites: testCard(), holder_name: 'Ivan I.', bank: 'sberbank' });

  it.each(['ext_id', 'bank', 'client_id', 'notification_token'])('POST /v1/payments with a NUL in %s', async (field) => {
    const before = await paymentCount();
    const res = await signed(service.app, merchant, 'POST', '/v1/payments', { ...payment(), [field]: 'a\u0000b' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'PAY_002', message: `${field} must not contain control characters (U+0000 at position 1)` });
    expect(await paymentCount()).toBe(before);
  });

  it.each(['ext_id', 'bank', 'holder_name', 'requisites'])('POST /v1/payouts with a NUL in %s', async (field) => {
    const body = { ...payout(), [field]: 'a\u0000b' };
    const res = await signed(service.app, merchant, 'POST', '/v1/payouts', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'PAY_002', message: `${field} must not contain control characters (U+0000 at position 1)` });
    const listed = await signed(service.app, merchant, 'GET', '/v1/payouts');
    expect((listed.json() as { payouts: unknown[] }).payouts).toEqual([]);
  });

  it('an unpaired surrogate is refused, not stored as U+FFFD under an ext_id the merchant cannot find', async () => {
    const res = await signed(service.app, merchant, 'POST', '/v1/payments', '{"ext_id":"order-\\ud800","amount":1500,"method":"CARD"}');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('ext_id must be valid Unicode text (it holds an unpaired surrogate)');
  });
});

describe('numbers JSON cannot carry exactly', () => {
  it('an adjustment of 9007199254740993 is refused, not booked as 9007199254740992', async () => {
    const before = await adminOk<{ balance: number }>(service.app, 'GET', `/terminals/${merchant.terminalId}`);
    const res = await raw('POST', `/admin/v1/terminals/${merchant.terminalId}/adjustments`, '{"amount": 9007199254740993, "reason": "x"}', {
      authorization: `Bearer ${ADMIN_TOKEN}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'VALIDATION', message: 'amount must be less than 10^15 in size' });
    const after = await adminOk<{ balance: number }>(service.app, 'GET', `/terminals/${merchant.terminalId}`);
    expect(after.balance).toBe(before.balance);
  });

  it('an amount written with more digits than a JSON number carries is refused, naming it', async () => {
    const res = await signed(service.app, merchant, 'POST', '/v1/payments', `{"ext_id":"${uniqueExtId()}","amount":1500.0000000000000001,"method":"CARD"}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'PAY_002',
      message: 'amount 1500.0000000000000001 cannot be carried exactly by a JSON number; send at most 15 significant digits',
    });
  });

  it('a transfer of 1e400 answers the route’s own code', async () => {
    const res = await signed(
      service.app,
      merchant,
      'POST',
      '/v1/transfers',
      `{"from_terminal_id":"${merchant.terminalId}","to_terminal_id":"${merchant.terminalId}","amount":1e400}`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'TRF_001', message: 'amount must be less than 10^15 in size' });
  });

  it('a body naming a key twice is refused: which amount was meant?', async () => {
    const res = await signed(service.app, merchant, 'POST', '/v1/payments', `{"ext_id":"${uniqueExtId()}","amount":100,"amount":300000,"method":"CARD"}`);
    expect(res.json()).toEqual({ error: 'PAY_002', message: 'The body names the key "amount" twice' });
  });
});

describe('currencies and codes that do not exist', () => {
  it('PUT /admin/v1/rates/XXX is refused and stores nothing', async () => {
    const res = await admin(service.app, 'PUT', '/rates/XXX', { rate: 10 });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('currency "XXX" is not one Kassir prices; use one of RUB, KZT, AZN, TJS, UZS, KGS, AMD, GEL, VND');
    const rates = await adminOk<{ rates: { currency: string }[] }>(service.app, 'GET', '/rates');
    expect(rates.rates.map((r) => r.currency)).not.toContain('XXX');
  });

  it('a terminal rate in a currency that does not exist is refused', async () => {
    const res = await admin(service.app, 'PUT', `/terminals/${merchant.terminalId}/rates/XXX`, { rate: 10 });
    expect(res.statusCode).toBe(400);
  });

  it('a rate in lower case names the same currency', async () => {
    const res = await admin(service.app, 'PUT', '/rates/kzt', { rate: 480 });
    expect(res.json()).toMatchObject({ currency: 'KZT', rate: 480 });
  });

  it('routes narrowed to an unknown currency or method are refused', async () => {
    const currency = await admin(service.app, 'PUT', `/terminals/${merchant.terminalId}/routes`, [{ executors: true, currencies: ['XXX'] }]);
    expect(currency.json().message).toBe('route 1: currency XXX is not an order currency; use RUB, KZT, AZN, TJS');
    const method = await admin(service.app, 'PUT', `/terminals/${merchant.terminalId}/routes`, [{ executors: true, methods: ['FOO'] }]);
    expect(method.statusCode).toBe(400);
    expect(method.json().message).toMatch(/^route 1: method FOO is not one of CARD, SBP, .*PAYOUT$/);
    const payout = await admin(service.app, 'PUT', `/terminals/${merchant.terminalId}/routes`, [
      { executors: true, methods: ['payout', 'CARD'], currencies: ['rub'] },
    ]);
    expect(payout.json()).toEqual([{ executors: true, currencies: ['RUB'], methods: ['PAYOUT', 'CARD'] }]);
    await adminOk(service.app, 'PUT', `/terminals/${merchant.terminalId}/routes`, []);
  });

  it('a bank in a country Kassir does not serve is refused', async () => {
    const res = await admin(service.app, 'POST', '/banks', { code: 'zz_bank', name: 'ZZ', country: 'XX', kind: 'bank' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^country must be one of: RU, KZ, TJ/);
  });
});

describe('every API and every part of a request', () => {
  it('the executor API: a NUL in a notification text', async () => {
    const res = await raw('POST', '/executor/v1/notifications', JSON.stringify({ requisite_id: requisiteId, text: 'Поступление 1 500 ₽\u0000' }), {
      authorization: `Bearer ${executor.token}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'VALIDATION', message: 'text must not contain control characters (U+0000 at position 19)' });
  });

  it('the operator API: a NUL in a name', async () => {
    const res = await admin(service.app, 'POST', '/merchants', { name: 'Shop\u0000' });
    expect(res.json()).toEqual({ error: 'VALIDATION', message: 'name must not contain control characters (U+0000 at position 4)' });
  });

  it('query strings and path parameters: no control character, not even a line feed', async () => {
    const query = await admin(service.app, 'GET', '/payments?ext_id=%00');
    expect(query.json()).toEqual({ error: 'VALIDATION', message: 'query parameter ext_id must not contain control characters (U+0000 at position 0)' });
    const path = await signed(service.app, merchant, 'GET', '/v1/payments/by-ext-id/a%0Ab');
    expect(path.json()).toEqual({ error: 'PAY_002', message: 'path parameter extId must not contain control characters (U+000A at position 1)' });
  });

  it('a URL whose percent-encoding is broken answers in the spec’s body', async () => {
    for (const url of ['/v1/payments/%ZZ', '/admin/v1/merchants/%C0%AF', '/pay/%FF']) {
      const res = await service.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'VALIDATION', message: 'The URL cannot be read: its percent-encoding is not valid UTF-8' });
    }
  });

  it('a signed plain-text body is refused as a media type, not as a bad signature', async () => {
    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { 'content-type': 'text/plain', 'x-identity': merchant.apiKey, 'x-signature': 'anything' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('multipart uploads: a field with a NUL, a data part with an inexact number', async () => {
    const created = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1500, method: 'CARD' });
    const url = `/v1/payments/${created.body.id}/confirm`;
    const field = await signedMultipart(service.app, merchant, url, multipartBody({ comment: 'paid\u0000' }));
    expect(field.json()).toEqual({ error: 'PAY_002', message: 'Field "comment" must not contain control characters (U+0000 at position 4)' });
    const data = await signedMultipart(service.app, merchant, url, multipartBody({ data: '{"amount": 9007199254740993}' }));
    expect(data.json()).toEqual({ error: 'PAY_002', message: 'The data part cannot be read: amount must be less than 10^15 in size' });
  });

  it('a stored Idempotency-Key must be printable', async () => {
    const body = JSON.stringify({ ext_id: uniqueExtId(), amount: 1500, method: 'CARD' });
    const { signRequest } = await import('../src/http/signature.js');
    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/payments',
      payload: body,
      headers: {
        'content-type': 'application/json',
        'x-identity': merchant.apiKey,
        'x-signature': signRequest(merchant.secretKey, 'POST', 'http://kassir.test/v1/payments', body),
        'idempotency-key': 'key\u0085',
      },
    });
    expect(res.json()).toEqual({ error: 'PAY_002', message: 'Idempotency-Key must be 1 to 255 printable characters' });
  });
});

describe('an upstream provider’s answer is input too', () => {
  let upstream: Server;
  let answer = '';
  beforeAll(async () => {
    upstream = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => {
    upstream?.close();
  });

  it.each([
    [
      'a NUL in the holder',
      '{"id":"p1","status":"PENDING","amount":1500,"currency":"RUB","requisites":{"type":"card","value":"2200700123456789","holder":"I\\u0000"}}',
      'holder must not contain control characters',
    ],
    [
      'an inexact amount',
      '{"id":"p1","status":"PENDING","amount":1500.0000000000000001,"currency":"RUB","requisites":{"type":"card","value":"2200700123456789"}}',
      'cannot be carried exactly',
    ],
  ])('%s makes the provider a failing one, never a stored payment', async (_name, body, reason) => {
    answer = body;
    const provider = kassirProvider({ baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, apiKey: 'k', secretKey: 's', timeoutMs: 2000 });
    const failure = await provider.getPayment('p1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).kind).toBe('unavailable');
    expect((failure as Error).message).toContain(reason);
  });
});

describe('requests the HTTP parser cannot read', () => {
  let listening: TestService;
  beforeAll(async () => {
    listening = await startTestService({}, { listen: true });
  });
  afterAll(async () => {
    await listening?.close();
  });

  /** Writes raw bytes to the listening service and reads what it answers until it closes. */
  async function rawHttp(bytes: string): Promise<string> {
    const { port } = listening.app.server.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400, { error: 'VALIDATION', message: 'The request could not be read as HTTP' }],
    [
      'headers beyond the limit',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      { error: 'HEADERS_TOO_LARGE', message: 'The request headers are too large' },
    ],
    [
      'a NUL in a header',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Identity: a\u0000b\r\n\r\n',
      400,
      { error: 'VALIDATION', message: 'The request could not be read as HTTP' },
    ],
  ])('%s: answered in the spec body, connection closed', async (_name, bytes, status, body) => {
    const answer = await rawHttp(bytes);
    expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual(body);
    const health = await fetch(`http://127.0.0.1:${(listening.app.server.address() as AddressInfo).port}/healthz`);
    expect(health.status).toBe(200);
  });
});
