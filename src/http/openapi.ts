import type { SwaggerOptions, SwaggerTransformObject } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { ERRORS, type ErrorKey } from '../errors.js';
import { HTTP_STATUS } from './errors.js';
import { operationIdOf, securityOf } from './openapi-operations.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The domain errors this route answers on its own, each with what it means here. A route that
     * sets it (`{}` when it has none of its own) gets its error responses in the OpenAPI document:
     * these and the ones every route of its kind can answer (authentication, idempotency, bodies,
     * the database away), see routeErrors. Every /v1 route sets it (test/docs.test.ts); a route of
     * the other APIs gets its kind's errors without it (AUDIENCES). `false` says the route never
     * answers a code its kind would suggest (a list under an `{id}` that does not look the id up).
     */
    errors?: Partial<Record<ErrorKey, string | false>>;
    /**
     * The body as the OpenAPI document shows it, for a route that reads its own body (an upload):
     * documentation only, never validated — a `body` schema would have Fastify validate a stream.
     */
    documentedBody?: DocumentedBody;
    /**
     * The success answers as the OpenAPI document shows them (`{ 200: schema }`), for a route whose
     * answer Fastify does not serialise with a `response` schema: documentation only, never used
     * to serialise, so the answer is exactly what the handler returns. The suite checks every
     * answer against it (test/answer-checks.ts).
     */
    documentedResponse?: Record<number, unknown>;
  }
}

/** A body as documented for a route that reads its own: each content type's schema, and whether it may be empty. */
export interface DocumentedBody {
  required: boolean;
  description: string;
  content: Record<string, { schema: unknown }>;
}

/** Carries a documented body's `required` and description from the route to the operation (swagger sets neither for a `content` body). */
const BODY_MARK = 'x-kassir-body';

/** The optional header of every signed POST (src/http/idempotency.ts; docs/idempotency.md). */
const IDEMPOTENCY_HEADERS = {
  type: 'object',
  properties: {
    'Idempotency-Key': {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'Optional: a key of your choice (e.g. a UUID) that makes a retry of this request safe; see Idempotency',
    },
  },
};

/**
 * The signing scheme's worked examples (spec "Authentication"; DESIGN.md decision 2), shown in the
 * document's introduction. The signatures were computed once, with openssl, and are written here
 * as literals: test/docs.test.ts recomputes them with src/http/signature.ts, so the documentation
 * and the service cannot disagree.
 */
export const SIGNING_EXAMPLES = {
  secretKey: 'sk_GUwOoc2mC9HQAIwQ1hJPxWoUZf0UW4rQOjQnSe41k_s',
  apiKey: 'tk_BiRXKswAxzzZZf2YGv_nk4VicoyNxRV8',
  baseUrl: 'https://kassir.example.com',
  requests: [
    {
      method: 'POST',
      path: '/v1/payments',
      body: '{"ext_id":"order-1001","amount":1500,"currency":"RUB","method":"CARD"}',
      signature: 'f0RpqJLQmv1djtEq3QunYONKKLw=',
    },
    {
      method: 'GET',
      path: '/v1/payouts?status=completed&limit=10',
      body: '',
      signature: 'JIbNmoD8xtHYMwbMT82Ga8ymuzY=',
    },
  ],
} as const;

/** Sections of the document: each tag's title and what it holds; the groups put the merchant's first. */
const TAGS = [
  { name: 'payments', 'x-displayName': 'Payments', description: 'Pay-in: create a payment, read it, signal the transfer, attach a receipt.' },
  { name: 'disputes', 'x-displayName': 'Disputes', description: 'Open a dispute on a cancelled payment, or cancel it.' },
  { name: 'payouts', 'x-displayName': 'Payouts', description: 'Pay RUB out to a card or by SBP.' },
  { name: 'withdrawals', 'x-displayName': 'Withdrawals', description: 'Withdraw USDT from a terminal balance to a TRC-20 wallet.' },
  { name: 'balances', 'x-displayName': 'Terminals and balances', description: 'Terminals with their USDT balances, and transfers between them.' },
  { name: 'directory', 'x-displayName': 'Bank directory', description: 'Banks and operators whose codes payment creation takes. Public: no signature.' },
  {
    name: 'merchant cabinet',
    'x-displayName': 'Merchant cabinet',
    description: "A merchant's people signed in (session cookie): their own payments, payouts and withdrawals.",
  },
  { name: 'operator', 'x-displayName': 'Operator', description: 'Running the aggregator: `Authorization: Bearer <ADMIN_TOKEN>`, or a staff session by role.' },
  {
    name: 'executor',
    'x-displayName': 'Executor',
    description: "Executors (P2P traders): `Authorization: Bearer <executor token>` or the executor's own session.",
  },
  { name: 'device', 'x-displayName': 'Device', description: "An executor's phone forwarding bank messages: `Authorization: Bearer <device token>`." },
  { name: 'people', 'x-displayName': 'Sign-in and people', description: 'Sign-in, sessions and two-factor for people (staff, executors, merchants).' },
  {
    name: 'telegram',
    'x-displayName': 'Telegram',
    description:
      "A signed-in person's own Telegram link, the same routes under `/executor/v1`, `/auth/v1` (staff) and `/merchant/v1`: a one-time code (`/start <code>` to the bot), the messages' language and switches, unlinking.",
  },
];

const TAG_GROUPS = [
  { name: 'Merchant API', tags: ['payments', 'disputes', 'payouts', 'withdrawals', 'balances', 'directory'] },
  { name: 'Merchant cabinet', tags: ['merchant cabinet'] },
  { name: 'Operator API', tags: ['operator'] },
  { name: 'Executor API', tags: ['executor'] },
  { name: 'Device API', tags: ['device'] },
  { name: 'People', tags: ['people', 'telegram'] },
];

/** What the merchant is told each error means when the route says nothing more particular. */
const ERROR_NOTES: Partial<Record<ErrorKey, string>> = {
  AUTH_001: 'The `X-Identity` or `X-Signature` header is missing',
  AUTH_002: 'Unknown API key, or the signature does not match',
  AUTH_003: 'The terminal of this API key is inactive',
  CONFLICT: 'The `Idempotency-Key` was used for a different request, or its first request is still being answered (then with `Retry-After`)',
  PAYLOAD_TOO_LARGE: 'The body is larger than this route accepts',
  UNSUPPORTED_MEDIA_TYPE: 'The body is neither JSON nor, where the route takes a file, multipart/form-data',
  UNAVAILABLE: 'The service cannot reach its database or is overloaded: retry after the `Retry-After` seconds',
  SYS_001: 'Internal error: the message names the request id to quote to the operator',
  PAY_001: 'Internal error: the message names the request id to quote to the operator',
  VALIDATION: 'Invalid parameters (operator, executor, device and public routes): the message names the field',
};

/** The `data` of each example error body, where the service sends one. */
const ERROR_DATA: Partial<Record<ErrorKey, Record<string, unknown>>> = {
  PAY_003: { ext_id: 'order-1001' },
  PAY_004: { currency: 'RUB', method: 'CARD' },
  PAY_005: { amount: 1500, pending: 3 },
  PAY_008: { status: 'COMPLETED' },
  DIS_001: { status: 'PENDING' },
  DIS_002: { status: 'DISPUTE' },
  DIS_003: { status: 'CANCELLED' },
  TRF_002: { terminal_id: '0b9f2a57-3c1e-4d8a-9f6b-2e7c5d4a1b30' },
  TRF_003: { available: 12.5 },
  WDR_002: { available: 12.5, required: 101.5 },
  UNAVAILABLE: { retry_after: 2 },
};

/** The code a caller sees for a key (usually the key itself). */
function codeOf(key: ErrorKey): string {
  return (ERRORS[key] as { code?: string }).code ?? key;
}

/** What decides a route's authentication errors on the APIs other than the merchant's. */
interface RouteFacts {
  /** Not a GET: a session must send its CSRF token. */
  changes: boolean;
  /** The staff role an operator route declares (src/http/access.ts). */
  access?: string;
  /** A risky route: a person must have confirmed it is them (`config.confirm`). */
  confirm?: boolean;
}

const CSRF_NOTE = 'or, with a session, the `X-CSRF-Token` header is missing or not the session’s';
const CONFIRM_NOTE =
  'A person signed in has not confirmed it is them in the last five minutes: `POST /auth/v1/confirm` (`data.method` says with a code or the password), then repeat the request';
const SIGNED_OUT_NOTE = 'Not signed in: no session cookie, or the session has ended or expired';
const PASSWORD_CHANGE_NOTE =
  'The person signed in with a password generated for them (a new sign-in, or an admin’s reset): they choose their own first (`POST /auth/v1/password`)';

/**
 * The APIs besides the merchant's, by path prefix (src/http/routes.ts), each with the errors its
 * authentication answers (src/http/access.ts and the group's own check: executor-auth,
 * device-auth, merchant-session-auth). A route of one of them gets these, its own (schema.errors)
 * and those every route can answer; see routeErrors.
 */
const AUDIENCES: { prefix: string; errors: (route: RouteFacts) => [ErrorKey, string][]; scope?: string }[] = [
  {
    prefix: '/admin/v1/',
    errors: ({ changes, access, confirm }) => [
      ['AUTH_001', 'No `Authorization: Bearer <ADMIN_TOKEN>` header (or not in that form) and no session cookie, or the session has ended'],
      ['AUTH_002', 'The bearer token is not the operator token'],
      [
        'AUTH_003',
        `The person signed in ${access === 'admin' ? 'is not an admin' : `has no \`${access}\` role or above`}, is not operator staff, or must enrol two-factor first${changes ? `; ${CSRF_NOTE}` : ''}`,
      ],
      ['PASSWORD_CHANGE_REQUIRED', PASSWORD_CHANGE_NOTE],
      ...(confirm ? [['CONFIRM_REQUIRED', CONFIRM_NOTE] as [ErrorKey, string]] : []),
    ],
  },
  {
    prefix: '/executor/v1/',
    scope: ' among the executor’s',
    errors: ({ changes, confirm }) => [
      ['AUTH_001', 'No `Authorization: Bearer <executor token>` header and no session cookie, or the session has ended'],
      ['AUTH_002', 'Unknown executor token'],
      ['AUTH_003', `The executor is switched off, or the person signed in is not an executor${changes ? `; ${CSRF_NOTE}` : ''}`],
      ...(confirm ? [['CONFIRM_REQUIRED', CONFIRM_NOTE] as [ErrorKey, string]] : []),
    ],
  },
  {
    // The forwarders' webhooks carry the device token in the path; each request is signed.
    prefix: '/device/v1/hooks/',
    errors: () => [
      [
        'AUTH_002',
        'The device token in the path is unknown or revoked, or its executor is switched off; or the request is not signed with the device’s signing secret (signature missing or wrong, the phone’s clock off, a timestamp used before)',
      ],
    ],
  },
  {
    prefix: '/device/v1/',
    errors: () => [
      ['AUTH_001', 'No `Authorization: Bearer <device token>` header'],
      ['AUTH_002', 'The device token is unknown or revoked, or its executor is switched off'],
    ],
  },
  {
    prefix: '/auth/v1/',
    scope: ' among yours',
    errors: ({ changes, access, confirm }) =>
      access === 'public'
        ? []
        : [
            ['AUTH_001', SIGNED_OUT_NOTE],
            ...(changes ? [['AUTH_003', 'The `X-CSRF-Token` header is missing or not the session’s'] as [ErrorKey, string]] : []),
            ...(confirm ? [['CONFIRM_REQUIRED', CONFIRM_NOTE] as [ErrorKey, string]] : []),
          ],
  },
  {
    prefix: '/merchant/v1/',
    scope: ' among the merchant’s',
    errors: ({ changes, confirm }) => [
      ['AUTH_001', SIGNED_OUT_NOTE],
      ['AUTH_003', `The person signed in is not a merchant’s${changes ? '; or the `X-CSRF-Token` header is missing or not the session’s' : ''}`],
      ...(confirm ? [['CONFIRM_REQUIRED', CONFIRM_NOTE] as [ErrorKey, string]] : []),
    ],
  },
];

/** The API a route belongs to when it is not the merchant's, by its path. */
function audienceOf(url: string | undefined) {
  return url === undefined ? undefined : AUDIENCES.find((audience) => url.startsWith(audience.prefix));
}

/** The path parameters that name one object (`:id`, `:deviceId`, `:code`), each with what it names: `executor`, `device`. */
function idParams(url: string): [string, string][] {
  return [...url.matchAll(/([^/:]+)\/:(id|\w+Id|code)(?=\/|$)/g)].map(([, segment, param]) => [
    param!,
    param === 'id' || param === 'code' ? segment!.replace(/s$/, '').replaceAll('-', ' ') : param!.replace(/Id$/, ''),
  ]);
}

/**
 * Every error a route can answer: its own (schema.errors) and those of its kind — a signed route's
 * authentication, or that of the API it belongs to (AUDIENCES: who may call it, a confirmation
 * for a risky one, NOT_FOUND for an object named in the path), a POST's body and
 * Idempotency-Key, invalid input, the database away or the service overloaded, and an internal
 * error — each with its note.
 */
export function routeErrors(route: Pick<RouteOptions, 'method' | 'url' | 'config' | 'schema'>): Map<ErrorKey, string> {
  const own = route.schema?.errors ?? {};
  const config = route.config ?? {};
  const methods = [route.method].flat();
  const changes = methods.some((method) => method !== 'GET' && method !== 'HEAD');
  const errors = new Map<ErrorKey, string>();
  const never = new Set(Object.keys(own).filter((key) => own[key as ErrorKey] === false));
  const add = (key: ErrorKey, note?: string) => {
    if (!errors.has(key) && !never.has(key)) errors.set(key, note ?? ERROR_NOTES[key] ?? ERRORS[key].message);
  };
  for (const [key, note] of Object.entries(own) as [ErrorKey, string | false][]) if (note !== false) add(key, note);
  if (config.signed) {
    add('AUTH_001');
    add('AUTH_002');
    add('AUTH_003');
  }
  const audience = audienceOf(route.url);
  if (audience) {
    // A route's own note on an authentication code (two-factor required) adds to the API's.
    for (const [key, note] of audience.errors({ changes, access: config.access, confirm: config.confirm })) {
      if (never.has(key)) continue;
      errors.set(key, errors.has(key) ? `${errors.get(key)}; or ${note[0]!.toLowerCase()}${note.slice(1)}` : note);
    }
    // An object named in the path that is not there (another's is not there either), unless the route says which code it answers.
    const names = idParams(route.url!);
    if (names.length > 0 && ![...errors.keys()].some((key) => HTTP_STATUS[key] === 404)) {
      const missing = names.map(([param, what]) => `no ${what} with this \`${param}\`${audience.scope ?? ''}`).join(', or ');
      add('NOT_FOUND', missing.replace(/^n/, 'N'));
    }
  }
  add(config.invalidCode ?? 'VALIDATION', config.invalidCode ? 'Invalid parameters: the message names the field' : undefined);
  if (changes) {
    add('PAYLOAD_TOO_LARGE');
    add('UNSUPPORTED_MEDIA_TYPE');
    if (config.signed && methods.includes('POST')) add('CONFLICT');
    if (config.idempotencyKey) {
      const note = ERROR_NOTES.CONFLICT!;
      errors.set('CONFLICT', errors.has('CONFLICT') ? `${errors.get('CONFLICT')}; or ${note[0]!.toLowerCase()}${note.slice(1)}` : note);
    }
  }
  add(config.internalCode ?? 'SYS_001');
  add('UNAVAILABLE');
  return errors;
}

/** One status's error response: the spec's body `{error, message, data?}`, its codes, an example of each. */
function errorResponse(errors: [ErrorKey, string][]) {
  const codes = [...new Set(errors.map(([key]) => codeOf(key)))];
  // The content form: always JSON, whatever the route's success answer is (a receipt download's is a file).
  return {
    description: errors.map(([key, note]) => `- \`${codeOf(key)}\`: ${note}`).join('\n'),
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['error', 'message'],
          properties: {
            error: { type: 'string', enum: codes, description: 'The error code' },
            message: { type: 'string', description: 'What went wrong, in a sentence' },
            data: { type: 'object', additionalProperties: true, description: 'Context, when there is some (e.g. `status` for PAY_008, `ext_id` for PAY_003)' },
          },
        },
        examples: Object.fromEntries(
          errors.map(([key, note]) => {
            const data = ERROR_DATA[key];
            return [
              codeOf(key),
              {
                summary: `${codeOf(key)}: ${note.replaceAll('`', '')}`,
                value: { error: codeOf(key), message: ERRORS[key].message, ...(data ? { data } : {}) },
              },
            ];
          }),
        ),
      },
    },
  };
}

/**
 * The document's view of a route (the swagger `transform`, run when the document is built, after
 * every onRoute hook has settled the route's config): a route that declares its errors, and every
 * route of the operator, executor, device, sign-in and merchant cabinet APIs (AUDIENCES), gets
 * one response per error status, listing each code it can answer there with an example body; an
 * upload route shows the body it reads. The route's own schemas, which Fastify validates and
 * serialises with, are not touched.
 */
export function documentRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }): { schema: FastifySchema; url: string } {
  const security = schema?.security ?? securityOf(url, route.config?.access);
  schema = { ...schema, operationId: schema?.operationId ?? operationIdOf([route.method].flat()[0]!, url), ...(security ? { security } : {}) };
  if (schema.documentedResponse) schema = { ...schema, response: { ...schema.documentedResponse, ...(schema.response as object | undefined) } };
  if (schema?.documentedBody) {
    const { required, description, content } = schema.documentedBody;
    schema = { ...schema, body: { content }, [BODY_MARK]: { required, description } } as FastifySchema;
  }
  if (schema && (route.config?.signed || route.config?.idempotencyKey) && [route.method].flat().includes('POST') && !schema.headers) {
    schema = { ...schema, headers: IDEMPOTENCY_HEADERS };
  }
  if (!schema?.errors && !audienceOf(url)) return { schema, url };
  const byStatus = new Map<number, [ErrorKey, string][]>();
  for (const [key, note] of routeErrors({ ...route, schema })) {
    const status = HTTP_STATUS[key];
    byStatus.set(status, [...(byStatus.get(status) ?? []), [key, note]]);
  }
  const response: Record<string, unknown> = {};
  for (const [status, value] of Object.entries((schema.response ?? {}) as Record<string, unknown>)) {
    if (!/^[45]/.test(status)) response[status] = value;
  }
  for (const status of [...byStatus.keys()].sort()) response[status] = errorResponse(byStatus.get(status)!);
  return { schema: { ...schema, response }, url };
}

/** Applies what documentRoute marked on an operation that the route-level transform cannot set. */
export const finishDocument: SwaggerTransformObject = (documentObject) => {
  if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
  const document = documentObject.openapiObject as { paths?: Record<string, Record<string, Record<string, unknown>>> };
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const mark = operation[BODY_MARK] as { required: boolean; description: string } | undefined;
      if (!mark) continue;
      delete operation[BODY_MARK];
      const body = operation.requestBody as { required?: boolean; description?: string } | undefined;
      if (body) Object.assign(body, mark);
    }
  }
  return documentObject.openapiObject;
};

/** The list of every error code in the introduction, from the catalogue itself (a list: the column is narrow for a table). */
function errorList(): string {
  const lines = new Map<string, string>();
  for (const key of Object.keys(ERRORS) as ErrorKey[]) {
    lines.set(`${codeOf(key)} ${HTTP_STATUS[key]}`, `- \`${codeOf(key)}\` (${HTTP_STATUS[key]}): ${ERROR_NOTES[key] ?? ERRORS[key].message}`);
  }
  return [...lines.values()].join('\n');
}

/** The introduction: who the API is for, signing with a worked example, idempotency, errors, webhooks. */
function introduction(): string {
  const { secretKey, apiKey, baseUrl, requests } = SIGNING_EXAMPLES;
  const [post, get] = requests;
  return `Kassir is a self-hostable payment aggregator. This reference starts with the **merchant API** (\`/v1\`): payments, disputes, payouts, withdrawals, terminals and balances, and the public bank directory. The operator, executor, device and sign-in APIs follow in their own sections. All bodies are JSON unless stated, all timestamps ISO 8601 in UTC, amounts are JSON numbers.

## Authentication

Every merchant request except \`GET /v1/public/banks\` carries two headers:

- \`X-Identity\`: the API key of the terminal the request goes through (issued by the operator).
- \`X-Signature\`: \`base64(HMAC-SHA1(secret_key, METHOD + URL + BODY))\`, where
  - \`secret_key\` is the merchant's Secret Key, shared by all its terminals;
  - \`METHOD\` is the HTTP method in upper case;
  - \`URL\` is the service's public base URL followed by the path **and query string exactly as sent**;
  - \`BODY\` is the request body **exactly as sent**, byte for byte (for multipart/form-data the whole body, boundaries and file content included); empty when there is no body.

The three parts are joined with nothing between them. A missing header answers \`401 AUTH_001\`, an unknown key or a signature that does not match \`401 AUTH_002\`, an inactive terminal \`403 AUTH_003\`.

### Worked example

With the Secret Key \`${secretKey}\` and the API key \`${apiKey}\`, the service at \`${baseUrl}\`:

**${post.method} ${post.path}** with the body

\`\`\`json
${post.body}
\`\`\`

signs the string

\`\`\`
${post.method}${baseUrl}${post.path}${post.body}
\`\`\`

so the request carries \`X-Signature: ${post.signature}\`:

\`\`\`sh
SECRET='${secretKey}'
BODY='${post.body}'
SIG=$(printf '%s' "${post.method}${baseUrl}${post.path}$BODY" | openssl dgst -sha1 -hmac "$SECRET" -binary | base64)
# SIG is ${post.signature}
curl ${baseUrl}${post.path} -H 'Content-Type: application/json' \\
  -H 'X-Identity: ${apiKey}' -H "X-Signature: $SIG" --data-raw "$BODY"
\`\`\`

**${get.method} ${get.path}** has no body: the string signed is \`${get.method}${baseUrl}${get.path}\`, and \`X-Signature: ${get.signature}\`.

In Node.js:

\`\`\`js
import { createHmac } from 'node:crypto';
const signature = createHmac('sha1', secretKey)
  .update(method + baseUrl + pathAndQuery)
  .update(body) // the exact bytes sent; '' without a body
  .digest('base64');
\`\`\`

Send exactly the bytes you signed: re-serialising the JSON after signing (other spacing, other key order) breaks the signature.

## Idempotency

A signed JSON \`POST\` may carry \`Idempotency-Key\` (1 to 255 printable characters, e.g. a UUID). The first answer to a key is kept for 24 hours and replayed for the same request with \`Idempotent-Replayed: true\`; the same key with a different request answers \`409 CONFLICT\`. 5xx answers are not kept, so a failed request can be retried with its key.

## Errors

Every error has the body \`{"error": CODE, "message": text, "data"?: {…}}\`. Each operation lists the codes it can answer under each status. All codes:

${errorList()}

## Operator, executor and device APIs

The operator API (\`/admin/v1\`) takes \`Authorization: Bearer <ADMIN_TOKEN>\` on every route, or a person signed in with \`POST /auth/v1/login\` (the \`kassir_session\` cookie, and \`X-CSRF-Token\` on changes): each operator route says which role it needs, and risky ones answer \`403 AUTH_004\` until \`POST /auth/v1/confirm\`. The executor API (\`/executor/v1\`) takes the executor's bearer token or the executor's own session; the device API (\`/device/v1\`) a device token. Their errors have the same body.

## Webhooks

Payments and payouts created with \`notify_url\` get a \`POST\` there on every status change: \`{"event": "payment.completed", "id": "<event uuid>", "created_at": "…", "data": <the resource as GET returns it>}\` (events \`payment.<status in lower case>\` and \`payout.<status>\`), with the headers \`X-Event-Id\`, \`X-Notification-Token\` (when given at creation) and \`X-Signature\` = \`base64(HMAC-SHA1(secret_key, BODY))\`. Answer 2xx to acknowledge; anything else is retried with backoff for at least 24 hours, in order per resource.`;
}

/** @fastify/swagger's options: the OpenAPI 3.1 header, sections, security schemes, and the error responses of each route. */
export function swaggerOptions(baseUrl: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Kassir API',
        version: '1.0.0',
        description: introduction(),
      },
      servers: [{ url: baseUrl }],
      tags: TAGS,
      // Read by the reference at /docs (and Redoc): the merchant's sections come first.
      ...({ 'x-tagGroups': TAG_GROUPS } as object),
      components: {
        securitySchemes: {
          identity: { type: 'apiKey', in: 'header', name: 'X-Identity', description: "The terminal's API key" },
          signature: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Signature',
            description: 'base64(HMAC-SHA1(secret_key, METHOD + URL + BODY)): see Authentication',
          },
          operator: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN, or an executor or device token on their APIs' },
          session: { type: 'apiKey', in: 'cookie', name: 'kassir_session' },
          csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'The csrf_token of the sign-in, on every change made with the session' },
        },
      },
    },
    transform: documentRoute,
    transformObject: finishDocument,
  };
}
