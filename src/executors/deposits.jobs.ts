import type { Task } from 'graphile-worker';
import type { ChainClient } from '../chain/chain.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { post } from '../ledger/ledger.repo.js';
import { Money, USDT_DECIMALS } from '../lib/money.js';
import { deriveTronAddress } from '../lib/tron-hd.js';
import { creditedTxHashes, insertDeposit } from './deposits.repo.js';
import { advanceDepositScan, depositAddresses } from './executors.repo.js';

export const DEPOSITS_TASK = 'executor_deposits_poll';

/**
 * How far behind its cursor an address is scanned again: the transfer index may list a transfer
 * a little after later ones, and two pollers may move the cursor in either order. Transfers seen
 * again are recognised by their (tx_hash, log_index) and not credited twice.
 */
const LOOKBACK_MS = 10 * 60_000;

export interface PollResult {
  /** Transfers credited by this poll. */
  credited: number;
  /** Transfers seen that do not have enough confirmations yet (or are in no block yet). */
  waiting: number;
}

/**
 * One poll of every executor's deposit address: incoming USDT transfers (the configured token
 * contract only, to that address only, read from the transaction's own event logs) whose block
 * has at least KASSIR_TRON_DEPOSIT_CONFIRMATIONS confirmations (head − block + 1) are credited to
 * the executor, each exactly once: the executor_deposits row, unique on (tx_hash, log_index), and
 * its `executor_deposit` posting — executor_available +amount, system_incoming −amount (money
 * entering from outside, as a payer's does), memo the transaction hash — commit together.
 */
export async function pollDeposits(ctx: AppContext, chain: ChainClient): Promise<PollResult> {
  const settings = ctx.config.tronDeposits;
  const usdt = ctx.config.tron?.usdtContract;
  if (!settings || !usdt) return { credited: 0, waiting: 0 };
  const head = await chain.headBlock();
  const result: PollResult = { credited: 0, waiting: 0 };
  for (const executor of await depositAddresses(ctx.db)) {
    if (deriveTronAddress(settings.xpub, executor.deposit_index) !== executor.deposit_address) {
      // The address the executor was told is still watched; the operator must keep its key.
      ctx.log.warn(
        { executor: executor.id, deposit_address: executor.deposit_address, deposit_index: executor.deposit_index },
        'this deposit address does not come from the configured KASSIR_TRON_DEPOSIT_XPUB (was the key changed?); it is still watched, keep the key that made it',
      );
    }
    const since = executor.deposit_scanned_to ? new Date(executor.deposit_scanned_to.getTime() - LOOKBACK_MS) : new Date(0);
    const hints = await chain.incomingTransfers(executor.deposit_address, since);
    const txIds = [...new Set(hints.map((hint) => hint.txId))];
    const done = await creditedTxHashes(ctx.db, txIds);
    let waitingFrom: Date | undefined;
    let newest = executor.deposit_scanned_to ?? undefined;
    for (const hint of hints) {
      if (!newest || hint.blockTime > newest) newest = hint.blockTime;
    }
    for (const txId of txIds) {
      if (done.has(txId)) continue;
      const seenAt = hints.find((hint) => hint.txId === txId)!.blockTime;
      const tx = await chain.tokenTransfers(txId);
      if (!tx || head - tx.blockNumber + 1 < settings.confirmations) {
        result.waiting += 1;
        if (!waitingFrom || seenAt < waitingFrom) waitingFrom = seenAt;
        continue;
      }
      for (const transfer of tx.transfers) {
        if (transfer.contract !== usdt || transfer.to !== executor.deposit_address || transfer.units <= 0n) continue;
        const amount = new Money(transfer.units.toString()).div(10 ** USDT_DECIMALS).toFixed();
        const credited = await transaction(ctx.db, async (db) => {
          const deposit = await insertDeposit(db, {
            executorId: executor.id,
            address: executor.deposit_address,
            txHash: txId,
            logIndex: transfer.logIndex,
            from: transfer.from,
            amount,
            blockNumber: tx.blockNumber,
            blockTime: tx.blockTime,
          });
          if (!deposit) return false;
          await post(db, {
            kind: 'executor_deposit',
            refId: deposit.id,
            merchantId: null,
            memo: txId,
            entries: [
              { account: { executorId: executor.id, kind: 'executor_available' }, amount: new Money(amount) },
              { account: { kind: 'system_incoming' }, amount: new Money(amount).negated() },
            ],
          });
          return true;
        });
        if (credited) {
          result.credited += 1;
          ctx.log.info({ executor: executor.id, tx_hash: txId, log_index: transfer.logIndex, amount }, 'executor deposit credited');
        }
      }
    }
    // Everything before the oldest transfer still waiting is settled; with none waiting, all seen is.
    const scannedTo = waitingFrom ?? newest;
    if (scannedTo) await advanceDepositScan(ctx.db, executor.id, scannedTo);
  }
  return result;
}

/**
 * The poll as a job that schedules its next run (one job across all instances, by its key). A
 * poll that fails (the node cannot be reached) is logged and not retried on its own: the next
 * poll, KASSIR_TRON_DEPOSIT_POLL_MS later, starts again from the executors' cursors.
 */
export function depositsTask(ctx: AppContext, chain: () => ChainClient): Task {
  return async (_payload, helpers) => {
    try {
      const { credited, waiting } = await pollDeposits(ctx, chain());
      if (credited > 0 || waiting > 0) ctx.log.info({ credited, waiting }, 'polled executor deposit addresses');
    } catch (err) {
      ctx.log.warn({ err }, 'could not poll the executors’ deposit addresses; trying again at the next poll');
    } finally {
      await helpers.addJob(
        DEPOSITS_TASK,
        {},
        { jobKey: DEPOSITS_TASK, jobKeyMode: 'preserve_run_at', runAt: new Date(Date.now() + (ctx.config.tronDeposits?.pollMs ?? 30_000)) },
      );
    }
  };
}
