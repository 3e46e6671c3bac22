/**
 * `kassir requisite`: executors' cards, phone numbers, SIMs and QR codes, with their limits.
 */
import type { Command } from 'commander';
import { bool, decimal, decimalOrNone, limitBody, methodList, pick, requireChanges, upper, withLimitOptions } from './args.js';
import { printObject, printTable } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

export const REQUISITE_COLUMNS = [
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

export function requisiteCommands(program: Command): void {
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
