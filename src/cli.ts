/**
 * `kassir`: the operator CLI. A thin client of the operator API (/admin/v1, DESIGN.md "The operator
 * side"): every command is one or two HTTP calls, so the CLI never touches the database and works
 * against any running instance. It imports nothing from the server so that it starts instantly.
 * The exceptions are `kassir backup` and `kassir restore` (src/cli/backup.ts), which run
 * PostgreSQL's own tools on the service's machine and load their code only when they run.
 *
 * This file only assembles the program: each group of commands is one file in `src/cli/` (one per
 * resource), beside `session.ts` (the API session and `--json`), `args.ts` (argument parsers) and
 * `print.ts` (tables and key: value blocks).
 */
import { Command } from 'commander';
import { backupCommands } from './cli/backup.js';
import { bankCommands } from './cli/bank.js';
import { deviceCommands } from './cli/device.js';
import { executorCommands } from './cli/executor.js';
import { ledgerCommands } from './cli/ledger.js';
import { merchantCommands } from './cli/merchant.js';
import { notificationCommands } from './cli/notification.js';
import { parserCommands } from './cli/parsers.js';
import { paymentCommands } from './cli/payment.js';
import { providerCommands } from './cli/provider.js';
import { rateCommands } from './cli/rate.js';
import { reportCommands } from './cli/report.js';
import { requisiteCommands } from './cli/requisite.js';
import { riskCommands } from './cli/risk.js';
import { CliError, defaultUrl } from './cli/session.js';
import { terminalCommands } from './cli/terminal.js';
import { userCommands } from './cli/user.js';
import { webhookCommands } from './cli/webhook.js';

function buildProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command('kassir')
    .description(
      'Kassir operator CLI: manage merchants, terminals, rates, executors, requisites, banks, payments, notifications, webhooks and providers; check the ledger; read reports; back up and restore',
    )
    .option('--url <url>', 'Kassir base URL (env KASSIR_URL)', defaultUrl(env))
    // No default value here: commander would print it in --help.
    .option('--token <token>', 'operator token (env ADMIN_TOKEN)')
    .option('--json', 'print the raw JSON answer')
    .showHelpAfterError('(add --help for usage)');
  userCommands(program);
  deviceCommands(program);
  riskCommands(program);
  merchantCommands(program);
  terminalCommands(program);
  rateCommands(program);
  executorCommands(program);
  requisiteCommands(program);
  bankCommands(program);
  paymentCommands(program);
  notificationCommands(program);
  parserCommands(program);
  webhookCommands(program);
  providerCommands(program);
  ledgerCommands(program);
  reportCommands(program);
  backupCommands(program);
  return program;
}

// `kassir payment list | head` closes the pipe early; that is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

buildProgram(process.env)
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (!(err instanceof CliError)) throw err;
    console.error(err.message);
    process.exitCode = 1;
  });
