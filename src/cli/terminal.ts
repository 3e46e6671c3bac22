/**
 * `kassir terminal`: terminals — settings, API keys, balances, own rates and routes.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { bool, decimal, integer, methodList, pick, requireChanges, signedDecimal, upper } from './args.js';
import { printObject, printSecret, printTable, text } from './print.js';
import { CliError, id, type JsonObject, output, session } from './session.js';

export const TERMINAL_COLUMNS = [
  'id',
  'name',
  'payment_currency',
  'is_active',
  'is_test',
  'balance',
  'balance_frozen',
  'payin_rate',
  'payout_rate',
  'withdrawal_fee',
];

export function terminalCommands(program: Command): void {
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
    .option('--test', 'a test terminal: test requisites from no executor, no money moves (for the merchant to try the integration); set at creation only')
    .action(async (options: Record<string, unknown> & { merchant: string }, command: Command) => {
      const s = session(command);
      const body = pick(options, {
        name: 'name',
        currency: 'currency',
        payinRate: 'payin_rate',
        payoutRate: 'payout_rate',
        withdrawalFee: 'withdrawal_fee',
        test: 'is_test',
      });
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
