import { keccak256, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { missingBinaries } from "../interop/binaries.js";
import { found } from "./compare.js";
import { REVERT_EMPTY, REVERT_REASON } from "./contracts.js";
import { type Difference, describe as describeDiffs, diffValues, unexpected } from "./diff.js";
import { CHAIN_ID, DEV_ADDRESS, DEV_KEY, type Endpoint, type NodePair, startPair } from "./nodes.js";

/**
 * Bad input and error paths, sent to geth --dev and cometh dev alike: the whole answers (error code,
 * message and data, or result) compared. What differs on purpose is named in diff.ts's MUST_DIFFER.
 */

const missing = missingBinaries("geth");
let pair: NodePair;

const ADDR = DEV_ADDRESS;
const UNKNOWN_HASH = `0x${"ab".repeat(32)}`;
const REVERTER = "0x00000000000000000000000000000000000000c2";
const REVERTER_EMPTY = "0x00000000000000000000000000000000000000c3";
const BLAKE2F = "0x0000000000000000000000000000000000000009";
/**
 * cometh's filter timeout here (`[json-rpc] filter-timeout`), so a filter can expire within the test.
 * geth's is 5 minutes with no flag to shorten it; an expired filter is deleted from its filter map,
 * so geth answers for it what it answers for an id it never had.
 */
const FILTER_TIMEOUT_MS = 1500;
const overrides = { [REVERTER]: { code: `0x${REVERT_REASON}` }, [REVERTER_EMPTY]: { code: `0x${REVERT_EMPTY}` } };

/** Sends the same raw body to both; returns the unexpected differences of the parsed answers. */
class Check {
  readonly #bad: { label: string; diffs: Difference[] }[] = [];
  async raw(label: string, body: unknown | ((e: Endpoint) => Promise<unknown>)): Promise<unknown[]> {
    const answers: unknown[] = [];
    for (const e of pair.both) {
      const b = typeof body === "function" ? await (body as (e: Endpoint) => Promise<unknown>)(e) : body;
      answers.push(strip(await e.raw(b)));
    }
    this.#record(label, answers[0], answers[1]);
    return answers;
  }
  call(method: string, params: unknown, label = `${method} ${JSON.stringify(params)}`): Promise<unknown[]> {
    return this.raw(label, { jsonrpc: "2.0", id: 1, method, params });
  }
  #record(label: string, geth: unknown, cometh: unknown): void {
    const diffs = diffValues(geth, cometh, label.split(" ")[0] as string);
    if (diffs.length > 0) found.push({ label, diffs });
    const bad = unexpected(diffs, label);
    if (bad.length > 0) this.#bad.push({ label, diffs: bad });
  }
  record(label: string, geth: unknown, cometh: unknown): void {
    this.#record(label, geth, cometh);
  }
  done(): void {
    const text = this.#bad.map((b) => `${b.label}\n${describeDiffs(b.diffs)}`).join("\n\n");
    expect(text, text).toBe("");
  }
}

/** The answer without its id (each node got its own) and jsonrpc. */
function strip(a: unknown): unknown {
  if (Array.isArray(a)) return a.map(strip);
  if (typeof a !== "object" || a === null) return a;
  const { id: _id, jsonrpc: _j, ...rest } = a as Record<string, unknown>;
  return rest;
}

/** Opens a WebSocket, sends each frame, and returns the first `count` answers (bounded by 10 s). */
async function wsExchange(url: string, frames: string[], count: number): Promise<unknown[]> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const answers: unknown[] = [];
  try {
    return await new Promise<unknown[]>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${url}: ${answers.length} of ${count} answers in 10 s`)),
        10_000,
      );
      ws.on("message", (data) => {
        answers.push(JSON.parse(data.toString()));
        if (answers.length === count) {
          clearTimeout(timer);
          resolve(answers);
        }
      });
      for (const f of frames) ws.send(f);
    });
  } finally {
    ws.close();
  }
}

describe.skipIf(missing !== undefined)(`geth differential: errors ${missing ?? ""}`, () => {
  beforeAll(async () => {
    pair = await startPair({ comethArgs: ["--json-rpc.filter-timeout", `${FILTER_TIMEOUT_MS}ms`] });
  }, 240_000);

  afterAll(async () => {
    await pair?.stop();
    if (found.length > 0) {
      const lines = found.map((f) => `${f.label}\n${describeDiffs(f.diffs)}`);
      console.log(
        `geth differential (errors), every difference seen (expected ones included):\n\n${lines.join("\n\n")}`,
      );
    }
  }, 60_000);

  test("wrong types and missing params", async () => {
    const c = new Check();
    await c.call("eth_getBalance", []);
    await c.call("eth_getBalance", [ADDR]);
    await c.call("eth_getBalance", ["0x1234", "latest"]);
    await c.call("eth_getBalance", [1234, "latest"]);
    await c.call("eth_getBalance", [ADDR, "lates"]);
    await c.call("eth_getBalance", [ADDR, "0x"]);
    await c.call("eth_getBalance", [ADDR, "0x1", "extra"]);
    await c.call("eth_getBlockByNumber", ["0x0"]);
    await c.call("eth_getBlockByNumber", ["0x0", "true"]);
    await c.call("eth_getBlockByNumber", [0, false]);
    await c.call("eth_getTransactionByHash", ["0x12"]);
    await c.call("eth_getStorageAt", [ADDR, `0x${"1".repeat(66)}`, "latest"]);
    await c.call("eth_call", []);
    await c.call("eth_call", [{ to: 5 }, "latest"]);
    await c.call("eth_call", [{ to: ADDR, value: "1" }, "latest"]);
    await c.call("eth_getLogs", [{ fromBlock: "0x5", toBlock: "0x1" }]);
    await c.call("eth_getLogs", [{ topics: "x" }]);
    await c.call("eth_feeHistory", ["0x1", "latest"]);
    await c.call("eth_feeHistory", ["0x1", "latest", [90, 10]]);
    await c.call("eth_feeHistory", ["0x1", "latest", [101]]);
    await c.call("eth_sendRawTransaction", ["0x1234"]);
    await c.call("eth_sendRawTransaction", []);
    await c.call("eth_nosuchmethod", []);
    await c.call("eth_chainId", { a: 1 });
    c.done();
  });

  test("unknown block tags, heights and hashes", async () => {
    const c = new Check();
    await c.call("eth_getBlockByNumber", ["0x999", false]);
    await c.call("eth_getBlockByNumber", ["foo", false]);
    await c.call("eth_getBlockByHash", [UNKNOWN_HASH, false]);
    await c.call("eth_getBalance", [ADDR, "0x999"]);
    await c.call("eth_getBalance", [ADDR, { blockHash: UNKNOWN_HASH }]);
    await c.call("eth_getTransactionByHash", [UNKNOWN_HASH]);
    await c.call("eth_getTransactionReceipt", [UNKNOWN_HASH]);
    await c.call("eth_getBlockReceipts", ["0x999"]);
    await c.call("eth_getBlockReceipts", [UNKNOWN_HASH]);
    await c.call("eth_getBlockTransactionCountByHash", [UNKNOWN_HASH]);
    await c.call("eth_call", [{ to: ADDR }, "0x999"]);
    await c.call("eth_getProof", [ADDR, [], "0x999"]);
    await c.call("eth_getLogs", [{ blockHash: UNKNOWN_HASH }]);
    await c.call("eth_getLogs", [{ fromBlock: "0x0", toBlock: "0x999" }]);
    await c.call("debug_traceTransaction", [UNKNOWN_HASH]);
    await c.call("debug_traceBlockByNumber", ["0x999"]);
    await c.call("debug_traceBlockByHash", [UNKNOWN_HASH]);
    c.done();
  });

  test("reverts in eth_call and eth_estimateGas: code 3 with the revert data", async () => {
    const c = new Check();
    for (const to of [REVERTER, REVERTER_EMPTY]) {
      await c.call("eth_call", [{ from: ADDR, to }, "latest", overrides]);
      await c.call("eth_estimateGas", [{ from: ADDR, to }, "latest", overrides]);
    }
    c.done();
  });

  test("calls that fail without running out of gas: eth_call and eth_estimateGas give that failure", async () => {
    const c = new Check();
    // BLAKE2F with no input ("invalid input length"), and code that is one INVALID opcode.
    const invalid = { [REVERTER]: { code: "0xfe" } };
    await c.call("eth_call", [{ from: ADDR, to: BLAKE2F }, "latest"]);
    await c.call("eth_estimateGas", [{ from: ADDR, to: BLAKE2F }, "latest"]);
    await c.call("eth_estimateGas", [{ from: ADDR, to: BLAKE2F, value: "0x1" }, "latest"]);
    await c.call("eth_call", [{ from: ADDR, to: REVERTER }, "latest", invalid]);
    await c.call("eth_estimateGas", [{ from: ADDR, to: REVERTER }, "latest", invalid]);
    c.done();
  });

  test("transactions refused: nonce too low and too high, underpriced, insufficient funds, gas above the limits", async () => {
    const c = new Check();
    const dev = new Wallet(DEV_KEY);
    const poor = new Wallet(`0x${"11".repeat(32)}`);
    const base = {
      chainId: CHAIN_ID,
      to: ADDR,
      gasLimit: 21_000,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
    };
    // One accepted tx so that nonce 0 is used on both.
    const first = await dev.signTransaction({ ...base, nonce: 0 });
    await c.call("eth_sendRawTransaction", [first], "eth_sendRawTransaction (accepted)");
    for (const e of pair.both) {
      const deadline = Date.now() + 30_000;
      while ((await e.result("eth_getTransactionReceipt", [keccak256(first)])) === null) {
        if (Date.now() > deadline) throw new Error(`${e.name}: the first tx was not mined`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    await c.call("eth_sendRawTransaction", [first], "eth_sendRawTransaction (the same tx again)");
    await c.call(
      "eth_sendRawTransaction",
      [await dev.signTransaction({ ...base, nonce: 0, value: 1 })],
      "eth_sendRawTransaction (nonce too low)",
    );
    await c.call(
      "eth_sendRawTransaction",
      [await dev.signTransaction({ ...base, nonce: 1000 })],
      "eth_sendRawTransaction (nonce far ahead)",
    );
    await c.call(
      "eth_sendRawTransaction",
      [await dev.signTransaction({ ...base, nonce: 1, maxPriorityFeePerGas: 0n, maxFeePerGas: 0n })],
      "eth_sendRawTransaction (no tip: underpriced)",
    );
    await c.call(
      "eth_sendRawTransaction",
      [await poor.signTransaction({ ...base, nonce: 0, value: 1 })],
      "eth_sendRawTransaction (insufficient funds)",
    );
    await c.call(
      "eth_sendRawTransaction",
      [await dev.signTransaction({ ...base, nonce: 1, gasLimit: 40_000_000 })],
      "eth_sendRawTransaction (gas above the block gas limit)",
    );
    await c.call(
      "eth_sendRawTransaction",
      [await dev.signTransaction({ ...base, nonce: 1, gasLimit: 20_000 })],
      "eth_sendRawTransaction (intrinsic gas too low)",
    );
    await c.call(
      "eth_sendRawTransaction",
      [await dev.signTransaction({ ...base, nonce: 1, chainId: 5 })],
      "eth_sendRawTransaction (wrong chain id)",
    );
    await c.call("eth_call", [{ from: ADDR, to: ADDR, gas: "0x5f5e100" }, "latest"], "eth_call (gas above the cap)");
    await c.call(
      "eth_estimateGas",
      [{ from: ADDR, to: REVERTER, gas: "0x5f5e100" }, "latest"],
      "eth_estimateGas (gas above the cap)",
    );
    await c.call("eth_call", [{ from: ADDR, to: ADDR, gas: "0x100" }, "latest"], "eth_call (intrinsic gas too low)");
    await c.call(
      "eth_call",
      [{ from: poor.address, to: ADDR, value: "0x1", gasPrice: "0x1" }, "latest"],
      "eth_call (insufficient funds)",
    );
    await c.call(
      "eth_call",
      [{ from: ADDR, to: ADDR, maxFeePerGas: "0x1", maxPriorityFeePerGas: "0x2" }, "latest"],
      "eth_call (tip above the fee cap)",
    );
    c.done();
  });

  test("filters: unknown and uninstalled ids", async () => {
    const c = new Check();
    const unknownId = "0x1234567890abcdef1234567890abcdef";
    await c.call("eth_getFilterChanges", [unknownId]);
    await c.call("eth_getFilterLogs", [unknownId]);
    await c.call("eth_uninstallFilter", [unknownId]);
    // A filter uninstalled is gone as an expired one is (geth answers both alike).
    await c.raw("eth_getFilterChanges (uninstalled)", async (e: Endpoint) => {
      const id = await e.result<string>("eth_newBlockFilter");
      await e.result("eth_uninstallFilter", [id]);
      return { jsonrpc: "2.0", id: 1, method: "eth_getFilterChanges", params: [id] };
    });
    await c.call("eth_newFilter", [{ fromBlock: "0x5", toBlock: "0x1" }]);
    c.done();
  });

  test("filters that expired: geth's answers for a filter it no longer has", async () => {
    const c = new Check();
    const ids = {
      block: await pair.cometh.result<string>("eth_newBlockFilter"),
      logs: await pair.cometh.result<string>("eth_newFilter", [{ fromBlock: "latest" }]),
      pending: await pair.cometh.result<string>("eth_newPendingTransactionFilter"),
    };
    // Polled before the timeout, a filter lives on (each poll restarts its timer).
    await new Promise((r) => setTimeout(r, FILTER_TIMEOUT_MS * 0.6));
    expect((await pair.cometh.call("eth_getFilterChanges", [ids.logs])).error).toBeUndefined();
    await new Promise((r) => setTimeout(r, FILTER_TIMEOUT_MS * 0.6));
    expect((await pair.cometh.call("eth_getFilterChanges", [ids.logs])).error).toBeUndefined();
    await new Promise((r) => setTimeout(r, FILTER_TIMEOUT_MS + 500));
    const gone = "0x00000000000000000000000000000001";
    for (const [kind, id] of Object.entries(ids)) {
      for (const method of ["eth_getFilterChanges", "eth_getFilterLogs", "eth_uninstallFilter"]) {
        const geth = strip(await pair.geth.raw({ jsonrpc: "2.0", id: 1, method, params: [gone] }));
        const cometh = strip(await pair.cometh.raw({ jsonrpc: "2.0", id: 1, method, params: [id] }));
        c.record(`${method} (expired ${kind} filter)`, geth, cometh);
      }
    }
    c.done();
  });

  test("eth_subscribe misuse, over HTTP and WebSocket", async () => {
    const c = new Check();
    await c.call("eth_subscribe", ["newHeads"], "eth_subscribe over HTTP");
    const frames = [
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["nosuchthing"] }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "eth_subscribe", params: [] }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "eth_subscribe", params: ["logs", { topics: "x" }] }),
      JSON.stringify({ jsonrpc: "2.0", id: 4, method: "eth_unsubscribe", params: ["0x1234"] }),
      JSON.stringify({ jsonrpc: "2.0", id: 5, method: "eth_subscribe", params: ["newHeads", { extra: 1 }] }),
      "{not json",
    ];
    const [geth, cometh] = await Promise.all(pair.both.map((e) => wsExchange(e.ws, frames, frames.length)));
    // Answers may come in any order: matched by the id of the request they answer (null: the bad frame).
    const byId = (list: unknown[] | undefined) =>
      new Map((list ?? []).map((a) => [JSON.stringify((a as { id?: unknown }).id ?? null), a]));
    const g = byId(geth);
    const k = byId(cometh);
    for (const [i, f] of frames.entries()) {
      const id = i < 5 ? String(i + 1) : "null";
      c.record(`ws ${f.slice(0, 80)}`, strip(g.get(id)), strip(k.get(id)));
    }
    c.done();
  });

  test("batches: empty, too large, malformed items, invalid JSON", async () => {
    const c = new Check();
    await c.raw("batch []", "[]");
    await c.raw("batch [1]", "[1]");
    await c.raw("batch of two", [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId" },
      { jsonrpc: "2.0", id: 2, method: "eth_nosuchmethod" },
    ]);
    const big = Array.from({ length: 1001 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "eth_chainId" }));
    await c.raw("batch of 1001", big);
    await c.raw("invalid JSON", "{not json");
    await c.raw("no method", { jsonrpc: "2.0", id: 1 });
    c.done();
  });

  // Last: on cometh a queued tx makes one empty automine block (docs/compatibility.md), which would
  // shift the heights the tests above compare.
  test("eth_sendRawTransactionSync: a tx that is never mined ends the wait with code 4, geth's text and the hash", async () => {
    const c = new Check();
    const dev = new Wallet(DEV_KEY);
    const queued = await dev.signTransaction({
      chainId: CHAIN_ID,
      to: ADDR,
      gasLimit: 21_000,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
      // Ahead of the next nonce by less than cometh's largest nonce gap (63): queued by both.
      nonce: 20,
    });
    const [geth, cometh] = await c.call(
      "eth_sendRawTransactionSync",
      [queued, 300],
      "eth_sendRawTransactionSync (queued)",
    );
    expect((geth as { error?: { code: number } }).error?.code).toBe(4);
    expect((cometh as { error?: { data?: string } }).error?.data).toBe(keccak256(queued));
    c.done();
  });
});
