import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { ManualClock } from "../../../util/clock.js";
import { EncodedJson } from "../../jsonrpc/index.js";
import { toData } from "../encode/hex.js";
import { rpcCall } from "../testing/evmClient.js";
import { type EvmTestChain, type EvmTestRpc, LOGGER, startEvmTestChain } from "../testing/realChain.js";
import { GWEI, signTx } from "../testing/signing.js";
import { FILTER_TIMEOUT_MS } from "./filterManager.js";
import { LogsMemo } from "./logsMemo.js";

/**
 * Polling filters on an injected clock, filter-cap, logs-cap and block-range-cap, on a real dev chain
 * in process (one per file; each test starts its own servers over it).
 */

let chain: EvmTestChain;
beforeAll(async () => {
  chain = await startEvmTestChain();
});
afterAll(() => chain.close());

/** Mines a block with one tx calling LOGGER (one Transfer log). */
async function mineLoggerCall(f: EvmTestRpc): Promise<void> {
  const key = chain.keys[0];
  if (key === undefined) throw new TypeError("no key");
  const nonce = BigInt((await rpcCall(f.url, "eth_getTransactionCount", [toData(key.address), "pending"])).result);
  const r = await chain.submit(
    signTx({ type: 0, nonce, gasPrice: 2n * GWEI, gasLimit: 60000n, to: LOGGER, value: 1n }, key).raw,
  );
  if (!r.accepted) throw new TypeError(r.log);
  await chain.mine();
}

describe("filters", () => {
  let f: EvmTestRpc | undefined;
  afterEach(async () => {
    await f?.close();
    f = undefined;
  });

  test("behavior: a filter expires 5 minutes after its last poll", async () => {
    const clock = new ManualClock();
    f = await chain.startRpc({}, { clock });
    const id = (await rpcCall(f.url, "eth_newBlockFilter")).result;
    clock.advance(FILTER_TIMEOUT_MS - 1000);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [id])).result).toEqual([]);
    // Polling restarted the timer.
    clock.advance(FILTER_TIMEOUT_MS - 1000);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [id])).result).toEqual([]);
    clock.advance(FILTER_TIMEOUT_MS);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [id])).error).toEqual({
      code: -32000,
      message: "filter not found",
    });
    expect(f.rpc.runtime.filters.size()).toBe(0);
  });

  test("behavior: [json-rpc] filter-timeout sets the expiry", async () => {
    const clock = new ManualClock();
    f = await chain.startRpc({ filterTimeoutMs: 2000 }, { clock });
    const id = (await rpcCall(f.url, "eth_newBlockFilter")).result;
    clock.advance(1500);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [id])).result).toEqual([]);
    clock.advance(2001);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [id])).error?.message).toBe("filter not found");
    expect((await rpcCall(f.url, "eth_uninstallFilter", [id])).result).toBe(false);
  });

  test("behavior: eth_getFilterLogs does not keep a filter alive", async () => {
    const clock = new ManualClock();
    f = await chain.startRpc({}, { clock });
    const criteria = { fromBlock: "0x0", address: toData(LOGGER) };
    const id = (await rpcCall(f.url, "eth_newFilter", [criteria])).result;
    clock.advance(FILTER_TIMEOUT_MS - 1);
    const logs = (await rpcCall(f.url, "eth_getFilterLogs", [id])).result;
    expect(logs.length).toBeGreaterThanOrEqual(2);
    expect(logs).toEqual((await rpcCall(f.url, "eth_getLogs", [criteria])).result);
    clock.advance(1);
    expect((await rpcCall(f.url, "eth_getFilterLogs", [id])).error.message).toBe("filter not found");
  });

  test("error: filter-cap counts every kind", async () => {
    f = await chain.startRpc({ filterCap: 3 });
    await rpcCall(f.url, "eth_newBlockFilter");
    await rpcCall(f.url, "eth_newPendingTransactionFilter");
    const id = (await rpcCall(f.url, "eth_newFilter", [{}])).result;
    expect((await rpcCall(f.url, "eth_newFilter", [{}])).error).toEqual({
      code: -32000,
      message: "error creating filter: max limit reached",
    });
    expect((await rpcCall(f.url, "eth_newBlockFilter")).error.message).toBe(
      "error creating block filter: max limit reached",
    );
    expect((await rpcCall(f.url, "eth_newPendingTransactionFilter")).error.message).toBe(
      "error creating pending tx filter: max limit reached",
    );
    await rpcCall(f.url, "eth_uninstallFilter", [id]);
    expect((await rpcCall(f.url, "eth_newBlockFilter")).result).toMatch(/^0x/);
  });

  test("error: pending log filters are refused", async () => {
    f = await chain.startRpc();
    expect((await rpcCall(f.url, "eth_newFilter", [{ toBlock: "pending" }])).error.message).toBe(
      "pending logs are not supported",
    );
  });

  test("behavior: log filters respect numeric bounds and criteria", async () => {
    f = await chain.startRpc();
    const head = Number((await rpcCall(f.url, "eth_blockNumber")).result);
    const bounded = (await rpcCall(f.url, "eth_newFilter", [{ toBlock: `0x${head.toString(16)}` }])).result;
    const open = (await rpcCall(f.url, "eth_newFilter", [{ topics: [null, null] }])).result;
    await mineLoggerCall(f);
    await f.rpc.runtime.feed.idle();
    expect((await rpcCall(f.url, "eth_getFilterChanges", [bounded])).result).toEqual([]);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [open])).result).toHaveLength(1);
  });

  test("error: block-range-cap and logs-cap", async () => {
    f = await chain.startRpc({ blockRangeCap: 1, logsCap: 1 });
    expect((await rpcCall(f.url, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "0x3" }])).error).toEqual({
      code: -32000,
      message: "maximum [from, to] blocks distance: 1",
    });
    expect((await rpcCall(f.url, "eth_getLogs", [{ fromBlock: "0x1", toBlock: "0x2" }])).error).toEqual({
      code: -32000,
      message: "query returned more than 1 results",
    });
    expect((await rpcCall(f.url, "eth_getLogs", [{ fromBlock: "0x2", toBlock: "0x2" }])).result).toHaveLength(1);
  });

  test("behavior: eth_getLogs answers of a final range are kept; a range ending at latest follows the head", async () => {
    f = await chain.startRpc();
    const head = Number((await rpcCall(f.url, "eth_blockNumber")).result);
    const fixed = [{ fromBlock: "0x0", toBlock: `0x${head.toString(16)}`, address: toData(LOGGER) }];
    const first = (await rpcCall(f.url, "eth_getLogs", fixed)).result;
    // The seed's two Transfer logs, and one more per LOGGER call earlier tests mined.
    expect(first.length).toBeGreaterThanOrEqual(2);
    expect(f.rpc.runtime.logsMemo.size).toBe(1);
    expect((await rpcCall(f.url, "eth_getLogs", fixed)).result).toEqual(first);
    expect(f.rpc.runtime.logsMemo.size).toBe(1);
    await mineLoggerCall(f);
    expect((await rpcCall(f.url, "eth_getLogs", fixed)).result).toEqual(first);
    const latest = [{ fromBlock: "0x0", toBlock: "latest", address: toData(LOGGER) }];
    expect((await rpcCall(f.url, "eth_getLogs", latest)).result).toHaveLength(first.length + 1);
    // Other criteria are other entries.
    expect((await rpcCall(f.url, "eth_getLogs", [{ ...fixed[0], topics: [null, null] }])).result).toHaveLength(
      first.length,
    );
    expect(f.rpc.runtime.logsMemo.size).toBe(3);
  });

  test("behavior: the logs memo drops its oldest entries past its entry and byte budgets", () => {
    const memo = new LogsMemo(2, 400);
    memo.set("a", new EncodedJson("x".repeat(50)));
    memo.set("b", new EncodedJson("x".repeat(50)));
    memo.set("c", new EncodedJson("x".repeat(50)));
    expect([memo.get("a"), memo.get("b")?.text.length, memo.get("c")?.text.length]).toEqual([undefined, 50, 50]);
    memo.set("big", new EncodedJson("x".repeat(101)));
    expect(memo.get("big")).toBeUndefined();
    memo.set("d", new EncodedJson("x".repeat(100)));
    memo.set("e", new EncodedJson("x".repeat(100)));
    expect(memo.size).toBe(2);
    expect(memo.get("c")).toBeUndefined();
  });

  test("behavior: block filters buffer every new block in order", async () => {
    f = await chain.startRpc();
    const id = (await rpcCall(f.url, "eth_newBlockFilter")).result;
    const b1 = await chain.mine();
    const b2 = await chain.mine();
    await f.rpc.runtime.feed.idle();
    expect((await rpcCall(f.url, "eth_getFilterChanges", [id])).result).toEqual([toData(b1.hash), toData(b2.hash)]);
    const pending = (await rpcCall(f.url, "eth_newPendingTransactionFilter", [])).result;
    const key = chain.keys[1];
    if (key === undefined) throw new TypeError("no key");
    const nonce = BigInt((await rpcCall(f.url, "eth_getTransactionCount", [toData(key.address), "pending"])).result);
    const { raw, tx } = signTx({ type: 0, nonce, gasPrice: 2n * GWEI, gasLimit: 21000n, to: key.address }, key);
    await rpcCall(f.url, "eth_sendRawTransaction", [toData(raw)]);
    expect((await rpcCall(f.url, "eth_getFilterChanges", [pending])).result).toEqual([toData(tx.hash())]);
    await chain.mine();
  });
});
