import type { Queryable } from '../db/pool.js';
import { money } from '../lib/money.js';
import { putSetting } from '../settings.repo.js';
import * as repo from './ledger.repo.js';

export interface LedgerProblem {
  invariant: string;
  detail: string;
}

/**
 * Verifies the invariants of DESIGN.md decision 14 over the whole ledger and names each breach:
 * every transaction sums to zero; all entries sum to zero; each terminal and executor account's
 * kept balance equals the sum of its entries; no terminal account is negative and no executor
 * account below its floor; frozen funds are exactly the open holds; every completed payment is
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

  for (const row of await repo.driftedAccounts(db)) {
    problems.push({
      invariant: 'balance equals entries',
      detail: `${owner(row.kind)} ${row.owner} ${row.kind} balance is ${row.balance} but its entries sum to ${row.entries}`,
    });
  }

  for (const row of await repo.accountsBelowFloor(db)) {
    const floor = row.kind === 'executor_available' ? `, below its floor ${row.floor}` : '';
    problems.push({ invariant: 'balance not negative', detail: `${owner(row.kind)} ${row.owner} ${row.kind} is ${row.balance}${floor}` });
  }

  // Frozen funds are exactly the holds of payouts and withdrawals still in progress.
  for (const row of await repo.frozenApartFromOpenHolds(db)) {
    problems.push({
      invariant: 'frozen equals open holds',
      detail: `terminal ${row.terminal_id} has ${row.frozen} frozen but its open payouts and withdrawals hold ${row.held}`,
    });
  }

  // An executor's frozen funds are exactly the holds of its payments still open (and the claimed
  // value of its open disputes), and every
  // payment handed to an executor's requisite took its hold. An executor's withdrawals in progress
  // count in its frozen sum; a terminal's frozen counts only its terminal's withdrawals.
  for (const row of await repo.executorFrozenApartFromHolds(db)) {
    problems.push({
      invariant: 'executor frozen equals open holds',
      detail: `executor ${row.executor_id} has ${row.frozen} frozen but its open payments and withdrawals hold ${row.held}`,
    });
  }
  // Every transfer to an executor's deposit address recorded is credited exactly once, and every
  // deposit credit has its transfer.
  for (const row of await repo.miscreditedDeposits(db)) {
    problems.push({
      invariant: 'deposits credited once',
      detail: `deposit ${row.id} (transaction ${row.tx_hash}) has ${row.credits} matching executor_deposit credit(s)`,
    });
  }
  for (const row of await repo.paymentsWithoutHold(db)) {
    problems.push({ invariant: 'hand-out holds the deposit', detail: `payment ${row.id} was handed to an executor without a hold posting` });
  }

  for (const row of await repo.miscreditedPayments(db)) {
    problems.push({
      invariant: 'completed payments credited once',
      detail: `payment ${row.id} is ${row.status} with ${row.credits} pay-in credit(s)`,
    });
  }
  return { ok: problems.length === 0, problems };
}

function owner(kind: string): string {
  return kind.startsWith('executor_') ? 'executor' : 'terminal';
}

/** The settings key under which the last ledger check's outcome is kept (read back by /metrics). */
export const LEDGER_CHECK_SETTING = 'ledger_check_last';

/** The last ledger check's outcome as stored: when it finished, whether it was ok, how many problems, how long it took. */
export interface LedgerCheckRecord {
  at: string;
  ok: boolean;
  problems: number;
  ms: number;
}

/**
 * Runs the ledger check and keeps its outcome in the database, where every instance's /metrics
 * reads it back: the check reads the whole ledger, too much to run on every scrape. Run by the
 * operator's GET /admin/v1/ledger/check and by the hourly job.
 */
export async function checkAndRecordLedger(db: Queryable): Promise<{ ok: boolean; problems: LedgerProblem[] }> {
  const started = Date.now();
  const result = await checkLedger(db);
  const record: LedgerCheckRecord = { at: new Date().toISOString(), ok: result.ok, problems: result.problems.length, ms: Date.now() - started };
  await putSetting(db, LEDGER_CHECK_SETTING, JSON.stringify(record));
  return result;
}
