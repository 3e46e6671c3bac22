/**
 * `kassir merchant`: merchants and their secret keys.
 */
import type { Command } from 'commander';
import { integer } from './args.js';
import { printObject, printSecret, printTable, text } from './print.js';
import { id, type JsonObject, output, session } from './session.js';
import { TERMINAL_COLUMNS } from './terminal.js';

export function merchantCommands(program: Command): void {
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
