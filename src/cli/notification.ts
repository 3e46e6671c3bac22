/**
 * `kassir notification`: executors' transfer notifications that matched no payment.
 */
import type { Command } from 'commander';
import { integer, pick, queryString } from './args.js';
import { printObject, printTable } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

const NOTIFICATION_COLUMNS = ['id', 'status', 'amount', 'requisite_id', 'payment_id', 'candidate_payment_id', 'parsed_bank', 'created_at'];

export function notificationCommands(program: Command): void {
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
