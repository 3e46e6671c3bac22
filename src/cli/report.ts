/**
 * `kassir report`: turnover, executors' rewards and revenue per UTC day, from the ledger.
 */
import type { Command } from 'commander';
import { pick, queryString } from './args.js';
import { printTable, text } from './print.js';
import { type JsonObject, output, session } from './session.js';

const REPORT_FIGURES = ['payins', 'payin_turnover', 'payouts', 'payout_turnover', 'turnover', 'payin_rewards', 'payout_credits', 'rewards', 'revenue'];

export function reportCommands(program: Command): void {
  const report = program
    .command('report')
    .description("turnover, executors' rewards and revenue per UTC day, from the ledger (USDT; the API also answers CSV: ?format=csv)");
  for (const [by, owner] of [
    ['merchants', 'merchant_id'],
    ['executors', 'executor_id'],
  ] as const) {
    report
      .command(by)
      .description(`per day and ${by.slice(0, -1)}, with totals`)
      .option('--from <date>', 'first UTC day, YYYY-MM-DD (default: 29 days before --to)')
      .option('--to <date>', 'last UTC day, YYYY-MM-DD (default: today); at most 366 days in all')
      .option('--merchant <id>', "only this merchant's postings")
      .option('--executor <id>', "only postings moving this executor's money")
      .action(async (options: Record<string, unknown>, command: Command) => {
        const s = session(command);
        const query = queryString(pick(options, { from: 'from', to: 'to', merchant: 'merchant_id', executor: 'executor_id' }));
        const body = await s.api<JsonObject & { rows: JsonObject[]; totals: JsonObject }>('GET', `/reports/${by}${query}`);
        output(s, body, (b) => {
          console.log(`${text(b.from)} .. ${text(b.to)} (UTC), USDT\n`);
          printTable(b.rows, ['day', owner, ...REPORT_FIGURES]);
          console.log('');
          printTable([{ day: 'total', ...b.totals }], ['day', ...REPORT_FIGURES]);
        });
      });
  }
}
