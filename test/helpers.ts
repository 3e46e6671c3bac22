import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { expect, inject } from 'vitest';
import { type Config, loadConfig } from '../src/config.js';
import { freePort } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';
import { type RunningService, startService } from '../src/instance.js';
import { createLogger } from '../src/lib/logger.js';
import { luhnValid } from '../src/lib/validators.js';

export const ADMIN_TOKEN = 'test-admin-token';

/** Creates an empty, migrated database for one test file (a copy of the run's template). */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `kassir_t_${inject('runId')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  // The template may be busy for a moment while another worker copies it.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
      break;
    } catch (err) {
      if (attempt > 50 || !/being accessed by other users/.test(String(err))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestService extends RunningService {
  config: Config;
  databaseUrl: string;
  /** A second service instance on the same database (two instances must behave as one). */
  startAnother(overrides?: Record<string, string>): Promise<RunningService>;
  close(): Promise<void>;
}

/** Starts the whole service in-process on a fresh database; `env` overrides the runtime contract. */
export async function startTestService(env: Record<string, string> = {}, options: { worker?: boolean; listen?: boolean } = {}): Promise<TestService> {
  const database = await createTestDatabase();
  const baseEnv = {
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    KASSIR_MASTER_KEY: randomBytes(32).toString('base64'),
    PUBLIC_BASE_URL: 'http://kassir.test',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // The service runs in the test's own process, so its event loop also carries the test's work
    // (building fuzz input, hundreds of concurrent requests): load shedding would answer 503 for
    // delays that are the test's. test/overload.test.ts turns it on.
    KASSIR_SHED: 'false',
    KASSIR_WORKER: options.worker ? 'true' : 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    ...env,
  };
  const config = loadConfig(baseEnv);
  const log = createLogger(config.logLevel);
  const service = await startService(config, log, { listen: options.listen ?? false });
  const others: RunningService[] = [];
  return {
    ...service,
    config,
    databaseUrl: database.url,
    async startAnother(overrides = {}) {
      const other = await startService(loadConfig({ ...baseEnv, ...overrides }), log, { listen: options.listen ?? false });
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.stop();
      await service.stop();
      await database.drop();
    },
  };
}

/**
 * A test file's SQL on its service's database, answering the rows. `service` is read at each call,
 * so the file may set it in beforeAll.
 */
export function sqlOf(service: () => TestService) {
  return <T extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
    service()
      .ctx.db.query<T>(text, params)
      .then((r) => r.rows);
}

/** Calls the operator API. */
export async function admin(app: FastifyInstance, method: string, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return app.inject({
    method: method as 'GET',
    url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Calls the operator API and fails the test on any non-2xx answer. */
export async function adminOk<T = Record<string, unknown>>(app: FastifyInstance, method: string, url: string, body?: unknown): Promise<T> {
  const res = await admin(app, method, url, body);
  if (res.statusCode >= 300) throw new Error(`${method} ${url} → ${res.statusCode} ${res.body}`);
  return (res.body ? res.json() : undefined) as T;
}

export interface MerchantCredentials {
  merchantId: string;
  terminalId: string;
  apiKey: string;
  secretKey: string;
}

/** A merchant with one terminal (factory). */
export async function createMerchant(
  app: FastifyInstance,
  terminal: { currency?: string; payin_rate?: number; payout_rate?: number; withdrawal_fee?: number; name?: string; is_test?: boolean } = {},
): Promise<MerchantCredentials> {
  const merchant = await adminOk<{ id: string; secret_key: string }>(app, 'POST', '/merchants', { name: `Shop ${randomBytes(3).toString('hex')}` });
  const created = await createTerminal(app, merchant.id, terminal);
  return { merchantId: merchant.id, terminalId: created.id, apiKey: created.api_key, secretKey: merchant.secret_key };
}

export async function createTerminal(
  app: FastifyInstance,
  merchantId: string,
  terminal: { currency?: string; payin_rate?: number; payout_rate?: number; withdrawal_fee?: number; name?: string; is_test?: boolean } = {},
): Promise<{ id: string; api_key: string }> {
  return adminOk(app, 'POST', `/merchants/${merchantId}/terminals`, {
    name: terminal.name ?? 'Main',
    currency: terminal.currency ?? 'RUB',
    payin_rate: terminal.payin_rate ?? 2.5,
    payout_rate: terminal.payout_rate ?? 1.5,
    withdrawal_fee: terminal.withdrawal_fee ?? 1,
    ...(terminal.is_test === undefined ? {} : { is_test: terminal.is_test }),
  });
}

export async function setRate(app: FastifyInstance, currency: string, rate: number): Promise<void> {
  await adminOk(app, 'PUT', `/rates/${currency}`, { rate });
}

/**
 * An executor, its deposit topped up with `deposit` USDT (default a million: enough that no test
 * about something else runs out; 0 leaves it unfunded, so that it receives no payments).
 */
export async function createExecutor(
  app: FastifyInstance,
  name = 'Trader',
  options: { deposit?: number; maxOpenDisputes?: number } = {},
): Promise<{ id: string; token: string }> {
  const executor = await adminOk<{ id: string; token: string }>(app, 'POST', '/executors', { name });
  const deposit = options.deposit ?? 1_000_000;
  if (deposit !== 0) await adminOk(app, 'POST', `/executors/${executor.id}/adjustments`, { amount: deposit, reason: 'test deposit' });
  // The cap of open disputes (default 5, issue 35) would stop the hand-outs of suites that leave
  // dozens of disputes open on their one executor; test/disputes.executor.test.ts tests the cap.
  const cap = options.maxOpenDisputes ?? 1000;
  if (cap !== 5) await adminOk(app, 'PATCH', `/executors/${executor.id}`, { max_open_disputes: cap });
  return executor;
}

/** A call to the executor API with the executor's bearer token (JSON body when given). */
export function executorCall(app: FastifyInstance, token: string, method: string, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return app.inject({
    method: method as 'GET',
    url: `/executor/v1${url}`,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The executor's notification of an incoming transfer of `amount` on a requisite, received now. */
export async function notifyTransfer(app: FastifyInstance, token: string, requisiteId: string, amount: number): Promise<Record<string, any>> {
  const res = await executorCall(app, token, 'POST', '/notifications', { requisite_id: requisiteId, amount, received_at: new Date().toISOString() });
  return res.json();
}

/** Asserts that the ledger check (GET /admin/v1/ledger/check) finds nothing wrong. */
export async function expectLedgerOk(app: FastifyInstance): Promise<void> {
  expect(await adminOk(app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
}

let cardSeq = 0;
/** A fresh Luhn-valid 16-digit card number. */
export function testCard(prefix = '2200'): string {
  const body = (prefix + String(Date.now() % 1e6).padStart(6, '0') + String(cardSeq++ % 100000).padStart(5, '0')).slice(0, 15);
  for (let check = 0; check < 10; check++) if (luhnValid(body + check)) return body + check;
  throw new Error('unreachable');
}

let phoneSeq = 0;
export function testPhone(country = '7'): string {
  return `+${country}9${String(100000000 + ((phoneSeq++ * 7919 + Date.now()) % 900000000)).padStart(9, '0')}`;
}

export interface RequisiteInput {
  type?: string;
  value?: string;
  bank?: string | null;
  holder?: string;
  currency?: string;
  country?: string;
  methods?: string[];
  min_amount?: number;
  max_amount?: number | null;
  is_active?: boolean;
}

/** A requisite (factory): by default a RUB card in Russia serving CARD. */
export async function createRequisite(app: FastifyInstance, executorId: string, input: RequisiteInput = {}): Promise<{ id: string; value: string }> {
  const type = input.type ?? 'card';
  return adminOk(app, 'POST', `/executors/${executorId}/requisites`, {
    type,
    value: input.value ?? (type === 'card' ? testCard() : testPhone()),
    bank: input.bank === undefined ? 'sberbank' : input.bank,
    holder: input.holder ?? 'Ivan I.',
    currency: input.currency ?? 'RUB',
    country: input.country ?? 'RU',
    methods: input.methods ?? ['CARD'],
    min_amount: input.min_amount ?? 0,
    ...(input.max_amount === undefined ? {} : { max_amount: input.max_amount }),
    ...(input.is_active === undefined ? {} : { is_active: input.is_active }),
  });
}

/** Sends a signed merchant request the way the spec describes. */
export async function signed(
  app: FastifyInstance,
  creds: Pick<MerchantCredentials, 'apiKey' | 'secretKey'>,
  method: string,
  url: string,
  body?: unknown,
  baseUrl = 'http://kassir.test',
): Promise<LightMyRequestResponse> {
  const raw = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  return app.inject({
    method: method as 'GET',
    url,
    headers: {
      'x-identity': creds.apiKey,
      'x-signature': signRequest(creds.secretKey, method, baseUrl + url, raw),
      ...(raw === '' ? {} : { 'content-type': 'application/json' }),
    },
    payload: raw === '' ? undefined : raw,
  });
}

/**
 * The whole service listening on a free local port, for tests that drive a browser at it:
 * answers the service and its origin (which signatures are checked against). People sign in
 * there many times from one address, so the per-address sign-in limit is lifted.
 */
export async function startWebTestService(
  env: Record<string, string> = {},
  options: { worker?: boolean } = {},
): Promise<{ service: TestService; origin: string }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const service = await startTestService(
    { PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: origin, LOGIN_ATTEMPTS_PER_MINUTE: '1000', ...env },
    { listen: true, ...options },
  );
  return { service, origin };
}

/** Creates a payment and returns the response (status and body). */
export async function createPayment(app: FastifyInstance, creds: MerchantCredentials, body: Record<string, unknown>) {
  const res = await signed(app, creds, 'POST', '/v1/payments', body);
  return { status: res.statusCode, body: res.json() as Record<string, any> };
}

export function uniqueExtId(prefix = 'order'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** A multipart/form-data body built byte by byte, so the exact bytes can be signed. */
export function multipartBody(
  fields: Record<string, string>,
  file?: { field?: string; name?: string; contentType?: string; content: Buffer },
): { body: Buffer; contentType: string } {
  const boundary = `----kassir${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'receipt'}"; filename="${file.name ?? 'receipt.png'}"\r\n` +
          `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      file.content,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Sends a signed multipart request (the signature covers every byte of the body). */
export async function signedMultipart(
  app: FastifyInstance,
  creds: Pick<MerchantCredentials, 'apiKey' | 'secretKey'>,
  url: string,
  multipart: { body: Buffer; contentType: string },
  baseUrl = 'http://kassir.test',
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: {
      'x-identity': creds.apiKey,
      'x-signature': signRequest(creds.secretKey, 'POST', baseUrl + url, multipart.body),
      'content-type': multipart.contentType,
    },
    payload: multipart.body,
  });
}

/** The smallest valid PNG (1×1 pixel). */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The executor takes a payout (POST /executor/v1/payouts/{id}/take). */
export function executorTakesPayout(app: FastifyInstance, token: string, payoutId: string) {
  return app.inject({ method: 'POST', url: `/executor/v1/payouts/${payoutId}/take`, headers: { authorization: `Bearer ${token}` } });
}

/** The executor completes a payout it took, with a proof image (POST /executor/v1/payouts/{id}/complete). */
export function executorCompletesPayout(app: FastifyInstance, token: string, payoutId: string) {
  const proof = multipartBody({}, { field: 'proof', content: TINY_PNG });
  return app.inject({
    method: 'POST',
    url: `/executor/v1/payouts/${payoutId}/complete`,
    headers: { authorization: `Bearer ${token}`, 'content-type': proof.contentType },
    payload: proof.body,
  });
}

/** Polls `probe` until it returns something (not undefined/null), or fails after `timeoutMs` naming `what`. */
export async function until<T>(
  probe: () => T | undefined | null | Promise<T | undefined | null>,
  timeoutMs = 20_000,
  intervalMs = 100,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in time`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface ReceivedWebhook {
  headers: import('node:http').IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers 200. */
export async function webhookReceiver(): Promise<{ url: string; received: ReceivedWebhook[]; server: import('node:http').Server }> {
  const { createServer } = await import('node:http');
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hooks/kassir?shop=1`, received, server };
}

/** How an instance's payment creates went to the database so far (kassir_payment_creates_sent_total, by `how`). */
export async function createsSent(instance: Pick<RunningService, 'ctx'>): Promise<Record<'alone' | 'together' | 'again', number>> {
  const metric = await instance.ctx.metrics.registry.getSingleMetric('kassir_payment_creates_sent_total')!.get();
  const totals = { alone: 0, together: 0, again: 0 };
  for (const value of metric.values) totals[value.labels.how as keyof typeof totals] += value.value;
  return totals;
}

/** A person's session as the web app holds it: the cookie, and the CSRF token sent on changes. */
export interface PersonSession {
  cookie: string;
  csrf: string;
}

/** Signs a person in (`otp`: a code or a recovery code) and answers the session; fails the test on a refusal. */
export async function personSignIn(app: FastifyInstance, email: string, password: string, otp?: string): Promise<PersonSession> {
  const res = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email, password, ...(otp ? { otp } : {}) } });
  if (res.statusCode !== 200) throw new Error(`sign-in of ${email} → ${res.statusCode} ${res.body}`);
  return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: res.json().csrf_token };
}

/** A request as the web app makes it: the session cookie, and the CSRF token on changes. */
export function asPerson(app: FastifyInstance, session: PersonSession, method: string, url: string, payload?: unknown) {
  const headers: Record<string, string> = { cookie: session.cookie };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  return app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

/**
 * Enrols two-factor as the Security screen does — confirm with the password, set up, a first code
 * from the app — and answers the secret and the ten recovery codes. Each TOTP step is accepted once,
 * so a test signs in and confirms after this with a recovery code each, rather than wait 30 s for the next step.
 */
export async function enrolTwoFactor(app: FastifyInstance, session: PersonSession, password: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const { generate } = await import('otplib');
  const ok = async (method: string, url: string, payload?: unknown) => {
    const res = await asPerson(app, session, method, url, payload);
    if (res.statusCode !== 200) throw new Error(`${method} ${url} → ${res.statusCode} ${res.body}`);
    return res.json();
  };
  await ok('POST', '/auth/v1/confirm', { password });
  const { secret } = await ok('POST', '/auth/v1/two-factor/setup');
  const { recovery_codes } = await ok('POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret }) });
  return { secret, recoveryCodes: recovery_codes };
}

/**
 * A staff person signed in as the operator's default policy lets them work: admin and finance
 * enrolled in two-factor (required of them by default) and signed in again with a recovery code;
 * `codes` holds the recovery codes left, for confirming risky actions. The session starts unconfirmed.
 */
export async function staffSession(
  service: Pick<RunningService, 'app' | 'ctx'>,
  email: string,
  role: 'support' | 'finance' | 'admin',
  password = 'correct horse battery',
): Promise<PersonSession & { id: string; email: string; codes: string[] }> {
  const user = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', { email, role, password });
  let session = await personSignIn(service.app, user.email, password);
  const me = (await asPerson(service.app, session, 'GET', '/auth/v1/me')).json() as { two_factor_required: boolean };
  let codes: string[] = [];
  if (me.two_factor_required) {
    codes = (await enrolTwoFactor(service.app, session, password)).recoveryCodes;
    session = await personSignIn(service.app, user.email, password, codes.shift());
    await service.ctx.db.query('UPDATE sessions SET confirmed_at = NULL WHERE user_id = $1', [user.id]);
  }
  return { ...session, id: user.id, email: user.email, codes };
}
