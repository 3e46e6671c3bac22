import type { Decimal } from 'decimal.js';
import type { Db, Queryable } from '../db/pool.js';
import { transaction } from '../db/pool.js';

/**
 * What the hourly ledger check keeps between runs so that it reads only what was written since the
 * previous one (migration 065): a watermark `upto`, and every account's sum of the entries before
 * it (ledger_check_totals). Entries are append-only (ledger_entries_append_only) and carry their
 * transaction's start, as the transaction row does; `upto` is a settled instant (system-totals.ts:
 * no transaction that could still write began before it), so no entry appears behind it later.
 *
 * The entries "since" an instant are found through the transactions created since it
 * (ledger_transactions_created) and each one's entries in the months from that instant on
 * (ledger_entries_transaction, older partitions pruned): the cost is the entries written since, not
 * the ledger's history.
 */

export interface LedgerWatermark {
  /** The rows before this instant were checked by an earlier run; the totals sum the entries before it. */
  upto: Date;
  /** When the totals were last summed from every entry (the whole run). */
  wholeAt: Date;
}

export async function readWatermark(db: Queryable): Promise<LedgerWatermark | undefined> {
  const { rows } = await db.query<{ upto: Date; whole_at: Date }>('SELECT upto, whole_at FROM ledger_check_watermark');
  return rows[0] ? { upto: rows[0].upto, wholeAt: rows[0].whole_at } : undefined;
}

/** Each account's entries (those of the transactions created since `since`) summed, for the totals. */
const ENTRIES_SINCE = `SELECT e.account_id, sum(e.amount) AS amount
    FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.created_at >= $1
   WHERE t.created_at >= $1`;

/**
 * Each account's sum of the entries before an instant, held by the caller (the whole check's, which
 * summed them in pieces: ledger-whole.ts) rather than kept in ledger_check_totals. Sums as text to
 * the entries' six places, so that the texts built from them are the kept totals' texts.
 */
export interface HeldTotals {
  accounts: string[];
  totals: string[];
}

/** The totals held as arrays for a statement's parameters. */
export function heldTotals(totals: Map<string, Decimal>): HeldTotals {
  return { accounts: [...totals.keys()], totals: [...totals.values()].map((total) => total.toFixed(6)) };
}

/** The totals up to the watermark: ledger_check_totals, or those held (parameters $2 and $3). */
function totalsFrom(held: HeldTotals | undefined): string {
  return held ? '(SELECT * FROM unnest($2::uuid[], $3::numeric[]) AS h(account_id, total))' : 'ledger_check_totals';
}

/**
 * Terminal and executor accounts whose kept balance differs from their entries: the total kept up
 * to `since` (or held by the caller) plus the entries since, in one statement (one snapshot). Same
 * rows as ledger.repo.ts driftedAccounts.
 */
export async function driftedAccountsSince(
  db: Queryable,
  since: Date,
  held?: HeldTotals,
): Promise<Array<{ id: string; kind: string; owner: string; balance: string; entries: string }>> {
  const { rows } = await db.query<{ id: string; kind: string; owner: string; balance: string; entries: string }>(
    `WITH s AS MATERIALIZED (${ENTRIES_SINCE} GROUP BY e.account_id)
     SELECT a.id, a.kind, coalesce(a.terminal_id, a.executor_id) AS owner, a.balance::text,
            (coalesce(k.total, 0) + coalesce(s.amount, 0))::text AS entries
       FROM ledger_accounts a
       LEFT JOIN ${totalsFrom(held)} k ON k.account_id = a.id
       LEFT JOIN s ON s.account_id = a.id
      WHERE (a.kind LIKE 'terminal_%' OR a.kind LIKE 'executor_%') AND a.balance <> coalesce(k.total, 0) + coalesce(s.amount, 0)`,
    held ? [since, held.accounts, held.totals] : [since],
  );
  return rows;
}

/** The sum of every entry of the ledger: the totals kept up to `since` (or held by the caller) and the entries since, as text. */
export async function entriesTotalSince(db: Queryable, since: Date, held?: HeldTotals): Promise<string> {
  const { rows } = await db.query<{ total: string }>(
    `SELECT (coalesce((SELECT sum(total) FROM ${totalsFrom(held)} k), 0)
           + coalesce((SELECT sum(e.amount) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.created_at >= $1
                        WHERE t.created_at >= $1), 0))::text AS total`,
    held ? [since, held.accounts, held.totals] : [since],
  );
  return rows[0]!.total;
}

/**
 * Moves the watermark from `from` on to `until` (a settled instant read before this), adding the
 * entries in between to the totals. Refused (false) when the watermark is no longer at `from`:
 * another run moved it meanwhile.
 */
export async function advanceWatermark(db: Db, from: Date, until: Date): Promise<boolean> {
  return transaction(db, async (tx) => {
    const { rows } = await tx.query<{ upto: Date }>('SELECT upto FROM ledger_check_watermark FOR UPDATE');
    if (rows[0]?.upto.getTime() !== from.getTime() || until <= from) return false;
    await tx.query(
      `INSERT INTO ledger_check_totals (account_id, total)
       ${ENTRIES_SINCE} AND t.created_at < $2 AND e.created_at < $2 GROUP BY e.account_id
       ON CONFLICT (account_id) DO UPDATE SET total = ledger_check_totals.total + EXCLUDED.total`,
      [from, until],
    );
    await tx.query('UPDATE ledger_check_watermark SET upto = $1', [until]);
    return true;
  });
}

/**
 * Puts the watermark at `until` (a settled instant) with every account's sum of the entries before
 * it: the whole run's, once a day and at the first run, so that the totals never differ from the
 * entries for more than a day, whatever happened to them. The sums are the whole check's, summed in
 * pieces (ledger-whole.ts); an account that no longer exists (entries whose account row is gone)
 * has no row here: the check counted it in "the ledger sums to zero" already.
 */
export async function resetWatermark(db: Db, until: Date, held: HeldTotals): Promise<void> {
  await transaction(db, async (tx) => {
    // One run at a time (the job key makes it so; this lock keeps it so for an operator's call).
    await tx.query('LOCK TABLE ledger_check_watermark IN EXCLUSIVE MODE');
    await tx.query('DELETE FROM ledger_check_totals');
    await tx.query(
      `INSERT INTO ledger_check_totals (account_id, total)
       SELECT h.account_id, h.total FROM unnest($1::uuid[], $2::numeric[]) AS h(account_id, total)
        WHERE EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = h.account_id)`,
      [held.accounts, held.totals],
    );
    await tx.query(
      `INSERT INTO ledger_check_watermark (upto, whole_at) VALUES ($1, now())
       ON CONFLICT (one) DO UPDATE SET upto = EXCLUDED.upto, whole_at = EXCLUDED.whole_at`,
      [until],
    );
  });
}
