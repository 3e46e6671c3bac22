import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { AppContext, RouteApp } from '../context.js';
import { isDatabaseUnavailable, isTransientConflict } from '../db/pool.js';
import { DomainError, type ErrorKey } from '../errors.js';
import { maskUrl } from '../lib/mask.js';
import { apiDocs } from './api-docs.js';
import { DEVICE_HOOKS_PREFIX } from './device-auth.js';
import { errorBody, statusOf } from './errors.js';
import { registerJsonParser, registerMultipartPassThrough } from './json.js';
import { closeLingering } from './lingering-close.js';
import { readUpload } from './multipart.js';
import { observabilityRoutes, observeRequest, requestIdOf } from './observability.js';
import { swaggerOptions } from './openapi.js';
import { loadShedding } from './overload.js';
import { serverTimeouts } from './timeouts.js';
import { describeValidationError, rejectUnreadableInput, validatorCompiler } from './validation.js';
import './types.js';
import { registerRoutes } from './routes.js';

/** Retry-After of a 503 answered while the database cannot be reached. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Default body limit for JSON routes; upload routes raise their own. */
const JSON_BODY_LIMIT = 1024 * 1024;

/** Builds the HTTP application: parsing, validation, errors, overload and logging for every route; health and the OpenAPI document; the route groups of src/http/routes.ts. */
export async function buildApp(ctx: AppContext): Promise<RouteApp> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // One line per request is written by the onResponse hook below, not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: JSON_BODY_LIMIT,
    // The caller's X-Request-Id when well-formed, else a UUID (src/http/observability.ts); every
    // line request.log writes carries it as reqId.
    genReqId: requestIdOf,
    requestIdHeader: false,
    trustProxy: ctx.config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    // A path whose percent-encoding is broken (`/v1/payments/%ZZ`, `%C0%AF`) is refused before
    // routing, so the route's own error code is unknown: the generic one, in the spec's body.
    clientErrorHandler: answerUnreadableRequest,
    frameworkErrors: (_error, _request, reply: FastifyReply) => {
      reply.status(400).send(errorBody(new DomainError('VALIDATION', 'The URL cannot be read: its percent-encoding is not valid UTF-8')));
    },
    ...serverTimeouts(ctx.config.timeouts),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  // Every route's input is judged after its own authentication hooks (route-level hooks run after
  // the plugin's) and before its schema: see rejectUnreadableInput.
  app.addHook('onRoute', (route) => {
    const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    route.preValidation = [...own, rejectUnreadableInput];
    // Only the routes whose answers carry a secret pay for the hook.
    if (route.config?.secret) route.onSend = [...(route.onSend === undefined ? [] : [route.onSend].flat()), keepNowhere];
  });
  registerJsonParser(app);
  app.decorateRequest('readUpload', function (this: FastifyRequest) {
    const policy = this.routeOptions.config.upload;
    if (!policy) throw new Error(`${this.method} ${this.routeOptions.url} reads an upload but has no upload policy in its config`);
    return readUpload(this, ctx.files, policy);
  });
  registerMultipartPassThrough(app);
  // Served over HTTPS (PUBLIC_BASE_URL says so, whatever the proxy in front speaks to this
  // process), browsers are told never to come back over plain HTTP for a year, where a cookie or
  // a payment page could be read or changed on the way. Subdomains are the operator's to decide.
  const hsts = ctx.config.publicBaseUrl.startsWith('https://') ? 'max-age=31536000' : undefined;
  // First of the request hooks, before the cookies' too: a request refused for overload costs
  // neither a body read nor a lookup. Its answer skips the onSend hooks below (it sets their headers itself).
  await loadShedding(app, ctx, { hsts });
  await app.register(swagger, swaggerOptions(ctx.config.publicBaseUrl));
  await app.register(cookie);

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (hsts) reply.header('strict-transport-security', hsts);
    // No answer is read as another type than it says (a JSON or CSV answer as HTML or script).
    reply.header('x-content-type-options', 'nosniff');
  });
  // One structured line per request; URLs pass through the masker (an ext_id may hold a card number,
  // a payment page's path holds its token). Not for a request refused for overload: under twice
  // the load a machine carries most requests are refusals, and a line each would take the CPU the
  // refusal gives back (they are counted, and summed up once a second: src/http/overload.ts).
  const pagePath = new URL(ctx.config.paymentPageUrl).pathname.replace(/\/+$/, '');
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.shed) return;
    observeRequest(ctx.metrics, request, reply);
    request.log.info(
      {
        method: request.method,
        url: maskUrl(request.url, pagePath, DEVICE_HOOKS_PREFIX),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        merchant: request.merchant?.merchantId,
        terminal: request.merchant?.terminalId,
      },
      'request',
    );
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const renderError = request.routeOptions.config?.renderError;
    if (renderError) return renderError(error, request, reply, statusOf);
    const domainError = toDomainError(error, request);
    if (domainError.key === 'UNAVAILABLE' && isDatabaseUnavailable(error)) {
      // One line per request while the database is away, without a stack to scroll past.
      request.log.warn({ err: { message: error.message, code: error.code } }, 'request failed: the database cannot be reached');
    } else if (statusOf(domainError) >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    // Answered before the body was read whole (an upload refused with 413 part-way): the rest of
    // the body is still on the wire, so the connection cannot carry another request — close it
    // after this answer, as Fastify does for its own parser errors. Kept open, it would also hold
    // up a graceful shutdown forever.
    if (!request.raw.complete) {
      reply.header('connection', 'close');
      // The rest is read and discarded for a bounded time, so that the client gets this answer, not a reset.
      closeLingering(request.raw);
    }
    if (domainError.retryAfter !== undefined) reply.header('retry-after', String(domainError.retryAfter));
    return reply.status(statusOf(domainError)).send(errorBody(domainError));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new DomainError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send(errorBody(error));
  });

  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    await ctx.db.query('SELECT 1 FROM schema_migrations LIMIT 1');
    return reply.send({ status: 'ok' });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(apiDocs);
  // GET /metrics and GET /readyz.
  await observabilityRoutes(app, ctx);

  await registerRoutes(app, ctx);
  return app;
}

/** onSend of a route whose answer carries a secret (config `secret`): no browser, proxy or cache keeps it. */
async function keepNowhere(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('cache-control', 'no-store');
}

/**
 * A request Node's HTTP parser could not read (a malformed request line, headers beyond the
 * limit, a client too slow to send them) never reaches Fastify's routing: it is answered here on
 * the socket, as Fastify's own handler would, but in the spec's error body, and the connection is
 * closed.
 */
function answerUnreadableRequest(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const domainError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new DomainError('REQUEST_TIMEOUT', 'The request did not arrive in time; send it again')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('HEADERS_TOO_LARGE')
        : new DomainError('VALIDATION', 'The request could not be read as HTTP');
  this.log.debug({ err: error }, 'unreadable request');
  if (socket.writable) {
    const body = JSON.stringify(errorBody(domainError));
    socket.write(
      `HTTP/1.1 ${statusOf(domainError)} ${STATUS_CODES[statusOf(domainError)]}\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** Maps anything thrown while serving a request onto the closed catalogue. */
function toDomainError(error: FastifyError, request: FastifyRequest): DomainError {
  if (error instanceof DomainError) return error;
  const config = request.routeOptions?.config;
  if (error.validation) {
    return new DomainError(config?.invalidCode ?? 'VALIDATION', describeValidationError(error.validation as never, error.validationContext));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('PAYLOAD_TOO_LARGE', `The request body is larger than this route accepts`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError(
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Type ${request.headers['content-type'] ?? '(none)'} is not accepted here; send application/json`,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError(config?.invalidCode ?? 'VALIDATION', 'The request body is empty or incomplete');
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new DomainError(config?.invalidCode ?? 'VALIDATION', 'The request could not be read');
  }
  // The database cannot be reached (stopped, restarting, connections cut, the pool's wait for a
  // connection ran out): temporary, and the client's to retry — not an internal error.
  if (isDatabaseUnavailable(error)) {
    return new DomainError('UNAVAILABLE', `The service cannot reach its database right now; retry in a few seconds (request id ${request.id})`, undefined, {
      retryAfter: DATABASE_RETRY_AFTER_SECONDS,
    });
  }
  if (isTransientConflict(error)) {
    return new DomainError('UNAVAILABLE', `The request collided with another one and was undone; send it again (request id ${request.id})`, undefined, {
      retryAfter: 1,
    });
  }
  // Unexpected: the body is generic; the detail is in the log under the request id.
  const key: ErrorKey = config?.internalCode ?? 'SYS_001';
  return new DomainError(key, `Internal error; quote request id ${request.id} to the operator`);
}
