/**
 * `kassir risk`: blocks of payers (docs/risk.md).
 */
import type { Command } from 'commander';
import { printObject, printTable } from './print.js';
import { id, type JsonObject, output, session } from './session.js';

const BLOCK_COLUMNS = ['id', 'kind', 'value_shown', 'merchant_id', 'reason', 'expires_at', 'active', 'created_by', 'created_at'];

export function riskCommands(program: Command): void {
  const risk = program.command('risk').description('risk rules: blocks of payers (docs/risk.md)');

  risk
    .command('block')
    .description('block a payer by client_id, card, phone, ip or device, for every merchant or one')
    .argument('<kind>', 'client_id, card, phone, ip or device')
    .argument('[value]', 'the value to block (or --payment)')
    .requiredOption('--reason <text>', 'why (shown to the operators, never to the merchant)')
    .option('--merchant <id>', 'only for this merchant (default: every merchant)')
    .option('--payment <id>', 'take the value from this payment (its client_id, or the ip or device its page saw)')
    .option('--expires <date-time>', 'when the block ends by itself (RFC 3339)')
    .action(
      async (kind: string, value: string | undefined, options: { reason: string; merchant?: string; payment?: string; expires?: string }, command: Command) => {
        const s = session(command);
        const block = await s.api('POST', '/risk/blocks', {
          kind,
          ...(value !== undefined ? { value } : {}),
          ...(options.payment ? { payment_id: id(options.payment) } : {}),
          ...(options.merchant ? { merchant_id: id(options.merchant) } : {}),
          ...(options.expires ? { expires_at: options.expires } : {}),
          reason: options.reason,
        });
        output(s, block, (b) => printObject(b));
      },
    );

  risk
    .command('unblock')
    .description('remove a block: it stops holding at once')
    .argument('<block>', 'block id')
    .action(async (blockId: string, _options: unknown, command: Command) => {
      const s = session(command);
      await s.api('DELETE', `/risk/blocks/${id(blockId)}`);
      if (!s.json) console.log('Removed.');
    });

  risk
    .command('blocks')
    .description('blocks, newest first')
    .option('--kind <kind>', 'client_id, card, phone, ip or device')
    .option('--merchant <id>', "one merchant's blocks")
    .option('--active', 'only those that hold now')
    .action(async (options: { kind?: string; merchant?: string; active?: boolean }, command: Command) => {
      const s = session(command);
      const query = new URLSearchParams();
      if (options.kind) query.set('kind', options.kind);
      if (options.merchant) query.set('merchant_id', id(options.merchant));
      if (options.active) query.set('active', 'true');
      const body = await s.api<{ blocks: JsonObject[] }>('GET', `/risk/blocks${query.size > 0 ? `?${query}` : ''}`);
      output(s, body, (b) => printTable(b.blocks, BLOCK_COLUMNS));
    });
}
