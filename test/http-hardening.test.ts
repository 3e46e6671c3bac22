/**
 * HTTP hardening (issue 30, item 8): answers that carry a secret are never stored (`Cache-Control:
 * no-store`), no JSON or CSV answer is sniffed as another type (`X-Content-Type-Options:
 * nosniff`), and a body refused as too large is answered 413 to a client that is still sending it,
 * as nginx's lingering close does, instead of a reset. (test/answer-checks.ts checks the first two
 * on every answer of the suite; this file names each secret-bearing route.)
 */
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_IDLE_MS, LINGER_MS } from '../src/http/lingering-close.js';
import { SECRET_FIELDS } from './answer-checks.js';
import { ADMIN_TOKEN, admin, adminOk, createExecutor, createMerchant, executorCall, startTestService, type TestService } from './helpers.js';

let service: TestService;
let app: FastifyInstance;

beforeAll(async () => {
  service = await startTestService({}, { listen: true });
  app = service.app;
});
afterAll(async () => service?.close());

/** A person's session: its cookie and CSRF token, from a sign-in answer. */
function sessionOf(login: LightMyRequestResponse): { cookie: string; csrf: string } {
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  return { cookie, csrf: login.json().csrf_token };
}

async function signIn(email: string, password: string): Promise<LightMyRequestResponse> {
  const login = await app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email, password } });
  expect(login.statusCode, login.body).toBe(200);
  return login;
}

function asPerson(session: { cookie: string; csrf: string }, method: string, url: string, payload?: unknown) {
  return app.inject({
    method: method as 'POST',
    url,
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

/** Whether a JSON answer holds a secret field with a value. */
function holdsSecret(res: LightMyRequestResponse): boolean {
  return JSON.stringify(res.json(), (key, value) => (SECRET_FIELDS.has(key) && value ? '\u0000' : value)).includes('\\u0000');
}

describe('answers that carry a secret', () => {
  it('every route that answers a key, a token, a password, a two-factor secret or a CSRF token says Cache-Control: no-store', async () => {
    const answers: [string, LightMyRequestResponse][] = [];
    const note = (name: string, res: LightMyRequestResponse) => {
      expect(res.statusCode, `${name}: ${res.body}`).toBeLessThan(300);
      answers.push([name, res]);
      return res.json();
    };
    // The operator's: merchants, terminals, executors, phones, sign-ins.
    const merchant = note('POST /admin/v1/merchants', await admin(app, 'POST', '/merchants', { name: 'Secret shop' }));
    note('POST /admin/v1/merchants/:id/secret-key/rotate', await admin(app, 'POST', `/merchants/${merchant.id}/secret-key/rotate`, {}));
    const terminal = note(
      'POST /admin/v1/merchants/:id/terminals',
      await admin(app, 'POST', `/merchants/${merchant.id}/terminals`, { name: 'Main', currency: 'RUB', payin_rate: 5, payout_rate: 2 }),
    );
    note('POST /admin/v1/terminals/:id/api-key/rotate', await admin(app, 'POST', `/terminals/${terminal.id}/api-key/rotate`, {}));
    const executor = note('POST /admin/v1/executors', await admin(app, 'POST', '/executors', { name: 'Trader' }));
    note('POST /admin/v1/executors/:id/token/rotate', await admin(app, 'POST', `/executors/${executor.id}/token/rotate`));
    note('POST /admin/v1/executors/:id/devices', await admin(app, 'POST', `/executors/${executor.id}/devices`, { name: 'Pixel' }));
    const staff = note('POST /admin/v1/users', await admin(app, 'POST', '/users', { email: 'finance@secret.test', role: 'finance' }));
    note('POST /admin/v1/users/:id/password', await admin(app, 'POST', `/users/${staff.id}/password`));
    const trader = await createExecutor(app);
    note('POST /admin/v1/executors/:id/login', await admin(app, 'POST', `/executors/${trader.id}/login`, { email: 'trader@secret.test' }));
    const shop = await createMerchant(app);
    note('POST /admin/v1/merchants/:id/users', await admin(app, 'POST', `/merchants/${shop.merchantId}/users`, { email: 'shop@secret.test' }));
    // Sign-ins with passwords of their own, for the person's routes below (a generated one may have to be changed first).
    const password = 'correct horse battery';
    await adminOk(app, 'POST', `/executors/${(await createExecutor(app)).id}/login`, { email: 'person@secret.test', password });
    await adminOk(app, 'POST', `/merchants/${shop.merchantId}/users`, { email: 'owner@secret.test', password });
    // The executor's own phone.
    note('POST /executor/v1/devices', await executorCall(app, trader.token, 'POST', '/devices', { name: 'Galaxy' }));

    // A person: signing in, who is signed in, enrolling two-factor.
    const login = await signIn('person@secret.test', password);
    note('POST /auth/v1/login', login);
    const session = sessionOf(login);
    note('GET /auth/v1/me', await asPerson(session, 'GET', '/auth/v1/me'));
    await asPerson(session, 'POST', '/auth/v1/confirm', { password });
    const setup = note('POST /auth/v1/two-factor/setup', await asPerson(session, 'POST', '/auth/v1/two-factor/setup', {}));
    note('POST /auth/v1/two-factor/enable', await asPerson(session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) }));

    // The merchant's people rotate their own keys (two-factor required).
    const shopSession = sessionOf(await signIn('owner@secret.test', password));
    await asPerson(shopSession, 'POST', '/auth/v1/confirm', { password });
    const shopSetup = (await asPerson(shopSession, 'POST', '/auth/v1/two-factor/setup', {})).json();
    await asPerson(shopSession, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: shopSetup.secret }) });
    note('POST /merchant/v1/terminals/:id/api-key/rotate', await asPerson(shopSession, 'POST', `/merchant/v1/terminals/${shop.terminalId}/api-key/rotate`, {}));
    note('POST /merchant/v1/secret-key/rotate', await asPerson(shopSession, 'POST', '/merchant/v1/secret-key/rotate', {}));

    for (const [name, res] of answers) {
      expect(holdsSecret(res), `${name} answers a secret`).toBe(true);
      expect(res.headers['cache-control'], name).toBe('no-store');
    }
    expect(answers.length).toBe(18);
  });

  it('answers without a secret may be kept as before: no no-store on a list', async () => {
    const res = await admin(app, 'GET', '/merchants');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBeUndefined();
  });
});

describe('content types are never sniffed', () => {
  it('JSON answers, error answers and CSV exports say X-Content-Type-Options: nosniff', async () => {
    const json = await admin(app, 'GET', '/merchants');
    const error = await admin(app, 'GET', '/merchants/00000000-0000-4000-8000-000000000000');
    const missing = await app.inject({ method: 'GET', url: '/no/such/route' });
    const csv = await app.inject({ method: 'GET', url: '/admin/v1/payments?format=csv', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    for (const res of [json, error, missing, csv]) expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect([error.statusCode, missing.statusCode]).toEqual([404, 404]);
  });
});

/**
 * Sends a POST with a body of `size` bytes in 1 MB chunks (respecting backpressure, as a client
 * uploading a file does), and keeps sending all of it whatever comes back, reading the answer as
 * it comes (a client that closes only when done); resolves with the answer read until the
 * connection closed, or with the error the client saw (EPIPE, ECONNRESET).
 */
function streamBody(path: string, size: number, headers: string[], chunked = false) {
  const { port } = app.server.address() as AddressInfo;
  return new Promise<{ answer: string; error?: string; sent: number }>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let answer = '';
    let sent = 0;
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => (answer += text));
    socket.on('end', () => {});
    socket.on('error', (err: NodeJS.ErrnoException) => resolve({ answer, error: `${err.code} ${err.message}`, sent }));
    socket.on('close', () => resolve({ answer, sent }));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: kassir.test\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`);
    const write = () => {
      while (sent < size) {
        sent += chunk.length;
        if (chunked) socket.write(`${chunk.length.toString(16)}\r\n`);
        const more = socket.write(chunk);
        if (chunked && !socket.write('\r\n')) return void socket.once('drain', write);
        if (!more) return void socket.once('drain', write);
      }
      if (chunked) socket.end('0\r\n\r\n');
      else socket.end();
    };
    write();
  });
}

/** The status and JSON body of a raw HTTP answer. */
function parseAnswer(answer: string): { status: number; headers: string; body: unknown } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: body ? JSON.parse(body) : undefined };
}

describe('a body too large for the route', () => {
  const HUNDRED_MB = 100 * 1024 * 1024;

  it('a 100 MB body announced by Content-Length gets its 413 every time, not a reset (10 runs)', async () => {
    for (let run = 0; run < 10; run++) {
      const { answer, error, sent } = await streamBody('/admin/v1/merchants', HUNDRED_MB, [
        `Authorization: Bearer ${ADMIN_TOKEN}`,
        'Content-Type: application/json',
        `Content-Length: ${HUNDRED_MB}`,
      ]);
      expect(error, `run ${run}`).toBeUndefined();
      const { status, headers, body } = parseAnswer(answer);
      expect(status, `run ${run}`).toBe(413);
      expect(headers).toContain('connection: close');
      expect(body).toMatchObject({ error: 'PAYLOAD_TOO_LARGE' });
      // The whole body was taken (and discarded) before the connection closed.
      expect(sent).toBe(HUNDRED_MB);
    }
  });

  it('a 100 MB chunked body (no Content-Length), refused part-way, gets its 413 too', async () => {
    for (let run = 0; run < 3; run++) {
      const { answer, error } = await streamBody(
        '/admin/v1/merchants',
        HUNDRED_MB,
        [`Authorization: Bearer ${ADMIN_TOKEN}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked'],
        true,
      );
      expect(error, `run ${run}`).toBeUndefined();
      expect(parseAnswer(answer)).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    }
  });

  it('an upload over its limit gets its 413 too', async () => {
    const merchant = await createMerchant(app);
    const { answer, error } = await streamBody(
      '/v1/payments/00000000-0000-4000-8000-000000000000/receipt',
      HUNDRED_MB,
      [`X-Identity: ${merchant.apiKey}`, 'X-Signature: x', 'Content-Type: multipart/form-data; boundary=b', 'Transfer-Encoding: chunked'],
      true,
    );
    expect(error).toBeUndefined();
    expect(parseAnswer(answer).status).toBe(413);
  });

  it('a client that stops sending and keeps the connection open is closed after a few seconds, not kept forever', async () => {
    const { port } = app.server.address() as AddressInfo;
    // The service's side of the connection, to see when it lets go of it.
    const accepted = new Promise<Socket>((resolve) => app.server.once('connection', resolve));
    const client = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    client.on('error', () => {});
    let answer = '';
    client.on('data', (text) => (answer += text));
    const ended = new Promise((resolve) => client.on('end', resolve));
    client.write(
      `POST /admin/v1/merchants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${HUNDRED_MB}\r\n\r\n{`,
    );
    const server = await accepted;
    const started = Date.now();
    await Promise.all([ended, new Promise((resolve) => server.on('close', resolve))]);
    // The answer, then end of stream; the connection closed after the lingering's idle limit (5 s), well before its total limit (30 s).
    expect(parseAnswer(answer).status).toBe(413);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LINGER_IDLE_MS - 200);
    expect(Date.now() - started).toBeLessThan(LINGER_MS);
    client.destroy();
    // The service still answers.
    expect((await adminOk(app, 'GET', '/merchants')).merchants).toBeDefined();
  });
});
