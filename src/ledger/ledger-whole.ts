import type { Decimal } from 'decimal.js';
import type { Queryable } from '../db/pool.js';
import { money } from '../lib/money.js';

/**
 * The whole ledger check's reads of history in bounded pieces (issue 38; docs/performance.md "The
 * whole check in pieces"): at 10^7 payments a single pass read 4.4 · 10^7 entries and 2 · 10^7
 * transactions in a few statements of a minute each, and the creates beside it took 2.2–2.7 ms of
 * PostgreSQL instead of 0.5. Here every statement reads one piece — a range of entry ids, of
 * transactions' or payments' creation times, of deposit ids — through an index, in a transaction of
 * its own, and the caller may pause between pieces.
 *
 * What the pieces find, taken together, is what one pass finds over the rows before `until` (a
 * settled instant, system-totals.ts: every transaction that began before it has ended, so those
 * rows are all there when the first piece runs and none appears behind it later):
 *
 * - every account's sum of the entries created before `until` (the totals of ledger_check_totals),
 *   entry-id piece by piece: the pieces cover every id up to the largest one there after `until`
 *   was read, which every entry before `until` has;
 * - each transaction whose entries do not sum to zero: in at least one piece its entries there do
 *   not (the pieces' sums add up to its sum), so each piece names the transactions whose entries in
 *   it do not, and those few (a transaction split by a piece's edge among them) are summed over all
 *   their entries at the end — the same sums and texts as one pass;
 * - each transaction without entries: a transaction of a piece of creation times with no entry in
 *   those times (entries carry their transaction's start) is looked at again over every month;
 * - the payments' and deposits' per-row invariants, each piece's rows with their postings.
 *
 * Each row's postings are looked up row by row (LATERAL, which the planner cannot turn into a join
 * that reads every entry or transaction of a kind): the cost of a piece is its rows'.
 *
 * The rows from `until` on — and the sums, which need the balances read in the same snapshot as the
 * entries — are the check since `until` (ledger-since.ts), with these totals.
 */

/** One bounded statement of the whole check, as the service reports it (progress, tests). */
export interface LedgerPiece {
  table: 'ledger_entries' | 'ledger_transactions' | 'payments' | 'executor_deposits';
  /** The piece's lower bound (an entry id, a creation time, a deposit id after which), as text; null: from the first row. */
  from: string | null;
  /** Its upper bound (exclusive, inclusive for deposits); null: to the last row. */
  to: string | null;
  /** Rows of the table it read. */
  rows: number;
  ms: number;
}

/** How big a piece is, in rows of its table. */
export interface PieceSizes {
  entries: number;
  transactions: number;
  payments: number;
  deposits: number;
}

/**
 * 100,000 entries and 50,000 transactions or payments: 0.2 s, 0.15 s and 0.6 s a piece (medians) on
 * the bench's database of 2 · 10^6 payments beside a create load (docs/performance.md "The whole
 * check in pieces"): a piece's time is its rows', whatever the history's size.
 */
export const DEFAULT_PIECE_SIZES: PieceSizes = { entries: 100_000, transactions: 50_000, payments: 50_000, deposits: 50_000 };

/** What the pieces found in the rows before `until`. */
export interface WholeFindings {
  /** Each account's sum of the entries created before `until`. */
  totals: Map<string, Decimal>;
  unbalanced: Array<{ id: string; kind: string; total: string }>;
  empty: Array<{ id: string; kind: string }>;
  deposits: Array<{ id: string; tx_hash: string; credits: number }>;
  withoutHold: Array<{ id: string }>;
  miscredited: Array<{ id: string; status: string; credits: number }>;
}

/** Runs one piece: `run` returns the rows it read; the caller's `done` hears of each piece (and may pause). */
type Piece = (table: LedgerPiece['table'], from: string | null, to: string | null, run: () => Promise<number>) => Promise<void>;

/** How many suspects are looked at again in one statement. */
const SUSPECTS_PER_STATEMENT = 1_000;

/** Reads the rows before `until` in pieces; `piece` runs (and reports, and paces) each one. */
export async function wholeFindings(db: Queryable, until: Date, sizes: PieceSizes, piece: Piece): Promise<WholeFindings> {
  const found: WholeFindings = { totals: new Map(), unbalanced: [], empty: [], deposits: [], withoutHold: [], miscredited: [] };
  await entryPieces(db, until, sizes.entries, piece, found);
  await transactionPieces(db, until, sizes.transactions, piece, found);
  await paymentPieces(db, until, sizes.payments, piece, found);
  await depositPieces(db, sizes.deposits, piece, found);
  return found;
}

/**
 * Entries by ranges of their id (each partition's primary key (id, created_at) leads with it):
 * each account's sum of those before `until`, and the transactions whose entries in the range do
 * not sum to zero. Then those transactions summed over all their entries.
 */
async function entryPieces(db: Queryable, until: Date, size: number, piece: Piece, found: WholeFindings): Promise<void> {
  // Read after `until`: every entry before it is committed, with an id up to this one.
  const { rows: ends } = await db.query<{ first: string | null; last: string | null }>(
    'SELECT min(id)::text AS first, max(id)::text AS last FROM ledger_entries',
  );
  const suspects = new Set<string>();
  if (ends[0]?.first != null && ends[0].last != null) {
    const last = BigInt(ends[0].last);
    for (let from = BigInt(ends[0].first); from <= last; from += BigInt(size)) {
      const to = from + BigInt(size);
      await piece('ledger_entries', from.toString(), to.toString(), async () => {
        const { rows } = await db.query<{ account_id: string | null; transaction_id: string | null; before: string; total: string; n: number }>(
          `SELECT account_id, transaction_id, coalesce(sum(amount) FILTER (WHERE created_at < $3), 0)::text AS before,
                  sum(amount)::text AS total, count(*)::int AS n
             FROM ledger_entries WHERE id >= $1 AND id < $2
            GROUP BY GROUPING SETS ((account_id), (transaction_id))
           HAVING GROUPING(transaction_id) = 1 OR sum(amount) <> 0`,
          [from.toString(), to.toString(), until],
        );
        let read = 0;
        for (const row of rows) {
          if (row.transaction_id !== null) {
            suspects.add(row.transaction_id);
            continue;
          }
          read += row.n;
          const kept = found.totals.get(row.account_id!);
          found.totals.set(row.account_id!, kept ? kept.plus(row.before) : money(row.before));
        }
        return read;
      });
    }
  }
  for (const batch of batches([...suspects])) {
    const { rows } = await db.query<{ id: string; kind: string; total: string }>(
      `SELECT t.id, t.kind, s.total::text AS total
         FROM ledger_transactions t
         CROSS JOIN LATERAL (SELECT sum(e.amount) AS total FROM ledger_entries e WHERE e.transaction_id = t.id) s
        WHERE t.id = ANY($1::uuid[]) AND s.total <> 0`,
      [batch],
    );
    found.unbalanced.push(...rows);
  }
}

/**
 * Transactions by ranges of their creation time (ledger_transactions_created), each with no entry
 * in the same range — its entries carry its start, so the probe reads the months of the range
 * only; the few that have none there are looked for in every month.
 */
async function transactionPieces(db: Queryable, until: Date, size: number, piece: Piece, found: WholeFindings): Promise<void> {
  const suspects: string[] = [];
  for await (const [from, to] of timeRanges(db, 'ledger_transactions', until, size)) {
    await piece('ledger_transactions', from, to, async () => {
      const { rows } = await db.query<{ id: string | null; n: number | null }>(
        `WITH t AS MATERIALIZED (SELECT id FROM ledger_transactions WHERE created_at >= $1 AND created_at < $2)
         SELECT NULL::uuid AS id, (SELECT count(*) FROM t)::int AS n
         UNION ALL
         SELECT t.id, NULL FROM t
           LEFT JOIN LATERAL (SELECT 1 AS one FROM ledger_entries e
                               WHERE e.transaction_id = t.id AND e.created_at >= $1 AND e.created_at < $2 LIMIT 1) e ON true
          WHERE e.one IS NULL`,
        [from, to],
      );
      for (const row of rows) if (row.id !== null) suspects.push(row.id);
      return rows.find((row) => row.id === null)?.n ?? 0;
    });
  }
  for (const batch of batches(suspects)) {
    const { rows } = await db.query<{ id: string; kind: string }>(
      `SELECT t.id, t.kind FROM ledger_transactions t
         LEFT JOIN LATERAL (SELECT 1 AS one FROM ledger_entries e WHERE e.transaction_id = t.id LIMIT 1) e ON true
        WHERE t.id = ANY($1::uuid[]) AND e.one IS NULL`,
      [batch],
    );
    found.empty.push(...rows);
  }
}

/**
 * Payments by ranges of their creation time (payments_created), each with its postings (by kind
 * and ref_id, ledger_transactions_once): the hand-out's hold, and a pay-in exactly when completed.
 * The same conditions as ledger.repo.ts paymentsWithoutHold and miscreditedPayments.
 */
async function paymentPieces(db: Queryable, until: Date, size: number, piece: Piece, found: WholeFindings): Promise<void> {
  for await (const [from, to] of timeRanges(db, 'payments', until, size)) {
    await piece('payments', from, to, async () => {
      const { rows } = await db.query<{ id: string | null; status: string | null; credits: number | null; without_hold: boolean; n: number | null }>(
        `WITH p AS MATERIALIZED (
           SELECT p.id, p.status, p.hold, p.is_test, h.one IS NOT NULL AS held, c.credits
             FROM payments p
             LEFT JOIN LATERAL (SELECT 1 AS one FROM ledger_transactions t WHERE t.kind = 'payin_hold' AND t.ref_id = p.id LIMIT 1) h ON true
             CROSS JOIN LATERAL (SELECT count(*)::int AS credits FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) c
            WHERE p.created_at >= $1 AND p.created_at < $2)
         SELECT NULL::uuid AS id, NULL::text AS status, NULL::int AS credits, false AS without_hold, (SELECT count(*) FROM p)::int AS n
         UNION ALL
         SELECT id, NULL, NULL, true, NULL FROM p WHERE hold IS NOT NULL AND NOT held
         UNION ALL
         SELECT id, status, credits, false, NULL FROM p WHERE (status IN ('COMPLETED', 'COMPLETED_APPEAL') AND NOT is_test) <> (credits > 0)`,
        [from, to],
      );
      let read = 0;
      for (const row of rows) {
        if (row.id === null) read = row.n ?? 0;
        else if (row.without_hold) found.withoutHold.push({ id: row.id });
        else found.miscredited.push({ id: row.id, status: row.status!, credits: row.credits! });
      }
      return read;
    });
  }
}

/**
 * Deposits by ranges of their id (the primary key), each with its credits; and the deposit credits
 * whose ref_id falls in the same range (ledger_transactions_once) without their deposit. The same
 * conditions as ledger.repo.ts miscreditedDeposits.
 */
async function depositPieces(db: Queryable, size: number, piece: Piece, found: WholeFindings): Promise<void> {
  let from: string | null = null;
  for (;;) {
    const ends: { rows: Array<{ id: string }> } = await db.query<{ id: string }>(
      'SELECT id FROM executor_deposits WHERE $1::uuid IS NULL OR id > $1 ORDER BY id OFFSET $2 LIMIT 1',
      [from, size - 1],
    );
    const to: string | null = ends.rows[0]?.id ?? null;
    await piece('executor_deposits', from, to, async () => {
      const { rows } = await db.query<{ id: string | null; tx_hash: string; credits: number; n: number | null }>(
        `WITH d AS MATERIALIZED (
           SELECT d.id, d.tx_hash, c.credits FROM executor_deposits d
            CROSS JOIN LATERAL (
              SELECT count(*)::int AS credits FROM ledger_transactions t
               WHERE t.kind = 'executor_deposit' AND t.ref_id = d.id
                 AND EXISTS (SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
                              WHERE e.transaction_id = t.id AND a.kind = 'executor_available' AND a.executor_id = d.executor_id AND e.amount = d.amount)) c
            WHERE ($1::uuid IS NULL OR d.id > $1) AND ($2::uuid IS NULL OR d.id <= $2))
         SELECT NULL::uuid AS id, '' AS tx_hash, 0 AS credits, (SELECT count(*) FROM d)::int AS n
         UNION ALL
         SELECT id, tx_hash, credits, NULL FROM d WHERE credits <> 1
         UNION ALL
         SELECT t.ref_id, coalesce(t.memo, ''), 0, NULL FROM ledger_transactions t
           LEFT JOIN LATERAL (SELECT 1 AS one FROM executor_deposits d WHERE d.id = t.ref_id LIMIT 1) d ON true
          -- ref_id IS NOT NULL: the predicate of ledger_transactions_once, for the pieces whose bounds are open
          WHERE t.kind = 'executor_deposit' AND t.ref_id IS NOT NULL AND ($1::uuid IS NULL OR t.ref_id > $1) AND ($2::uuid IS NULL OR t.ref_id <= $2)
            AND d.one IS NULL`,
        [from, to],
      );
      let read = 0;
      for (const row of rows) {
        if (row.n !== null) read = row.n;
        else found.deposits.push({ id: row.id!, tx_hash: row.tx_hash, credits: row.credits });
      }
      return read;
    });
    if (to === null) return;
    from = to;
  }
}

/**
 * Ranges [from, to) of `table`'s created_at that cover every row before `until`, each of about
 * `size` rows: its end is the creation time of the size-th row from its start (an index-only read
 * of the created_at index), or the next later one when that many share its start. The bounds are
 * PostgreSQL's text, to the microsecond (a Date would cut them to the millisecond).
 */
async function* timeRanges(db: Queryable, table: 'ledger_transactions' | 'payments', until: Date, size: number): AsyncGenerator<[string, string]> {
  const { rows: first } = await db.query<{ at: string | null }>(`SELECT min(created_at)::text AS at FROM ${table} WHERE created_at < $1`, [until]);
  let from = first[0]?.at ?? null;
  while (from !== null) {
    const { rows } = await db.query<{ at: string; last: boolean }>(
      `WITH n AS (SELECT coalesce((SELECT created_at FROM ${table} WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at OFFSET $3 LIMIT 1), $2) AS at),
            m AS (SELECT CASE WHEN n.at > $1 THEN n.at
                              ELSE coalesce((SELECT min(created_at) FROM ${table} WHERE created_at > $1 AND created_at < $2), $2) END AS at FROM n)
       SELECT at::text AS at, at >= $2 AS last FROM m`,
      [from, until, size],
    );
    yield [from, rows[0]!.at];
    from = rows[0]!.last ? null : rows[0]!.at;
  }
}

function batches(ids: string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += SUSPECTS_PER_STATEMENT) out.push(ids.slice(i, i + SUSPECTS_PER_STATEMENT));
  return out;
}
