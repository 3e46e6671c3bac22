import type { Queryable } from '../db/pool.js';
import { systemAccountBalance } from '../ledger/system-totals.js';
import { rollupState } from './dashboard.rollup.js';

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
 * The payments created in the window, reduced to the series and the figures, in one statement,
 * from the payments themselves (one pass over the window's payments; every section is computed
 * from the same rows): what windowFigures answers when the roll-up does not cover the window (before
 * its first run, or a window further back than it reaches), and what it must equal.
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
export async function windowFiguresRaw(db: Queryable, w: WindowBounds): Promise<{ series: SeriesRow[]; figures: FigureRow[] }> {
  const { rows } = await db.query<{ series: SeriesRow[]; figures: FigureRow[] | null }>(
    `${RAW_WINDOW}
${FIGURES_SELECT}`,
    [w.from, w.to, `${w.bucketSeconds} seconds`, TOP_ROWS],
  );
  return { series: rows[0]!.series, figures: rows[0]!.figures ?? [] };
}

const RAW_WINDOW = `WITH w AS MATERIALIZED (
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
     )`;

/**
 * The window's series and figures as windowFiguresRaw gives them, from the roll-up (migration 063,
 * dashboard.rollup.ts) where it covers the window: for the part of the window before the roll-up's
 * `upto`, its hours' rows for the whole hours and its minutes' rows for the rest (the series from
 * the minutes' totals); the completions since `upto` of payments created before it, found by their
 * pay-in postings (ledger_transactions_created: a minute or so of postings); and the payments
 * created since `upto`, read as windowFiguresRaw reads the window. The medians are exact: the rows
 * keep every completed payment's time to complete, and only the listed terminals' and executors'
 * are sorted. In the caller's snapshot, as the roll-up's state.
 */
export async function windowFigures(db: Queryable, w: WindowBounds): Promise<{ series: SeriesRow[]; figures: FigureRow[] }> {
  const state = await rollupState(db);
  if (!state || w.from.getTime() < state.covered_from_ms) return windowFiguresRaw(db, w);
  const hourMs = 3_600_000;
  const firstHour = new Date(Math.ceil(w.from.getTime() / hourMs) * hourMs);
  // The end of the rolled-up part (upto, within the window) and the end of its whole hours, given
  // to the statement as parameters, so that its index scans are bounded by them.
  const { rows: bounds } = await db.query<{ r: string; h2: string }>(
    `SELECT x.r::text AS r, greatest($3::timestamptz, date_bin('1 hour', x.r, timestamptz '2000-01-01 00:00:00+00'))::text AS h2
       FROM (SELECT greatest($1::timestamptz, least($2::timestamptz, $4::timestamptz)) AS r) x`,
    [w.from, w.to, firstHour, state.upto],
  );
  const { rows } = await db.query<{ series: SeriesRow[]; figures: FigureRow[] | null }>(
    `${ROLLUP_WINDOW}
${FIGURES_SELECT}`,
    [w.from, w.to, `${w.bucketSeconds} seconds`, TOP_ROWS, state.upto, firstHour, bounds[0]!.r, bounds[0]!.h2],
  );
  return { series: rows[0]!.series, figures: rows[0]!.figures ?? [] };
}

/**
 * $5 the roll-up's upto, $6 the first whole hour of the window, $7 the end of the rolled-up part
 * of the window (upto, within it), $8 the end of its whole hours: [$6, $8) from the hours' rows.
 */
const ROLLUP_WINDOW = `WITH
     -- One row per payment created since upto, and per completion since upto of a payment created before it.
     tail AS MATERIALIZED (
       SELECT p.terminal_id, p.executor_id, p.currency, p.created_at, 1 AS created, (p.status = 'COMPLETED')::int AS completed,
              CASE WHEN p.status = 'COMPLETED' THEN p.received_amount END AS received,
              CASE WHEN p.status = 'COMPLETED' THEN extract(epoch FROM p.completed_at - p.created_at)::float8 END AS seconds
         FROM terminals t
        CROSS JOIN LATERAL (
              SELECT p.terminal_id, p.executor_id, p.currency, p.status, p.created_at, p.completed_at, p.received_amount
                FROM payments p
               WHERE p.terminal_id = t.id AND p.created_at >= $7::timestamptz AND p.created_at < $2 AND NOT p.is_test
              OFFSET 0) p
        WHERE NOT t.is_test
       UNION ALL
       SELECT p.terminal_id, p.executor_id, p.currency, p.created_at, 0, 1, p.received_amount,
              extract(epoch FROM p.completed_at - p.created_at)::float8
         FROM ledger_transactions x
         JOIN payments p ON p.id = x.ref_id
         JOIN terminals t ON t.id = p.terminal_id
        WHERE x.kind = 'payin' AND x.created_at >= $5::timestamptz AND p.status = 'COMPLETED'
          AND p.created_at >= $1 AND p.created_at < $7::timestamptz AND NOT p.is_test AND NOT t.is_test
     ),
     parts AS MATERIALIZED (
       SELECT r.kind, r.key, r.currency, r.created, r.completed, r.received, r.seconds
         FROM dashboard_rollup r WHERE r.level = 'hour' AND r.kind IN ('t', 'e') AND r.at >= $6::timestamptz AND r.at < $8::timestamptz
       UNION ALL
       -- The minutes before the first whole hour and after the last one (all of them when there is none).
       SELECT r.kind, r.key, r.currency, r.created, r.completed, r.received, r.seconds
         FROM dashboard_rollup r WHERE r.level = 'minute' AND r.kind IN ('t', 'e') AND r.at >= $1 AND r.at < least($6::timestamptz, $7::timestamptz)
       UNION ALL
       SELECT r.kind, r.key, r.currency, r.created, r.completed, r.received, r.seconds
         FROM dashboard_rollup r WHERE r.level = 'minute' AND r.kind IN ('t', 'e') AND r.at >= greatest($8::timestamptz, $1) AND r.at < $7::timestamptz
       UNION ALL
       SELECT 't', t.terminal_id, t.currency, t.created, t.completed, t.received, CASE WHEN t.seconds IS NULL THEN '{}' ELSE ARRAY[t.seconds] END
         FROM tail t
       UNION ALL
       SELECT 'e', t.executor_id, t.currency, t.created, t.completed, t.received, CASE WHEN t.seconds IS NULL THEN '{}' ELSE ARRAY[t.seconds] END
         FROM tail t WHERE t.executor_id IS NOT NULL
     ),
     buckets AS (
       SELECT date_bin($3::interval, s.at, $1) AS at, sum(s.created)::int AS created, sum(s.completed)::int AS completed
         FROM (SELECT r.at, r.created, r.completed
                 FROM dashboard_rollup r WHERE r.level = 'minute' AND r.kind = 's' AND r.at >= $1 AND r.at < $7::timestamptz
               UNION ALL
               SELECT t.created_at, t.created, t.completed FROM tail t) s
        GROUP BY 1
     ),
     -- g as windowFiguresRaw's grouping(): 3 the whole window, 1 per terminal, 2 per executor.
     counts AS (
       SELECT CASE p.kind WHEN 't' THEN 1 ELSE 2 END AS g, p.key, sum(p.created)::int AS created, sum(p.completed)::int AS completed
         FROM parts p GROUP BY p.kind, p.key
       UNION ALL
       SELECT 3, NULL, coalesce(sum(p.created), 0)::int, coalesce(sum(p.completed), 0)::int FROM parts p WHERE p.kind = 't'
     ),
     top AS MATERIALIZED (
       SELECT c.* FROM (SELECT c.*, row_number() OVER (PARTITION BY c.g ORDER BY c.created DESC, c.key) AS rank FROM counts c) c
        WHERE c.rank <= $4
     ),
     medians AS (
       SELECT 3 AS g, NULL::uuid AS key, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.v) AS median_seconds
         FROM parts p CROSS JOIN unnest(p.seconds) AS s(v) WHERE p.kind = 't'
       UNION ALL
       SELECT t.g, t.key, percentile_cont(0.5) WITHIN GROUP (ORDER BY s.v)
         FROM top t JOIN parts p ON p.kind = CASE t.g WHEN 1 THEN 't' ELSE 'e' END AND p.key = t.key
        CROSS JOIN unnest(p.seconds) AS s(v)
        WHERE t.g <> 3
        GROUP BY t.g, t.key
     ),
     ranked AS (
       SELECT t.g, t.key, t.created, t.completed, m.median_seconds, t.rank
         FROM top t LEFT JOIN medians m ON m.g = t.g AND m.key IS NOT DISTINCT FROM t.key
     ),
     amounts AS MATERIALIZED (
       SELECT CASE p.kind WHEN 't' THEN 1 ELSE 2 END AS g, p.key, p.currency, sum(p.received) AS amount
         FROM parts p WHERE p.completed > 0 GROUP BY p.kind, p.key, p.currency
       UNION ALL
       SELECT 3, NULL, p.currency, sum(p.received) FROM parts p WHERE p.kind = 't' AND p.completed > 0 GROUP BY p.currency
     )`;

/** The answer from the CTEs buckets, ranked and amounts (both ways above); $1–$4 as windowFiguresRaw's. */
const FIGURES_SELECT = `     SELECT
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
         WHERE r.rank <= $4) AS figures`;

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
