/**
 * `kassir bank`: the bank and mobile operator directory.
 */
import type { Command } from 'commander';
import { bool, pick, requireChanges, upper } from './args.js';
import { printObject, printTable } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

export function bankCommands(program: Command): void {
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
