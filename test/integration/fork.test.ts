import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SpawnedNode, spawnNode } from "./testNode.js";

/**
 * `cometh dev --fork-url` (docs/dev-chain.md "Forking") against real sources on 127.0.0.1: another
 * `cometh dev` (one source shared by the cases, chain id 4242 so its reads are cached on disk), a fork
 * of a fork, Anvil (skipped when bench/peers is not installed), the disk cache read offline once the
 * source is stopped, and the source going away under a running fork.
 */

const ANVIL_BIN =
  process.env.ANVIL_BIN ??
  join(
    import.meta.dirname,
    "..",
    "..",
    "bench",
    "peers",
    "node_modules",
    "@foundry-rs",
    "anvil-linux-amd64",
    "bin",
    "anvil",
  );

const ACCOUNT0 = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const ACCOUNT1 = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const FUNDED = "0x00000000000000000000000000000000000000aa";
const UNTOUCHED = "0x00000000000000000000000000000000000000bb";
const HASHER = "0x00000000000000000000000000000000000000cc";
/**
 * A counter: the constructor stores 0x2a at slot 0; every call adds 1 to slot 0, stores it and
 * returns it (runtime PUSH1 0 SLOAD PUSH1 1 ADD DUP1 PUSH1 0 SSTORE PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN).
 */
const COUNTER_INIT = "0x602a6000556012806010600039" + "6000f3" + "6000546001018060005560005260206000f3";
const SLOT0 = `0x${"0".repeat(64)}`;
/** Each call logs one word (0x2a) under topic 1 (runtime PUSH1 0x2a PUSH1 0 MSTORE PUSH1 1 PUSH1 32 PUSH1 0 LOG1 STOP). */
const EMITTER_INIT = "0x600d80600b6000396000f3" + "602a600052600160206000a100";
/** Returns BLOCKHASH of the number in its calldata (PUSH1 0 CALLDATALOAD BLOCKHASH PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN). */
const BLOCKHASH_CODE = "0x600035406000526020600 0f3".replaceAll(" ", "");

function hex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

function word(n: bigint): string {
  return `0x${n.toString(16).padStart(64, "0")}`;
}

interface RpcFailure {
  code: number;
  message: string;
}

async function call(
  url: string,
  method: string,
  params: unknown[] = [],
): Promise<{ result?: unknown; error?: RpcFailure }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: RpcFailure };
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const body = await call(url, method, params);
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

interface Dev {
  node: SpawnedNode;
  url: string;
}

/** `cometh dev` on ephemeral ports; resolves with its Ethereum JSON-RPC URL once it printed it. */
async function startDev(args: string[]): Promise<Dev> {
  const node = spawnNode(["dev", "--port", "0", "--rpc.laddr", "tcp://127.0.0.1:0", ...args]);
  started.push(node);
  node.ready.catch(() => undefined);
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /Ethereum JSON-RPC listening on (http:\/\/[^\s]+:\d+)/.exec(node.output());
      if (m?.[1] !== undefined) {
        node.child.stdout?.off("data", look);
        resolve(m[1]);
      }
    };
    node.child.stdout?.on("data", look);
    void node.exited.then((code) => reject(new Error(`cometh dev exited with ${code}:\n${node.output()}`)));
    look();
  });
  return { node, url };
}

async function stop(node: SpawnedNode): Promise<number | null> {
  if (node.child.exitCode !== null) return node.child.exitCode;
  node.child.kill("SIGTERM");
  return node.exited;
}

/**
 * The tx's receipt once it is mined. A cometh dev chain answers an automined send after its block, so
 * the first read finds it; Anvil answers the send when the tx enters its pool and mines it just after,
 * so on a loaded machine the first read can come before the block.
 */
async function receipt(url: string, hash: unknown): Promise<{ status: string; contractAddress: string | null }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = (await rpc(url, "eth_getTransactionReceipt", [hash])) as {
      status: string;
      contractAddress: string | null;
    } | null;
    if (r !== null) return r;
    if (Date.now() > deadline) throw new Error(`no receipt for ${String(hash)} at ${url} after 15 s`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

let dir: string;
let source: Dev;
let counter: string;
let deployHash: string;
let sourceHead: bigint;
let emitter: string;
let deployBlock: bigint;
const started: SpawnedNode[] = [];

async function dev(args: string[]): Promise<Dev> {
  return startDev(args);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cometh-fork-"));
  source = await dev(["--chain-id", "4242"]);
  await rpc(source.url, "eth_sendTransaction", [{ from: ACCOUNT0, to: FUNDED, value: "0x1234" }]);
  deployHash = (await rpc(source.url, "eth_sendTransaction", [
    { from: ACCOUNT0, data: COUNTER_INIT, gas: "0x30000" },
  ])) as string;
  const r = await receipt(source.url, deployHash);
  expect(r.status).toBe("0x1");
  counter = r.contractAddress as string;
  deployBlock = BigInt(
    ((await rpc(source.url, "eth_getTransactionReceipt", [deployHash])) as { blockNumber: string }).blockNumber,
  );
  const e = await receipt(
    source.url,
    await rpc(source.url, "eth_sendTransaction", [{ from: ACCOUNT0, data: EMITTER_INIT, gas: "0x30000" }]),
  );
  emitter = e.contractAddress as string;
  expect(
    (
      await receipt(
        source.url,
        await rpc(source.url, "eth_sendTransaction", [{ from: ACCOUNT0, to: emitter, gas: "0x20000" }]),
      )
    ).status,
  ).toBe("0x1");
  sourceHead = BigInt((await rpc(source.url, "eth_blockNumber")) as string);
}, 240_000);

afterAll(async () => {
  for (const n of started) await stop(n);
  await rm(dir, { recursive: true, force: true });
});

// Each case starts processes (tsx from the sources): minutes on a loaded two-core machine.
describe("cometh dev --fork-url", { timeout: 240_000 }, () => {
  let fork: Dev;
  const cacheDir = () => join(dir, "cache");

  test("default: the source's chain id, balances, nonces, code and storage read lazily at the fork block", async () => {
    fork = await dev(["--fork-url", source.url, "--fork-cache-dir", cacheDir(), "--home", join(dir, "forkA")]);
    expect(fork.node.output()).toContain(`Block number:   ${sourceHead}`);
    expect(await rpc(fork.url, "eth_chainId")).toBe("0x1092");
    expect(await rpc(fork.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
    // The dev accounts keep the source's nonces (Anvil funds them on a fork, it does not reset them).
    expect(await rpc(fork.url, "eth_getTransactionCount", [ACCOUNT0, "latest"])).toBe(
      await rpc(source.url, "eth_getTransactionCount", [ACCOUNT0, "latest"]),
    );
    expect(await rpc(fork.url, "eth_getCode", [counter, "latest"])).toBe(
      await rpc(source.url, "eth_getCode", [counter, "latest"]),
    );
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2an));
    // Block numbers continue from the fork block, as Anvil's do: the fork's genesis is the fork block
    // (initial_height fork + 1), so CometBFT heights and block numbers stay equal.
    expect(await rpc(fork.url, "eth_blockNumber")).toBe(hex(sourceHead));
    const forkBlock = (await rpc(source.url, "eth_getBlockByNumber", [hex(sourceHead), false])) as { hash: string };
    expect(await rpc(fork.url, "eth_getBlockByNumber", ["latest", false])).toEqual(forkBlock);
    expect(await rpc(fork.url, "eth_feeHistory", ["0x2", "latest", [50]])).toEqual(
      await rpc(source.url, "eth_feeHistory", ["0x2", hex(sourceHead), [50]]),
    );
    // Anvil's and Hardhat's node descriptions name the fork.
    expect(await rpc(fork.url, "anvil_nodeInfo")).toMatchObject({
      currentBlockNumber: Number(sourceHead),
      currentBlockHash: forkBlock.hash,
      forkConfig: { forkUrl: source.url, forkBlockNumber: Number(sourceHead) },
    });
    expect(await rpc(fork.url, "hardhat_metadata")).toMatchObject({
      latestBlockNumber: Number(sourceHead),
      latestBlockHash: forkBlock.hash,
      forkedNetwork: { chainId: 4242, forkBlockNumber: Number(sourceHead), forkBlockHash: forkBlock.hash },
    });
  });

  test("behavior: a contract deployed on the source is called and written on the fork; the source is unchanged", async () => {
    expect(await rpc(fork.url, "eth_call", [{ to: counter, data: "0x" }, "latest"])).toBe(word(0x2bn));
    const hash = await rpc(fork.url, "eth_sendTransaction", [{ from: ACCOUNT1, to: counter, gas: "0x20000" }]);
    expect((await receipt(fork.url, hash)).status).toBe("0x1");
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2bn));
    expect(await rpc(source.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2an));
    // The state before the local block is still the fork block's.
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, hex(sourceHead)])).toBe(word(0x2an));
    // The first local block is the fork block + 1, its parent the source's fork block, on both RPCs.
    const first = (await rpc(fork.url, "eth_getBlockByNumber", [hex(sourceHead + 1n), false])) as {
      parentHash: string;
      number: string;
    };
    const forkBlock = (await rpc(source.url, "eth_getBlockByNumber", [hex(sourceHead), false])) as { hash: string };
    expect(first.parentHash).toBe(forkBlock.hash);
    const cometUrl = /node RPC listening on tcp:\/\/([^\s]+)/.exec(fork.node.output())?.[1];
    const status = (await (await fetch(`http://${cometUrl}/status`)).json()) as {
      result: { sync_info: { latest_block_height: string; earliest_block_height: string } };
    };
    expect(BigInt(status.result.sync_info.earliest_block_height)).toBe(sourceHead + 1n);
    expect(BigInt(status.result.sync_info.latest_block_height)).toBe(BigInt(first.number));
  });

  test("behavior: transactions, receipts and blocks from before the fork are the source's, by hash", async () => {
    const onSource = (await rpc(source.url, "eth_getTransactionReceipt", [deployHash])) as { blockHash: string };
    expect(await rpc(fork.url, "eth_getTransactionReceipt", [deployHash])).toEqual(onSource);
    expect(await rpc(fork.url, "eth_getTransactionByHash", [deployHash])).toEqual(
      await rpc(source.url, "eth_getTransactionByHash", [deployHash]),
    );
    expect(await rpc(fork.url, "eth_getBlockByHash", [onSource.blockHash, false])).toEqual(
      await rpc(source.url, "eth_getBlockByHash", [onSource.blockHash, false]),
    );
    expect(await rpc(fork.url, "eth_getTransactionReceipt", [`0x${"12".repeat(32)}`])).toBeNull();
  });

  test("behavior: blocks, their transactions and state before the fork by number, logs across the fork and BLOCKHASH are the source's", async () => {
    const pre = hex(deployBlock);
    for (const [method, params] of [
      ["eth_getBlockByNumber", [pre, true]],
      ["eth_getBlockByNumber", ["earliest", false]],
      ["eth_getBlockTransactionCountByNumber", [pre]],
      ["eth_getTransactionByBlockNumberAndIndex", [pre, "0x0"]],
      ["eth_getBlockReceipts", [pre]],
      ["eth_getBalance", [FUNDED, "0x0"]],
      ["eth_getCode", [counter, hex(deployBlock - 1n)]],
      ["eth_getStorageAt", [counter, SLOT0, pre]],
      ["eth_getTransactionCount", [ACCOUNT0, "0x1"]],
      ["eth_call", [{ to: counter, data: "0x" }, pre]],
    ] as const) {
      expect(await rpc(fork.url, method, [...params]), `${method} ${JSON.stringify(params)}`).toEqual(
        await rpc(source.url, method, [...params]),
      );
    }
    expect(await rpc(fork.url, "eth_getCode", [counter, hex(deployBlock - 1n)])).toBe("0x");
    // A block past the head is still unknown.
    expect(await rpc(fork.url, "eth_getBlockByNumber", ["0xffffff", false])).toBeNull();

    // A log before the fork (the source's) and one after it (the fork's), in one range.
    const hash = await rpc(fork.url, "eth_sendTransaction", [{ from: ACCOUNT0, to: emitter, gas: "0x20000" }]);
    const local = (await rpc(fork.url, "eth_getTransactionReceipt", [hash])) as { blockNumber: string };
    const sourceLogs = (await rpc(source.url, "eth_getLogs", [{ fromBlock: "0x0", address: emitter }])) as unknown[];
    expect(sourceLogs).toHaveLength(1);
    const logs = (await rpc(fork.url, "eth_getLogs", [
      { fromBlock: "earliest", toBlock: "latest", address: emitter },
    ])) as {
      blockNumber: string;
      transactionHash: string;
    }[];
    expect(logs).toHaveLength(2);
    expect(logs[0]).toEqual(sourceLogs[0]);
    expect(logs[1]?.blockNumber).toBe(local.blockNumber);
    expect(logs[1]?.transactionHash).toBe(hash);
    // Only the part before the fork, and only the part after it.
    expect(
      await rpc(fork.url, "eth_getLogs", [{ fromBlock: "0x0", toBlock: hex(sourceHead), address: emitter }]),
    ).toEqual(sourceLogs);
    expect(await rpc(fork.url, "eth_getLogs", [{ fromBlock: hex(sourceHead + 1n), address: emitter }])).toEqual([
      logs[1],
    ]);

    // BLOCKHASH of heights before the fork reads the source's block hashes.
    for (const n of [sourceHead - 1n, sourceHead]) {
      const onSource = (await rpc(source.url, "eth_getBlockByNumber", [hex(n), false])) as { hash: string };
      expect(
        await rpc(fork.url, "eth_call", [
          { to: HASHER, data: word(n) },
          "latest",
          { [HASHER]: { code: BLOCKHASH_CODE } },
        ]),
      ).toBe(onSource.hash);
    }
  });

  test.skipIf(!existsSync(ANVIL_BIN))(
    "behavior: Anvil forking the same source numbers blocks the same way and answers the history before the fork alike",
    async () => {
      const anvil = await startAnvil(["--fork-url", source.url, "--no-storage-caching"]);
      const plain = await dev(["--fork-url", source.url, "--no-storage-caching"]);
      try {
        for (const url of [anvil.url, plain.url]) {
          expect(await rpc(url, "eth_blockNumber"), url).toBe(hex(sourceHead));
        }
        const same = async (method: string, params: unknown[]) =>
          expect(await rpc(plain.url, method, params), `${method} ${JSON.stringify(params)}`).toEqual(
            await rpc(anvil.url, method, params),
          );
        const hashOf = async (url: string, tag: string) =>
          ((await rpc(url, "eth_getBlockByNumber", [tag, false])) as { hash: string }).hash;
        expect(await hashOf(plain.url, "latest")).toBe(await hashOf(anvil.url, "latest"));
        expect(await hashOf(plain.url, hex(deployBlock))).toBe(await hashOf(anvil.url, hex(deployBlock)));
        await same("eth_getBalance", [FUNDED, "0x0"]);
        await same("eth_getCode", [counter, hex(deployBlock - 1n)]);
        await same("eth_getStorageAt", [counter, SLOT0, hex(deployBlock)]);
        await same("eth_getBlockTransactionCountByNumber", [hex(deployBlock)]);
        // The first local block: the fork block + 1, its parent the source's fork block.
        for (const url of [anvil.url, plain.url]) {
          const sent = await rpc(url, "eth_sendTransaction", [{ from: ACCOUNT0, to: emitter, gas: "0x20000" }]);
          const { blockNumber } = await minedReceipt(url, sent);
          expect(blockNumber, url).toBe(hex(sourceHead + 1n));
          const b = (await rpc(url, "eth_getBlockByNumber", [blockNumber, false])) as { parentHash: string };
          expect(b.parentHash, url).toBe(await hashOf(source.url, hex(sourceHead)));
        }
        const logsOf = async (url: string) =>
          ((await rpc(url, "eth_getLogs", [{ fromBlock: "0x0", address: emitter }])) as { blockNumber: string }[]).map(
            (l) => l.blockNumber,
          );
        expect(await logsOf(plain.url)).toEqual(await logsOf(anvil.url));
      } finally {
        await stop(plain.node);
        anvil.stop();
      }
    },
  );

  test("behavior: evm_snapshot / evm_revert over forked state; a slot zeroed locally does not fall back to the source", async () => {
    const id = await rpc(fork.url, "evm_snapshot");
    await rpc(fork.url, "anvil_setStorageAt", [counter, SLOT0, word(0n)]);
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0n));
    await rpc(fork.url, "anvil_setBalance", [FUNDED, "0x0"]);
    expect(await rpc(fork.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x0");
    expect(await rpc(fork.url, "evm_revert", [id])).toBe(true);
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2bn));
    expect(await rpc(fork.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
  });

  test("behavior: a fork of a fork sees the first fork's local writes and the source's state", async () => {
    const second = await dev(["--fork-url", fork.url, "--no-storage-caching"]);
    try {
      expect(await rpc(second.url, "eth_chainId")).toBe("0x1092");
      expect(await rpc(second.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2bn));
      expect(await rpc(second.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
      expect(await rpc(second.url, "eth_call", [{ to: counter, data: "0x" }, "latest"])).toBe(word(0x2cn));
    } finally {
      await stop(second.node);
    }
  });

  test("behavior: anvil_reset with forking goes back to genesis on the source at another block; without it, to the same fork", async () => {
    // Block 1 of the source holds the transfer but not the counter.
    expect(await rpc(fork.url, "anvil_reset", [{ forking: { jsonRpcUrl: source.url, blockNumber: 1 } }])).toBeNull();
    // The genesis height (initial_height - 1) is the home's: numbers go on from the first fork block.
    expect(await rpc(fork.url, "eth_blockNumber")).toBe(hex(sourceHead));
    expect(await rpc(fork.url, "eth_getCode", [counter, "latest"])).toBe("0x");
    expect(await rpc(fork.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
    // hardhat_reset's forking at the head again; then a plain reset keeps that fork.
    await rpc(fork.url, "hardhat_reset", [{ forking: { jsonRpcUrl: source.url } }]);
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2an));
    await rpc(fork.url, "eth_sendTransaction", [{ from: ACCOUNT1, to: counter, gas: "0x20000" }]);
    await rpc(fork.url, "anvil_reset", []);
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2an));
    // A URL that does not answer leaves the chain as it was.
    const bad = await call(fork.url, "anvil_reset", [{ forking: { jsonRpcUrl: "http://127.0.0.1:9" } }]);
    expect(bad.error?.message).toMatch(/cannot reset to the fork: .*cannot be reached/);
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2an));
  });

  test("behavior: after anvil_reset to another fork block, a restart of the home resumes that fork", async () => {
    const home = join(dir, "forkB");
    const first = await dev(["--fork-url", source.url, "--fork-cache-dir", cacheDir(), "--home", home]);
    expect(await rpc(first.url, "anvil_reset", [{ forking: { jsonRpcUrl: source.url, blockNumber: 1 } }])).toBeNull();
    expect(await rpc(first.url, "eth_getCode", [counter, "latest"])).toBe("0x");
    expect(await stop(first.node)).toBe(0);
    const record = JSON.parse(readFileSync(join(home, "config", "fork.json"), "utf8")) as Record<string, unknown>;
    expect(record).toEqual({ urls: [source.url], blockNumber: "1", chainId: "4242", evmChainId: "4242" });
    const again = await dev(["--home", home, "--fork-cache-dir", cacheDir()]);
    try {
      expect(again.node.output()).toContain("Block number:   1\n");
      expect(await rpc(again.url, "eth_getCode", [counter, "latest"])).toBe("0x");
      expect(await rpc(again.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
      // The home's genesis keeps its initial height: numbers go on from the first fork block.
      expect(await rpc(again.url, "eth_blockNumber")).toBe(hex(sourceHead));
    } finally {
      await stop(again.node);
    }
  });

  test("behavior: a dev chain started without --fork-url becomes a fork by anvil_reset; a block number alone is a plain reset", async () => {
    // Its fork's cache goes to the default root under $HOME: a home of the test's own.
    const home = process.env.HOME;
    process.env.HOME = join(dir, "home");
    let plain: Dev;
    try {
      plain = await dev([]);
    } finally {
      if (home === undefined) delete process.env.HOME;
      else process.env.HOME = home;
    }
    try {
      await rpc(plain.url, "anvil_setBalance", [FUNDED, "0x1"]);
      expect(await rpc(plain.url, "anvil_reset", [{ forking: { blockNumber: 3 } }])).toBeNull();
      expect(await rpc(plain.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x0");
      expect(await rpc(plain.url, "eth_getCode", [counter, "latest"])).toBe("0x");
      await rpc(plain.url, "anvil_reset", [{ forking: { jsonRpcUrl: source.url } }]);
      expect(await rpc(plain.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2an));
      expect(await rpc(plain.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
    } finally {
      await stop(plain.node);
    }
    expect(existsSync(join(dir, "home", ".cometh", "cache", "rpc", "4242", String(sourceHead), "storage.json"))).toBe(
      true,
    );
  });

  test("behavior: anvil_setRpcUrl moves the fork's unread state to another source at the same block; the chain stays", async () => {
    const head = await rpc(fork.url, "eth_blockNumber");
    const fresh = (n: number) => `0x00000000000000000000000000000000000abc${n.toString(16).padStart(2, "0")}`;
    // A source that does not answer: the next unread account cannot be read, what was read still answers.
    expect(await rpc(fork.url, "anvil_setRpcUrl", ["http://127.0.0.1:9"])).toBeNull();
    expect((await rpc(fork.url, "anvil_nodeInfo")) as object).toMatchObject({
      forkConfig: { forkUrl: "http://127.0.0.1:9", forkBlockNumber: Number(sourceHead) },
    });
    const unreachable = await call(fork.url, "eth_getBalance", [fresh(1), "latest"]);
    expect(unreachable.error?.message).toMatch(/fork source cannot be reached/);
    expect(await rpc(fork.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
    // The source again, under another spelling of its URL: reads work, the chain is where it was.
    const other = source.url.replace("127.0.0.1", "localhost");
    expect(await rpc(fork.url, "anvil_setRpcUrl", [other])).toBeNull();
    expect(await rpc(fork.url, "eth_getBalance", [fresh(1), "latest"])).toBe("0x0");
    expect(await rpc(fork.url, "eth_getStorageAt", [counter, SLOT0, hex(sourceHead)])).toBe(word(0x2an));
    expect(await rpc(fork.url, "eth_blockNumber")).toBe(head);
    expect(await rpc(fork.url, "anvil_setRpcUrl", [source.url])).toBeNull();
  });

  test("error: the source going away gives a clear JSON-RPC error for state not read yet, and what was read still answers", async () => {
    expect(await stop(source.node)).toBe(0);
    const balance = await call(fork.url, "eth_getBalance", [UNTOUCHED, "latest"]);
    expect(balance.error?.code).toBe(-32000);
    expect(balance.error?.message).toMatch(/^the fork source cannot be reached for eth_getAccountInfo: .*ECONNREFUSED/);
    const send = await call(fork.url, "eth_sendTransaction", [{ from: ACCOUNT1, to: UNTOUCHED, value: "0x1" }]);
    expect(send.error?.message).toMatch(/fork source cannot be reached/);
    expect(await rpc(fork.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
    // The chain still makes blocks.
    const hash = await rpc(fork.url, "eth_sendTransaction", [{ from: ACCOUNT1, to: counter, gas: "0x20000" }]);
    expect((await receipt(fork.url, hash)).status).toBe("0x1");
  });

  test("behavior: reads are cached on disk per chain id and block, lazily (only what was read)", async () => {
    expect(await stop(fork.node)).toBe(0);
    const file = join(cacheDir(), "4242", String(sourceHead), "storage.json");
    expect(existsSync(file)).toBe(true);
    const cached = JSON.parse(readFileSync(file, "utf8")) as {
      meta: { chainId: string; blockNumber: string };
      accounts: Record<string, unknown>;
      storage: Record<string, Record<string, string>>;
    };
    expect(cached.meta).toMatchObject({ chainId: "4242", blockNumber: String(sourceHead) });
    expect(Object.keys(cached.accounts)).toContain(FUNDED);
    expect(Object.keys(cached.accounts)).not.toContain(UNTOUCHED);
    expect(cached.storage[counter]?.[SLOT0]).toBe("0x2a");
  });

  test("behavior: a restart of a fork's --home needs no fork flags and answers from the disk cache with the source stopped", async () => {
    // config/fork.json holds the URLs, the fork block and the source's chain id: an offline start.
    const again = await dev(["--home", join(dir, "forkA"), "--fork-cache-dir", cacheDir()]);
    try {
      expect(again.node.output()).toContain(`Block number:   ${sourceHead}`);
      // The chain continues where it stopped: one local block, the counter at 0x2b.
      expect(await rpc(again.url, "eth_blockNumber")).toBe(hex(sourceHead + 1n));
      expect(await rpc(again.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2bn));
      expect(await rpc(again.url, "eth_getBalance", [FUNDED, "latest"])).toBe("0x1234");
      const hash = await rpc(again.url, "eth_sendTransaction", [{ from: ACCOUNT1, to: counter, gas: "0x20000" }]);
      expect((await receipt(again.url, hash)).status).toBe("0x1");
      expect(await rpc(again.url, "eth_getStorageAt", [counter, SLOT0, "latest"])).toBe(word(0x2cn));
      const missing = await call(again.url, "eth_getBalance", [UNTOUCHED, "latest"]);
      expect(missing.error?.message).toMatch(/fork source cannot be reached/);
    } finally {
      await stop(again.node);
    }
  });

  test("error: a --fork-url that does not answer stops the start with the reason", async () => {
    const node = spawnNode([
      "dev",
      "--port",
      "0",
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
      "--fork-url",
      "http://127.0.0.1:9",
    ]);
    started.push(node);
    node.ready.catch(() => undefined);
    expect(await node.exited).not.toBe(0);
    expect(node.output()).toMatch(/fork source cannot be reached for eth_chainId: http:\/\/127\.0\.0\.1:9/);
    expect(node.output()).not.toContain("    at ");
  });
});

/** A tx's receipt once a block holds it (Anvil's forked automine answers the send first); bounded. */
async function minedReceipt(url: string, hash: unknown): Promise<{ blockNumber: string }> {
  for (let i = 0; i < 600; i++) {
    const r = (await rpc(url, "eth_getTransactionReceipt", [hash])) as { blockNumber: string } | null;
    if (r !== null) return r;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url}: no receipt for ${hash} after 600 polls`);
}

/** Anvil on an ephemeral port; resolves with its URL once it listens. */
async function startAnvil(args: string[]): Promise<{ url: string; stop: () => void }> {
  const child = spawn(ANVIL_BIN, ["--host", "127.0.0.1", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1] !== undefined) resolve(`http://${m[1]}`);
    });
    child.on("exit", (code) => reject(new Error(`anvil exited with ${code}: ${out}`)));
  });
  return {
    url,
    stop: () => {
      if (child.exitCode === null) child.kill("SIGTERM");
    },
  };
}

describe.skipIf(!existsSync(ANVIL_BIN))(
  `fork of Anvil (${ANVIL_BIN}; skipped when absent: bash bench/peers/install.sh)`,
  { timeout: 240_000 },
  () => {
    let anvil: { url: string; stop: () => void };
    let anvilUrl: string;

    beforeAll(async () => {
      anvil = await startAnvil([]);
      anvilUrl = anvil.url;
    }, 60_000);

    afterAll(() => anvil?.stop());

    test("behavior: Anvil's accounts and a contract deployed on Anvil, read through eth_getAccountInfo", async () => {
      const deploy = await rpc(anvilUrl, "eth_sendTransaction", [
        { from: ACCOUNT0, data: COUNTER_INIT, gas: "0x30000" },
      ]);
      const r = await receipt(anvilUrl, deploy);
      const onAnvil = r.contractAddress as string;
      const fork = await dev(["--fork-url", anvilUrl]);
      try {
        // Anvil's chain id 31337 is never cached on disk (Foundry's rule for local dev chains).
        expect(fork.node.output()).toContain("Cache:          memory only");
        expect(await rpc(fork.url, "eth_chainId")).toBe("0x7a69");
        // Anvil's head is the fork block: numbers continue from it, its blocks are Anvil's.
        const head = (await rpc(anvilUrl, "eth_blockNumber")) as string;
        expect(await rpc(fork.url, "eth_blockNumber")).toBe(head);
        expect(await rpc(fork.url, "eth_getBlockByNumber", [head, true])).toEqual(
          await rpc(anvilUrl, "eth_getBlockByNumber", [head, true]),
        );
        expect(await rpc(fork.url, "eth_getTransactionCount", [ACCOUNT0, "latest"])).toBe("0x1");
        expect(await rpc(fork.url, "eth_call", [{ to: onAnvil, data: "0x" }, "latest"])).toBe(word(0x2bn));
        const hash = await rpc(fork.url, "eth_sendTransaction", [{ from: ACCOUNT0, to: onAnvil, gas: "0x20000" }]);
        expect((await receipt(fork.url, hash)).status).toBe("0x1");
        expect(await rpc(fork.url, "eth_getStorageAt", [onAnvil, SLOT0, "latest"])).toBe(word(0x2bn));
        expect(await rpc(anvilUrl, "eth_getStorageAt", [onAnvil, SLOT0, "latest"])).toBe(word(0x2an));
      } finally {
        await stop(fork.node);
      }
    });
  },
);
