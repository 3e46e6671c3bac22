import { createServer, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/db/embedded.js';
import { createPool, type Db, isDatabaseUnavailable } from '../src/db/pool.js';
import { DomainError } from '../src/errors.js';
import { buildApp } from '../src/http/app.js';
import { ADMIN_TOKEN, createExecutor, createMerchant, type MerchantCredentials, signed, startTestService, type TestService } from './helpers.js';

// Issue 15: while the database cannot be reached, every API answers 503 UNAVAILABLE with
// Retry-After (it answered 500 SYS_001), promptly — also when the database accepts connections but
// never answers (the pool waited for ever: no connection timeout). The fault suite
// (npm run test:faults) shows the same against a real database stopped under load.

let service: TestService;
let merchant: MerchantCredentials;
let executorToken: string;
const opened: { app: FastifyInstance; db: Db }[] = [];
let silent: Server | undefined;
const sockets: Socket[] = [];

beforeAll(async () => {
  service = await startTestService();
  merchant = await createMerchant(service.app);
  executorToken = (await createExecutor(service.app)).token;
});

afterAll(async () => {
  for (const { app, db } of opened) {
    await app.close();
    await db.end().catch(() => undefined);
  }
  for (const socket of sockets) socket.destroy();
  silent?.close();
  await service?.close();
});

/** The service's application on another pool: one whose database is at `url`. */
async function appWithDatabaseAt(url: string): Promise<FastifyInstance> {
  const db = createPool(url, 2);
  const app = await buildApp({ ...service.ctx, db });
  opened.push({ app, db });
  return app;
}

function expectUnavailable(res: { statusCode: number; headers: Record<string, unknown>; json(): any; body: string }): void {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.json()).toEqual({ error: 'UNAVAILABLE', message: expect.stringMatching(/cannot reach its database.*retry/) });
  expect(res.headers['retry-after']).toBe('2');
  expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|at \//);
}

describe('the database cannot be reached', () => {
  it('a refused connection: 503 UNAVAILABLE with Retry-After on /healthz and on the merchant, executor and operator APIs', async () => {
    const app = await appWithDatabaseAt(`postgres://nobody@127.0.0.1:${await freePort()}/none`);
    expectUnavailable(await app.inject({ method: 'GET', url: '/healthz' }));
    expectUnavailable(await signed(app, merchant, 'GET', '/v1/balance'));
    expectUnavailable(await signed(app, merchant, 'POST', '/v1/payments', { ext_id: 'down-1', amount: 1500, method: 'CARD' }));
    expectUnavailable(await app.inject({ method: 'GET', url: '/executor/v1/requisites', headers: { authorization: `Bearer ${executorToken}` } }));
    expectUnavailable(await app.inject({ method: 'GET', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
  });

  it('a database that takes the connection and never answers: the wait for a connection ends (5 s) with 503', async () => {
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const app = await appWithDatabaseAt(`postgres://nobody@127.0.0.1:${(silent.address() as { port: number }).port}/none`);
    expectUnavailable(await app.inject({ method: 'GET', url: '/healthz' }));
    expect(sockets.length).toBeGreaterThan(0);
  });

  it('the service on its own database is unaffected', async () => {
    expect((await service.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('isDatabaseUnavailable', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it.each([
    ['a refused connection', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', coded('ECONNRESET')],
    ['every address refused (AggregateError)', new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], '')],
    ['an administrator shutdown (57P01)', coded('57P01', 'terminating connection due to administrator command')],
    ['a crash shutdown (57P02)', coded('57P02')],
    ['the server starting or stopping (57P03)', coded('57P03', 'the database system is shutting down')],
    ['a connection failure (08006)', coded('08006')],
    ['too many connections (53300)', coded('53300')],
    ['a connection cut', new Error('Connection terminated unexpectedly')],
    ['the pool’s wait ending', new Error('timeout exceeded when trying to connect')],
    ['a connection attempt timing out', new Error('Connection terminated due to connection timeout')],
    ['a client whose connection failed', new Error('Client has encountered a connection error and is not queryable')],
  ])('is true for %s', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', coded('23505')],
    ['a cancelled statement', coded('57014')],
    ['a syntax error', coded('42601')],
    ['a domain error', new DomainError('PAY_004')],
    ['any other error', new Error('boom')],
    ['not an error', 'ECONNREFUSED'],
  ])('is false for %s', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
