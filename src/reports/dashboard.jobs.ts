import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { refreshDashboardRollup } from './dashboard.rollup.js';

/** The graphile-worker task that keeps the dashboard's roll-up (migration 063) up to date. */
export const DASHBOARD_ROLLUP_TASK = 'dashboard_rollup';

/**
 * Every minute: the dashboard's roll-up moves on to the oldest open transaction's start
 * (dashboard.rollup.ts), so that a dashboard reads at most a minute or so of payments one by one
 * even when it is the first to look in a while. Waits for a dashboard's own run rather than skip.
 */
export function dashboardRollupTask(ctx: AppContext): Task {
  return async () => {
    await refreshDashboardRollup(ctx.db, { wait: true });
  };
}
