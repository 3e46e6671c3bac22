import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import type { ChainClient } from './chain.js';
import { completeWithdrawal, failWithdrawal, scheduleSend, type WithdrawalRow } from './withdrawals.service.js';

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
    const lock = await ctx.db.connect();
    try {
      const { rows: locked } = await lock.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 7462)) AS ok', [id]);
      if (!locked[0]!.ok) {
        await scheduleSend(ctx.db, id, new Date(Date.now() + ctx.config.tronPollMs));
        return;
      }
      try {
        await step(ctx, chain(), id);
      } finally {
        await lock.query('SELECT pg_advisory_unlock(hashtextextended($1, 7462))', [id]);
      }
    } finally {
      lock.release();
    }
  };
}

async function load(ctx: AppContext, id: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await ctx.db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE id = $1', [id]);
  return rows[0];
}

async function step(ctx: AppContext, chain: ChainClient, id: string): Promise<void> {
  const withdrawal = await load(ctx, id);
  if (!withdrawal || withdrawal.adapter === 'manual' || (withdrawal.status !== 'pending' && withdrawal.status !== 'processing')) return;
  const pollLater = () => scheduleSend(ctx.db, id, new Date(Date.now() + ctx.config.tronPollMs));

  if (withdrawal.signed_tx && withdrawal.tx_hash) {
    const status = await chain.status(withdrawal.tx_hash);
    if (status === 'confirmed') {
      await transaction(ctx.db, (tx) => completeWithdrawal(tx, id, withdrawal.tx_hash!));
      ctx.log.info({ withdrawal: id, tx_hash: withdrawal.tx_hash }, 'withdrawal confirmed on chain');
      return;
    }
    if (status === 'failed') {
      await transaction(ctx.db, (tx) => failWithdrawal(tx, id, `the transaction ${withdrawal.tx_hash} failed on chain`, true));
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
  const { rowCount } = await ctx.db.query(
    `UPDATE withdrawals SET signed_tx = $2, tx_hash = $3, tx_expires_at = $4, status = 'processing', updated_at = now()
      WHERE id = $1 AND status IN ('pending', 'processing') AND tx_hash IS NOT DISTINCT FROM $5`,
    [id, JSON.stringify(signed.signed), signed.txId, signed.expiresAt, withdrawal.tx_hash],
  );
  if (!rowCount) return;
  await chain.broadcast(signed.signed);
  ctx.log.info({ withdrawal: id, tx_hash: signed.txId }, 'withdrawal transaction broadcast');
  await pollLater();
}

/** After a restart: every automatic withdrawal still open gets its send job back. */
export async function resumeSends(ctx: AppContext): Promise<number> {
  const { rows } = await ctx.db.query<{ id: string }>(
    `SELECT id FROM withdrawals WHERE adapter <> 'manual' AND status IN ('pending', 'processing')`,
  );
  for (const row of rows) await scheduleSend(ctx.db, row.id, null);
  return rows.length;
}
