/**
 * Checks every answer the service gives anywhere in the suite (a vitest setup file, so that each
 * test file's requests are checked, whatever they test), and fails the test that got an answer
 * that breaks one of these rules:
 *
 * - a 2xx JSON answer of a documented operation fits the schema /openapi.json gives for it
 *   (JSON Schema 2020-12, as test/docs.test.ts reads the document): the document is checked against
 *   what the service really answers, not only against itself;
 * - an answer that carries a secret (a key, a token, a password, a two-factor secret or recovery
 *   codes, a CSRF token) has `Cache-Control: no-store`, so no browser or proxy keeps it;
 * - every JSON and CSV answer has `X-Content-Type-Options: nosniff`.
 *
 * Nothing of this runs in the service itself: the hooks are added through Fastify's
 * `fastify.initialization` diagnostics channel, to the Kassir apps the tests start (those that
 * serve the OpenAPI document), so the production paths carry no per-request cost.
 */
import { subscribe } from 'node:diagnostics_channel';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { afterEach } from 'vitest';

/** The names of the fields whose values are secrets (their answers must not be stored anywhere). */
export const SECRET_FIELDS = new Set(['secret_key', 'api_key', 'token', 'signing_secret', 'password', 'secret', 'otpauth_url', 'recovery_codes', 'csrf_token']);

/** The answers that broke a rule since the last test ended. */
const problems: string[] = [];
/** Per app: its document's 2xx schemas compiled, by `METHOD /path status content-type`. */
const validators = new WeakMap<FastifyInstance, Map<string, ValidateFunction | null>>();
const answers = new WeakMap<FastifyRequest, string>();

interface DocumentOperation {
  responses?: Record<string, { content?: Record<string, { schema?: object }> }>;
}

function ajv2020(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  return ajv;
}

/** The validator of one operation's answer, from the app's own document; null when it documents none. */
function validatorFor(app: FastifyInstance, method: string, url: string, status: number, type: string): ValidateFunction | null {
  let byOperation = validators.get(app);
  if (!byOperation) {
    byOperation = new Map();
    validators.set(app, byOperation);
  }
  const key = `${method} ${url} ${status} ${type}`;
  if (!byOperation.has(key)) {
    const document = (app as unknown as { swagger(): { paths?: Record<string, Record<string, DocumentOperation>> } }).swagger();
    const path = url.replace(/:(\w+)/g, '{$1}');
    const schema = document.paths?.[path]?.[method.toLowerCase()]?.responses?.[String(status)]?.content?.[type]?.schema;
    byOperation.set(key, schema ? ajv2020().compile(schema) : null);
  }
  return byOperation.get(key)!;
}

/** The secret fields anywhere in a JSON value. */
function secretsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) secretsIn(item, found);
  else if (value && typeof value === 'object') {
    for (const [name, inner] of Object.entries(value)) {
      if (SECRET_FIELDS.has(name) && inner !== null && inner !== '') found.push(name);
      else secretsIn(inner, found);
    }
  }
  return found;
}

/** One answer as the service sent it, kept for the checks that run after the test. */
interface Answer {
  app: FastifyInstance;
  method: string;
  route: string | undefined;
  url: string;
  status: number;
  type: string;
  cacheControl: string;
  nosniff: boolean;
  payload: string | undefined;
}

/** The answers of the test running, checked when it ends (so the checks never hold up the service's event loop mid-test: test/overload.test.ts measures it). */
const pending: Answer[] = [];

/** Checks one answer against the rules above, noting each broken one. */
function checkAnswer(answer: Answer): void {
  const { type, payload, route, method, status } = answer;
  const name = `${method} ${route ?? answer.url} → ${status}`;
  if ((type === 'application/json' || type === 'text/csv') && !answer.nosniff) {
    problems.push(`${name}: ${type} answer without X-Content-Type-Options: nosniff`);
  }
  if (type !== 'application/json' || payload === undefined || payload === '') return;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    problems.push(`${name}: the JSON answer cannot be parsed`);
    return;
  }
  // The document's examples show the fields that carry secrets, with made-up values.
  const secrets = route === '/openapi.json' ? [] : secretsIn(body);
  if (secrets.length > 0 && !/\bno-store\b/.test(answer.cacheControl)) {
    problems.push(`${name}: carries ${[...new Set(secrets)].join(', ')} without Cache-Control: no-store`);
  }
  if (status < 200 || status >= 300 || route === undefined || method === 'HEAD') return;
  const validate = validatorFor(answer.app, method, route, status, type);
  if (validate && !validate(body)) {
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(answer)'} ${e.message}`).join('; ');
    problems.push(`${method} ${route} → ${status} does not fit its documented schema: ${errors}`);
  }
}

subscribe('fastify.initialization', (message) => {
  const app = (message as { fastify: FastifyInstance }).fastify;
  app.addHook('onSend', async (request, _reply, payload) => {
    if (typeof payload === 'string') answers.set(request, payload);
    else if (Buffer.isBuffer(payload)) answers.set(request, payload.toString('utf8'));
    return payload;
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    // Only Kassir's own apps (the fakes of other services a test starts have no document).
    if (!request.server.hasDecorator('swagger')) return;
    pending.push({
      app: request.server,
      method: request.method,
      route: request.routeOptions.url,
      url: request.url.split('?')[0]!,
      status: reply.statusCode,
      type: String(reply.getHeader('content-type') ?? '')
        .split(';')[0]!
        .trim(),
      cacheControl: String(reply.getHeader('cache-control') ?? ''),
      nosniff: reply.getHeader('x-content-type-options') === 'nosniff',
      payload: answers.get(request),
    });
  });
});

afterEach(() => {
  for (const answer of pending.splice(0)) checkAnswer(answer);
  if (problems.length === 0) return;
  const found = problems.splice(0);
  throw new Error(`Answers broke the rules of test/answer-checks.ts:\n${[...new Set(found)].join('\n')}`);
});
