import type { Decimal } from 'decimal.js';
import { prepared, type Queryable, type Tx } from '../db/pool.js';

type TerminalAccountKind = 'terminal_available' | 'terminal_frozen';
type ExecutorAccountKind = 'executor_available' | 'executor_frozen';
type SystemAccountKind = 'system_incoming' | 'system_fee_revenue' | 'system_adjustments' | 'system_outgoing';

/**
 * A ledger account: a terminal's or an executor's (these keep their balance on the row, where a
 * CHECK holds their floor) or one of the system's (summed from the entries when asked for).
 */
export type AccountRef = { terminalId: string; kind: TerminalAccountKind } | { executorId: string; kind: ExecutorAccountKind } | { kind: SystemAccountKind };

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

/** Creates an executor's available and frozen accounts (at executor creation). */
export async function createExecutorAccounts(tx: Queryable, executorId: string): Promise<void> {
  await tx.query(`INSERT INTO ledger_accounts (kind, executor_id) VALUES ('executor_available', $1), ('executor_frozen', $1)`, [executorId]);
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
 * would take a terminal account below zero, or an executor's below its floor, fail on the
 * accounts' CHECK constraints; entries that do not sum to zero fail at COMMIT on the balancing
 * trigger. Returns the transaction id.
 */
export async function post(tx: Tx, posting: Posting): Promise<string> {
  return (await postMany(tx, [posting]))[0]!;
}

/** Whether the posting of `kind` caused by `refId` was written (a cause is posted at most once: ledger_transactions_once). */
export async function hasPosting(db: Queryable, kind: string, refId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM ledger_transactions WHERE kind = $1 AND ref_id = $2', [kind, refId]);
  return rows.length > 0;
}

/**
 * Writes several balanced ledger transactions at once (post() for each, in one round trip or
 * two): a sweep that releases the holds of many payments. `creditsAtCommit` is taken per posting.
 * Returns the transaction ids in the postings' order.
 */
export async function postMany(tx: Tx, postings: readonly Posting[]): Promise<string[]> {
  if (postings.length === 0) return [];
  const postingOf: number[] = [];
  const terminalIds: (string | null)[] = [];
  const executorIds: (string | null)[] = [];
  const kinds: string[] = [];
  const amounts: string[] = [];
  const atCommit: boolean[] = [];
  /** Accounts with a kept balance that this statement updates (not left to COMMIT), by "owner kind". */
  const updatedNow = new Map<string, { terminalId: string | null; executorId: string | null; kind: string }>();
  postings.forEach((posting, index) => {
    for (const entry of posting.entries) {
      const terminalId = 'terminalId' in entry.account ? entry.account.terminalId : null;
      const executorId = 'executorId' in entry.account ? entry.account.executorId : null;
      const deferred = Boolean(posting.creditsAtCommit) && terminalId !== null && entry.amount.isPositive();
      postingOf.push(index + 1);
      terminalIds.push(terminalId);
      executorIds.push(executorId);
      kinds.push(entry.account.kind);
      amounts.push(entry.amount.toFixed());
      atCommit.push(deferred);
      if ((terminalId !== null || executorId !== null) && !deferred) {
        updatedNow.set(`${terminalId ?? executorId} ${entry.account.kind}`, { terminalId, executorId, kind: entry.account.kind });
      }
    }
  });
  // Rows with a kept balance are locked in one fixed order by every posting: executors' before
  // terminals', each owner's in the order of its accounts' kinds (available before frozen); the
  // executor's hold at a payment create (executor_hold_take, migration 017) follows the same
  // order. Where this statement updates two or more such rows now (a hold's release, a settlement
  // with a reward, a reserve, a transfer), they are locked first by a statement of their own: the
  // balance UPDATE below locks rows in the order its join produces them, which under a hash join
  // over the accounts (a generic plan of this prepared statement may be one) is heap order, moving
  // with every update. Locked in the same statement instead, a row a commit-time credit updated
  // after the statement's snapshot is locked a second time by the UPDATE, queued behind the very
  // postings waiting for it. Commit-time credits (terminals only) come last, at COMMIT.
  if (updatedNow.size > 1) {
    const accounts = [...updatedNow.values()];
    await tx.query(
      prepared(
        `SELECT a.id FROM ledger_accounts a JOIN unnest($1::uuid[], $2::uuid[], $3::text[]) AS x(terminal_id, executor_id, kind)
            ON a.kind = x.kind AND a.terminal_id IS NOT DISTINCT FROM x.terminal_id AND a.executor_id IS NOT DISTINCT FROM x.executor_id
          ORDER BY a.executor_id NULLS LAST, a.terminal_id, a.kind FOR NO KEY UPDATE OF a`,
        [accounts.map((a) => a.terminalId), accounts.map((a) => a.executorId), accounts.map((a) => a.kind)],
      ),
    );
  }
  // One round trip: the transaction rows, the entries, and the kept balances (those not left to
  // COMMIT).
  const { rows } = await tx.query<{ id: string; entries: number }>(
    prepared(
      `WITH p AS MATERIALIZED (
         SELECT uuid_v7() AS id, x.* FROM unnest($1::text[], $2::uuid[], $3::uuid[], $4::text[]) WITH ORDINALITY
                AS x(kind, ref_id, merchant_id, memo, ord)
       ), t AS (
         INSERT INTO ledger_transactions (id, kind, ref_id, merchant_id, memo) SELECT id, kind, ref_id, merchant_id, memo FROM p ORDER BY ord
         RETURNING id
       ), e AS (
         SELECT p.id AS transaction_id, a.id AS account_id, a.kind, x.amount, x.at_commit, x.ord
           FROM unnest($5::int[], $6::uuid[], $7::uuid[], $8::text[], $9::numeric[], $10::boolean[]) WITH ORDINALITY
                AS x(posting, terminal_id, executor_id, kind, amount, at_commit, ord)
           JOIN p ON p.ord = x.posting
           JOIN ledger_accounts a ON a.kind = x.kind AND a.terminal_id IS NOT DISTINCT FROM x.terminal_id
                                 AND a.executor_id IS NOT DISTINCT FROM x.executor_id
       ), entries AS (
         INSERT INTO ledger_entries (transaction_id, account_id, amount, applied_at_commit)
         SELECT e.transaction_id, e.account_id, e.amount, e.at_commit FROM e ORDER BY e.account_id, e.ord
         RETURNING account_id
       ), balances AS (
         UPDATE ledger_accounts a SET balance = a.balance + d.amount
           FROM (SELECT account_id, sum(amount) AS amount FROM e
                  WHERE (kind LIKE 'terminal_%' OR kind LIKE 'executor_%') AND NOT at_commit GROUP BY account_id ORDER BY account_id) d
          WHERE a.id = d.account_id
         RETURNING a.id
       )
       SELECT p.id, (SELECT count(*) FROM entries)::int AS entries FROM p ORDER BY p.ord`,
      [
        postings.map((p) => p.kind),
        postings.map((p) => p.refId),
        postings.map((p) => p.merchantId),
        postings.map((p) => p.memo),
        postingOf,
        terminalIds,
        executorIds,
        kinds,
        amounts,
        atCommit,
      ],
    ),
  );
  if (rows.length !== postings.length || rows[0]!.entries !== kinds.length) {
    throw new Error(`ledger posting ${postings[0]!.kind}: an account is missing (${rows[0]?.entries ?? 0}/${kinds.length} entries)`);
  }
  return rows.map((row) => row.id);
}

// The ledger check's queries (ledger.service.ts): each returns the rows that break one invariant.
// Those about single rows take an optional `since` (the hourly job's watermark, ledger-since.ts):
// then they look only at the rows written or changed since, found through indexes on created_at.

/**
 * The ledger transactions created since `since` whose entries (written with them, so from the same
 * instant on) are none or do not sum to zero: the only ones the whole queries below need to sum
 * over all their entries. Materialized first: a transaction's entries are found in the months from
 * `since` on only (a custom plan prunes the older partitions).
 */
const SUSPECT_TRANSACTIONS_SINCE = `suspects AS MATERIALIZED (
  SELECT t.id FROM ledger_transactions t
    LEFT JOIN ledger_entries e ON e.transaction_id = t.id AND e.created_at >= $1
   WHERE t.created_at >= $1
   GROUP BY t.id HAVING count(e.id) = 0 OR sum(e.amount) <> 0)`;

/** Transactions whose entries do not sum to zero (with `since`: of those created since). */
export async function unbalancedTransactions(db: Queryable, since?: Date): Promise<Array<{ id: string; kind: string; total: string }>> {
  const { rows } = await db.query<{ id: string; kind: string; total: string }>(
    `${since ? `WITH ${SUSPECT_TRANSACTIONS_SINCE}` : ''}
     SELECT t.id, t.kind, sum(e.amount)::text AS total
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      ${since ? 'WHERE t.id IN (SELECT id FROM suspects)' : ''}
      GROUP BY t.id, t.kind HAVING sum(e.amount) <> 0`,
    since ? [since] : [],
  );
  return rows;
}

/** Transactions with no entries at all (with `since`: of those created since). */
export async function transactionsWithoutEntries(db: Queryable, since?: Date): Promise<Array<{ id: string; kind: string }>> {
  const { rows } = await db.query<{ id: string; kind: string }>(
    `${since ? `WITH ${SUSPECT_TRANSACTIONS_SINCE}` : ''}
     SELECT t.id, t.kind FROM ledger_transactions t
      WHERE ${since ? 't.id IN (SELECT id FROM suspects) AND ' : ''}NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id)`,
    since ? [since] : [],
  );
  return rows;
}

/** The sum of every entry of the ledger, as text. */
export async function entriesTotal(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ total: string }>('SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries');
  return rows[0]!.total;
}

/** Terminal and executor accounts whose kept balance differs from the sum of their entries. */
export async function driftedAccounts(db: Queryable): Promise<Array<{ id: string; kind: string; owner: string; balance: string; entries: string }>> {
  const { rows } = await db.query<{ id: string; kind: string; owner: string; balance: string; entries: string }>(
    `SELECT a.id, a.kind, coalesce(a.terminal_id, a.executor_id) AS owner, a.balance::text, coalesce(s.total, 0)::text AS entries
       FROM ledger_accounts a
       LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries GROUP BY account_id) s ON s.account_id = a.id
      WHERE (a.kind LIKE 'terminal_%' OR a.kind LIKE 'executor_%') AND a.balance <> coalesce(s.total, 0)`,
  );
  return rows;
}

/** Terminal accounts below zero, and executor accounts below their floor (0, or minus the credit line). */
export async function accountsBelowFloor(db: Queryable): Promise<Array<{ kind: string; owner: string; balance: string; floor: string }>> {
  const { rows } = await db.query<{ kind: string; owner: string; balance: string; floor: string }>(
    `SELECT a.kind, coalesce(a.terminal_id, a.executor_id) AS owner, a.balance::text,
            (CASE WHEN a.kind = 'executor_available' THEN -e.credit_limit ELSE 0 END)::text AS floor
       FROM ledger_accounts a LEFT JOIN executors e ON e.id = a.executor_id
      WHERE (a.kind LIKE 'terminal_%' OR a.kind LIKE 'executor_%')
        AND a.balance < CASE WHEN a.kind = 'executor_available' THEN -e.credit_limit ELSE 0 END`,
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
           -- A test payout (migration 039) reserves nothing. One arm per status, so that each reads
           -- its partial index (payouts_available, payouts_processing), not every payout ever made.
           SELECT terminal_id, reserve FROM payouts WHERE status = 'pending' AND NOT is_test
           UNION ALL
           SELECT terminal_id, reserve FROM payouts WHERE status = 'processing' AND NOT is_test
           UNION ALL
           SELECT terminal_id, reserve FROM withdrawals WHERE terminal_id IS NOT NULL AND status IN ('pending', 'processing')
         ) open GROUP BY terminal_id
       ) h ON h.terminal_id = a.terminal_id
      WHERE a.kind = 'terminal_frozen' AND a.balance <> coalesce(h.held, 0)`,
  );
  return rows;
}

/**
 * Executors' frozen accounts that differ from the holds of their payments still open (PENDING or
 * PROCESSING) plus the reserves of their withdrawals in progress.
 */
export async function executorFrozenApartFromHolds(db: Queryable): Promise<Array<{ executor_id: string; frozen: string; held: string }>> {
  const { rows } = await db.query<{ executor_id: string; frozen: string; held: string }>(
    `SELECT a.executor_id, a.balance::text AS frozen, coalesce(h.held, 0)::text AS held
       FROM ledger_accounts a
       LEFT JOIN (
         SELECT executor_id, sum(held) AS held FROM (
           -- One arm per status, each through its partial index (payments_pending_deadline,
           -- payments_rare_status_created): the open payments, not all of history.
           SELECT executor_id, hold AS held FROM payments WHERE hold IS NOT NULL AND status = 'PENDING'
           UNION ALL
           SELECT executor_id, hold FROM payments WHERE hold IS NOT NULL AND status = 'PROCESSING'
           UNION ALL
           SELECT executor_id, reserve FROM withdrawals WHERE executor_id IS NOT NULL AND status IN ('pending', 'processing')
           UNION ALL
           -- The claimed value an open dispute froze on its executor (migration 044).
           SELECT executor_id, hold FROM disputes WHERE executor_id IS NOT NULL AND hold IS NOT NULL AND status = 'open'
         ) open GROUP BY executor_id
       ) h ON h.executor_id = a.executor_id
      WHERE a.kind = 'executor_frozen' AND a.balance <> coalesce(h.held, 0)`,
  );
  return rows;
}

/**
 * Deposits on chain recorded without exactly one `executor_deposit` posting of their amount to their
 * executor, and deposit credits without their deposit. With `since`: the deposits recorded since,
 * and those with an `executor_deposit` posting since.
 */
export async function miscreditedDeposits(db: Queryable, since?: Date): Promise<Array<{ id: string; tx_hash: string; credits: number }>> {
  const { rows } = await db.query<{ id: string; tx_hash: string; credits: number }>(
    `SELECT d.id, d.tx_hash, count(t.id)::int AS credits
       FROM executor_deposits d
       LEFT JOIN ledger_transactions t ON t.kind = 'executor_deposit' AND t.ref_id = d.id
        AND EXISTS (SELECT 1 FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
                     WHERE e.transaction_id = t.id AND a.kind = 'executor_available' AND a.executor_id = d.executor_id AND e.amount = d.amount)
      ${
        since
          ? `WHERE d.id IN (SELECT id FROM executor_deposits WHERE created_at >= $1
                            UNION ALL SELECT ref_id FROM ledger_transactions WHERE kind = 'executor_deposit' AND created_at >= $1)`
          : ''
      }
      GROUP BY d.id, d.tx_hash HAVING count(t.id) <> 1
     UNION ALL
     SELECT t.ref_id, coalesce(t.memo, ''), 0 FROM ledger_transactions t
      WHERE t.kind = 'executor_deposit' ${since ? 'AND t.created_at >= $1' : ''} AND NOT EXISTS (SELECT 1 FROM executor_deposits d WHERE d.id = t.ref_id)`,
    since ? [since] : [],
  );
  return rows;
}

/**
 * The payments created since `since`, and those with a posting since (their hold, its release, their
 * pay-in: every change of a payment that moves money posts one), through payments_created and
 * ledger_transactions_created.
 */
const PAYMENTS_SINCE = `SELECT id FROM payments WHERE created_at >= $1
  UNION SELECT ref_id FROM ledger_transactions WHERE created_at >= $1 AND kind IN ('payin_hold', 'payin_hold_release', 'payin') AND ref_id IS NOT NULL`;

/** Payments handed to an executor's requisite without the hold posting that must go with the hand-out (with `since`: PAYMENTS_SINCE). */
export async function paymentsWithoutHold(db: Queryable, since?: Date): Promise<Array<{ id: string }>> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT p.id FROM payments p
      WHERE ${since ? `p.id IN (${PAYMENTS_SINCE}) AND ` : ''}p.hold IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payin_hold' AND t.ref_id = p.id)`,
    since ? [since] : [],
  );
  return rows;
}

/** Payments credited though not completed, or completed without a credit, with their count of pay-in credits (with `since`: PAYMENTS_SINCE). */
export async function miscreditedPayments(db: Queryable, since?: Date): Promise<Array<{ id: string; status: string; credits: number }>> {
  const { rows } = await db.query<{ id: string; status: string; credits: number }>(
    `SELECT p.id, p.status, (SELECT count(*) FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) AS credits
       FROM payments p
      -- A test payment (migration 039) is never credited: a credit of one is a problem too.
      WHERE ${since ? `p.id IN (${PAYMENTS_SINCE}) AND ` : ''}
            (p.status IN ('COMPLETED', 'COMPLETED_APPEAL') AND NOT p.is_test) <> EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id)`,
    since ? [since] : [],
  );
  return rows;
}

export interface StatementRow {
  id: string;
  created_at: Date;
  /** The posting's kind (payin_hold, payin, executor_adjustment, …). */
  kind: string;
  ref_id: string | null;
  memo: string | null;
  account_kind: string;
  amount: string;
  /** The account's balance after this entry: the running sum of its entries in the order they were written. */
  balance_after: string;
  /** The payment or payout the posting is about (by its ref_id), when it is the statement owner's own: what a person names it by. */
  ref_type: 'payment' | 'payout' | 'withdrawal' | null;
  ref_ext_id: string | null;
  ref_amount: string | null;
  ref_currency: string | null;
  ref_status: string | null;
}

/** What a statement line is about, as its answer gives it: the payment, payout or withdrawal by the names a person knows it by. */
export function aboutOf(row: StatementRow): { type: string; ext_id: string | null; amount: string; currency: string; status: string } | null {
  if (!row.ref_type || row.ref_amount === null) return null;
  return { type: row.ref_type, ext_id: row.ref_ext_id, amount: row.ref_amount, currency: row.ref_currency ?? 'USDT', status: row.ref_status ?? '' };
}

/** The entries of an executor's (or a terminal's) accounts, newest first, with each account's running balance. */
export async function accountStatement(
  db: Queryable,
  owner: { executorId: string } | { terminalId: string },
  page: { limit: number; offset: number },
): Promise<{ rows: StatementRow[]; total: number }> {
  const column = 'executorId' in owner ? 'executor_id' : 'terminal_id';
  const id = 'executorId' in owner ? owner.executorId : owner.terminalId;
  const [{ rows }, count] = await Promise.all([
    db.query<StatementRow>(
      // What each line is about, by the posting's kind and ref_id, only when it is the owner's own
      // (the payment handed to this executor or taken by this terminal), so a statement names nothing of another's.
      `SELECT s.*,
              CASE WHEN p.id IS NOT NULL THEN 'payment' WHEN po.id IS NOT NULL THEN 'payout' WHEN w.id IS NOT NULL THEN 'withdrawal' END AS ref_type,
              coalesce(p.ext_id, po.ext_id) AS ref_ext_id,
              coalesce(p.amount, po.amount, w.amount)::text AS ref_amount,
              coalesce(p.currency, po.currency, CASE WHEN w.id IS NOT NULL THEN 'USDT' END) AS ref_currency,
              coalesce(p.status, po.status, w.status) AS ref_status
         FROM (
         SELECT e.id::text, e.created_at, t.kind, t.ref_id, t.memo, a.kind AS account_kind, e.amount::text,
                (sum(e.amount) OVER (PARTITION BY e.account_id ORDER BY e.id))::text AS balance_after
           FROM ledger_accounts a
           JOIN ledger_entries e ON e.account_id = a.id
           JOIN ledger_transactions t ON t.id = e.transaction_id
          WHERE a.${column} = $1
          ORDER BY e.id DESC LIMIT $2 OFFSET $3
       ) s
         LEFT JOIN payments p ON s.kind LIKE 'payin%' AND p.id = s.ref_id AND p.${column} = $1
         LEFT JOIN payouts po ON s.kind LIKE 'payout%' AND po.id = s.ref_id AND po.${column} = $1
         LEFT JOIN withdrawals w ON s.kind LIKE 'withdrawal%' AND w.id = s.ref_id AND w.${column} = $1
        ORDER BY s.id::bigint DESC`,
      [id, page.limit, page.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.${column} = $1`, [id]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/** The postings a payment causes, all with the payment's id as ref_id: the hand-out's hold, its release, the pay-in. */
export const PAYMENT_POSTING_KINDS = ['payin_hold', 'payin_hold_release', 'payin'] as const;

/** One entry of a payment's postings, with its account and the account's owner. */
export interface PaymentPostingRow {
  transaction_id: string;
  kind: string;
  created_at: Date;
  entry_id: string;
  account_id: string;
  account_kind: string;
  terminal_id: string | null;
  executor_id: string | null;
  amount: string;
}

/**
 * The entries of every posting a payment caused, oldest posting first, each posting's entries in
 * the order they were written. By (kind, ref_id), the index ledger_transactions_once.
 */
export async function listPaymentPostings(db: Queryable, paymentId: string): Promise<PaymentPostingRow[]> {
  const { rows } = await db.query<PaymentPostingRow>(
    `SELECT t.id AS transaction_id, t.kind, t.created_at, e.id::text AS entry_id, a.id AS account_id, a.kind AS account_kind,
            a.terminal_id, a.executor_id, e.amount::text
       FROM ledger_transactions t
       JOIN ledger_entries e ON e.transaction_id = t.id
       JOIN ledger_accounts a ON a.id = e.account_id
      WHERE t.kind = ANY($2::text[]) AND t.ref_id = $1
      ORDER BY t.created_at, t.id, e.id`,
    [paymentId, PAYMENT_POSTING_KINDS],
  );
  return rows;
}
