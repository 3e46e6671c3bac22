import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import {
  admin,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

/** A service with one merchant, one executor and one requisite, ready to take payments. */
async function serviceWithMerchant(env: Record<string, string>) {
  const service = await startTestService({ KASSIR_SHED: 'true', ...env });
  await setRate(service.app, 'RUB', 100);
  const merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  const requisite = await createRequisite(service.app, executor.id, { max_amount: null });
  return { service, merchant, executor, requisite };
}

let amountSeq = 0;
/**
 * A new PENDING payment (amounts differ, so one requisite serves them all). A create the service
 * sheds (503, its queue past the low limit on a machine busy with other work) is sent again, as a
 * merchant would after Retry-After; any other answer fails the test.
 */
async function pending(service: TestService, merchant: MerchantCredentials): Promise<{ id: string; amount: number; payment_url: string }> {
  const res = await until(
    async () => {
      const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1000 + amountSeq++ });
      if (res.status === 503) return undefined;
      if (res.status !== 200) throw new Error(`create → ${res.status} ${JSON.stringify(res.body)}`);
      return res;
    },
    20_000,
    50,
    'a PENDING payment created',
  );
  return res.body as { id: string; amount: number; payment_url: string };
}

function notify(service: TestService, executorToken: string, requisiteId: string, amount: number): Promise<LightMyRequestResponse> {
  return service.app.inject({
    method: 'POST',
    url: '/executor/v1/notifications',
    headers: { authorization: `Bearer ${executorToken}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ requisite_id: requisiteId, amount }),
  });
}

/** Holds this process's event loop for `ms`, as a start or a process out of CPU does. */
function busyFor(ms: number): void {
  const start = Date.now();
  while (Date.now() - start < ms) {
    // busy
  }
}

/** Holds the loop 150 ms of every turn until stopped, as a process out of CPU would see it. */
function loopRunningLate(): { stop(): void } {
  const hog = setInterval(() => busyFor(150), 0);
  return { stop: () => clearInterval(hog) };
}

/** Creates until one is refused (503), which it answers. */
function refusedCreate(service: TestService, merchant: MerchantCredentials, what: string): Promise<LightMyRequestResponse> {
  return until(
    async () => {
      const res = await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 6000 + amountSeq++ });
      return res.statusCode === 503 ? res : undefined;
    },
    20_000,
    0,
    what,
  );
}

/** The headers of a signed create sent over a socket (the service checks the signature against PUBLIC_BASE_URL). */
function signedHeaders(merchant: MerchantCredentials, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-identity': merchant.apiKey,
    'x-signature': signRequest(merchant.secretKey, 'POST', 'http://kassir.test/v1/payments', body),
  };
}

function expectShed(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.headers['retry-after']).toBe('5');
  expect(res.json()).toEqual({
    error: 'UNAVAILABLE',
    message: 'The service is overloaded and did not start this request; retry after 5 s',
    data: { retry_after: 5 },
  });
}

describe('shedding by the database queue: creates first, money on its way never', () => {
  // Creates are refused once a request would wait 20 ms for a database connection, other routes
  // past 3 s; the test makes that queue itself by holding every connection of the pool.
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({ KASSIR_SHED_LOW_DELAY_MS: '20', KASSIR_SHED_NORMAL_DELAY_MS: '3000' });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('refuses creates with 503 + Retry-After, then reads, /healthz and the operator API, while notifications, callbacks and the payment page are served', async () => {
    const { service, merchant, executor, requisite } = ctx;
    const db = service.ctx.db;
    const payment = await pending(service, merchant);
    const pagePath = new URL(payment.payment_url).pathname;

    const held: pg.PoolClient[] = [];
    for (let i = 0; i < service.config.dbPoolSize; i++) held.push(await db.connect());
    // Whatever was let in waits for the database (so it is not answered while the pool is held)
    // and is answered once it is released; a refusal is answered at once.
    const admitted: Promise<LightMyRequestResponse>[] = [];
    const refusedOnce = (send: () => Promise<LightMyRequestResponse>, what: string) =>
      until(
        async () => {
          const res = send();
          const answered = await Promise.race([res, new Promise<undefined>((resolve) => setTimeout(resolve, 500))]);
          if (answered) return answered;
          admitted.push(res);
          return undefined;
        },
        20_000,
        0,
        what,
      );
    try {
      // The queue's delay passes the creates' limit first.
      expectShed(
        await refusedOnce(
          () => signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 5000 + amountSeq++ }),
          'a create refused',
        ),
      );
      expectShed(await signed(service.app, merchant, 'POST', '/v1/payouts', { ext_id: uniqueExtId(), amount: 5000 }));
      expectShed(await signed(service.app, merchant, 'POST', '/v1/withdrawals', { terminal_id: merchant.terminalId, amount: 10, address: 'T' }));

      // The operator API, a merchant's read and /healthz are not refused at the creates' limit: they wait their turn.
      const waiting = db.waitingCount;
      admitted.push(admin(service.app, 'GET', `/payments/${payment.id}`));
      admitted.push(signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`));
      admitted.push(service.app.inject({ method: 'GET', url: '/healthz' }));
      await until(() => (db.waitingCount >= waiting + 3 ? true : undefined), 10_000, 5, 'three more requests waiting for the database');

      // Past the other routes' limit they are refused too…
      expectShed(await refusedOnce(() => admin(service.app, 'GET', `/payments/${payment.id}`), 'an operator read refused'));
      expectShed(await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`));
      expectShed(await service.app.inject({ method: 'GET', url: '/healthz' }));

      // …while what completes money already on its way is let in, to wait for the database.
      const before = db.waitingCount;
      const notification = notify(service, executor.token, requisite.id, payment.amount);
      const page = service.app.inject({ method: 'GET', url: `${pagePath}/status` });
      const callback = service.app.inject({
        method: 'POST',
        url: '/callbacks/providers/7d8e7c3a-0f0b-4b7e-9a55-0d4b9f1c2e11',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      await until(() => (db.waitingCount >= before + 3 ? true : undefined), 10_000, 5, 'notification, page and callback waiting for the database');

      for (const client of held.splice(0)) client.release();
      expect((await notification).json()).toMatchObject({ matched: true, payment_id: payment.id });
      const status = await page;
      expect(status.statusCode, status.body).toBe(200);
      expect(status.json()).toHaveProperty('state');
      // An unknown provider: looked up, not refused for load.
      expect((await callback).statusCode).toBe(404);
      for (const res of await Promise.all(admitted)) expect(res.statusCode, res.body).toBe(200);
    } finally {
      for (const client of held) client.release();
    }

    // The queue gone, creates are taken again.
    await until(
      async () => {
        const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 8000 + amountSeq++ });
        return res.status === 200 ? res : undefined;
      },
      10_000,
      50,
      'a create taken once the queue is gone',
    );
  });
});

describe("the database's queue refuses creates only while creates are late", () => {
  // Issue 38: creates waiting for a batch are not in the pool's queue, so a queue there refuses a
  // create only once a create in progress has waited past the creates' limit.
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({ KASSIR_SHED_LOW_DELAY_MS: '20', KASSIR_SHED_NORMAL_DELAY_MS: '600000' });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('with no create in progress a create is let in despite the queue; once it is late, the next is refused', async () => {
    const { service, merchant } = ctx;
    const db = service.ctx.db;
    const held: pg.PoolClient[] = [];
    for (let i = 0; i < service.config.dbPoolSize; i++) held.push(await db.connect());
    try {
      // The probe queues behind the held pool: its delay passes 20 ms within its half-second window.
      await new Promise((resolve) => setTimeout(resolve, 800));
      const waiting = db.waitingCount;
      const first = signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 9700 + amountSeq++ });
      // Let in: it waits for the database (a refusal would be answered at once).
      await until(() => (db.waitingCount > waiting ? true : undefined), 10_000, 5, 'the first create waiting for the database');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expectShed(await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 9700 + amountSeq++ }));
      for (const client of held.splice(0)) client.release();
      const res = await first;
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      for (const client of held) client.release();
    }
  });
});

describe('shedding by the number of creates in progress', () => {
  // Two creates at a time; no delay limit within reach.
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({ KASSIR_SHED_LOW_CONCURRENCY: '2', KASSIR_SHED_LOW_DELAY_MS: '600000', KASSIR_SHED_NORMAL_DELAY_MS: '600000' });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('a burst of creates beyond the limit is refused before any of it shows as a delay; reads are not counted', async () => {
    const { service, merchant } = ctx;
    const db = service.ctx.db;
    const held: pg.PoolClient[] = [];
    for (let i = 0; i < service.config.dbPoolSize; i++) held.push(await db.connect());
    try {
      const waiting = db.waitingCount;
      const first = [0, 1].map(() => signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 9000 + amountSeq++ }));
      await until(() => (db.waitingCount >= waiting + 2 ? true : undefined), 10_000, 5, 'two creates waiting for the database');
      expectShed(await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 9000 + amountSeq++ }));
      expectShed(await signed(service.app, merchant, 'POST', '/v1/payouts', { ext_id: uniqueExtId(), amount: 5000 }));
      const read = admin(service.app, 'GET', '/merchants');
      await until(() => (db.waitingCount >= waiting + 3 ? true : undefined), 10_000, 5, 'the read waiting for the database');
      for (const client of held.splice(0)) client.release();
      for (const res of await Promise.all([...first, read])) expect(res.statusCode, res.body).toBe(200);
    } finally {
      for (const client of held) client.release();
    }
    // Both answered, so both counted out: the next creates are taken.
    for (let i = 0; i < 3; i++) {
      const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 9500 + amountSeq++ });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  });
});

describe('a refusal is answered before anything else runs, and costs no log line', () => {
  // One create at a time, held in progress by a pool the test holds; no delay limit within reach.
  // Served over HTTPS, so that the refusal carries the header the onSend hooks it skips would add.
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({
      PUBLIC_BASE_URL: 'https://kassir.test',
      KASSIR_SHED_LOW_CONCURRENCY: '1',
      KASSIR_SHED_LOW_DELAY_MS: '600000',
      KASSIR_SHED_NORMAL_DELAY_MS: '600000',
    });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  const metric = async (name: string) => (await ctx.service.ctx.metrics.registry.getSingleMetricAsString(name)) ?? '';

  it('the spec body, Retry-After and the usual headers; neither authentication nor the body parser ran; counted as shed, not as an answered request', async () => {
    const { service, merchant } = ctx;
    const db = service.ctx.db;
    const held: pg.PoolClient[] = [];
    for (let i = 0; i < service.config.dbPoolSize; i++) held.push(await db.connect());
    try {
      const waiting = db.waitingCount;
      const first = signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 9100 + amountSeq++ }, 'https://kassir.test');
      await until(() => (db.waitingCount > waiting ? true : undefined), 10_000, 5, 'the first create waiting for the database');

      // Neither signed nor JSON: authentication would answer 401 AUTH_001, the parser 415.
      const refused = await service.app.inject({
        method: 'POST',
        url: '/v1/payments',
        headers: { 'content-type': 'text/plain', 'x-request-id': 'refusal-1' },
        payload: 'not json',
      });
      expectShed(refused);
      expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Number(refused.headers['content-length'])).toBe(Buffer.byteLength(refused.body));
      expect(refused.headers['x-request-id']).toBe('refusal-1');
      expect(refused.headers['x-content-type-options']).toBe('nosniff');
      expect(refused.headers['strict-transport-security']).toBe('max-age=31536000');
      // A small body is read and dropped, keeping the connection; a large one would be read for nothing.
      expect(refused.headers.connection).not.toBe('close');
      const large = await service.app.inject({
        method: 'POST',
        url: '/v1/payouts',
        headers: { 'content-type': 'application/json', 'content-length': String(200 * 1024) },
        payload: 'x'.repeat(200 * 1024),
      });
      expectShed(large);
      expect(large.headers.connection).toBe('close');

      for (const client of held.splice(0)) client.release();
      const res = await first;
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      for (const client of held) client.release();
    }
    expect(await metric('kassir_http_requests_shed_total')).toContain('kassir_http_requests_shed_total{priority="low"} 2');
    // The answered create is counted as usual; the refusals are not (the onResponse hook passed them over, and with them their log lines).
    const answered = await metric('kassir_http_requests_total');
    expect(answered).toMatch(/kassir_http_requests_total\{route="\/v1\/payments",method="POST",status="200"\} 1/);
    expect(answered).not.toContain('status="503"');
  });
});

describe('a create refused over a socket never reaches Fastify', () => {
  // As above, one create at a time and no delay limit within reach; this time over a socket, as
  // a merchant sends it (inject() hands a request to Fastify directly, past the server).
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({
      KASSIR_SHED_LOW_CONCURRENCY: '1',
      KASSIR_SHED_LOW_DELAY_MS: '600000',
      KASSIR_SHED_NORMAL_DELAY_MS: '600000',
    });
    await ctx.service.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('the spec answer, written before Fastify builds its request: no request logger is made for it; a create let in goes on to Fastify', async () => {
    const { service, merchant } = ctx;
    const address = service.app.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${address.port}`;
    // Fastify makes each request's logger as a child of the service's, bound to its id: whether it
    // did so for a request is whether Fastify handled it at all.
    const child = vi.spyOn(service.ctx.log, 'child');
    const requestLoggers = () => child.mock.calls.filter(([bindings]) => (bindings as { reqId?: unknown }).reqId !== undefined).length;
    const db = service.ctx.db;
    const held: pg.PoolClient[] = [];
    for (let i = 0; i < service.config.dbPoolSize; i++) held.push(await db.connect());
    try {
      const waiting = db.waitingCount;
      const payload = JSON.stringify({ ext_id: uniqueExtId(), amount: 9300 + amountSeq++ });
      const first = fetch(`${base}/v1/payments`, { method: 'POST', headers: signedHeaders(merchant, payload), body: payload });
      // Let in, and so counted, by the time Fastify made its logger (the refusal's hook ran right after, before 2026-11-28).
      await until(() => (requestLoggers() > 0 ? true : undefined), 10_000, 5, 'the first create handled by Fastify');
      await until(() => (db.waitingCount > waiting ? true : undefined), 10_000, 5, 'the first create waiting for the database');
      expect(requestLoggers()).toBe(1);

      const refused = await fetch(`${base}/v1/payments?from=test`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'x-request-id': 'refusal-socket-1' },
        body: 'not json',
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(refused.headers.get('x-request-id')).toBe('refusal-socket-1');
      expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await refused.json()).toEqual({
        error: 'UNAVAILABLE',
        message: 'The service is overloaded and did not start this request; retry after 5 s',
        data: { retry_after: 5 },
      });
      // Fastify never saw it (before 2026-11-28 it built the request, its logger and reply, then the hook refused it).
      expect(requestLoggers()).toBe(1);

      for (const client of held.splice(0)) client.release();
      const res = await first;
      expect(res.status, await res.clone().text()).toBe(200);
    } finally {
      for (const client of held) client.release();
      child.mockRestore();
    }
    expect((await service.ctx.metrics.registry.getSingleMetricAsString('kassir_http_requests_shed_total')) ?? '').toContain(
      'kassir_http_requests_shed_total{priority="low"} 1',
    );
    // Let in again now that the first is answered: the count let it out.
    const payload = JSON.stringify({ ext_id: uniqueExtId(), amount: 9300 + amountSeq++ });
    const again = await fetch(`${base}/v1/payments`, { method: 'POST', headers: signedHeaders(merchant, payload), body: payload });
    expect(again.status, await again.clone().text()).toBe(200);
  });
});

describe('shedding by the event loop delay', () => {
  // Creates are refused past a 50 ms mean delay of the event loop; other routes practically never.
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({ KASSIR_SHED_LOW_DELAY_MS: '50', KASSIR_SHED_NORMAL_DELAY_MS: '600000' });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('a process whose event loop runs late refuses creates and serves notifications; once it catches up, creates are taken again', async () => {
    const { service, merchant, executor, requisite } = ctx;
    const payment = await pending(service, merchant);
    const late = loopRunningLate();
    try {
      expectShed(await refusedCreate(service, merchant, 'a create refused for the loop delay'));
      const notification = await notify(service, executor.token, requisite.id, payment.amount);
      expect(notification.json()).toMatchObject({ matched: true, payment_id: payment.id });
    } finally {
      late.stop();
    }
    await until(
      async () => {
        const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 7000 + amountSeq++ });
        return res.status === 200 ? res : undefined;
      },
      20_000,
      100,
      'a create taken once the loop caught up',
    );
  });
});

describe('no shedding for the start itself', () => {
  // The start holds the loop (building the application, starting the worker); under-pressure
  // reports that stall for the sample after it. A CI run once answered 503 to the very first
  // request after "Kassir listening" for it.
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({ KASSIR_SHED_LOW_DELAY_MS: '50', KASSIR_SHED_NORMAL_DELAY_MS: '50' });
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('the first requests after a start that held the loop for a second are served, and a loop running late afterwards still sheds', async () => {
    const { service, merchant } = ctx;
    // As a slow start between ready and listen: the loop held for a second, then the port bound.
    busyFor(1000);
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    const created = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 8000 + amountSeq++ });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await service.app.inject({ method: 'GET', url: '/console' })).statusCode).toBe(200);

    // Past the start, the loop's delay counts again.
    const late = loopRunningLate();
    try {
      expectShed(await refusedCreate(service, merchant, 'a create refused for the loop delay once started'));
    } finally {
      late.stop();
    }
  });
});

describe('no shedding without pressure', () => {
  let ctx: Awaited<ReturnType<typeof serviceWithMerchant>>;
  beforeAll(async () => {
    ctx = await serviceWithMerchant({});
  });
  afterAll(async () => {
    await ctx?.service.close();
  });

  it('with the default limits, 40 creates and 20 notifications at once are all served', async () => {
    const { service, merchant, executor, requisite } = ctx;
    const payments = await Promise.all(Array.from({ length: 20 }, () => pending(service, merchant)));
    const results = await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 20_000 + i })),
      ...payments.map((p) => notify(service, executor.token, requisite.id, p.amount)),
    ]);
    expect(results.filter((res) => res.statusCode !== 200).map((res) => res.body)).toEqual([]);
    expect(results.map((res) => res.statusCode)).toEqual(results.map(() => 200));
  });
});
