/**
 * The one way the rate source adapters talk to an exchange: a JSON GET or POST through undici,
 * bounded in time and size, under the refresh's AbortSignal. What comes back is parsed with
 * lossless-json, so that a number the exchange wrote (Rapira's `askPrice: 97.31`) reaches the
 * adapter as the literal it was, never through a float; the helpers below turn fields into the
 * decimal strings and counts an Advert carries, and anything else into SourceError.
 */
import { Decimal } from 'decimal.js';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { request } from 'undici';
import { SourceError, type SourceName, type SourceQuery } from './source.js';

/** How long one exchange request may take, unless `options.timeout_ms` says otherwise. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The largest answer read; past it the connection is dropped (an order book page is far smaller). */
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** How much of a refused answer an error message quotes. */
const EXCERPT_CHARS = 200;

export interface JsonRequest {
  method: 'GET' | 'POST';
  /** The exchange's path, appended to the base URL's own path (`/fiat/otc/item/online`). */
  path: string;
  query?: Record<string, string>;
  /** Sent as JSON (POST only). */
  body?: unknown;
}

/**
 * The base URL to call: `options.base_url` (an absolute http(s) URL, any path kept as a prefix)
 * or the exchange's own. A base_url that is not one is refused, not silently replaced.
 */
export function baseUrlOf(source: SourceName, options: Record<string, unknown>, defaultBaseUrl: string): URL {
  const given = options.base_url;
  if (given === undefined || given === null) return new URL(defaultBaseUrl);
  if (typeof given !== 'string' || given === '') throw new SourceError(source, 'options.base_url must be an absolute http(s) URL');
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new SourceError(source, `options.base_url ${JSON.stringify(given.slice(0, 100))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SourceError(source, 'options.base_url must be an http or https URL');
  if (url.username || url.password) throw new SourceError(source, 'options.base_url must not carry credentials');
  return url;
}

/** `base` with `path` appended to its own path, and `query` set. */
export function urlFor(base: URL, path: string, query?: Record<string, string>): URL {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  url.search = '';
  url.hash = '';
  for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
  return url;
}

function timeoutOf(options: Record<string, unknown>): number {
  const t = options.timeout_ms;
  return typeof t === 'number' && Number.isInteger(t) && t > 0 && t <= 120_000 ? t : DEFAULT_TIMEOUT_MS;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

/**
 * Sends the request and returns the parsed JSON answer. Throws SourceError for an answer that is
 * not 2xx (its status and a short excerpt), larger than MAX_ANSWER_BYTES, not JSON, a timeout or a
 * connection that failed; when the caller's own signal aborted, rejects with its reason instead.
 */
export async function fetchJson(source: SourceName, query: SourceQuery, defaultBaseUrl: string, req: JsonRequest): Promise<unknown> {
  const url = urlFor(baseUrlOf(source, query.options, defaultBaseUrl), req.path, req.query);
  const timeoutMs = timeoutOf(query.options);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([query.signal, timeout]);
  query.signal.throwIfAborted();
  let text: string;
  let status: number;
  try {
    const response = await request(url, {
      method: req.method,
      headers: {
        accept: 'application/json',
        ...(req.method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      body: req.method === 'POST' ? JSON.stringify(req.body ?? {}) : undefined,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) {
        response.body.destroy();
        throw new SourceError(source, `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    if (err instanceof SourceError) throw err;
    if (query.signal.aborted) throw query.signal.reason;
    if (timeout.aborted) throw new SourceError(source, `no answer within ${timeoutMs} ms`);
    throw new SourceError(source, `request failed: ${(err as Error).message}`);
  }
  if (status < 200 || status >= 300) throw new SourceError(source, `HTTP ${status}: ${excerpt(text)}`);
  try {
    return parseLossless(text);
  } catch {
    throw new SourceError(source, `the answer is not JSON: ${excerpt(text)}`);
  }
}

// ---- Reading fields of a parsed answer --------------------------------------------------------

/** A JSON object (not an array, not null), or undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The literal text of a JSON string or number; undefined for anything else. */
export function literalOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

const DECIMAL = /^\d+(\.\d+)?$/;

/** A price: a positive decimal, kept exactly as the exchange wrote it. Throws SourceError otherwise. */
export function priceOf(source: SourceName, value: unknown, where: string): string {
  const text = literalOf(value);
  if (text === undefined || !DECIMAL.test(text) || new Decimal(text).lte(0)) {
    throw new SourceError(source, `${where}: price ${describeValue(value)} is not a positive decimal`);
  }
  return text;
}

/** An amount (a limit, a quantity): a decimal ≥ 0 as written, or null when the exchange sent none. */
export function amountOf(source: SourceName, value: unknown, where: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  const text = literalOf(value);
  if (text === undefined || !DECIMAL.test(text)) throw new SourceError(source, `${where}: ${describeValue(value)} is not a decimal amount`);
  return text;
}

/** A count (orders done): a whole number ≥ 0, or null when absent or not one. */
export function countOf(value: unknown): number | null {
  const text = literalOf(value);
  if (text === undefined || !/^\d{1,15}$/.test(text)) return null;
  return Number(text);
}

/**
 * A completion rate as a percent 0–100: `scale` is 100 for an exchange that sends a fraction
 * (Binance's 0.98), 1 for one that sends a percent already. Null when absent or out of range.
 */
export function percentOf(value: unknown, scale: 1 | 100): number | null {
  const text = literalOf(value);
  if (text === undefined || text === '' || !DECIMAL.test(text.replace(/%$/, ''))) return null;
  const percent = new Decimal(text.replace(/%$/, '')).times(scale);
  return percent.gt(100) ? null : percent.toNumber();
}

/** A list the answer must carry; SourceError when it is missing or not an array. */
export function listOf(source: SourceName, value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new SourceError(source, `the answer has no ${where} list`);
  return value;
}

/** A name or id as text (`String(75)` → "75"); undefined for anything else. */
export function textOf(value: unknown): string | undefined {
  const text = literalOf(value);
  return text === undefined || text === '' ? undefined : text;
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = literalOf(value);
  return text !== undefined ? JSON.stringify(text.slice(0, 40)) : (JSON.stringify(value)?.slice(0, 40) ?? String(value));
}

// ---- Reading the operator's options -----------------------------------------------------------

/** `options.pay_methods` as a list of non-empty strings (anything else: none). */
export function payMethodsOption(options: Record<string, unknown>): string[] {
  const given = options.pay_methods;
  if (!Array.isArray(given)) return [];
  return given.filter((m): m is string | number => (typeof m === 'string' && m.trim() !== '') || typeof m === 'number').map((m) => String(m).trim());
}

/** `options.amount` (the probe, in the currency) as a decimal string, or undefined. */
export function amountOption(options: Record<string, unknown>): string | undefined {
  const given = options.amount;
  const text = typeof given === 'number' && Number.isFinite(given) ? String(given) : typeof given === 'string' ? given.trim() : undefined;
  return text !== undefined && DECIMAL.test(text) ? text : undefined;
}

/** `options.page_size` (or `rows`) as a whole number ≥ 1, at most `max`; the default when not one. */
export function pageSizeOption(options: Record<string, unknown>, fallback: number, max: number): number {
  const given = options.page_size ?? options.rows;
  return typeof given === 'number' && Number.isInteger(given) && given >= 1 ? Math.min(given, max) : fallback;
}
