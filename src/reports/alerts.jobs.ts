import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { runAlerts } from './alerts.js';

/** The graphile-worker task of the staff alert rules. */
export const ALERTS_TASK = 'alerts_evaluate';

/**
 * Every minute, the staff alert rules (src/reports/alerts.ts): what holds is written to the
 * Telegram outbox for the staff of each rule's roles, once per cooldown. The job key makes it one
 * run across all instances; should two ever run, the outbox's constraint still writes each once.
 */
export function alertsTask(ctx: AppContext): Task {
  return async () => {
    const fired = await runAlerts(ctx);
    if (fired.length > 0) ctx.log.info({ alerts: fired.map((firing) => `${firing.kind}:${firing.subject}`) }, 'alert rules hold');
  };
}
