import type { Queryable } from '../db/pool.js';
import { money } from '../lib/money.js';
import * as repo from './ledger.repo.js';

export interface LedgerProblem {
  invariant: string;
  detail: string;
}

/**
 * Verifies the invariants of DESIGN.md decision 14 over the whole ledger and names each breach:
 * every transaction sums to zero; all entries sum to zero; each terminal account's kept balance
 * equals the sum of its entries; no terminal account is negative; every completed payment is
 * credited exactly once and nothing else is.
 */
export async function checkLedger(db: Queryable): Promise<{ ok: boolean; problems: LedgerProblem[] }> {
  const problems: LedgerProblem[] = [];

  for (const row of await repo.unbalancedTransactions(db)) {
    problems.push({ invariant: 'transaction balanced', detail: `ledger transaction ${row.id} (${row.kind}) sums to ${row.total}` });
  }

  for (const row of await repo.transactionsWithoutEntries(db)) {
    problems.push({ invariant: 'transaction has entries', detail: `ledger transaction ${row.id} (${row.kind}) has no entries` });
  }

  const total = await repo.entriesTotal(db);
  if (!money(total).isZero()) problems.push({ invariant: 'ledger sums to zero', detail: `all entries sum to ${total}` });

  for (const row of await repo.driftedTerminalAccounts(db)) {
    problems.push({
      invariant: 'balance equals entries',
      detail: `terminal ${row.terminal_id} ${row.kind} balance is ${row.balance} but its entries sum to ${row.entries}`,
    });
  }

  for (const row of await repo.negativeTerminalAccounts(db)) {
    problems.push({ invariant: 'balance not negative', detail: `terminal ${row.terminal_id} ${row.kind} is ${row.balance}` });
  }

  // Frozen funds are exactly the holds of payouts and withdrawals still in progress.
  for (const row of await repo.frozenApartFromOpenHolds(db)) {
    problems.push({
      invariant: 'frozen equals open holds',
      detail: `terminal ${row.terminal_id} has ${row.frozen} frozen but its open payouts and withdrawals hold ${row.held}`,
    });
  }

  for (const row of await repo.miscreditedPayments(db)) {
    problems.push({
      invariant: 'completed payments credited once',
      detail: `payment ${row.id} is ${row.status} with ${row.credits} pay-in credit(s)`,
    });
  }
  return { ok: problems.length === 0, problems };
}
