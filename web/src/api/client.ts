/**
 * The one way the app talks to Kassir: same-origin fetch with the session cookie, the CSRF token
 * on every change, and the spec's error body turned into an ApiError. A risky action answered
 * 403 AUTH_004 asks the person to confirm it is them (ConfirmIdentity) and is then sent again. A
 * session that ended (401 AUTH_001) asks them to sign in again over the screen they are on
 * (SignInAgain), which stays as it was, and the request is then sent again; any other error —
 * a wrong code (400 AUTH_005) among them — is the caller's to show: every failure is an ApiError
 * (no answer at all: status 0, code NETWORK), which i18n/errors.ts describes in the person's language.
 */
export interface ErrorBody {
  error: string;
  message: string;
  data?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly data: Record<string, unknown> | undefined;

  constructor(status: number, body: ErrorBody) {
    super(body.message);
    this.status = status;
    this.code = body.error;
    this.data = body.data;
  }
}

let csrfToken: string | null = null;
/** Remembers the CSRF token answered at sign-in and by GET /auth/v1/me. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

type Confirmer = (method: 'otp' | 'password') => Promise<boolean>;
let confirmer: Confirmer | null = null;
/** Registered by the ConfirmIdentity dialog: asks for a code or the password, true once confirmed. */
export function setConfirmer(fn: Confirmer | null): void {
  confirmer = fn;
}

let onSignedOut: (() => void) | null = null;
/** Called when the session has ended (401 AUTH_001 on a call that needed it) and no one signed in again over the screen. */
export function setSignedOutHandler(fn: (() => void) | null): void {
  onSignedOut = fn;
}

type Reauthenticator = () => Promise<boolean>;
let reauthenticator: Reauthenticator | null = null;
let reauthenticating: Promise<boolean> | null = null;
/** Registered by the SignInAgain dialog: asks the person to sign in again over the current screen; true once they did. */
export function setReauthenticator(fn: Reauthenticator | null): void {
  reauthenticator = fn;
}

/** Asks the person to sign in again (one dialog for every request that found the session ended at the same time); true once they did. */
export function signInAgain(): Promise<boolean> {
  if (!reauthenticator) return Promise.resolve(false);
  reauthenticating ??= reauthenticator().finally(() => {
    reauthenticating = null;
  });
  return reauthenticating;
}

/** Answers that say the session has ended, as opposed to a wrong password or code (400 AUTH_005) or a sign-in refused. */
function sessionEnded(status: number, code: string, path: string): boolean {
  return status === 401 && code === 'AUTH_001' && !path.startsWith('/auth/v1/login') && !path.startsWith('/auth/v1/me');
}

export type Query = Record<string, string | number | boolean | undefined | null>;

/** `path` with the defined query parameters appended. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** A call to Kassir: `body` is sent as JSON, or as multipart when it is FormData (a file upload); `extra` adds headers (an Idempotency-Key). */
export async function api<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const payload = body === undefined ? undefined : form ? body : JSON.stringify(body);
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  } catch {
    // No answer at all (offline, the server unreachable): a code of its own, which the screens name (i18n/errors.ts).
    throw new ApiError(0, { error: 'NETWORK', message: 'No connection to the server' });
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed = parseBody(text);
  if (response.ok) return parsed as T;
  const error = new ApiError(response.status, isErrorBody(parsed) ? parsed : { error: `HTTP_${response.status}`, message: response.statusText });
  if (error.code === 'AUTH_004' && confirmer) {
    const method2 = error.data?.method === 'otp' ? 'otp' : 'password';
    if (await confirmer(method2)) return api<T>(method, path, body, extra);
  }
  if (sessionEnded(response.status, error.code, path)) {
    // Over the screen the person is on: what they typed stays, and the request goes again once they are back.
    if (await signInAgain()) return api<T>(method, path, body, extra);
    onSignedOut?.();
  }
  throw error;
}

/** A body as JSON; something else (a proxy's HTML page) as nothing, so that its status speaks instead. */
function parseBody(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The spec's error body: `{error, message, data?}`. */
function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).error === 'string' && typeof (value as ErrorBody).message === 'string';
}

export const get = <T>(path: string, query?: Query) => api<T>('GET', withQuery(path, query));
export const post = <T>(path: string, body: unknown = {}, headers?: Record<string, string>) => api<T>('POST', path, body, headers);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const put = <T>(path: string, body: unknown) => api<T>('PUT', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path);
