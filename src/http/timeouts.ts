import type { ServerOptions } from 'node:http';
import type { HttpTimeouts } from '../config.js';

/**
 * The HTTP server's limits against slow clients (DESIGN.md leaves them open; docs/operator.md
 * "Configuration"). Three different clocks, because one total limit cannot tell a slowloris from
 * a receipt uploaded over a poor mobile link:
 * - the request head must arrive whole within `headersMs` (Node's `headersTimeout`): a client
 *   that sends its headers a byte at a time is answered 408 REQUEST_TIMEOUT (by app.ts's
 *   answerUnreadableRequest) and closed;
 * - a connection on which nothing moves for `idleMs` is closed (Node's `server.timeout`, Fastify's
 *   `connectionTimeout`): a body that keeps arriving, however slowly, keeps its connection, a body
 *   that stops does not;
 * - the whole request must arrive within `requestMs` (Node's `requestTimeout`), a backstop far
 *   above any upload's needs.
 */
export function serverTimeouts(timeouts: HttpTimeouts): {
  http: ServerOptions;
  connectionTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
} {
  return {
    http: {
      headersTimeout: timeouts.headersMs,
      // Node checks the head and request limits on this interval (30 s by default, which would let
      // a slowloris hold a connection 30 s past its limit); a pass over the open connections is cheap.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
    },
    connectionTimeout: timeouts.idleMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
  };
}
