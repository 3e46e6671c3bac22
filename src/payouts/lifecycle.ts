import type { Queryable, Tx } from '../db/pool.js';
import { findExecutor } from '../executors/executors.repo.js';
import { payoutReserve, payoutSettlement } from '../ledger/credit.js';
import { type Hold, release, settle, settleToExecutor } from '../ledger/holds.js';
import { Money } from '../lib/money.js';
import { enqueueWebhooks } from '../webhooks/outbox.js';
import type { PayoutRow, PayoutStatus } from './payouts.repo.js';
import { toPayout } from './payouts.schemas.js';

/**
 * The life of a payout in one place, read as payments/lifecycle.ts is: its events, the statuses
 * each applies from, and what goes with each change — the ledger posting and the webhook event —
 * written in the caller's transaction. Every path (an executor taking, completing or failing it,
 * the operator, a provider's callback, a payout no route took) changes a payout's status through
 * `changePayout`; to add a status or an event, add it to PAYOUT_STATUSES (payouts.repo.ts, with
 * the row) and to TRANSITIONS here, with its posting in `post`.
 *
 * The merchant's money is reserved by the create (DESIGN.md decision 12) and from then on moves
 * only here: a completion settles the reserve, a failure or cancellation releases it.
 */

/**
 * The payout state machine: pending → processing → completed | failed | cancelled. The operator
 * may also settle a payout straight from pending. Each event applies only from its listed statuses.
 */
export const TRANSITIONS = {
  /** An executor takes a pending payout (or the provider executing it reports it processing). */
  take: { from: ['pending'], to: 'processing' },
  /** The executor (with its proof), the operator or the provider reports it paid. */
  complete: { from: ['pending', 'processing'], to: 'completed' },
  /** Not paid: the executor, the operator or the provider gives up, or no route could take it. */
  fail: { from: ['pending', 'processing'], to: 'failed' },
  /** Cancelled by the operator or the provider. */
  cancel: { from: ['pending', 'processing'], to: 'cancelled' },
} as const satisfies Record<string, { from: readonly PayoutStatus[]; to: PayoutStatus }>;

export type PayoutEvent = keyof typeof TRANSITIONS;

export interface ChangeOptions {
  /** The executor taking the payout (`take`). */
  executorId?: string;
  /** The change applies only to a payout this executor took (an executor acting on its own). */
  requireExecutor?: string;
  /** The stored proof of the transfer (an executor's `complete`). */
  proofKey?: string;
  /** The proof's content hash (migration 052), for the reuse check (src/payouts/evidence.ts). */
  proofSha256?: Buffer;
  /** Why it failed (failure_reason). */
  reason?: string;
}

/** The reserve a payout holds on its terminal (ledger/holds.ts): taken by the create, settled or released here. */
export function payoutHold(payout: PayoutRow): Hold {
  return { kind: 'payout', refId: payout.id, merchantId: payout.merchant_id, terminalId: payout.terminal_id, amount: new Money(payout.reserve) };
}

/**
 * Applies `event` to one payout in the caller's transaction: the guarded status change, its
 * posting (a completion settles the reserve, a failure or cancellation releases it) and the
 * `payout.<status>` webhook event — all or nothing with the caller's work. Returns the payout after
 * the change, or undefined when it was not in a status the event applies from (or not the
 * executor's): someone else won, and the caller reports that in its own terms.
 */
export async function changePayout(tx: Tx, id: string, event: PayoutEvent, options: ChangeOptions = {}): Promise<PayoutRow | undefined> {
  const payout = await transition(tx, id, event, options);
  if (!payout) return undefined;
  await post(tx, event, payout);
  await payoutChanged(tx, payout);
  return payout;
}

/**
 * Applies `event` to one payout, guarded in SQL on its current status (and, for an executor acting
 * on a payout it took, on the executor), so that two racing actors cannot both win.
 */
async function transition(db: Queryable, id: string, event: PayoutEvent, options: ChangeOptions): Promise<PayoutRow | undefined> {
  const rule = TRANSITIONS[event];
  const { rows } = await db.query<PayoutRow>(
    `UPDATE payouts SET status = $3, updated_at = now(),
            executor_id = coalesce($4, executor_id),
            taken_at = CASE WHEN $3 = 'processing' THEN now() ELSE taken_at END,
            completed_at = CASE WHEN $3 = 'completed' THEN now() ELSE completed_at END,
            proof_key = coalesce($6, proof_key),
            failure_reason = coalesce($7, failure_reason),
            proof_sha256 = coalesce($8, proof_sha256)
      WHERE id = $1 AND status = ANY($2::text[]) AND ($5::uuid IS NULL OR executor_id = $5)
        -- A payout sent to a provider is executed there, never taken by one of our executors; a
        -- test payout (migration 039) is taken by no executor at all.
        AND NOT ($4::uuid IS NOT NULL AND (provider_id IS NOT NULL OR is_test))
      RETURNING *`,
    [
      id,
      rule.from,
      rule.to,
      options.executorId ?? null,
      options.requireExecutor ?? null,
      options.proofKey ?? null,
      options.reason ?? null,
      options.proofSha256 ?? null,
    ],
  );
  return rows[0];
}

/**
 * The posting of a change, after its status change: completed settles the reserve — to the
 * executor who took the payout (paid back with its reward, the rest to revenue), or, for one no
 * executor took, the fee to revenue and the rest out — failed and cancelled release it; taking
 * moves no money.
 */
async function post(tx: Tx, event: PayoutEvent, payout: PayoutRow): Promise<void> {
  // A test payout reserved nothing and moves nothing (issue 33 item 4); its webhooks still go out.
  if (payout.is_test) return;
  if (event === 'complete' && payout.executor_id !== null) {
    // An executor paid it (also when it took it and the operator completed it): it is paid back
    // with its reward (DESIGN.md "Executors' money").
    const executor = await findExecutor(tx, payout.executor_id);
    const { executorCredit } = payoutSettlement(payout.amount, payout.rate, payout.reserve, executor?.payout_reward ?? '0');
    await settleToExecutor(tx, payoutHold(payout), payout.executor_id, executorCredit);
  } else if (event === 'complete') {
    await settle(tx, payoutHold(payout), payoutReserve(payout.amount, payout.rate, payout.payout_rate).fee);
  } else if (event === 'fail' || event === 'cancel') {
    await release(tx, payoutHold(payout));
  }
}

/** The outbox side of a payout's change, in its transaction: `payout.<status>` with the payout as GET returns it. */
async function payoutChanged(tx: Tx, payout: PayoutRow): Promise<void> {
  await enqueueWebhooks(tx, [
    {
      merchantId: payout.merchant_id,
      resourceType: 'payout',
      resourceId: payout.id,
      event: `payout.${payout.status}`,
      payload: toPayout(payout),
      url: payout.notify_url,
      notificationToken: null,
    },
  ]);
}
