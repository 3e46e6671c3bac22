import type { Queryable } from '../db/pool.js';
import { systemAccountBalance } from '../ledger/system-totals.js';

/** The dashboard's window: [from, to), cut into buckets of `bucketSeconds` aligned on from. */
export interface WindowBounds {
  from: Date;
  to: Date;
  bucketSeconds: number;
}

/** One bucket of the series: its start (Unix seconds) and the payments created in it. */
export interface SeriesRow {
  at: number;
  created: number;
  completed: number;
}

/** The figures of the whole window (`group` total), of one terminal or of one executor. */
export interface FigureRow {
  group: 'total' | 'terminal' | 'executor';
  /** The terminal's or the executor's id; null for the total. */
  id: string | null;
  terminal_name: string | null;
  merchant_id: string | null;
  merchant_name: string | null;
  executor_name: string | null;
  created: number;
  completed: number;
  /** completed ÷ created to 4 places, as text; null when nothing was created. */
  conversion: string | null;
  /** The median of completed_at − created_at over the completed ones, to 0.1 s, as text; null when none. */
  median_seconds: string | null;
  /** The money received for the completed ones, per currency, as text. */
  amounts: Array<{ currency: string; amount: string }>;
}

/** How many terminals and executors the dashboard lists, the busiest (most payments created) first. */
export const TOP_ROWS = 20;

/**
 * The payments created in the window, reduced to the series and the figures, in one statement
 * (one pass over the window's payments; every section is computed from the same rows).
 *
 * The window is read terminal by terminal, one range of payments_terminal_created each (a loose
 * index scan written out), so the cost follows the window's payments and the number of terminals,
 * not the size of the table, and the dashboard needs no index of its own on payments (which every
 * create would pay for). `OFFSET 0` keeps the planner from flattening that into a join over the
 * whole table: it did so for the day window, a parallel scan of every payment (1.1 s instead of
 * 0.2 s for the day's 50 000 of 3 million payments; the hour: 23 ms).
 *
 * "Completed" counts the window's payments that are COMPLETED now; COMPLETED_APPEAL is left out: it
 * is a cancelled payment completed by a dispute's decision, whose "time to complete" is the
 * dispute's. The series buckets them by creation, so its sums are the totals. Amounts are what was received (received_amount), summed per currency: payments of
 * different currencies are never added together.
 */
export async function windowFigures(db: Queryable, w: WindowBounds): Promise<{ series: SeriesRow[]; figures: FigureRow[] }> {
  const { rows } = await db.query<{ series: SeriesRow[]; figures: FigureRow[] | null }>(
    `WITH w AS MATERIALIZED (
       SELECT p.terminal_id, p.executor_id, p.currency, p.status, p.created_at, p.completed_at, p.received_amount
         FROM terminals t
        CROSS JOIN LATERAL (
              SELECT p.terminal_id, p.executor_id, p.currency, p.status, p.created_at, p.completed_at, p.received_amount
                FROM payments p
               WHERE p.terminal_id = t.id AND p.created_at >= $1 AND p.created_at < $2 AND NOT p.is_test
              OFFSET 0) p
        -- Test terminals' payments (migration 039) are no business: the dashboard leaves them out.
        WHERE NOT t.is_test
     ),
     buckets AS (
       SELECT date_bin($3::interval, w.created_at, $1) AS at, count(*)::int AS created,
              count(*) FILTER (WHERE w.status = 'COMPLETED')::int AS completed
         FROM w
        GROUP BY 1
     ),
     -- grouping(terminal_id, executor_id) names the grouping set: 3 the whole window, 1 per
     -- terminal, 2 per executor. Payments no executor took (a provider's) have no executor row.
     counts AS (
       SELECT grouping(w.terminal_id, w.executor_id) AS g,
              CASE grouping(w.terminal_id, w.executor_id) WHEN 1 THEN w.terminal_id WHEN 2 THEN w.executor_id END AS key,
              count(*)::int AS created,
              count(*) FILTER (WHERE w.status = 'COMPLETED')::int AS completed,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM w.completed_at - w.created_at))
                FILTER (WHERE w.status = 'COMPLETED') AS median_seconds
         FROM w
        GROUP BY GROUPING SETS ((), (w.terminal_id), (w.executor_id))
     ),
     ranked AS (
       SELECT c.*, row_number() OVER (PARTITION BY c.g ORDER BY c.created DESC, c.key) AS rank
         FROM counts c
        WHERE c.g = 3 OR c.key IS NOT NULL
     ),
     amounts AS MATERIALIZED (
       SELECT grouping(w.terminal_id, w.executor_id) AS g,
              CASE grouping(w.terminal_id, w.executor_id) WHEN 1 THEN w.terminal_id WHEN 2 THEN w.executor_id END AS key,
              w.currency, sum(w.received_amount) AS amount
         FROM w
        WHERE w.status = 'COMPLETED'
        GROUP BY GROUPING SETS ((w.currency), (w.terminal_id, w.currency), (w.executor_id, w.currency))
     )
     SELECT
       (SELECT json_agg(json_build_object('at', extract(epoch FROM s.at)::bigint,
                                          'created', coalesce(b.created, 0), 'completed', coalesce(b.completed, 0)) ORDER BY s.at)
          FROM generate_series($1::timestamptz, $2::timestamptz - $3::interval, $3::interval) AS s(at)
          LEFT JOIN buckets b ON b.at = s.at) AS series,
       (SELECT json_agg(json_build_object(
                 'group', CASE r.g WHEN 3 THEN 'total' WHEN 1 THEN 'terminal' ELSE 'executor' END,
                 'id', r.key, 'terminal_name', te.name, 'merchant_id', te.merchant_id, 'merchant_name', m.name, 'executor_name', e.name,
                 'created', r.created, 'completed', r.completed,
                 'conversion', CASE WHEN r.created > 0 THEN round(r.completed::numeric / r.created, 4)::text END,
                 'median_seconds', round(r.median_seconds::numeric, 1)::text,
                 'amounts', coalesce((SELECT json_agg(json_build_object('currency', a.currency, 'amount', a.amount::text) ORDER BY a.currency)
                                        FROM amounts a WHERE a.g = r.g AND a.key IS NOT DISTINCT FROM r.key), '[]'::json))
               ORDER BY r.g DESC, r.rank)
          FROM ranked r
          LEFT JOIN terminals te ON r.g = 1 AND te.id = r.key
          LEFT JOIN merchants m ON m.id = te.merchant_id
          LEFT JOIN executors e ON r.g = 2 AND e.id = r.key
         WHERE r.rank <= $4) AS figures`,
    [w.from, w.to, `${w.bucketSeconds} seconds`, TOP_ROWS],
  );
  return { series: rows[0]!.series, figures: rows[0]!.figures ?? [] };
}

/** Refused creates of one kind in the window (migration 029). */
export interface LostDemandRow {
  code: 'PAY_004' | 'PAY_005';
  method: string;
  bank: string | null;
  currency: string;
  /** The risk rule that refused them (migration 045); null for the pool's own refusals (no requisites, same amount). */
  risk_rule: string | null;
  count: number;
  /** The refused orders' amounts summed, as text, in `currency`. */
  amount: string;
}

/** The creates refused with PAY_004 or PAY_005 in the window, per code, risk rule, method, bank and currency; most first. */
export async function lostDemand(db: Queryable, w: WindowBounds): Promise<LostDemandRow[]> {
  const { rows } = await db.query<LostDemandRow>(
    `SELECT code, method, bank, currency, risk_rule, count(*)::int AS count, sum(amount)::text AS amount
       FROM payment_refusals
      WHERE created_at >= $1 AND created_at < $2
      GROUP BY code, risk_rule, method, bank, currency
      ORDER BY count DESC, code, risk_rule NULLS FIRST, method, bank NULLS FIRST, currency`,
    [w.from, w.to],
  );
  return rows;
}

/** What waits for someone, now. */
export interface QueueCounts {
  disputes_open: number;
  notifications_unmatched: number;
  device_messages_waiting: number;
  payouts_pending: number;
  payouts_processing: number;
  withdrawals_pending: number;
  withdrawals_processing: number;
}

/**
 * The work waiting now. Open disputes are read from the disputes table (a payment is in DISPUTE
 * exactly while its dispute is open: both change in one transaction), where disputes_status
 * finds them; payments has no index on its status. Notifications: unmatched and late, the two
 * the operator links or sets aside (notifications_status). Phone messages: the three statuses that
 * wait for a person (device_messages_for_people, migration 041; an unmatched one's notification is
 * counted under notifications too, and handling either handles both). Payouts: pending (no executor took it
 * yet; payouts_available) and processing (taken or sent to a provider, not finished). Withdrawals
 * are few; their table is read whole. Test objects (migration 039) wait for no one: left out.
 */
export async function queueCounts(db: Queryable): Promise<QueueCounts> {
  const { rows } = await db.query<QueueCounts>(
    `SELECT (SELECT count(*) FROM disputes d WHERE d.status = 'open'
               AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id = d.payment_id AND p.is_test))::int AS disputes_open,
            (SELECT count(*) FROM notifications WHERE status IN ('unmatched', 'late'))::int AS notifications_unmatched,
            (SELECT count(*) FROM device_messages WHERE status IN ('unmatched', 'ambiguous', 'unreadable'))::int AS device_messages_waiting,
            (SELECT count(*) FROM payouts WHERE status = 'pending' AND NOT is_test)::int AS payouts_pending,
            (SELECT count(*) FROM payouts WHERE status = 'processing' AND NOT is_test)::int AS payouts_processing,
            (SELECT count(*) FROM withdrawals WHERE status = 'pending')::int AS withdrawals_pending,
            (SELECT count(*) FROM withdrawals WHERE status = 'processing')::int AS withdrawals_processing`,
  );
  return rows[0]!;
}

/** USDT balances, as text. */
export interface BalanceTotals {
  terminals_available: string;
  terminals_frozen: string;
  executors_available: string;
  executors_frozen: string;
  platform_revenue: string;
}

/**
 * The ledger's balances now: terminals' and executors' summed from their accounts' rows (they keep
 * their balance there); the platform's revenue from its account's rolled-up total and the entries
 * since (systemAccountBalance, migration 056), as system accounts keep no balance (migration 001:
 * a running total would be a row every pay-in waits on) and summing every entry of all time took
 * seconds at 10^7 payments.
 */
export async function balanceTotals(db: Queryable): Promise<BalanceTotals> {
  const { rows } = await db.query<Omit<BalanceTotals, 'platform_revenue'>>(
    `SELECT coalesce(sum(a.balance) FILTER (WHERE a.kind = 'terminal_available'), 0)::text AS terminals_available,
            coalesce(sum(a.balance) FILTER (WHERE a.kind = 'terminal_frozen'), 0)::text AS terminals_frozen,
            coalesce(sum(a.balance) FILTER (WHERE a.kind = 'executor_available'), 0)::text AS executors_available,
            coalesce(sum(a.balance) FILTER (WHERE a.kind = 'executor_frozen'), 0)::text AS executors_frozen
       FROM ledger_accounts a
      WHERE a.kind IN ('terminal_available', 'terminal_frozen', 'executor_available', 'executor_frozen')`,
  );
  return { ...rows[0]!, platform_revenue: await systemAccountBalance(db, 'system_fee_revenue') };
}
