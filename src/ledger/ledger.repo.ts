import type { Decimal } from 'decimal.js';
import { prepared, type Queryable, type Tx } from '../db/pool.js';

type TerminalAccountKind = 'terminal_available' | 'terminal_frozen';
type SystemAccountKind = 'system_incoming' | 'system_fee_revenue' | 'system_adjustments' | 'system_outgoing';

type AccountRef = { terminalId: string; kind: TerminalAccountKind } | { kind: SystemAccountKind };

export interface Posting {
  /** What kind of event this is (`payin`, `adjustment`, …); with refId, posted at most once. */
  kind: string;
  refId: string | null;
  merchantId: string | null;
  memo: string | null;
  entries: { account: AccountRef; amount: Decimal }[];
  /**
   * Add this posting's terminal credits to their balances at COMMIT (migration 012) instead of
   * now, so that a terminal's balance row is locked only for the commit itself: for postings that
   * many concurrent transactions make on one terminal (pay-in credits). Debits are always applied
   * now, where an overdraft is refused at once; nothing in the transaction may read the credited
   * balance after this posting.
   */
  creditsAtCommit?: boolean;
}

/** Creates a terminal's available and frozen accounts (at terminal creation). */
export async function createTerminalAccounts(tx: Queryable, terminalId: string, merchantId: string): Promise<void> {
  await tx.query(
    `INSERT INTO ledger_accounts (kind, terminal_id, merchant_id)
     VALUES ('terminal_available', $1, $2), ('terminal_frozen', $1, $2)`,
    [terminalId, merchantId],
  );
}

/**
 * Writes one balanced ledger transaction inside the caller's database transaction. Entries that
 * would take a terminal account below zero fail on the accounts' CHECK constraint; entries that do
 * not sum to zero fail at COMMIT on the balancing trigger. Returns the transaction id.
 */
export async function post(tx: Tx, posting: Posting): Promise<string> {
  const terminalIds: (string | null)[] = [];
  const kinds: string[] = [];
  const amounts: string[] = [];
  const atCommit: boolean[] = [];
  /** Terminal accounts whose balance this statement updates (not left to COMMIT), by "terminal kind". */
  const updatedNow = new Map<string, { terminalId: string; kind: string }>();
  for (const entry of posting.entries) {
    const terminalId = 'terminalId' in entry.account ? entry.account.terminalId : null;
    const deferred = Boolean(posting.creditsAtCommit) && terminalId !== null && entry.amount.isPositive();
    terminalIds.push(terminalId);
    kinds.push(entry.account.kind);
    amounts.push(entry.amount.toFixed());
    atCommit.push(deferred);
    if (terminalId !== null && !deferred) updatedNow.set(`${terminalId} ${entry.account.kind}`, { terminalId, kind: entry.account.kind });
  }
  // Terminal rows are locked in a fixed order (by account id), now and at COMMIT (entries are
  // inserted, and their commit triggers queued, in that order), so concurrent postings cannot
  // deadlock. Where this posting updates two or more terminal accounts now (a reserve, a release,
  // a transfer), they are locked first by a statement of their own: the balance UPDATE below locks
  // rows in the order its join produces them, which under a hash join over the accounts (a generic
  // plan of this prepared statement may be one) is heap order, moving with every update — two
  // postings on one terminal's available and frozen accounts then took them in opposite orders.
  // Locked in the same statement instead, a row a commit-time credit updated after the statement's
  // snapshot is locked a second time by the UPDATE, queued behind the very postings waiting for it.
  if (updatedNow.size > 1) {
    const accounts = [...updatedNow.values()];
    await tx.query(
      prepared(
        `SELECT a.id FROM ledger_accounts a JOIN unnest($1::uuid[], $2::text[]) AS x(terminal_id, kind)
            ON a.terminal_id = x.terminal_id AND a.kind = x.kind
          ORDER BY a.id FOR NO KEY UPDATE OF a`,
        [accounts.map((a) => a.terminalId), accounts.map((a) => a.kind)],
      ),
    );
  }
  // One round trip: the transaction row, the entries, and the terminal balances (those not left
  // to COMMIT).
  const { rows } = await tx.query<{ id: string }>(
    prepared(
      `WITH t AS (
         INSERT INTO ledger_transactions (kind, ref_id, merchant_id, memo) VALUES ($1, $2, $3, $4) RETURNING id
       ), e AS (
         SELECT a.id AS account_id, a.kind, x.amount, x.at_commit
           FROM unnest($5::uuid[], $6::text[], $7::numeric[], $8::boolean[]) AS x(terminal_id, kind, amount, at_commit)
           JOIN ledger_accounts a ON a.kind = x.kind AND a.terminal_id IS NOT DISTINCT FROM x.terminal_id
       ), entries AS (
         INSERT INTO ledger_entries (transaction_id, account_id, amount, applied_at_commit)
         SELECT t.id, e.account_id, e.amount, e.at_commit FROM t, e ORDER BY e.account_id
         RETURNING account_id
       ), balances AS (
         UPDATE ledger_accounts a SET balance = a.balance + d.amount
           FROM (SELECT account_id, sum(amount) AS amount FROM e
                  WHERE kind LIKE 'terminal_%' AND NOT at_commit GROUP BY account_id ORDER BY account_id) d
          WHERE a.id = d.account_id
         RETURNING a.id
       )
       SELECT t.id, (SELECT count(*) FROM entries) AS entries FROM t`,
      [posting.kind, posting.refId, posting.merchantId, posting.memo, terminalIds, kinds, amounts, atCommit],
    ),
  );
  const row = rows[0] as { id: string; entries: number } | undefined;
  if (!row || row.entries !== posting.entries.length) {
    throw new Error(`ledger posting ${posting.kind}: an account is missing (${row?.entries ?? 0}/${posting.entries.length} entries)`);
  }
  return row.id;
}

// The ledger check's queries (ledger.service.ts): each returns the rows that break one invariant.

/** Transactions whose entries do not sum to zero. */
export async function unbalancedTransactions(db: Queryable): Promise<Array<{ id: string; kind: string; total: string }>> {
  const { rows } = await db.query<{ id: string; kind: string; total: string }>(
    `SELECT t.id, t.kind, sum(e.amount)::text AS total
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      GROUP BY t.id, t.kind HAVING sum(e.amount) <> 0`,
  );
  return rows;
}

/** Transactions with no entries at all. */
export async function transactionsWithoutEntries(db: Queryable): Promise<Array<{ id: string; kind: string }>> {
  const { rows } = await db.query<{ id: string; kind: string }>(
    `SELECT t.id, t.kind FROM ledger_transactions t WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id)`,
  );
  return rows;
}

/** The sum of every entry of the ledger, as text. */
export async function entriesTotal(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ total: string }>('SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries');
  return rows[0]!.total;
}

/** Terminal accounts whose kept balance differs from the sum of their entries. */
export async function driftedTerminalAccounts(
  db: Queryable,
): Promise<Array<{ id: string; kind: string; terminal_id: string; balance: string; entries: string }>> {
  const { rows } = await db.query<{ id: string; kind: string; terminal_id: string; balance: string; entries: string }>(
    `SELECT a.id, a.kind, a.terminal_id, a.balance::text, coalesce(s.total, 0)::text AS entries
       FROM ledger_accounts a
       LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries GROUP BY account_id) s ON s.account_id = a.id
      WHERE a.kind LIKE 'terminal_%' AND a.balance <> coalesce(s.total, 0)`,
  );
  return rows;
}

/** Terminal accounts below zero. */
export async function negativeTerminalAccounts(db: Queryable): Promise<Array<{ terminal_id: string; kind: string; balance: string }>> {
  const { rows } = await db.query<{ terminal_id: string; kind: string; balance: string }>(
    `SELECT terminal_id, kind, balance::text FROM ledger_accounts WHERE kind LIKE 'terminal_%' AND balance < 0`,
  );
  return rows;
}

/** Frozen accounts that differ from the reserves of their terminal's payouts and withdrawals still in progress. */
export async function frozenApartFromOpenHolds(db: Queryable): Promise<Array<{ terminal_id: string; frozen: string; held: string }>> {
  const { rows } = await db.query<{ terminal_id: string; frozen: string; held: string }>(
    `SELECT a.terminal_id, a.balance::text AS frozen, coalesce(h.held, 0)::text AS held
       FROM ledger_accounts a
       LEFT JOIN (
         SELECT terminal_id, sum(reserve) AS held FROM (
           SELECT terminal_id, reserve FROM payouts WHERE status IN ('pending', 'processing')
           UNION ALL
           SELECT terminal_id, reserve FROM withdrawals WHERE status IN ('pending', 'processing')
         ) open GROUP BY terminal_id
       ) h ON h.terminal_id = a.terminal_id
      WHERE a.kind = 'terminal_frozen' AND a.balance <> coalesce(h.held, 0)`,
  );
  return rows;
}

/** Payments credited though not completed, or completed without a credit, with their count of pay-in credits. */
export async function miscreditedPayments(db: Queryable): Promise<Array<{ id: string; status: string; credits: number }>> {
  const { rows } = await db.query<{ id: string; status: string; credits: number }>(
    `SELECT p.id, p.status, (SELECT count(*) FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) AS credits
       FROM payments p
      WHERE (p.status IN ('COMPLETED', 'COMPLETED_APPEAL')) <> EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id)`,
  );
  return rows;
}
