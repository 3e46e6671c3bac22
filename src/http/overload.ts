import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError } from './errors.js';

/**
 * Which requests are served first when there is more work than the machine can carry (issue 15):
 * - `high` completes money already on its way — executors' notifications and payouts, provider
 *   callbacks, the payment page. Never refused here: refusing it removes no work (it comes back),
 *   it only holds up money and payers; and its volume follows the payments admitted earlier.
 * - `normal`, the default: merchant reads, confirms, the operator API, /healthz.
 * - `low` starts new money — payment, payout and withdrawal creates. Refused first: a merchant
 *   retries after Retry-After, and every create let in now is more work for every later request.
 */
export type Priority = 'low' | 'normal' | 'high';

/** How often under-pressure measures the event loop's delay; shedding reacts within about this. */
const SAMPLE_MS = 200;
/** While shedding, one log line per this period at most (a line per refusal is the request log's). */
const REPORT_MS = 1000;
/** Bodies up to this size are read and dropped after a refusal, keeping the connection; larger ones end it. */
const DRAIN_LIMIT = 64 * 1024;

/** Gives every route registered on `app` and its children `priority`, unless a route sets its own in `config`. */
export function routePriority(app: FastifyInstance, priority: Priority): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, priority: route.config?.priority ?? priority };
  });
}

/**
 * Load shedding by priority: before a request is read or authenticated, it is refused with 503
 * `UNAVAILABLE` and Retry-After when the pressure passes its priority's limits — low at the lower
 * limits, normal at the higher, high never. Pressure is the pool's queue (requests waiting for a
 * database connection: the database is what runs out first here, and every request queued there
 * adds to the wait of all behind it) and the event loop's mean delay (this process out of CPU),
 * measured by @fastify/under-pressure. Its own shedding has one set of limits for every route,
 * so the decision is made here from its measurements.
 */
export async function loadShedding(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { shedding } = ctx.config;
  if (!shedding.enabled) return;
  await app.register(underPressure, { sampleInterval: SAMPLE_MS });
  const retryAfter = String(shedding.retryAfterSeconds);
  const shed = { low: 0, normal: 0 };
  let reportedAt = 0;

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const priority = request.routeOptions.config?.priority ?? 'normal';
    if (priority === 'high') return done();
    const limits = shedding[priority];
    const dbWaiting = ctx.db.waitingCount;
    const loopDelayMs = loopDelay(app);
    if (dbWaiting <= limits.dbWaiting && loopDelayMs <= limits.loopDelayMs) return done();

    shed[priority]++;
    const now = Date.now();
    if (now - reportedAt >= REPORT_MS) {
      ctx.log.warn({ shed: { ...shed }, db_waiting: dbWaiting, event_loop_delay_ms: Math.round(loopDelayMs) }, 'overloaded: refusing requests');
      reportedAt = now;
      shed.low = 0;
      shed.normal = 0;
    }
    if (largeBodyPending(request)) reply.header('connection', 'close');
    const error = new ApiError(
      'UNAVAILABLE',
      `The service is overloaded and did not start this request; retry after ${retryAfter} s`,
      { retry_after: shedding.retryAfterSeconds },
    );
    reply.code(error.status).header('retry-after', retryAfter).send(error.body());
  });
}

/**
 * The event loop's mean delay over under-pressure's last sample. It reports Infinity when the
 * sample holds no measurement at all: the loop was held for the whole sample, which happens once
 * as the service starts (building the application). That delay is still measured, in the next
 * sample, so nothing is refused for it now.
 */
function loopDelay(app: FastifyInstance): number {
  const delay = app.memoryUsage().eventLoopDelay;
  return Number.isFinite(delay) ? delay : 0;
}

/**
 * Node reads and drops the unread body of an answered request so that the connection can carry
 * the next; for an upload of megabytes that is a waste of the very capacity that is short, so the
 * connection is closed instead.
 */
function largeBodyPending(request: FastifyRequest): boolean {
  if (request.raw.complete) return false;
  if (request.headers['transfer-encoding'] !== undefined) return true;
  return Number(request.headers['content-length'] ?? 0) > DRAIN_LIMIT;
}
