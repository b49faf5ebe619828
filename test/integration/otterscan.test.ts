import { type Hex, keccak256, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FACTORY, initcode, REVERT_REASON } from "../gethdiff/contracts.js";
import { type InProcessEvmNode, startInProcessDevNode } from "./inProcessNode.js";

/**
 * Every call Otterscan (v2.10, API level 8) makes, against a dev chain with contracts: a top-level
 * deploy, internal transfers (one of them in a frame that reverts), an internal CREATE, a CREATE2
 * child that self-destructs in the tx that made it, a reverted tx with a reason, and contracts set by a
 * cheat. Each answer is checked against what the chain did. Otterscan's own page is not run: it is
 * no npm package (docs/ethereum-rpc.md "Otterscan on dev chains").
 */

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

let n: InProcessEvmNode;
let id = 0;

async function rpc(method: string, params: unknown[] = []): Promise<RpcAnswer> {
  const res = await fetch(n.evmHttpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
  });
  return (await res.json()) as RpcAnswer;
}

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
async function ok(method: string, params: unknown[] = []): Promise<any> {
  const r = await rpc(method, params);
  expect(r.error, `${method} answered an error`).toBeUndefined();
  return r.result;
}

const pad = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Hex;
const A1 = pad(0xa1);
const A2 = pad(0xa2);
const A4 = pad(0xa4);
const SPLITTER = pad(0x5101);
const REV = pad(0x5102);
const REVERTER = pad(0x5103);
const body = (a: Hex) => a.slice(2);

/** Sends half its value to A1, then calls REV (which sends 1 wei to A2 and reverts); slot 0 = callvalue. */
const SPLITTER_CODE = `0x5f5f5f5f60023404 73${body(A1)} 5af150 5f5f5f5f5f 73${body(REV)} 5af150 345f5500`.replace(
  / /g,
  "",
);
/** Sends 1 wei to A2, then reverts without data. */
const REV_CODE = `0x5f5f5f5f6001 73${body(A2)} 5af150 5f5ffd`.replace(/ /g, "");
/** CREATE of a child whose runtime is one STOP byte; returns the child's address. */
const MAKER = "6008 6011 5f 39 6008 5f 5f f0 5f 52 6020 5f f3 6000 5f 53 6001 5f f3".replace(/ /g, "");

let account0: Hex;
let deployTx: Hex;
let maker: Hex;
let splitTx: Hex;
let makeTx: Hex;
let child: Hex;
let factory: Hex;
let factoryTx: Hex;
let revertTx: Hex;
let plainTx: Hex;

async function send(tx: Record<string, string>): Promise<Hex> {
  return (await ok("eth_sendTransaction", [{ from: account0, ...tx }])) as Hex;
}

// biome-ignore lint/suspicious/noExplicitAny: receipts are inspected freely in tests
async function receipt(hash: Hex): Promise<any> {
  return ok("eth_getTransactionReceipt", [hash]);
}

beforeAll(async () => {
  n = await startInProcessDevNode();
  account0 = ((await ok("eth_accounts")) as Hex[])[0] as Hex;
  deployTx = await send({ data: initcode(MAKER) });
  maker = (await receipt(deployTx)).contractAddress;
  await ok("anvil_setCode", [SPLITTER, SPLITTER_CODE]);
  await ok("anvil_setCode", [REV, REV_CODE]);
  await ok("anvil_setBalance", [REV, "0xa"]);
  await ok("anvil_setCode", [REVERTER, `0x${REVERT_REASON}`]);
  splitTx = await send({ to: SPLITTER, value: "0x64", gas: "0x30000" });
  makeTx = await send({ to: maker, gas: "0x30000" });
  // The address the CREATE made: what the same call returns on the state just before it.
  const makeBlock = Number((await receipt(makeTx)).blockNumber);
  const ret = (await ok("eth_call", [{ from: account0, to: maker }, toHex(makeBlock - 1)])) as string;
  child = `0x${ret.slice(26)}`;
  const fDeploy = await send({ data: initcode(FACTORY) });
  factory = (await receipt(fDeploy)).contractAddress;
  factoryTx = await send({ to: factory, value: "0x7", data: `0x${"01".padStart(64, "0")}`, gas: "0x40000" });
  revertTx = await send({ to: REVERTER, gas: "0x30000" });
  plainTx = await send({ to: A4, value: "0x5" });
}, 60_000);

afterAll(async () => {
  await n?.close();
});

describe("what Otterscan asks on connecting", () => {
  test("default: ots_getApiLevel is 8; erigon_getHeaderByNumber answers latest and a JSON number", async () => {
    expect(await ok("ots_getApiLevel")).toBe(8);
    const head = await ok("eth_blockNumber");
    const latest = await ok("erigon_getHeaderByNumber", ["latest"]);
    expect(latest.number).toBe(head);
    const byNumber = await ok("erigon_getHeaderByNumber", [Number(head)]);
    expect(byNumber.hash).toBe(latest.hash);
    expect(byNumber.transactions).toBeUndefined();
    expect(await ok("erigon_getHeaderByNumber", [Number(head) + 100])).toBeNull();
    // The genesis, which Otterscan's block pages reach too.
    expect((await ok("erigon_getHeaderByNumber", [0])).number).toBe("0x0");
    const genesis = await ok("ots_getBlockDetails", [0]);
    expect([genesis.block.number, genesis.block.transactionCount, genesis.totalFees]).toEqual(["0x0", 0, "0x0"]);
    expect((await ok("ots_getBlockTransactions", [0, 0, 25])).receipts).toEqual([]);
  });
});

describe("a transaction's page", () => {
  test("default: ots_traceTransaction lists every frame with its depth; STATICCALL and DELEGATECALL carry no value", async () => {
    const entries = await ok("ots_traceTransaction", [splitTx]);
    expect(entries).toEqual([
      { type: "CALL", depth: 0, from: account0, to: SPLITTER, value: "0x64", input: "0x", output: "0x" },
      { type: "CALL", depth: 1, from: SPLITTER, to: A1, value: "0x32", input: "0x", output: "0x" },
      { type: "CALL", depth: 1, from: SPLITTER, to: REV, value: "0x0", input: "0x", output: "0x" },
      { type: "CALL", depth: 2, from: REV, to: A2, value: "0x1", input: "0x", output: "0x" },
    ]);
    const created = await ok("ots_traceTransaction", [factoryTx]);
    expect(created.map((e: { type: string; depth: number }) => [e.type, e.depth])).toEqual([
      ["CALL", 0],
      ["CREATE2", 1],
      ["CALL", 1],
      ["SELFDESTRUCT", 2],
    ]);
  });

  test("default: ots_getInternalOperations: transfers, CREATE, CREATE2 and SELFDESTRUCT, none from a reverted frame", async () => {
    expect(await ok("ots_getInternalOperations", [splitTx])).toEqual([
      { type: 0, from: SPLITTER, to: A1, value: "0x32" },
    ]);
    expect(await ok("ots_getInternalOperations", [makeTx])).toEqual([
      { type: 2, from: maker, to: child, value: "0x0" },
    ]);
    const ops = await ok("ots_getInternalOperations", [factoryTx]);
    expect(ops).toHaveLength(2);
    expect(ops[0]).toMatchObject({ type: 3, from: factory, value: "0x7" });
    expect(ops[1]).toEqual({ type: 1, from: ops[0].to, to: factory, value: "0x7" });
    expect(await ok("ots_getInternalOperations", [plainTx])).toEqual([]);
    expect((await rpc("ots_getInternalOperations", [`0x${"ab".repeat(32)}`])).error?.code).toBe(-32000);
  });

  test("default: ots_getTransactionError gives a reverted tx's revert data, 0x for a successful one", async () => {
    expect((await receipt(revertTx)).status).toBe("0x0");
    const data = (await ok("ots_getTransactionError", [revertTx])) as string;
    expect(data.startsWith("0x08c379a0")).toBe(true);
    expect(
      Buffer.from(data.slice(2 + 8 + 128), "hex")
        .toString("utf8")
        .replace(/\0+$/, ""),
    ).toBe("nope");
    expect(await ok("ots_getTransactionError", [splitTx])).toBe("0x");
    expect(await ok("ots_getTransactionError", [`0x${"ab".repeat(32)}`])).toBeNull();
  });

  test("default: ots_getTransactionBySenderAndNonce finds the sender's tx with that nonce", async () => {
    const tx = await ok("eth_getTransactionByHash", [makeTx]);
    expect(await ok("ots_getTransactionBySenderAndNonce", [account0, Number(tx.nonce)])).toBe(makeTx);
    expect(await ok("ots_getTransactionBySenderAndNonce", [account0, 0])).toBe(deployTx);
    expect(await ok("ots_getTransactionBySenderAndNonce", [account0, 1000])).toBeNull();
    expect(await ok("ots_getTransactionBySenderAndNonce", [A1, 0])).toBeNull();
  });
});

describe("an address's page", () => {
  test("default: ots_hasCode at latest and at a block before the deploy", async () => {
    const deployBlock = Number((await receipt(deployTx)).blockNumber);
    expect(await ok("ots_hasCode", [maker, "latest"])).toBe(true);
    expect(await ok("ots_hasCode", [maker, deployBlock - 1])).toBe(false);
    expect(await ok("ots_hasCode", [A1, "latest"])).toBe(false);
  });

  test("default: ots_getContractCreator: a deploy's sender, an internal CREATE's contract; null for cheats and EOAs", async () => {
    expect(await ok("ots_getContractCreator", [maker])).toEqual({ hash: deployTx, creator: account0 });
    expect(await ok("ots_getContractCreator", [child])).toEqual({ hash: makeTx, creator: maker });
    expect(await ok("ots_getContractCreator", [SPLITTER])).toBeNull();
    expect(await ok("ots_getContractCreator", [A1])).toBeNull();
  });

  test("default: ots_searchTransactionsBefore/After page through an address's txs, newest first, internal ones included", async () => {
    const all = [plainTx, revertTx, factoryTx, makeTx, splitTx, deployTx];
    const first = await ok("ots_searchTransactionsBefore", [account0, 0, 2]);
    expect(first.txs.map((t: { hash: string }) => t.hash)).toEqual(all.slice(0, 2));
    expect([first.firstPage, first.lastPage]).toEqual([true, false]);
    expect(first.receipts[0].transactionHash).toBe(plainTx);
    expect(first.receipts[0].timestamp).toMatch(/^0x[0-9a-f]+$/);
    // Otterscan's formatter needs a search's receipts to carry their logs (an array).
    expect(first.receipts[0].logs).toEqual([]);
    const oldest = Number(first.txs[1].blockNumber);
    const rest = await ok("ots_searchTransactionsBefore", [account0, oldest, 25]);
    // The factory's deploy is account0's too: it sits between makeTx and factoryTx.
    const restHashes = rest.txs.map((t: { hash: string }) => t.hash);
    expect(restHashes[0]).toBe(factoryTx);
    expect(restHashes.slice(-3)).toEqual([makeTx, splitTx, deployTx]);
    expect([rest.firstPage, rest.lastPage]).toEqual([false, true]);
    const after = await ok("ots_searchTransactionsAfter", [account0, 0, 2]);
    expect(after.txs.map((t: { hash: string }) => t.hash)).toEqual([splitTx, deployTx]);
    expect([after.firstPage, after.lastPage]).toEqual([false, true]);
    // A2 only received wei in a frame that reverted: the tx still touched it, as Erigon's index has it.
    const a2 = await ok("ots_searchTransactionsBefore", [A2, 0, 25]);
    expect(a2.txs.map((t: { hash: string }) => t.hash)).toEqual([splitTx]);
    const a1 = await ok("ots_searchTransactionsAfter", [A1, 0, 25]);
    expect([a1.txs.length, a1.firstPage, a1.lastPage]).toEqual([1, true, true]);
  });
});

describe("a block's page", () => {
  test("default: ots_getBlockDetails and ByHash: slim block, transaction count, fees", async () => {
    const r = await receipt(splitTx);
    const details = await ok("ots_getBlockDetails", [Number(r.blockNumber)]);
    expect(details.block.hash).toBe(r.blockHash);
    expect(details.block.transactionCount).toBe(1);
    expect(details.block.transactions).toBeUndefined();
    expect(details.block.logsBloom).toBeNull();
    expect(details.issuance).toEqual({ blockReward: "0x0", uncleReward: "0x0", issuance: "0x0" });
    expect(BigInt(details.totalFees)).toBe(BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice));
    expect(await ok("ots_getBlockDetailsByHash", [r.blockHash])).toEqual(details);
    expect((await rpc("ots_getBlockDetails", [100_000])).error?.code).toBe(-32000);
  });

  test("default: ots_getBlockTransactions pages the block's txs with their receipts", async () => {
    const r = await receipt(revertTx);
    const page = await ok("ots_getBlockTransactions", [Number(r.blockNumber), 0, 25]);
    expect(page.fullblock.transactionCount).toBe(1);
    expect(page.fullblock.transactions[0].hash).toBe(revertTx);
    const make = await ok("ots_getBlockTransactions", [Number((await receipt(factoryTx)).blockNumber), 0, 25]);
    // Only the 4-byte selector of the input (the factory's salt word is 32 bytes).
    expect(make.fullblock.transactions[0].input).toBe("0x00000000");
    expect(page.receipts[0].status).toBe("0x0");
    expect(page.receipts[0].logs).toBeNull();
    const empty = await ok("ots_getBlockTransactions", [Number(r.blockNumber), 1, 25]);
    expect([empty.fullblock.transactions, empty.receipts]).toEqual([[], []]);
  });
});

describe("the trace and state-diff tabs (trace_*)", () => {
  test("default: trace_transaction gives OpenEthereum's flat traces with trace addresses and errors", async () => {
    const traces = await ok("trace_transaction", [splitTx]);
    expect(traces.map((t: { traceAddress: number[] }) => t.traceAddress)).toEqual([[], [0], [1], [1, 0]]);
    expect(traces.map((t: { subtraces: number }) => t.subtraces)).toEqual([2, 0, 1, 0]);
    expect(traces[2].error).toBe("Reverted");
    expect(traces[2].result).toBeNull();
    expect(traces[1].action).toMatchObject({ callType: "call", from: SPLITTER, to: A1, value: "0x32" });
    expect(traces[0]).toMatchObject({ transactionHash: splitTx, transactionPosition: 0, type: "call" });
    // The top trace's gas is the gas limit less the intrinsic 21000; a plain transfer's execution uses none.
    expect(traces[0].action.gas).toBe(`0x${(0x30000 - 21000).toString(16)}`);
    const plain = await ok("trace_transaction", [plainTx]);
    expect(plain[0].result.gasUsed).toBe("0x0");
    expect(BigInt(traces[0].result.gasUsed)).toBeLessThan(BigInt((await receipt(splitTx)).gasUsed));
    const factoryTraces = await ok("trace_transaction", [factoryTx]);
    expect(factoryTraces.map((t: { type: string }) => t.type)).toEqual(["call", "create", "call", "suicide"]);
    expect(factoryTraces[1].action.creationMethod).toBe("create2");
    expect(factoryTraces[3].action).toMatchObject({ refundAddress: factory, balance: "0x7" });
    expect(await ok("trace_get", [splitTx, ["0x1", "0x0"]])).toEqual(traces[3]);
    expect(await ok("trace_get", [splitTx, ["0x5"]])).toBeNull();
    expect((await rpc("trace_get", [splitTx, ["x"]])).error?.code).toBe(-32602);
    const block = await ok("trace_block", [(await receipt(splitTx)).blockNumber]);
    expect(block).toEqual(traces);
  });

  test("default: trace_replayTransaction answers the trace and OpenEthereum's stateDiff", async () => {
    const replay = await ok("trace_replayTransaction", [splitTx, ["trace", "stateDiff"]]);
    expect(replay.trace).toHaveLength(4);
    expect(replay.trace[0].transactionHash).toBeUndefined();
    expect(replay.vmTrace).toBeNull();
    const diff = replay.stateDiff;
    expect(diff[A1.toLowerCase()]).toEqual({
      balance: { "+": "0x32" },
      code: { "+": "0x" },
      nonce: { "+": "0x0" },
      storage: {},
    });
    expect(diff[SPLITTER].balance).toEqual({ "*": { from: "0x0", to: "0x32" } });
    expect(diff[SPLITTER].nonce).toBe("=");
    expect(diff[SPLITTER].code).toBe("=");
    expect(diff[SPLITTER].storage).toEqual({
      [`0x${"0".repeat(64)}`]: { "*": { from: `0x${"0".repeat(64)}`, to: `0x${"64".padStart(64, "0")}` } },
    });
    expect(diff[account0].nonce["*"]).toBeDefined();
    // The reverted frame changed nothing: REV and A2 are not in the diff.
    expect(diff[REV]).toBeUndefined();
    expect(diff[A2]).toBeUndefined();
    const onlyDiff = await ok("trace_replayTransaction", [splitTx, ["stateDiff"]]);
    expect(onlyDiff.trace).toEqual([]);
    const reverted = await ok("trace_replayTransaction", [revertTx, ["trace"]]);
    expect(reverted.output.startsWith("0x08c379a0")).toBe(true);
    expect(reverted.stateDiff).toBeNull();
  });

  test("error: bad arguments are -32602 naming the argument", async () => {
    expect((await rpc("ots_getBlockDetails", ["abc"])).error?.code).toBe(-32602);
    expect((await rpc("ots_searchTransactionsBefore", ["0x12", 0, 25])).error?.code).toBe(-32602);
    const zero = await rpc("ots_getBlockTransactions", [1, 0, 0]);
    expect(zero.error?.code).toBe(-32602);
    expect(zero.error?.message).toMatch(/page size/);
    expect((await rpc("ots_getTransactionBySenderAndNonce", [account0, -1])).error?.code).toBe(-32602);
    expect((await rpc("ots_traceTransaction", [])).error?.message).toBe("missing value for required argument 0");
  });

  test("default: trace_replayTransaction's vmTrace: each frame's code and opcodes, a call's frame under it", async () => {
    const reverted = await ok("trace_replayTransaction", [revertTx, ["vmTrace"]]);
    expect(reverted.vmTrace.code).toBe(`0x${REVERT_REASON}`);
    // Otterscan's revert trace looks for the frame whose last opcode is REVERT.
    expect(reverted.vmTrace.ops.at(-1).op).toBe("REVERT");
    expect(reverted.trace).toEqual([]);
    const split = (await ok("trace_replayTransaction", [splitTx, ["vmTrace"]])).vmTrace;
    expect(split.code).toBe(SPLITTER_CODE);
    const calls = split.ops.filter((o: { op: string }) => o.op === "CALL");
    expect(calls).toHaveLength(2);
    expect(calls[0].sub).toEqual({ code: "0x", ops: [] });
    expect(calls[1].sub.code).toBe(REV_CODE);
    expect(calls[1].sub.ops.at(-1).op).toBe("REVERT");
    expect(calls[1].ex.push).toEqual(["0x0"]);
    expect(split.ops.find((o: { op: string }) => o.op === "SSTORE").ex.store).toEqual({ key: "0x0", val: "0x64" });
  });

  test("error: unknown trace types are -32602; other trace_ methods are not implemented", async () => {
    expect((await rpc("trace_replayTransaction", [splitTx, ["bogus"]])).error?.code).toBe(-32602);
    const filter = await rpc("trace_filter", [{}]);
    expect(filter.error?.code).toBe(-32601);
    expect(filter.error?.message).toMatch(/not implemented/);
  });
});

describe("Otterscan's hash of a created child", () => {
  test("behavior: the CREATE2 child's address is the one CREATE2 derives (the trace names it)", async () => {
    const ops = await ok("ots_getInternalOperations", [factoryTx]);
    const initHash = keccak256("0x6133ff5f526002601ef3");
    const salt = toHex(1, { size: 32 });
    const derived = keccak256(`0xff${factory.slice(2)}${salt.slice(2)}${initHash.slice(2)}`);
    expect(ops[0].to).toBe(`0x${derived.slice(26)}`);
  });
});
