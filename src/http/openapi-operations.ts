/**
 * What the OpenAPI document says of each operation beyond its schemas: its `operationId` (client
 * generators name their methods by it) and its `security` (which credentials it takes; `[]` for a
 * public one), both from the route itself, so that a new route gets them without a list to keep.
 */

type Security = Record<string, string[]>[];
/** The operator's (or an executor's) bearer token, or a person's session with its CSRF token. */
const BEARER_OR_SESSION: Security = [{ operator: [] }, { session: [], csrf: [] }];
const SESSION: Security = [{ session: [], csrf: [] }];

/** Each API's path prefix, the word its operationIds start with, and the credentials it takes. */
const APIS: { prefix: string; name: string; security: (access: string | undefined) => Security }[] = [
  // Operator routes get theirs from operatorAccess (src/http/access.ts), with the role they need.
  { prefix: '/admin/v1/', name: 'admin', security: () => BEARER_OR_SESSION },
  { prefix: '/executor/v1/', name: 'executor', security: () => BEARER_OR_SESSION },
  // A forwarder app's webhook carries the device token in its path and is signed by the app: no header to declare.
  { prefix: '/device/v1/hooks/', name: 'device', security: () => [] },
  { prefix: '/device/v1/', name: 'device', security: () => [{ operator: [] }] },
  { prefix: '/auth/v1/', name: '', security: (access) => (access === 'public' ? [] : SESSION) },
  { prefix: '/merchant/v1/', name: 'cabinet', security: () => SESSION },
  // The merchant API's routes declare theirs (signed, or public for the bank directory).
  { prefix: '/v1/', name: '', security: () => [] },
];

/**
 * The names that the rule of operationIdOf would not choose well: a verb the path does not say
 * (`signIn` for POST /auth/v1/login), or a noun the path says in another form.
 */
const NAMED: Record<string, string> = {
  'GET /v1/public/banks': 'listBanks',
  'POST /v1/payments/:id/receipt': 'attachPaymentReceipt',
  'POST /v1/payments/:id/dispute': 'openPaymentDispute',
  'POST /auth/v1/login': 'signIn',
  'POST /auth/v1/logout': 'signOut',
  'POST /auth/v1/confirm': 'confirmIdentity',
  'POST /auth/v1/password': 'changePassword',
  'DELETE /auth/v1/sessions/:id': 'endSession',
  'POST /executor/v1/notifications': 'executorSendNotification',
  'GET /executor/v1/payments/pending': 'executorListPendingPayments',
  'POST /device/v1/messages': 'deviceSendMessage',
  'POST /device/v1/hooks/:token/:format': 'deviceReceiveForwardedMessage',
  'POST /admin/v1/users/:id/password': 'adminResetUserPassword',
  'PUT /admin/v1/two-factor-roles': 'adminSetTwoFactorRoles',
  'POST /admin/v1/executors/:id/login': 'adminCreateExecutorSignIn',
  'POST /admin/v1/merchants/:id/users': 'adminCreateMerchantSignIn',
  'GET /admin/v1/audit': 'adminListAuditEntries',
  'GET /admin/v1/ledger/check': 'adminCheckLedger',
  'PUT /admin/v1/terminals/:id/routes': 'adminSetTerminalRoutes',
  'GET /admin/v1/reports/merchants': 'adminReportByMerchant',
  'GET /admin/v1/reports/executors': 'adminReportByExecutor',
};

const isParam = (segment: string) => segment.startsWith(':') || segment.startsWith('{');
const isPlural = (word: string) => word.endsWith('s') && !/(ss|us)$/.test(word);
const singular = (word: string) => (word.endsWith('ies') ? `${word.slice(0, -3)}y` : isPlural(word) ? word.slice(0, -1) : word);
const pascal = (word: string) =>
  word
    .split(/[-_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

function apiOf(url: string) {
  return APIS.find((api) => url.startsWith(api.prefix));
}

/** The path as Fastify writes it (`:id`), whichever form it is given in. */
const routePath = (url: string) => url.replace(/\{(\w+)\}/g, ':$1');

/**
 * An operation's id, camelCase, from its method and path: the API's word (none for the merchant's
 * and the sign-in API), a verb — `list` a collection, `get` one thing, `create` in a collection,
 * `update` (PATCH), `set` (PUT), `delete`, or the action a POST's last word names (`rotate`,
 * `complete`, `link`) — and the nouns of the path (`adminRotateMerchantSecretKey`). Stable as long
 * as the path is; NAMED gives the few the rule would name badly.
 */
export function operationIdOf(method: string, url: string): string {
  const path = routePath(url);
  const named = NAMED[`${method} ${path}`];
  if (named) return named;
  const api = apiOf(path);
  const segments = path
    .slice(api ? api.prefix.length : 1)
    .split('/')
    .filter(Boolean);
  const endsWithParam = isParam(segments.at(-1) ?? '');
  let nouns = segments.filter((segment) => !isParam(segment));
  const last = nouns.at(-1) ?? '';
  let verb: string;
  if (method === 'GET') verb = !endsWithParam && isPlural(last) ? 'list' : 'get';
  else if (method === 'DELETE') verb = 'delete';
  else if (method === 'PATCH') verb = 'update';
  else if (method === 'PUT') verb = 'set';
  else if (!endsWithParam && !isPlural(last)) {
    verb = last;
    nouns = nouns.slice(0, -1);
  } else verb = 'create';
  const noun = nouns.map((word, i) => (i === nouns.length - 1 && verb === 'list' ? pascal(word) : pascal(singular(word)))).join('');
  const id = `${api?.name ? `${api.name}${pascal(verb)}` : verb.replace(/-(\w)/g, (_, c: string) => c.toUpperCase())}${noun}`;
  return id.charAt(0).toLowerCase() + id.slice(1);
}

/** The credentials an operation of the operator, executor, device, sign-in or cabinet API takes; undefined for the merchant API's, which say their own. */
export function securityOf(url: string, access: string | undefined): Security | undefined {
  const api = apiOf(routePath(url));
  if (!api || api.prefix === '/v1/') return undefined;
  return api.security(access);
}
