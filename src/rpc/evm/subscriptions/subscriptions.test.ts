import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { toData } from "../encode/hex.js";
import { rpcCall, WsClient } from "../testing/evmClient.js";
import {
  ECHO,
  type EvmTestChain,
  type EvmTestRpc,
  LOGGER,
  startEvmTestChain,
  TRANSFER_TOPIC,
} from "../testing/realChain.js";
import { GWEI, signTx } from "../testing/signing.js";

/** eth_subscribe / eth_unsubscribe over WebSocket on a real dev chain in process. */

describe("eth_subscribe", () => {
  let chain: EvmTestChain;
  let f: EvmTestRpc;
  let ws: WsClient;

  beforeAll(async () => {
    chain = await startEvmTestChain();
    f = await chain.startRpc();
    ws = await WsClient.connect(f.wsUrl);
  });
  afterAll(async () => {
    await ws.close();
    await chain.close();
  });

  async function sendTo(to: Uint8Array, keyIndex = 0): Promise<string> {
    const key = chain.keys[keyIndex];
    if (key === undefined) throw new TypeError("no key");
    const from = toData(key.address);
    const nonce = BigInt((await ws.call("eth_getTransactionCount", [from, "pending"])).result);
    const { raw } = signTx({ type: 0, nonce, gasPrice: 2n * GWEI, gasLimit: 60000n, to, value: 9n }, key);
    return (await ws.call("eth_sendRawTransaction", [toData(raw)])).result;
  }

  test("default: newHeads carries the same hash as eth_getBlockByNumber", async () => {
    const sub = await ws.call("eth_subscribe", ["newHeads"]);
    expect(sub.result).toMatch(/^0x[0-9a-f]{1,32}$/);
    await chain.mine();
    const note = await ws.notification(sub.result);
    expect(note.jsonrpc).toBe("2.0");
    const head = note.params.result;
    const block = (await ws.call("eth_getBlockByNumber", [head.number, false])).result;
    expect(head.hash).toBe(block.hash);
    expect(head.parentHash).toBe(block.parentHash);
    expect(head.gasLimit).toBe(block.gasLimit);
    expect(head.transactions).toBeUndefined();
    expect((await ws.call("eth_unsubscribe", [sub.result])).result).toBe(true);
    expect((await ws.call("eth_unsubscribe", [sub.result])).result).toBe(false);
    await chain.mine();
    await f.rpc.runtime.feed.idle();
    await expect(ws.notification(sub.result, 200)).rejects.toThrow(/timed out/);
  });

  test("default: logs filtered by address and topics", async () => {
    const logs = await ws.call("eth_subscribe", [
      "logs",
      { address: toData(LOGGER), topics: [toData(TRANSFER_TOPIC)] },
    ]);
    const none = await ws.call("eth_subscribe", ["logs", { topics: [toData(new Uint8Array(32))] }]);
    const hash = await sendTo(LOGGER);
    await sendTo(ECHO, 1);
    await chain.mine();
    const note = await ws.notification(logs.result);
    expect(note.params.result).toMatchObject({ address: toData(LOGGER), transactionHash: hash, removed: false });
    await f.rpc.runtime.feed.idle();
    await expect(ws.notification(none.result, 200)).rejects.toThrow(/timed out/);
    await ws.call("eth_unsubscribe", [logs.result]);
    await ws.call("eth_unsubscribe", [none.result]);
  });

  test("default: newPendingTransactions hashes and full objects", async () => {
    const hashes = await ws.call("eth_subscribe", ["newPendingTransactions"]);
    const full = await ws.call("eth_subscribe", ["newPendingTransactions", true]);
    const hash = await sendTo(ECHO);
    expect((await ws.notification(hashes.result)).params.result).toBe(hash);
    const tx = (await ws.notification(full.result)).params.result;
    expect(tx).toMatchObject({ hash, blockHash: null, to: toData(ECHO) });
    await ws.call("eth_unsubscribe", [hashes.result]);
    await ws.call("eth_unsubscribe", [full.result]);
    await chain.mine();
  });

  test("error: syncing, unknown kinds and bad criteria echo the id", async () => {
    const syncing = await ws.call("eth_subscribe", ["syncing"]);
    expect(syncing.error.code).toBe(-32601);
    expect(syncing.error.message).toMatch(/is not implemented/);
    expect(syncing.id).toBeTypeOf("number");
    const unknown = await ws.call("eth_subscribe", ["blocks"]);
    expect(unknown.error).toMatchObject({
      code: -32601,
      message: expect.stringMatching(/^no "blocks" subscription in eth namespace/),
    });
    const bad = await ws.call("eth_subscribe", ["logs", { address: "0x12" }]);
    expect(bad.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^invalid argument 1: invalid address/),
    });
    const missing = await ws.call("eth_subscribe", []);
    expect(missing.error).toMatchObject({ code: -32602, message: "expected subscription name as first argument" });
    const extra = await ws.call("eth_subscribe", ["newHeads", {}]);
    expect(extra.error).toMatchObject({ code: -32602, message: "too many arguments, want at most 1" });
    const http = await rpcCall(f.url, "eth_subscribe", ["newHeads"]);
    expect(http.error).toEqual({ code: -32601, message: "notifications not supported" });
  });

  test("behavior: closing the socket cancels its subscriptions", async () => {
    const before = f.rpc.runtime.feed.listenerCount();
    const other = await WsClient.connect(f.wsUrl);
    await other.call("eth_subscribe", ["newHeads"]);
    await other.call("eth_subscribe", ["newPendingTransactions"]);
    await new Promise((r) => setTimeout(r, 20));
    expect(f.rpc.runtime.feed.listenerCount()).toBe(before + 2);
    await other.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(f.rpc.runtime.feed.listenerCount()).toBe(before);
  });

  test("behavior: subscriptions inside a batch", async () => {
    ws.send([
      { jsonrpc: "2.0", id: "a", method: "eth_subscribe", params: ["newHeads"] },
      { jsonrpc: "2.0", id: "b", method: "eth_blockNumber" },
    ]);
    const batch = await ws.next((m) => Array.isArray(m));
    expect(batch.map((r: { id: string }) => r.id)).toEqual(["a", "b"]);
    await chain.mine();
    expect((await ws.notification(batch[0].result)).params.result.number).toMatch(/^0x/);
    await ws.call("eth_unsubscribe", [batch[0].result]);
  });
});
