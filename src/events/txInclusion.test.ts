import { afterEach, expect, test, vi } from "vitest";
import type { ExecTxResult } from "../types/index.js";
import { ChainEpoch } from "./chainEpoch.js";
import { TxNotIncludedError, TxWaitRewoundError, TxWaitStoppedError, TxWaitTimeoutError } from "./errors.js";
import { TxInclusion } from "./txInclusion.js";

const enc = new TextEncoder();
function tx(s: string): Uint8Array {
  return enc.encode(s);
}
function result(code: number): ExecTxResult {
  return {
    code,
    data: new Uint8Array(0),
    log: `r${code}`,
    info: "",
    gasWanted: 0n,
    gasUsed: 0n,
    events: [],
    codespace: "",
  };
}

afterEach(() => {
  vi.useRealTimers();
});

test("behavior: a wait resolves with the height, index and result of the block that includes the tx (by its bytes, not the object)", async () => {
  const inc = new TxInclusion();
  const w = inc.wait(tx("a"));
  inc.blockCommitted(4, [tx("x")], [result(0)]);
  inc.blockCommitted(5, [tx("y"), tx("a")], [result(0), result(7)]);
  await expect(w.promise).resolves.toEqual({ height: 5, index: 1, result: result(7) });
  expect(inc.size()).toBe(0);
});

test("behavior: many waiters, on one tx and on several, each settle once from the one feed", async () => {
  const inc = new TxInclusion();
  const waits = Array.from({ length: 50 }, (_, i) => inc.wait(tx(`t${i % 5}`), { owner: `c${i % 3}` }));
  expect(inc.size()).toBe(50);
  expect(inc.ownerWaits("c0")).toBe(17);
  expect([...inc.owners()].sort()).toEqual(["c0", "c1", "c2"]);
  expect(inc.isWaiting("c1", tx("t1"))).toBe(true);
  expect(inc.isWaiting("c1", tx("zz"))).toBe(false);
  expect(inc.isWaiting("c9", tx("t0"))).toBe(false);
  inc.blockCommitted(1, [tx("t0"), tx("t1")], [result(0), result(1)]);
  inc.blockCommitted(2, [tx("t2"), tx("t3"), tx("t4")], [result(2), result(3), result(4)]);
  const got = await Promise.all(waits.map((w) => w.promise));
  got.forEach((g, i) => {
    expect(g.result.code).toBe(i % 5);
    expect(g.height).toBe(i % 5 < 2 ? 1 : 2);
  });
  expect(inc.size()).toBe(0);
  expect([...inc.owners()]).toEqual([]);
});

test("behavior: a wait with acceptRecent that starts after its tx's block resolves at once while the inclusion is among the recent ones", async () => {
  const inc = new TxInclusion({ recent: 2 });
  inc.blockCommitted(1, [tx("a"), tx("b")], [result(0), result(1)]);
  await expect(inc.wait(tx("a"), { acceptRecent: true }).promise).resolves.toEqual({
    height: 1,
    index: 0,
    result: result(0),
  });
  inc.blockCommitted(2, [tx("c")], [result(2)]);
  // "a" fell out of the window of 2: the wait waits.
  const late = inc.wait(tx("a"), { maxBlocks: 1, acceptRecent: true });
  await expect(inc.wait(tx("b"), { acceptRecent: true }).promise).resolves.toMatchObject({ height: 1, index: 1 });
  inc.blockCommitted(3, [], []);
  await expect(late.promise).rejects.toBeInstanceOf(TxNotIncludedError);
});

test("behavior: without acceptRecent a wait wants the next block with the tx, not an earlier one with the same bytes", async () => {
  const inc = new TxInclusion();
  inc.blockCommitted(1, [tx("k=v")], [result(0)]);
  const again = inc.wait(tx("k=v"));
  inc.blockCommitted(2, [], []);
  inc.blockCommitted(3, [tx("k=v")], [result(5)]);
  await expect(again.promise).resolves.toEqual({ height: 3, index: 0, result: result(5) });
});

test("behavior: the timeout rejects with TxWaitTimeoutError and the wait is gone", async () => {
  vi.useFakeTimers();
  const inc = new TxInclusion();
  const w = inc.wait(tx("a"), { timeoutMs: 1000, owner: "c" });
  vi.advanceTimersByTime(999);
  expect(inc.size()).toBe(1);
  vi.advanceTimersByTime(1);
  await expect(w.promise).rejects.toBeInstanceOf(TxWaitTimeoutError);
  expect(inc.size()).toBe(0);
  expect(inc.ownerWaits("c")).toBe(0);
  // A later block with the tx settles nothing twice.
  inc.blockCommitted(1, [tx("a")], [result(0)]);
});

test("behavior: an inclusion clears the wait's timer", async () => {
  vi.useFakeTimers();
  const inc = new TxInclusion();
  const w = inc.wait(tx("a"), { timeoutMs: 1000 });
  inc.blockCommitted(1, [tx("a")], [result(0)]);
  expect(vi.getTimerCount()).toBe(0);
  await expect(w.promise).resolves.toMatchObject({ height: 1 });
});

test("behavior: a rewind of the chain epoch rejects every open wait and forgets the inclusions above its height", async () => {
  const epoch = new ChainEpoch();
  const inc = new TxInclusion({ epoch });
  inc.blockCommitted(1, [tx("old")], [result(0)]);
  inc.blockCommitted(2, [tx("new")], [result(0)]);
  const a = inc.wait(tx("a"));
  const b = inc.wait(tx("b"), { owner: "c" });
  epoch.rewound(1);
  const err = await a.promise.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TxWaitRewoundError);
  expect((err as TxWaitRewoundError).height).toBe(1);
  await expect(b.promise).rejects.toBeInstanceOf(TxWaitRewoundError);
  expect(inc.size()).toBe(0);
  // Height 1 stays; height 2 will be made again, so its tx is waited for anew.
  await expect(inc.wait(tx("old"), { acceptRecent: true }).promise).resolves.toMatchObject({ height: 1 });
  const again = inc.wait(tx("new"), { acceptRecent: true });
  inc.blockCommitted(2, [tx("z"), tx("new")], [result(0), result(3)]);
  await expect(again.promise).resolves.toMatchObject({ height: 2, index: 1 });
});

test("behavior: maxBlocks and stillPending end a wait for a tx no block will carry", async () => {
  const inc = new TxInclusion();
  const three = inc.wait(tx("a"), { maxBlocks: 3 });
  let pending = true;
  const dropped = inc.wait(tx("b"), { stillPending: () => pending });
  inc.blockCommitted(1, [], []);
  inc.blockCommitted(2, [], []);
  expect(inc.size()).toBe(2);
  pending = false;
  inc.blockCommitted(3, [], []);
  const e1 = await three.promise.catch((e: unknown) => e);
  const e2 = await dropped.promise.catch((e: unknown) => e);
  expect(e1).toBeInstanceOf(TxNotIncludedError);
  expect((e1 as TxNotIncludedError).why).toBe("blocks");
  expect((e2 as TxNotIncludedError).why).toBe("dropped");
});

test("behavior: the block that carries the tx resolves it even when it is the last of maxBlocks", async () => {
  const inc = new TxInclusion();
  const w = inc.wait(tx("a"), { maxBlocks: 1, stillPending: () => false });
  inc.blockCommitted(1, [tx("a")], [result(0)]);
  await expect(w.promise).resolves.toMatchObject({ height: 1 });
});

test("behavior: cancel drops the wait without settling it; stop rejects open and later waits with the reason", async () => {
  const inc = new TxInclusion();
  const cancelled = inc.wait(tx("a"), { owner: "c" });
  cancelled.cancel();
  cancelled.cancel();
  expect(inc.size()).toBe(0);
  expect(inc.ownerWaits("c")).toBe(0);
  const open = inc.wait(tx("b"));
  inc.stop("CometBFT exited");
  const err = await open.promise.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TxWaitStoppedError);
  expect((err as TxWaitStoppedError).reason).toBe("CometBFT exited");
  await expect(inc.wait(tx("c")).promise).rejects.toBeInstanceOf(TxWaitStoppedError);
  let settled = false;
  void cancelled.promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  expect(settled).toBe(false);
});

test("behavior: a rejection before the caller awaits is not an unhandled rejection", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (r: unknown) => unhandled.push(r);
  process.on("unhandledRejection", onUnhandled);
  try {
    const inc = new TxInclusion();
    const w = inc.wait(tx("a"));
    inc.rewound(0);
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
    await expect(w.promise).rejects.toBeInstanceOf(TxWaitRewoundError);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
