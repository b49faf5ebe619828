import { crc32 } from "node:zlib";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hex,
  http,
  parseEther,
  publicActions,
  walletActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { type InProcessEvmNode, startInProcessDevNode, startInProcessEvmNode } from "./inProcessNode.js";

/**
 * Anvil's newer methods on a real node: eth_getAccountInfo, eth_sendRawTransactionSync (EIP-7966, on
 * dev and plain chains, with its timeout), eth_config (EIP-7910), anvil_nodeInfo's hardfork and
 * network as Foundry parses them, the block timestamp interval and hardhat_dumpState (viem's test
 * client in hardhat mode).
 */

const KEY0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const KEY1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const ACCOUNT0 = privateKeyToAccount(KEY0);
const ACCOUNT1 = privateKeyToAccount(KEY1);
const chain = {
  id: 262144,
  name: "cometh",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [] as string[] } },
} as const;

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

async function rpcAt(url: string, method: string, params: unknown[] = []): Promise<RpcAnswer> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as RpcAnswer;
}

function clients(url: string, mode: "anvil" | "hardhat" = "anvil") {
  const transport = http(url, { retryCount: 0 });
  const wallet = createWalletClient({ account: ACCOUNT0, transport, chain, cacheTime: 0 });
  const pub = createPublicClient({ transport, chain, cacheTime: 0 });
  const test = createTestClient({ mode, transport, chain, cacheTime: 0 }).extend(publicActions).extend(walletActions);
  return { wallet, pub, test };
}

describe("on a dev chain", () => {
  let n: InProcessEvmNode;
  const rpc = (method: string, params: unknown[] = []) => rpcAt(n.evmHttpUrl, method, params);
  beforeAll(async () => {
    n = await startInProcessDevNode();
  });
  afterAll(async () => {
    await n?.close();
  });

  test("default: eth_getAccountInfo answers balance, nonce and code, at latest and at an earlier block", async () => {
    const { wallet, pub, test: t } = clients(n.evmHttpUrl);
    const who = "0x00000000000000000000000000000000000000e1";
    await t.setCode({ address: who, bytecode: "0x6001600055" });
    await t.setBalance({ address: who, value: 77n });
    const before = await pub.getBlockNumber();
    await wallet.sendTransaction({ to: who, value: 3n });
    const now = (await rpc("eth_getAccountInfo", [who, "latest"])).result;
    expect(now).toEqual({ balance: "0x50", nonce: "0x0", code: "0x6001600055" });
    const earlier = (await rpc("eth_getAccountInfo", [who, `0x${before.toString(16)}`])).result;
    expect(earlier).toEqual({ balance: "0x4d", nonce: "0x0", code: "0x6001600055" });
    const sender = (await rpc("eth_getAccountInfo", [ACCOUNT0.address])).result as { nonce: string; code: string };
    expect(sender.nonce).toBe(`0x${(await pub.getTransactionCount({ address: ACCOUNT0.address })).toString(16)}`);
    expect(sender.code).toBe("0x");
    expect((await rpc("eth_getAccountInfo", ["0x1234"])).error?.code).toBe(-32602);
    expect((await rpc("eth_getAccountInfo", [who, "0xffffff"])).error?.message).toBe("header not found");
  });

  test("default: eth_sendRawTransactionSync answers the receipt (viem's sendRawTransactionSync)", async () => {
    const { wallet, pub } = clients(n.evmHttpUrl);
    const request = await wallet.prepareTransactionRequest({
      to: "0x00000000000000000000000000000000000000e2",
      value: 5n,
    });
    const serialized = await wallet.signTransaction(request);
    const receipt = await wallet.sendRawTransactionSync({ serializedTransaction: serialized });
    expect(receipt.status).toBe("success");
    expect(receipt.blockNumber).toBe(await pub.getBlockNumber());
    const again = await pub.getTransactionReceipt({ hash: receipt.transactionHash });
    expect(again.blockHash).toBe(receipt.blockHash);
    expect(await pub.getBalance({ address: "0x00000000000000000000000000000000000000e2" })).toBe(5n);
  });

  test("error: with automine off the wait ends after timeoutMs with code 4 and the tx hash; the tx stays", async () => {
    const { wallet, pub, test: t } = clients(n.evmHttpUrl);
    await t.setAutomine(false);
    try {
      const request = await wallet.prepareTransactionRequest({
        to: "0x00000000000000000000000000000000000000e3",
        value: 1n,
      });
      const raw = await wallet.signTransaction(request);
      const started = Date.now();
      const res = await rpc("eth_sendRawTransactionSync", [raw, 300]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(res.error?.code).toBe(4);
      expect(res.error?.message).toBe(
        "The transaction was added to the transaction pool but wasn't processed in 300ms",
      );
      const hash = res.error?.data as Hex;
      expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
      await t.mine({ blocks: 1 });
      expect((await pub.getTransactionReceipt({ hash })).status).toBe("success");
      // A 0x quantity timeout is read too; a bad one is -32602 and sends nothing.
      expect((await rpc("eth_sendRawTransactionSync", [raw, "0xzz"])).error?.code).toBe(-32602);
      expect((await rpc("eth_sendRawTransactionSync", [raw, -1])).error?.code).toBe(-32602);
    } finally {
      await t.setAutomine(true);
    }
  });

  test("error: a rollback while eth_sendRawTransactionSync waits ends it with a server error that says so", async () => {
    const { wallet, test: t } = clients(n.evmHttpUrl);
    await t.setAutomine(false);
    try {
      const id = (await rpc("evm_snapshot")).result;
      const request = await wallet.prepareTransactionRequest({
        to: "0x00000000000000000000000000000000000000e4",
        value: 1n,
      });
      const raw = await wallet.signTransaction(request);
      const waiting = rpc("eth_sendRawTransactionSync", [raw, 20_000]);
      await vi.waitFor(async () => expect((await rpc("txpool_status")).result).toMatchObject({ pending: "0x1" }), {
        timeout: 10_000,
      });
      expect((await rpc("evm_revert", [id])).result).toBe(true);
      const res = await waiting;
      expect(res.error?.code).toBe(-32000);
      expect(res.error?.message).toMatch(
        /^The transaction was added to the transaction pool but no block included it: the chain was rolled back to height \d+/,
      );
    } finally {
      await t.setAutomine(true);
    }
  });

  test("default: eth_config describes the one fork (EIP-7910): precompiles, system contracts, fork id", async () => {
    const cfg = (await rpc("eth_config")).result as {
      current: Record<string, unknown> & { precompiles: Record<string, string>; forkId: string };
      next: unknown;
      last: unknown;
    };
    expect(Object.keys(cfg)).toEqual(["current", "next", "last"]);
    expect(cfg.next).toBeNull();
    expect(cfg.last).toBeNull();
    expect(Object.keys(cfg.current)).toEqual([
      "activationTime",
      "blobSchedule",
      "chainId",
      "forkId",
      "precompiles",
      "systemContracts",
    ]);
    expect(cfg.current.activationTime).toBe(0);
    expect(cfg.current.chainId).toBe((await rpc("eth_chainId")).result);
    expect(cfg.current.blobSchedule).toEqual({ baseFeeUpdateFraction: 5007716, max: 9, target: 6 });
    expect(cfg.current.precompiles.ECREC).toBe("0x0000000000000000000000000000000000000001");
    expect(cfg.current.precompiles.BLS12_MAP_FP2_TO_G2).toBe("0x0000000000000000000000000000000000000011");
    expect(cfg.current.precompiles.P256VERIFY).toBe("0x0000000000000000000000000000000000000100");
    expect(Object.keys(cfg.current.precompiles)).toEqual([...Object.keys(cfg.current.precompiles)].sort());
    expect(cfg.current.systemContracts).toEqual({
      HISTORY_STORAGE_ADDRESS: "0x0000f90827f1c53a10cb7a02335b175320002935",
    });
    const genesis = (await rpc("eth_getBlockByNumber", ["0x0", false])).result as { hash: Hex };
    const id = Buffer.alloc(4);
    id.writeUInt32BE(crc32(Buffer.from(genesis.hash.slice(2), "hex")) >>> 0);
    expect(cfg.current.forkId).toBe(`0x${id.toString("hex")}`);
  });

  test("default: anvil_nodeInfo names the hardfork and network as Anvil does (Foundry parses them)", async () => {
    const info = (await rpc("anvil_nodeInfo")).result as Record<string, unknown>;
    expect(info.hardFork).toBe("Prague");
    expect(info.network).toBe("ethereum");
    expect(info.currentBlockNumber).toBe(Number((await rpc("eth_blockNumber")).result));
  });

  test("time: anvil_setBlockTimestampInterval spaces the next blocks by it; remove answers whether one was set", async () => {
    const { test: t, pub } = clients(n.evmHttpUrl);
    expect((await rpc("anvil_setBlockTimestampInterval", [100])).result).toBeNull();
    try {
      const b0 = await pub.getBlock();
      await t.mine({ blocks: 2 });
      const b2 = await pub.getBlock();
      expect(b2.timestamp - b0.timestamp).toBe(200n);
    } finally {
      expect((await rpc("anvil_removeBlockTimestampInterval")).result).toBe(true);
    }
    expect((await rpc("anvil_removeBlockTimestampInterval")).result).toBe(false);
    expect((await rpc("anvil_setBlockTimestampInterval", ["x"])).error?.code).toBe(-32602);
  });

  test("state: viem's test client in hardhat mode dumps and loads through hardhat_dumpState / hardhat_loadState", async () => {
    const { test: t, pub } = clients(n.evmHttpUrl, "hardhat");
    const a = "0x00000000000000000000000000000000000000e4";
    await t.setBalance({ address: a, value: 42n });
    const dump = await t.dumpState();
    expect(dump.startsWith("0x1f8b")).toBe(true);
    await t.setBalance({ address: a, value: 1n });
    await t.loadState({ state: dump });
    expect(await pub.getBalance({ address: a })).toBe(42n);
  });
});

describe("on a chain that is not a dev chain", () => {
  let n: InProcessEvmNode;
  beforeAll(async () => {
    // A short http-timeout, so that the wait that ends before it is seen quickly.
    n = await startInProcessEvmNode(undefined, { "--json-rpc.http-timeout": "3s" });
  });
  afterAll(async () => {
    await n?.close();
  });

  test("default: eth_sendRawTransactionSync waits for the block consensus makes and answers its receipt", async () => {
    const transport = http(n.evmHttpUrl, { retryCount: 0 });
    const wallet = createWalletClient({ account: ACCOUNT1, transport, chain, cacheTime: 0 });
    const pub = createPublicClient({ transport, chain, cacheTime: 0 });
    const request = await wallet.prepareTransactionRequest({
      to: "0x00000000000000000000000000000000000000e5",
      value: parseEther("1"),
    });
    const raw = await wallet.signTransaction(request);
    const receipt = await wallet.sendRawTransactionSync({ serializedTransaction: raw, timeout: 20_000 });
    expect(receipt.status).toBe("success");
    expect(await pub.getBalance({ address: "0x00000000000000000000000000000000000000e5" })).toBe(parseEther("1"));
    // eth_config and eth_getAccountInfo are served on every chain.
    expect((await rpcAt(n.evmHttpUrl, "eth_config")).result).toMatchObject({ next: null, last: null });
    expect((await rpcAt(n.evmHttpUrl, "eth_getAccountInfo", [ACCOUNT1.address, "latest"])).result).toMatchObject({
      nonce: "0x1",
      code: "0x",
    });
  });

  test("error: a wait longer than http-timeout ends a second before it, with code 4 and the hash", async () => {
    const transport = http(n.evmHttpUrl, { retryCount: 0 });
    const wallet = createWalletClient({ account: ACCOUNT1, transport, chain, cacheTime: 0 });
    const pub = createPublicClient({ transport, chain, cacheTime: 0 });
    // A nonce gap: admitted, never mined.
    const nonce = (await pub.getTransactionCount({ address: ACCOUNT1.address })) + 5;
    const request = await wallet.prepareTransactionRequest({
      to: "0x00000000000000000000000000000000000000e7",
      value: 1n,
      nonce,
    });
    const raw = await wallet.signTransaction(request);
    const started = Date.now();
    const res = await rpcAt(n.evmHttpUrl, "eth_sendRawTransactionSync", [raw, 60_000]);
    const took = Date.now() - started;
    expect(res.error?.code).toBe(4);
    expect(res.error?.message).toBe("The transaction was added to the transaction pool but wasn't processed in 2s");
    expect(took).toBeGreaterThanOrEqual(1900);
    expect(took).toBeLessThan(3000);
  });

  test("error: a tx CheckTx refuses is refused as by eth_sendRawTransaction, without waiting", async () => {
    const transport = http(n.evmHttpUrl, { retryCount: 0 });
    const wallet = createWalletClient({ account: ACCOUNT1, transport, chain, cacheTime: 0 });
    const request = await wallet.prepareTransactionRequest({
      to: "0x00000000000000000000000000000000000000e6",
      value: 1n,
      nonce: 0,
    });
    const raw = await wallet.signTransaction(request);
    const res = await rpcAt(n.evmHttpUrl, "eth_sendRawTransactionSync", [raw]);
    expect(res.error?.code).toBe(-32000);
    expect(res.error?.message).toMatch(/nonce too low/);
  });
});
