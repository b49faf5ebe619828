import { sha256 } from "@noble/hashes/sha2.js";
import { describe, expect, test } from "vitest";
import type { AbciEvent, ExecTxResult } from "../types/index.js";
import { bytesToHexUpper, utf8ToBytes } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import {
  AlreadySubscribedError,
  EventBusClosedError,
  InvalidCapacityError,
  SubscriptionNotFoundError,
} from "./errors.js";
import { buildEventsMap, CANCEL_REASONS, EventBus, eventsMapFromAbci, type Message } from "./eventBus.js";
import { parseQuery } from "./query.js";

const APP_EVENTS: AbciEvent[] = [
  {
    type: "app",
    attributes: [
      { key: "creator", value: "Cosmoshi Netowoko", index: true },
      { key: "key", value: "name", index: true },
      { key: "noindex_key", value: "index is working", index: false },
      { key: "", value: "dropped: empty key", index: true },
    ],
  },
  { type: "app", attributes: [{ key: "creator", value: "Cosmoshi", index: true }] },
  { type: "", attributes: [{ key: "x", value: "dropped: empty type", index: true }] },
];

function txResult(events: AbciEvent[]): ExecTxResult {
  return { code: 0, data: new Uint8Array(), log: "", info: "", gasWanted: 0n, gasUsed: 0n, events, codespace: "" };
}

class PoisonedPayloadError extends ComethError {}

const ROUND_STATE = { height: 8, round: 0, step: "RoundStepPrevote" };

describe("events map", () => {
  test("default: eventsMapFromAbci appends values of repeated composite keys, any index flag", () => {
    expect(eventsMapFromAbci(APP_EVENTS)).toEqual({
      "app.creator": ["Cosmoshi Netowoko", "Cosmoshi"],
      "app.key": ["name"],
      "app.noindex_key": ["index is working"],
    });
  });

  test("default: Tx adds tm.event, tx.hash (uppercase sha256) and tx.height", () => {
    const tx = utf8ToBytes("name=satoshi");
    const map = buildEventsMap("Tx", { height: 12, index: 0, tx, result: txResult(APP_EVENTS) });
    expect(map).toEqual({
      "app.creator": ["Cosmoshi Netowoko", "Cosmoshi"],
      "app.key": ["name"],
      "app.noindex_key": ["index is working"],
      "tm.event": ["Tx"],
      "tx.hash": [bytesToHexUpper(sha256(tx))],
      "tx.height": ["12"],
    });
    // sha256("name=satoshi"), computed with Python's hashlib.
    expect(map["tx.hash"]).toEqual(["57D835FBBA0DBF922D8A2EDA56922C9B24E7760927F245A7684A736C4769DB8A"]);
  });

  test("default: NewBlock and NewBlockEvents take FinalizeBlock events; no block.height key", () => {
    const fb = { events: APP_EVENTS, txResults: [], validatorUpdates: [], appHash: new Uint8Array() };
    const newBlock = buildEventsMap("NewBlock", {
      block: {} as never,
      blockId: {} as never,
      resultFinalizeBlock: fb,
    });
    expect(newBlock["tm.event"]).toEqual(["NewBlock"]);
    expect(newBlock["app.creator"]).toEqual(["Cosmoshi Netowoko", "Cosmoshi"]);
    expect(newBlock["block.height"]).toBeUndefined();
    const blockEvents = buildEventsMap("NewBlockEvents", { height: 3, events: APP_EVENTS, numTxs: 0 });
    expect(blockEvents["tm.event"]).toEqual(["NewBlockEvents"]);
    expect(blockEvents["app.key"]).toEqual(["name"]);
  });

  test("default: other events carry only tm.event", () => {
    expect(buildEventsMap("NewRoundStep", ROUND_STATE)).toEqual({ "tm.event": ["NewRoundStep"] });
  });

  test("args: explicit events replace the derived ones; an app's tm.event is kept before ours", () => {
    const map = buildEventsMap("NewBlockEvents", { height: 3, events: APP_EVENTS, numTxs: 0 }, { "tm.event": ["x"] });
    expect(map).toEqual({ "tm.event": ["x", "NewBlockEvents"] });
  });
});

describe("EventBus", () => {
  test("default: delivers matching messages in order, skips others", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("client", parseQuery("tm.event = 'Tx' AND app.key = 'name'"));
    bus.publish("NewRoundStep", ROUND_STATE);
    bus.publish("Tx", { height: 1, index: 0, tx: utf8ToBytes("a"), result: txResult(APP_EVENTS) });
    bus.publish("Tx", { height: 1, index: 1, tx: utf8ToBytes("b"), result: txResult([]) });
    bus.publish("Tx", { height: 2, index: 0, tx: utf8ToBytes("c"), result: txResult(APP_EVENTS) });
    const first = await sub.next();
    const second = await sub.next();
    expect(first?.type).toBe("Tx");
    expect(first?.type === "Tx" && first.data.height).toBe(1);
    expect(second?.type === "Tx" && second.data.height).toBe(2);
    expect(second?.events["tx.height"]).toEqual(["2"]);
  });

  test("default: a waiting reader is resolved by publish", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("client", parseQuery("tm.event = 'Vote'"));
    const pending = sub.next();
    bus.publish("Vote", { vote: {} as never });
    expect((await pending)?.type).toBe("Vote");
  });

  test("behavior: a full buffer cancels the subscription with CometBFT's reason, publish never blocks", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("client", parseQuery("tm.event = 'NewRoundStep'"), { capacity: 3 });
    const other = bus.subscribe("client", parseQuery("tm.event = 'Lock'"), { capacity: 1 });
    for (let i = 0; i < 3; i++) bus.publish("NewRoundStep", { ...ROUND_STATE, round: i });
    expect(sub.cancelled()).toBeUndefined();
    bus.publish("NewRoundStep", { ...ROUND_STATE, round: 3 });
    expect(sub.cancelled()).toBe("internal subscription event buffer is out of capacity");
    expect(CANCEL_REASONS.outOfCapacity).toBe("internal subscription event buffer is out of capacity");
    expect(await sub.next()).toBeUndefined();
    expect(sub.signal.aborted).toBe(true);
    // The slot is released; the other subscription is untouched.
    expect(bus.numClientSubscriptions("client")).toBe(1);
    expect(other.cancelled()).toBeUndefined();
    // The same query can be subscribed again.
    bus.subscribe("client", parseQuery("tm.event='NewRoundStep'"));
  });

  test("error: duplicate canonical query for one subscriber", () => {
    const bus = new EventBus();
    bus.subscribe("a", parseQuery("tm.event='NewBlock'"));
    expect(() => bus.subscribe("a", parseQuery("tm.event = 'NewBlock'"))).toThrow(AlreadySubscribedError);
    expect(() => bus.subscribe("a", parseQuery("tm.event = 'NewBlock'"))).toThrow("already subscribed");
    // Another subscriber may hold the same query.
    bus.subscribe("b", parseQuery("tm.event = 'NewBlock'"));
    expect(bus.numClients()).toBe(2);
  });

  test("error: unsubscribe and unsubscribeAll of nothing", () => {
    const bus = new EventBus();
    expect(() => bus.unsubscribe("a", parseQuery("tm.event='NewBlock'"))).toThrow(SubscriptionNotFoundError);
    expect(() => bus.unsubscribeAll("a")).toThrow("subscription not found");
    bus.subscribe("a", parseQuery("tm.event='Tx'"));
    expect(() => bus.unsubscribe("a", parseQuery("tm.event='NewBlock'"))).toThrow("subscription not found");
  });

  test("default: unsubscribe matches on the canonical query; unsubscribeAll ends everything", async () => {
    const bus = new EventBus();
    const s1 = bus.subscribe("a", parseQuery("tm.event='NewBlock'"));
    const s2 = bus.subscribe("a", parseQuery("tm.event='Tx'"));
    const s3 = bus.subscribe("b", parseQuery("tm.event='Tx'"));
    expect(bus.numClients()).toBe(2);
    expect(bus.numClientSubscriptions("a")).toBe(2);
    bus.unsubscribe("a", parseQuery("tm.event  =  'NewBlock'"));
    expect(s1.cancelled()).toBe("client unsubscribed");
    expect(bus.numClientSubscriptions("a")).toBe(1);
    bus.unsubscribeAll("a");
    expect(s2.cancelled()).toBe("client unsubscribed");
    expect(await s2.next()).toBeUndefined();
    expect(bus.numClients()).toBe(1);
    expect(bus.numClientSubscriptions("a")).toBe(0);
    expect(s3.cancelled()).toBeUndefined();
    expect(() => bus.unsubscribeAll("a")).toThrow(SubscriptionNotFoundError);
  });

  test("behavior: cancel() and an AbortSignal end the subscription and free the slot", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("a", parseQuery("tm.event='Tx'"));
    const pending = sub.next();
    sub.cancel();
    expect(await pending).toBeUndefined();
    expect(bus.numClients()).toBe(0);

    const controller = new AbortController();
    const sub2 = bus.subscribe("a", parseQuery("tm.event='Tx'"), { signal: controller.signal });
    controller.abort();
    expect(sub2.cancelled()).toBe("client unsubscribed");
    expect(bus.numClients()).toBe(0);
    expect(() => bus.subscribe("a", parseQuery("tm.event='Tx'"), { signal: controller.signal })).toThrow();
  });

  test("default: async iteration ends on cancel", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("a", parseQuery("tm.event='NewRoundStep'"));
    for (let i = 0; i < 3; i++) bus.publish("NewRoundStep", { ...ROUND_STATE, round: i });
    const seen: number[] = [];
    for await (const msg of sub) {
      if (msg.type === "NewRoundStep") seen.push(msg.data.round);
      if (seen.length === 3) sub.cancel("done");
    }
    expect(seen).toEqual([0, 1, 2]);
    expect(sub.cancelled()).toBe("done");
  });

  test("behavior: close cancels everything with 'CometBFT exited' and refuses new subscriptions", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("a", parseQuery("tm.event='Tx'"));
    const pending = sub.next();
    bus.close();
    expect(await pending).toBeUndefined();
    expect(sub.cancelled()).toBe("CometBFT exited");
    expect(bus.numClients()).toBe(0);
    expect(() => bus.subscribe("a", parseQuery("tm.event='Tx'"))).toThrow(EventBusClosedError);
    bus.publish("NewRoundStep", ROUND_STATE);
  });

  test("error: capacity must be a positive integer", () => {
    const bus = new EventBus();
    expect(() => bus.subscribe("a", parseQuery("tm.event='Tx'"), { capacity: 0 })).toThrow(InvalidCapacityError);
  });

  test("behavior: with no subscribers publish builds nothing", () => {
    const bus = new EventBus();
    expect(bus.hasSubscribers()).toBe(false);
    // A payload whose events would throw if read proves the map is never built.
    const poisoned = {
      height: 1,
      index: 0,
      tx: new Uint8Array(),
      get result(): ExecTxResult {
        throw new PoisonedPayloadError("the payload was read");
      },
    };
    bus.publish("Tx", poisoned);
    // Nor when every query names another event type (tm.event = 'X'): a dashboard's NewBlock and
    // Vote subscriptions cost nothing per Tx event.
    const sub = bus.subscribe("a", parseQuery("tm.event='Vote'"));
    expect(bus.hasSubscribers()).toBe(true);
    bus.publish("Tx", poisoned);
    // A query that may match a Tx does read it.
    const any = bus.subscribe("b", parseQuery("tx.height > 0"));
    expect(() => bus.publish("Tx", poisoned)).toThrow(PoisonedPayloadError);
    any.cancel();
    bus.publish("Tx", poisoned);
    const typed = bus.subscribe("c", parseQuery("tm.event = 'Tx' AND tx.height > 0"));
    expect(() => bus.publish("Tx", poisoned)).toThrow(PoisonedPayloadError);
    typed.cancel();
    sub.cancel();
    bus.publish("Tx", poisoned);
  });

  test("behavior: one query is evaluated once for all its subscribers", () => {
    const bus = new EventBus();
    let calls = 0;
    const q = parseQuery("tm.event='Vote'");
    const counting = {
      ...q,
      text: q.text,
      conditions: q.conditions,
      canonical: () => q.canonical(),
      matches: (e: Parameters<typeof q.matches>[0]) => {
        calls++;
        return q.matches(e);
      },
    };
    const subs = ["a", "b", "c"].map((s) => bus.subscribe(s, counting));
    bus.publish("Vote", { vote: {} as never });
    expect(calls).toBe(1);
    expect(subs.every((s) => s.cancelled() === undefined)).toBe(true);
  });

  test("default: Message is typed by event name", async () => {
    const bus = new EventBus();
    const sub = bus.subscribe("a", parseQuery("tm.event='NewRound'"));
    bus.publish("NewRound", {
      ...ROUND_STATE,
      step: "RoundStepNewRound",
      proposer: { address: new Uint8Array(20), index: 0 },
    });
    const msg = (await sub.next()) as Message;
    expect(msg.type === "NewRound" && msg.data.proposer.index).toBe(0);
  });
});
