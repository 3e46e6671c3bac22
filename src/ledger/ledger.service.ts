import type { Db, Queryable } from '../db/pool.js';
import { money } from '../lib/money.js';
import { getSetting, putSetting } from '../settings.repo.js';
import * as repo from './ledger.repo.js';
import { advanceWatermark, driftedAccountsSince, entriesTotalSince, readWatermark, resetWatermark } from './ledger-since.js';
import { settledInstant } from './system-totals.js';

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
 *
 * With `since` (the hourly job's watermark, ledger-since.ts), the same invariants and the same
 * texts, read from what was written since: each transaction, payment and deposit created since or
 * with a posting since; the sums as the totals kept up to `since` plus the entries since. The
 * invariants about the present state (floors, frozen = open holds) read it whole either way: they
 * read the accounts and the open payouts, withdrawals, payments and disputes, not history.
 */
export async function checkLedger(db: Queryable, options: { since?: Date } = {}): Promise<{ ok: boolean; problems: LedgerProblem[] }> {
  const problems: LedgerProblem[] = [];
  const { since } = options;

  for (const row of await repo.unbalancedTransactions(db, since)) {
    problems.push({ invariant: 'transaction balanced', detail: `ledger transaction ${row.id} (${row.kind}) sums to ${row.total}` });
  }

  for (const row of await repo.transactionsWithoutEntries(db, since)) {
    problems.push({ invariant: 'transaction has entries', detail: `ledger transaction ${row.id} (${row.kind}) has no entries` });
  }

  const total = since ? await entriesTotalSince(db, since) : await repo.entriesTotal(db);
  if (!money(total).isZero()) problems.push({ invariant: 'ledger sums to zero', detail: `all entries sum to ${total}` });

  for (const row of since ? await driftedAccountsSince(db, since) : await repo.driftedAccounts(db)) {
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
  for (const row of await repo.miscreditedDeposits(db, since)) {
    problems.push({
      invariant: 'deposits credited once',
      detail: `deposit ${row.id} (transaction ${row.tx_hash}) has ${row.credits} matching executor_deposit credit(s)`,
    });
  }
  for (const row of await repo.paymentsWithoutHold(db, since)) {
    problems.push({ invariant: 'hand-out holds the deposit', detail: `payment ${row.id} was handed to an executor without a hold posting` });
  }

  for (const row of await repo.miscreditedPayments(db, since)) {
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

/** The settings key of the last whole check's problems (the hourly check since the watermark carries them on). */
export const LEDGER_WHOLE_CHECK_SETTING = 'ledger_check_whole_last';

/** At most this many of a whole check's problems are kept for the hourly runs to carry on. */
const KEPT_WHOLE_PROBLEMS = 100;

/** The hour (UTC) whose run of the job (minute 41) checks the whole ledger: a quiet one. */
export const WHOLE_CHECK_HOUR_UTC = 3;

/** The last ledger check's outcome as stored: when it finished, whether it was ok, how many problems, how long it took. */
export interface LedgerCheckRecord {
  at: string;
  ok: boolean;
  problems: number;
  ms: number;
  /** `whole`, or the watermark the check read from (the hourly job's runs but the daily one). */
  since?: string;
}

/**
 * Runs the ledger check over the whole ledger and keeps its outcome in the database, where every
 * instance's /metrics reads it back: the check reads the whole ledger, too much to run on every
 * scrape. Run by the operator's GET /admin/v1/ledger/check (and `kassir ledger check`) and by the
 * job once a day. Its problems are kept too: the hourly runs, which read only what is new, report
 * them on until a whole check finds them gone.
 */
export async function checkAndRecordLedger(db: Queryable): Promise<{ ok: boolean; problems: LedgerProblem[] }> {
  const started = Date.now();
  const result = await checkLedger(db);
  await putSetting(db, LEDGER_WHOLE_CHECK_SETTING, JSON.stringify({ at: new Date().toISOString(), problems: result.problems.slice(0, KEPT_WHOLE_PROBLEMS) }));
  const record: LedgerCheckRecord = { at: new Date().toISOString(), ok: result.ok, problems: result.problems.length, ms: Date.now() - started };
  await putSetting(db, LEDGER_CHECK_SETTING, JSON.stringify(record));
  return result;
}

/**
 * The ledger_check job's run (every hour at minute 41): the whole check at WHOLE_CHECK_HOUR_UTC,
 * at the first run, and when the last whole one is more than a day old (the service was down at
 * that hour); otherwise the check since the watermark, which then moves on to a settled instant
 * read before the check. One run at a time (the job key). The outcome is kept for /metrics as the
 * operator's check's is; a run since the watermark adds the last whole check's problems it did
 * not find itself (a problem in rows before the watermark is seen only by a whole check).
 */
export async function checkLedgerByJob(db: Db, now = new Date()): Promise<{ ok: boolean; problems: LedgerProblem[]; since?: Date }> {
  const until = await settledInstant(db);
  const mark = await readWatermark(db);
  const wholeDue = !mark || now.getUTCHours() === WHOLE_CHECK_HOUR_UTC || now.getTime() - mark.wholeAt.getTime() > 25 * 3_600_000;
  if (wholeDue) {
    const result = await checkAndRecordLedger(db);
    await resetWatermark(db, until);
    return result;
  }
  const started = Date.now();
  const found = await checkLedger(db, { since: mark.upto });
  const stored = await getSetting(db, LEDGER_WHOLE_CHECK_SETTING);
  const whole: LedgerProblem[] = stored ? (JSON.parse(stored) as { problems: LedgerProblem[] }).problems : [];
  const seen = new Set(found.problems.map((p) => `${p.invariant}\n${p.detail}`));
  const problems = [...found.problems, ...whole.filter((p) => !seen.has(`${p.invariant}\n${p.detail}`))];
  await advanceWatermark(db, mark.upto, until);
  const record: LedgerCheckRecord = {
    at: new Date().toISOString(),
    ok: problems.length === 0,
    problems: problems.length,
    ms: Date.now() - started,
    since: mark.upto.toISOString(),
  };
  await putSetting(db, LEDGER_CHECK_SETTING, JSON.stringify(record));
  return { ok: problems.length === 0, problems, since: mark.upto };
}
