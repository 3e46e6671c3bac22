import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import {
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

// Short limits, so that a client slower than them is visible within a test: the head within 1 s,
// nothing on the wire for 1.5 s closes the connection.
const HEADERS_MS = 1000;
const IDLE_MS = 1500;

let service: TestService;
let merchant: MerchantCredentials;
let port: number;

beforeAll(async () => {
  service = await startTestService({ KASSIR_HEADERS_TIMEOUT_MS: String(HEADERS_MS), KASSIR_IDLE_TIMEOUT_MS: String(IDLE_MS) }, { listen: true });
  port = (service.app.server.address() as { port: number }).port;
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  await createRequisite(service.app, executor.id);
});
afterAll(async () => {
  await service?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw connection that records what the server sends and when it closes. */
async function rawClient(): Promise<{ socket: Socket; received: () => string; closed: Promise<void>; isClosed: () => boolean }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  let isClosed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  // Writes after the server has closed fail; the test looks at `closed`, not at these.
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      isClosed = true;
      resolve();
    }),
  );
  return { socket, received: () => received, closed, isClosed: () => isClosed };
}

/** The error body of a raw HTTP answer. */
function bodyOf(raw: string): Record<string, unknown> {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('the server is set up with the configured limits', () => {
  it('head, idle, whole-request and keep-alive limits come from the configuration', () => {
    const server = service.app.server;
    expect(server.headersTimeout).toBe(HEADERS_MS);
    expect(server.timeout).toBe(IDLE_MS);
    // The defaults: an hour for a whole request (a 25 MB upload at 56 kbit/s), Fastify's 72 s keep-alive.
    expect(server.requestTimeout).toBe(3_600_000);
    expect(server.keepAliveTimeout).toBe(72_000);
  });
});

describe('slow clients', () => {
  it('a slowloris sending its headers a byte at a time is answered 408 REQUEST_TIMEOUT and closed, while other clients are served', async () => {
    const slow = await rawClient();
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: kassir.test\r\nX-Slow: ');
    // One byte every 100 ms for up to 30 s: always progressing, so only the limit on the whole
    // head can stop it; the head is never finished.
    const others: number[] = [];
    let dripped = 0;
    while (!slow.isClosed() && dripped < 300) {
      if (slow.socket.writable) slow.socket.write('a');
      dripped++;
      if (dripped % 3 === 0) others.push((await fetch(`http://127.0.0.1:${port}/healthz`)).status);
      await sleep(100);
    }
    expect(slow.isClosed()).toBe(true);
    expect(dripped).toBeLessThan(300);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(bodyOf(slow.received())).toMatchObject({ error: 'REQUEST_TIMEOUT' });
    // Served meanwhile, every one.
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((status) => status === 200)).toBe(true);
  });

  it('a connection that never sends a request is closed too', async () => {
    const silent = await rawClient();
    await silent.closed;
    expect(silent.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a body that stops arriving is cut when the connection has been idle too long; nothing is created', async () => {
    const extId = uniqueExtId('stalled');
    const body = JSON.stringify({ ext_id: extId, amount: 1234, currency: 'RUB', method: 'CARD' });
    const stalled = await rawClient();
    stalled.socket.write(
      `POST /v1/payments HTTP/1.1\r\nHost: kassir.test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
        `X-Identity: ${merchant.apiKey}\r\nX-Signature: ${signRequest(merchant.secretKey, 'POST', 'http://kassir.test/v1/payments', body)}\r\n\r\n` +
        body.slice(0, 20),
    );
    await stalled.closed;
    expect(stalled.received()).not.toMatch(/^HTTP\/1\.1 2/);
    const { rows } = await service.ctx.db.query('SELECT 1 FROM payments WHERE ext_id = $1', [extId]);
    expect(rows).toHaveLength(0);
  });

  it('an upload that keeps arriving slowly is not cut, however long it takes in all', async () => {
    const { body: created } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1500 });
    const path = `/v1/payments/${created.id}/confirm`;
    // A PNG of 96 KB sent in 48 pieces 100 ms apart: about 5 s in all, far past the head limit
    // (1 s) and the idle limit (1.5 s), with never a pause as long as the idle limit.
    const form = multipartBody({}, { field: 'receipt', name: 'receipt.png', content: Buffer.concat([TINY_PNG, randomBytes(96 * 1024 - TINY_PNG.length)]) });
    const started = Date.now();
    const answer = new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent: false,
        headers: {
          'content-type': form.contentType,
          'content-length': String(form.body.length),
          'x-identity': merchant.apiKey,
          'x-signature': signRequest(merchant.secretKey, 'POST', `http://kassir.test${path}`, form.body),
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, any> }));
      });
      req.on('error', reject);
      void (async () => {
        const piece = Math.ceil(form.body.length / 48);
        for (let offset = 0; offset < form.body.length; offset += piece) {
          req.write(form.body.subarray(offset, offset + piece));
          await sleep(100);
        }
        req.end();
      })();
    });
    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, status: 'PENDING' });
    // It did take longer than the idle limit, or the test would show nothing.
    expect(Date.now() - started).toBeGreaterThan(IDLE_MS);
    const { rows } = await service.ctx.db.query<{ size_bytes: number }>('SELECT size_bytes FROM receipts WHERE payment_id = $1', [created.id]);
    expect(rows.map((r) => Number(r.size_bytes))).toEqual([96 * 1024]);
  });
});
