import { describe, expect, test } from "vitest";
import type { Block } from "../types/index.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { BlockPool, type BlockPoolOptions } from "./blockPool.js";
import { BlocksyncPeerError } from "./errors.js";

/** The pool only looks at a block's height. */
function block(height: number): Block {
  return { header: { height } } as Block;
}

function setup(opts: Partial<BlockPoolOptions> = {}, startHeight = 1) {
  const clock = new ManualClock();
  const requests: { height: number; peerId: string }[] = [];
  const errors: BlocksyncPeerError[] = [];
  const pool = new BlockPool(
    startHeight,
    {
      clock,
      log: silentLogger(),
      sendRequest: (height, peerId) => requests.push({ height, peerId }),
      onPeerError: (_peerId, err) => errors.push(err),
    },
    { peerConnWaitMs: 0, ...opts },
  );
  pool.start();
  const takeRequests = () => requests.splice(0);
  return { clock, pool, requests, errors, takeRequests };
}

describe("BlockPool", () => {
  test("default: asks each height of a peer whose range holds it, at most maxPendingPerPeer each", () => {
    const { pool, takeRequests } = setup({ maxPendingPerPeer: 3 });
    pool.setPeerRange("a", 1, 4);
    pool.setPeerRange("b", 3, 10);
    const sent = takeRequests();
    // a holds 1..4, b holds 3..10; 2 peers × 3 = 6 requesters: heights 1..6.
    expect(sent.map((r) => r.height).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const r of sent) {
      if (r.peerId === "a") expect(r.height).toBeLessThanOrEqual(4);
      if (r.peerId === "b") expect(r.height).toBeGreaterThanOrEqual(3);
    }
    expect(sent.filter((r) => r.peerId === "a").length).toBeLessThanOrEqual(3);
    expect(sent.filter((r) => r.peerId === "b").length).toBeLessThanOrEqual(3);
    expect(pool.maxPeerHeight()).toBe(10);
  });

  test("args: no requests before peerConnWaitMs, and never more than maxPendingRequests requesters", () => {
    const { pool, clock, takeRequests } = setup({ peerConnWaitMs: 3000, maxPendingRequests: 5 });
    pool.setPeerRange("a", 1, 100);
    expect(takeRequests()).toEqual([]);
    clock.advance(3000);
    expect(takeRequests().map((r) => r.height)).toEqual([1, 2, 3, 4, 5]);
    expect(pool.status()).toMatchObject({ numRequesters: 5, numPending: 5 });
  });

  test("behavior: peekTwoBlocks needs H and H+1; popRequest moves on and asks for more", () => {
    const { pool, takeRequests } = setup({ maxPendingPerPeer: 2 });
    pool.setPeerRange("a", 1, 10);
    expect(takeRequests().map((r) => r.height)).toEqual([1, 2]);
    expect(pool.addBlock("a", block(2))).toBe(true);
    expect(pool.peekTwoBlocks().first).toBeUndefined();
    // Delivering freed one slot of a's two: height 3 is asked.
    expect(takeRequests().map((r) => r.height)).toEqual([]);
    expect(pool.addBlock("a", block(1))).toBe(true);
    const { first, second } = pool.peekTwoBlocks();
    expect([first?.header.height, second?.header.height]).toEqual([1, 2]);
    pool.popRequest();
    expect(pool.height()).toBe(2);
    expect(takeRequests().map((r) => r.height)).toEqual([3]);
  });

  test("behavior: a peer that sends nothing within peerTimeoutMs is reported and its heights go to another peer", () => {
    const { pool, clock, errors, takeRequests } = setup({ peerTimeoutMs: 15_000, maxPendingPerPeer: 2 });
    pool.setPeerRange("slow", 1, 10);
    expect(takeRequests()).toEqual([
      { height: 1, peerId: "slow" },
      { height: 2, peerId: "slow" },
    ]);
    pool.setPeerRange("good", 1, 10);
    const toGood = takeRequests();
    expect(toGood.every((r) => r.peerId === "good")).toBe(true);
    clock.advance(14_999);
    expect(errors).toEqual([]);
    pool.addBlock("good", block(3));
    clock.advance(1);
    expect(errors.map((e) => e.message)).toEqual(["error with peer slow: peer did not send us anything"]);
    expect(errors[0]).toBeInstanceOf(BlocksyncPeerError);
    expect(pool.numPeers()).toBe(1);
    const redone = takeRequests();
    expect(redone.map((r) => r.peerId)).toEqual(["good"]);
    expect(redone.map((r) => r.height)).toEqual([1]);
  });

  test("behavior: a height not delivered within requestRetryMs is asked of another peer, and a late answer is still taken", () => {
    const { pool, clock, errors, takeRequests } = setup({
      peerTimeoutMs: 1_000_000,
      requestRetryMs: 30_000,
      maxPendingPerPeer: 1,
    });
    pool.setPeerRange("a", 1, 10);
    pool.setPeerRange("b", 1, 10);
    const first = takeRequests();
    expect(first.map((r) => r.height).sort()).toEqual([1, 2]);
    const holder1 = first.find((r) => r.height === 1)?.peerId;
    const other = holder1 === "a" ? "b" : "a";
    pool.addBlock(other, block(2));
    takeRequests();
    clock.advance(30_000);
    const retried = takeRequests().filter((r) => r.height === 1);
    expect(retried.length).toBe(1);
    // The original peer answers late: accepted, no error.
    expect(pool.addBlock(holder1 as string, block(1))).toBe(true);
    expect(errors).toEqual([]);
  });

  test("behavior: NoBlockResponse sends the height to another peer and not back to the refusing one", () => {
    const { pool, takeRequests } = setup({ maxPendingPerPeer: 2 });
    pool.setPeerRange("a", 1, 5);
    expect(takeRequests()).toEqual([
      { height: 1, peerId: "a" },
      { height: 2, peerId: "a" },
    ]);
    pool.redoRequestFrom(1, "a");
    // a refused 1 and is the only peer: 1 waits.
    expect(takeRequests()).toEqual([]);
    pool.setPeerRange("b", 1, 5);
    expect(takeRequests()).toContainEqual({ height: 1, peerId: "b" });
  });

  test("error: unrequested blocks and blocks from the wrong peer are reported; already applied ones are ignored", () => {
    const { pool, errors, takeRequests } = setup({ maxPendingPerPeer: 2 });
    pool.setPeerRange("a", 1, 10);
    pool.setPeerRange("b", 1, 10);
    const sent = takeRequests();
    const toA = sent.find((r) => r.peerId === "a")?.height as number;
    expect(pool.addBlock("b", block(toA))).toBe(false);
    expect(errors.map((e) => e.message)).toEqual([`error with peer b: requested block #${toA} from a, not b`]);
    expect(pool.addBlock("a", block(99))).toBe(false);
    expect(errors[1]?.message).toMatchInlineSnapshot(
      `"error with peer a: peer sent us block #99 we didn't expect (current height: 1, start height: 1)"`,
    );
    // Both were dropped from the pool.
    expect(pool.numPeers()).toBe(0);

    const s = setup({ maxPendingPerPeer: 2 });
    s.pool.setPeerRange("a", 1, 10);
    s.pool.addBlock("a", block(1));
    s.pool.addBlock("a", block(2));
    s.pool.popRequest();
    expect(s.pool.addBlock("a", block(1))).toBe(false);
    expect(s.errors).toEqual([]);
  });

  test("behavior: removePeerAndRedoAllPeerRequests drops the sender's blocks and bans it", () => {
    const { pool, clock, takeRequests } = setup({ maxPendingPerPeer: 5, banMs: 60_000 });
    pool.setPeerRange("bad", 1, 10);
    for (const r of takeRequests()) pool.addBlock("bad", block(r.height));
    expect(pool.peekTwoBlocks().first).toBeDefined();
    expect(pool.removePeerAndRedoAllPeerRequests(1)).toBe("bad");
    expect(pool.peekTwoBlocks()).toEqual({ first: undefined, second: undefined });
    expect(pool.isPeerBanned("bad")).toBe(true);
    pool.setPeerRange("bad", 1, 10);
    expect(pool.numPeers()).toBe(0);
    pool.setPeerRange("good", 1, 10);
    expect(takeRequests().map((r) => r.peerId)).toEqual(["good", "good", "good", "good", "good"]);
    clock.advance(60_000);
    expect(pool.isPeerBanned("bad")).toBe(false);
  });

  test("behavior: a peer reporting a lower height than before is dropped and banned", () => {
    const { pool } = setup();
    pool.setPeerRange("a", 1, 10);
    pool.setPeerRange("b", 1, 7);
    pool.setPeerRange("a", 1, 9);
    expect(pool.numPeers()).toBe(1);
    expect(pool.maxPeerHeight()).toBe(7);
    expect(pool.isPeerBanned("a")).toBe(true);
  });

  test("default: isCaughtUp needs a peer and height >= max peer height - 1", () => {
    const { pool } = setup({}, 9);
    expect(pool.isCaughtUp()).toBe(false);
    pool.setPeerRange("a", 1, 11);
    expect(pool.isCaughtUp()).toBe(false);
    pool.addBlock("a", block(9));
    pool.addBlock("a", block(10));
    pool.popRequest();
    expect(pool.height()).toBe(10);
    expect(pool.isCaughtUp()).toBe(true);

    const fresh = setup();
    fresh.pool.setPeerRange("a", 0, 0);
    expect(fresh.pool.isCaughtUp()).toBe(true);
  });

  test("behavior: after stop nothing is sent and timers are gone", () => {
    const { pool, clock, requests, errors } = setup();
    pool.setPeerRange("a", 1, 10);
    const n = requests.length;
    pool.stop();
    pool.setPeerRange("b", 1, 20);
    clock.advance(100_000);
    expect(requests.length).toBe(n);
    expect(errors).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
