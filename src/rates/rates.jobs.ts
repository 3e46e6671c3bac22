import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import * as repo from './rates.repo.js';
import { type FeedCounter, REFRESH_HISTORY_HOURS, refreshDueFeeds, scheduleRefresh } from './rates.service.js';

export { REFRESH_TASK } from './rates.service.js';

/** The job's longest sleep: a cron line also wakes it every minute. */
const MAX_SLEEP_SECONDS = 60;

/**
 * The rate feeds' refresh (issue 31): fetches every feed that is due, then sleeps until the next
 * one is. One job across all instances (its key), and each feed leased by the instance that
 * fetches it; every instance reads the rates from the database.
 */
export function refreshTask(ctx: AppContext, count: FeedCounter): Task {
  return async () => {
    // Feeds due meanwhile (a slow exchange held a look up) are fetched in the same run.
    while ((await refreshDueFeeds(ctx, count)) > 0) {
      if ((await repo.secondsToNextFeed(ctx.db))! > 0) break;
    }
    const next = await repo.secondsToNextFeed(ctx.db);
    if (next === null) return;
    const sleep = Math.min(MAX_SLEEP_SECONDS, Math.max(0.5, next));
    await scheduleRefresh(ctx.db, new Date(Date.now() + sleep * 1000));
  };
}

/** Fetches that gave no rate are dropped after REFRESH_HISTORY_HOURS (the hourly cleanup). */
export async function purgeOldRefreshes(ctx: AppContext): Promise<number> {
  return repo.purgeRefreshes(ctx.db, REFRESH_HISTORY_HOURS);
}
