import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { CREATE_BATCHES_IN_FLIGHT } from '../config.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { ADAPTIVE_LIMIT_DEFAULTS, AdaptiveLimit } from './adaptive-limit.js';
import { errorBody, statusOf } from './errors.js';
import { requestIdOf } from './observability.js';

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

/** How often under-pressure measures the event loop's delay. */
const LOOP_SAMPLE_MS = 200;
/** How often the database queue is probed (one probe at a time), and over how long its delay is judged. */
const PROBE_MS = 50;
const QUEUE_WINDOW_MS = 500;
/** While shedding, one log line per this period at most: a refusal has no request log line of its own (refusalAnswer). */
const REPORT_MS = 1000;
/** Bodies up to this size are read and dropped after a refusal, keeping the connection; larger ones end it. */
const DRAIN_LIMIT = 64 * 1024;
/**
 * The creates' limit in batches (issue 38; docs/performance.md "The limit in batches"). Its floor,
 * the creates let in whatever their latency: the CREATE_BATCHES_IN_FLIGHT batches in the database
 * and one more waiting — the fewest that keep every batch full under overload (a create let in
 * when a batch's answers go out is in the next batch; fewer in progress means smaller batches, so
 * fewer creates a second for the same work of the database), and no more, so that a create let in
 * under overload waits for about one batch before its own. Where it starts: one batch more, and no
 * fewer than 64, the fixed limit before issue 38 — the bench's 50 merchants creating as fast as
 * they are answered never meet it, and a limit not reached does not move (AdaptiveLimit). Both
 * within KASSIR_SHED_LOW_CONCURRENCY; creates sent alone (KASSIR_CREATE_BATCH_SIZE=1) have a floor
 * of MIN_FLOOR.
 */
export function lowLimits(createBatchSize: number, lowConcurrency: number): { floor: number; initial: number } {
  const floor = Math.max(MIN_FLOOR, (CREATE_BATCHES_IN_FLIGHT + 1) * createBatchSize);
  const initial = Math.max(64, floor + createBatchSize);
  return { floor: Math.min(lowConcurrency, floor), initial: Math.min(lowConcurrency, initial) };
}

/** The creates' floor when they are not taken together: twice the default pool's connections. */
const MIN_FLOOR = 16;

/** Gives every route registered on `app` and its children `priority`, unless a route sets its own in `config`. */
export function routePriority(app: FastifyInstance, priority: Priority): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, priority: route.config?.priority ?? priority };
  });
}

/**
 * Load shedding by priority. Before a request is read or authenticated, it is refused with 503
 * `UNAVAILABLE` and Retry-After when the delay it would meet passes its priority's limit — low's
 * (KASSIR_SHED_LOW_DELAY_MS) first, normal's later, high's never — or, for a create, when as many
 * creates are in progress as the creates' adaptive limit allows (issue 38; AdaptiveLimit): while
 * it is reached, it grows while the creates' own latency, counted from their arrival (so a wait for
 * a batch counts), stays within their no-load latency plus one batch's time (at most
 * KASSIR_SHED_LOW_DELAY_MS), and shrinks as it passes it; between lowLimits' floor and
 * KASSIR_SHED_LOW_CONCURRENCY. A pool probe cannot see the creates
 * waiting for a batch (they hold no connection), their latency does; and the pool's queue refuses
 * creates only while a create in progress is late too (AdaptiveLimit.late). The delay is the longer of two
 * queues: for a database connection (the database is what runs out first here, and every request
 * queued there adds to the wait of all behind it), measured by a probe over half a second; and the event loop's
 * (this process out of CPU), measured by @fastify/under-pressure. A delay shows only once a queue
 * has formed, so a burst of creates arriving within milliseconds is held by the count instead.
 * under-pressure's own shedding has one limit for every route, hence the decision here.
 */
export async function loadShedding(app: FastifyInstance, ctx: AppContext, headers: { hsts: string | undefined }): Promise<void> {
  const { shedding } = ctx.config;
  if (!shedding.enabled) return;
  await app.register(underPressure, { sampleInterval: LOOP_SAMPLE_MS });
  const database = probeQueue(ctx.db);
  app.addHook('onClose', async () => database.stop());
  const refusal = refusalAnswer(shedding.retryAfterSeconds, headers.hsts);
  const shed = { low: 0, normal: 0 };
  let reportedAt = 0;
  const { floor, initial } = lowLimits(ctx.config.createBatchSize, shedding.lowConcurrency);
  const creates = new AdaptiveLimit({
    ...ADAPTIVE_LIMIT_DEFAULTS,
    min: floor,
    max: shedding.lowConcurrency,
    initial,
    queueMs: shedding.lowDelayMs,
    // The queueing a create let in may meet: one batch (what the payment creates' batches take now).
    queueBoundMs: () => ctx.creates.batchMs,
  });
  // The start itself (building the application, starting the job worker, binding the port) holds
  // the loop, sometimes for seconds on a busy machine, and under-pressure reports that stall for
  // the sample after it: no queue of requests, yet the first requests would be refused for it.
  // The loop's delay counts from two samples after the service is ready and after it listens.
  let loopCountsFrom = Number.POSITIVE_INFINITY;
  const startLoopCount = async () => {
    loopCountsFrom = performance.now() + 2 * LOOP_SAMPLE_MS;
  };
  app.addHook('onReady', startLoopCount);
  app.addHook('onListen', startLoopCount);

  /**
   * Whether a request of `priority` goes on now (a create let in is counted in, and out when its
   * response closes), or is to be refused: false, the refusal counted and reported here.
   */
  const admit = (priority: 'low' | 'normal', res: ServerResponse): boolean => {
    const dbDelayMs = database.delayMs();
    const loopDelayMs = performance.now() < loopCountsFrom ? 0 : loopDelay(app);
    const limit = priority === 'low' ? shedding.lowDelayMs : shedding.normalDelayMs;
    // The database's queue refuses a create only while creates are late too: a queue of
    // notifications waiting for one balance row's lock is not shortened by refusing creates that
    // wait in the batcher, not in it (issue 38: that refused capacity the machine had).
    const dbQueued = dbDelayMs > limit && (priority !== 'low' || creates.late());
    if (!dbQueued && loopDelayMs <= limit) {
      if (priority !== 'low') return true;
      const release = creates.tryAcquire();
      if (release) {
        const arrived = performance.now();
        // 'close' comes once per response, answered or cut off.
        res.once('close', () => release(performance.now() - arrived));
        return true;
      }
    }

    shed[priority]++;
    ctx.metrics.requestShed(priority);
    const now = Date.now();
    if (now - reportedAt >= REPORT_MS) {
      ctx.log.warn(
        {
          shed: { ...shed },
          db_delay_ms: Math.round(dbDelayMs),
          event_loop_delay_ms: Math.round(loopDelayMs),
          creates_in_progress: creates.inFlight,
          creates_limit: creates.limit,
          creates_batch_ms: ctx.creates.batchMs === undefined ? undefined : Math.round(ctx.creates.batchMs),
          creates_no_load_ms: creates.noLoadMs === undefined ? undefined : Math.round(creates.noLoadMs * 10) / 10,
        },
        'overloaded: refusing requests',
      );
      reportedAt = now;
      shed.low = 0;
      shed.normal = 0;
    }
    return false;
  };

  // Creates are decided before Fastify sees them (issue 38): at twice the load the machine carries
  // most requests are refused creates, and Fastify's own work for a request it then hands to the
  // refusal (its request and reply, the child logger, routing, the hooks' runner) was about a fifth
  // of a refusal's CPU (docs/performance.md, "What a refusal costs"). The routes of a fixed path
  // are known by method and path; their options object is kept and its priority read when a
  // request comes (a group's default is set on it after this hook).
  const fixedRoutes = new Map<string, { config?: { priority?: Priority } }>();
  app.addHook('onRoute', (route) => {
    if (/[:*(]/.test(route.url)) return;
    for (const method of [route.method].flat()) fixedRoutes.set(`${method} ${route.url}`, route);
  });
  answerBeforeRouting(app.server, (req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    if (fixedRoutes.get(`${req.method} ${query === -1 ? url : url.slice(0, query)}`)?.config?.priority !== 'low') return false;
    if (admit('low', res)) {
      (req as Decided)[DECIDED] = true;
      return false;
    }
    refusal(req, res, requestIdOf(req));
    return true;
  });

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const priority = request.routeOptions.config?.priority ?? 'normal';
    // A create let in before routing is counted already; any other request (a path with
    // parameters, one a test injects past the server) is decided here.
    if (priority === 'high' || (request.raw as Decided)[DECIDED]) return done();
    if (admit(priority, reply.raw)) return done();
    request.shed = true;
    reply.hijack();
    refusal(request.raw, reply.raw, request.id);
  });
}

/** Marks a request let in before routing (answerBeforeRouting), so that the onRequest hook does not count it twice. */
const DECIDED = Symbol('decided before routing');
type Decided = IncomingMessage & { [DECIDED]?: true };

/**
 * Puts `answer` in front of the server's request handler (Fastify's, the one listener a Fastify
 * server has): a request `answer` answers itself (it returns true) never reaches the handler.
 * With any other number of listeners nothing is changed, and every request goes on as before.
 */
export function answerBeforeRouting(server: Server, answer: (req: IncomingMessage, res: ServerResponse) => boolean): void {
  const listeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (listeners.length !== 1) return;
  const handler = listeners[0]!;
  server.removeListener('request', handler);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!answer(req, res)) handler.call(server, req, res);
  });
}

/**
 * The answer to a request refused for overload: 503 with the spec's error body (`UNAVAILABLE`,
 * `data.retry_after`) and Retry-After, written straight to the socket. A refusal exists to give
 * back capacity, and at twice the load a machine carries there are more refusals than anything
 * else (issue 38: through Fastify's reply — its serialiser, the onSend hooks, the request's log
 * line — each cost some 0.18 ms of CPU, capacity the creates let in then lacked). So the body is
 * serialised once, and written with the headers the onSend hooks would have set; a create is
 * answered before Fastify sees it (answerBeforeRouting), any other request from the onRequest hook,
 * its reply hijacked and the request marked `shed`, which the log's onResponse hook passes over
 * (refusals are counted in kassir_http_requests_shed_total and the once-a-second `overloaded` line instead).
 */
export function refusalAnswer(retryAfterSeconds: number, hsts: string | undefined): (req: IncomingMessage, res: ServerResponse, requestId: string) => void {
  const error = new DomainError('UNAVAILABLE', `The service is overloaded and did not start this request; retry after ${retryAfterSeconds} s`, {
    retry_after: retryAfterSeconds,
  });
  const status = statusOf(error);
  const body = Buffer.from(JSON.stringify(errorBody(error)));
  const retryAfter = String(retryAfterSeconds);
  return (req, res, requestId) => {
    const headers: OutgoingHttpHeaders = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
      'retry-after': retryAfter,
      'x-request-id': requestId,
      'x-content-type-options': 'nosniff',
    };
    if (hsts !== undefined) headers['strict-transport-security'] = hsts;
    if (largeBodyPending(req)) headers.connection = 'close';
    res.writeHead(status, headers);
    res.end(body);
  };
}

/**
 * How long a request now would wait for one of the pool's connections. Every PROBE_MS, when every
 * connection is in use, a probe takes one and gives it straight back (no query), queueing behind
 * whatever waits: its wait is the queue's delay. As CoDel does for network queues, the delay that counts is the least
 * seen over the last QUEUE_WINDOW_MS — a queue that every probe met, not a moment's stall (a
 * checkpoint's flush, a burst already drained). When no probe has got through in that time, the
 * one still waiting says how long the queue has stood at least.
 */
function probeQueue(db: Db): { delayMs(): number; stop(): void } {
  const seen: { at: number; ms: number }[] = [];
  let waitingSince: number | undefined;
  const timer = setInterval(() => {
    if (waitingSince !== undefined) return;
    // A connection idle, or room to open one: nobody queues. (A probe would then time the set-up
    // of a new connection, which is no queue's delay.)
    if (db.idleCount > 0 || db.totalCount < db.options.max) {
      seen.push({ at: performance.now(), ms: 0 });
      return;
    }
    const started = performance.now();
    waitingSince = started;
    db.connect().then(
      (client) => {
        client.release();
        const now = performance.now();
        seen.push({ at: now, ms: now - started });
        waitingSince = undefined;
      },
      // No connection within the pool's own limit: the queue stood at least that long.
      () => {
        const now = performance.now();
        seen.push({ at: now, ms: now - started });
        waitingSince = undefined;
      },
    );
  }, PROBE_MS);
  timer.unref();
  return {
    delayMs() {
      const now = performance.now();
      while (seen.length > 0 && seen[0]!.at < now - QUEUE_WINDOW_MS) seen.shift();
      if (seen.length > 0) return Math.min(...seen.map((s) => s.ms));
      return waitingSince === undefined ? 0 : now - waitingSince;
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * The event loop's mean delay over under-pressure's last sample. It reports Infinity when the
 * sample holds no measurement at all: the loop was held for the whole sample, which happens once
 * as the service starts (building the application); that stall is not a queue of requests, and
 * the start's samples are not counted (loadShedding's loopCountsFrom).
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
function largeBodyPending(request: IncomingMessage): boolean {
  if (request.complete) return false;
  if (request.headers['transfer-encoding'] !== undefined) return true;
  return Number(request.headers['content-length'] ?? 0) > DRAIN_LIMIT;
}
