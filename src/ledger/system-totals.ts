import type { Db, Queryable } from '../db/pool.js';
import { transaction } from '../db/pool.js';

/**
 * The system accounts' balances (migration 056): rolled up every minute by the ledger_totals job,
 * so that reading one sums a minute of entries, not every entry of all time.
 */

/**
 * The instant before which every transaction that could still write to the ledger (or create or
 * complete a payment: the dashboard's roll-up, src/reports/dashboard.rollup.ts) has ended: the
 * start of the oldest transaction open in this database now (a transaction's entries carry its
 * start, now()), or now when none is. A session whose state this role may not read (another
 * role's, without pg_read_all_stats) could be in a transaction of any age: with one of those, an
 * hour before now, which no Kassir transaction outlasts. Read in a statement of its own, before
 * the entries are summed in a later one: a transaction that ended between the two is then in the
 * later statement's snapshot, and one that had not ended is older than the instant.
 */
export const SETTLED_INSTANT_SQL = `SELECT least(statement_timestamp(),
                  (SELECT min(CASE WHEN a.state IS NULL THEN statement_timestamp() - interval '1 hour' ELSE a.xact_start END)
                     FROM pg_stat_activity a
                    WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend'
                      AND (a.xact_start IS NOT NULL OR a.state IS NULL))) AS at`;

/** The settled instant (SETTLED_INSTANT_SQL), as a Date (to the millisecond, rounded down). */
export async function settledInstant(db: Queryable): Promise<Date> {
  const { rows } = await db.query<{ at: Date }>(SETTLED_INSTANT_SQL);
  return rows[0]!.at;
}

/**
 * Adds the system accounts' entries made since the last roll-up to their totals and moves `upto`
 * on to the settled instant; the first run (no rows yet) sums the whole ledger. Returns the new
 * `upto`. One run at a time: the rows are locked for the run's transaction. With `skipLocked` (the
 * dashboard's call, just before it reads a balance) the accounts another run holds are left as
 * they are rather than waited for: each account's total has its own `upto`.
 */
export async function rollUpSystemTotals(db: Db, options: { skipLocked?: boolean } = {}): Promise<Date> {
  const until = await settledInstant(db);
  return transaction(db, async (tx) => {
    await tx.query(
      `INSERT INTO ledger_account_totals (account_id, upto, total)
       SELECT id, '-infinity', 0 FROM ledger_accounts WHERE terminal_id IS NULL AND executor_id IS NULL
       ON CONFLICT (account_id) DO NOTHING`,
    );
    // Locked in one order, so two runs (two instances' jobs) queue rather than deadlock.
    const { rows } = await tx.query<{ account_id: string; from_start: boolean; upto: Date }>(
      `SELECT account_id, upto = '-infinity' AS from_start, upto FROM ledger_account_totals ORDER BY account_id FOR UPDATE${options.skipLocked ? ' SKIP LOCKED' : ''}`,
    );
    // Accounts new to the table (every one, at the first run) take every entry before `until`; the
    // others those since their `upto`: one statement per starting point (two at most).
    const starts = new Map<string, { from: Date | '-infinity'; accounts: string[] }>();
    for (const row of rows) {
      if (!row.from_start && row.upto >= until) continue;
      const key = row.from_start ? '-infinity' : row.upto.toISOString();
      const start = starts.get(key) ?? { from: row.from_start ? '-infinity' : row.upto, accounts: [] };
      start.accounts.push(row.account_id);
      starts.set(key, start);
    }
    for (const { from, accounts } of starts.values()) {
      await tx.query(
        `UPDATE ledger_account_totals t SET total = t.total + coalesce(s.amount, 0), upto = $1
           FROM unnest($3::uuid[]) AS o(account_id)
           LEFT JOIN (
             SELECT e.account_id, sum(e.amount) AS amount
               FROM ledger_transactions x JOIN ledger_entries e ON e.transaction_id = x.id
              WHERE x.created_at < $1 AND x.created_at >= $2 AND e.account_id = ANY($3::uuid[])
              GROUP BY e.account_id
           ) s ON s.account_id = o.account_id
          WHERE t.account_id = o.account_id`,
        [until, from, accounts],
      );
    }
    return until;
  });
}

/**
 * A system account's balance: its rolled-up total and the entries of the transactions created
 * since (ledger_transactions_created), or, before the first roll-up, all its entries. Read inside
 * the caller's snapshot: a roll-up committed before it covers exactly the entries before `upto`,
 * which are all in that snapshot too.
 */
export async function systemAccountBalance(
  db: Queryable,
  kind: 'system_incoming' | 'system_fee_revenue' | 'system_adjustments' | 'system_outgoing',
): Promise<string> {
  const { rows } = await db.query<{ id: string; upto: Date | null; from_start: boolean | null; total: string | null }>(
    `SELECT a.id, t.upto, t.upto = '-infinity' AS from_start, t.total::text
       FROM ledger_accounts a LEFT JOIN ledger_account_totals t ON t.account_id = a.id
      WHERE a.kind = $1 AND a.terminal_id IS NULL AND a.executor_id IS NULL`,
    [kind],
  );
  const account = rows[0];
  if (!account) return '0';
  if (account.total === null || account.from_start || account.upto === null) {
    const all = await db.query<{ total: string }>('SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries WHERE account_id = $1', [account.id]);
    return all.rows[0]!.total;
  }
  const { rows: since } = await db.query<{ total: string }>(
    `SELECT ($3::numeric + coalesce(sum(e.amount), 0))::text AS total
       FROM ledger_transactions x JOIN ledger_entries e ON e.transaction_id = x.id
      WHERE x.created_at >= $2 AND e.account_id = $1`,
    [account.id, account.upto, account.total],
  );
  return since[0]!.total;
}
