import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { bytesToHexUpper } from "../../../util/bytes.js";
import { blockAt, blockIdAt, finalizeAt, sha256, VALIDATORS } from "../testing/fakeServices.js";
import { WsTestClient } from "../testing/rpcTestClient.js";
import { type FakeRpc, startFakeRpc } from "../testing/startFakeRpc.js";

const wsUrl = (f: FakeRpc) => `${f.base.replace(/^http/, "ws")}/websocket`;
const req = (id: unknown, method: string, params: unknown = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new RangeError("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("WebSocket transport (docs/cometbft-rpc.md §1.5, §4)", () => {
  let f: FakeRpc;
  beforeAll(async () => {
    f = await startFakeRpc();
  });
  afterAll(() => f.close());

  test("default: subscribe acknowledges, then pushes NewBlock with the subscribe id", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      const query = "tm.event='NewBlock'";
      const ack = await c.sendRaw(req("sub-1", "subscribe", { query }), '"sub-1"');
      expect(ack).toEqual({ jsonrpc: "2.0", id: "sub-1", result: {} });
      await until(() => f.node.bus.numClients() === 1);
      f.node.bus.publish(
        "NewBlock",
        { block: blockAt(3), blockId: blockIdAt(3), resultFinalizeBlock: finalizeAt(3) },
        { "begin_event.foo": ["100"] },
      );
      const [push] = (await c.waitPushes("sub-1", 1)) as [
        {
          id: string;
          result: { query: string; data: { type: string; value: Record<string, unknown> }; events: unknown };
        },
      ];
      expect(push.id).toBe("sub-1");
      expect(Object.keys(push.result)).toEqual(["query", "data", "events"]);
      expect(push.result.query).toBe(query);
      expect(push.result.data.type).toBe("tendermint/event/NewBlock");
      expect(Object.keys(push.result.data.value)).toEqual([
        "block",
        "block_id",
        "result_finalize_block",
        "result_begin_block",
        "result_end_block",
      ]);
      expect(push.result.data.value.result_finalize_block).toMatchObject({
        events: [{ type: "begin_event" }, { type: "end_event" }],
        validator_updates: [{ power: "7" }],
        app_hash: Buffer.from(sha256("app:3")).toString("base64"),
      });
      expect(push.result.data.value.result_begin_block).toEqual({
        events: [{ type: "begin_event", attributes: [{ key: "foo", value: "100", index: true }] }],
      });
      expect(push.result.data.value.result_end_block).toMatchObject({
        validator_updates: [{ power: "7" }],
        events: [{ type: "end_event" }],
      });
      expect(push.result.events).toEqual({ "begin_event.foo": ["100"], "tm.event": ["NewBlock"] });
    } finally {
      await c.close();
    }
    await until(() => f.node.bus.numClients() === 0);
  });

  test("default: Tx events use the omitempty result form", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      await c.sendRaw(req(5, "subscribe", { query: "tm.event = 'Tx'" }), "5");
      const tx = Buffer.from("name=ws");
      f.node.includeTx(tx, 12);
      const [push] = (await c.waitPushes(5, 1)) as [{ result: { data: unknown; events: Record<string, string[]> } }];
      expect(push.result.data).toEqual({
        type: "tendermint/event/Tx",
        value: {
          TxResult: {
            height: "12",
            tx: tx.toString("base64"),
            result: {
              gas_wanted: "10",
              gas_used: "1",
              events: [
                {
                  type: "app",
                  attributes: [
                    { key: "creator", value: "Cosmoshi Netowoko", index: true },
                    { key: "key", value: "name", index: true },
                    { key: "noindex_key", value: "x", index: false },
                  ],
                },
              ],
            },
          },
        },
      });
      expect(push.result.events["tx.hash"]).toEqual([bytesToHexUpper(sha256(tx))]);
    } finally {
      await c.close();
    }
  });

  test("default: other event payloads", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      await c.sendRaw(req(1, "subscribe", { query: "tm.event EXISTS" }), "1");
      const validator = VALIDATORS[0];
      if (validator === undefined) throw new RangeError("no validator");
      f.node.bus.publish("NewRoundStep", { height: 7, round: 1, step: 4 });
      f.node.bus.publish("NewRound", {
        height: 7,
        round: 1,
        step: "RoundStepNewRound",
        proposer: { address: validator.address, index: 0 },
      });
      f.node.bus.publish("NewBlockHeader", { header: blockAt(2).header });
      f.node.bus.publish("NewBlockEvents", { height: 2, events: [], numTxs: 2 });
      f.node.bus.publish("ValidatorSetUpdates", { validatorUpdates: [validator] });
      const pushes = (await c.waitPushes(1, 5)) as { result: { data: { type: string; value: unknown } } }[];
      const data = pushes.map((p) => p.result.data);
      expect(data[0]).toEqual({
        type: "tendermint/event/RoundState",
        value: { height: "7", round: 1, step: "RoundStepPrevote" },
      });
      expect(data[1]).toEqual({
        type: "tendermint/event/NewRound",
        value: {
          height: "7",
          round: 1,
          step: "RoundStepNewRound",
          proposer: { address: bytesToHexUpper(validator.address), index: 0 },
        },
      });
      expect(data[2]?.type).toBe("tendermint/event/NewBlockHeader");
      expect(data[3]).toEqual({
        type: "tendermint/event/NewBlockEvents",
        value: { height: "2", events: null, num_txs: "2" },
      });
      expect(data[4]?.value).toEqual({
        validator_updates: [
          {
            address: bytesToHexUpper(validator.address),
            pub_key: {
              type: "tendermint/PubKeyEd25519",
              value: Buffer.from(validator.pubKey.bytes).toString("base64"),
            },
            voting_power: "10",
            proposer_priority: "-5",
          },
        ],
      });
    } finally {
      await c.close();
    }
  });

  test("behavior: unsubscribe, unsubscribe_all and their errors", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      await c.sendRaw(req(1, "subscribe", { query: "tm.event='NewBlock'" }), "1");
      expect(await c.sendRaw(req(2, "subscribe", { query: "tm.event = 'NewBlock'" }), "2")).toEqual({
        jsonrpc: "2.0",
        id: 2,
        error: { code: -32603, message: "Internal error", data: "already subscribed" },
      });
      // Unsubscribe matches on the parsed (canonical) query, not the raw text.
      expect(await c.sendRaw(req(3, "unsubscribe", { query: "tm.event  =  'NewBlock'" }), "3")).toEqual({
        jsonrpc: "2.0",
        id: 3,
        result: {},
      });
      f.node.bus.publish("NewBlock", { block: blockAt(2), blockId: blockIdAt(2), resultFinalizeBlock: finalizeAt(2) });
      await new Promise((r) => setTimeout(r, 50));
      expect(c.pushes.get("1")).toBeUndefined();
      expect(await c.sendRaw(req(4, "unsubscribe", { query: "tm.event='NewBlock'" }), "4")).toMatchObject({
        error: { code: -32603, data: "subscription not found" },
      });
      expect(await c.sendRaw(req(5, "unsubscribe_all"), "5")).toMatchObject({
        error: { code: -32603, data: "subscription not found" },
      });
      await c.sendRaw(req(6, "subscribe", { query: "tm.event='Tx'" }), "6");
      await c.sendRaw(req(7, "subscribe", { query: "tm.event='Vote'" }), "7");
      expect(await c.sendRaw(req(8, "unsubscribe_all"), "8")).toEqual({ jsonrpc: "2.0", id: 8, result: {} });
      expect(f.node.bus.numClients()).toBe(0);
      expect(await c.sendRaw(req(9, "subscribe", { query: "tm.event=" }), "9")).toMatchObject({
        error: { code: -32603, data: expect.stringMatching(/^failed to parse query: offset \d+/) },
      });
      expect(await c.sendRaw(req(10, "subscribe", { query: `a='${"x".repeat(600)}'` }), "10")).toMatchObject({
        error: { data: "maximum query length exceeded" },
      });
    } finally {
      await c.close();
    }
  });

  test("error: max_subscriptions_per_client", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      for (let i = 0; i < 5; i++) {
        expect(await c.sendRaw(req(i, "subscribe", { query: `tm.event='E${i}'` }), String(i))).toMatchObject({
          result: {},
        });
      }
      expect(await c.sendRaw(req(99, "subscribe", { query: "tm.event='E9'" }), "99")).toMatchObject({
        error: { code: -32603, data: "max_subscriptions_per_client 5 reached" },
      });
    } finally {
      await c.close();
    }
    await until(() => f.node.bus.numClients() === 0);
  });

  test("behavior: any route over WebSocket; params errors are -32603; notifications ignored", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      expect(await c.sendRaw(req(1, "block", { height: "2" }), "1")).toMatchObject({
        result: { block: { header: { height: "2" } } },
      });
      expect(await c.sendRaw(req(2, "block", { height: 2 }), "2")).toEqual({
        jsonrpc: "2.0",
        id: 2,
        error: {
          code: -32603,
          message: "Internal error",
          data: 'error converting json params to arguments: invalid 64-bit integer encoding "2", expected string',
        },
      });
      c.ws.send(JSON.stringify({ jsonrpc: "2.0", method: "health" }));
      expect(await c.sendRaw(req(3, "nope"), "3")).toEqual({
        jsonrpc: "2.0",
        id: 3,
        error: { code: -32601, message: "Method not found" },
      });
      expect(c.pushes.size).toBe(0);
    } finally {
      await c.close();
    }
  });

  test("error: batches, garbage and binary frames are parse errors; the connection keeps answering", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      const batch = (await c.sendRaw(`[${req(1, "health")}]`, "")) as { error: { code: number; data: string } };
      expect(batch.error.code).toBe(-32700);
      expect(batch.error.data).toMatch(
        /^error unmarshaling request: json: cannot unmarshal array into Go value of type struct/,
      );
      const garbage = await c.sendRaw(Buffer.from([0xff, 0x00, 0x13, 0x37]), "", true);
      expect(garbage).toMatchObject({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error. Invalid JSON" } });
      expect(await c.sendRaw("", "")).toMatchObject({
        error: { code: -32700, data: "error unmarshaling request: EOF" },
      });
      // Only the first JSON value of a frame counts (json.Decoder).
      expect(await c.sendRaw(`${req(4, "health")} trailing`, "4")).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
    } finally {
      await c.close();
    }
  });

  test("error: text frames that are not UTF-8 are decoded like gorilla + encoding/json, not closed with 1007", async () => {
    const c = await WsTestClient.connect(wsUrl(f));
    try {
      // Outside a string: a parse error. Inside one: U+FFFD, so here an unknown method.
      const closed = c.closed.then(({ code }) => ({ closedWith: code }));
      expect(await Promise.race([c.sendRaw(Buffer.from([0x7b, 0xff, 0x7d]), ""), closed])).toMatchObject({
        error: { code: -32700, message: "Parse error. Invalid JSON" },
      });
      const bad = Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":9,"method":"health'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
      expect(await c.sendRaw(bad, "9")).toEqual({
        jsonrpc: "2.0",
        id: 9,
        error: { code: -32601, message: "Method not found" },
      });
      expect(await c.sendRaw(req(10, "health"), "10")).toEqual({ jsonrpc: "2.0", id: 10, result: {} });
    } finally {
      await c.close();
    }
  });

  test("error: a frame over max_body_bytes closes the connection with 1009", async () => {
    const small = await startFakeRpc({ maxBodyBytes: 1000 });
    try {
      const c = await WsTestClient.connect(wsUrl(small));
      c.ws.send(req(1, "health", { pad: "x".repeat(2000) }));
      expect((await c.closed).code).toBe(1009);
    } finally {
      await small.close();
    }
  });

  test("behavior: a full subscription buffer cancels the subscription with -32000", async () => {
    const tiny = await startFakeRpc({ experimentalSubscriptionBufferSize: 2 });
    try {
      const c = await WsTestClient.connect(wsUrl(tiny));
      await c.sendRaw(req("s", "subscribe", { query: "tm.event='NewRoundStep'" }), '"s"');
      for (let i = 0; i < 6; i++) tiny.node.bus.publish("NewRoundStep", { height: 7, round: i, step: 1 });
      const pushes = await c.waitPushes("s", 3);
      expect(pushes.at(-1)).toEqual({
        jsonrpc: "2.0",
        id: "s",
        error: {
          code: -32000,
          message: "Server error",
          data: "subscription was canceled (reason: internal subscription event buffer is out of capacity)",
        },
      });
      expect(pushes.slice(0, -1).every((p) => (p as { result?: unknown }).result !== undefined)).toBe(true);
      expect(tiny.node.bus.numClients()).toBe(0);
      // The connection still works and can subscribe again.
      expect(await c.sendRaw(req(2, "subscribe", { query: "tm.event='NewRoundStep'" }), "2")).toMatchObject({
        result: {},
      });
      await c.close();
    } finally {
      await tiny.close();
    }
  });

  test("behavior: the RPC's own buffer cancels a lagging subscription even when the bus never drops", async () => {
    const g = await startFakeRpc(
      { experimentalSubscriptionBufferSize: 3, experimentalWebsocketWriteBufferSize: 1 },
      { unboundedBus: true },
    );
    try {
      const c = await WsTestClient.connect(wsUrl(g));
      await c.sendRaw(req(1, "subscribe", { query: "tm.event='NewRoundStep'" }), "1");
      c.ws.pause();
      const big = { height: 7, round: 0, step: "x".repeat(4_000_000) };
      for (let i = 0; i < 10; i++) {
        g.node.bus.publish("NewRoundStep", big);
        await new Promise((r) => setTimeout(r, 5));
      }
      await until(() => g.node.bus.numClients() === 0, 5000);
      expect(g.node.bus.cancellations).toEqual(["unsubscribed"]);
      c.ws.terminate();
    } finally {
      await g.close();
    }
  });

  test("behavior: node shutdown ends subscriptions with 'CometBFT exited'", async () => {
    const g = await startFakeRpc();
    try {
      const c = await WsTestClient.connect(wsUrl(g));
      await c.sendRaw(req(1, "subscribe", { query: "tm.event='NewBlock'" }), "1");
      g.node.bus.close();
      const [err] = await c.waitPushes(1, 1);
      expect(err).toMatchObject({
        error: { code: -32000, data: "subscription was canceled (reason: CometBFT exited)" },
      });
      await c.close();
    } finally {
      await g.close();
    }
  });

  test("error: max_subscription_clients", async () => {
    const g = await startFakeRpc({ maxSubscriptionClients: 1 });
    try {
      const a = await WsTestClient.connect(wsUrl(g));
      const b = await WsTestClient.connect(wsUrl(g));
      expect(await a.sendRaw(req(1, "subscribe", { query: "tm.event='NewBlock'" }), "1")).toMatchObject({ result: {} });
      expect(await b.sendRaw(req(1, "subscribe", { query: "tm.event='NewBlock'" }), "1")).toMatchObject({
        error: { code: -32603, data: "max_subscription_clients 1 reached" },
      });
      await a.close();
      await until(() => g.node.bus.numClients() === 0);
      expect(await b.sendRaw(req(2, "subscribe", { query: "tm.event='NewBlock'" }), "2")).toMatchObject({ result: {} });
      await b.close();
    } finally {
      await g.close();
    }
  });

  test("behavior: a slow client does not block the publisher", async () => {
    const g = await startFakeRpc({
      experimentalWebsocketWriteBufferSize: 1,
      experimentalSubscriptionBufferSize: 100,
      experimentalCloseOnSlowClient: true,
      wsWriteWaitMs: 300,
    });
    try {
      const c = await WsTestClient.connect(wsUrl(g));
      await c.sendRaw(req(1, "subscribe", { query: "tm.event='NewRoundStep'" }), "1");
      // Stop reading: the socket buffers fill and the write queue stays full.
      c.ws.pause();
      const big = { height: 7, round: 0, step: "x".repeat(4_000_000) };
      for (let i = 0; i < 8; i++) {
        const started = Date.now();
        g.node.bus.publish("NewRoundStep", big);
        expect(Date.now() - started).toBeLessThan(200);
        await new Promise((r) => setTimeout(r, 20));
      }
      await until(() => g.node.bus.numClients() === 0, 5000);
      // Released as a slow client (or by the write deadline), never by overflowing the bus buffer.
      expect(g.node.bus.cancellations).toEqual(["unsubscribed"]);
      c.ws.terminate();
    } finally {
      await g.close();
    }
  });

  test("behavior: the server pings and answers pings", async () => {
    const g = await startFakeRpc({ wsPingIntervalMs: 50 });
    try {
      const c = await WsTestClient.connect(wsUrl(g));
      const ping = new Promise<void>((resolve) => c.ws.once("ping", () => resolve()));
      const pong = new Promise<Buffer>((resolve) => c.ws.once("pong", (d) => resolve(d)));
      c.ws.ping(Buffer.from("hi"));
      expect((await pong).toString()).toBe("hi");
      await ping;
      await c.close();
    } finally {
      await g.close();
    }
  });
});
