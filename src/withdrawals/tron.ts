import { TronWeb } from 'tronweb';
import { Money, USDT_DECIMALS } from '../lib/money.js';
import type { ChainClient, ChainTxStatus, SignedTransfer } from './chain.js';

export interface TronSettings {
  fullNode: string;
  privateKey: string;
  usdtContract: string;
  apiKey?: string;
  feeLimitSun: number;
}

/**
 * The Tron adapter: TRC-20 USDT `transfer(address,uint256)` built by the configured full node,
 * signed here with the hot-wallet key (TronWeb checks that the node's protobuf matches the JSON it
 * signs), broadcast to the same node; confirmation is read from its solidity API (blocks the
 * network has made irreversible).
 */
export function createTronClient(settings: TronSettings): ChainClient {
  const tronWeb = new TronWeb({
    fullHost: settings.fullNode,
    headers: settings.apiKey ? { 'TRON-PRO-API-KEY': settings.apiKey } : undefined,
    privateKey: settings.privateKey,
  });
  const owner = tronWeb.address.fromPrivateKey(settings.privateKey);
  if (!owner) throw new Error('KASSIR_TRON_PRIVATE_KEY does not give a Tron address');

  return {
    async signTransfer(to: string, amount: string): Promise<SignedTransfer> {
      // USDT has 6 decimals on Tron: the contract takes integer micro-USDT.
      const units = new Money(amount).mul(10 ** USDT_DECIMALS);
      if (!units.isInteger() || units.lte(0)) throw new Error(`cannot send ${amount} USDT: not a positive amount of micro-USDT`);
      const built = await tronWeb.transactionBuilder.triggerSmartContract(
        settings.usdtContract,
        'transfer(address,uint256)',
        { feeLimit: settings.feeLimitSun, callValue: 0 },
        [
          { type: 'address', value: to },
          { type: 'uint256', value: units.toFixed() },
        ],
        owner,
      );
      if (!built.result?.result || !built.transaction) {
        throw new Error(`the Tron node refused to build the transfer: ${JSON.stringify(built.result ?? built)}`);
      }
      const signed = await tronWeb.trx.sign(built.transaction, settings.privateKey);
      return { txId: signed.txID, signed, expiresAt: new Date(signed.raw_data.expiration) };
    },

    async broadcast(signed: unknown): Promise<void> {
      const result = (await tronWeb.trx.sendRawTransaction(signed as Parameters<typeof tronWeb.trx.sendRawTransaction>[0])) as {
        result?: boolean;
        code?: string;
        message?: string;
      };
      // The node already having this very transaction is what a repeat broadcast should find.
      if (result.result || result.code === 'DUP_TRANSACTION_ERROR') return;
      const message = result.message ? Buffer.from(result.message, 'hex').toString('utf8') : '';
      throw new Error(`broadcast refused: ${result.code ?? 'unknown error'} ${message}`.trim());
    },

    async status(txId: string): Promise<ChainTxStatus> {
      const info = (await tronWeb.trx.getTransactionInfo(txId)) as { id?: string; receipt?: { result?: string }; result?: string };
      if (info?.id) {
        // A TRC-20 call succeeded only when its contract execution did.
        const outcome = info.receipt?.result;
        return info.result === 'FAILED' || (outcome !== undefined && outcome !== 'SUCCESS') ? 'failed' : 'confirmed';
      }
      try {
        const seen = (await tronWeb.trx.getTransaction(txId)) as { txID?: string };
        return seen?.txID ? 'pending' : 'unknown';
      } catch (err) {
        // Only the node's own "not found" means unseen: a node that failed to answer must not pass
        // for one that has not seen it, since unseen past expiry lets a second transaction be signed.
        if (err instanceof Error && err.message === 'Transaction not found') return 'unknown';
        throw err;
      }
    },

    async headTime(): Promise<Date> {
      const block = (await tronWeb.trx.getCurrentBlock()) as { block_header?: { raw_data?: { timestamp?: number } } };
      const timestamp = block.block_header?.raw_data?.timestamp;
      if (typeof timestamp !== 'number') throw new Error('the Tron node did not report its newest block');
      return new Date(timestamp);
    },
  };
}
