import { readFileSync } from "node:fs";
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  parseAbi,
  parseEther,
  parseTransaction,
  publicActions,
  recoverTransactionAddress,
  type TransactionSerializedEIP1559,
  verifyTypedData,
  walletActions,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InProcessEvmNode, startInProcessDevNode, startInProcessEvmNode } from "./inProcessNode.js";

/**
 * `cometh dev` driven by viem's test client (mode anvil and hardhat): mining, automine, time,
 * snapshots, cheats, impersonation, state dump/load and reset, each checked through the Ethereum
 * JSON-RPC and, where it matters, the node RPC (same chain, same times).
 */

const KEY0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ACCOUNT0 = privateKeyToAccount(KEY0);
const ERC20 = JSON.parse(readFileSync(new URL("../data/erc20.json", import.meta.url), "utf8")) as {
  abi: string[];
  bytecode: Hex;
};
const chain = {
  id: 262144,
  name: "cometh-dev",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [] as string[] } },
} as const;

let n: InProcessEvmNode;

function clients(mode: "anvil" | "hardhat") {
  const transport = http(n.evmHttpUrl, { retryCount: 0 });
  const test = createTestClient({ mode, transport, chain, cacheTime: 0 }).extend(publicActions).extend(walletActions);
  const wallet = createWalletClient({ account: ACCOUNT0, transport, chain, cacheTime: 0 });
  const pub = createPublicClient({ transport, chain, cacheTime: 0 });
  return { test, wallet, pub };
}

async function rpc(
  method: string,
  params: unknown[] = [],
): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  const res = await fetch(n.evmHttpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}

async function cometBlock(height: number): Promise<{ time: string; hash: string }> {
  const r = (await (await fetch(`${n.rpcUrl}/block?height=${height}`)).json()) as {
    result: { block_id: { hash: string }; block: { header: { time: string } } };
  };
  return { time: r.result.block.header.time, hash: r.result.block_id.hash };
}

beforeAll(async () => {
  n = await startInProcessDevNode();
});

afterAll(async () => {
  await n?.close();
});

describe("cometh dev with viem's test client", () => {
  test("default: web3_clientVersion is Anvil's form, which hardhat-network-helpers accept", async () => {
    const v = (await rpc("web3_clientVersion")).result as string;
    expect(v.toLowerCase().startsWith("anvil")).toBe(true);
    expect(v).toContain("cometh");
    // A fresh dev chain is at its genesis, as Anvil and Hardhat start, and makes no block by itself.
    expect((await rpc("eth_blockNumber")).result).toBe("0x0");
  });

  test("automine: a send answers after its block, the receipt exists at once, no empty blocks follow", async () => {
    const { wallet, pub } = clients("anvil");
    const before = await pub.getBlockNumber();
    const hash = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000aa", value: 1n });
    const receipt = await pub.getTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    expect(receipt.blockNumber).toBe(before + 1n);
    // An idle dev chain makes no block (no proof block, no empty blocks).
    await new Promise((r) => setTimeout(r, 300));
    expect(await pub.getBlockNumber()).toBe(before + 1n);
  });

  test("mine: hardhat_mine(n) commits exactly n real blocks; the node RPC shows the same chain and times", async () => {
    const { test: t, pub } = clients("hardhat");
    const before = await pub.getBlockNumber();
    await t.mine({ blocks: 25 });
    const after = await pub.getBlockNumber();
    expect(after).toBe(before + 25n);
    const b = await pub.getBlock({ blockNumber: after });
    const c = await cometBlock(Number(after));
    expect(`0x${c.hash.toLowerCase()}`).toBe(b.hash);
    expect(BigInt(Math.floor(Date.parse(c.time) / 1000))).toBe(b.timestamp);
    // Block times stay strictly increasing, a second apart at least.
    const prev = await pub.getBlock({ blockNumber: after - 1n });
    expect(b.timestamp).toBeGreaterThan(prev.timestamp);
  });

  test("mine: anvil_mine with an interval spaces the blocks by it", async () => {
    const { test: t, pub } = clients("anvil");
    const start = await pub.getBlock();
    await t.mine({ blocks: 3, interval: 100 });
    const end = await pub.getBlock();
    expect(end.number).toBe(start.number + 3n);
    expect(end.timestamp - start.timestamp).toBeGreaterThanOrEqual(300n);
  });

  test("time: after a burst of blocks ahead of the clock, increaseTime still adds its seconds", async () => {
    const { test: t, pub } = clients("hardhat");
    await t.mine({ blocks: 50 });
    for (let i = 0; i < 3; i++) {
      const before = await pub.getBlock();
      await t.increaseTime({ seconds: 60 });
      await t.mine({ blocks: 1 });
      const after = await pub.getBlock();
      expect(after.timestamp - before.timestamp).toBeGreaterThanOrEqual(60n);
      expect(after.timestamp - before.timestamp).toBeLessThan(65n);
    }
  });

  test("time: increaseTime and setNextBlockTimestamp move the next block's time; the past is refused", async () => {
    const { test: t, pub } = clients("anvil");
    const start = await pub.getBlock();
    await t.increaseTime({ seconds: 3600 });
    await t.mine({ blocks: 1 });
    const b1 = await pub.getBlock();
    expect(b1.timestamp - start.timestamp).toBeGreaterThanOrEqual(3600n);
    const target = b1.timestamp + 10_000n;
    await t.setNextBlockTimestamp({ timestamp: target });
    await t.mine({ blocks: 1 });
    const b2 = await pub.getBlock();
    expect(b2.timestamp).toBe(target);
    expect(BigInt(Math.floor(Date.parse((await cometBlock(Number(b2.number))).time) / 1000))).toBe(target);
    const past = await rpc("evm_setNextBlockTimestamp", [Number(b2.timestamp - 100n)]);
    expect(past.error?.code).toBe(-32602);
    expect(past.error?.message).toMatch(/lower than or equal to the latest block/);
  });

  test("automine off: sends wait until evm_mine, which mines them in one block", async () => {
    const { test: t, wallet, pub } = clients("anvil");
    await t.setAutomine(false);
    try {
      expect(await t.getAutomine()).toBe(false);
      const before = await pub.getBlockNumber();
      const h1 = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000bb", value: 1n });
      const h2 = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000bb", value: 2n });
      expect(await pub.getBlockNumber()).toBe(before);
      // A cheat while automine is off commits a block of its own, without the waiting txs.
      await t.setBalance({ address: "0x00000000000000000000000000000000000000cc", value: 5n });
      expect(await pub.getBalance({ address: "0x00000000000000000000000000000000000000cc" })).toBe(5n);
      expect((await rpc("eth_getTransactionReceipt", [h1])).result).toBeNull();
      await t.mine({ blocks: 1 });
      const r1 = await pub.getTransactionReceipt({ hash: h1 });
      const r2 = await pub.getTransactionReceipt({ hash: h2 });
      expect(r1.blockNumber).toBe(r2.blockNumber);
    } finally {
      await t.setAutomine(true);
    }
  });

  test("mining: interval mining makes blocks on its own; dropTransaction removes a waiting tx", async () => {
    const { test: t, wallet, pub } = clients("anvil");
    const start = await pub.getBlockNumber();
    await t.setIntervalMining({ interval: 1 });
    try {
      expect((await rpc("anvil_getIntervalMining")).result).toBe(1);
      const deadline = Date.now() + 10_000;
      while ((await pub.getBlockNumber()) < start + 2n && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await pub.getBlockNumber()).toBeGreaterThanOrEqual(start + 2n);
    } finally {
      await t.setIntervalMining({ interval: 0 });
    }
    await t.setAutomine(false);
    try {
      const hash = await wallet.sendTransaction({ to: "0x00000000000000000000000000000000000000b9", value: 3n });
      expect((await rpc("anvil_dropTransaction", [hash])).result).toBe(hash);
      expect((await rpc("anvil_dropTransaction", [hash])).result).toBeNull();
      await t.mine({ blocks: 1 });
      expect((await rpc("eth_getTransactionReceipt", [hash])).result).toBeNull();
      expect(await pub.getBalance({ address: "0x00000000000000000000000000000000000000b9" })).toBe(0n);
    } finally {
      await t.setAutomine(true);
    }
  });

  test("snapshot/revert: state, blocks, receipts and height go back; ids are used up (Hardhat's semantics)", async () => {
    const { test: t, wallet, pub } = clients("hardhat");
    const who = "0x00000000000000000000000000000000000000dd";
    const id = await t.snapshot();
    const height = await pub.getBlockNumber();
    const hash = await wallet.sendTransaction({ to: who, value: 7n });
    await t.mine({ blocks: 3 });
    expect(await pub.getBalance({ address: who })).toBe(7n);
    const later = await t.snapshot();
    expect(await t.revert({ id })).toBeUndefined();
    expect(await pub.getBlockNumber()).toBe(height);
    expect(await pub.getBalance({ address: who })).toBe(0n);
    expect((await rpc("eth_getTransactionReceipt", [hash])).result).toBeNull();
    expect((await rpc("eth_getBlockByNumber", [`0x${(height + 1n).toString(16)}`, false])).result).toBeNull();
    // The node RPC agrees: the reverted heights are gone.
    const status = (await (await fetch(`${n.rpcUrl}/status`)).json()) as {
      result: { sync_info: { latest_block_height: string } };
    };
    expect(BigInt(status.result.sync_info.latest_block_height)).toBe(height);
    // Used up: the reverted-to id and the later one.
    expect((await rpc("evm_revert", [id])).result).toBe(false);
    expect((await rpc("evm_revert", [later])).result).toBe(false);
    expect((await rpc("evm_revert", ["0x999"])).result).toBe(false);
    // Heights are reused, and the same signed tx (the same bytes, the same hash) can be sent again, twice
    // over (the second time its decode is the one kept from its first block): each time the receipt,
    // the tx lookup and the node RPC's tx index name the new block, and nothing of the reverted one.
    for (let round = 0; round < 2; round++) {
      const id2 = await t.snapshot();
      const again = await wallet.sendTransaction({ to: who, value: 7n });
      expect(again).toBe(hash);
      const r = await pub.getTransactionReceipt({ hash: again });
      expect(r.blockNumber).toBe(height + 1n);
      expect(r.status).toBe("success");
      const block = await pub.getBlock({ blockNumber: height + 1n });
      expect(r.blockHash).toBe(block.hash);
      expect((await pub.getTransaction({ hash: again })).blockHash).toBe(block.hash);
      const indexed = (await (await fetch(`${n.rpcUrl}/tx_search?query="tx.height=${height + 1n}"`)).json()) as {
        result: { total_count: string; txs: { height: string }[] };
      };
      expect(indexed.result.total_count).toBe("1");
      expect(await pub.getBalance({ address: who })).toBe(7n);
      expect(await t.revert({ id: id2 })).toBeUndefined();
      expect((await rpc("eth_getTransactionReceipt", [hash])).result).toBeNull();
    }
  });

  test("behavior: anvil_rollback removes the last blocks (1 by default); Anvil's aliases answer", async () => {
    const start = Number((await rpc("eth_blockNumber")).result);
    await rpc("anvil_mine", ["0x4"]);
    const removed = (await rpc("eth_getBlockByNumber", [`0x${(start + 4).toString(16)}`, false])).result as {
      hash: string;
    };
    const above = (await rpc("evm_snapshot")).result;
    expect((await rpc("anvil_rollback", [2])).result).toBeNull();
    expect(Number((await rpc("eth_blockNumber")).result)).toBe(start + 2);
    expect((await rpc("eth_getBlockByHash", [removed.hash, false])).result).toBeNull();
    expect((await rpc("anvil_rollback", [])).result).toBeNull();
    expect(Number((await rpc("eth_blockNumber")).result)).toBe(start + 1);
    // A snapshot taken above the new head is used up: its blocks are gone.
    expect((await rpc("evm_revert", [above])).result).toBe(false);
    const tooDeep = await rpc("anvil_rollback", [start + 2]);
    expect(tooDeep.error?.code).toBe(-32602);
    expect(tooDeep.error?.message).toBe(
      `Rollback depth must not exceed current chain height: current height ${start + 1}, depth ${start + 2}`,
    );
    expect(Number((await rpc("eth_blockNumber")).result)).toBe(start + 1);
    // Anvil's aliases of methods served under other names.
    const who = "0x00000000000000000000000000000000000000de";
    expect((await rpc("evm_setAccountNonce", [who, "0x5"])).error).toBeUndefined();
    expect((await rpc("eth_getTransactionCount", [who, "latest"])).result).toBe("0x5");
    expect((await rpc("anvil_setBlockGasLimit", ["0x1c9c380"])).result).toBe(true);
    expect((await rpc("hardhat_dropAllTransactions")).error).toBeUndefined();
    expect((await rpc("hardhat_autoImpersonateAccount", [false])).error).toBeUndefined();
    // A chain that is no fork: anvil_setRpcUrl changes nothing, as Anvil.
    expect((await rpc("anvil_setRpcUrl", ["http://127.0.0.1:9"])).result).toBeNull();
    expect((await rpc("anvil_nodeInfo")).result).toMatchObject({ forkConfig: {} });
  });

  test("subscriptions: newHeads delivers the reused heights again after a revert", async () => {
    const { default: WebSocket } = await import("ws");
    const ws = new WebSocket(n.evmWsUrl);
    await new Promise((r) => ws.once("open", r));
    const heads: { number: string; hash: string }[] = [];
    ws.on("message", (m) => {
      const msg = JSON.parse(String(m)) as { method?: string; params?: { result: { number: string; hash: string } } };
      if (msg.method === "eth_subscription" && msg.params !== undefined) heads.push(msg.params.result);
    });
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    const waitHeads = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (heads.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    try {
      await new Promise((r) => setTimeout(r, 100));
      const id = (await rpc("evm_snapshot")).result;
      await rpc("anvil_mine", ["0x2"]);
      await waitHeads(2);
      const first = heads.slice(0, 2);
      expect(await rpc("evm_revert", [id])).toEqual(expect.objectContaining({ result: true }));
      await rpc("anvil_mine", ["0x1"]);
      await waitHeads(3);
      // The reused height comes again (an identical empty block at the same second may hash the same).
      expect(heads[2]?.number).toBe(first[0]?.number);
    } finally {
      ws.close();
    }
  });

  test("cheats: setBalance, setCode, setNonce, setStorageAt are visible at latest right away", async () => {
    const { test: t, pub } = clients("anvil");
    const a = "0x00000000000000000000000000000000000000ee";
    await t.setBalance({ address: a, value: parseEther("3") });
    expect(await pub.getBalance({ address: a })).toBe(parseEther("3"));
    await t.setNonce({ address: a, nonce: 42 });
    expect(await pub.getTransactionCount({ address: a })).toBe(42);
    // SLOAD(0) RETURN 32 bytes
    const code = "0x60005460005260206000f3";
    await t.setCode({ address: a, bytecode: code });
    expect(await pub.getCode({ address: a })).toBe(code);
    await t.setStorageAt({ address: a, index: 0, value: `0x${"2a".padStart(64, "0")}` });
    expect(await pub.getStorageAt({ address: a, slot: "0x0" })).toBe(`0x${"2a".padStart(64, "0")}`);
    expect(await pub.call({ to: a })).toEqual({ data: `0x${"2a".padStart(64, "0")}` });
    const bad = await rpc("anvil_setBalance", ["0x1234", "0x1"]);
    expect(bad.error?.code).toBe(-32602);
  });

  test("cheats: setNextBlockBaseFeePerGas below the fee market's is what CheckTx, eth_feeHistory and the next block use", async () => {
    const { test: t, wallet, pub } = clients("anvil");
    const next = 7n;
    await t.setNextBlockBaseFeePerGas({ baseFeePerGas: next });
    const history = (await rpc("eth_feeHistory", ["0x1", "latest", []])).result as { baseFeePerGas: string[] };
    expect(BigInt(history.baseFeePerGas[1] ?? "0x0")).toBe(next);
    // A fee cap at the set base fee (far below the fee market's) is accepted and mined at it.
    const hash = await wallet.sendTransaction({
      to: "0x00000000000000000000000000000000000000ef",
      value: 1n,
      maxFeePerGas: next,
      maxPriorityFeePerGas: 0n,
    });
    const receipt = await pub.getTransactionReceipt({ hash });
    const block = await pub.getBlock({ blockNumber: receipt.blockNumber });
    expect(block.baseFeePerGas).toBe(next);
    expect(receipt.effectiveGasPrice).toBe(next);
  });
  test("impersonation: a contract that holds tokens sends them without a key; stopping ends it", async () => {
    const { test: t, wallet, pub } = clients("anvil");
    const deploy = await wallet.deployContract({
      abi: parseAbi(ERC20.abi),
      bytecode: ERC20.bytecode,
      args: erc20Args(),
    });
    const token = (await pub.getTransactionReceipt({ hash: deploy })).contractAddress as Hex;
    const abi = parseAbi(ERC20.abi);
    // The holder is a contract address nobody has a key for.
    const holder = "0x000000000000000000000000000000000000c0de";
    await wallet.writeContract({ address: token, abi, functionName: "transfer", args: [holder, 1000n] });
    await t.setCode({ address: holder, bytecode: "0x00" });
    await t.setBalance({ address: holder, value: parseEther("1") });
    await t.impersonateAccount({ address: holder });
    const hash = await t.sendTransaction({
      account: holder,
      to: token,
      data: encodeFunctionData({
        abi,
        functionName: "transfer",
        args: ["0x00000000000000000000000000000000000000f1", 250n],
      }),
      chain,
    });
    const r = await pub.getTransactionReceipt({ hash });
    expect(r.status).toBe("success");
    expect(r.from).toBe(holder);
    expect((await pub.getTransaction({ hash })).from).toBe(holder);
    const left = await pub.readContract({ address: token, abi, functionName: "balanceOf", args: [holder] });
    expect(left).toBe(750n);
    await t.stopImpersonatingAccount({ address: holder });
    const refused = await rpc("eth_sendTransaction", [{ from: holder, to: token, data: "0x" }]);
    expect(refused.error?.message).toMatch(/unknown account|keyring/);
  });

  test("impersonation: eth_sendUnsignedTransaction sends from any address without impersonating it", async () => {
    const { test: t, pub } = clients("anvil");
    const from = "0x00000000000000000000000000000000000000f7";
    await t.setBalance({ address: from, value: parseEther("1") });
    const hash = await t.sendUnsignedTransaction({ from, to: "0x00000000000000000000000000000000000000f8", value: 5n });
    const r = await pub.getTransactionReceipt({ hash });
    expect(r.status).toBe("success");
    expect(r.from).toBe(from);
    expect(await pub.getBalance({ address: "0x00000000000000000000000000000000000000f8" })).toBe(5n);
  });

  test("state: dumpState / loadState round trip through Anvil's format", async () => {
    const { test: t, pub } = clients("anvil");
    const a = "0x00000000000000000000000000000000000000a1";
    await t.setBalance({ address: a, value: 123n });
    await t.setStorageAt({ address: a, index: 5, value: `0x${"07".padStart(64, "0")}` });
    const dump = await t.dumpState();
    expect(dump.startsWith("0x1f8b")).toBe(true);
    await t.setBalance({ address: a, value: 999n });
    await t.setStorageAt({ address: a, index: 5, value: `0x${"00".padStart(64, "0")}` });
    await t.loadState({ state: dump });
    expect(await pub.getBalance({ address: a })).toBe(123n);
    expect(await pub.getStorageAt({ address: a, slot: "0x5" })).toBe(`0x${"07".padStart(64, "0")}`);
    const bad = await rpc("anvil_loadState", ["0x1234"]);
    expect(bad.error?.code).toBe(-32602);
  });

  test("reset: back to genesis, heights start over, dev balances are back", async () => {
    const { test: t, pub } = clients("hardhat");
    const a = "0x00000000000000000000000000000000000000a2";
    await t.setBalance({ address: a, value: 5n });
    await t.reset();
    expect(await pub.getBlockNumber()).toBe(0n);
    await new Promise((r) => setTimeout(r, 300));
    expect(await pub.getBlockNumber()).toBe(0n);
    expect(await pub.getBalance({ address: a })).toBe(0n);
    expect(await pub.getBalance({ address: ACCOUNT0.address })).toBe(parseEther("10000"));
    const { wallet } = clients("anvil");
    const hash = await wallet.sendTransaction({ to: a, value: 1n });
    expect((await pub.getTransactionReceipt({ hash })).status).toBe("success");
    expect(await pub.getBalance({ address: a })).toBe(1n);
  });
});

/** The constructor arguments of test/data/erc20.json's token, read from its ABI. */
function erc20Args(): unknown[] {
  const ctor = ERC20.abi.find((s) => s.startsWith("constructor"));
  if (ctor === undefined || ctor === "constructor()") return [];
  return [parseEther("1000000")];
}

describe("signing with the dev keys through JSON-RPC accounts", () => {
  const typed = {
    domain: {
      name: "Permit Token",
      version: "1",
      chainId: 262144,
      verifyingContract: "0x00000000000000000000000000000000000000cc",
    },
    types: {
      Permit: [
        { name: "owner", type: "address" },
        { name: "spender", type: "address" },
        { name: "value", type: "uint256" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Permit",
    message: {
      owner: ACCOUNT0.address,
      spender: "0x00000000000000000000000000000000000000dd",
      value: 10n ** 18n,
      nonce: 0n,
      deadline: 2n ** 64n,
    },
  } as const;

  test("behavior: viem's wallet client with the node's account signs typed data (eth_signTypedData_v4) and transactions (eth_signTransaction)", async () => {
    const transport = http(n.evmHttpUrl, { retryCount: 0 });
    const wallet = createWalletClient({ account: ACCOUNT0.address, transport, chain, cacheTime: 0 }).extend(
      publicActions,
    );
    // eth_requestAccounts (viem's requestAddresses) lists the node's accounts, as eth_accounts.
    expect((await wallet.requestAddresses())[0]).toBe(ACCOUNT0.address);
    const sig = await wallet.signTypedData(typed);
    expect(await verifyTypedData({ ...typed, address: ACCOUNT0.address, signature: sig })).toBe(true);
    // The same signature the key gives locally: the node hashed the typed data as EIP-712 says.
    expect(sig).toBe(await ACCOUNT0.signTypedData(typed));

    const nonce = await wallet.getTransactionCount({ address: ACCOUNT0.address });
    const head = await wallet.getBlockNumber();
    const raw = await wallet.signTransaction({ to: "0x00000000000000000000000000000000000000dd", value: 5n });
    // Anvil's answer, the signed tx's bytes, which viem and ethers read; geth (and the execution-apis
    // schema) answer {raw, tx} instead (docs/compatibility.md).
    expect(raw).toMatch(/^0x02[0-9a-f]+$/);
    const tx = parseTransaction(raw);
    expect(await recoverTransactionAddress({ serializedTransaction: raw as TransactionSerializedEIP1559 })).toBe(
      ACCOUNT0.address,
    );
    expect(tx.nonce).toBe(nonce);
    expect(tx.chainId).toBe(262144);
    expect(tx.gas).toBe(21000n);
    // Signed, not sent: no block, no nonce used, until it is sent.
    expect(await wallet.getBlockNumber()).toBe(head);
    expect(await wallet.getTransactionCount({ address: ACCOUNT0.address })).toBe(nonce);
    const hash = await wallet.sendRawTransaction({ serializedTransaction: raw });
    expect((await wallet.getTransactionReceipt({ hash })).status).toBe("success");
  });

  test("behavior: ethers' JsonRpcSigner signs typed data given as a JSON string", async () => {
    const { JsonRpcProvider, verifyTypedData: ethersVerify } = await import("ethers");
    const provider = new JsonRpcProvider(n.evmHttpUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
    try {
      const signer = await provider.getSigner(ACCOUNT0.address);
      const { Permit } = typed.types;
      const sig = await signer.signTypedData(typed.domain, { Permit: [...Permit] }, typed.message);
      expect(ethersVerify(typed.domain, { Permit: [...Permit] }, typed.message, sig)).toBe(ACCOUNT0.address);
    } finally {
      provider.destroy();
    }
  });

  test("errors: bad typed data answers -32602; an account the node does not hold is refused", async () => {
    const bad = await rpc("eth_signTypedData_v4", [ACCOUNT0.address, "{not json"]);
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toMatch(/not JSON/);
    const noDomain = await rpc("eth_signTypedData_v4", [
      ACCOUNT0.address,
      JSON.stringify({ types: {}, primaryType: "X" }),
    ]);
    expect(noDomain.error?.code).toBe(-32602);
    const stranger = await rpc("eth_signTransaction", [
      { from: "0x00000000000000000000000000000000000000ee", to: ACCOUNT0.address },
    ]);
    expect(stranger.error?.message).toMatch(/not in the node's dev keyring/);
  });
});

describe("dev methods on a chain that is not a dev chain", () => {
  let plain: InProcessEvmNode;
  beforeAll(async () => {
    plain = await startInProcessEvmNode();
  });
  afterAll(async () => {
    await plain?.close();
  });

  test("errors: every dev method answers -32601 saying it needs cometh dev", async () => {
    for (const method of [
      "evm_snapshot",
      "hardhat_mine",
      "anvil_setBalance",
      "evm_increaseTime",
      "eth_signTypedData_v4",
      "eth_signTransaction",
      "eth_requestAccounts",
    ]) {
      const res = await fetch(plain.evmHttpUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }),
      });
      const body = (await res.json()) as { error?: { code: number; message: string } };
      expect(body.error?.code).toBe(-32601);
      expect(body.error?.message).toMatch(/cometh dev/);
    }
    const v = (await (
      await fetch(plain.evmHttpUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "web3_clientVersion", params: [] }),
      })
    ).json()) as { result: string };
    expect(v.result.startsWith("cometh/")).toBe(true);
  });
});

describe("a dev chain on memory stores (db_backend memdb), its index written behind", () => {
  let m: InProcessEvmNode;
  beforeAll(async () => {
    m = await startInProcessDevNode({ "--db_backend": "memdb" });
  });
  afterAll(async () => {
    await m?.close();
  });

  test("behavior: tx, tx_search and block_search see each block at once, and nothing of a reverted one", async () => {
    const call = async (method: string, params: unknown[] = []) => {
      const res = await fetch(m.evmHttpUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await res.json()) as { result: unknown }).result;
    };
    const comet = async (path: string) =>
      (await (await fetch(`${m.rpcUrl}/${path}`)).json()) as {
        result?: { total_count: string; txs?: { height: string }[] };
      };
    const [from] = (await call("eth_accounts")) as string[];
    const send = async (to: string) => (await call("eth_sendTransaction", [{ from, to, value: "0x1" }])) as string;
    await send("0x00000000000000000000000000000000000000e1");
    const keptHeight = Number(await call("eth_blockNumber"));
    const id = await call("evm_snapshot");
    for (let i = 0; i < 3; i++) await send(`0x00000000000000000000000000000000000000f${i}`);
    // Each block is found as soon as its send is answered.
    const last = await comet(`tx_search?query="tx.height=${keptHeight + 3}"`);
    expect(last.result?.total_count).toBe("1");
    const blocks = await comet(`block_search?query="block.height>${keptHeight}"`);
    expect(blocks.result?.total_count).toBe("3");
    expect(await call("evm_revert", [id])).toBe(true);
    const after = await comet(`tx_search?query="tx.height>${keptHeight}"`);
    expect(after.result?.total_count).toBe("0");
    expect((await comet(`block_search?query="block.height>${keptHeight}"`)).result?.total_count).toBe("0");
    // The tx before the snapshot is still there.
    expect((await comet(`tx_search?query="tx.height=${keptHeight}"`)).result?.total_count).toBe("1");
    // Reverted before any read wrote them: the reused heights index the new txs only.
    const id2 = await call("evm_snapshot");
    for (let i = 0; i < 2; i++) await send(`0x00000000000000000000000000000000000000a${i}`);
    expect(await call("evm_revert", [id2])).toBe(true);
    await send("0x00000000000000000000000000000000000000b0");
    expect(Number(await call("eth_blockNumber"))).toBe(keptHeight + 1);
    const reused = await comet(`tx_search?query="tx.height>${keptHeight}"`);
    expect(reused.result?.total_count).toBe("1");
    expect(reused.result?.txs?.[0]?.height).toBe(String(keptHeight + 1));
  });
});

describe("a persistent dev chain", () => {
  test("behavior: a revert survives a restart: the reverted blocks never come back, heights continue from it", async () => {
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const home = await mkdtemp(join(tmpdir(), "cometh-dev-restart-"));
    try {
      let d = await startInProcessDevNode({}, {}, home);
      const call = async (method: string, params: unknown[] = []) => {
        const res = await fetch(d.evmHttpUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        });
        return ((await res.json()) as { result: unknown }).result;
      };
      await call("anvil_mine", ["0x3"]);
      const id = await call("evm_snapshot");
      const height = Number(await call("eth_blockNumber"));
      const reverted = (await call("eth_getBlockByNumber", [`0x${(height + 1).toString(16)}`, false])) as null;
      expect(reverted).toBeNull();
      await call("anvil_setBalance", ["0x00000000000000000000000000000000000000b7", "0x77"]);
      await call("anvil_mine", ["0x4"]);
      const goneHash = (
        (await call("eth_getBlockByNumber", [`0x${(height + 2).toString(16)}`, false])) as { hash: string }
      ).hash;
      expect(await call("evm_revert", [id])).toBe(true);
      await d.close();

      d = await startInProcessDevNode({}, {}, home);
      // Starting makes no block by itself on a dev chain that is past its first height.
      expect(Number(await call("eth_blockNumber"))).toBe(height);
      expect(await call("eth_getBalance", ["0x00000000000000000000000000000000000000b7", "latest"])).toBe("0x0");
      expect(await call("eth_getBlockByHash", [goneHash, false])).toBeNull();
      await call("anvil_mine", ["0x2"]);
      expect(Number(await call("eth_blockNumber"))).toBe(height + 2);
      const remade = (await call("eth_getBlockByNumber", [`0x${(height + 2).toString(16)}`, false])) as {
        hash: string;
      };
      expect(remade.hash).not.toBe(goneHash);
      await d.close();
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("console.log", () => {
  test("behavior: Hardhat's console.log lines of calls, estimates and mined txs are printed", async () => {
    const lines: string[] = [];
    const d = await startInProcessDevNode({}, { print: (l) => lines.push(l) });
    try {
      const call = async (method: string, params: unknown[] = []) => {
        const res = await fetch(d.evmHttpUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
        });
        return (await res.json()) as { result?: unknown; error?: unknown };
      };
      // CALLDATACOPY the call's input and STATICCALL the console address with it.
      const logger = "0x00000000000000000000000000000000000010a1";
      const code = "0x365f5f375f5f365f73000000000000000000636f6e736f6c652e6c6f675afa00";
      await call("anvil_setCode", [logger, code]);
      const { encodeFunctionData, parseAbi } = await import("viem");
      const data = encodeFunctionData({
        abi: parseAbi(["function log(string,uint256)"]),
        functionName: "log",
        args: ["balance is", 42n],
      });
      lines.length = 0;
      await call("eth_call", [{ to: logger, data }, "latest"]);
      expect(lines).toContain("balance is 42");
      lines.length = 0;
      await call("eth_estimateGas", [{ to: logger, data }]);
      expect(lines.filter((l) => l === "balance is 42")).toHaveLength(1);
      lines.length = 0;
      await call("anvil_setLoggingEnabled", [false]);
      await call("eth_sendTransaction", [{ from: ACCOUNT0.address, to: logger, data }]);
      expect(lines).toEqual(["balance is 42"]);
    } finally {
      await d.close();
    }
  });
});
