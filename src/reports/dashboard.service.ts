import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { rollUpSystemTotals } from '../ledger/system-totals.js';
import * as repo from './dashboard.repo.js';
import { refreshDashboardRollup } from './dashboard.rollup.js';
import type { Dashboard, DashboardFigures, DashboardWindow } from './dashboard.schemas.js';

/** Each window's length and the length of one bucket of its series, in seconds. */
export const DASHBOARD_WINDOWS: Record<DashboardWindow, { seconds: number; bucketSeconds: number }> = {
  hour: { seconds: 3_600, bucketSeconds: 60 },
  day: { seconds: 86_400, bucketSeconds: 900 },
};

/**
 * The window ending with the bucket that holds `now`: buckets aligned on whole minutes (hour) or
 * quarter hours (day) of UTC, so that a chart's ticks stay put between refreshes; the last bucket
 * is the current, unfinished one.
 */
export function windowBounds(window: DashboardWindow, now: Date): repo.WindowBounds {
  const { seconds, bucketSeconds } = DASHBOARD_WINDOWS[window];
  const bucketMs = bucketSeconds * 1000;
  const to = Math.floor(now.getTime() / bucketMs) * bucketMs + bucketMs;
  return { from: new Date(to - seconds * 1000), to: new Date(to), bucketSeconds };
}

/**
 * The operator's dashboard for the window ending now. Read in one read-only snapshot (REPEATABLE
 * READ), so the sections agree with each other: a payment completing meanwhile is counted in the
 * series and the totals, or in neither.
 *
 * First the two roll-ups it reads are brought up to date, as their jobs do every minute: the
 * window's payments (migration 063) unless another run is at it, and the platform's revenue
 * (migration 056) for the accounts no other run holds. Otherwise it would read one by one the
 * payments and the postings made since their last run: under load, a minute of creates is tens of
 * thousands. The answer is the same either way; only its cost differs.
 */
export async function buildDashboard(ctx: AppContext, window: DashboardWindow, now = new Date()): Promise<Dashboard> {
  const bounds = windowBounds(window, now);
  try {
    await refreshDashboardRollup(ctx.db);
    await rollUpSystemTotals(ctx.db, { skipLocked: true });
  } catch (err) {
    ctx.log.warn({ err }, 'could not bring the dashboard’s roll-ups up to date; what was made since their last run is read one by one');
  }
  return transaction(ctx.db, async (tx) => {
    // The window's statement is costed high (its CTEs hide how few rows each terminal's range
    // holds) and would be compiled by JIT for longer than it takes to run.
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL jit = off');
    const { series, figures } = await repo.windowFigures(tx, bounds);
    const lost = await repo.lostDemand(tx, bounds);
    const queues = await repo.queueCounts(tx);
    const balances = await repo.balanceTotals(tx);
    return toDashboard(window, bounds, { series, figures, lost, queues, balances });
  });
}

/** The response from the repository's rows. */
function toDashboard(
  window: DashboardWindow,
  bounds: repo.WindowBounds,
  rows: {
    series: repo.SeriesRow[];
    figures: repo.FigureRow[];
    lost: repo.LostDemandRow[];
    queues: repo.QueueCounts;
    balances: repo.BalanceTotals;
  },
): Dashboard {
  // The grand total's grouping set yields its row even for an empty window.
  const total = rows.figures.find((f) => f.group === 'total')!;
  const { queues: q, balances: b } = rows;
  return {
    window,
    from: bounds.from.toISOString(),
    to: bounds.to.toISOString(),
    bucket_seconds: bounds.bucketSeconds,
    series: rows.series.map((s) => ({ at: new Date(s.at * 1000).toISOString(), created: s.created, completed: s.completed })),
    totals: toFigures(total),
    by_terminal: rows.figures
      .filter((f) => f.group === 'terminal')
      .map((f) => ({
        terminal_id: f.id!,
        terminal_name: f.terminal_name!,
        merchant_id: f.merchant_id!,
        merchant_name: f.merchant_name!,
        ...toFigures(f),
      })),
    by_executor: rows.figures.filter((f) => f.group === 'executor').map((f) => ({ executor_id: f.id!, executor_name: f.executor_name!, ...toFigures(f) })),
    lost_demand: {
      total: rows.lost.reduce((sum, row) => sum + row.count, 0),
      rows: rows.lost.map((row) => ({
        code: row.code,
        method: row.method,
        bank: row.bank,
        currency: row.currency,
        risk_rule: row.risk_rule,
        count: row.count,
        amount: row.amount,
      })),
      by_rule: lostByRule(rows.lost),
    },
    queues: {
      disputes_open: q.disputes_open,
      notifications_unmatched: q.notifications_unmatched,
      device_messages_waiting: q.device_messages_waiting,
      payouts_pending: q.payouts_pending,
      payouts_processing: q.payouts_processing,
      withdrawals_pending: q.withdrawals_pending,
      withdrawals_processing: q.withdrawals_processing,
    },
    balances: {
      currency: 'USDT',
      terminals_available: b.terminals_available,
      terminals_frozen: b.terminals_frozen,
      executors_available: b.executors_available,
      executors_frozen: b.executors_frozen,
      platform_revenue: b.platform_revenue,
    },
  };
}

/** Refusals per rule (null: the pool's own), the pool's own first so the chart's first bar stays put, then most first. */
function lostByRule(rows: repo.LostDemandRow[]): Array<{ rule: string | null; count: number }> {
  const counts = new Map<string | null, number>();
  for (const row of rows) counts.set(row.risk_rule, (counts.get(row.risk_rule) ?? 0) + row.count);
  return [...counts.entries()]
    .map(([rule, count]) => ({ rule, count }))
    .sort((a, b) => (a.rule === null ? -1 : b.rule === null ? 1 : b.count - a.count || a.rule.localeCompare(b.rule)));
}

function toFigures(row: repo.FigureRow): DashboardFigures {
  return {
    created: row.created,
    completed: row.completed,
    conversion: row.conversion,
    // A duration, not money: a JSON number is what a chart wants.
    median_seconds_to_complete: row.median_seconds === null ? null : Number(row.median_seconds),
    amount_completed: row.amounts.map((a) => ({ currency: a.currency, amount: a.amount })),
  };
}
