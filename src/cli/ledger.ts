/**
 * `kassir ledger`: the double-entry ledger's check.
 */
import type { Command } from 'commander';
import { output, session } from './session.js';

export function ledgerCommands(program: Command): void {
  const ledger = program.command('ledger').description('the double-entry ledger');

  ledger
    .command('check')
    .description('verify every ledger invariant; exits 1 and names each breach when one fails')
    .action(async (_options: unknown, command: Command) => {
      const s = session(command);
      const body = await s.api<{ ok: boolean; problems: { invariant: string; detail: string }[] }>('GET', '/ledger/check');
      output(s, body, (b) => {
        if (b.ok) console.log('ledger OK');
        for (const problem of b.problems) console.log(`${problem.invariant}: ${problem.detail}`);
      });
      // A script (cron, CI) must see a broken ledger without parsing the output, --json or not.
      if (!body.ok) process.exitCode = 1;
    });
}
