import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { decideOverdue } from './disputes.service.js';

export const DEADLINES_TASK = 'disputes_deadlines';

/**
 * Every minute: disputes whose executor did not answer by `answer_due_at` are approved or
 * escalated as their terminal's `dispute_timeout` says (decideOverdue: each decided once, even
 * with two instances sweeping at once).
 */
export function deadlinesTask(ctx: AppContext): Task {
  return async () => {
    const { approved, escalated } = await decideOverdue(ctx);
    if (approved + escalated > 0) ctx.log.info({ approved, escalated }, 'disputes decided by their deadline');
  };
}
