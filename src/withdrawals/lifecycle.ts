import { PgCode, pgConstraint, pgErrorCode, type Queryable, type Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { type Hold, release, settle } from '../ledger/holds.js';
import { Money } from '../lib/money.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import type { SignedTransfer, WithdrawalRow, WithdrawalStatus } from './withdrawals.repo.js';

/**
 * The life of a withdrawal in one place, read as payments/lifecycle.ts is: its events, the
 * statuses each applies from, and the ledger posting that goes with each change, written in the
 * caller's transaction. Every path (the send job, withdrawals.jobs.ts, and the operator's complete
 * and fail) changes a withdrawal's status through `changeWithdrawal`; to add a status or an event,
 * add it to WITHDRAWAL_STATUSES (withdrawals.repo.ts, with the row) and to TRANSITIONS here, with
 * its posting in `post`.
 *
 * The money is frozen by the create (DESIGN.md decision 13: a merchant's terminal, or an
 * executor's deposit) and from then on moves only here: a completion debits it (the fee to
 * revenue, the rest out), a failure releases it. Withdrawals have no webhook event (the outbox
 * carries payments and payouts only).
 */

/**
 * The withdrawal state machine: pending → processing (a transaction signed, about to be
 * broadcast; signed again when one expired unseen) → completed | failed. A manual withdrawal
 * goes from pending straight to completed or failed by the operator.
 */
export const TRANSITIONS = {
  /** The send job records the transaction it is about to broadcast. */
  sign: { from: ['pending', 'processing'], to: 'processing' },
  /** The chain confirmed the transaction, or the operator records the hash of a manual send. */
  complete: { from: ['pending', 'processing'], to: 'completed' },
  /** The chain rejected the transaction, or the operator gives up before anything was signed. */
  fail: { from: ['pending', 'processing'], to: 'failed' },
} as const satisfies Record<string, { from: readonly WithdrawalStatus[]; to: WithdrawalStatus }>;

/**
 * An event with what it records: `sign` the transaction about to be broadcast, `complete` the hash
 * of the transfer that went out, `fail` the reason. By hand (`byChain` false) an automatic
 * withdrawal can only be failed while nothing is signed for it: once a transaction exists, only
 * the chain's verdict may release the funds.
 */
export type WithdrawalEvent =
  | { event: 'sign'; signed: SignedTransfer }
  | { event: 'complete'; txHash: string }
  | { event: 'fail'; reason: string; byChain?: boolean };

/** The funds a withdrawal holds (ledger/holds.ts): a merchant's on its terminal, an executor's on its deposit. */
export function withdrawalHold(w: WithdrawalRow): Hold {
  const amount = new Money(w.reserve);
  if (w.executor_id) return { kind: 'withdrawal', refId: w.id, executorId: w.executor_id, amount };
  return { kind: 'withdrawal', refId: w.id, merchantId: w.merchant_id!, terminalId: w.terminal_id!, amount };
}

/**
 * The one way a withdrawal's status changes, in the caller's transaction: the guarded update and
 * the ledger posting that goes with it — completed debits the frozen funds (the fee to revenue,
 * the rest out), failed releases them. Returns the withdrawal after the change, or undefined when
 * the guard refused (it was no longer open, or another run recorded another transaction).
 */
export async function changeWithdrawal(tx: Tx, id: string, change: WithdrawalEvent): Promise<WithdrawalRow | undefined> {
  const withdrawal = await transition(tx, id, change);
  if (!withdrawal) return undefined;
  await post(tx, change.event, withdrawal);
  if (change.event === 'complete') await tellSent(tx, withdrawal);
  return withdrawal;
}

/**
 * Applies an event to one withdrawal, guarded in SQL on its current status so that two racing
 * runs cannot both win; a `sign` also on the transaction it had (none, or the one it replaces),
 * and a `fail` by hand of an automatic withdrawal on nothing being signed. A completion with a hash
 * already recorded for another withdrawal is a CONFLICT.
 */
async function transition(db: Queryable, id: string, change: WithdrawalEvent): Promise<WithdrawalRow | undefined> {
  const rule = TRANSITIONS[change.event];
  const signed = change.event === 'sign' ? change.signed : undefined;
  const txHash = change.event === 'sign' ? change.signed.txHash : change.event === 'complete' ? change.txHash : null;
  try {
    const { rows } = await db.query<WithdrawalRow>(
      `UPDATE withdrawals SET status = $3, updated_at = now(),
              signed_tx = CASE WHEN $4::boolean THEN $5::jsonb ELSE signed_tx END,
              tx_hash = coalesce($6, tx_hash),
              tx_expires_at = CASE WHEN $4::boolean THEN $7::timestamptz ELSE tx_expires_at END,
              failure_reason = coalesce($9, failure_reason)
        WHERE id = $1 AND status = ANY($2::text[])
          AND (NOT $4::boolean OR tx_hash IS NOT DISTINCT FROM $8)
          AND (NOT $10::boolean OR adapter = 'manual' OR tx_hash IS NULL)
        RETURNING *`,
      [
        id,
        rule.from,
        rule.to,
        signed !== undefined,
        signed ? JSON.stringify(signed.signedTx) : null,
        txHash,
        signed?.expiresAt ?? null,
        signed?.previousTxHash ?? null,
        change.event === 'fail' ? change.reason : null,
        change.event === 'fail' && !change.byChain,
      ],
    );
    return rows[0];
  } catch (err) {
    if (change.event === 'complete' && pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'withdrawals_tx_hash') {
      throw new DomainError('CONFLICT', `Transaction ${txHash} is already recorded for another withdrawal`);
    }
    throw err;
  }
}

/** The posting of a change, after its status change: completed settles the frozen funds (the fee to revenue), failed releases them. */
async function post(tx: Tx, event: WithdrawalEvent['event'], withdrawal: WithdrawalRow): Promise<void> {
  if (event === 'complete') await settle(tx, withdrawalHold(withdrawal), new Money(withdrawal.fee));
  else if (event === 'fail') await release(tx, withdrawalHold(withdrawal));
}

/**
 * The owner of a completed withdrawal (the merchant's people, or the executor's) is told it was
 * sent, with the transaction's hash, in the transaction that completed it (issue 37).
 */
async function tellSent(tx: Tx, withdrawal: WithdrawalRow): Promise<void> {
  const audience = withdrawal.executor_id ? { executorId: withdrawal.executor_id } : { merchantId: withdrawal.merchant_id! };
  await enqueuePersonMessage(tx, audience, {
    kind: 'withdrawal_sent',
    eventKey: `withdrawal:${withdrawal.id}`,
    data: { withdrawal_id: withdrawal.id, amount: withdrawal.send_amount, currency: 'USDT', address: withdrawal.address, tx_hash: withdrawal.tx_hash },
  });
}
