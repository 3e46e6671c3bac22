import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { constantTimeEqual } from '../lib/crypto.js';
import { type ServiceMetrics, UNMATCHED_ROUTE } from '../observability/metrics.js';
import { checkReadiness } from '../observability/readiness.js';
import { errorBody, statusOf } from './errors.js';

/**
 * An incoming `X-Request-Id` that is kept as the request's id: 1 to 128 of letters, digits and
 * `. _ : + = @ / -` — a UUID, a ULID, a proxy's hex id, a trace id. Anything else (too long, spaces,
 * quotes, control characters, two headers joined by a comma) is ignored and a UUID generated.
 */
const REQUEST_ID = /^[A-Za-z0-9._:+=@/-]{1,128}$/;

/**
 * The id of a request (Fastify's genReqId): the caller's `X-Request-Id` when well-formed, so that
 * a proxy's or a client's id follows the request into this service's log lines and error bodies;
 * a fresh UUID otherwise. The id only correlates: nothing is keyed or authorised by it.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Counts one answered request (onResponse): its route's pattern, never the URL, which may hold a token or a card number. */
export function observeRequest(metrics: ServiceMetrics, request: FastifyRequest, reply: FastifyReply): void {
  metrics.httpRequest(request.routeOptions.url ?? UNMATCHED_ROUTE, request.method, reply.statusCode, reply.elapsedTime / 1000);
}

/** Addresses of this host: a scrape from one of them, not through a proxy, needs no token while METRICS_TOKEN is unset. */
function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

/** Headers a reverse proxy adds: a request carrying one came through a proxy, however local its connection. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * Who may scrape /metrics, which shows business volumes (payments by terminal, webhook backlog):
 * with METRICS_TOKEN set, whoever sends `Authorization: Bearer <METRICS_TOKEN>`, from anywhere;
 * without it, only a direct connection from this host (a Prometheus or an agent beside the
 * service), never a request that came through a proxy, even one on this host.
 */
function checkScrapeAccess(ctx: AppContext, request: FastifyRequest): void {
  const token = ctx.config.metricsToken;
  if (token !== undefined) {
    const header = request.headers.authorization;
    if (header === undefined) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <METRICS_TOKEN>');
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match || !constantTimeEqual(match[1]!, token)) throw new DomainError('AUTH_002', 'Invalid metrics token');
    return;
  }
  const proxied = FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined);
  if (proxied || !isLoopback(request.socket.remoteAddress)) {
    throw new DomainError(
      'AUTH_003',
      'Without METRICS_TOKEN, /metrics answers only direct connections from this host; set METRICS_TOKEN to scrape from elsewhere',
    );
  }
}

/**
 * `GET /metrics` (Prometheus text format) and `GET /readyz`. Both are served under any load
 * (priority high): monitoring must see an overload, and a readiness probe refused for it would
 * take the instance out of rotation for a moment's queue. `/healthz` stays in app.ts, unchanged.
 */
export async function observabilityRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get('/metrics', { schema: { hide: true }, config: { priority: 'high' } }, async (request, reply) => {
    checkScrapeAccess(ctx, request);
    const text = await ctx.metrics.render(ctx.db);
    return reply.header('content-type', ctx.metrics.contentType).header('cache-control', 'no-store').send(text);
  });

  app.get('/readyz', { schema: { hide: true }, config: { priority: 'high' } }, async (request, reply) => {
    const worker = ctx.metrics.workerRunningNow();
    const readiness = await checkReadiness(ctx.db, { configured: ctx.config.runWorker, running: worker });
    reply.header('cache-control', 'no-store');
    if (readiness.ready) return reply.send({ status: 'ready', checks: readiness.checks });
    const failing = Object.entries(readiness.checks)
      .filter(([, value]) => value !== 'ok' && value !== 'disabled')
      .map(([name, value]) => `${name} ${value}`)
      .join(', ');
    request.log.warn({ checks: readiness.checks }, 'not ready');
    // The spec's error body, with the checks in data; no Retry-After: a probe asks again on its own schedule.
    const error = new DomainError('UNAVAILABLE', `Not ready: ${failing}`, { status: 'not_ready', checks: readiness.checks });
    return reply.code(statusOf(error)).send(errorBody(error));
  });
}
