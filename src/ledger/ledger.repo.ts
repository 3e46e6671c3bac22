import type { Decimal } from 'decimal.js';
import { prepared, type Queryable, type Tx } from '../db/pool.js';

type TerminalAccountKind = 'terminal_available' | 'terminal_frozen';
type SystemAccountKind = 'system_incoming' | 'system_fee_revenue' | 'system_adjustments' | 'system_outgoing';

type AccountRef =
  | { terminalId: string; kind: TerminalAccountKind }
  | { kind: SystemAccountKind };

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

