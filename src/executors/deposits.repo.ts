import type { Queryable, Tx } from '../db/pool.js';

export interface DepositRow {
  id: string;
  executor_id: string;
  address: string;
  tx_hash: string;
  log_index: number;
  from_address: string;
  amount: string;
  block_number: string;
  block_time: Date;
  created_at: Date;
}

export interface NewDeposit {
  executorId: string;
  address: string;
  txHash: string;
  logIndex: number;
  from: string;
  amount: string;
  blockNumber: number;
  blockTime: Date;
}

/**
 * Records an incoming transfer in the caller's transaction, once: undefined when (tx_hash,
 * log_index) is already recorded — by this poller earlier or by another one now (the insert then
 * waits for the other's transaction and finds the key taken).
 */
export async function insertDeposit(tx: Tx, d: NewDeposit): Promise<DepositRow | undefined> {
  const { rows } = await tx.query<DepositRow>(
    `INSERT INTO executor_deposits (executor_id, address, tx_hash, log_index, from_address, amount, block_number, block_time)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tx_hash, log_index) DO NOTHING RETURNING *`,
    [d.executorId, d.address, d.txHash, d.logIndex, d.from, d.amount, d.blockNumber, d.blockTime],
  );
  return rows[0];
}

/** Which of these transactions already credited something (nothing more to look up for them). */
export async function creditedTxHashes(db: Queryable, txHashes: string[]): Promise<Set<string>> {
  if (txHashes.length === 0) return new Set();
  const { rows } = await db.query<{ tx_hash: string }>('SELECT DISTINCT tx_hash FROM executor_deposits WHERE tx_hash = ANY($1::text[])', [txHashes]);
  return new Set(rows.map((row) => row.tx_hash));
}

/** An executor's deposits on chain, newest first (owner-scoped). */
export async function listExecutorDeposits(db: Queryable, executorId: string, limit: number, offset: number): Promise<DepositRow[]> {
  const { rows } = await db.query<DepositRow>('SELECT * FROM executor_deposits WHERE executor_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [
    executorId,
    limit,
    offset,
  ]);
  return rows;
}
