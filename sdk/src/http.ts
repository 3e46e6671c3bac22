import { KassirConnectionError, KassirError } from './errors.js';
import { buildMultipart } from './multipart.js';
import { OPERATIONS, type OperationName } from './operations.js';
import { importSecret, signRequest, toBytes } from './signing.js';
import type { ReceiptFile } from './types.js';

/** Options of a Kassir client. */
export interface KassirClientOptions {
  /** Where the service is reached, e.g. `http://localhost:8080` or `https://pay.example.com`. */
  baseUrl: string;
  /** The terminal's API key (`X-Identity`). */
  apiKey: string;
  /** The merchant's Secret Key, shared by its terminals: signs every request. */
  secretKey: string;
  /**
   * The service's `PUBLIC_BASE_URL`, which signatures are checked against; default `baseUrl`. Set it
   * when you reach the service by another address than its public one (an internal host name).
   */
  publicBaseUrl?: string;
  /** Per attempt, milliseconds; default 30 000. */
  timeoutMs?: number;
  /** Further attempts of a call that is safe to repeat (see README "Retries"); default 2. */
  maxRetries?: number;
  /** First backoff step in milliseconds, doubled per attempt, with jitter; default 500. */
  retryBaseMs?: number;
  /** A `Retry-After` longer than this (milliseconds) is not waited for: the error is thrown; default 30 000. */
  maxRetryAfterMs?: number;
  /**
   * Give every JSON POST an `Idempotency-Key` (a random UUID) unless the call names its own, so that
   * it can be retried safely; default true. False: only calls with their own key are retried.
   */
  autoIdempotencyKeys?: boolean;
  /** A fetch implementation; default the platform's. */
  fetch?: typeof fetch;
  /** Sent as User-Agent where the platform allows it. */
  userAgent?: string;
}

/** Options of one call. */
export interface RequestOptions {
  /**
   * The request's `Idempotency-Key` (1–255 characters): the service runs it once and replays the
   * first answer for 24 hours (docs/idempotency.md). Keep it to repeat the call after a timeout.
   */
  idempotencyKey?: string;
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  /** Overrides the client's retry count for this call (0: one attempt only). */
  maxRetries?: number;
}

/** What one call sends. */
export interface CallInput {
  path?: Record<string, string>;
  query?: Record<string, string | number | Date | undefined>;
  /** A JSON body; an empty-bodied POST when absent. */
  json?: object;
  /** A multipart/form-data body (never retried: the service streams it and ignores Idempotency-Key there). */
  multipart?: { fields: Record<string, string>; file?: ReceiptFile };
  /** The answer is a file, not JSON. */
  binary?: boolean;
}

/** An answer read whole. */
interface Answer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

/** A file the service sent. */
export interface BinaryAnswer {
  contentType: string;
  filename: string | undefined;
  data: Uint8Array;
}

const SDK_VERSION = '0.1.0';
const DEFAULTS = { timeoutMs: 30_000, maxRetries: 2, retryBaseMs: 500, maxRetryAfterMs: 30_000 };
/** Backoff never grows past this between two attempts (Retry-After aside). */
const MAX_BACKOFF_MS = 8_000;

/**
 * Sends signed requests to the merchant API: builds the URL and body bytes once, signs exactly
 * those, and repeats a call only where repeating cannot do anything twice.
 */
export class Transport {
  private readonly baseUrl: string;
  private readonly publicBaseUrl: string;
  private readonly key: Promise<CryptoKey>;
  private readonly options: Required<Omit<KassirClientOptions, 'publicBaseUrl' | 'fetch' | 'userAgent' | 'secretKey'>>;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;

  constructor(options: KassirClientOptions) {
    if (!options.baseUrl) throw new TypeError('Kassir SDK: baseUrl is required');
    if (!options.apiKey || !options.secretKey) throw new TypeError('Kassir SDK: apiKey and secretKey are required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.publicBaseUrl = (options.publicBaseUrl ?? options.baseUrl).replace(/\/+$/, '');
    this.key = importSecret(options.secretKey);
    // An unhandled rejection is not wanted before the first call: the call reports it.
    this.key.catch(() => undefined);
    this.options = {
      baseUrl: this.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
      autoIdempotencyKeys: options.autoIdempotencyKeys ?? true,
    };
    const platformFetch = options.fetch ?? globalThis.fetch;
    if (typeof platformFetch !== 'function') throw new TypeError('Kassir SDK: no fetch in this runtime; pass options.fetch');
    this.fetchImpl = platformFetch;
    this.userAgent = options.userAgent ?? `kassir-sdk/${SDK_VERSION}`;
  }

  /** Calls one operation and returns its parsed answer; throws KassirError or KassirConnectionError. */
  async call<T>(name: OperationName, input: CallInput = {}, options: RequestOptions = {}): Promise<T> {
    const operation = OPERATIONS[name];
    const pathAndQuery = fillPath(operation.path, input.path ?? {}) + queryString(input.query);
    const url = this.baseUrl + pathAndQuery;

    let body: Uint8Array | undefined;
    const headers: Record<string, string> = { accept: input.binary ? '*/*' : 'application/json', 'user-agent': this.userAgent };
    if (input.multipart) {
      const multipart = await buildMultipart(input.multipart.fields, input.multipart.file);
      body = multipart.body;
      headers['content-type'] = multipart.contentType;
    } else if (input.json !== undefined) {
      body = toBytes(JSON.stringify(input.json));
      headers['content-type'] = 'application/json';
    }

    // Safe to repeat: a GET; a JSON POST the service deduplicates by its Idempotency-Key. A multipart
    // upload is streamed by the service before any key could be checked, so it is sent once.
    let idempotencyKey = options.idempotencyKey;
    if (idempotencyKey === undefined && operation.method === 'POST' && !input.multipart && this.options.autoIdempotencyKeys) {
      idempotencyKey = globalThis.crypto.randomUUID();
    }
    if (idempotencyKey !== undefined && operation.method === 'POST') headers['idempotency-key'] = idempotencyKey;
    const repeatable = operation.method === 'GET' || (idempotencyKey !== undefined && !input.multipart);

    if (operation.signed) {
      headers['x-identity'] = this.options.apiKey;
      // The service checks PUBLIC_BASE_URL + the path and query as received, over the body's bytes.
      headers['x-signature'] = await signRequest(await this.key, operation.method, this.publicBaseUrl + pathAndQuery, body ?? '');
    }

    const maxRetries = repeatable ? (options.maxRetries ?? this.options.maxRetries) : 0;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(url, operation.method, headers, body, options);
      if (!(outcome instanceof KassirConnectionError)) {
        if (outcome.status >= 200 && outcome.status < 300) return (input.binary ? readBinary(outcome) : readJson(outcome)) as T;
        const error = toKassirError(outcome);
        const wait = attempt < maxRetries ? this.retryDelay(error, attempt) : undefined;
        if (wait === undefined) throw error;
        await sleep(wait, options.signal);
      } else {
        if (options.signal?.aborted || attempt >= maxRetries) throw outcome;
        await sleep(this.backoff(attempt), options.signal);
      }
    }
  }

  /** One attempt: the answer, or the connection error that took its place. */
  private async attempt(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: Uint8Array | undefined,
    options: RequestOptions,
  ): Promise<Answer | KassirConnectionError> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const cancel = () => controller.abort();
    options.signal?.addEventListener('abort', cancel, { once: true });
    try {
      if (options.signal?.aborted) throw options.signal.reason;
      const response = await this.fetchImpl(url, { method, headers, body: body as BodyInit | undefined, signal: controller.signal, redirect: 'manual' });
      // The body is read inside the timeout too: a stalled answer is a failed attempt.
      return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
    } catch (err) {
      if (options.signal?.aborted) return new KassirConnectionError('The call was cancelled', { cause: options.signal.reason });
      const timedOut = controller.signal.aborted;
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : describe(err);
      return new KassirConnectionError(`${method} ${url.split('?')[0]}: ${reason}`, { cause: err, timedOut });
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', cancel);
    }
  }

  /**
   * How long to wait before repeating a call that got `error`, or undefined when repeating cannot
   * help. The service marks a refusal that a repeat may get past with Retry-After: load shedding and
   * an unreachable database (503), an Idempotency-Key whose first request is still running (409).
   * Kassir's 503/429 answers without it are about the business (PAY_004 no requisites, PAY_005 too
   * many payments of one amount, a payout no route took) and would answer the same, or worse: a
   * payout that failed has used its ext_id. Gateway failures in front of the service (502/503/504
   * without Kassir's body) are repeated with backoff.
   */
  private retryDelay(error: KassirError, attempt: number): number | undefined {
    const fromGateway = error.code.startsWith('HTTP_') && (error.status === 502 || error.status === 503 || error.status === 504 || error.status === 429);
    const marked = error.retryAfter !== undefined && (error.status === 503 || error.status === 429 || (error.status === 409 && error.code === 'CONFLICT'));
    if (!fromGateway && !marked) return undefined;
    if (error.retryAfter === undefined) return this.backoff(attempt);
    const asked = error.retryAfter * 1000;
    if (asked > this.options.maxRetryAfterMs) return undefined;
    return Math.max(asked, this.backoff(attempt) / 2);
  }

  /** Exponential backoff with jitter in [½, 1) of the step. */
  private backoff(attempt: number): number {
    const step = Math.min(this.options.retryBaseMs * 2 ** attempt, MAX_BACKOFF_MS);
    return Math.round(step * (0.5 + Math.random() / 2));
  }
}

/** Fills `{name}` placeholders; each value is one path segment, percent-encoded. */
function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (typeof value !== 'string' || value === '') throw new TypeError(`Kassir SDK: ${name} must be a non-empty string`);
    return encodeURIComponent(value);
  });
}

/** `?a=1&b=2` in the form fetch sends unchanged (so the signed URL is the URL sent); dates as ISO 8601. */
function queryString(query: CallInput['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    params.append(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

const decoder = new TextDecoder();

function readJson(response: Answer): unknown {
  const text = decoder.decode(response.bytes);
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new KassirError({
      code: `HTTP_${response.status}`,
      status: response.status,
      message: `The service answered ${response.status} with a body that is not JSON`,
      requestId: response.headers.get('x-request-id') ?? undefined,
    });
  }
}

function readBinary(response: Answer): BinaryAnswer {
  const disposition = response.headers.get('content-disposition') ?? '';
  return {
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    filename: /filename="([^"]*)"/.exec(disposition)?.[1],
    data: response.bytes,
  };
}

/** The spec's error body as a KassirError; any other answer as `HTTP_<status>`. */
function toKassirError(response: Answer): KassirError {
  const text = decoder.decode(response.bytes);
  let body: { error?: unknown; message?: unknown; data?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  if (body && typeof body === 'object' && typeof body.error === 'string') {
    return new KassirError({
      code: body.error,
      status: response.status,
      message: typeof body.message === 'string' ? body.message : body.error,
      data: body.data && typeof body.data === 'object' ? (body.data as Record<string, unknown>) : undefined,
      requestId,
      retryAfter,
    });
  }
  return new KassirError({
    code: `HTTP_${response.status}`,
    status: response.status,
    message: `The service answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    requestId,
    retryAfter,
  });
}

/** Retry-After in seconds: a number of seconds or an HTTP date. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

function describe(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' ? `${code} ${message}` : message;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new KassirConnectionError('The call was cancelled', { cause: signal.reason }));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new KassirConnectionError('The call was cancelled', { cause: signal?.reason }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
