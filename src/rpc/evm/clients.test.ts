import { isCallException, JsonRpcProvider, Transaction, Wallet, WebSocketProvider } from "ethers";
import { BaseError, createPublicClient, createWalletClient, defineChain, http, parseAbi, webSocket } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Web3 } from "web3";
import { toData } from "./encode/hex.js";
import {
  ECHO,
  type EvmTestChain,
  type EvmTestRpc,
  LOGGER,
  REVERTER,
  startEvmTestChain,
  TRANSFER_TOPIC,
} from "./testing/realChain.js";
import { GWEI } from "./testing/signing.js";

/** Real clients (ethers v6, viem, web3.js v4) decode what the server answers on a real dev chain in process. */

const viemChain = defineChain({
  id: 262144,
  name: "cometh",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: ["http://127.0.0.1"] } },
});

let chain: EvmTestChain;
let f: EvmTestRpc;
beforeAll(async () => {
  chain = await startEvmTestChain();
  f = await chain.startRpc();
});
afterAll(() => chain.close());

/** Mines a block every few milliseconds while `fn` runs (transactions get receipts). */
async function withMiner<T>(fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => void chain.mine(), 50);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

describe("ethers v6", () => {
  let provider: JsonRpcProvider;
  beforeAll(() => {
    provider = new JsonRpcProvider(f.url, undefined, { staticNetwork: true, pollingInterval: 50 });
  });
  afterAll(() => {
    provider.destroy();
  });

  test("default: blocks, transactions, receipts and logs decode", async () => {
    expect((await provider.getNetwork()).chainId).toBe(262144n);
    expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(3);
    const block = await provider.getBlock(1, true);
    expect(block?.hash).toBe(toData(chain.block(1).hash));
    expect(block?.prefetchedTransactions.map((t) => t.type)).toEqual([0, 1, 2]);
    expect(block?.baseFeePerGas).toBe(chain.block(1).baseFeePerGas);
    const [legacy, accessList, dynamic] = block?.prefetchedTransactions ?? [];
    expect(legacy?.chainId).toBe(262144n);
    expect(accessList?.accessList?.[0]?.address.toLowerCase()).toBe(toData(ECHO));
    expect(dynamic?.maxPriorityFeePerGas).toBe(GWEI);
    const tx = await provider.getTransaction(dynamic?.hash as string);
    expect(tx?.from).toBe(dynamic?.from);
    // Re-serializing the decoded fields with their signature gives the same hash: every field is exact.
    for (const t of block?.prefetchedTransactions ?? []) expect(Transaction.from(t).hash).toBe(t.hash);
    const receipt = await provider.getTransactionReceipt(dynamic?.hash as string);
    expect(receipt?.status).toBe(1);
    expect(receipt?.logs[0]?.topics[0]).toBe(toData(TRANSFER_TOPIC));
    const logs = await provider.getLogs({ fromBlock: 0, address: toData(LOGGER) });
    expect(logs.length).toBeGreaterThanOrEqual(2);
    const fee = await provider.getFeeData();
    expect(fee.maxFeePerGas).toBeGreaterThan(0n);
  });

  test("default: revert reasons decode", async () => {
    try {
      await provider.call({ to: toData(REVERTER), data: "0x" });
      expect.unreachable();
    } catch (err) {
      expect(isCallException(err)).toBe(true);
      if (isCallException(err)) expect(err.reason).toBe("boom");
    }
  });

  test("default: a wallet sends and waits for its receipt", async () => {
    const key = chain.keys[0];
    if (key === undefined) throw new TypeError("no key");
    const wallet = new Wallet(toData(key.privateKey), provider);
    const receipt = await withMiner(async () => {
      const sent = await wallet.sendTransaction({ to: toData(ECHO), value: 1n, data: "0x01" });
      return sent.wait();
    });
    expect(receipt?.status).toBe(1);
    expect(receipt?.from).toBe(wallet.address);
  });

  test("default: WebSocketProvider block events", async () => {
    const ws = new WebSocketProvider(f.wsUrl, undefined, { staticNetwork: true });
    try {
      const seen = new Promise<number>((resolve) => {
        void ws.on("block", (n: number) => resolve(n));
      });
      await new Promise((r) => setTimeout(r, 100));
      const mined = await chain.mine();
      expect(await seen).toBe(mined.number);
      expect((await ws.getBlock(mined.number))?.hash).toBe(toData(mined.hash));
    } finally {
      await ws.destroy();
    }
  });
});

describe("viem", () => {
  test("default: publicClient decodes blocks, transactions, receipts and logs", async () => {
    const client = createPublicClient({ chain: viemChain, transport: http(f.url) });
    expect(await client.getChainId()).toBe(262144);
    const block = await client.getBlock({ blockNumber: 1n, includeTransactions: true });
    expect(block.hash).toBe(toData(chain.block(1).hash));
    expect(block.transactions.map((t) => t.type)).toEqual(["legacy", "eip2930", "eip1559"]);
    expect(block.baseFeePerGas).toBe(chain.block(1).baseFeePerGas);
    const latest = await client.getBlock();
    expect(latest.number).toBeGreaterThanOrEqual(3n);
    const hash = block.transactions[2]?.hash as `0x${string}`;
    const tx = await client.getTransaction({ hash });
    expect(tx.blockNumber).toBe(1n);
    const receipt = await client.getTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    expect(receipt.logs).toHaveLength(1);
    const logs = await client.getLogs({
      address: toData(LOGGER) as `0x${string}`,
      event: parseAbi(["event Transfer(address indexed from, address indexed to, uint256 value)"])[0],
      fromBlock: 0n,
    });
    expect(logs.length).toBeGreaterThanOrEqual(2);
    expect(logs[0]?.args.value).toBe(5n);
    const fees = await client.estimateFeesPerGas();
    expect(fees.maxFeePerGas).toBeGreaterThan(0n);
    const history = await client.getFeeHistory({ blockCount: 2, rewardPercentiles: [50] });
    expect(history.baseFeePerGas).toHaveLength(3);
  });

  test("default: reverts decode to the reason", async () => {
    const client = createPublicClient({ chain: viemChain, transport: http(f.url) });
    try {
      await client.call({ to: toData(REVERTER) as `0x${string}` });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(BaseError);
      expect((err as BaseError).shortMessage).toMatch(/boom/);
    }
  });

  test("default: walletClient sends; waitForTransactionReceipt polls", async () => {
    const key = chain.keys[1];
    if (key === undefined) throw new TypeError("no key");
    const account = privateKeyToAccount(toData(key.privateKey) as `0x${string}`);
    const wallet = createWalletClient({ account, chain: viemChain, transport: http(f.url) });
    const client = createPublicClient({ chain: viemChain, transport: http(f.url), pollingInterval: 50 });
    const receipt = await withMiner(async () => {
      const hash = await wallet.sendTransaction({ to: toData(ECHO) as `0x${string}`, value: 2n });
      return client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    });
    expect(receipt.status).toBe("success");
  });

  test("default: webSocket transport watches blocks", async () => {
    const client = createPublicClient({ chain: viemChain, transport: webSocket(f.wsUrl) });
    const got = new Promise<bigint>((resolve) => {
      const stop = client.watchBlocks({
        onBlock: (b) => {
          stop();
          resolve(b.number);
        },
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    const mined = await chain.mine();
    expect(await got).toBe(BigInt(mined.number));
    await (await client.transport.getRpcClient()).close();
  });
});

describe("web3.js v4", () => {
  test("default: blocks and receipts decode", async () => {
    const web3 = new Web3(f.url);
    expect(await web3.eth.getChainId()).toBe(262144n);
    const block = await web3.eth.getBlock(1, true);
    expect(block.hash).toBe(toData(chain.block(1).hash));
    const receipt = await web3.eth.getTransactionReceipt(toData(chain.block(1).transactions[2]?.hash as Uint8Array));
    expect(receipt.status).toBe(1n);
  });
});
