import type { Db, Queryable } from '../db/pool.js';
import { money } from '../lib/money.js';
import { getSetting, putSetting } from '../settings.repo.js';
import * as repo from './ledger.repo.js';
import { advanceWatermark, driftedAccountsSince, entriesTotalSince, type HeldTotals, heldTotals, readWatermark, resetWatermark } from './ledger-since.js';
import { DEFAULT_PIECE_SIZES, type LedgerPiece, type PieceSizes, wholeFindings } from './ledger-whole.js';
import { settledInstant } from './system-totals.js';

export interface LedgerProblem {
  invariant: string;
  detail: string;
}

/** The rows that break each invariant, before they are named (problemsOf). */
interface Findings {
  unbalanced: Array<{ id: string; kind: string; total: string }>;
  empty: Array<{ id: string; kind: string }>;
  /** The sum of every entry. */
  total: string;
  drifted: Array<{ id: string; kind: string; owner: string; balance: string; entries: string }>;
  belowFloor: Array<{ kind: string; owner: string; balance: string; floor: string }>;
  frozen: Array<{ terminal_id: string; frozen: string; held: string }>;
  executorFrozen: Array<{ executor_id: string; frozen: string; held: string }>;
  deposits: Array<{ id: string; tx_hash: string; credits: number }>;
  withoutHold: Array<{ id: string }>;
  miscredited: Array<{ id: string; status: string; credits: number }>;
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
 * read the accounts and the open payouts, withdrawals, payments and disputes (each through an index
 * of its open rows), not history. Without `since`, one pass over the whole ledger in a few big
 * statements: for a copy nothing else runs on (the backup's restore check) and as the reference
 * the whole check in pieces is held to (checkWholeLedger, which the operator's check and the daily
 * job run on a live desk).
 */
export async function checkLedger(db: Queryable, options: { since?: Date } = {}): Promise<{ ok: boolean; problems: LedgerProblem[] }> {
  const problems = problemsOf(options.since ? await findingsSince(db, options.since) : await findingsInOnePass(db));
  return { ok: problems.length === 0, problems };
}

/** What one pass over the whole ledger finds. */
async function findingsInOnePass(db: Queryable): Promise<Findings> {
  return {
    unbalanced: await repo.unbalancedTransactions(db),
    empty: await repo.transactionsWithoutEntries(db),
    total: await repo.entriesTotal(db),
    drifted: await repo.driftedAccounts(db),
    belowFloor: await repo.accountsBelowFloor(db),
    frozen: await repo.frozenApartFromOpenHolds(db),
    executorFrozen: await repo.executorFrozenApartFromHolds(db),
    deposits: await repo.miscreditedDeposits(db),
    withoutHold: await repo.paymentsWithoutHold(db),
    miscredited: await repo.miscreditedPayments(db),
  };
}

/** What the check since `since` finds; with `held`, the totals up to `since` are those, not ledger_check_totals. */
async function findingsSince(db: Queryable, since: Date, held?: HeldTotals): Promise<Findings> {
  return {
    unbalanced: await repo.unbalancedTransactions(db, since),
    empty: await repo.transactionsWithoutEntries(db, since),
    total: await entriesTotalSince(db, since, held),
    drifted: await driftedAccountsSince(db, since, held),
    belowFloor: await repo.accountsBelowFloor(db),
    frozen: await repo.frozenApartFromOpenHolds(db),
    executorFrozen: await repo.executorFrozenApartFromHolds(db),
    deposits: await repo.miscreditedDeposits(db, since),
    withoutHold: await repo.paymentsWithoutHold(db, since),
    miscredited: await repo.miscreditedPayments(db, since),
  };
}

/** Options of the whole check in pieces. */
export interface WholeCheckOptions {
  /** After each piece, wait as long as it took (at most half a core, and the creates beside it wait for no long statement). Default true. */
  pause?: boolean;
  /** Rows per piece (DEFAULT_PIECE_SIZES). */
  sizes?: Partial<PieceSizes>;
  /** Hears of each piece once it has run (the job's progress in its log; tests). */
  onPiece?: (piece: LedgerPiece) => void | Promise<void>;
}

/** The whole check's outcome, with what the daily run keeps: the instant its sums end at, and the sums. */
export interface WholeCheck {
  ok: boolean;
  problems: LedgerProblem[];
  /** The settled instant the pieces read up to; the check since it did the rest. */
  until: Date;
  /** Every account's sum of the entries before `until`. */
  totals: HeldTotals;
  pieces: LedgerPiece[];
}

/**
 * The whole check (checkLedger without `since`) in bounded pieces (ledger-whole.ts): the history
 * before a settled instant `until` read piece by piece, each piece one short statement, then the
 * check since `until` — the rows written meanwhile, the present state, and the sums: every
 * account's balance against the pieces' sums plus the entries since, read in one snapshot. The
 * problems, their texts and the sums are one pass's; a transaction or payment both parts see is
 * named once.
 */
export async function checkWholeLedger(db: Queryable, options: WholeCheckOptions = {}): Promise<WholeCheck> {
  const until = await settledInstant(db);
  const pieces: LedgerPiece[] = [];
  const sizes = { ...DEFAULT_PIECE_SIZES, ...options.sizes };
  const found = await wholeFindings(db, until, sizes, async (table, from, to, run) => {
    const started = performance.now();
    const rows = await run();
    const piece: LedgerPiece = { table, from, to, rows, ms: Math.round(performance.now() - started) };
    pieces.push(piece);
    await options.onPiece?.(piece);
    if (options.pause !== false) await sleep(performance.now() - started);
  });
  const totals = heldTotals(found.totals);
  const since = await findingsSince(db, until, totals);
  const once = <T>(rows: T[], key: (row: T) => string): T[] => [...new Map(rows.map((row) => [key(row), row])).values()];
  const problems = problemsOf({
    ...since,
    unbalanced: once([...found.unbalanced, ...since.unbalanced], (row) => row.id),
    empty: once([...found.empty, ...since.empty], (row) => row.id),
    deposits: once([...found.deposits, ...since.deposits], (row) => `${row.id} ${row.tx_hash}`),
    withoutHold: once([...found.withoutHold, ...since.withoutHold], (row) => row.id),
    miscredited: once([...found.miscredited, ...since.miscredited], (row) => row.id),
  });
  return { ok: problems.length === 0, problems, until, totals, pieces };
}

/** Each finding named: the invariant broken and what breaks it. */
function problemsOf(found: Findings): LedgerProblem[] {
  const problems: LedgerProblem[] = [];
  for (const row of found.unbalanced) {
    problems.push({ invariant: 'transaction balanced', detail: `ledger transaction ${row.id} (${row.kind}) sums to ${row.total}` });
  }
  for (const row of found.empty) {
    problems.push({ invariant: 'transaction has entries', detail: `ledger transaction ${row.id} (${row.kind}) has no entries` });
  }
  if (!money(found.total).isZero()) problems.push({ invariant: 'ledger sums to zero', detail: `all entries sum to ${found.total}` });
  for (const row of found.drifted) {
    problems.push({
      invariant: 'balance equals entries',
      detail: `${owner(row.kind)} ${row.owner} ${row.kind} balance is ${row.balance} but its entries sum to ${row.entries}`,
    });
  }
  for (const row of found.belowFloor) {
    const floor = row.kind === 'executor_available' ? `, below its floor ${row.floor}` : '';
    problems.push({ invariant: 'balance not negative', detail: `${owner(row.kind)} ${row.owner} ${row.kind} is ${row.balance}${floor}` });
  }
  // Frozen funds are exactly the holds of payouts and withdrawals still in progress.
  for (const row of found.frozen) {
    problems.push({
      invariant: 'frozen equals open holds',
      detail: `terminal ${row.terminal_id} has ${row.frozen} frozen but its open payouts and withdrawals hold ${row.held}`,
    });
  }
  // An executor's frozen funds are exactly the holds of its payments still open (and the claimed
  // value of its open disputes), and every
  // payment handed to an executor's requisite took its hold. An executor's withdrawals in progress
  // count in its frozen sum; a terminal's frozen counts only its terminal's withdrawals.
  for (const row of found.executorFrozen) {
    problems.push({
      invariant: 'executor frozen equals open holds',
      detail: `executor ${row.executor_id} has ${row.frozen} frozen but its open payments and withdrawals hold ${row.held}`,
    });
  }
  // Every transfer to an executor's deposit address recorded is credited exactly once, and every
  // deposit credit has its transfer.
  for (const row of found.deposits) {
    problems.push({
      invariant: 'deposits credited once',
      detail: `deposit ${row.id} (transaction ${row.tx_hash}) has ${row.credits} matching executor_deposit credit(s)`,
    });
  }
  for (const row of found.withoutHold) {
    problems.push({ invariant: 'hand-out holds the deposit', detail: `payment ${row.id} was handed to an executor without a hold posting` });
  }
  for (const row of found.miscredited) {
    problems.push({
      invariant: 'completed payments credited once',
      detail: `payment ${row.id} is ${row.status} with ${row.credits} pay-in credit(s)`,
    });
  }
  return problems;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
  /** The whole check's: the pieces it read history in. */
  pieces?: number;
}

/**
 * Runs the ledger check over the whole ledger and keeps its outcome in the database, where every
 * instance's /metrics reads it back: the check reads the whole ledger, too much to run on every
 * scrape. Run by the operator's GET /admin/v1/ledger/check (and `kassir ledger check`) and by the
 * job once a day, in pieces with a pause after each (checkWholeLedger): on a live desk at 10^7
 * payments a single pass held the creates back for minutes. Its problems are kept too: the hourly
 * runs, which read only what is new, report them on until a whole check finds them gone.
 */
export async function checkAndRecordLedger(db: Queryable, options: WholeCheckOptions = {}): Promise<WholeCheck> {
  const started = Date.now();
  const result = await checkWholeLedger(db, options);
  await putSetting(db, LEDGER_WHOLE_CHECK_SETTING, JSON.stringify({ at: new Date().toISOString(), problems: result.problems.slice(0, KEPT_WHOLE_PROBLEMS) }));
  const record: LedgerCheckRecord = {
    at: new Date().toISOString(),
    ok: result.ok,
    problems: result.problems.length,
    ms: Date.now() - started,
    pieces: result.pieces.length,
  };
  await putSetting(db, LEDGER_CHECK_SETTING, JSON.stringify(record));
  return result;
}

/**
 * The ledger_check job's run (every hour at minute 41): the whole check at WHOLE_CHECK_HOUR_UTC,
 * at the first run, and when the last whole one is more than a day old (the service was down at
 * that hour), whose sums become the totals kept and whose `until` the watermark; otherwise the
 * check since the watermark, which then moves on to a settled instant read before the check. One
 * run at a time (the job key). The outcome is kept for /metrics as the operator's check's is; a
 * run since the watermark adds the last whole check's problems it did not find itself (a problem
 * in rows before the watermark is seen only by a whole check).
 */
export async function checkLedgerByJob(
  db: Db,
  now = new Date(),
  options: WholeCheckOptions = {},
): Promise<{ ok: boolean; problems: LedgerProblem[]; since?: Date }> {
  const mark = await readWatermark(db);
  const wholeDue = !mark || now.getUTCHours() === WHOLE_CHECK_HOUR_UTC || now.getTime() - mark.wholeAt.getTime() > 25 * 3_600_000;
  if (wholeDue) {
    const { ok, problems, until, totals } = await checkAndRecordLedger(db, options);
    await resetWatermark(db, until, totals);
    return { ok, problems };
  }
  const until = await settledInstant(db);
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
