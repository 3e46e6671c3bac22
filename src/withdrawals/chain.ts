/**
 * What a withdrawal needs from a blockchain. The Tron adapter implements it against a full node
 * (src/withdrawals/tron.ts); tests run it against a local fake node.
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
