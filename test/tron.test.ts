import { createHash } from 'node:crypto';
import { TronWeb, utils } from 'tronweb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChainClient } from '../src/chain/chain.js';
import { createTronClient } from '../src/chain/tron.js';
import { type FakeTronNode, randomTronAddress, startFakeTronNode, TEST_TRON_KEY, USDT_MAINNET } from './fakes/tron-node.js';

const OWNER = TronWeb.address.fromPrivateKey(TEST_TRON_KEY) as string;

let node: FakeTronNode;
let client: ChainClient;

function settings(fullNode: string, usdtContract = USDT_MAINNET) {
  return { fullNode, privateKey: TEST_TRON_KEY, usdtContract, feeLimitSun: 30_000_000 };
}

/** The `transfer(address,uint256)` call data of a signed transaction, decoded by hand. */
function transferCall(signed: any): { selector: string; to: string; amount: bigint } {
  const data: string = signed.raw_data.contract[0].parameter.value.data;
  return {
    selector: data.slice(0, 8),
    to: TronWeb.address.fromHex(`41${data.slice(8 + 24, 72)}`),
    amount: BigInt(`0x${data.slice(72)}`),
  };
}

beforeAll(async () => {
  node = await startFakeTronNode();
  client = createTronClient(settings(node.url));
});
afterEach(() => {
  node.outcome = 'SUCCESS';
});
afterAll(async () => {
  expect(node.unknownRoutes).toEqual([]);
  await node.close();
});

describe('Tron chain client against the fake full node', () => {
  it('signs a TRC-20 transfer: txID is sha256 of raw_data, owner is the hot wallet, data is transfer(to, micro-USDT); nothing is sent', async () => {
    const to = randomTronAddress();
    const before = Date.now();
    const { txId, signed, expiresAt } = await client.signTransfer(to, '12.345678');
    const tx = signed as any;
    expect(tx.txID).toBe(txId);
    expect(txId).toBe(createHash('sha256').update(Buffer.from(tx.raw_data_hex, 'hex')).digest('hex'));
    expect(tx.raw_data.contract[0].type).toBe('TriggerSmartContract');
    const value = tx.raw_data.contract[0].parameter.value;
    expect(TronWeb.address.fromHex(value.owner_address)).toBe(OWNER);
    expect(TronWeb.address.fromHex(value.contract_address)).toBe(USDT_MAINNET);
    expect(transferCall(tx)).toEqual({ selector: 'a9059cbb', to, amount: 12_345_678n });
    expect(tx.raw_data.fee_limit).toBe(30_000_000);
    expect(tx.signature).toHaveLength(1);
    // The signature is the hot wallet's over the txID.
    const signer = TronWeb.address.fromHex(utils.crypto.ecRecover(txId, tx.signature[0]));
    expect(signer).toBe(OWNER);
    expect(expiresAt.getTime()).toBe(tx.raw_data.expiration);
    expect(expiresAt.getTime()).toBeGreaterThan(before);
    expect(node.built.map((b) => b.txId)).toContain(txId);
    expect(node.broadcasts.filter((b) => b.txId === txId)).toEqual([]);
    expect(await client.status(txId)).toBe('unknown');
  });

  it('whole USDT amounts and the smallest unit encode exactly', async () => {
    const to = randomTronAddress();
    expect(transferCall((await client.signTransfer(to, '1000000')).signed).amount).toBe(1_000_000_000_000n);
    expect(transferCall((await client.signTransfer(to, '0.000001')).signed).amount).toBe(1n);
  });

  it('amounts finer than 1e-6 or not positive are refused', async () => {
    const to = randomTronAddress();
    await expect(client.signTransfer(to, '0.0000001')).rejects.toThrow(/micro-USDT/);
    await expect(client.signTransfer(to, '0')).rejects.toThrow(/micro-USDT/);
  });

  it('broadcast twice (also after a JSON round trip, as stored in the database) is one transaction on chain', async () => {
    const to = randomTronAddress();
    const { txId, signed } = await client.signTransfer(to, '5');
    await client.broadcast(signed);
    await client.broadcast(JSON.parse(JSON.stringify(signed)));
    expect(node.broadcasts.filter((b) => b.txId === txId).map((b) => b.code)).toEqual(['SUCCESS', 'DUP_TRANSACTION_ERROR']);
    node.confirm(txId);
    await client.broadcast(signed);
    expect(node.transfers.filter((t) => t.txId === txId)).toEqual([expect.objectContaining({ from: OWNER, to, amount: 5_000_000n })]);
  });

  it('status: unknown → (pooled) unknown → (in a block) pending → (solidified) confirmed', async () => {
    const { txId, signed } = await client.signTransfer(randomTronAddress(), '1.5');
    expect(await client.status(txId)).toBe('unknown');
    await client.broadcast(signed);
    expect(await client.status(txId)).toBe('unknown');
    node.include(txId);
    expect(await client.status(txId)).toBe('pending');
    node.confirm(txId);
    expect(await client.status(txId)).toBe('confirmed');
  });

  it('status: a node that cannot answer is an error, never "unknown" (unknown past expiry lets a new transaction be signed)', async () => {
    const { txId, signed } = await client.signTransfer(randomTronAddress(), '3');
    await client.broadcast(signed);
    node.include(txId);
    for (const route of ['wallet/gettransactionbyid', 'walletsolidity/gettransactioninfobyid']) {
      node.failRoutes.add(route);
      try {
        await expect(client.status(txId)).rejects.toThrow();
      } finally {
        node.failRoutes.delete(route);
      }
    }
    expect(await client.status(txId)).toBe('pending');
  });

  it('status: a reverted transfer is failed and moves no tokens', async () => {
    const { txId, signed } = await client.signTransfer(randomTronAddress(), '2');
    await client.broadcast(signed);
    node.outcome = 'REVERT';
    node.confirm(txId);
    expect(await client.status(txId)).toBe('failed');
    expect(node.transfers.filter((t) => t.txId === txId)).toEqual([]);
  });

  it('broadcast of an expired transaction is refused with the node’s reason', async () => {
    const short = await startFakeTronNode({ expirationMs: 50 });
    try {
      const shortClient = createTronClient(settings(short.url));
      const { signed } = await shortClient.signTransfer(randomTronAddress(), '1');
      await new Promise((resolve) => setTimeout(resolve, 120));
      await expect(shortClient.broadcast(signed)).rejects.toThrow(/TRANSACTION_EXPIRATION_ERROR/);
      expect(short.transfers).toEqual([]);
      expect(short.unknownRoutes).toEqual([]);
    } finally {
      await short.close();
    }
  });

  it('a transaction signed by another key is refused (the node checks the signature against the owner)', async () => {
    const { signed } = await client.signTransfer(randomTronAddress(), '1');
    const forged = JSON.parse(JSON.stringify(signed));
    const other = createTronClient({ ...settings(node.url), privateKey: '1'.repeat(64) });
    const { signed: otherSigned } = await other.signTransfer(randomTronAddress(), '1');
    forged.signature = (otherSigned as any).signature;
    await expect(client.broadcast(forged)).rejects.toThrow(/SIGERROR/);
  });

  it('a node that does not know the contract makes signing fail with its message', async () => {
    const wrong = createTronClient(settings(node.url, randomTronAddress()));
    await expect(wrong.signTransfer(randomTronAddress(), '1')).rejects.toThrow(/No contract/);
  });
});

describe('Tron chain client: incoming transfers (deposits)', () => {
  it('the head block, a transfer’s block and logs, and the index of transfers to an address, every page of it, from a time on', async () => {
    const to = randomTronAddress();
    const head = await client.headBlock();
    expect(head).toBe(node.headBlock());
    const first = node.addIncomingTransfer({ to, amount: 1_500_000n });
    expect(await client.headBlock()).toBe(head + 1);
    expect(await client.tokenTransfers(first)).toEqual({
      blockNumber: head + 1,
      blockTime: expect.any(Date),
      transfers: [{ logIndex: 0, contract: USDT_MAINNET, from: expect.stringMatching(/^T/), to, units: 1_500_000n }],
    });
    expect(await client.tokenTransfers('ab'.repeat(32))).toBeUndefined();
    const reverted = node.addIncomingTransfer({ to, amount: 1n, reverted: true });
    expect((await client.tokenTransfers(reverted))?.transfers).toEqual([]);

    // 450 more: three pages of the index (200 a page); another token's are not listed.
    const more = Array.from({ length: 450 }, (_, i) => node.addIncomingTransfer({ to, amount: BigInt(i + 1) }));
    node.addIncomingTransfer({ to, amount: 5n, contract: randomTronAddress() });
    const listed = await client.incomingTransfers(to, new Date(0));
    expect(listed.map((hint) => hint.txId)).toEqual([first, ...more]);
    // From a time on: only what is at or after it.
    const last = node.transfers.find((t) => t.txId === more.at(-1))!;
    const since = await client.incomingTransfers(to, new Date(last.blockTimestamp));
    expect(since.map((hint) => hint.txId)).toContain(more.at(-1));
    expect(await client.incomingTransfers(to, new Date(Date.now() + 60_000))).toEqual([]);
  });
});
