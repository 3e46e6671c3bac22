import dns from 'node:dns';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { forbiddenReason } from './address-guard.js';

/** What one delivery attempt produced; the caller decides about retries. */
export interface WebhookResult {
  /** A 2xx answer; anything else (3xx included) is a failed delivery (DESIGN.md decision 9). */
  ok: boolean;
  status: number | null;
  latencyMs: number;
  error?: string;
  /** The first bytes of the answer, for the operator's delivery log. */
  responseSnippet?: string;
}

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs?: number;
  /** WEBHOOK_ALLOW_PRIVATE: lets deliveries reach loopback/private/link-local/metadata addresses. */
  allowPrivate: boolean;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 3_000;
const SNIPPET_BYTES = 1_024;
const USER_AGENT = 'Kassir-Webhooks/1';

/** Raised from inside the connector, so the refusal happens where the socket would be opened. */
class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOK_REFUSED';
}

/**
 * net.connect's `lookup`: resolves every address of the host and refuses the connection if any
 * of them is forbidden. Running here rather than before the request means the addresses judged
 * are the ones connected to, so DNS rebinding between a check and the connect gains nothing.
 */
const guardedLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    for (const { address } of addresses) {
      const reason = forbiddenReason(address);
      // A name with one public and one private record is refused outright: which one a socket
      // ends up using is up to happy-eyeballs, and the receiver controls its own DNS.
      if (reason !== undefined) return callback(new RefusedAddressError(`refused: ${reason} (from ${hostname})`), []);
    }
    const first = addresses[0];
    if (options.all) return callback(null, addresses);
    if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
};

function guardedConnector(): buildConnector.connector {
  const connect = buildConnector({ timeout: CONNECT_TIMEOUT_MS, lookup: guardedLookup });
  return (options, callback) => {
    // net.connect skips `lookup` for IP literals, so they are judged here.
    if (net.isIP(options.hostname) !== 0) {
      const reason = forbiddenReason(options.hostname);
      if (reason !== undefined) return callback(new RefusedAddressError(`refused: ${reason}`), null);
    }
    connect(options, callback);
  };
}

// One agent per policy: pooled keep-alive sockets are reused without passing through the
// connector again, so a socket opened while private addresses were allowed must never serve a
// delivery that forbids them.
let guardedAgent: Agent | undefined;
let openAgent: Agent | undefined;

function agentFor(allowPrivate: boolean): Agent {
  if (allowPrivate) {
    openAgent ??= new Agent({ connect: { timeout: CONNECT_TIMEOUT_MS } });
    return openAgent;
  }
  guardedAgent ??= new Agent({ connect: guardedConnector() });
  return guardedAgent;
}

/**
 * Cheap syntactic check of a webhook URL at creation time: http(s), a host, no credentials, and
 * no forbidden IP literal unless private addresses are allowed. Returns the reason it is refused.
 * Host names are judged again on their resolved addresses when a delivery connects.
 */
export function checkWebhookUrl(url: string, allowPrivate: boolean): string | undefined {
  const syntax = checkSyntax(url);
  if (typeof syntax === 'string') return syntax;
  if (allowPrivate) return undefined;
  // A trailing dot is the fully-qualified form of the same name: `localhost.` is still localhost.
  const host = syntax.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (net.isIP(host) !== 0) return forbiddenReason(host);
  // RFC 6761: these names always mean this machine, whatever the resolver says.
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback address`;
  return undefined;
}

function checkSyntax(url: string): URL | string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'the scheme must be http or https';
  if (parsed.hostname === '') return 'the URL has no host';
  if (parsed.username !== '' || parsed.password !== '') return 'the URL must not carry credentials';
  return parsed;
}

/**
 * POSTs one webhook. Never throws: network failures, timeouts and refused addresses come back as
 * `ok: false` with a short `error`. Redirects are not followed (a 3xx is a failed delivery), and
 * the whole attempt, body included, is bounded by `timeoutMs` so a slow receiver costs a job at
 * most that long.
 */
export async function sendWebhook(input: WebhookRequest): Promise<WebhookResult> {
  const started = performance.now();
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const latencyMs = () => Math.round(performance.now() - started);

  // Addresses are judged by the agent at connect time; only the shape of the URL is checked here.
  const syntax = checkSyntax(input.url);
  if (typeof syntax === 'string') return { ok: false, status: null, latencyMs: latencyMs(), error: `refused: ${syntax}` };

  const headers: Record<string, string> = { 'user-agent': USER_AGENT };
  for (const [name, value] of Object.entries(input.headers)) {
    if (name.toLowerCase() !== 'content-type') headers[name] = value;
  }
  headers['content-type'] = 'application/json';

  const signal = AbortSignal.timeout(timeoutMs);
  let status: number | null = null;
  try {
    // undici 7's request() follows redirects only through the redirect interceptor, which this
    // agent does not have: a 3xx comes back as is.
    const response = await request(syntax, {
      method: 'POST',
      headers,
      body: input.body,
      dispatcher: agentFor(input.allowPrivate),
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    const responseSnippet = await readSnippet(response.body);
    const ok = status >= 200 && status < 300;
    if (ok) return { ok, status, latencyMs: latencyMs(), responseSnippet };
    const error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    return { ok, status, latencyMs: latencyMs(), error, responseSnippet };
  } catch (err) {
    return { ok: false, status, latencyMs: latencyMs(), error: describeError(err, signal, timeoutMs) };
  }
}

/**
 * Keeps the first SNIPPET_BYTES of the answer and drops the connection on the rest. A body that
 * fails or stalls after the status line does not undo the delivery: the receiver has answered,
 * and calling it failed would only cause a duplicate.
 */
async function readSnippet(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let kept = 0;
  try {
    for await (const chunk of body) {
      const part = chunk.subarray(0, SNIPPET_BYTES - kept);
      chunks.push(part);
      kept += part.length;
      // Leaving the loop destroys the stream: a huge or endless answer is not read to its end.
      if (kept >= SNIPPET_BYTES) break;
    }
  } catch {
    // Keep what arrived; see above.
  }
  return Buffer.concat(chunks).toString('utf8');
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const SHORT_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed',
};

function describeError(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `timeout after ${timeoutMs} ms`;
  for (const cause of causes(err)) {
    if (cause instanceof RefusedAddressError) return cause.message;
    const code = (cause as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (TIMEOUT_CODES.has(code)) return `timeout after ${timeoutMs} ms`;
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return `connect timeout after ${CONNECT_TIMEOUT_MS} ms`;
    const short = SHORT_CODES[code];
    if (short !== undefined) return short;
    if (/CERT|TLS|SSL/.test(code)) return `TLS error: ${code}`;
  }
  const message = err instanceof Error ? err.message : String(err);
  return message.slice(0, 200);
}

/** The error, its `cause` chain and, for happy-eyeballs failures, each attempt's error. */
function* causes(err: unknown, depth = 0): Generator<unknown> {
  if (err === null || err === undefined || depth > 5) return;
  yield err;
  if (err instanceof AggregateError) for (const inner of err.errors) yield* causes(inner, depth + 1);
  if (err instanceof Error) yield* causes(err.cause, depth + 1);
}

/**
 * Downloads a merchant-supplied URL (a receipt link to forward to a provider) under the same guard
 * as webhooks: addresses judged at connect time, no redirects, a time limit, and at most
 * `maxBytes` read — a larger answer is refused, not truncated.
 */
export async function fetchGuarded(
  url: string,
  options: { allowPrivate: boolean; timeoutMs?: number; maxBytes: number },
): Promise<{ ok: true; body: Buffer; contentType: string | undefined } | { ok: false; error: string }> {
  const syntax = checkSyntax(url);
  if (typeof syntax === 'string') return { ok: false, error: `refused: ${syntax}` };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await request(syntax, {
      method: 'GET',
      headers: { 'user-agent': USER_AGENT },
      dispatcher: agentFor(options.allowPrivate),
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      return { ok: false, error: `HTTP ${response.statusCode}` };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > options.maxBytes) return { ok: false, error: `larger than ${options.maxBytes} bytes` };
      chunks.push(chunk);
    }
    const contentType = response.headers['content-type'];
    return { ok: true, body: Buffer.concat(chunks), contentType: typeof contentType === 'string' ? contentType : undefined };
  } catch (err) {
    return { ok: false, error: describeError(err, signal, timeoutMs) };
  }
}
