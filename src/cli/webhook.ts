/**
 * `kassir webhook`: the merchants' webhook delivery log.
 */
import type { Command } from 'commander';
import { integer, pick, queryString } from './args.js';
import { printObject, printTable } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

export function webhookCommands(program: Command): void {
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
