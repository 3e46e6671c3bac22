/**
 * Property-based fuzz of every route (issue 15, item 5): the merchant, executor and operator APIs,
 * the payment page, provider callbacks and the health check, each called with its caller's real
 * credentials (signed, bearer, page token) so that generated input reaches the handlers, the
 * services and the database. Whatever is sent, the answer is never a 5xx (but the spec's PAY_004
 * "no available requisites"), every error has the spec's body, and no body carries internals
 * (stack frames, SQL, database messages, file paths). Afterwards the ledger still balances.
 *
 * The seed is fixed in CI (FUZZ_SEED, default 20261124) and random locally; a failure names its
 * seed and the request, so `FUZZ_SEED=<seed> npx vitest run test/fuzz.test.ts` replays it.
 * FUZZ_RUNS sets the requests per route (default 60).
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import { bodyText, HOSTILE_STRINGS, maybeHostile, type Pools, pathValue, queryString, RAW_BODIES, type Schema } from './fuzz/requests.js';
import {
  ADMIN_TOKEN,
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  testCard,
  uniqueExtId,
  webhookReceiver,
} from './helpers.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : process.env.CI ? 20261124 : Math.floor(Math.random() * 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const BASE = 'http://kassir.test';
const PROVIDER_SECRET = 'fuzz-provider-secret';

/** What a body may never contain: a stack frame, SQL, a database or runtime message, a path. */
const INTERNALS =
  /\bat [\w.<>$]+ \(|node_modules|\/work\/|\/src\/|\.ts:\d+|\bSELECT\b.*\bFROM\b|\bINSERT INTO\b|\bUPDATE \w+ SET\b|violates|syntax error at|relation "|column "|duplicate key value|invalid input syntax|out of range for type|TypeError|ReferenceError|RangeError|Cannot read propert|is not a function|undefined is not|ECONNREFUSED/i;

type Audience = 'merchant' | 'executor' | 'admin' | 'page' | 'callback' | 'public';

interface Route {
  method: string;
  /** OpenAPI form: /v1/payments/{id}. */
  path: string;
  audience: Audience;
  body?: Schema;
  /** Takes multipart uploads too. */
  upload: boolean;
  query: string[];
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** For the failure message. */
  shown: string;
}

let service: TestService;
let merchantA: MerchantCredentials;
let executorToken: string;
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
/** Objects the merchant, executor, page and callback routes act on. */
let ownPools: Pools;
/** Objects the operator routes act on: another merchant's and executor's, so that rotating a key or
 * deactivating a terminal there does not lock the other routes out for the rest of the run. */
let operatorPools: Pools;
let routes: Route[];

function audienceOf(path: string): Audience {
  if (path.startsWith('/admin/v1')) return 'admin';
  if (path.startsWith('/executor/v1')) return 'executor';
  if (path.startsWith('/v1/public')) return 'public';
  if (path.startsWith('/v1/')) return 'merchant';
  if (path.startsWith('/pay')) return 'page';
  if (path.startsWith('/callbacks')) return 'callback';
  return 'public';
}

const UPLOAD_ROUTES = new Set([
  'POST /v1/payments/{id}/confirm',
  'POST /v1/payments/{id}/receipt',
  'POST /v1/payments/{id}/dispute',
  'POST /executor/v1/payouts/{id}/complete',
  'POST /pay/{token}/confirm',
]);

/** The routes of the OpenAPI description, and those it hides (page, callbacks, health). */
function collectRoutes(openapi: { paths: Record<string, Record<string, any>> }): Route[] {
  const found: Route[] = [];
  const add = (method: string, path: string, body?: Schema, query: string[] = []) =>
    found.push({ method, path, audience: audienceOf(path), body, upload: UPLOAD_ROUTES.has(`${method} ${path}`), query });
  for (const [path, operations] of Object.entries(openapi.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const query = (operation.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name as string);
      add(method.toUpperCase(), path, operation.requestBody?.content?.['application/json']?.schema, query);
    }
  }
  add('GET', '/healthz');
  add('GET', '/pay/{token}', undefined, ['lang', 'error']);
  add('GET', '/pay/{token}/status');
  add('POST', '/pay/{token}/confirm');
  add('GET', '/pay/assets/{name}');
  add('POST', '/callbacks/providers/{providerId}');
  return found;
}

/** The pool a path parameter draws from: the object kind named by the segment before it. */
function poolFor(pools: Pools, path: string, name: string): string[] {
  if (name === 'token') return pools.pageTokens;
  if (name === 'name') return pools.assets;
  if (name === 'providerId') return pools.providers;
  if (name === 'extId') return pools.extIds;
  if (name === 'currency') return ['RUB', 'KZT', 'TJS', 'rub', 'USDT', 'XXX'];
  if (name === 'code') return ['sberbank', 'mts', 'kaspi', 'nosuch'];
  const segments = path.split('/');
  const kind = segments[segments.indexOf(`{${name}}`) - 1];
  switch (kind) {
    case 'payments':
    case 'disputes':
      return pools.payments;
    case 'payouts':
      return pools.payouts;
    case 'withdrawals':
      return pools.withdrawals;
    case 'terminals':
      return pools.terminals;
    case 'merchants':
      return pools.merchants;
    case 'executors':
      return pools.executors;
    case 'requisites':
      return pools.requisites;
    case 'notifications':
      return pools.notifications;
    case 'webhooks':
      return pools.webhooks;
    case 'receipts':
      return pools.receipts;
    case 'providers':
      return pools.providers;
    default:
      return [];
  }
}

/** A multipart body: form fields (plausible or hostile), a `data` JSON part, maybe a file. */
function multipartArbitrary(pools: Pools): fc.Arbitrary<{ body: Buffer; contentType: string }> {
  const field = maybeHostile(fc.constantFrom('1500', 'paid', 'https://example.com/r.png', '')).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return fc
    .record({
      fields: fc.dictionary(fc.constantFrom('amount', 'comment', 'receipt_url', 'reason', 'x\u0000', 'data'), field, { maxKeys: 3 }),
      data: fc.option(
        fc.oneof(
          bodyText(undefined, pools).map((t) => t ?? ''),
          fc.constantFrom(...RAW_BODIES),
        ),
        { nil: undefined },
      ),
      file: fc.option(
        fc.record({
          field: fc.constantFrom('receipt', 'proof', 'file', 'other'),
          name: fc.constantFrom('r.png', '../../x.pdf', 'a\u0000.png', ''),
          content: fc.constantFrom(TINY_PNG, Buffer.from('plain text, not an image'), Buffer.alloc(0), Buffer.from('%PDF-1.4\n%%EOF\n')),
        }),
        { nil: undefined },
      ),
    })
    .map(({ fields, data, file }) => multipartBody({ ...fields, ...(data === undefined ? {} : { data }) }, file ?? undefined));
}

function requestArbitrary(route: Route): fc.Arbitrary<FuzzRequest> {
  const pools = route.audience === 'admin' ? operatorPools : ownPools;
  const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const pathArb = fc
    .tuple(...params.map((name) => pathValue(poolFor(pools, route.path, name))))
    .map((values) => params.reduce((path, name, i) => path.replace(`{${name}}`, values[i]!), route.path));
  const takesBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  const jsonBody = takesBody ? bodyText(route.body, pools) : fc.constant(undefined);
  const body: fc.Arbitrary<{ payload?: string | Buffer; contentType?: string }> = route.upload
    ? fc.oneof(
        jsonBody.map((payload) => ({ payload })),
        multipartArbitrary(pools).map(({ body, contentType }) => ({ payload: body, contentType })),
      )
    : jsonBody.map((payload) => ({ payload }));
  // One body in twelve under a type no route takes.
  const oddContentType = fc.oneof(
    { weight: 11, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/xml') },
  );
  return fc
    .record({
      path: pathArb,
      query: queryString(route.query, pools),
      body,
      oddContentType,
      goodSignature: fc.nat(9),
      token: fc.constantFrom(...HOSTILE_STRINGS.slice(0, 3), 'tok'),
    })
    .map(({ path, query, body, oddContentType, goodSignature, token }) => {
      const url = path + query;
      const headers: Record<string, string> = {};
      if (body.payload !== undefined) headers['content-type'] = oddContentType ?? body.contentType ?? 'application/json';
      const raw = body.payload ?? '';
      switch (route.audience) {
        case 'merchant':
          headers['x-identity'] = merchantA.apiKey;
          headers['x-signature'] = signRequest(merchantA.secretKey, route.method, BASE + url, raw);
          break;
        case 'admin':
          headers.authorization = `Bearer ${ADMIN_TOKEN}`;
          break;
        case 'executor':
          headers.authorization = `Bearer ${executorToken}`;
          break;
        case 'callback':
          // A callback signed with the provider's secret nine times in ten: its content is what is fuzzed.
          headers['x-signature'] = goodSignature ? createHmac('sha1', PROVIDER_SECRET).update(raw).digest('base64') : 'bad';
          // biome-ignore lint/suspicious/noControlCharactersInRegex: a header cannot carry control characters
          headers['x-notification-token'] = token.replace(/[\u0000-\u001f]/g, '');
          break;
        default:
          break;
      }
      const shown = `${route.method} ${url}\n${typeof raw === 'string' ? raw.slice(0, 600) : `<multipart ${raw.length} bytes>`}`;
      return { method: route.method, url, headers, payload: body.payload, shown };
    });
}

/** The answer's promises: no 5xx but PAY_004, the spec's error body, nothing internal. */
function checkAnswer(res: LightMyRequestResponse, request: FuzzRequest): void {
  const where = `${request.shown}\n→ ${res.statusCode} ${res.body.slice(0, 400)}`;
  expect(INTERNALS.test(res.body), `internals in the body of ${where}`).toBe(false);
  const isJson = /^application\/json/.test(String(res.headers['content-type'] ?? ''));
  if (res.statusCode >= 500) {
    const code = isJson ? (res.json() as { error?: string }).error : undefined;
    expect(res.statusCode === 503 && code === 'PAY_004', `a ${res.statusCode} for ${where}`).toBe(true);
  }
  if (res.statusCode >= 400 && isJson) {
    const body = res.json() as Record<string, unknown>;
    expect(typeof body.error, `error code in ${where}`).toBe('string');
    expect(typeof body.message, `message in ${where}`).toBe('string');
    expect(
      Object.keys(body).every((key) => key === 'error' || key === 'message' || key === 'data'),
      `only error, message, data in ${where}`,
    ).toBe(true);
    if (body.data !== undefined)
      expect(typeof body.data === 'object' && body.data !== null && !Array.isArray(body.data), `data is an object in ${where}`).toBe(true);
  }
  if (res.statusCode >= 400 && !isJson) {
    // The payment page answers its people in HTML; everything else in the spec's JSON body.
    expect(request.url.startsWith('/pay/'), `a non-JSON error outside the page: ${where}`).toBe(true);
  }
}

/** Creates what the routes act on: merchants, terminals with money, executors, payments, payouts, … */
async function seed(app: TestService['app']): Promise<{ own: Pools; operator: Pools }> {
  for (const [currency, rate] of [
    ['RUB', 95.5],
    ['KZT', 480],
    ['TJS', 10.9],
    ['AZN', 1.7],
    ['UZS', 12700],
  ] as const)
    await setRate(app, currency, rate);
  const pools = (): Pools => ({
    payments: [],
    payouts: [],
    withdrawals: [],
    terminals: [],
    merchants: [],
    executors: [],
    requisites: [],
    notifications: [],
    webhooks: [],
    receipts: [],
    providers: [],
    extIds: [],
    pageTokens: [],
    assets: ['page.css', 'page.js', 'nosuch.js'],
    cards: [],
    webhookUrl: receiver.url,
  });
  const own = pools();
  const operator = pools();

  const provider = await adminOk<{ id: string }>(app, 'POST', '/providers', {
    name: 'Upstream',
    kind: 'kassir',
    base_url: 'http://127.0.0.1:9',
    api_key: 'k',
    secret_key: PROVIDER_SECRET,
  });
  own.providers.push(provider.id);
  operator.providers.push(provider.id);

  async function party(pool: Pools): Promise<{ creds: MerchantCredentials; executor: { id: string; token: string } }> {
    const creds = await createMerchant(app, { payin_rate: 2.5, payout_rate: 1.5, withdrawal_fee: 1 });
    const second = await createTerminal(app, creds.merchantId, { name: 'Second' });
    pool.merchants.push(creds.merchantId);
    pool.terminals.push(creds.terminalId, second.id);
    await adminOk(app, 'POST', `/terminals/${creds.terminalId}/adjustments`, { amount: 100000, reason: 'fuzz float' });
    const executor = await createExecutor(app);
    pool.executors.push(executor.id);
    for (const input of [
      { type: 'card', methods: ['CARD'], bank: 'sberbank' },
      { type: 'card', methods: ['CARD'], bank: 'tinkoff' },
      { type: 'sbp', methods: ['SBP'], bank: 'sberbank' },
      { type: 'sim', methods: ['SIM'], bank: 'mts_mobile' },
    ]) {
      for (let i = 0; i < 3; i++) {
        const card = testCard();
        pool.cards.push(card);
        const requisite = await createRequisite(app, executor.id, {
          ...input,
          value: input.type === 'card' ? card : undefined,
          min_amount: 0,
          max_amount: 1_000_000,
        });
        pool.requisites.push(requisite.id);
      }
    }
    for (let i = 0; i < 4; i++) {
      const extId = uniqueExtId('seed');
      const created = await createPayment(app, creds, { ext_id: extId, amount: 1500 + i, method: 'CARD', notify_url: receiver.url });
      pool.payments.push(created.body.id);
      pool.extIds.push(extId);
      pool.pageTokens.push(String(created.body.payment_url).split('/').pop()!);
    }
    const payout = await signed(app, creds, 'POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 1000,
      method: 'card',
      requisites: testCard(),
      holder_name: 'Ivan I.',
      notify_url: receiver.url,
    });
    pool.payouts.push(payout.json().id);
    const withdrawal = await signed(app, creds, 'POST', '/v1/withdrawals', {
      terminal_id: creds.terminalId,
      amount: 10,
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    });
    pool.withdrawals.push(withdrawal.json().id);
    const receipt = await signedMultipart(app, creds, `/v1/payments/${pool.payments[0]}/receipt`, multipartBody({}, { content: TINY_PNG }));
    const receiptId = (receipt.json() as { receipt_id?: string; receipt?: { id?: string } }).receipt_id;
    if (receiptId) pool.receipts.push(receiptId);
    return { creds, executor };
  }

  const a = await party(own);
  await party(operator);
  merchantA = a.creds;
  executorToken = a.executor.token;
  // Operator routes may also look at (and cancel, decide, resend) the first merchant's objects.
  operator.payments.push(...own.payments);
  operator.payouts.push(...own.payouts);
  operator.withdrawals.push(...own.withdrawals);
  const unmatched = await app.inject({
    method: 'POST',
    url: '/executor/v1/notifications',
    headers: { authorization: `Bearer ${a.executor.token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ requisite_id: own.requisites[0], amount: 99999 }),
  });
  operator.notifications.push(unmatched.json().notification_id);
  const webhooks = await adminOk<{ webhooks?: { id: string }[]; events?: { id: string }[] }>(app, 'GET', '/webhooks');
  operator.webhooks.push(...(webhooks.webhooks ?? webhooks.events ?? []).map((w) => w.id));
  return { own, operator };
}

beforeAll(async () => {
  receiver = await webhookReceiver();
  service = await startTestService({ SAME_AMOUNT_LIMIT: '1000' });
  const pools = await seed(service.app);
  ownPools = pools.own;
  operatorPools = pools.operator;
  await service.app.ready();
  const all = collectRoutes(service.app.swagger() as never);
  // The operator's routes last: what they change (a cancelled payment, a rotated key elsewhere)
  // then no longer matters to the others.
  routes = [...all.filter((r) => r.audience !== 'admin'), ...all.filter((r) => r.audience === 'admin')];
  console.log(`route fuzz: seed ${SEED}, ${RUNS} requests per route, ${routes.length} routes`);
}, 120_000);

afterAll(async () => {
  await service?.close();
  receiver?.server.close();
});

describe('route fuzz', () => {
  it('covers every route of the OpenAPI description and the hidden ones', () => {
    expect(routes.length).toBeGreaterThan(80);
    for (const audience of ['merchant', 'executor', 'admin', 'page', 'callback', 'public'] as const) {
      expect(
        routes.some((r) => r.audience === audience),
        audience,
      ).toBe(true);
    }
  });

  it('no route answers 5xx, an error outside the spec body, or internals, whatever it is sent', async () => {
    const failures: string[] = [];
    /** Per route, how many answers of each status: how deep the fuzz got (FUZZ_STATS=1 prints it). */
    const statuses = new Map<string, Map<number, number>>();
    for (const [index, route] of routes.entries()) {
      const seen = new Map<number, number>();
      statuses.set(`${route.method} ${route.path}`, seen);
      try {
        await fc.assert(
          fc.asyncProperty(requestArbitrary(route), async (request) => {
            const res = await service.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload });
            seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
            if (process.env.FUZZ_STATS === '2' && res.statusCode >= 400)
              console.log(`${route.method} ${route.path} ${res.statusCode} ${res.body.slice(0, 160)} ${res.statusCode === 401 ? request.shown : ''}`);
            checkAnswer(res, request);
          }),
          { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
        );
      } catch (err) {
        // fast-check's report: the seed and path to replay, then the request and what was wrong with its answer.
        const report = (err as Error).message.split('\n').filter((line) => !/^\s*$|^\s+at |Hint:|Encountered failures/.test(line));
        const cause = (err as Error).cause instanceof Error ? `\n${((err as Error).cause as Error).message.split('\n')[0]}` : '';
        failures.push(`${route.method} ${route.path}: ${report.slice(0, 12).join('\n').slice(0, 3000)}${cause}`);
      }
    }
    if (process.env.FUZZ_STATS === '1') {
      for (const [route, seen] of statuses)
        console.log(
          `${route.padEnd(58)} ${[...seen]
            .sort(([a], [b]) => a - b)
            .map(([s, n]) => `${s}×${n}`)
            .join(' ')}`,
        );
    }
    const answered = [...statuses.values()].flatMap((seen) => [...seen]);
    console.log(
      `route fuzz: ${answered.reduce((sum, [, n]) => sum + n, 0)} requests, ${answered.filter(([s]) => s < 300).reduce((sum, [, n]) => sum + n, 0)} accepted`,
    );
    expect(failures, `seed ${SEED}:\n\n${failures.join('\n\n')}`).toEqual([]);
  }, 600_000);

  it('leaves the ledger balanced: nothing half-written', async () => {
    const check = await admin(service.app, 'GET', '/ledger/check');
    expect(check.json()).toMatchObject({ ok: true });
  });
});
