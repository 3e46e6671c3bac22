import { TronWeb } from 'tronweb';
import { Money, USDT_DECIMALS } from '../lib/money.js';
import type { ChainClient, ChainTxStatus, IncomingTransferHint, SignedTransfer, TokenTransfer } from './chain.js';

/** keccak256("Transfer(address,address,uint256)"): the TRC-20 (ERC-20) Transfer event. */
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** Pages of the transfer index read per poll of one address (200 transfers a page). */
const MAX_PAGES = 20;

interface TransactionInfo {
  id?: string;
  blockNumber?: number;
  blockTimeStamp?: number;
  result?: string;
  receipt?: { result?: string };
  log?: { address?: string; topics?: string[]; data?: string }[];
}

interface Trc20Page {
  success?: boolean;
  error?: string;
  data?: { transaction_id?: string; block_timestamp?: number; to?: string; token_info?: { address?: string } }[];
  meta?: { fingerprint?: string };
}

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

    async headBlock(): Promise<number> {
      const block = (await tronWeb.trx.getCurrentBlock()) as { block_header?: { raw_data?: { number?: number } } };
      const number = block.block_header?.raw_data?.number;
      if (typeof number !== 'number') throw new Error('the Tron node did not report its newest block');
      return number;
    },

    async incomingTransfers(address: string, since: Date): Promise<IncomingTransferHint[]> {
      const found: IncomingTransferHint[] = [];
      let fingerprint: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const query = new URLSearchParams({
          only_to: 'true',
          contract_address: settings.usdtContract,
          min_timestamp: String(since.getTime()),
          order_by: 'block_timestamp,asc',
          limit: '200',
        });
        if (fingerprint) query.set('fingerprint', fingerprint);
        const url = `${settings.fullNode}/v1/accounts/${encodeURIComponent(address)}/transactions/trc20?${query}`;
        const response = await fetch(url, {
          headers: { accept: 'application/json', ...(settings.apiKey ? { 'TRON-PRO-API-KEY': settings.apiKey } : {}) },
          signal: AbortSignal.timeout(15_000),
        });
        if (!response.ok) throw new Error(`the Tron node's transfer index answered ${response.status} for ${address}`);
        const body = (await response.json()) as Trc20Page;
        if (body.success === false) throw new Error(`the Tron node's transfer index refused: ${body.error ?? 'no reason given'}`);
        for (const row of body.data ?? []) {
          if (typeof row.transaction_id !== 'string' || typeof row.block_timestamp !== 'number') continue;
          // The filter is asked of the index, and checked here again: only our token, only to us.
          if (row.token_info?.address !== settings.usdtContract || row.to !== address) continue;
          found.push({ txId: row.transaction_id.toLowerCase(), blockTime: new Date(row.block_timestamp) });
        }
        fingerprint = body.meta?.fingerprint;
        if (!fingerprint || (body.data ?? []).length === 0) break;
      }
      return found;
    },

    async tokenTransfers(txId: string) {
      const info = (await tronWeb.trx.getUnconfirmedTransactionInfo(txId)) as TransactionInfo;
      if (!info?.id || typeof info.blockNumber !== 'number') return undefined;
      const blockTime = new Date(info.blockTimeStamp ?? 0);
      const reverted = info.result === 'FAILED' || (info.receipt?.result !== undefined && info.receipt.result !== 'SUCCESS');
      if (reverted) return { blockNumber: info.blockNumber, blockTime, transfers: [] };
      const transfers: TokenTransfer[] = [];
      (info.log ?? []).forEach((log, logIndex) => {
        const topics = log.topics ?? [];
        if (topics.length !== 3 || topics[0]?.toLowerCase() !== TRANSFER_TOPIC || !log.address || !log.data) return;
        const hexAddress = (topic: string) => TronWeb.address.fromHex(`41${topic.slice(-40)}`);
        transfers.push({
          logIndex,
          contract: hexAddress(log.address),
          from: hexAddress(topics[1]!),
          to: hexAddress(topics[2]!),
          units: BigInt(`0x${log.data}`),
        });
      });
      return { blockNumber: info.blockNumber, blockTime, transfers };
    },
  };
}
