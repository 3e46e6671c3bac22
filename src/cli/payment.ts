/**
 * `kassir payment`: payments across all merchants — show, list, cancel.
 */
import type { Command } from 'commander';
import { integer, pick, queryString } from './args.js';
import { printObject, printTable } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

export function paymentCommands(program: Command): void {
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
