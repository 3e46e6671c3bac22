import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TronWeb, utils } from 'tronweb';

/**
 * A local stand-in for a Tron full node (the HTTP API of java-tron), answering what TronWeb 6
 * calls for a TRC-20 transfer: build (wallet/triggersmartcontract), broadcast
 * (wallet/broadcasttransaction) and look up (wallet/gettransactionbyid,
 * walletsolidity/gettransactioninfobyid). Shapes follow java-tron's answers as TronWeb reads them
 * (node_modules/tronweb/lib/esm/lib/{TransactionBuilder,trx}); the protobuf bytes are made with
 * TronWeb's own encoder, so what it checks before signing (txCheckWithArgs, txCheck) is checked
 * for real.
 *
 * Like the chain, a transaction id is executed at most once: broadcast puts it in the pending pool
 * (invisible to lookups), `include` puts it in a block (gettransactionbyid sees it, the token
 * transfer is executed or reverted), `solidify` makes it irreversible (the solidity API reports
 * its receipt). A pooled transaction past its expiration is dropped and can never be included.
 */

export const USDT_MAINNET = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** A fixed hot-wallet key for tests (never funded anywhere). */
export const TEST_TRON_KEY = '8e3b1c4f0a6d2e9b7c5a3f1e0d9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170';
const TRANSFER_SELECTOR = 'a9059cbb';
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface TokenTransfer {
  txId: string;
  contract: string;
  from: string;
  to: string;
  /** In the token's smallest unit (micro-USDT). */
  amount: bigint;
  blockNumber: number;
  blockTimestamp: number;
}

/** A transfer into the chain from outside (someone paying a deposit address), in a block of its own. */
export interface IncomingTransferInput {
  to: string;
  /** Micro-units of the token. */
  amount: bigint;
  /** The token contract (default: the node's USDT). */
  contract?: string;
  from?: string;
  /** More Transfer events in the same transaction (a batch payment): each is one more log. */
  more?: { to: string; amount: bigint; contract?: string; from?: string }[];
  /** The transaction reverted: no transfer happened (it is in a block, with no logs). */
  reverted?: boolean;
}

interface IncomingTx {
  txId: string;
  blockNumber: number;
  blockTimeStamp: number;
  reverted: boolean;
  logs: { contractHex: string; fromHex: string; toHex: string; amount: bigint }[];
}

export interface BroadcastAttempt {
  txId: string;
  /** What the node answered: 'SUCCESS', 'DUP_TRANSACTION_ERROR', 'TRANSACTION_EXPIRATION_ERROR', 'SIGERROR', … or 'DROPPED' (connection cut). */
  code: string;
}

type TxState = 'pooled' | 'included' | 'solidified' | 'dropped';

interface ChainTx {
  txId: string;
  signed: Record<string, any>;
  owner: string;
  to: string;
  amount: bigint;
  expiration: number;
  state: TxState;
  outcome?: 'SUCCESS' | 'REVERT';
  blockNumber?: number;
  blockTimeStamp?: number;
}

export interface FakeTronNodeOptions {
  /** The TRC-20 contract the node knows (base58); others answer "No contract". */
  usdtContract?: string;
  /** Lifetime of a built transaction (java-tron: 60 s past the head block). */
  expirationMs?: number;
  /** When set, every accepted transaction is included and solidified this many ms after its broadcast. */
  autoConfirmMs?: number;
}

export interface FakeTronNode {
  url: string;
  /** Every transaction built by wallet/triggersmartcontract, in order. */
  built: { txId: string; owner: string; to: string; amount: bigint; expiration: number }[];
  /** Every broadcast request, in order, with the node's answer. */
  broadcasts: BroadcastAttempt[];
  /** Token transfers executed on chain (one per included, successful transaction id). */
  transfers: TokenTransfer[];
  /** Routes TronWeb called that the fake does not serve (should stay empty). */
  unknownRoutes: string[];
  /** How the next included transactions execute. */
  outcome: 'SUCCESS' | 'REVERT';
  autoConfirmMs: number | undefined;
  /** Lifetime given to the transactions built from now on. */
  expirationMs: number;
  /** When set, wallet/triggersmartcontract refuses to build with this message (a node that cannot serve). */
  refuseBuild: string | undefined;
  /** Routes (e.g. 'wallet/gettransactionbyid') that answer 503, as an overloaded node does. */
  failRoutes: Set<string>;
  /** Called on a broadcast of a valid, new transaction before the node takes it; return 'drop' to cut the connection without taking it. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook may return nothing at all, or 'drop'
  beforeAccept?: (txId: string) => void | 'drop' | Promise<void | 'drop'>;
  /** Called after the node took a new transaction into its pool, before it answers. */
  afterAccept?: (txId: string) => void | Promise<void>;
  /** Puts a pooled transaction into a block: it executes now (transfer or revert). */
  include(txId: string): void;
  /** Includes (if needed) and solidifies a transaction: the solidity API then reports it. */
  confirm(txId: string): void;
  /** Confirms every pooled or included transaction; returns their ids. */
  confirmAll(): string[];
  /** The distinct transaction ids the node accepted. */
  acceptedTxIds(): string[];
  /** Puts a transfer from outside into a new block (at the head); returns its transaction id. */
  addIncomingTransfer(input: IncomingTransferInput): string;
  /** Makes `count` empty blocks: the transactions before them gain `count` confirmations. */
  mineBlocks(count: number): void;
  /** The newest block's number. */
  headBlock(): number;
  state(txId: string): TxState | undefined;
  close(): Promise<void>;
}

const hexUtf8 = (text: string) => Buffer.from(text, 'utf8').toString('hex');
const toHex41 = (address: string) => TronWeb.address.toHex(address).toLowerCase();
const toBase58 = (hex41: string) => TronWeb.address.fromHex(hex41);

function decodeTransfer(data: string): { to: string; amount: bigint } | undefined {
  if (!/^[0-9a-f]*$/i.test(data) || data.length !== 8 + 128 || data.slice(0, 8).toLowerCase() !== TRANSFER_SELECTOR) return undefined;
  const word = data.slice(8, 72);
  if (!/^0{24}/.test(word)) return undefined;
  return { to: toBase58(`41${word.slice(24)}`), amount: BigInt(`0x${data.slice(72)}`) };
}

/** Protobuf of the transaction's raw_data as TronWeb encodes it, and its id (sha256 of those bytes). */
function encode(tx: Record<string, any>): { rawDataHex: string; txId: string } {
  const rawDataHex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb(tx)).toLowerCase();
  const txId = createHash('sha256').update(Buffer.from(rawDataHex, 'hex')).digest('hex');
  return { rawDataHex, txId };
}

export async function startFakeTronNode(options: FakeTronNodeOptions = {}): Promise<FakeTronNode> {
  const contractHex = toHex41(options.usdtContract ?? USDT_MAINNET);
  const txs = new Map<string, ChainTx>();
  const incoming = new Map<string, IncomingTx>();
  const timers = new Set<NodeJS.Timeout>();
  let blockNumber = 70_000_000;
  let headHash = randomBytes(32).toString('hex');

  const nextBlock = () => {
    blockNumber += 1;
    headHash = blockNumber.toString(16).padStart(16, '0') + randomBytes(24).toString('hex');
    return { number: blockNumber, timestamp: Date.now() };
  };

  const expireDue = () => {
    for (const tx of txs.values()) if (tx.state === 'pooled' && tx.expiration <= Date.now()) tx.state = 'dropped';
  };

  const node: FakeTronNode = {
    url: '',
    built: [],
    broadcasts: [],
    transfers: [],
    unknownRoutes: [],
    outcome: 'SUCCESS',
    autoConfirmMs: options.autoConfirmMs,
    expirationMs: options.expirationMs ?? 60_000,
    refuseBuild: undefined,
    failRoutes: new Set(),
    include(txId) {
      expireDue();
      const tx = txs.get(txId);
      if (!tx) throw new Error(`fake tron node: ${txId} was never broadcast`);
      if (tx.state === 'dropped') throw new Error(`fake tron node: ${txId} expired in the pool and can never be included`);
      if (tx.state !== 'pooled') return;
      const block = nextBlock();
      tx.state = 'included';
      tx.blockNumber = block.number;
      tx.blockTimeStamp = block.timestamp;
      tx.outcome = node.outcome;
      if (tx.outcome === 'SUCCESS') {
        node.transfers.push({
          txId,
          contract: toBase58(contractHex),
          from: toBase58(tx.owner),
          to: tx.to,
          amount: tx.amount,
          blockNumber: block.number,
          blockTimestamp: block.timestamp,
        });
      }
    },
    confirm(txId) {
      node.include(txId);
      txs.get(txId)!.state = 'solidified';
    },
    confirmAll() {
      expireDue();
      const ids = [...txs.values()].filter((tx) => tx.state === 'pooled' || tx.state === 'included').map((tx) => tx.txId);
      for (const id of ids) node.confirm(id);
      return ids;
    },
    acceptedTxIds() {
      return [...txs.keys()];
    },
    addIncomingTransfer(input) {
      const block = nextBlock();
      const txId = randomBytes(32).toString('hex');
      const parts = [input, ...(input.more ?? [])].map((part) => ({
        contractHex: toHex41(part.contract ?? toBase58(contractHex)),
        fromHex: toHex41(part.from ?? randomTronAddress()),
        toHex: toHex41(part.to),
        amount: part.amount,
      }));
      const reverted = Boolean(input.reverted);
      incoming.set(txId, { txId, blockNumber: block.number, blockTimeStamp: block.timestamp, reverted, logs: reverted ? [] : parts });
      if (!reverted) {
        for (const part of parts) {
          node.transfers.push({
            txId,
            contract: toBase58(part.contractHex),
            from: toBase58(part.fromHex),
            to: toBase58(part.toHex),
            amount: part.amount,
            blockNumber: block.number,
            blockTimestamp: block.timestamp,
          });
        }
      }
      return txId;
    },
    mineBlocks(count) {
      for (let i = 0; i < count; i++) nextBlock();
    },
    headBlock() {
      return blockNumber;
    },
    state(txId) {
      expireDue();
      return txs.get(txId)?.state;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const routes: Record<string, (body: Record<string, any>, req: IncomingMessage, res: ServerResponse) => Promise<unknown> | unknown> = {
    // TransactionBuilder._triggerSmartContract: args {contract_address, owner_address (hex 41…), function_selector,
    // parameter, call_value, fee_limit}; answer {result: {result: true}, transaction} (or result.message, hex).
    'wallet/triggersmartcontract': (body) => {
      const fail = (code: string, message: string) => ({ result: { code, message: hexUtf8(message) } });
      if (node.refuseBuild !== undefined) return fail('OTHER_ERROR', node.refuseBuild);
      let owner: string;
      let contract: string;
      try {
        owner = toHex41(String(body.owner_address));
        contract = toHex41(String(body.contract_address));
      } catch {
        return fail('CONTRACT_VALIDATE_ERROR', 'Invalid address');
      }
      if (contract !== contractHex) return fail('CONTRACT_VALIDATE_ERROR', 'No contract or not a smart contract');
      if (body.function_selector !== 'transfer(address,uint256)') return fail('CONTRACT_VALIDATE_ERROR', 'fake node: only transfer(address,uint256) is served');
      if (body.call_value) return fail('CONTRACT_VALIDATE_ERROR', 'fake node: TRC-20 transfer takes no call_value');
      if (!Number.isInteger(body.fee_limit) || body.fee_limit <= 0) return fail('CONTRACT_VALIDATE_ERROR', 'fee_limit must be positive');
      const data = TRANSFER_SELECTOR + String(body.parameter ?? '').toLowerCase();
      const transfer = decodeTransfer(data);
      if (!transfer) return fail('CONTRACT_VALIDATE_ERROR', 'fake node: the parameter is not (address, uint256)');
      const now = Date.now();
      const refBlock = blockNumber;
      const raw_data: Record<string, any> = {
        contract: [
          {
            parameter: {
              value: { data, owner_address: owner, contract_address: contract },
              type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
            },
            type: 'TriggerSmartContract',
          },
        ],
        // java-tron: the last 2 bytes of the reference block's number and bytes 8..16 of its hash.
        ref_block_bytes: (refBlock & 0xffff).toString(16).padStart(4, '0'),
        ref_block_hash: headHash.slice(16, 32),
        expiration: now + node.expirationMs,
        fee_limit: body.fee_limit,
        timestamp: now,
      };
      const transaction: Record<string, any> = { visible: false, txID: '', raw_data, raw_data_hex: '' };
      const encoded = encode(transaction);
      transaction.txID = encoded.txId;
      transaction.raw_data_hex = encoded.rawDataHex;
      node.built.push({ txId: encoded.txId, owner, to: transfer.to, amount: transfer.amount, expiration: raw_data.expiration });
      return { result: { result: true }, transaction };
    },

    // Trx.sendRawTransaction posts the signed transaction JSON; java-tron answers {result: true, txid}
    // or {code, txid?, message (hex)}.
    'wallet/broadcasttransaction': async (body, _req, res) => {
      const refuse = (code: string, message: string, txId = '') => {
        node.broadcasts.push({ txId, code });
        return { code, ...(txId ? { txid: txId } : {}), message: hexUtf8(message) };
      };
      if (!body.raw_data?.contract?.[0]?.parameter?.value) return refuse('OTHER_ERROR', 'fake node: no raw_data');
      let encoded: { rawDataHex: string; txId: string };
      try {
        encoded = encode(body);
      } catch (err) {
        return refuse('OTHER_ERROR', `fake node: raw_data does not encode: ${String(err)}`);
      }
      const { txId, rawDataHex } = encoded;
      if (body.raw_data_hex !== undefined && String(body.raw_data_hex).toLowerCase() !== rawDataHex) {
        return refuse('OTHER_ERROR', 'fake node: raw_data_hex does not match raw_data', txId);
      }
      if (body.txID !== undefined && String(body.txID).toLowerCase() !== txId) return refuse('OTHER_ERROR', 'fake node: txID does not match raw_data', txId);
      const value = body.raw_data.contract[0].parameter.value;
      const owner = toHex41(String(value.owner_address));
      const signature = Array.isArray(body.signature) ? String(body.signature[0] ?? '') : '';
      let signer = '';
      try {
        signer = utils.crypto.ecRecover(txId, signature).toLowerCase();
      } catch {
        // an unreadable signature is a signature error below
      }
      if (signer !== owner) return refuse('SIGERROR', 'Validate signature error: the signature does not recover the owner address', txId);

      expireDue();
      if (txs.has(txId) && txs.get(txId)!.state !== 'dropped') return refuse('DUP_TRANSACTION_ERROR', 'Dup transaction.', txId);
      if (body.raw_data.expiration <= Date.now()) return refuse('TRANSACTION_EXPIRATION_ERROR', 'Transaction expired', txId);
      const transfer = decodeTransfer(String(value.data ?? ''));
      if (toHex41(String(value.contract_address)) !== contractHex || !transfer)
        return refuse('CONTRACT_VALIDATE_ERROR', 'fake node: not a USDT transfer', txId);

      if ((await node.beforeAccept?.(txId)) === 'drop') {
        node.broadcasts.push({ txId, code: 'DROPPED' });
        res.destroy();
        return undefined;
      }
      txs.set(txId, { txId, signed: body, owner, to: transfer.to, amount: transfer.amount, expiration: body.raw_data.expiration, state: 'pooled' });
      node.broadcasts.push({ txId, code: 'SUCCESS' });
      if (node.autoConfirmMs !== undefined) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (txs.get(txId)?.state === 'pooled') node.confirm(txId);
        }, node.autoConfirmMs);
        timers.add(timer);
      }
      await node.afterAccept?.(txId);
      return { result: true, txid: txId };
    },

    // AbstractTrx.getTransaction: {value: txid} → the transaction once in a block, else {}.
    'wallet/gettransactionbyid': (body) => {
      const tx = txs.get(String(body.value ?? '').toLowerCase());
      if (!tx || (tx.state !== 'included' && tx.state !== 'solidified')) return {};
      return { ...tx.signed, ret: [{ contractRet: tx.outcome }] };
    },

    // AbstractTrx.getTransactionInfo reads the solidity API: {} until the transaction is irreversible.
    'walletsolidity/gettransactioninfobyid': (body) => {
      const id = String(body.value ?? '').toLowerCase();
      if (incoming.has(id)) return incomingInfo(incoming.get(id)!);
      const tx = txs.get(id);
      return tx && tx.state === 'solidified' ? info(tx) : {};
    },
    'wallet/gettransactioninfobyid': (body) => {
      const id = String(body.value ?? '').toLowerCase();
      if (incoming.has(id)) return incomingInfo(incoming.get(id)!);
      const tx = txs.get(id);
      return tx && (tx.state === 'included' || tx.state === 'solidified') ? info(tx) : {};
    },

    'wallet/getnowblock': () => ({
      blockID: headHash,
      block_header: {
        raw_data: {
          number: blockNumber,
          txTrieRoot: '0'.repeat(64),
          witness_address: `41${'0'.repeat(40)}`,
          parentHash: '0'.repeat(64),
          version: 31,
          timestamp: Date.now(),
        },
        witness_signature: '',
      },
    }),
    'wallet/getnodeinfo': () => ({ configNodeInfo: { codeVersion: '4.7.7' } }),
  };

  // TronGrid's index of TRC-20 transfers: GET /v1/accounts/{address}/transactions/trc20 with
  // only_to, only_from, contract_address, min_timestamp, max_timestamp, order_by
  // (block_timestamp,asc|desc), limit (≤ 200) and fingerprint (the next page); answers
  // {data: [{transaction_id, token_info, block_timestamp, from, to, type, value}], success, meta}.
  function trc20Index(address: string, query: Record<string, any>) {
    let rows = node.transfers.filter((t) => (query.only_from === 'true' ? false : t.to === address) || (query.only_to === 'true' ? false : t.from === address));
    if (query.contract_address) rows = rows.filter((t) => t.contract === query.contract_address);
    if (query.min_timestamp) rows = rows.filter((t) => t.blockTimestamp >= Number(query.min_timestamp));
    if (query.max_timestamp) rows = rows.filter((t) => t.blockTimestamp <= Number(query.max_timestamp));
    rows = [...rows].sort((a, b) => a.blockTimestamp - b.blockTimestamp || a.blockNumber - b.blockNumber);
    if (query.order_by !== 'block_timestamp,asc') rows.reverse();
    const limit = Math.min(200, Number(query.limit ?? 20));
    const start = Number(query.fingerprint ?? 0);
    const page = rows.slice(start, start + limit);
    const more = start + limit < rows.length;
    return {
      data: page.map((t) => ({
        transaction_id: t.txId,
        token_info: { symbol: t.contract === toBase58(contractHex) ? 'USDT' : 'OTHER', address: t.contract, decimals: 6, name: 'token' },
        block_timestamp: t.blockTimestamp,
        from: t.from,
        to: t.to,
        type: 'Transfer',
        value: t.amount.toString(),
      })),
      success: true,
      meta: { at: Date.now(), page_size: page.length, ...(more ? { fingerprint: String(start + limit) } : {}) },
    };
  }

  function incomingInfo(tx: IncomingTx) {
    const common = { id: tx.txId, fee: 0, blockNumber: tx.blockNumber, blockTimeStamp: tx.blockTimeStamp };
    if (tx.reverted) return { ...common, contractResult: [''], receipt: { result: 'REVERT' }, result: 'FAILED' };
    return {
      ...common,
      contract_address: tx.logs[0]?.contractHex,
      contractResult: ['0000000000000000000000000000000000000000000000000000000000000001'],
      receipt: { energy_usage_total: 64_285, net_usage: 345, result: 'SUCCESS' },
      log: tx.logs.map((log) => ({
        address: log.contractHex.slice(2),
        topics: [TRANSFER_TOPIC, log.fromHex.slice(2).padStart(64, '0'), log.toHex.slice(2).padStart(64, '0')],
        data: log.amount.toString(16).padStart(64, '0'),
      })),
    };
  }

  function info(tx: ChainTx) {
    const common = {
      id: tx.txId,
      fee: 13_844_850,
      blockNumber: tx.blockNumber,
      blockTimeStamp: tx.blockTimeStamp,
      contract_address: contractHex,
    };
    if (tx.outcome === 'SUCCESS') {
      return {
        ...common,
        contractResult: ['0000000000000000000000000000000000000000000000000000000000000001'],
        receipt: { energy_usage_total: 64_285, net_usage: 345, energy_fee: 13_499_850, result: 'SUCCESS' },
        log: [
          {
            address: contractHex.slice(2),
            topics: [TRANSFER_TOPIC, tx.owner.slice(2).padStart(64, '0'), toHex41(tx.to).slice(2).padStart(64, '0')],
            data: tx.amount.toString(16).padStart(64, '0'),
          },
        ],
      };
    }
    return {
      ...common,
      contractResult: [''],
      receipt: { energy_usage_total: 1_234, net_usage: 345, result: 'REVERT' },
      result: 'FAILED',
      resMessage: hexUtf8('REVERT opcode executed'),
    };
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const route = url.pathname.replace(/^\/+|\/+$/g, '').toLowerCase();
        let body: Record<string, any> = Object.fromEntries(url.searchParams);
        const text = Buffer.concat(chunks).toString('utf8');
        if (text) {
          try {
            body = { ...body, ...JSON.parse(text) };
          } catch {
            res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ Error: 'fake node: body is not JSON' }));
            return;
          }
        }
        if (node.failRoutes.has(route)) {
          res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ Error: 'fake node: service unavailable' }));
          return;
        }
        const index = /^v1\/accounts\/([^/]+)\/transactions\/trc20$/i.exec(url.pathname.replace(/^\/+|\/+$/g, ''));
        if (index && req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(trc20Index(decodeURIComponent(index[1]!), body)));
          return;
        }
        const handler = routes[route];
        if (!handler) {
          node.unknownRoutes.push(`${req.method} /${route}`);
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ Error: `fake node: no route /${route}` }));
          return;
        }
        const answer = await handler(body, req, res);
        if (answer === undefined || res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      })().catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ Error: String(err) }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return node;
}

/** A fresh valid Tron mainnet address (base58check of 0x41 + 20 random bytes). */
export function randomTronAddress(): string {
  return TronWeb.address.fromHex(`41${randomBytes(20).toString('hex')}`);
}
