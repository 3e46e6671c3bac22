/**
 * The API session every command opens: the operator token and base URL from the global options, one
 * call to the operator API with its failures named, and `--json` (print the answer as is) or a readable rendering.
 */
import type { Command } from 'commander';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A failure to report on stderr before exiting with status 1. */
export class CliError extends Error {}

export interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
}

/** KASSIR_URL, else where `npm start` listens by default (HOST / PORT of the runtime contract). */
export function defaultUrl(env: NodeJS.ProcessEnv): string {
  if (env.KASSIR_URL) return env.KASSIR_URL;
  let host = env.HOST || '127.0.0.1';
  // A server listening on every interface is reached through loopback.
  if (host === '0.0.0.0' || host === '::') host = '127.0.0.1';
  if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${env.PORT || '8080'}`;
}

const TOKEN_HELP =
  'no operator token: pass --token <token> or set ADMIN_TOKEN.\n' +
  'Kassir prints the token once, at its first start ("Operator token (shown once, store it now)").\n' +
  'Lost it? Restart Kassir with ADMIN_TOKEN=<a token of your choice> and use that token here.';

/** What a command needs: an API caller and the output mode, from the global options. */
export interface Session {
  json: boolean;
  api<T = JsonObject>(method: string, path: string, body?: Json): Promise<T>;
  /** A GET of a route that answers text (a TSV export): the body as sent. */
  text(path: string): Promise<string>;
}

export function session(command: Command): Session {
  const options = command.optsWithGlobals<GlobalOptions>();
  const token = options.token || process.env.ADMIN_TOKEN;
  if (!token) throw new CliError(TOKEN_HELP);
  let base: URL;
  try {
    base = new URL(options.url);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new CliError(`--url must be an http(s) URL such as http://127.0.0.1:8080, got "${options.url}"`);
  }
  const root = base.toString().replace(/\/+$/, '');
  return {
    json: options.json === true,
    api: (method, path, body) => request(root, token, method, path, body),
    text: (path) => request(root, token, 'GET', path, undefined, true),
  };
}

const TIMEOUT_MS = 30_000;

/** One call to the operator API; answers the parsed body or throws a CliError naming the failure. */
async function request<T>(root: string, token: string, method: string, path: string, body?: Json, asText = false): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${root}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: asText ? 'text/*' : 'application/json',
        // No content-type without a body: the server refuses an empty JSON body.
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        // One key per invocation: the operator's money routes do this call once, however often it reaches them (docs/idempotency.md).
        ...(method === 'POST' ? { 'idempotency-key': crypto.randomUUID() } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    if (err instanceof Error && err.name === 'TimeoutError') {
      throw new CliError(`Kassir at ${root} did not answer within ${TIMEOUT_MS / 1000} s`);
    }
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const unreachable = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET'];
    if (cause?.code && unreachable.includes(cause.code)) {
      throw new CliError(`cannot reach Kassir at ${root}: is it running? (npm start)`);
    }
    throw new CliError(`request to ${root} failed: ${cause?.message ?? (err as Error).message}`);
  }
  const text = await response.text();
  if (asText && response.ok) return text as T;
  let parsed: unknown;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    throw new CliError(`${root} answered HTTP ${response.status} with something other than JSON: is this a Kassir server?`);
  }
  if (!response.ok) {
    const error = parsed as { error?: unknown; message?: unknown; data?: unknown } | null;
    if (error && typeof error.error === 'string') {
      const data = error.data === undefined ? '' : `\n  data: ${JSON.stringify(error.data)}`;
      throw new CliError(`error ${error.error}: ${String(error.message ?? '')}${data}`);
    }
    throw new CliError(`error HTTP ${response.status}: ${text.slice(0, 500)}`);
  }
  return parsed as T;
}

export const id = (value: string) => encodeURIComponent(value);

/** `--json` prints the API's answer as is; otherwise `readable` renders it. */
export function output<T>(s: Session, body: T, readable: (body: T) => void): void {
  if (s.json) console.log(JSON.stringify(body, null, 2));
  else readable(body);
}
