/**
 * `kassir executor`: executors (P2P traders) — settings, deposits, statements, withdrawals, tokens.
 */
import type { Command } from 'commander';
import { bool, decimal, integer, limitBody, page, pick, requireChanges, signedDecimal, signedInteger, withLimitOptions } from './args.js';
import { printObject, printSecret, printTable } from './print.js';
import { REQUISITE_COLUMNS } from './requisite.js';
import { id, type JsonObject, output, session } from './session.js';

export function executorCommands(program: Command): void {
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
