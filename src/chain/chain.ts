/**
 * What withdrawals and the executors' deposits need from a blockchain (core, so both may use it).
 * The Tron adapter implements it against a full node (src/chain/tron.ts); tests run it against a
 * local fake node.
 */
export interface ChainClient {
  /** Builds and signs a TRC-20 USDT transfer of `amount` (decimal string, 6 decimals) to `to`; sends nothing. */
  signTransfer(to: string, amount: string): Promise<SignedTransfer>;
  /** Broadcasts a signed transaction. A transaction the node already has counts as broadcast. */
  broadcast(signed: unknown): Promise<void>;
  /** What the chain says about a transaction. */
  status(txId: string): Promise<ChainTxStatus>;
  /** The time of the newest block the node knows: expiry is judged on the node's clock, not ours. */
  headTime(): Promise<Date>;

  // Deposits (src/executors/deposits.jobs.ts): incoming USDT transfers to the executors' addresses.

  /** The number of the newest block the node knows. */
  headBlock(): Promise<number>;
  /**
   * Transactions that moved the configured USDT token to `address` with a block time at or after
   * `since`, oldest first (the TronGrid-style index `/v1/accounts/{address}/transactions/trc20`).
   * Only hints: what was transferred is read from each transaction's own logs (tokenTransfers).
   */
  incomingTransfers(address: string, since: Date): Promise<IncomingTransferHint[]>;
  /**
   * The token transfers a transaction made (its TRC-20 Transfer event logs, every contract), with
   * its block; undefined while it is in no block. A reverted transaction transferred nothing.
   */
  tokenTransfers(txId: string): Promise<{ blockNumber: number; blockTime: Date; transfers: TokenTransfer[] } | undefined>;
}

export interface IncomingTransferHint {
  txId: string;
  blockTime: Date;
}

export interface TokenTransfer {
  /** The event's position among the transaction's logs: (txId, logIndex) names one transfer. */
  logIndex: number;
  /** The token contract (base58 T-address). */
  contract: string;
  from: string;
  to: string;
  /** In the token's smallest unit. */
  units: bigint;
}

export interface SignedTransfer {
  txId: string;
  /** The signed transaction as the node takes it back for broadcast (stored as JSON). */
  signed: unknown;
  /** After this the transaction can no longer be included in a block. */
  expiresAt: Date;
}

/** unknown: the chain has not seen it; pending: seen, not yet confirmed; failed: included but reverted. */
export type ChainTxStatus = 'unknown' | 'pending' | 'confirmed' | 'failed';
