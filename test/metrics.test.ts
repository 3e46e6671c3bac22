import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../src/context.js';
import { freePort } from '../src/db/embedded.js';
import { createPool, type Db } from '../src/db/pool.js';
import { buildApp } from '../src/http/app.js';
import type { RunningService } from '../src/instance.js';
import { createLogger } from '../src/lib/logger.js';
import {
  ADMIN_TOKEN,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  notifyTransfer,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

// Issue 20, item 4: GET /metrics (Prometheus text, one registry per service instance), GET /readyz,
// and request ids on every request's log lines.

/** One sample of the exposition text: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses Prometheus' text exposition format (version 0.0.4) line by line: comments (# HELP, # TYPE)
 * skipped, each sample read as a metric name, an optional brace-enclosed label set whose values are
 * quoted with \\, \" and \n escapes, a value (NaN and ±Inf included, in any case) and an optional timestamp.
 * Anything else fails the test.
 */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name) throw new Error(`not a sample line: ${line}`);
    let at = name.length;
    const labels: Record<string, string> = {};
    if (line[at] === '{') {
      at++;
      while (line[at] !== '}') {
        const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(at))?.[0];
        if (!labelName || line.slice(at + labelName.length, at + labelName.length + 2) !== '="') throw new Error(`bad label at ${at}: ${line}`);
        at += labelName.length + 2;
        let value = '';
        for (;;) {
          const char = line[at];
          if (char === undefined) throw new Error(`unterminated label value: ${line}`);
          at++;
          if (char === '"') break;
          if (char === '\\') {
            const escaped = line[at++];
            value += escaped === 'n' ? '\n' : escaped;
          } else {
            value += char;
          }
        }
        labels[labelName] = value;
        if (line[at] === ',') at++;
        else if (line[at] !== '}') throw new Error(`expected , or } at ${at}: ${line}`);
      }
      at++;
    }
    const rest = line.slice(at).trim().split(/\s+/);
    if (rest.length < 1 || rest.length > 2) throw new Error(`bad value: ${line}`);
    // Go's ParseFloat, which Prometheus reads values with, takes NaN and Inf in any case (prom-client writes "Nan").
    const raw = rest[0]!.toLowerCase();
    const value = raw === 'nan' ? Number.NaN : /^[+-]?inf$/.test(raw) ? (raw.startsWith('-') ? -1 : 1) * Number.POSITIVE_INFINITY : Number(raw);
    if (Number.isNaN(value) && raw !== 'nan') throw new Error(`bad value: ${line}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none: a counter not yet moved). */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

function has(samples: Sample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

async function scrape(app: FastifyInstance): Promise<Sample[]> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.body);
}

let service: TestService;
let merchant: MerchantCredentials;
let executorToken: string;
let requisiteId: string;
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
const opened: { app: FastifyInstance; db?: Db }[] = [];

beforeAll(async () => {
  service = await startTestService({ KASSIR_EXPIRY_SWEEP_SECONDS: '1' }, { worker: true });
  await setRate(service.app, 'RUB', 90);
  merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  executorToken = executor.token;
  requisiteId = (await createRequisite(service.app, executor.id)).id;
  receiver = await webhookReceiver();
});

afterAll(async () => {
  for (const { app, db } of opened) {
    await app.close();
    await db?.end().catch(() => undefined);
  }
  receiver?.server.close();
  await service?.close();
});

/** The service's application again, on the same context but for what `changes` replaces. */
async function appWith(changes: Partial<AppContext>, db?: Db): Promise<FastifyInstance> {
  const app = await buildApp({ ...service.ctx, ...changes, ...(db ? { db } : {}) });
  opened.push({ app, db });
  return app;
}

describe('GET /metrics', () => {
  it('counts exactly the traffic it served: requests by route pattern, payments created, completed, cancelled and expired, webhooks', async () => {
    const terminal = merchant.terminalId;
    const before = await scrape(service.app);

    // Three creates: one completed by the executor's notification (its webhook delivered), one
    // cancelled by the operator, one expired by the sweep.
    const paid = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1500, method: 'CARD', notify_url: receiver.url });
    const cancelled = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1600, method: 'CARD' });
    const expired = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1700, method: 'CARD' });
    for (const created of [paid, cancelled, expired]) expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(await notifyTransfer(service.app, executorToken, requisiteId, 1500)).toMatchObject({ matched: true, payment_id: paid.body.id });
    await adminOk(service.app, 'POST', `/payments/${cancelled.body.id}/cancel`);
    await service.ctx.db.query(`UPDATE payments SET valid_until = now() - interval '1 second' WHERE id = $1`, [expired.body.id]);
    await until(async () => ((await signed(service.app, merchant, 'GET', `/v1/payments/${expired.body.id}`)).json().status === 'CANCELLED' ? true : undefined));
    await until(() => (receiver.received.length >= 1 ? true : undefined));
    // A route that does not exist, its URL holding a card number: the label is never the URL.
    const missing = await app404();
    expect(missing.statusCode).toBe(404);
    // The delivery is counted once its outcome is recorded, a moment after the receiver has it.
    const after = await until(async () => {
      const samples = await scrape(service.app);
      return total(samples, 'kassir_webhook_deliveries_total', { outcome: 'delivered' }) >
        total(before, 'kassir_webhook_deliveries_total', { outcome: 'delivered' })
        ? samples
        : undefined;
    });

    const delta = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(delta('kassir_payments_created_total', { method: 'CARD', terminal })).toBe(3);
    expect(delta('kassir_payments_completed_total', { method: 'CARD', terminal, via: 'transfer' })).toBe(1);
    expect(delta('kassir_payments_completed_total', { via: 'dispute' })).toBe(0);
    expect(delta('kassir_payments_cancelled_total', { method: 'CARD', terminal, reason: 'manual' })).toBe(1);
    expect(delta('kassir_payments_cancelled_total', { method: 'CARD', terminal, reason: 'expired' })).toBe(1);
    expect(delta('kassir_payments_cancelled_total')).toBe(2);
    expect(delta('kassir_payment_completion_seconds_count', { method: 'CARD' })).toBe(1);
    expect(delta('kassir_webhook_deliveries_total', { outcome: 'delivered' })).toBe(receiver.received.length);
    expect(delta('kassir_webhook_deliveries_total', { outcome: 'retrying' })).toBe(0);
    expect(delta('kassir_webhook_delivery_lag_seconds_count')).toBe(receiver.received.length);

    expect(delta('kassir_http_requests_total', { route: '/v1/payments', method: 'POST', status: '200' })).toBe(3);
    expect(delta('kassir_http_requests_total', { route: '/v1/payments', method: 'POST' })).toBe(3);
    expect(delta('kassir_http_request_duration_seconds_count', { route: '/v1/payments', method: 'POST' })).toBe(3);
    expect(delta('kassir_http_requests_total', { route: '/executor/v1/notifications', method: 'POST', status: '200' })).toBe(1);
    expect(delta('kassir_http_requests_total', { route: '/admin/v1/payments/:id/cancel', method: 'POST', status: '200' })).toBe(1);
    expect(delta('kassir_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    // Every scrape but the last is counted by the next one.
    expect(delta('kassir_http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
    // Neither the card number of the 404's URL nor a payment id becomes a label.
    for (const sample of after) {
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toContain('4111111111111111');
        expect(value).not.toContain(String(paid.body.id));
      }
    }
  });

  it('shows the process, the pool, the job queue and the webhook backlog, read at the scrape', async () => {
    const samples = await scrape(service.app);
    expect(has(samples, 'process_cpu_user_seconds_total')).toBe(true);
    expect(has(samples, 'nodejs_eventloop_lag_seconds')).toBe(true);
    const max = total(samples, 'kassir_db_pool_connections', { state: 'max' });
    expect(max).toBe(service.config.dbPoolSize);
    expect(total(samples, 'kassir_db_pool_connections', { state: 'total' })).toBeLessThanOrEqual(max);
    expect(has(samples, 'kassir_db_pool_connections', { state: 'idle' })).toBe(true);
    expect(has(samples, 'kassir_db_pool_connections', { state: 'waiting' })).toBe(true);
    expect(total(samples, 'kassir_scrape_database_up')).toBe(1);
    expect(total(samples, 'kassir_worker_running')).toBe(1);
    // The expiry sweep reschedules itself: it is always in the queue, waiting or running.
    expect(has(samples, 'kassir_jobs', { task: 'payments_expire_due' })).toBe(true);
    expect(has(samples, 'kassir_jobs_oldest_ready_age_seconds')).toBe(true);
    expect(has(samples, 'kassir_webhook_events_pending')).toBe(true);
    expect(has(samples, 'kassir_webhook_oldest_pending_age_seconds')).toBe(true);
  });

  it('counts a job added to the queue, and the age of the oldest one waiting', async () => {
    const before = await scrape(service.app);
    // A task no worker knows: it stays ready, due since a minute ago.
    await service.ctx.db.query(
      `SELECT graphile_worker.add_job('metrics_test_task', '{}'::json, run_at => now() - interval '60 seconds', job_key => 'metrics-test')`,
    );
    const after = await scrape(service.app);
    expect(total(before, 'kassir_jobs', { task: 'metrics_test_task' })).toBe(0);
    expect(total(after, 'kassir_jobs', { task: 'metrics_test_task', state: 'ready' })).toBe(1);
    expect(total(after, 'kassir_jobs_oldest_ready_age_seconds')).toBeGreaterThanOrEqual(59);
    await service.ctx.db.query(`SELECT graphile_worker.remove_job('metrics-test')`);
  });

  it('reports the last ledger check, which the scrape only reads back', async () => {
    const before = await scrape(service.app);
    expect(total(before, 'kassir_ledger_check_last_run_timestamp_seconds')).toBe(0);
    expect(has(before, 'kassir_ledger_check_ok')).toBe(false);
    const started = Date.now() / 1000;
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
    const after = await scrape(service.app);
    expect(total(after, 'kassir_ledger_check_ok')).toBe(1);
    expect(total(after, 'kassir_ledger_check_problems')).toBe(0);
    expect(total(after, 'kassir_ledger_check_last_run_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(started) - 1);
    expect(has(after, 'kassir_ledger_check_duration_seconds')).toBe(true);
  });

  it('keeps each service instance in its own registry', async () => {
    const other = await service.startAnother({ KASSIR_WORKER: 'false' });
    const before = await scrape(other.app);
    const created = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1800, method: 'CARD' });
    expect(created.status).toBe(200);
    const after = await scrape(other.app);
    expect(total(after, 'kassir_payments_created_total') - total(before, 'kassir_payments_created_total')).toBe(0);
    // No worker on that instance: no worker gauge, and readiness says so.
    expect(has(after, 'kassir_worker_running')).toBe(false);
    await readyzWithoutWorker(other);
  });

  it('is served to a direct local scraper without METRICS_TOKEN, never to one through a proxy or from elsewhere', async () => {
    const proxied = await service.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(proxied.statusCode).toBe(403);
    expect(proxied.json()).toEqual({ error: 'AUTH_003', message: expect.stringContaining('METRICS_TOKEN') });
    const remote = await service.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.7' });
    expect(remote.statusCode).toBe(403);
  });

  it('with METRICS_TOKEN, asks everyone for it as a bearer token', async () => {
    const app = await appWith({ config: { ...service.config, metricsToken: 'scrape-secret' } });
    const none = await app.inject({ method: 'GET', url: '/metrics' });
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toBe('AUTH_001');
    const wrong = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('AUTH_002');
    const admin = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(admin.statusCode).toBe(401);
    const right = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.7', headers: { authorization: 'Bearer scrape-secret' } });
    expect(right.statusCode).toBe(200);
    expect(parseExposition(right.body).length).toBeGreaterThan(0);
  });
});

/** A GET on no route, with a card number in its path. */
function app404() {
  return service.app.inject({ method: 'GET', url: '/v1/no-such-route/4111111111111111' });
}

async function readyzWithoutWorker(other: RunningService): Promise<void> {
  const res = await other.app.inject({ method: 'GET', url: '/readyz' });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', jobs: 'disabled' } });
}

describe('GET /readyz', () => {
  it('is ready when the database answers and the job worker runs', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', jobs: 'ok' } });
  });

  it('answers 503 with the failing check when the database cannot be reached; /healthz is unchanged', async () => {
    const db = createPool(`postgres://nobody@127.0.0.1:${await freePort()}/none`, 2);
    const app = await appWith({}, db);
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      error: 'UNAVAILABLE',
      message: expect.stringContaining('database unavailable'),
      data: { status: 'not_ready', checks: { database: 'unavailable', jobs: 'unknown' } },
    });
    // /metrics still answers, without the database's figures.
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    const samples = parseExposition(metrics.body);
    expect(total(samples, 'kassir_scrape_database_up')).toBe(0);
    // Left out rather than shown as 0 ("no backlog") while unknown.
    expect(has(samples, 'kassir_jobs')).toBe(false);
    expect(has(samples, 'kassir_webhook_events_pending')).toBe(false);
    expect(has(samples, 'kassir_jobs_oldest_ready_age_seconds')).toBe(false);
    expect(has(samples, 'process_cpu_user_seconds_total')).toBe(true);
    // The liveness check keeps its contract.
    const health = await service.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
  });
});

describe('request ids', () => {
  it('keeps a well-formed X-Request-Id and replaces anything else with a UUID', async () => {
    const kept = await service.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'edge-7f3a:01HZX.42' } });
    expect(kept.headers['x-request-id']).toBe('edge-7f3a:01HZX.42');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const bad of ['a'.repeat(129), 'two words', 'quote"d', '<script>', '']) {
      const res = await service.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(uuid);
    }
    expect((await service.app.inject({ method: 'GET', url: '/healthz' })).headers['x-request-id']).toMatch(uuid);
  });

  it('is on every request line and every error line of the log', async () => {
    const lines: Record<string, any>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    const log = createLogger('info', sink);
    const app = await appWith({ log });
    const down = await appWith({ log }, createPool(`postgres://nobody@127.0.0.1:${await freePort()}/none`, 2));
    const answers = [
      await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'from-the-proxy-1' } }),
      await app.inject({ method: 'GET', url: '/v1/nothing-here' }),
      await app.inject({ method: 'GET', url: '/admin/v1/merchants', headers: { authorization: 'Bearer wrong' } }),
      await signed(app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 'lots' }),
      // A 503 whose cause is logged as an error line.
      await down.inject({ method: 'GET', url: '/healthz' }),
    ];
    expect(answers.map((res) => res.statusCode)).toEqual([200, 404, 401, 400, 503]);
    const ids = answers.map((res) => String(res.headers['x-request-id']));
    expect(ids[0]).toBe('from-the-proxy-1');
    // One request line per answer, each with its own request id.
    const requestLines = lines.filter((line) => line.msg === 'request');
    expect(requestLines.map((line) => line.reqId)).toEqual(ids);
    // Every warning or error written while serving them carries the id of its request.
    const problems = lines.filter((line) => line.level >= 40);
    expect(problems.length).toBeGreaterThan(0);
    for (const line of problems) expect(ids).toContain(line.reqId);
    expect(problems.find((line) => /database cannot be reached/.test(line.msg))?.reqId).toBe(ids[4]);
  });
});
