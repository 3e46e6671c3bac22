import type { Task } from 'graphile-worker';
import type { ChainClient } from '../chain/chain.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { outsideShare } from '../db/share.js';
import { changeWithdrawal } from './lifecycle.js';
import { findWithdrawal, openAutomaticWithdrawalIds, tryLockSending, unlockSending } from './withdrawals.repo.js';
import { scheduleSend } from './withdrawals.service.js';

/** How long past a transaction's expiration the chain is given before it counts as never included. */
const EXPIRY_MARGIN_MS = 120_000;

/**
 * Sends a withdrawal through the chain adapter, exactly once:
 * 1. A transaction is signed and stored (signed_tx, tx_hash) BEFORE it is broadcast.
 * 2. The stored transaction is broadcast — re-broadcasting the same signed transaction is
 *    harmless: the chain includes one transaction id at most once.
 * 3. The job then polls the chain: confirmed → completed (funds debited); reverted → failed
 *    (funds released); unknown past its expiration → it can never be included, so a new one is
 *    signed (step 1). After a crash anywhere in between, the next run finds the stored transaction
 *    and looks it up instead of sending another.
 * One run at a time per withdrawal: a session advisory lock, released by PostgreSQL if the
 * process dies, so a restarted worker can take over at once.
 */
export function sendTask(ctx: AppContext, chain: () => ChainClient): Task {
  return async (payload) => {
    const id = (payload as { id: string }).id;
    // The lock's session is held through the chain's calls and the send's own queries: it takes
    // no place in the jobs' share of the pool (src/db/share.ts). Taking one, four sends at once
    // held both places of a pool of 8 and each waited the share's 5 s for a second place at every
    // step; a restart behind a queue of them did not answer /healthz for minutes (the fault suite).
    const lock = await outsideShare(ctx.db).connect();
    try {
      if (!(await tryLockSending(lock, id))) {
        await scheduleSend(ctx.db, id, new Date(Date.now() + ctx.config.tronPollMs));
        return;
      }
      try {
        await step(ctx, chain(), id);
      } finally {
        await unlockSending(lock, id);
      }
    } finally {
      lock.release();
    }
  };
}

async function step(ctx: AppContext, chain: ChainClient, id: string): Promise<void> {
  const withdrawal = await findWithdrawal(ctx.db, id);
  if (!withdrawal || withdrawal.adapter === 'manual' || (withdrawal.status !== 'pending' && withdrawal.status !== 'processing')) return;
  const pollLater = () => scheduleSend(ctx.db, id, new Date(Date.now() + ctx.config.tronPollMs));

  if (withdrawal.signed_tx && withdrawal.tx_hash) {
    const status = await chain.status(withdrawal.tx_hash);
    if (status === 'confirmed') {
      await transaction(ctx.db, (tx) => changeWithdrawal(tx, id, { event: 'complete', txHash: withdrawal.tx_hash! }));
      ctx.log.info({ withdrawal: id, tx_hash: withdrawal.tx_hash }, 'withdrawal confirmed on chain');
      return;
    }
    if (status === 'failed') {
      await transaction(ctx.db, (tx) =>
        changeWithdrawal(tx, id, { event: 'fail', reason: `the transaction ${withdrawal.tx_hash} failed on chain`, byChain: true }),
      );
      ctx.log.warn({ withdrawal: id, tx_hash: withdrawal.tx_hash }, 'withdrawal transaction failed on chain; funds released');
      return;
    }
    if (status === 'pending') return pollLater();
    // Judged on the node's newest block, not our clock: a node lagging behind the chain must
    // not make an included transaction look expired and cause a second one.
    const expired = withdrawal.tx_expires_at !== null && (await chain.headTime()).getTime() > withdrawal.tx_expires_at.getTime() + EXPIRY_MARGIN_MS;
    if (!expired) {
      await chain.broadcast(withdrawal.signed_tx);
      return pollLater();
    }
    ctx.log.warn({ withdrawal: id, tx_hash: withdrawal.tx_hash }, 'withdrawal transaction expired unseen; signing a new one');
  }

  const signed = await chain.signTransfer(withdrawal.address, withdrawal.send_amount);
  // Recorded before broadcasting, and only if nobody recorded another transaction meanwhile.
  const recorded = await transaction(ctx.db, (tx) =>
    changeWithdrawal(tx, id, {
      event: 'sign',
      signed: { signedTx: signed.signed, txHash: signed.txId, expiresAt: signed.expiresAt, previousTxHash: withdrawal.tx_hash },
    }),
  );
  if (!recorded) return;
  await chain.broadcast(signed.signed);
  ctx.log.info({ withdrawal: id, tx_hash: signed.txId }, 'withdrawal transaction broadcast');
  await pollLater();
}

/** After a restart or an outage: every automatic withdrawal still open gets its send job back. */
export async function resumeSends(ctx: AppContext): Promise<number> {
  const ids = await openAutomaticWithdrawalIds(ctx.db);
  for (const id of ids) await scheduleSend(ctx.db, id, null);
  return ids.length;
}
