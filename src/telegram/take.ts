import { systemAudit } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { findExecutor } from '../executors/executors.repo.js';
import { isUuid } from '../lib/validators.js';
import { findPayout } from '../payouts/payouts.repo.js';
import { actOnPayout } from '../payouts/payouts.service.js';

/** What a Take button did: the executor now has the payout, had it already, another executor has it, or it cannot be taken. */
export type TakeOutcome = 'taken' | 'already_yours' | 'taken_by_other' | 'not_available';

/**
 * The Take button of a 'payout_available' message (`take:<payout_id>`), pressed in the chat linked
 * to `executorId`'s sign-in: the same take as the executor cabinet's (actOnPayout → changePayout,
 * guarded on `pending`), audited naming the executor with the Telegram update it came in. The
 * (executor, payout) pair is its own idempotency key: the guarded transition lets one take win, and
 * a second tap — or a replayed update — finds the payout already this executor's and does nothing
 * again, answering `already_yours`. An executor switched off cannot take (its cabinet would refuse it too).
 */
export async function takePayoutFromTelegram(ctx: AppContext, executorId: string, payoutId: string, updateId: number): Promise<{ outcome: TakeOutcome }> {
  if (!isUuid(payoutId) || !isUuid(executorId)) return { outcome: 'not_available' };
  const executor = await findExecutor(ctx.db, executorId);
  if (!executor?.is_active) return { outcome: 'not_available' };
  const record = systemAudit(`executor:${executor.name}`);
  try {
    await actOnPayout(ctx, payoutId, 'take', { executorId }, (tx, before, after) =>
      record(
        tx,
        'payout.take',
        'payout',
        after.id,
        { status: before.status },
        { status: after.status, executor_id: executorId, via: 'telegram', update_id: updateId },
      ),
    );
    return { outcome: 'taken' };
  } catch (err) {
    if (!(err instanceof DomainError) || (err.key !== 'CONFLICT' && err.key !== 'PAYOUT_NOT_FOUND')) throw err;
    const current = err.key === 'CONFLICT' ? await findPayout(ctx.db, payoutId) : undefined;
    if (current?.executor_id === executorId && current.status === 'processing') return { outcome: 'already_yours' };
    if (current?.executor_id) return { outcome: 'taken_by_other' };
    return { outcome: 'not_available' };
  }
}
