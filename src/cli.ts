/**
 * `kassir`: the operator CLI. A thin client of the operator API (/admin/v1, DESIGN.md "The operator
 * side"): every command is one or two HTTP calls, so the CLI never touches the database and works
 * against any running instance. It imports nothing from the server so that it starts instantly.
 */
import { Command, InvalidArgumentError } from 'commander';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A failure to report on stderr before exiting with status 1. */
class CliError extends Error {}

// ---------------------------------------------------------------------------------------------
// Connection settings and the HTTP client
// ---------------------------------------------------------------------------------------------

interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
}

/** KASSIR_URL, else where `npm start` listens by default (HOST / PORT of the runtime contract). */
function defaultUrl(env: NodeJS.ProcessEnv): string {
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
interface Session {
  json: boolean;
  api<T = JsonObject>(method: string, path: string, body?: Json): Promise<T>;
}

function session(command: Command): Session {
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
  };
}

const TIMEOUT_MS = 30_000;

/** One call to the operator API; answers the parsed body or throws a CliError naming the failure. */
async function request<T>(root: string, token: string, method: string, path: string, body?: Json): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${root}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
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

const id = (value: string) => encodeURIComponent(value);

// ---------------------------------------------------------------------------------------------
// Argument parsers: numbers go to the API as JSON numbers, checked as text first
// ---------------------------------------------------------------------------------------------

/**
 * A decimal written in plain notation. The text is checked before Number() so that "12abc", "1e3",
 * "0x10" or "" are refused instead of silently becoming something else; beyond 15 significant
 * digits a JSON number no longer carries the exact value the operator typed, so that is refused too.
 */
function decimalArg(signed: boolean) {
  return (text: string): number => {
    const pattern = signed ? /^[+-]?\d+(\.\d+)?$/ : /^\d+(\.\d+)?$/;
    if (!pattern.test(text)) {
      throw new InvalidArgumentError(`"${text}" is not a ${signed ? 'signed ' : ''}decimal number (write it like ${signed ? '-12.5' : '12.5'}).`);
    }
    const digits = text.replace(/^[+-]/, '').replace('.', '').replace(/^0+/, '');
    if (digits.length > 15) throw new InvalidArgumentError(`"${text}" has more than 15 significant digits.`);
    return Number(text);
  };
}
const decimal = decimalArg(false);
const signedDecimal = decimalArg(true);

function integer(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a non-negative whole number.`);
  return Number(text);
}

function bool(text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new InvalidArgumentError(`"${text}" must be true or false.`);
}

/**
 * `--max none` lifts a requisite's upper limit. The parser keeps the word (commander turns a parser's
 * null into ''); the command sends it as null.
 */
function decimalOrNone(text: string): number | 'none' {
  return text === 'none' ? 'none' : decimal(text);
}

function integerOrNone(text: string): number | 'none' {
  return text === 'none' ? 'none' : integer(text);
}

function signedInteger(text: string): number {
  if (!/^-?\d{1,7}$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a whole number, e.g. 10 or -5.`);
  return Number(text);
}

/** The limit options shared by requisite add/update (own limits) and executor update (defaults, `prefix` default_). */
const LIMIT_OPTIONS = [
  [
    'daily-turnover-limit',
    'dailyTurnoverLimit',
    'daily_turnover_limit',
    '<amount|none>',
    'most handed out in a UTC day, in the requisite currency',
    decimalOrNone,
  ],
  [
    'monthly-turnover-limit',
    'monthlyTurnoverLimit',
    'monthly_turnover_limit',
    '<amount|none>',
    'most handed out in a UTC month, in the requisite currency',
    decimalOrNone,
  ],
  ['daily-count-limit', 'dailyCountLimit', 'daily_count_limit', '<n|none>', 'most hand-outs in a UTC day', integerOrNone],
  ['monthly-count-limit', 'monthlyCountLimit', 'monthly_count_limit', '<n|none>', 'most hand-outs in a UTC month', integerOrNone],
] as const;

/** Adds the limit options to `command`; pending hand-outs count, `none` removes the limit. */
function withLimitOptions(command: Command, scope: string): Command {
  for (const [flag, , , value, description, parse] of LIMIT_OPTIONS) {
    command.option(`--${flag} ${value}`, `${description} (${scope}); none removes it`, parse);
  }
  return command;
}

/** The limit options given, under their API names (`prefix` + name), `none` sent as null. */
function limitBody(options: Record<string, unknown>, prefix = ''): JsonObject {
  const body: JsonObject = {};
  for (const [, option, field] of LIMIT_OPTIONS) {
    const value = options[option];
    if (value !== undefined) body[prefix + field] = value === 'none' ? null : (value as number);
  }
  return body;
}

function methodList(text: string): string[] {
  const methods = text
    .split(',')
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean);
  if (methods.length === 0) throw new InvalidArgumentError('give at least one method, e.g. CARD,SBP.');
  return methods;
}

const upper = (text: string) => text.toUpperCase();

/** Copies the options that were given into an API body under their API names. */
function pick(options: Record<string, unknown>, names: Record<string, string>): JsonObject {
  const body: JsonObject = {};
  for (const [option, field] of Object.entries(names)) {
    if (options[option] !== undefined) body[field] = options[option] as Json;
  }
  return body;
}

function requireChanges(body: JsonObject, flags: string): JsonObject {
  if (Object.keys(body).length === 0) throw new CliError(`nothing to update: pass at least one of ${flags}`);
  return body;
}

/** `?key=value&…` from the filters that were given, or nothing. */
function queryString(filters: JsonObject): string {
  const query = new URLSearchParams(Object.entries(filters).map(([key, value]) => [key, String(value)])).toString();
  return query ? `?${query}` : '';
}

// ---------------------------------------------------------------------------------------------
// Output: aligned `key: value` blocks for one object, aligned tables for lists
// ---------------------------------------------------------------------------------------------

function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.map(text).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** One object as `key: value` lines; nested objects become dotted keys, lists of objects are left to tables. */
function printObject(object: JsonObject, omit: string[] = []): void {
  const lines: [string, string][] = [];
  const walk = (prefix: string, value: JsonObject) => {
    for (const [key, inner] of Object.entries(value)) {
      if (omit.includes(key)) continue;
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) walk(`${prefix}${key}.`, inner);
      else if (!(Array.isArray(inner) && inner.some((item) => item !== null && typeof item === 'object'))) lines.push([prefix + key, text(inner)]);
    }
  };
  walk('', object);
  const width = Math.max(0, ...lines.map(([key]) => key.length)) + 1;
  for (const [key, value] of lines) console.log(`${`${key}:`.padEnd(width)} ${value}`);
}

/** Rows as a table with the given columns (field names, used as headers). */
function printTable(rows: JsonObject[], columns: string[]): void {
  if (rows.length === 0) {
    console.log('(none)');
    return;
  }
  const cells = rows.map((row) => columns.map((column) => text(row[column])));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(columns.map((column) => column.toUpperCase())));
  for (const row of cells) console.log(line(row));
}

/** Secrets are never retrievable again, so they stand apart with an explicit warning. */
function printSecret(label: string, value: Json | undefined): void {
  console.log(`\n${label}: shown once, store it now (it cannot be retrieved later):\n\n  ${text(value)}\n`);
}

/** `--json` prints the API's answer as is; otherwise `readable` renders it. */
function output<T>(s: Session, body: T, readable: (body: T) => void): void {
  if (s.json) console.log(JSON.stringify(body, null, 2));
  else readable(body);
}

// ---------------------------------------------------------------------------------------------
// Commands, one function per group
// ---------------------------------------------------------------------------------------------

const TERMINAL_COLUMNS = ['id', 'name', 'payment_currency', 'is_active', 'balance', 'balance_frozen', 'payin_rate', 'payout_rate', 'withdrawal_fee'];
const REQUISITE_COLUMNS = [
  'id',
  'executor_id',
  'type',
  'value',
  'bank',
  'holder',
  'currency',
  'country',
  'methods',
  'min_amount',
  'max_amount',
  'is_active',
  'disabled_reason',
];

function userCommands(program: Command): void {
  const user = program.command('user').description('people who sign in to the console: admin, support, finance');
  const roles = ['admin', 'support', 'finance'];

  user
    .command('create')
    .description('create a sign-in; prints the password once (generated unless --password is given)')
    .requiredOption('--email <email>', 'their email, used to sign in')
    .option('--role <role>', `one of ${roles.join(', ')}`, 'admin')
    .option('--password <password>', 'at least 10 characters; omit to have one generated')
    .action(async (options: { email: string; role: string; password?: string }, command: Command) => {
      if (!roles.includes(options.role)) throw new CliError(`--role must be one of ${roles.join(', ')}, got "${options.role}"`);
      const s = session(command);
      const body: JsonObject = { email: options.email, role: options.role };
      if (options.password !== undefined) body.password = options.password;
      const created = await s.api('POST', '/users', body);
      output(s, created, (u) => {
        printObject(u, ['password']);
        printSecret('Password', u.password);
        const root = command.optsWithGlobals<GlobalOptions>().url.replace(/\/+$/, '');
        // What the console will ask of them first: their own password (when this one was generated), then two-factor (by default required of admin and finance).
        const steps = [
          ...(options.password === undefined ? ['choose their own password'] : []),
          ['admin', 'finance'].includes(options.role) ? 'enrol two-factor' : 'two-factor is offered under "Security"',
        ];
        console.log(`Next: sign in at ${root}/console with ${text(u.email)}; then ${steps.join(', then ')}.`);
      });
    });

  user
    .command('list')
    .description('list sign-ins')
    .option('--role <role>', 'only this role')
    .action(async (options: { role?: string }, command: Command) => {
      const s = session(command);
      const body = await s.api<{ users: JsonObject[] }>('GET', `/users${options.role ? `?role=${encodeURIComponent(options.role)}` : ''}`);
      output(s, body, (b) => printTable(b.users, ['id', 'email', 'role', 'is_active', 'two_factor', 'created_at']));
    });

  user
    .command('reset-password')
    .description('generate a new password for a user (printed once); their sessions end')
    .argument('<id>', 'user id')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/users/${id(userId)}/password`);
      output(s, body, (b) => printSecret('New password', b.password));
    });

  user
    .command('reset-two-factor')
    .description("clear a user's lost second factor; they enrol again at the next sign-in")
    .argument('<id>', 'user id')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const s = session(command);
      await s.api('POST', `/users/${id(userId)}/two-factor/reset`);
      if (!s.json) console.log('Two-factor cleared; the user enrols again at the next sign-in.');
    });

  user
    .command('disable')
    .description('switch a sign-in off; its sessions end at once')
    .argument('<id>', 'user id')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('PATCH', `/users/${id(userId)}`, { is_active: false }), (u) => printObject(u));
    });
}

function deviceCommands(program: Command): void {
  const device = program.command('device').description("executors' phones that forward bank messages (docs/devices.md)");

  device
    .command('register')
    .description("register a phone for an executor; prints its token and signing secret once, and the forwarder apps' URLs")
    .requiredOption('--executor <id>', 'executor id')
    .requiredOption('--name <name>', 'a name to know the phone by ("Redmi 12, Sber")')
    .action(async (options: { executor: string; name: string }, command: Command) => {
      const s = session(command);
      const created = await s.api('POST', `/executors/${id(options.executor)}/devices`, { name: options.name });
      output(s, created, (d) => {
        printObject(d, ['token', 'signing_secret']);
        printSecret('Device token (for the phone)', d.token);
        printSecret('Signing secret (for a forwarder app)', d.signing_secret);
        const root = command.optsWithGlobals<GlobalOptions>().url.replace(/\/+$/, '');
        console.log('Forwarder apps post to (docs/devices.md):');
        for (const format of ['smsforwarder', 'sms-gateway', 'incoming-sms']) console.log(`  ${root}/device/v1/hooks/${text(d.token)}/${format}`);
      });
    });

  device
    .command('list')
    .description("an executor's phones with when each last reported")
    .requiredOption('--executor <id>', 'executor id')
    .action(async (options: { executor: string }, command: Command) => {
      const s = session(command);
      const body = await s.api<{ devices: JsonObject[] }>('GET', `/executors/${id(options.executor)}/devices`);
      output(s, body, (b) => printTable(b.devices, ['id', 'name', 'last_seen_at', 'battery', 'app_version', 'created_at']));
    });

  device
    .command('revoke')
    .description('revoke a phone: its token stops working at once')
    .requiredOption('--executor <id>', 'executor id')
    .argument('<device>', 'device id')
    .action(async (deviceId: string, options: { executor: string }, command: Command) => {
      const s = session(command);
      await s.api('DELETE', `/executors/${id(options.executor)}/devices/${id(deviceId)}`);
      if (!s.json) console.log('Revoked.');
    });
}

function merchantCommands(program: Command): void {
  const merchant = program.command('merchant').description('merchants and their secret keys');

  merchant
    .command('create')
    .description('create a merchant; prints its secret key once')
    .requiredOption('--name <name>', 'merchant name')
    .action(async (options: { name: string }, command: Command) => {
      const s = session(command);
      const created = await s.api('POST', '/merchants', { name: options.name });
      output(s, created, (m) => {
        printObject(m, ['secret_key']);
        printSecret('Secret key', m.secret_key);
        console.log(`Next: kassir terminal create --merchant ${text(m.id)} --name <name> --currency RUB`);
      });
    });

  merchant
    .command('list')
    .description('list merchants')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ merchants: JsonObject[] }>('GET', '/merchants');
      output(s, body, (b) => printTable(b.merchants, ['id', 'name', 'terminals', 'created_at']));
    });

  merchant
    .command('show')
    .description('a merchant and its terminals')
    .argument('<id>', 'merchant id')
    .action(async (merchantId: string, _options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api('GET', `/merchants/${id(merchantId)}`);
      output(s, body, (m) => {
        printObject(m);
        console.log('\nterminals:');
        printTable((m.terminals ?? []) as JsonObject[], TERMINAL_COLUMNS);
      });
    });

  merchant
    .command('rotate-secret')
    .description('issue a new secret key; the old one keeps working for --grace seconds')
    .argument('<id>', 'merchant id')
    .option('--grace <seconds>', 'how long the old key stays valid (default 0: stops at once)', integer)
    .action(async (merchantId: string, options: { grace?: number }, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/merchants/${id(merchantId)}/secret-key/rotate`, { grace_seconds: options.grace ?? 0 });
      output(s, body, (r) => {
        printObject(r, ['secret_key']);
        printSecret('New secret key', r.secret_key);
      });
    });
}

function terminalCommands(program: Command): void {
  const terminal = program.command('terminal').description('terminals: settings, API keys, balances, own rates');

  terminal
    .command('create')
    .description('create a terminal for a merchant; prints its API key once')
    .requiredOption('--merchant <id>', 'merchant id')
    .requiredOption('--name <name>', 'terminal name')
    .requiredOption('--currency <code>', 'payment currency: RUB, KZT, AZN or TJS', upper)
    .option('--payin-rate <percent>', 'fee on payments, percent', decimal)
    .option('--payout-rate <percent>', 'fee on payouts, percent', decimal)
    .option('--withdrawal-fee <usdt>', 'fixed fee per withdrawal, USDT', decimal)
    .action(async (options: Record<string, unknown> & { merchant: string }, command: Command) => {
      const s = session(command);
      const body = pick(options, { name: 'name', currency: 'currency', payinRate: 'payin_rate', payoutRate: 'payout_rate', withdrawalFee: 'withdrawal_fee' });
      const created = await s.api('POST', `/merchants/${id(options.merchant)}/terminals`, body);
      output(s, created, (t) => {
        printObject(t, ['api_key']);
        printSecret('API key (the X-Identity header)', t.api_key);
      });
    });

  terminal
    .command('list')
    .description("a merchant's terminals")
    .requiredOption('--merchant <id>', 'merchant id')
    .action(async (options: { merchant: string }, command: Command) => {
      const s = session(command);
      const body = await s.api<{ terminals: JsonObject[] }>('GET', `/merchants/${id(options.merchant)}/terminals`);
      output(s, body, (b) => printTable(b.terminals, TERMINAL_COLUMNS));
    });

  terminal
    .command('show')
    .description('a terminal')
    .argument('<id>', 'terminal id')
    .action(async (terminalId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('GET', `/terminals/${id(terminalId)}`), (t) => printObject(t));
    });

  terminal
    .command('update')
    .description("change a terminal's settings")
    .argument('<id>', 'terminal id')
    .option('--name <name>', 'terminal name')
    .option('--active <true|false>', 'accept payments or not', bool)
    .option('--payin-rate <percent>', 'fee on payments, percent', decimal)
    .option('--payout-rate <percent>', 'fee on payouts, percent', decimal)
    .option('--withdrawal-fee <usdt>', 'fixed fee per withdrawal, USDT', decimal)
    .action(async (terminalId: string, options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = requireChanges(
        pick(options, { name: 'name', active: 'is_active', payinRate: 'payin_rate', payoutRate: 'payout_rate', withdrawalFee: 'withdrawal_fee' }),
        '--name, --active, --payin-rate, --payout-rate, --withdrawal-fee',
      );
      output(s, await s.api('PATCH', `/terminals/${id(terminalId)}`, body), (t) => printObject(t));
    });

  terminal
    .command('rotate-key')
    .description('issue a new API key; the old one keeps working for --grace seconds')
    .argument('<id>', 'terminal id')
    .option('--grace <seconds>', 'how long the old key stays valid (default 0: stops at once)', integer)
    .action(async (terminalId: string, options: { grace?: number }, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/terminals/${id(terminalId)}/api-key/rotate`, { grace_seconds: options.grace ?? 0 });
      output(s, body, (r) => {
        printObject(r, ['api_key']);
        printSecret('New API key (the X-Identity header)', r.api_key);
      });
    });

  terminal
    .command('adjust')
    .description("credit (+) or debit (-) a terminal's available USDT balance")
    .argument('<id>', 'terminal id')
    .requiredOption('--amount <usdt>', 'signed USDT amount, e.g. 100 or -25.5', signedDecimal)
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .action(async (terminalId: string, options: { amount: number; reason: string }, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/terminals/${id(terminalId)}/adjustments`, { amount: options.amount, reason: options.reason });
      output(s, body, (b) => printObject(b));
    });

  terminal
    .command('set-rate')
    .description("set a terminal's own USDT rate, overriding the global one")
    .argument('<id>', 'terminal id')
    .argument('<currency>', 'currency code, e.g. RUB', upper)
    .argument('<rate>', 'price of 1 USDT in the currency', decimal)
    .action(async (terminalId: string, currency: string, rate: number, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('PUT', `/terminals/${id(terminalId)}/rates/${id(currency)}`, { rate }), (r) => printObject(r));
    });

  terminal
    .command('routes')
    .description("a terminal's routes, in the order a payment tries them")
    .argument('<id>', 'terminal id')
    .action(async (terminalId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api<JsonObject[]>('GET', `/terminals/${id(terminalId)}/routes`), printRoutes);
    });

  terminal
    .command('set-routes')
    .description("replace a terminal's routes: payments and payouts try them in the order given")
    .argument('<id>', 'terminal id')
    .option(
      '--route <route>',
      'executors or provider:<id>, optionally narrowed to methods: provider:<id>:SBP,CARD; repeat in the order tried',
      collectRoute,
      [],
    )
    .option('--routes-json <json>', 'the routes as the API takes them, e.g. [{"provider_id":"…","currencies":["RUB"]},{"executors":true}]', routesJson)
    .option('--clear', 'remove every route: the terminal uses its executors only')
    .action(async (terminalId: string, options: { route: JsonObject[]; routesJson?: JsonObject[]; clear?: boolean }, command: Command) => {
      const s = session(command);
      const given = [options.route.length > 0, options.routesJson !== undefined, options.clear === true].filter(Boolean).length;
      if (given !== 1) throw new CliError('give the routes one way: --route (repeated), --routes-json, or --clear');
      const routes = options.clear ? [] : (options.routesJson ?? options.route);
      output(s, await s.api<JsonObject[]>('PUT', `/terminals/${id(terminalId)}/routes`, routes), printRoutes);
    });
}

/** `executors[:METHODS]` or `provider:<id>[:METHODS]`, collected in the order given. */
function collectRoute(text: string, previous: JsonObject[]): JsonObject[] {
  const [kind, ...rest] = text.split(':');
  let route: JsonObject;
  let methods: string | undefined;
  if (kind === 'executors' && rest.length <= 1) {
    route = { executors: true };
    methods = rest[0];
  } else if (kind === 'provider' && rest.length >= 1 && rest.length <= 2 && rest[0]) {
    route = { provider_id: rest[0] };
    methods = rest[1];
  } else {
    throw new InvalidArgumentError(`"${text}" is not a route: write executors, provider:<id> or provider:<id>:SBP,CARD.`);
  }
  if (methods !== undefined) route.methods = methodList(methods);
  return [...previous, route];
}

function routesJson(text: string): JsonObject[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('is not JSON; write e.g. [{"executors":true}].');
  }
  if (!Array.isArray(parsed) || parsed.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    throw new InvalidArgumentError('must be a JSON array of route objects, e.g. [{"provider_id":"…"},{"executors":true}].');
  }
  return parsed as JsonObject[];
}

function printRoutes(routes: JsonObject[]): void {
  if (routes.length === 0) console.log('(no routes: the terminal uses its executors only)');
  else {
    const rows = routes.map((r, i) => ({
      position: i + 1,
      route: r.executors ? 'executors' : `provider ${text(r.provider_id)}`,
      currencies: r.currencies ?? null,
      methods: r.methods ?? null,
    }));
    printTable(rows, ['position', 'route', 'currencies', 'methods']);
  }
}

/** `kassir rate source`'s options, as commander parses them. */
interface SourceOptions {
  terminal?: string;
  markup?: number;
  payoutMarkup?: number;
  refresh?: number;
  maxAge?: number;
  maxJump?: number;
  payMethods?: string;
  amount?: number;
  ranks?: string;
  baseUrl?: string;
  crossCheck?: string;
}

/** Where a rate command acts: a terminal's own setting (`--terminal`) or the currency's. */
const ratePath = (currency: string, terminal?: string) => (terminal ? `/terminals/${id(terminal)}/rates/${id(currency)}` : `/rates/${id(currency)}`);

/** What a rate's state asks of the operator, in one line. */
function rateAdvice(r: JsonObject): string {
  switch (r.state) {
    case 'waiting':
      return 'waiting for the first fetch from the feed (a few seconds); creates in this currency are refused until then';
    case 'stale':
      return `STALE: the feed has not given a rate for ${text(r.age_seconds ?? '?')} s (max ${text(r.max_age_seconds)} s); creates and payouts in ${text(r.currency)} are refused. Last error: ${text(r.last_error)}. Check the source, or type a rate: kassir rate set ${text(r.currency)} <rate>`;
    case 'held': {
      const held = r.held as JsonObject;
      return `HELD: the feed jumped to ${text(held.rate)} (from ${text(r.rate)}); decide with kassir rate accept ${text(r.currency)} or kassir rate keep ${text(r.currency)}`;
    }
    case 'fresh':
      return `fresh: fetched ${text(r.age_seconds)} s ago`;
    default:
      return String(r.state);
  }
}

function rateCommands(program: Command): void {
  const rate = program.command('rate').description('USDT rates per currency: typed, or kept by an exchange feed');

  rate
    .command('set')
    .description('type the price of 1 USDT in a currency (it stays until changed)')
    .argument('<currency>', 'currency code, e.g. RUB', upper)
    .argument('<rate>', 'price of 1 USDT in the currency', decimal)
    .option('--terminal <id>', "the terminal's own rate instead of the currency's")
    .action(async (currency: string, value: number, options: { terminal?: string }, command: Command) => {
      const s = session(command);
      output(s, await s.api('PUT', ratePath(currency, options.terminal), { rate: value }), (r) => printObject(r, ['options', 'cross_check']));
    });

  rate
    .command('source')
    .description('have an exchange feed keep the rate: bybit_p2p, binance_p2p, htx_p2p, rapira or grinex')
    .argument('<currency>', 'currency code, e.g. RUB', upper)
    .argument('<source>', 'bybit_p2p, binance_p2p, htx_p2p, rapira or grinex')
    .option('--terminal <id>', "the terminal's own feed instead of the currency's")
    .option('--markup <percent>', 'rate = figure × (1 + markup / 100)', signedDecimal)
    .option('--payout-markup <percent>', "payouts' own markup (the sell side)", signedDecimal)
    .option('--refresh <seconds>', 'fetch every N seconds (at least 5; default 30)', integer)
    .option('--max-age <seconds>', 'older than this the rate is stale and refused (at least 10; default 600)', integer)
    .option('--max-jump <percent>', 'hold a figure further than this from the current one for a person', decimal)
    .option('--pay-methods <list>', 'comma-separated pay methods as the exchange names them (Bybit: ids such as 75,382)')
    .option('--amount <amount>', 'a probe deal in the currency: adverts must take it', decimal)
    .option('--ranks <from-to>', 'the advert ranks taken, e.g. 3-10 (default 1-10)')
    .option('--base-url <url>', "the exchange's address (a mirror)")
    .option('--cross-check <sources>', 'comma-separated further sources the figure is checked against')
    .action(async (currency: string, source: string, o: SourceOptions, command: Command) => {
      const s = session(command);
      const ranks = o.ranks === undefined ? undefined : String(o.ranks).split('-').map(integer);
      if (ranks && ranks.length !== 2) throw new InvalidArgumentError(`--ranks "${o.ranks}" must be from-to, e.g. 3-10`);
      const options = {
        ...(o.baseUrl ? { base_url: o.baseUrl } : {}),
        ...(o.payMethods
          ? {
              pay_methods: String(o.payMethods)
                .split(',')
                .map((m) => m.trim())
                .filter(Boolean),
            }
          : {}),
        ...(o.amount !== undefined ? { amount: o.amount } : {}),
        ...(ranks ? { ranks } : {}),
      };
      const body = {
        source,
        ...(o.markup !== undefined ? { markup_percent: o.markup } : {}),
        ...(o.payoutMarkup !== undefined ? { payout_markup_percent: o.payoutMarkup } : {}),
        ...(o.refresh !== undefined ? { refresh_seconds: o.refresh } : {}),
        ...(o.maxAge !== undefined ? { max_age_seconds: o.maxAge } : {}),
        ...(o.maxJump !== undefined ? { max_jump_percent: o.maxJump } : {}),
        options,
        ...(o.crossCheck
          ? {
              cross_check: String(o.crossCheck)
                .split(',')
                .map((c) => ({ source: c.trim() })),
            }
          : {}),
      };
      const saved = await s.api<JsonObject>('PUT', ratePath(currency, o.terminal), body);
      output(s, saved, (r) => {
        printObject(r, ['options', 'cross_check', 'held']);
        console.log(`\n${rateAdvice(r)}\nSee it: kassir rate show ${currency}${o.terminal ? ` --terminal ${o.terminal}` : ''}`);
      });
    });

  rate
    .command('markup')
    .description("a terminal follows the currency's figure with its own markup")
    .argument('<currency>', 'currency code, e.g. RUB', upper)
    .argument('<percent>', 'the markup, percent', signedDecimal)
    .requiredOption('--terminal <id>', 'the terminal')
    .option('--payout-markup <percent>', "payouts' own markup", signedDecimal)
    .action(async (currency: string, markup: number, o: { terminal: string; payoutMarkup?: number }, command: Command) => {
      const s = session(command);
      const body = { markup_percent: markup, ...(o.payoutMarkup !== undefined ? { payout_markup_percent: o.payoutMarkup } : {}) };
      output(s, await s.api('PUT', ratePath(currency, o.terminal), body), (r) => printObject(r, ['options', 'cross_check', 'held']));
    });

  rate
    .command('list')
    .description('all rates with their source and state')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ rates: JsonObject[] }>('GET', '/rates');
      output(s, body, (b) => printTable(b.rates, ['currency', 'rate', 'source', 'markup_percent', 'state', 'age_seconds', 'updated_at']));
    });

  rate
    .command('show')
    .description("a rate: its state and what to do, its last fetch's adverts and its refreshes of the last day")
    .argument('<currency>', 'currency code, e.g. RUB', upper)
    .option('--terminal <id>', "the terminal's own setting")
    .action(async (currency: string, o: { terminal?: string }, command: Command) => {
      const s = session(command);
      const body = await s.api<{ rate: JsonObject; refreshes: JsonObject[]; last_sample: JsonObject | null }>(
        'GET',
        `${ratePath(currency, o.terminal)}/history`,
      );
      output(s, body, (b) => {
        printObject(b.rate, ['options', 'cross_check', 'held']);
        console.log(`\n${rateAdvice(b.rate)}`);
        const sample = b.last_sample?.sample as { sources?: JsonObject[] } | undefined;
        for (const source of sample?.sources ?? []) {
          console.log(
            `\n${text(source.source)}: ${source.error ? `error: ${text(source.error)}` : `figure ${text(source.figure)}${source.left_out ? ' (left out: too far from the other sources)' : ''}`}`,
          );
          const adverts = ((source.adverts as JsonObject[] | undefined) ?? []).map((a) => {
            const trader = a.trader as JsonObject | null;
            return {
              ...a,
              trader: trader ? `${text(trader.name)} (${text(trader.orders)}, ${text(trader.completion_percent)}%)` : '',
              limits: `${text(a.min)}–${text(a.max)}`,
              used: a.left_out ? `no: ${text(a.left_out)}` : 'yes',
            };
          });
          if (adverts.length > 0) printTable(adverts, ['price', 'available', 'limits', 'trader', 'used']);
        }
        console.log('\nRefreshes (last 24 h, newest last):');
        printTable(b.refreshes.slice(-15), ['id', 'at', 'kind', 'figure', 'rate', 'actor', 'error']);
      });
    });

  for (const [name, description] of [
    ['refresh', 'fetch a feed now'],
    ['accept', 'accept the jump a feed held: the held figure becomes the rate'],
    ['keep', 'keep the current rate over the jump a feed held (fresh again for its max age)'],
  ] as const) {
    rate
      .command(name)
      .description(description)
      .argument('<currency>', 'currency code, e.g. RUB', upper)
      .option('--terminal <id>', "the terminal's own setting")
      .action(async (currency: string, o: { terminal?: string }, command: Command) => {
        const s = session(command);
        const path = `${ratePath(currency, o.terminal)}/${name === 'refresh' ? 'refresh' : `held/${name}`}`;
        const body = await s.api<JsonObject>('POST', path);
        output(s, body, (r) =>
          name === 'refresh'
            ? console.log(`Fetch asked for; see it in a few seconds: kassir rate show ${currency}`)
            : printObject(r, ['options', 'cross_check', 'held']),
        );
      });
  }
}

function executorCommands(program: Command): void {
  const executor = program.command('executor').description('executors (P2P traders)');

  executor
    .command('create')
    .description('create an executor; prints its token once')
    .requiredOption('--name <name>', 'executor name')
    .action(async (options: { name: string }, command: Command) => {
      const s = session(command);
      const created = await s.api('POST', '/executors', { name: options.name });
      output(s, created, (e) => {
        printObject(e, ['token']);
        printSecret('Executor token (for the executor app)', e.token);
      });
    });

  executor
    .command('list')
    .description('list executors')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ executors: JsonObject[] }>('GET', '/executors');
      output(s, body, (b) =>
        printTable(b.executors, ['id', 'name', 'is_active', 'is_paused', 'priority', 'score', 'requisites', 'balance', 'balance_frozen', 'created_at']),
      );
    });

  executor
    .command('show')
    .description('an executor and its requisites')
    .argument('<id>', 'executor id')
    .action(async (executorId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('GET', `/executors/${id(executorId)}`), (e) => {
        printObject(e);
        console.log('\nrequisites:');
        printTable(
          (e.requisites ?? []) as JsonObject[],
          REQUISITE_COLUMNS.filter((c) => c !== 'executor_id'),
        );
      });
    });

  executor
    .command('update')
    .description("change an executor's name, switch it on or off, or set its credit line and rewards")
    .argument('<id>', 'executor id')
    .option('--name <name>', 'executor name')
    .option('--active <true|false>', 'whether its requisites are handed out', bool)
    .option('--credit-limit <usdt>', 'USDT its available balance may go below zero', decimal)
    .option('--payin-reward <percent>', "percent of a completed pay-in's USDT value it earns", decimal)
    .option('--payout-reward <percent>', "percent on top of a completed payout's USDT value it earns", decimal)
    .option('--paused <true|false>', 'pause or resume its hand-outs (the executor can do this itself)', bool)
    .option('--priority <n>', 'cascade priority: higher is handed out first (default 0)', signedInteger)
    .option('--disable-after-expired <n>', 'switch a requisite off after this many hand-outs in a row ended unpaid; 0 never (default 5)', integer);
  withLimitOptions(executor.commands.at(-1)!, 'default for its requisites without their own').action(
    async (executorId: string, options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = requireChanges(
        {
          ...pick(options, {
            name: 'name',
            active: 'is_active',
            creditLimit: 'credit_limit',
            payinReward: 'payin_reward',
            payoutReward: 'payout_reward',
            paused: 'is_paused',
            priority: 'priority',
            disableAfterExpired: 'disable_after_expired',
          }),
          ...limitBody(options, 'default_'),
        },
        '--name, --active, --credit-limit, --payin-reward, --payout-reward, --paused, --priority, --disable-after-expired, --daily-turnover-limit, --monthly-turnover-limit, --daily-count-limit, --monthly-count-limit',
      );
      output(s, await s.api('PATCH', `/executors/${id(executorId)}`, body), (e) => printObject(e));
    },
  );

  executor
    .command('adjust')
    .description("top up (+) or take from (-) an executor's USDT deposit")
    .argument('<id>', 'executor id')
    .requiredOption('--amount <usdt>', 'signed USDT amount, e.g. 500 or -25.5', signedDecimal)
    .requiredOption('--reason <text>', 'why (kept in the audit log and on the posting)')
    .action(async (executorId: string, options: { amount: number; reason: string }, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/executors/${id(executorId)}/adjustments`, { amount: options.amount, reason: options.reason });
      output(s, body, (b) => printObject(b));
    });

  executor
    .command('statement')
    .description("an executor's deposit postings, newest first, with the balance after each")
    .argument('<id>', 'executor id')
    .option('--limit <n>', 'how many postings', integer)
    .option('--offset <n>', 'how many to skip', integer)
    .action(async (executorId: string, options: { limit?: number; offset?: number }, command: Command) => {
      const s = session(command);
      const query = new URLSearchParams();
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      if (options.offset !== undefined) query.set('offset', String(options.offset));
      const suffix = query.size > 0 ? `?${query}` : '';
      const body = await s.api<JsonObject & { entries: JsonObject[] }>('GET', `/executors/${id(executorId)}/statement${suffix}`);
      output(s, body, (b) => {
        console.log(`available ${b.balance} USDT, frozen ${b.balance_frozen} USDT\n`);
        printTable(b.entries, ['created_at', 'kind', 'account', 'amount', 'balance_after', 'ref_id', 'memo']);
        console.log(`\n${b.entries.length} of ${b.total}`);
      });
    });

  executor
    .command('deposits')
    .description("USDT transfers to an executor's TRC-20 deposit address credited so far (KASSIR_TRON_DEPOSIT_XPUB)")
    .argument('<id>', 'executor id')
    .option('--limit <n>', 'how many', integer)
    .option('--offset <n>', 'how many to skip', integer)
    .action(async (executorId: string, options: { limit?: number; offset?: number }, command: Command) => {
      const s = session(command);
      const body = await s.api<JsonObject & { deposits: JsonObject[] }>('GET', `/executors/${id(executorId)}/deposits${page(options)}`);
      output(s, body, (b) => {
        console.log(`deposit address: ${b.deposit_address ?? '(none: KASSIR_TRON_DEPOSIT_XPUB is not set; credit by hand with kassir executor adjust)'}\n`);
        printTable(b.deposits, ['credited_at', 'amount', 'tx_hash', 'log_index', 'from', 'block_number']);
      });
    });

  executor
    .command('withdrawals')
    .description("executors' withdrawals of their deposits, newest first")
    .option('--executor <id>', "one executor's only")
    .option('--status <status>', 'pending, processing, completed or failed')
    .option('--limit <n>', 'how many', integer)
    .option('--offset <n>', 'how many to skip', integer)
    .action(async (options: { executor?: string; status?: string; limit?: number; offset?: number }, command: Command) => {
      const s = session(command);
      const query = new URLSearchParams({ owner: 'executor' });
      if (options.executor !== undefined) query.set('executor_id', id(options.executor));
      if (options.status !== undefined) query.set('status', options.status);
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      if (options.offset !== undefined) query.set('offset', String(options.offset));
      const body = await s.api<{ withdrawals: JsonObject[] }>('GET', `/withdrawals?${query}`);
      output(s, body, (b) => printTable(b.withdrawals, ['id', 'executor_id', 'amount', 'address', 'status', 'adapter', 'tx_hash', 'created_at']));
    });

  executor
    .command('complete-withdrawal')
    .description('record the transaction that sent an executor’s withdrawal (manual adapter): the frozen USDT is debited')
    .argument('<withdrawal>', 'withdrawal id')
    .requiredOption('--tx-hash <hash>', 'the transaction hash of the transfer sent (64 hex digits)')
    .action(async (withdrawalId: string, options: { txHash: string }, command: Command) => {
      const s = session(command);
      output(s, await s.api('POST', `/withdrawals/${id(withdrawalId)}/complete`, { tx_hash: options.txHash }), (w) => printObject(w));
    });

  executor
    .command('fail-withdrawal')
    .description('give up an executor’s withdrawal before anything was sent: the frozen USDT returns to its available balance')
    .argument('<withdrawal>', 'withdrawal id')
    .option('--reason <text>', 'why')
    .action(async (withdrawalId: string, options: { reason?: string }, command: Command) => {
      const s = session(command);
      const body: Record<string, string> = {};
      if (options.reason !== undefined) body.reason = options.reason;
      output(s, await s.api('POST', `/withdrawals/${id(withdrawalId)}/fail`, body), (w) => printObject(w));
    });

  executor
    .command('rotate-token')
    .description('issue a new token; the old one stops working at once (a lost phone)')
    .argument('<id>', 'executor id')
    .action(async (executorId: string, _options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api('POST', `/executors/${id(executorId)}/token/rotate`);
      output(s, body, (r) => {
        printObject(r, ['token']);
        printSecret('New executor token (for the executor app)', r.token);
      });
    });
}

/** `?limit=…&offset=…` from the list options given, or nothing. */
function page(options: { limit?: number; offset?: number }): string {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.offset !== undefined) query.set('offset', String(options.offset));
  return query.size > 0 ? `?${query}` : '';
}

function requisiteCommands(program: Command): void {
  const requisite = program.command('requisite').description("executors' cards, phone numbers, SIMs and QR codes");

  requisite
    .command('add')
    .description('add a requisite to an executor')
    .requiredOption('--executor <id>', 'executor id')
    .requiredOption('--type <type>', 'card, sbp, phone, sim or qr')
    .requiredOption('--value <value>', 'card number, phone number, subscriber number or QR payload')
    .option('--bank <code>', 'bank or operator code (kassir bank list)')
    .option('--holder <name>', 'holder name shown to payers')
    .requiredOption('--currency <code>', 'currency of the requisite, e.g. RUB', upper)
    .requiredOption('--country <CC>', 'ISO-2 country, e.g. RU', upper)
    .requiredOption('--methods <list>', 'comma-separated payment methods, e.g. CARD,SBP', methodList)
    .option('--min <amount>', 'smallest payment amount it takes', decimal)
    .option('--max <amount>', 'largest payment amount it takes', decimal);
  withLimitOptions(requisite.commands.at(-1)!, "its own; without, its executor's default applies").action(
    async (options: Record<string, unknown> & { executor: string }, command: Command) => {
      const s = session(command);
      const body = pick(options, {
        type: 'type',
        value: 'value',
        bank: 'bank',
        holder: 'holder',
        currency: 'currency',
        country: 'country',
        methods: 'methods',
        min: 'min_amount',
        max: 'max_amount',
      });
      Object.assign(body, limitBody(options));
      output(s, await s.api('POST', `/executors/${id(options.executor)}/requisites`, body), (r) => printObject(r));
    },
  );

  requisite
    .command('list')
    .description('requisites, all or of one executor (card numbers masked)')
    .option('--executor <id>', 'only this executor')
    .action(async (options: { executor?: string }, command: Command) => {
      const s = session(command);
      const query = options.executor === undefined ? '' : `?${new URLSearchParams({ executor_id: options.executor })}`;
      const body = await s.api<{ requisites: JsonObject[] }>('GET', `/requisites${query}`);
      output(s, body, (b) => printTable(b.requisites, REQUISITE_COLUMNS));
    });

  requisite
    .command('update')
    .description('change a requisite')
    .argument('<id>', 'requisite id')
    .option('--active <true|false>', 'hand it out or not', bool)
    .option('--min <amount>', 'smallest payment amount it takes', decimal)
    .option('--max <amount|none>', 'largest payment amount it takes; none lifts the limit', decimalOrNone)
    .option('--methods <list>', 'comma-separated payment methods', methodList)
    .option('--holder <name>', 'holder name shown to payers')
    .option('--bank <code>', 'bank or operator code');
  withLimitOptions(requisite.commands.at(-1)!, "its own; none falls back to its executor's default").action(
    async (requisiteId: string, options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = requireChanges(
        {
          ...pick(options, { active: 'is_active', min: 'min_amount', max: 'max_amount', methods: 'methods', holder: 'holder', bank: 'bank' }),
          ...limitBody(options),
        },
        '--active, --min, --max, --methods, --holder, --bank, --daily-turnover-limit, --monthly-turnover-limit, --daily-count-limit, --monthly-count-limit',
      );
      if (body.max_amount === 'none') body.max_amount = null;
      output(s, await s.api('PATCH', `/requisites/${id(requisiteId)}`, body), (r) => printObject(r));
    },
  );
}

function bankCommands(program: Command): void {
  const bank = program.command('bank').description('the bank and operator directory');

  bank
    .command('list')
    .description('every entry, active or not')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ banks: JsonObject[] }>('GET', '/banks');
      output(s, body, (b) => printTable(b.banks, ['code', 'name', 'country', 'kind', 'is_active']));
    });

  bank
    .command('add')
    .description('add a bank or mobile operator')
    .requiredOption('--code <code>', 'code, lowercase letters, digits and _ (e.g. tinkoff)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--country <CC>', 'ISO-2 country, e.g. RU', upper)
    .option('--kind <kind>', 'bank or operator', 'bank')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = pick(options, { code: 'code', name: 'name', country: 'country', kind: 'kind' });
      output(s, await s.api('POST', '/banks', body), (b) => printObject(b));
    });

  bank
    .command('update')
    .description('rename or switch an entry on or off')
    .argument('<code>', 'bank code')
    .option('--name <name>', 'display name')
    .option('--active <true|false>', 'offered or not', bool)
    .action(async (code: string, options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = requireChanges(pick(options, { name: 'name', active: 'is_active' }), '--name, --active');
      output(s, await s.api('PATCH', `/banks/${id(code)}`, body), (b) => printObject(b));
    });
}

function paymentCommands(program: Command): void {
  const payment = program.command('payment').description('payments across all merchants');

  payment
    .command('show')
    .description('a payment')
    .argument('<id>', 'payment id')
    .action(async (paymentId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('GET', `/payments/${id(paymentId)}`), (p) => printObject(p));
    });

  payment
    .command('list')
    .description('payments, newest first')
    .option('--status <status>', 'e.g. PENDING, COMPLETED, CANCELLED')
    .option('--merchant <id>', 'merchant id')
    .option('--terminal <id>', 'terminal id')
    .option('--limit <n>', 'at most this many (default 100, up to 1000)', integer)
    .option('--offset <n>', 'skip this many', integer)
    .action(async (options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const filters = pick(options, { status: 'status', merchant: 'merchant_id', terminal: 'terminal_id', limit: 'limit', offset: 'offset' });
      const body = await s.api<{ payments: JsonObject[]; total: number; limit: number; offset: number }>('GET', `/payments${queryString(filters)}`);
      output(s, body, (b) => {
        printTable(b.payments, ['id', 'ext_id', 'status', 'amount', 'currency', 'method', 'terminal_name', 'created_at']);
        const shown = b.payments.length === 0 ? '0' : `${b.offset + 1}-${b.offset + b.payments.length}`;
        console.log(`\n${shown} of ${b.total}`);
      });
    });

  payment
    .command('cancel')
    .description('cancel a PENDING payment')
    .argument('<id>', 'payment id')
    .option('--reason <text>', 'why: kept on the payment (cancel_note) and in the audit log')
    .action(async (paymentId: string, options: { reason?: string }, command: Command) => {
      const s = session(command);
      const body = options.reason === undefined ? undefined : { reason: options.reason };
      output(s, await s.api('POST', `/payments/${id(paymentId)}/cancel`, body), (p) => printObject(p));
    });
}

function ledgerCommands(program: Command): void {
  const ledger = program.command('ledger').description('the double-entry ledger');

  ledger
    .command('check')
    .description('verify every ledger invariant; exits 1 and names each breach when one fails')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ ok: boolean; problems: { invariant: string; detail: string }[] }>('GET', '/ledger/check');
      output(s, body, (b) => {
        if (b.ok) console.log('ledger OK');
        for (const problem of b.problems) console.log(`${problem.invariant}: ${problem.detail}`);
      });
      // A script (cron, CI) must see a broken ledger without parsing the output, --json or not.
      if (!body.ok) process.exitCode = 1;
    });
}

const REPORT_FIGURES = ['payins', 'payin_turnover', 'payouts', 'payout_turnover', 'turnover', 'payin_rewards', 'payout_credits', 'rewards', 'revenue'];

function reportCommands(program: Command): void {
  const report = program
    .command('report')
    .description("turnover, executors' rewards and revenue per UTC day, from the ledger (USDT; the API also answers CSV: ?format=csv)");
  for (const [by, owner] of [
    ['merchants', 'merchant_id'],
    ['executors', 'executor_id'],
  ] as const) {
    report
      .command(by)
      .description(`per day and ${by.slice(0, -1)}, with totals`)
      .option('--from <date>', 'first UTC day, YYYY-MM-DD (default: 29 days before --to)')
      .option('--to <date>', 'last UTC day, YYYY-MM-DD (default: today); at most 366 days in all')
      .option('--merchant <id>', "only this merchant's postings")
      .option('--executor <id>', "only postings moving this executor's money")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const s = session(command);
        const query = queryString(pick(options, { from: 'from', to: 'to', merchant: 'merchant_id', executor: 'executor_id' }));
        const body = await s.api<JsonObject & { rows: JsonObject[]; totals: JsonObject }>('GET', `/reports/${by}${query}`);
        output(s, body, (b) => {
          console.log(`${text(b.from)} .. ${text(b.to)} (UTC), USDT\n`);
          printTable(b.rows, ['day', owner, ...REPORT_FIGURES]);
          console.log('');
          printTable([{ day: 'total', ...b.totals }], ['day', ...REPORT_FIGURES]);
        });
      });
  }
}

const NOTIFICATION_COLUMNS = ['id', 'status', 'amount', 'requisite_id', 'payment_id', 'candidate_payment_id', 'parsed_bank', 'created_at'];

function notificationCommands(program: Command): void {
  const notification = program.command('notification').description("executors' transfer notifications that matched no payment");

  notification
    .command('list')
    .description('notifications, newest first')
    .option('--status <status>', 'unmatched, late, matched or resolved')
    .option('--limit <n>', 'at most this many (default 100, up to 1000)', integer)
    .option('--offset <n>', 'skip this many', integer)
    .action(async (options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const filters = pick(options, { status: 'status', limit: 'limit', offset: 'offset' });
      const body = await s.api<{ notifications: JsonObject[] }>('GET', `/notifications${queryString(filters)}`);
      output(s, body, (b) => printTable(b.notifications, NOTIFICATION_COLUMNS));
    });

  notification
    .command('show')
    .description('a notification, with the text the bank sent')
    .argument('<id>', 'notification id')
    .action(async (notificationId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('GET', `/notifications/${id(notificationId)}`), (n) => printObject(n));
    });

  notification
    .command('link')
    .description('link an unmatched or late notification to a PENDING payment, which completes it')
    .argument('<id>', 'notification id')
    .requiredOption('--payment <id>', 'the payment the transfer was for')
    .action(async (notificationId: string, options: { payment: string }, command: Command) => {
      const s = session(command);
      output(s, await s.api('POST', `/notifications/${id(notificationId)}/link`, { payment_id: options.payment }), (n) => printObject(n));
    });

  notification
    .command('resolve')
    .description('set an unmatched or late notification aside, with a note')
    .argument('<id>', 'notification id')
    .requiredOption('--note <text>', 'what was done about it (kept in the audit log)')
    .action(async (notificationId: string, options: { note: string }, command: Command) => {
      const s = session(command);
      output(s, await s.api('POST', `/notifications/${id(notificationId)}/resolve`, { note: options.note }), (n) => printObject(n));
    });
}

function webhookCommands(program: Command): void {
  const webhook = program.command('webhook').description("the merchants' webhook delivery log");

  webhook
    .command('list')
    .description('webhook events, newest first')
    .option('--resource <id>', 'only the events of this payment or payout')
    .option('--status <status>', 'pending, delivered or failed')
    .option('--limit <n>', 'at most this many (default 100, up to 1000)', integer)
    .option('--offset <n>', 'skip this many', integer)
    .action(async (options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const filters = pick(options, { resource: 'resource_id', status: 'status', limit: 'limit', offset: 'offset' });
      const body = await s.api<{ webhooks: JsonObject[] }>('GET', `/webhooks${queryString(filters)}`);
      output(s, body, (b) => printTable(b.webhooks, ['id', 'event', 'resource_id', 'status', 'attempts', 'next_attempt_at', 'last_error', 'created_at']));
    });

  webhook
    .command('show')
    .description('a webhook event and each delivery attempt')
    .argument('<id>', 'webhook event id')
    .action(async (eventId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('GET', `/webhooks/${id(eventId)}`), (w) => {
        // The payload is the whole resource; --json shows it.
        printObject(w, ['payload']);
        console.log('\nattempts:');
        printTable((w.attempts ?? []) as JsonObject[], ['attempt', 'started_at', 'status_code', 'latency_ms', 'error']);
      });
    });

  webhook
    .command('resend')
    .description('send an event again now, with the same event id')
    .argument('<id>', 'webhook event id')
    .action(async (eventId: string, _options: unknown, command: Command) => {
      const s = session(command);
      output(s, await s.api('POST', `/webhooks/${id(eventId)}/resend`), (r) => printObject(r));
    });
}

const PROVIDER_COLUMNS = ['id', 'name', 'kind', 'base_url', 'is_active', 'failures', 'open_until', 'callback_url'];

/** A provider row for a table: its breaker state flattened into columns. */
function providerRow(p: JsonObject): JsonObject {
  const breaker = (p.breaker ?? {}) as JsonObject;
  return { ...p, failures: breaker.failures ?? null, open_until: breaker.open_until ?? null };
}

function providerCommands(program: Command): void {
  const provider = program.command('provider').description('upstream providers: aggregators that payments and payouts can be routed to');

  provider
    .command('add')
    .description('register a provider with our merchant credentials there (stored encrypted)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--kind <kind>', 'kassir: a provider speaking the Kassir merchant API')
    .requiredOption('--base-url <url>', "the provider's API base URL, e.g. https://provider.example")
    .requiredOption('--api-key <key>', 'our terminal API key at the provider')
    .requiredOption('--secret-key <key>', 'our Secret Key at the provider')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = pick(options, { name: 'name', kind: 'kind', baseUrl: 'base_url', apiKey: 'api_key', secretKey: 'secret_key' });
      const created = await s.api('POST', '/providers', body);
      output(s, created, (p) => {
        printObject(p);
        console.log(`\nNext: kassir terminal set-routes <terminal> --route provider:${text(p.id)} --route executors`);
      });
    });

  provider
    .command('list')
    .description('providers, with their circuit breaker state')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ providers: JsonObject[] }>('GET', '/providers');
      output(s, body, (b) => printTable(b.providers.map(providerRow), PROVIDER_COLUMNS));
    });

  provider
    .command('update')
    .description("change a provider's settings or credentials, or switch it on or off")
    .argument('<id>', 'provider id')
    .option('--name <name>', 'display name')
    .option('--base-url <url>', "the provider's API base URL")
    .option('--api-key <key>', 'our terminal API key at the provider')
    .option('--secret-key <key>', 'our Secret Key at the provider')
    .option('--active <true|false>', 'in rotation or not (true also resets its circuit breaker)', bool)
    .action(async (providerId: string, options: Record<string, unknown>, command: Command) => {
      const s = session(command);
      const body = requireChanges(
        pick(options, { name: 'name', baseUrl: 'base_url', apiKey: 'api_key', secretKey: 'secret_key', active: 'is_active' }),
        '--name, --base-url, --api-key, --secret-key, --active',
      );
      output(s, await s.api('PATCH', `/providers/${id(providerId)}`, body), (p) => printObject(p));
    });
}

function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('kassir')
    .description(
      'Kassir operator CLI: manage merchants, terminals, rates, executors, requisites, banks, payments, notifications, webhooks and providers; check the ledger; read reports',
    )
    .option('--url <url>', 'Kassir base URL (env KASSIR_URL)', defaultUrl(env))
    // No default value here: commander would print it in --help.
    .option('--token <token>', 'operator token (env ADMIN_TOKEN)')
    .option('--json', 'print the raw JSON answer')
    .showHelpAfterError('(add --help for usage)');
  userCommands(program);
  deviceCommands(program);
  merchantCommands(program);
  terminalCommands(program);
  rateCommands(program);
  executorCommands(program);
  requisiteCommands(program);
  bankCommands(program);
  paymentCommands(program);
  notificationCommands(program);
  webhookCommands(program);
  providerCommands(program);
  ledgerCommands(program);
  reportCommands(program);
  return program;
}

// `kassir payment list | head` closes the pipe early; that is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

buildProgram(process.env)
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (!(err instanceof CliError)) throw err;
    console.error(err.message);
    process.exitCode = 1;
  });
