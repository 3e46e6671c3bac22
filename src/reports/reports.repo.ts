import type { Queryable } from '../db/pool.js';

/** One report row: a UTC day and a merchant or an executor (null: postings without one). */
export interface ReportRow {
  day: string;
  /** The merchant's or the executor's id, by the report's grouping; null for postings that have none. */
  owner_id: string | null;
  payins: number;
  payin_turnover: string;
  payouts: number;
  payout_turnover: string;
  payin_rewards: string;
  payout_credits: string;
  revenue: string;
}

export interface ReportQuery {
  by: 'merchant' | 'executor';
  /** First UTC day, inclusive (YYYY-MM-DD). */
  from: string;
  /** Last UTC day, inclusive (YYYY-MM-DD). */
  to: string;
  merchantId: string | null;
  executorId: string | null;
}

/**
 * The report's figures, from the ledger alone (src/reports/reports.service.ts says what each
 * means). Each posting of the range is first reduced to its figures — the pay-in's value is what
 * its source accounts (system_incoming, the executor's) gave up, a payout's what left the
 * terminal's frozen account, an executor's reward or credit its one positive executor entry,
 * revenue its system_fee_revenue entries — then summed per UTC day and merchant or executor.
 * Postings that are neither pay-ins nor payout settlements count only for revenue they carry (a
 * withdrawal's fee).
 */
export async function reportRows(db: Queryable, q: ReportQuery): Promise<ReportRow[]> {
  const owner = q.by === 'merchant' ? 'p.merchant_id' : 'p.executor_id';
  const { rows } = await db.query<ReportRow>(
    `WITH p AS (
       SELECT t.kind, t.merchant_id, to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              (array_agg(a.executor_id) FILTER (WHERE a.executor_id IS NOT NULL))[1] AS executor_id,
              coalesce(sum(-e.amount) FILTER (WHERE t.kind = 'payin' AND e.amount < 0
                                                AND a.kind IN ('system_incoming', 'executor_available', 'executor_frozen')), 0) AS payin_value,
              coalesce(sum(-e.amount) FILTER (WHERE t.kind = 'payout_settle' AND a.kind = 'terminal_frozen'), 0) AS payout_value,
              coalesce(sum(e.amount) FILTER (WHERE t.kind IN ('payin', 'payout_settle') AND e.amount > 0
                                               AND a.kind IN ('executor_available', 'executor_frozen')), 0) AS executor_credit,
              coalesce(sum(e.amount) FILTER (WHERE a.kind = 'system_fee_revenue'), 0) AS revenue
         FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.created_at >= ($1::date)::timestamp AT TIME ZONE 'UTC'
          AND t.created_at < ($2::date + 1)::timestamp AT TIME ZONE 'UTC'
        GROUP BY t.id
       HAVING t.kind IN ('payin', 'payout_settle') OR bool_or(a.kind = 'system_fee_revenue')
     )
     SELECT p.day, ${owner} AS owner_id,
            count(*) FILTER (WHERE p.kind = 'payin')::int AS payins,
            sum(p.payin_value)::text AS payin_turnover,
            count(*) FILTER (WHERE p.kind = 'payout_settle')::int AS payouts,
            sum(p.payout_value)::text AS payout_turnover,
            coalesce(sum(p.executor_credit) FILTER (WHERE p.kind = 'payin'), 0)::text AS payin_rewards,
            coalesce(sum(p.executor_credit) FILTER (WHERE p.kind = 'payout_settle'), 0)::text AS payout_credits,
            sum(p.revenue)::text AS revenue
       FROM p
      WHERE ($3::uuid IS NULL OR p.merchant_id = $3) AND ($4::uuid IS NULL OR p.executor_id = $4)
      GROUP BY p.day, ${owner}
      ORDER BY p.day, ${owner} NULLS LAST`,
    [q.from, q.to, q.merchantId, q.executorId],
  );
  return rows;
}

/** Whether the merchant exists (a report for an unknown one is a mistake, not an empty report). */
export async function merchantExists(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM merchants WHERE id = $1', [id]);
  return rows.length > 0;
}

/** Whether the executor exists. */
export async function executorExists(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM executors WHERE id = $1', [id]);
  return rows.length > 0;
}
