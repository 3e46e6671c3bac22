/**
 * `kassir rate`: USDT rates per currency, typed or kept by an exchange feed, and their state.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { decimal, integer, signedDecimal, upper } from './args.js';
import { printObject, printTable, text } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

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

export function rateCommands(program: Command): void {
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
