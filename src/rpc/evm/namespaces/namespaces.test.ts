import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RLP } from "@ethereumjs/rlp";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEV_ACCOUNT_BALANCE_WEI } from "../../../app/evm/index.js";
import { hexToBytes } from "../../../util/bytes.js";
import { toData, toQuantity } from "../encode/hex.js";
import { findMethod, NAMESPACE_NAMES } from "../namespaces/index.js";
import { rpcCall } from "../testing/evmClient.js";
import { loadOpenRpc } from "../testing/openRpc.js";
import {
  ECHO,
  ECHO_CODE,
  type EvmTestChain,
  type EvmTestRpc,
  FAILER,
  LOGGER,
  LOGGER_CODE,
  PANICKER,
  REVERTER,
  SLOW,
  startEvmTestChain,
  TRANSFER_TOPIC,
} from "../testing/realChain.js";
import { CHAIN_ID, GWEI, signTx, signUnprotectedLegacy } from "../testing/signing.js";
import { type Caller, callerFor, EVM_TRANSPORTS, type EvmTransport } from "../testing/transports.js";
import { eth } from "./eth.js";
import { newProfilerState, setGcPercent, startingHeapGrowthPercent } from "./profiling.js";

/**
 * Every method of every namespace over both transports, on a real dev chain in process (seeded by
 * startEvmTestChain: blocks 1-3, contracts at fixed addresses): happy paths (eth_ results validated
 * against the execution-apis OpenRPC schema of the method) and error paths. Both transports share
 * the chain, so expected values are read from it when the test runs.
 */

const spec = loadOpenRpc();
const validated = new Set<string>();

function expectSchema(method: string, result: unknown): void {
  if (!spec.methods.has(method)) return;
  let problems = spec.validateResult(method, result);
  // FilterResults is oneOf(hash list, log list): an empty list matches both, a spec ambiguity.
  if (Array.isArray(result) && result.length === 0)
    problems = problems.filter((p) => p !== "$: matches 2 branches of oneOf");
  expect(problems, `${method} result schema`).toEqual([]);
  validated.add(method);
}

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
function ok(method: string, reply: any): any {
  expect(reply.error, `${method} answered an error`).toBeUndefined();
  expectSchema(method, reply.result);
  return reply.result;
}

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
function err(reply: any, code: number, message?: RegExp | string): void {
  expect(reply.result).toBeUndefined();
  expect(reply.error.code).toBe(code);
  if (message instanceof RegExp) expect(reply.error.message).toMatch(message);
  else if (message !== undefined) expect(reply.error.message).toBe(message);
}

const hex = toData;
const ZERO32 = `0x${"00".repeat(32)}`;
const UNKNOWN_HASH = `0x${"ab".repeat(32)}`;

let chain: EvmTestChain;
beforeAll(async () => {
  // The node admits pre-EIP-155 txs, so that the RPC's own allow-unprotected-txs decides.
  chain = await startEvmTestChain({ allowUnprotectedTxs: true });
});
afterAll(() => chain.close());

/** Mines until the mempool is empty (txs waiting for a nonce get in once it is filled). */
async function mineUntilEmpty(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await chain.mine();
    const content = await chain.services.mempool.content();
    if (content.pending.length + content.queued.length === 0) return;
  }
  throw new TypeError("the mempool did not empty");
}

/** geth's reward percentile: the tip of the tx at which the block's cumulative gas reaches `p` %. */
function rewardAt(txs: { tip: bigint; gasUsed: bigint }[], gasUsed: bigint, p: number): bigint {
  const sorted = [...txs].sort((a, b) => (a.tip < b.tip ? -1 : a.tip > b.tip ? 1 : 0));
  const threshold = (Number(gasUsed) * p) / 100;
  let sum = 0;
  for (const t of sorted) {
    sum += Number(t.gasUsed);
    if (sum >= threshold) return t.tip;
  }
  return sorted[sorted.length - 1]?.tip ?? 0n;
}

describe.each(EVM_TRANSPORTS)("evm rpc over %s", (transport: EvmTransport) => {
  let f: EvmTestRpc;
  let c: Caller;
  let a0: string;
  let a1: string;
  let a2: string;
  const call = (m: string, p: unknown[] = []) => c.call(m, p);

  beforeAll(async () => {
    f = await chain.startRpc();
    c = await callerFor(f, transport);
    [a0, a1, a2] = chain.keys.map((k) => hex(k.address)) as [string, string, string];
  });
  afterAll(async () => {
    await c.close();
    await f.close();
  });

  describe("eth: chain", () => {
    test("default: eth_blockNumber, eth_chainId, eth_protocolVersion", async () => {
      expect(ok("eth_blockNumber", await call("eth_blockNumber"))).toBe(
        toQuantity(chain.services.chain.latestHeight() as number),
      );
      expect(ok("eth_chainId", await call("eth_chainId"))).toBe("0x40000");
      expect(ok("eth_protocolVersion", await call("eth_protocolVersion"))).toBe("0x41");
    });

    test("default: eth_config is EIP-7910's shape: the one fork, active from genesis", async () => {
      const cfg = ok("eth_config", await call("eth_config"));
      expect(cfg.current.chainId).toBe("0x40000");
      expect(cfg.current.precompiles.MODEXP).toBe("0x0000000000000000000000000000000000000005");
      expect([cfg.next, cfg.last]).toEqual([null, null]);
    });

    test("default: eth_syncing false, then progress while catching up", async () => {
      expect(ok("eth_syncing", await call("eth_syncing"))).toBe(false);
      chain.syncing = true;
      try {
        const r = ok("eth_syncing", await call("eth_syncing"));
        expect(Object.keys(r)).toEqual(["startingBlock", "currentBlock", "highestBlock"]);
      } finally {
        chain.syncing = false;
      }
    });

    test("default: eth_gasPrice = latest block's base fee + tip; eth_maxPriorityFeePerGas = tip", async () => {
      const base = chain.block(chain.services.chain.latestHeight() as number).baseFeePerGas as bigint;
      // The Cosmos EVM fee market's suggestion: the most the base fee can rise in one block (1/8).
      const tip = base / 8n;
      expect(ok("eth_gasPrice", await call("eth_gasPrice"))).toBe(toQuantity(base + tip));
      expect(ok("eth_maxPriorityFeePerGas", await call("eth_maxPriorityFeePerGas"))).toBe(toQuantity(tip));
    });

    test("default: eth_feeHistory sizes and rewards", async () => {
      const head = chain.services.chain.latestHeight() as number;
      const r = ok("eth_feeHistory", await call("eth_feeHistory", ["0x3", "latest", [25, 75]]));
      expect(r.oldestBlock).toBe(toQuantity(head - 2));
      expect(r.baseFeePerGas).toHaveLength(4);
      expect(r.gasUsedRatio).toHaveLength(3);
      expect(r.reward).toHaveLength(3);
      // Block 1's rewards: the effective tips of its txs at the 25th and 75th gas percentiles.
      const b1 = chain.block(1);
      const base1 = b1.baseFeePerGas as bigint;
      const receipts1 = (await chain.services.chain.blockReceipts(1)) ?? [];
      const tips = receipts1.map((r) => ({ tip: r.effectiveGasPrice - base1, gasUsed: r.gasUsed }));
      expect(tips).toHaveLength(3);
      const early = ok("eth_feeHistory", await call("eth_feeHistory", ["0x3", "0x3", [25, 75]]));
      expect(early.oldestBlock).toBe("0x1");
      expect(early.reward[0]).toEqual([
        toQuantity(rewardAt(tips, b1.gasUsed, 25)),
        toQuantity(rewardAt(tips, b1.gasUsed, 75)),
      ]);
      expect(early.reward[2]).toEqual(["0x0", "0x0"]);
      const noReward = ok("eth_feeHistory", await call("eth_feeHistory", [2, "0x2", null]));
      expect(noReward.reward).toBeUndefined();
      expect(noReward.oldestBlock).toBe("0x1");
      // Capped at feehistory-cap rather than refused; starts at genesis.
      const wide = ok("eth_feeHistory", await call("eth_feeHistory", ["1000", "latest", []]));
      expect(wide.oldestBlock).toBe("0x0");
    });

    test("error: eth_feeHistory beyond head, bad percentiles", async () => {
      err(await call("eth_feeHistory", ["0x1", "0x99", []]), -32000, /^request beyond head block: requested 153, head/);
      err(await call("eth_feeHistory", ["0x1", "latest", [50, 10]]), -32000, /invalid reward percentile/);
      err(await call("eth_feeHistory", ["0x1", "latest", [101]]), -32000, /invalid reward percentile/);
      err(await call("eth_feeHistory", ["0x1", "latest"]), -32602, "missing value for required argument 2");
      err(await call("eth_feeHistory", ["x", "latest", []]), -32602, /invalid argument 0: invalid hex or decimal/);
    });
  });

  describe("eth: state", () => {
    test("default: balance, nonce, code, storage at tags, numbers and hashes", async () => {
      expect(ok("eth_getBalance", await call("eth_getBalance", [a1, "earliest"]))).toBe(
        toQuantity(DEV_ACCOUNT_BALANCE_WEI),
      );
      const b1 = chain.block(1);
      const at1 = ok("eth_getBalance", await call("eth_getBalance", [a1, { blockHash: hex(b1.hash) }]));
      expect(BigInt(at1)).toBeGreaterThan(DEV_ACCOUNT_BALANCE_WEI);
      expect(ok("eth_getBalance", await call("eth_getBalance", [a1, { blockNumber: "0x1" }]))).toBe(at1);
      ok("eth_getBalance", await call("eth_getBalance", [a1, "safe"]));
      ok("eth_getBalance", await call("eth_getBalance", [a1, "finalized"]));
      expect(ok("eth_getTransactionCount", await call("eth_getTransactionCount", [a0, "0x0"]))).toBe("0x0");
      expect(ok("eth_getTransactionCount", await call("eth_getTransactionCount", [a0, "0x2"]))).toBe("0x2");
      expect(ok("eth_getCode", await call("eth_getCode", [hex(ECHO), "latest"]))).toBe(hex(ECHO_CODE));
      expect(ok("eth_getCode", await call("eth_getCode", [a0, "latest"]))).toBe("0x");
      expect(ok("eth_getStorageAt", await call("eth_getStorageAt", [hex(LOGGER), "0x0", "latest"]))).toBe(
        `0x${"00".repeat(31)}2a`,
      );
      expect(ok("eth_getStorageAt", await call("eth_getStorageAt", [hex(LOGGER), "0x01", "latest"]))).toBe(ZERO32);
    });

    test("default: eth_getProof", async () => {
      const r = ok("eth_getProof", await call("eth_getProof", [hex(LOGGER), ["0x0", ZERO32], "latest"]));
      expect(r.storageProof.map((p: { key: string }) => p.key)).toEqual(["0x0", ZERO32]);
      expect(r.storageProof[0].value).toBe("0x2a");
      expect(r.codeHash).toBe(hex(keccak_256(LOGGER_CODE)));
    });

    test("error: future heights, unknown hashes, bad keys", async () => {
      err(await call("eth_getBalance", [a0, "0x100"]), -32000, "header not found");
      err(await call("eth_getBalance", [a0, UNKNOWN_HASH]), -32000, "header for hash not found");
      err(await call("eth_getBalance", [a0]), -32602, "missing value for required argument 1");
      err(await call("eth_getBalance", [a0, "pending", 1]), -32602, "too many arguments, want at most 2");
      err(await call("eth_getStorageAt", [a0, "0xzz", "latest"]), -32602, /unable to decode storage key/);
      err(
        await call("eth_getBalance", [a0, { blockHash: UNKNOWN_HASH, blockNumber: "0x1" }]),
        -32602,
        "invalid argument 1: cannot specify both BlockHash and BlockNumber, choose one or the other",
      );
      err(await call("eth_getBalance", [a0, {}]), -32602, /invalid argument 1: block object needs/);
      err(await call("eth_getBalance", [a0, "newest"]), -32602, /invalid argument 1: unknown block "newest"/);
    });

    test("behavior: pending nonce counts executable mempool txs", async () => {
      const key = chain.keys[2];
      if (key === undefined) throw new TypeError("no key");
      const latest = BigInt(ok("eth_getTransactionCount", await call("eth_getTransactionCount", [a2, "latest"])));
      const { raw } = signTx(
        { type: 2, nonce: latest, maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 30000n, to: ECHO },
        key,
      );
      const hash = ok("eth_sendRawTransaction", await call("eth_sendRawTransaction", [hex(raw)]));
      expect(await call("eth_getTransactionCount", [a2, "pending"])).toMatchObject({ result: toQuantity(latest + 1n) });
      // A pending tx has null block fields, which the TransactionInfo schema does not cover.
      const pendingTx = (await call("eth_getTransactionByHash", [hash])).result;
      expect(pendingTx.blockHash).toBeNull();
      expect(pendingTx.gasPrice).toBe(toQuantity(3n * GWEI));
      const block = await chain.mine();
      const mined = ok("eth_getTransactionByHash", await call("eth_getTransactionByHash", [hash]));
      expect(mined.gasPrice).toBe(toQuantity((block.baseFeePerGas as bigint) + GWEI));
      expect(ok("eth_getTransactionReceipt", await call("eth_getTransactionReceipt", [hash])).status).toBe("0x1");
      // Answered without a promise (the node's receipts are synchronous): no microtask hop per poll.
      const direct = eth.getTransactionReceipt.run(
        [hexToBytes(hash) as Uint8Array],
        chain.services,
        undefined as never,
      );
      expect(direct).not.toBeInstanceOf(Promise);
      expect((direct as { status: string }).status).toBe("0x1");
    });
  });

  describe("eth: execution", () => {
    test("default: eth_call returns data; block and state overrides", async () => {
      expect(ok("eth_call", await call("eth_call", [{ to: hex(ECHO), input: "0x1234" }, "latest"]))).toBe("0x1234");
      expect(ok("eth_call", await call("eth_call", [{ to: hex(ECHO), data: "0xab" }]))).toBe("0xab");
      // PUSH2 0xfeed PUSH0 MSTORE PUSH1 2 PUSH1 30 RETURN: answers 0xfeed.
      const over = { [hex(ECHO)]: { code: "0x61feed5f526002601ef3" } };
      expect(ok("eth_call", await call("eth_call", [{ to: hex(ECHO) }, "latest", over]))).toBe("0xfeed");
      expect(chain.lastCall?.opts.gasCap).toBe(25_000_000n);
      await call("eth_call", [{ to: hex(ECHO), gas: "0x5f5e100" }, "latest"]);
      expect(chain.lastCall?.opts.gasCap).toBe(25_000_000n);
    });

    test("error: eth_call reverts are code 3 with data; VM errors -32000", async () => {
      const r = await call("eth_call", [{ to: hex(REVERTER) }, "latest"]);
      err(r, 3, "execution reverted: boom");
      expect(r.error.data).toMatch(/^0x08c379a0/);
      err(
        await call("eth_call", [{ to: hex(PANICKER) }, "latest"]),
        3,
        "execution reverted: arithmetic underflow or overflow",
      );
      err(await call("eth_call", [{ to: hex(FAILER) }, "latest"]), -32000, "out of gas");
      err(
        await call("eth_call", [{ to: hex(ECHO), gasPrice: "0x1", maxFeePerGas: "0x2" }, "latest"]),
        -32000,
        "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified",
      );
      err(
        await call("eth_call", [{ to: hex(ECHO), chainId: "0x1" }, "latest"]),
        -32000,
        "chainId does not match node's (have=1, want=262144)",
      );
      err(
        await call("eth_call", [{ to: hex(ECHO), data: "0x01", input: "0x02" }, "latest"]),
        -32602,
        /both "data" and "input" are set and not equal/,
      );
      err(await call("eth_call", [{ to: hex(ECHO) }, "latest", {}, {}]), -32602, "too many arguments, want at most 3");
      err(await call("eth_call", [{ to: "0x1234" }, "latest"]), -32602, /hex string has length 4, want 40/);
      err(
        await call("eth_call", [{ to: hex(ECHO), gas: "0x05" }, "latest"]),
        -32602,
        "invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go struct field TransactionArgs.gas of type hexutil.Uint64",
      );
    });

    test("default: eth_estimateGas binary search, transfer shortcut, errors", async () => {
      expect(ok("eth_estimateGas", await call("eth_estimateGas", [{ from: a0, to: a1, value: "0x1" }]))).toBe("0x5208");
      const echo = BigInt(ok("eth_estimateGas", await call("eth_estimateGas", [{ to: hex(ECHO), data: "0x0102" }])));
      // What the call uses when it has all the gas it wants.
      const need = BigInt(
        (await call("eth_createAccessList", [{ to: hex(ECHO), data: "0x0102" }, "latest"])).result.gasUsed,
      );
      expect(echo).toBeGreaterThanOrEqual(need);
      expect(echo).toBeLessThanOrEqual((need * 1015n) / 1000n + 1n);
      err(await call("eth_estimateGas", [{ to: hex(REVERTER) }]), 3, "execution reverted: boom");
      err(await call("eth_estimateGas", [{ to: hex(FAILER) }]), -32000, "gas required exceeds allowance (25000000)");
      err(
        await call("eth_estimateGas", [{ from: a0, to: a1, value: toQuantity(10n ** 40n), gasPrice: "0x1" }]),
        -32000,
        "insufficient funds for transfer",
      );
    });

    test("error: eth_call past evm-timeout", async () => {
      // No gas cap: the loop would outlast the deadline many times over, so the deadline ends it.
      const quick = await chain.startRpc({ evmTimeoutMs: 50, gasCap: 0n });
      try {
        const r = await rpcCall(quick.url, "eth_call", [{ to: hex(SLOW) }, "latest"]);
        err(r, -32000, /^execution aborted \(timeout = 50ms\)/);
      } finally {
        await quick.close();
      }
    });

    test("default: eth_createAccessList traces the slots and accounts the call touches (geth's AccessList)", async () => {
      // At 0x…aa (a state override): SLOAD(5) on itself, BALANCE(LOGGER), a CALL to ECHO.
      const target = "0x00000000000000000000000000000000000000aa";
      const code = `0x6005545073${Buffer.from(LOGGER).toString("hex")}31505f5f5f5f5f73${Buffer.from(ECHO).toString("hex")}5af100`;
      const overrides = { [target]: { code } };
      const r = ok("eth_createAccessList", await call("eth_createAccessList", [{ to: target }, "latest", overrides]));
      // The recipient is left out as an account, not its slots; the list is sorted by address.
      const list = [
        { address: target, storageKeys: [`0x${"0".repeat(63)}5`] },
        { address: hex(ECHO), storageKeys: [] },
        { address: hex(LOGGER), storageKeys: [] },
      ];
      expect(r.accessList).toEqual(list);
      // The gas the call uses with that list, as a trace of it counts it.
      const traced = await call("debug_traceCall", [
        { to: target, accessList: list },
        "latest",
        { stateOverrides: overrides },
      ]);
      expect(r.gasUsed).toBe(toQuantity(traced.result.gas));
      const failing = ok("eth_createAccessList", await call("eth_createAccessList", [{ to: hex(REVERTER) }]));
      expect(failing.error).toBe("execution reverted");
    });

    test("default: eth_simulateV1 answers simulated blocks with their calls (simulate.test.ts has the rest)", async () => {
      const opts = {
        blockStateCalls: [{ calls: [{ to: hex(ECHO), input: "0x0102" }, { to: hex(REVERTER) }] }, { calls: [] }],
        traceTransfers: true,
      };
      const blocks = ok("eth_simulateV1", await call("eth_simulateV1", [opts, "latest"]));
      expect(blocks).toHaveLength(2);
      expect(blocks[0].calls.map((c: { status: string }) => c.status)).toEqual(["0x1", "0x0"]);
      expect(blocks[0].calls[0].returnData).toBe("0x0102");
      expect(blocks[1].parentHash).toBe(blocks[0].hash);
      const full = ok("eth_simulateV1", await call("eth_simulateV1", [{ ...opts, returnFullTransactions: true }]));
      expect(full[0].transactions[0].hash).toBe(blocks[0].transactions[0]);
    });
  });

  describe("eth: blocks and transactions", () => {
    test("default: eth_getBlockByNumber / ByHash agree; full transactions", async () => {
      const byNumber = ok("eth_getBlockByNumber", await call("eth_getBlockByNumber", ["0x1", false]));
      expect(byNumber.hash).toBe(hex(chain.block(1).hash));
      expect(byNumber.transactions).toHaveLength(3);
      expect(typeof byNumber.transactions[0]).toBe("string");
      const byHash = ok("eth_getBlockByHash", await call("eth_getBlockByHash", [byNumber.hash, true]));
      expect(byHash.transactions.map((t: { hash: string }) => t.hash)).toEqual(byNumber.transactions);
      expect(byHash.transactions.map((t: { type: string }) => t.type)).toEqual(["0x0", "0x1", "0x2"]);
      expect(byHash.baseFeePerGas).toBe(toQuantity(chain.block(1).baseFeePerGas as bigint));
      expect(ok("eth_getBlockByNumber", await call("eth_getBlockByNumber", ["earliest", false])).number).toBe("0x0");
      ok("eth_getBlockByNumber", await call("eth_getBlockByNumber", ["latest", true]));
      ok("eth_getBlockByNumber", await call("eth_getBlockByNumber", ["pending", false]));
    });

    test("default: unknown blocks and transactions are null", async () => {
      expect(ok("eth_getBlockByNumber", await call("eth_getBlockByNumber", ["0x999", false]))).toBeNull();
      expect(ok("eth_getBlockByHash", await call("eth_getBlockByHash", [UNKNOWN_HASH, false]))).toBeNull();
      expect(ok("eth_getTransactionByHash", await call("eth_getTransactionByHash", [UNKNOWN_HASH]))).toBeNull();
      expect(ok("eth_getTransactionReceipt", await call("eth_getTransactionReceipt", [UNKNOWN_HASH]))).toBeNull();
      expect(ok("eth_getBlockReceipts", await call("eth_getBlockReceipts", ["0x999"]))).toBeNull();
      expect(
        ok("eth_getBlockTransactionCountByHash", await call("eth_getBlockTransactionCountByHash", [UNKNOWN_HASH])),
      ).toBeNull();
      expect(
        ok(
          "eth_getTransactionByBlockNumberAndIndex",
          await call("eth_getTransactionByBlockNumberAndIndex", ["0x1", "0x9"]),
        ),
      ).toBeNull();
      expect((await call("eth_getHeaderByHash", [UNKNOWN_HASH])).result).toBeNull();
      expect((await call("eth_getTransactionLogs", [UNKNOWN_HASH])).result).toBeNull();
    });

    test("default: counts, headers, uncles", async () => {
      const b1 = hex(chain.block(1).hash);
      expect(
        ok("eth_getBlockTransactionCountByNumber", await call("eth_getBlockTransactionCountByNumber", ["0x1"])),
      ).toBe("0x3");
      expect(ok("eth_getBlockTransactionCountByHash", await call("eth_getBlockTransactionCountByHash", [b1]))).toBe(
        "0x3",
      );
      const header = (await call("eth_getHeaderByNumber", ["0x1"])).result;
      expect(header.hash).toBe(b1);
      expect(header.transactions).toBeUndefined();
      expect((await call("eth_getHeaderByHash", [b1])).result.number).toBe("0x1");
      expect((await call("eth_getUncleCountByBlockHash", [b1])).result).toBe("0x0");
      expect((await call("eth_getUncleCountByBlockNumber", ["0x1"])).result).toBe("0x0");
      expect((await call("eth_getUncleByBlockHashAndIndex", [b1, "0x0"])).result).toBeNull();
      expect((await call("eth_getUncleByBlockNumberAndIndex", ["0x1", "0x0"])).result).toBeNull();
    });

    test("default: transactions by location and receipts", async () => {
      const b1 = chain.block(1);
      const b2 = chain.block(2);
      const h = hex(b1.hash);
      for (let i = 0; i < 3; i++) {
        const byHashIdx = ok(
          "eth_getTransactionByBlockHashAndIndex",
          await call("eth_getTransactionByBlockHashAndIndex", [h, toQuantity(i)]),
        );
        const byNumIdx = ok(
          "eth_getTransactionByBlockNumberAndIndex",
          await call("eth_getTransactionByBlockNumberAndIndex", ["0x1", toQuantity(i)]),
        );
        expect(byHashIdx).toEqual(byNumIdx);
        const byHash = ok("eth_getTransactionByHash", await call("eth_getTransactionByHash", [byHashIdx.hash]));
        expect(byHash).toEqual(byHashIdx);
        expect(byHash.blockTimestamp).toBe(toQuantity(b1.timestamp));
        const receipt = ok("eth_getTransactionReceipt", await call("eth_getTransactionReceipt", [byHash.hash]));
        expect(receipt.blockHash).toBe(h);
        expect(receipt.transactionIndex).toBe(toQuantity(i));
      }
      const legacy = (await call("eth_getTransactionByBlockNumberAndIndex", ["0x1", "0x0"])).result;
      expect(legacy.chainId).toBe(toQuantity(CHAIN_ID));
      expect(legacy.yParity).toBeUndefined();
      expect(BigInt(legacy.v)).toBeGreaterThanOrEqual(CHAIN_ID * 2n + 35n);
      const receipts = ok("eth_getBlockReceipts", await call("eth_getBlockReceipts", ["0x2"]));
      expect(receipts).toHaveLength(2);
      expect(receipts[0].contractAddress).toMatch(/^0x[0-9a-f]{40}$/);
      expect(receipts[0].to).toBeNull();
      expect(BigInt(receipts[1].cumulativeGasUsed)).toBe(BigInt(receipts[0].gasUsed) + BigInt(receipts[1].gasUsed));
      ok("eth_getBlockReceipts", await call("eth_getBlockReceipts", [{ blockHash: hex(b2.hash) }]));
      const logs = (await call("eth_getTransactionLogs", [receipts[1].transactionHash])).result;
      expect(logs).toHaveLength(1);
      expect(logs[0].topics[0]).toBe(hex(TRANSFER_TOPIC));
    });

    test("error: bad block numbers and hashes", async () => {
      err(
        await call("eth_getBlockByNumber", ["0x01", false]),
        -32602,
        "invalid argument 0: hex number with leading zero digits",
      );
      err(await call("eth_getBlockByNumber", ["1", false]), -32602, /invalid argument 0: unknown block "1"/);
      err(await call("eth_getBlockByNumber", [1, false]), -32602, /invalid argument 0: block must be a JSON string/);
      err(await call("eth_getBlockByNumber", ["0x1"]), -32602, "missing value for required argument 1");
      err(
        await call("eth_getBlockByNumber", ["0x1", "yes"]),
        -32602,
        /json: cannot unmarshal string into Go value of type bool/,
      );
      err(
        await call("eth_getBlockByHash", ["0xabc", false]),
        -32602,
        "invalid argument 0: json: cannot unmarshal hex string of odd length into Go value of type common.Hash",
      );
      err(await call("eth_getTransactionByBlockNumberAndIndex", ["0x1", "0x"]), -32602, /hex string "0x"/);
    });
  });

  describe("eth: sending and signing", () => {
    test("default: eth_sendRawTransaction returns the keccak hash", async () => {
      const key = chain.keys[1];
      if (key === undefined) throw new TypeError("no key");
      const nonce = BigInt((await call("eth_getTransactionCount", [a1, "pending"])).result);
      const { raw, tx } = signTx({ type: 0, nonce, gasPrice: 2n * GWEI, gasLimit: 30000n, to: ECHO }, key);
      expect(ok("eth_sendRawTransaction", await call("eth_sendRawTransaction", [hex(raw)]))).toBe(hex(tx.hash()));
      await chain.mine();
    });

    test("error: eth_sendRawTransaction rejections", async () => {
      const key = chain.keys[1];
      if (key === undefined) throw new TypeError("no key");
      const unprotected = signUnprotectedLegacy(
        { nonce: 0n, gasPrice: GWEI, gasLimit: 21000n, to: ECHO, value: 0n },
        key,
      );
      err(
        await call("eth_sendRawTransaction", [hex(unprotected)]),
        -32000,
        "only replay-protected (EIP-155) transactions allowed over RPC",
      );
      const stale = signTx({ type: 0, nonce: 0n, gasPrice: 2n * GWEI, gasLimit: 21000n, to: ECHO }, key);
      err(
        await call("eth_sendRawTransaction", [hex(stale.raw)]),
        -32000,
        /^nonce too low: next nonce \d+, tx nonce 0$/,
      );
      const costly = signTx({ type: 0, nonce: 0n, gasPrice: 10n ** 15n, gasLimit: 21000n, to: ECHO }, key);
      err(
        await call("eth_sendRawTransaction", [hex(costly.raw)]),
        -32000,
        /^tx fee \(21\.00 ether\) exceeds the configured cap \(1\.00 ether\)$/,
      );
      err(await call("eth_sendRawTransaction", ["0x03c0"]), -32000, "transaction type not supported");
      err(await call("eth_sendRawTransaction", ["0xc0"]), -32000, /rlp: expected 9 fields/);
      err(await call("eth_sendRawTransaction", ["0x"]), -32000, "typed transaction too short");
      err(await call("eth_sendRawTransaction", ["0xf"]), -32602, /hex string of odd length/);
      err(await call("eth_sendRawTransaction", ["c0"]), -32602, /hex string without 0x prefix/);
    });

    test("behavior: unprotected txs are accepted when allowed", async () => {
      const open = await chain.startRpc({ allowUnprotectedTxs: true });
      try {
        const key = chain.keys[0];
        if (key === undefined) throw new TypeError("no key");
        const nonce = BigInt((await rpcCall(open.url, "eth_getTransactionCount", [a0, "pending"])).result);
        const raw = signUnprotectedLegacy({ nonce, gasPrice: GWEI, gasLimit: 30000n, to: ECHO, value: 1n }, key);
        const r = await rpcCall(open.url, "eth_sendRawTransaction", [hex(raw)]);
        expect(r.error).toBeUndefined();
        expect(r.result).toBe(hex(keccak_256(raw)));
        await chain.mine();
      } finally {
        await open.close();
      }
    });

    test("default: eth_accounts, eth_sendTransaction, eth_sign, eth_signTypedData", async () => {
      const accounts = ok("eth_accounts", await call("eth_accounts"));
      expect(accounts.slice(0, 3)).toEqual([a0, a1, a2]);
      const hash = ok("eth_sendTransaction", await call("eth_sendTransaction", [{ from: a0, to: a1, value: "0x10" }]));
      const pendingTx = (await call("eth_getTransactionByHash", [hash])).result;
      expect(pendingTx.from).toBe(a0);
      expect(pendingTx.type).toBe("0x2");
      expect(pendingTx.gas).toBe("0x5208");
      const legacyHash = ok(
        "eth_sendTransaction",
        await call("eth_sendTransaction", [{ from: a0, to: a1, gasPrice: "0x77359400", gas: "0x5208" }]),
      );
      expect((await call("eth_getTransactionByHash", [legacyHash])).result.type).toBe("0x0");
      await chain.mine();
      expect((await call("eth_getTransactionReceipt", [hash])).result.status).toBe("0x1");

      const sig = ok("eth_sign", await call("eth_sign", [a0, "0xdeadbeef"]));
      expect(["1b", "1c"]).toContain(sig.slice(-2));
      const recovered = await call("personal_ecRecover", ["0xdeadbeef", sig]);
      expect(recovered.result).toBe(a0);

      const typed = {
        types: {
          EIP712Domain: [
            { name: "name", type: "string" },
            { name: "chainId", type: "uint256" },
          ],
          Mail: [
            { name: "to", type: "address" },
            { name: "contents", type: "string" },
          ],
        },
        primaryType: "Mail",
        domain: { name: "cometh", chainId: 262144 },
        message: { to: a1, contents: "hi" },
      };
      const typedSig = (await call("eth_signTypedData", [a0, typed])).result;
      expect(typedSig).toMatch(/^0x[0-9a-f]{130}$/);
      // Anvil's names are a dev chain's (test/integration/devChain.test.ts): -32601 here, as Cosmos EVM.
      err(await call("eth_signTypedData_v4", [a0, JSON.stringify(typed)]), -32601, /needs a dev chain/);
      err(await call("eth_signTransaction", [{ from: a0, to: a1 }]), -32601, /needs a dev chain/);
    });

    test("error: keyring errors", async () => {
      err(await call("eth_sendTransaction", [{ to: a1 }]), -32000, /missing "from"/);
      err(await call("eth_sign", [hex(ECHO), "0x00"]), -32000, /unknown account/);
      err(
        await call("eth_signTypedData", [a0, { types: {} }]),
        -32602,
        /invalid argument 1: primaryType must be a string/,
      );
      err(await call("eth_sendTransaction", [{ from: a0, to: a1, chainId: "0x1" }]), -32000, /chainId does not match/);
      err(await call("eth_fillTransaction", [{ from: a0 }]), -32601, /eth_fillTransaction is not implemented/);
      err(await call("eth_resend", [{ from: a0, to: a1 }]), -32000, "missing transaction nonce in transaction spec");
      err(await call("eth_resend", [{ from: a0, to: a1, nonce: "0x99" }]), -32000, /not found in the mempool/);
    });

    test("default: eth_resend signs the replacement; the node's mempool keeps the pending tx", async () => {
      const nonce = (await call("eth_getTransactionCount", [a0, "pending"])).result;
      const first = (
        await call("eth_sendTransaction", [{ from: a0, to: a1, gasPrice: "0x77359400", gas: "0x5208", nonce }])
      ).result;
      // The replacement goes to CheckTx, which refuses a second tx for a pending nonce (no replacement).
      err(
        await call("eth_resend", [{ from: a0, to: a1, nonce }, "0x9502f900", "0x5300"]),
        -32000,
        /^replacement transaction underpriced: nonce \d+ of 0x[0-9a-f]{40} is already pending and this mempool does not replace txs/,
      );
      const tx = (await call("eth_getTransactionByHash", [first])).result;
      expect(tx).toMatchObject({ gasPrice: "0x77359400", gas: "0x5208", nonce, blockHash: null });
      await chain.mine();
    });

    test("behavior: keyring gated by allow-insecure-unlock and absent keyring", async () => {
      const { keyring: _keyring, tracer: _tracer, ...withoutKeys } = chain.services;
      const locked = await chain.startRpc({ allowInsecureUnlock: false });
      const bare = await chain.startRpc({}, { services: withoutKeys });
      try {
        err(await rpcCall(locked.url, "eth_accounts"), -32000, "account unlock with HTTP access is forbidden");
        expect((await rpcCall(bare.url, "eth_accounts")).result).toEqual([]);
        err(await rpcCall(bare.url, "eth_sign", [hex(ECHO), "0x00"]), -32000, /no dev keyring/);
        err(
          await rpcCall(bare.url, "debug_traceTransaction", [UNKNOWN_HASH]),
          -32000,
          "tracing is not available on this node",
        );
      } finally {
        await locked.close();
        await bare.close();
      }
    });
  });

  describe("eth: logs and filters", () => {
    test("default: eth_getLogs by range, address, topics and block hash", async () => {
      const all = ok("eth_getLogs", await call("eth_getLogs", [{ fromBlock: "earliest", toBlock: "latest" }]));
      expect(all.length).toBeGreaterThanOrEqual(2);
      const byTopic = ok(
        "eth_getLogs",
        await call("eth_getLogs", [
          { fromBlock: "0x0", topics: [hex(TRANSFER_TOPIC), null, [hex(new Uint8Array(32)), all[0].topics[2]]] },
        ]),
      );
      expect(byTopic.map((l: { transactionHash: string }) => l.transactionHash)).toEqual([all[0].transactionHash]);
      const byHash = ok(
        "eth_getLogs",
        await call("eth_getLogs", [{ blockHash: all[1].blockHash, address: [hex(LOGGER)] }]),
      );
      expect(byHash).toHaveLength(1);
      expect(ok("eth_getLogs", await call("eth_getLogs", [{ fromBlock: "0x0", address: hex(ECHO) }]))).toEqual([]);
      expect(ok("eth_getLogs", await call("eth_getLogs", [{}]))).toBeInstanceOf(Array);
    });

    test("error: eth_getLogs ranges and criteria", async () => {
      err(await call("eth_getLogs", [{ fromBlock: "0x2", toBlock: "0x1" }]), -32602, "invalid block range params");
      err(await call("eth_getLogs", [{ toBlock: "0x999" }]), -32602, "block range extends beyond current head block");
      err(await call("eth_getLogs", [{ fromBlock: "pending" }]), -32000, "pending logs are not supported");
      err(await call("eth_getLogs", [{ blockHash: UNKNOWN_HASH }]), -32000, "unknown block");
      err(
        await call("eth_getLogs", [{ blockHash: UNKNOWN_HASH, fromBlock: "0x1" }]),
        -32602,
        "invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other",
      );
      err(await call("eth_getLogs", [{ address: "0x12" }]), -32602, /invalid address: hex has invalid length 1/);
      err(await call("eth_getLogs", [{ address: [1] }]), -32602, "invalid argument 0: non-string address at index 0");
      err(await call("eth_getLogs", [{ address: 5 }]), -32602, "invalid argument 0: invalid addresses in query");
      err(
        await call("eth_getLogs", [{ topics: [null, null, null, null, null] }]),
        -32602,
        "invalid argument 0: exceed max topics",
      );
      err(await call("eth_getLogs", [{ topics: ["0x12"] }]), -32602, /expected 32 for topic/);
      err(await call("eth_getLogs", [{ topics: [5] }]), -32602, "invalid argument 0: invalid topic(s)");
    });

    test("default: polling filters", async () => {
      const blockFilter = ok("eth_newBlockFilter", await call("eth_newBlockFilter"));
      expect(blockFilter).toMatch(/^0x[0-9a-f]{1,32}$/);
      const logFilter = ok("eth_newFilter", await call("eth_newFilter", [{ address: hex(LOGGER) }]));
      const pendingFilter = ok("eth_newPendingTransactionFilter", await call("eth_newPendingTransactionFilter"));
      const key = chain.keys[2];
      if (key === undefined) throw new TypeError("no key");
      const nonce = BigInt((await call("eth_getTransactionCount", [a2, "pending"])).result);
      const { tx, raw } = signTx({ type: 0, nonce, gasPrice: 2n * GWEI, gasLimit: 60000n, to: LOGGER, value: 3n }, key);
      await call("eth_sendRawTransaction", [hex(raw)]);
      const block = await chain.mine();
      await f.rpc.runtime.feed.idle();
      expect(ok("eth_getFilterChanges", await call("eth_getFilterChanges", [blockFilter]))).toEqual([hex(block.hash)]);
      expect(ok("eth_getFilterChanges", await call("eth_getFilterChanges", [blockFilter]))).toEqual([]);
      expect(ok("eth_getFilterChanges", await call("eth_getFilterChanges", [pendingFilter]))).toEqual([hex(tx.hash())]);
      const logs = ok("eth_getFilterChanges", await call("eth_getFilterChanges", [logFilter]));
      expect(logs.map((l: { transactionHash: string }) => l.transactionHash)).toEqual([hex(tx.hash())]);
      const again = ok("eth_getFilterLogs", await call("eth_getFilterLogs", [logFilter]));
      expect(again).toHaveLength(1);
      expect(ok("eth_uninstallFilter", await call("eth_uninstallFilter", [blockFilter]))).toBe(true);
      expect(ok("eth_uninstallFilter", await call("eth_uninstallFilter", [blockFilter]))).toBe(false);
      err(await call("eth_getFilterChanges", [blockFilter]), -32000, "filter not found");
      err(await call("eth_getFilterLogs", [pendingFilter]), -32000, "filter not found");
      await call("eth_uninstallFilter", [logFilter]);
      await call("eth_uninstallFilter", [pendingFilter]);
    });
  });

  describe("eth: subscriptions over HTTP", () => {
    test.runIf(transport === "http")("error: eth_subscribe needs a WebSocket", async () => {
      err(await call("eth_subscribe", ["newHeads"]), -32601, "notifications not supported");
      err(await call("eth_unsubscribe", ["0x1"]), -32000, "subscription not found");
    });
  });

  describe("web3, net, rpc", () => {
    test("default: web3_clientVersion, web3_sha3", async () => {
      expect((await call("web3_clientVersion")).result).toMatch(/^cometh\/v0\.1\.0\/[a-z0-9]+-[a-z0-9]+\/node\d+/);
      expect((await call("web3_sha3", ["0x68656c6c6f20776f726c64"])).result).toBe(
        "0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad",
      );
      err(await call("web3_sha3", ["hello"]), -32602, /hex string without 0x prefix/);
    });

    test("default: net_version, net_peerCount, net_listening, rpc_modules", async () => {
      expect(ok("net_version", await call("net_version"))).toBe("262144");
      // A lone node has no peers.
      expect((await call("net_peerCount")).result).toBe("0x0");
      expect((await call("net_listening")).result).toBe(true);
      const modules = (await call("rpc_modules")).result;
      expect(Object.keys(modules).sort()).toEqual([...NAMESPACE_NAMES, "rpc"].sort());
    });
  });

  describe("txpool", () => {
    test("default: status, content, contentFrom, inspect", async () => {
      const key = chain.keys[2];
      if (key === undefined) throw new TypeError("no key");
      const nonce = BigInt((await call("eth_getTransactionCount", [a2, "pending"])).result);
      const send = (n: bigint) =>
        call("eth_sendRawTransaction", [
          hex(signTx({ type: 0, nonce: n, gasPrice: 2n * GWEI, gasLimit: 30000n, to: ECHO }, key).raw),
        ]);
      await send(nonce);
      await send(nonce + 5n);
      const status = ok("txpool_status", await call("txpool_status"));
      expect(status).toEqual({ pending: "0x1", queued: "0x1" });
      const content = ok("txpool_content", await call("txpool_content"));
      const [sender] = Object.keys(content.pending);
      expect(sender?.toLowerCase()).toBe(a2);
      expect(sender).not.toBe(a2);
      expect(Object.keys(content.pending[sender as string])).toEqual([nonce.toString()]);
      expect(Object.keys(content.queued[sender as string])).toEqual([(nonce + 5n).toString()]);
      const mine = ok("txpool_contentFrom", await call("txpool_contentFrom", [a2]));
      expect(Object.keys(mine.queued)).toEqual([(nonce + 5n).toString()]);
      const inspect = (await call("txpool_inspect")).result;
      expect(inspect.pending[sender as string][nonce.toString()]).toBe(
        `${hex(ECHO)}: 0 wei + 30000 gas × ${2n * GWEI} wei`,
      );
      // Fill the gap, so that the queued tx gets in too.
      for (let n = nonce + 1n; n < nonce + 5n; n++) await send(n);
      await mineUntilEmpty();
    });
  });

  describe("debug", () => {
    test("default: traces", async () => {
      const b1 = chain.block(1);
      const txHash = hex(b1.transactions[0]?.hash as Uint8Array);
      // Block 2's creation runs PUSH1 0x80, PUSH1 0x40, SSTORE.
      const creation = hex(chain.block(2).transactions[0]?.hash as Uint8Array);
      const struct = ok("debug_traceTransaction", await call("debug_traceTransaction", [creation]));
      expect(struct.structLogs[0]).toMatchObject({ pc: 0, op: "PUSH1", gasCost: 3, depth: 1 });
      expect(struct.structLogs[1]).toMatchObject({ pc: 2, op: "PUSH1", gas: struct.structLogs[0].gas - 3 });
      expect(struct.structLogs[2].op).toBe("SSTORE");
      expect(struct.structLogs[2].storage).toBeDefined();
      const noStack = (await call("debug_traceTransaction", [creation, { disableStack: true, limit: 1 }])).result;
      expect(noStack.structLogs).toHaveLength(1);
      expect(noStack.structLogs[0].stack).toBeUndefined();
      const callTrace = (await call("debug_traceTransaction", [txHash, { tracer: "callTracer" }])).result;
      expect(callTrace).toMatchObject({ type: "CALL", from: a0, gas: "0x5208" });
      const top = (
        await call("debug_traceTransaction", [txHash, { tracer: "callTracer", tracerConfig: { onlyTopCall: true } }])
      ).result;
      expect(top.calls).toBeUndefined();
      const block = ok("debug_traceBlockByNumber", await call("debug_traceBlockByNumber", ["0x1"]));
      expect(block).toHaveLength(3);
      expect(block[0].txHash).toBe(txHash);
      ok("debug_traceBlockByHash", await call("debug_traceBlockByHash", [hex(b1.hash)]));
      const traced = (await call("debug_traceCall", [{ from: a0, to: hex(ECHO) }, "latest", { tracer: "callTracer" }]))
        .result;
      expect(traced.type).toBe("CALL");
      // blockOverrides reach the EVM: NUMBER, TIMESTAMP, COINBASE, GASLIMIT, PREVRANDAO (the struct
      // logger names 0x44 DIFFICULTY, as geth does), BASEFEE, BLOBBASEFEE as seven words.
      const env = "0x00000000000000000000000000000000000000e7";
      const code = `0x${["43", "42", "41", "45", "44", "48", "4a"].map((op, i) => `${op}60${(i * 32).toString(16).padStart(2, "0")}52`).join("")}60e06000f3`;
      const blockOverrides = {
        number: "0x1234",
        time: "0x7000000",
        feeRecipient: "0x00000000000000000000000000000000000000fe",
        gasLimit: "0x2000000",
        prevRandao: `0x${"5a".repeat(32)}`,
        baseFeePerGas: "0x7",
        blobBaseFee: "0x3",
      };
      const envCall = { from: a0, to: env, gas: "0x186a0", maxFeePerGas: "0x9", maxPriorityFeePerGas: "0x1" };
      const cfg = { tracer: "callTracer", stateOverrides: { [env]: { code } }, blockOverrides };
      const words = ok("debug_traceCall", await call("debug_traceCall", [envCall, "latest", cfg])).output.slice(2);
      expect(words.match(/.{64}/g)).toEqual(
        ["1234", "7000000", "fe", "2000000", "5a".repeat(32), "7", "3"].map((w) => w.padStart(64, "0")),
      );
      const logged = ok(
        "debug_traceCall",
        await call("debug_traceCall", [envCall, "latest", { ...cfg, tracer: undefined }]),
      );
      expect(logged.structLogs.map((l: { op: string }) => l.op)).toContain("DIFFICULTY");
      err(
        await call("debug_traceCall", [envCall, "latest", { blockOverrides: { beaconRoot: `0x${"11".repeat(32)}` } }]),
        -32000,
        'block override "beaconRoot" is not supported for this RPC method',
      );
      // An RLP block whose header number (field 8) is 1.
      const rlp = hex(RLP.encode([[0, 0, 0, 0, 0, 0, 0, 0, 1], [], []]));
      expect((await call("debug_traceBlock", [rlp])).result).toHaveLength(3);
    });

    test("error: trace errors", async () => {
      err(await call("debug_traceTransaction", [UNKNOWN_HASH]), -32000, "transaction not found");
      err(await call("debug_traceBlockByNumber", ["0x0"]), -32000, "genesis is not traceable");
      err(await call("debug_traceBlockByNumber", ["0x999"]), -32000, /not found/);
      err(
        await call("debug_traceTransaction", [UNKNOWN_HASH, { tracer: "flatCallTracer" }]),
        -32602,
        /tracer "flatCallTracer" is not supported; use one of "callTracer", "prestateTracer", "4byteTracer", "noopTracer" or omit the tracer/,
      );
      err(
        await call("debug_traceTransaction", [
          UNKNOWN_HASH,
          { tracer: "prestateTracer", tracerConfig: { diffMode: "yes" } },
        ]),
        -32602,
        /prestateTracerConfig\.diffMode/,
      );
      err(await call("debug_traceTransaction", [UNKNOWN_HASH, { timeout: "soon" }]), -32602, /invalid duration/);
      err(await call("debug_getRawBlock", ["0x1"]), -32601, /is not implemented/);
      err(await call("debug_getRawReceipts", ["0x1"]), -32601, /is not implemented/);
    });

    test("behavior: debug_setGCPercent sets V8's heap growth (GOGC's meaning), starting from the process's flag", () => {
      const flags: string[] = [];
      const state = newProfilerState();
      state.gcPercent = startingHeapGrowthPercent(["--max-semi-space-size=4", "--heap-growing-percent=80"]) ?? 100;
      expect(setGcPercent(state, 50, (f) => flags.push(f))).toBe(80);
      expect(setGcPercent(state, 0, (f) => flags.push(f))).toBe(50);
      expect(setGcPercent(state, -1, (f) => flags.push(f))).toBe(0);
      expect(setGcPercent(state, 100, (f) => flags.push(f))).toBe(-1);
      expect(flags).toEqual([
        "--heap-growing-percent=50",
        "--heap-growing-percent=1", // GOGC=0: the smallest factor V8 takes
        "--heap-growing-percent=0", // GOGC=off: V8's own choice
        "--heap-growing-percent=100",
      ]);
      expect(startingHeapGrowthPercent([])).toBeUndefined();
      expect(startingHeapGrowthPercent(["--heap_growing_percent=30"])).toBe(30);
    });

    test("default: profiling", async () => {
      expect((await call("debug_setGCPercent", [50])).result).toBe(100);
      expect((await call("debug_setGCPercent", [100])).result).toBe(50);
      expect((await call("debug_memStats")).result.HeapAlloc).toBeGreaterThan(0);
      expect((await call("debug_gcStats")).result).toHaveProperty("NumGC");
      expect((await call("debug_freeOSMemory")).result).toBeNull();
      expect((await call("debug_setBlockProfileRate", [1])).result).toBeNull();
      expect((await call("debug_setMutexProfileFraction", [1])).result).toBeNull();
      expect(typeof (await call("debug_stacks")).result).toBe("string");
      expect(typeof (await call("debug_printBlock", ["0x1"])).result).toBe("string");
      err(await call("debug_writeBlockProfile", ["/tmp/x"]), -32000, /is not supported: Node.js has no equivalent/);
      err(await call("debug_stopCPUProfile"), -32000, "CPU profiling not in progress");
      err(await call("debug_setGCPercent", ["0x10"]), -32602, /cannot unmarshal string into Go value of type int/);
    });

    test.runIf(transport === "http")("default: CPU profiles and heap snapshots are written to files", async () => {
      const dir = mkdtempSync(join(tmpdir(), "cometh-prof-"));
      try {
        expect((await call("debug_startCPUProfile", [join(dir, "a.cpuprofile")])).result).toBeNull();
        err(
          await call("debug_startCPUProfile", [join(dir, "b.cpuprofile")]),
          -32000,
          "CPU profiling already in progress",
        );
        expect((await call("debug_stopCPUProfile")).result).toBeNull();
        expect(JSON.parse(readFileSync(join(dir, "a.cpuprofile"), "utf8"))).toHaveProperty("nodes");
        expect((await call("debug_cpuProfile", [join(dir, "c.cpuprofile"), 0])).result).toBeNull();
        expect(existsSync(join(dir, "c.cpuprofile"))).toBe(true);
        expect((await call("debug_writeMemProfile", [join(dir, "heap.heapsnapshot")])).result).toBeNull();
        expect(existsSync(join(dir, "heap.heapsnapshot"))).toBe(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test("error: profiling disabled", async () => {
      const off = await chain.startRpc({ enableProfiling: false });
      try {
        err(await rpcCall(off.url, "debug_memStats"), -32000, "profiling disabled in the debug namespace");
        err(await rpcCall(off.url, "debug_setGCPercent", [10]), -32000, "profiling disabled in the debug namespace");
      } finally {
        await off.close();
      }
    });
  });

  describe("personal", () => {
    test("default: keyring methods", async () => {
      expect((await call("personal_listAccounts")).result.slice(0, 3)).toEqual([a0, a1, a2]);
      const imported = (await call("personal_importRawKey", [`${"11".repeat(32)}`, "pw"])).result;
      expect(imported).toMatch(/^0x[0-9a-f]{40}$/);
      const created = (await call("personal_newAccount", ["pw"])).result;
      expect((await call("personal_listAccounts")).result).toEqual(expect.arrayContaining([imported, created]));
      expect((await call("personal_unlockAccount", [a0, "pw", "0x10"])).result).toBe(false);
      expect((await call("personal_lockAccount", [a0])).result).toBe(false);
      const sig = (await call("personal_sign", ["0x68656c6c6f", a1, "pw"])).result;
      expect((await call("personal_ecRecover", ["0x68656c6c6f", sig])).result).toBe(a1);
      expect((await call("personal_listWallets")).result).toBeNull();
      const hash = (await call("personal_sendTransaction", [{ from: a1, to: a0, value: "0x1" }, "pw"])).result;
      expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
      await chain.mine();
    });

    test("error: keyring errors", async () => {
      err(await call("personal_importRawKey", ["0x12", "pw"]), -32602, /private key must be 32 bytes/);
      err(await call("personal_ecRecover", ["0x00", "0x1234"]), -32000, "signature must be 65 bytes long");
      err(
        await call("personal_ecRecover", ["0x00", `0x${"11".repeat(64)}05`]),
        -32000,
        "invalid Ethereum signature (V is not 27 or 28)",
      );
      err(await call("personal_initializeWallet", ["x"]), -32000, "smartcard wallet not supported yet");
      err(await call("personal_unpair", ["x", "y"]), -32000, "smartcard wallet not supported yet");
    });
  });

  describe("admin and miner", () => {
    test("default: admin", async () => {
      const node = chain.node.node;
      const bound = node.p2p.listenAddress();
      const info = (await call("admin_nodeInfo")).result;
      expect(info).toMatchObject({
        id: node.nodeKey.id,
        enode: `${node.nodeKey.id}@${bound.host}:${bound.port}`,
        ip: bound.host,
        ports: { listener: bound.port },
        listenAddr: `tcp://${bound.host}:${bound.port}`,
      });
      // Peers come from the node's p2p switch: a lone node has none.
      expect((await call("admin_peers")).result).toEqual([]);
      expect((await call("admin_datadir")).result).toBe(chain.node.home);
      // A dial is queued (to a closed loopback port: it fails in the background).
      const url = `${"ab".repeat(20)}@127.0.0.1:1`;
      expect((await call("admin_addPeer", [url])).result).toBe(true);
      err(await call("admin_addTrustedPeer", ["nope"]), -32000, /invalid peer url "nope" \(want id@host:port\)/);
      err(await call("admin_addPeer", ["ff@10.0.0.3:26656"]), -32000, /invalid peer url/);
      expect((await call("admin_removePeer", [url])).result).toBe(true);
      expect((await call("admin_removeTrustedPeer", [url])).result).toBe(true);
      err(await call("admin_startHTTP"), -32000, /configured in app.toml/);
      err(await call("admin_stopWS"), -32000, /configured in app.toml/);
      err(await call("admin_exportChain", ["/tmp/x"]), -32601, /is not implemented/);
    });

    test("default: miner", async () => {
      // The node's services have no miner control.
      expect((await call("miner_setEtherbase", [a0])).result).toBe(false);
      expect((await call("miner_setGasPrice", ["0x1"])).result).toBe(false);
      expect((await call("miner_getHashrate")).result).toBe(0);
      expect((await call("miner_setGasLimit", ["0x1"])).result).toBe(false);
      expect((await call("miner_stop")).result).toBeNull();
      err(await call("miner_start"), -32000, "unsupported rpc function: miner_start");
      err(await call("miner_setExtra", ["x"]), -32000, "unsupported rpc function: miner_setExtra");
    });
  });

  describe("unknown, disabled and not-implemented methods", () => {
    test("error: -32601 with the reason", async () => {
      err(await call("eth_coinbase"), -32601, "the method eth_coinbase does not exist/is not available");
      err(await call("foo"), -32601, "the method foo does not exist/is not available");
      err(await call("trace_block", ["0x1"]), -32601, /the method trace_block is not implemented/);
      // Otterscan's methods are served on dev chains only; trace_ answers as Cosmos EVM does elsewhere.
      err(
        await call("trace_transaction", ["0x1"]),
        -32601,
        /the method trace_transaction is not implemented: .*dev chains/,
      );
      err(await call("trace_filter", [{}]), -32601, /the method trace_filter is not implemented/);
      err(await call("ots_getApiLevel"), -32601, /ots_getApiLevel does not exist\/is not available: .*dev chain/);
      err(await call("erigon_getHeaderByNumber", ["latest"]), -32601, /need a dev chain/);
      err(await call("ots_nothing"), -32601, "the method ots_nothing does not exist/is not available");
      err(await call("engine_newPayloadV3"), -32601, /the method engine_newPayloadV3 is not implemented/);
      err(await call("rpc_foo"), -32601, "the method rpc_foo does not exist/is not available");
    });
  });
});

describe("namespaces switched off by [json-rpc] api", () => {
  test("error: a disabled namespace answers -32601 naming it", async () => {
    const f = await chain.startRpc({ api: ["eth", "net", "web3"] });
    try {
      for (const m of ["txpool_status", "debug_memStats", "personal_listAccounts", "admin_nodeInfo", "miner_stop"]) {
        const ns = m.split("_")[0];
        err(
          await rpcCall(f.url, m),
          -32601,
          `the method ${m} does not exist/is not available: the ${ns} namespace is not enabled; add it to [json-rpc] api in app.toml`,
        );
      }
      expect((await rpcCall(f.url, "rpc_modules")).result).toEqual({ eth: "1.0", web3: "1.0", net: "1.0", rpc: "1.0" });
      expect((await rpcCall(f.url, "net_version")).result).toBe("262144");
    } finally {
      await f.close();
    }
  });
});

describe("OpenRPC coverage", () => {
  test("behavior: every served eth_ method of the execution-apis had its result validated", () => {
    const all = new Set(NAMESPACE_NAMES);
    const served = [...spec.methods.keys()].filter((name) => {
      if (!/^(eth|net|txpool)_|^debug_trace/.test(name)) return false;
      try {
        // A guarded method is a dev chain's (this chain is not one): test/integration/devChain.test.ts
        // checks its answers (eth_signTransaction answers Anvil's bytes, not the schema's {raw, tx}).
        if (findMethod(name, all).guard !== undefined) return false;
      } catch {
        return false;
      }
      return name !== "eth_fillTransaction";
    });
    expect(served.length).toBeGreaterThan(30);
    expect(served.filter((m) => !validated.has(m))).toEqual([]);
  });
});
