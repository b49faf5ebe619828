import { describe, expect, test } from "vitest";
import { type ProductionControl, TimeoutPolicy } from "./blockProduction.js";
import type { MempoolAccess } from "./deps.js";
import { MiningPolicy } from "./miningPolicy.js";

/** A mempool of `size` txs whose notifications the test fires by hand. */
function fakeMempool(): MempoolAccess & { size: () => number; n: number; add(): void; available(): void } {
  const added: ((tx: Uint8Array) => void)[] = [];
  const avail: (() => void)[] = [];
  const m = {
    n: 0,
    reapMaxBytesMaxGas: () => [],
    lock: () => Promise.resolve(() => {}),
    update: () => Promise.resolve(),
    onTxsAvailable: (cb: () => void) => {
      avail.push(cb);
      return () => {
        avail.splice(avail.indexOf(cb), 1);
      };
    },
    onTxAdded: (cb: (tx: Uint8Array) => void) => {
      added.push(cb);
      return () => {
        added.splice(added.indexOf(cb), 1);
      };
    },
    size: () => m.n,
    add() {
      m.n++;
      for (const cb of [...added]) cb(new Uint8Array([m.n]));
    },
    available() {
      for (const cb of [...avail]) cb();
    },
  };
  return m;
}

function recorder(): ProductionControl & { wakes: number; txs: number } {
  const r = {
    wakes: 0,
    txs: 0,
    wake: () => {
      r.wakes++;
    },
    txsAvailable: () => {
      r.txs++;
    },
  };
  return r;
}

const TIME = () => 0n;

describe("TimeoutPolicy (CometBFT's rule)", () => {
  test("default: create_empty_blocks proposes at once, does not wait and subscribes to nothing", () => {
    const m = fakeMempool();
    const p = new TimeoutPolicy(m, { createEmptyBlocks: true, createEmptyBlocksIntervalMs: 0 });
    expect(p.waitsForTxs).toBe(false);
    expect([p.proofBlocks, p.durableWal, p.rewindable, p.proposerTime]).toEqual([true, true, false, undefined]);
    const c = recorder();
    p.start(c);
    m.available();
    expect(c.txs).toBe(0);
  });

  test("behavior: without empty blocks it waits for TxsAvailable, proposes when txs wait, rechecks at the interval", () => {
    const m = fakeMempool();
    const p = new TimeoutPolicy(m, { createEmptyBlocks: true, createEmptyBlocksIntervalMs: 5000 });
    expect(p.waitsForTxs).toBe(true);
    const c = recorder();
    const off = p.start(c);
    m.available();
    expect(c.txs).toBe(1);
    expect(p.atNewRound()).toEqual({ propose: false, recheckMs: 5000 });
    m.n = 2;
    expect(p.atNewRound()).toEqual({ propose: true, recheckMs: 5000 });
    off();
    m.available();
    expect(c.txs).toBe(1);
  });
});

describe("MiningPolicy (dev chains)", () => {
  test("default: waits, makes no proof blocks, a non-durable WAL, rewindable, the proposer's time", () => {
    const p = new MiningPolicy(fakeMempool(), { automine: true, intervalMs: 0 }, TIME);
    expect([p.waitsForTxs, p.proofBlocks, p.durableWal, p.rewindable]).toEqual([true, false, false, true]);
    expect(p.proposerTime).toBe(TIME);
    expect(p.atNewRound()).toEqual({ propose: false, recheckMs: 0 });
  });

  test("behavior: automine wants a block once a tx arrives, and stops after an empty block made for nothing new", () => {
    const m = fakeMempool();
    const p = new MiningPolicy(m, { automine: true, intervalMs: 0 }, TIME);
    const c = recorder();
    p.start(c);
    m.add();
    expect(c.txs).toBe(1);
    expect(p.atNewRound()).toEqual({ propose: true, recheckMs: 0 });
    // The tx could not run (a nonce gap): the block came out empty and nothing arrived meanwhile.
    p.reaping();
    p.committed(1, 0);
    expect(p.wantsBlock()).toBe(false);
    m.add();
    expect(p.wantsBlock()).toBe(true);
  });

  test("behavior: mine requests wake consensus and resolve with the heights committed", async () => {
    const p = new MiningPolicy(fakeMempool(), { automine: false, intervalMs: 0 }, TIME);
    const early = p.mineBlocks(1);
    const c = recorder();
    p.start(c);
    expect(c.wakes).toBe(1);
    const two = p.mineBlocks(2);
    expect(c.wakes).toBe(2);
    expect(p.atNewRound().propose).toBe(true);
    p.committed(1, 0);
    p.committed(2, 0);
    p.committed(3, 0);
    await expect(early).resolves.toEqual([1]);
    await expect(two).resolves.toEqual([2, 3]);
    expect(p.wantsBlock()).toBe(false);
  });

  test("behavior: interval mining rechecks after the interval; a changed interval wakes consensus", () => {
    const p = new MiningPolicy(fakeMempool(), { automine: false, intervalMs: 0 }, TIME);
    const c = recorder();
    p.start(c);
    p.setMining({ automine: false, intervalMs: 2000 });
    expect(c.wakes).toBe(1);
    expect(p.atNewRound()).toEqual({ propose: false, recheckMs: 2000 });
    expect(p.mining()).toEqual({ automine: false, intervalMs: 2000 });
  });

  test("error: a rewind fails the waiting requests; a stop fails them and every later one", async () => {
    const p = new MiningPolicy(fakeMempool(), { automine: false, intervalMs: 0 }, TIME);
    p.start(recorder());
    const waiting = p.mineBlocks(3);
    p.abandon(new Error("the chain was reverted"), false);
    await expect(waiting).rejects.toThrow("the chain was reverted");
    p.abandon(new Error("consensus stopped"), true);
    await expect(p.mineBlocks(1)).rejects.toThrow("consensus stopped");
  });
});
