import type { Queryable } from '../db/pool.js';

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

  const unbalanced = await db.query<{ id: string; kind: string; total: string }>(
    `SELECT t.id, t.kind, sum(e.amount)::text AS total
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      GROUP BY t.id, t.kind HAVING sum(e.amount) <> 0`,
  );
  for (const row of unbalanced.rows) {
    problems.push({ invariant: 'transaction balanced', detail: `ledger transaction ${row.id} (${row.kind}) sums to ${row.total}` });
  }

  const empty = await db.query<{ id: string; kind: string }>(
    `SELECT t.id, t.kind FROM ledger_transactions t WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.transaction_id = t.id)`,
  );
  for (const row of empty.rows) problems.push({ invariant: 'transaction has entries', detail: `ledger transaction ${row.id} (${row.kind}) has no entries` });

  const total = await db.query<{ total: string }>('SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries');
  if (Number(total.rows[0]!.total) !== 0) {
    problems.push({ invariant: 'ledger sums to zero', detail: `all entries sum to ${total.rows[0]!.total}` });
  }

  const drift = await db.query<{ id: string; kind: string; terminal_id: string; balance: string; entries: string }>(
    `SELECT a.id, a.kind, a.terminal_id, a.balance::text, coalesce(s.total, 0)::text AS entries
       FROM ledger_accounts a
       LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries GROUP BY account_id) s ON s.account_id = a.id
      WHERE a.kind LIKE 'terminal_%' AND a.balance <> coalesce(s.total, 0)`,
  );
  for (const row of drift.rows) {
    problems.push({
      invariant: 'balance equals entries',
      detail: `terminal ${row.terminal_id} ${row.kind} balance is ${row.balance} but its entries sum to ${row.entries}`,
    });
  }

  const negative = await db.query<{ terminal_id: string; kind: string; balance: string }>(
    `SELECT terminal_id, kind, balance::text FROM ledger_accounts WHERE kind LIKE 'terminal_%' AND balance < 0`,
  );
  for (const row of negative.rows) {
    problems.push({ invariant: 'balance not negative', detail: `terminal ${row.terminal_id} ${row.kind} is ${row.balance}` });
  }

  // Frozen funds are exactly the holds of payouts and withdrawals still in progress.
  const holds = await db.query<{ terminal_id: string; frozen: string; held: string }>(
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
  for (const row of holds.rows) {
    problems.push({
      invariant: 'frozen equals open holds',
      detail: `terminal ${row.terminal_id} has ${row.frozen} frozen but its open payouts and withdrawals hold ${row.held}`,
    });
  }

  const uncredited = await db.query<{ id: string; status: string; credits: number }>(
    `SELECT p.id, p.status, (SELECT count(*) FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id) AS credits
       FROM payments p
      WHERE (p.status IN ('COMPLETED', 'COMPLETED_APPEAL')) <> EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.kind = 'payin' AND t.ref_id = p.id)`,
  );
  for (const row of uncredited.rows) {
    problems.push({
      invariant: 'completed payments credited once',
      detail: `payment ${row.id} is ${row.status} with ${row.credits} pay-in credit(s)`,
    });
  }
  return { ok: problems.length === 0, problems };
}
