import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { blockIdEquals, makePartSet } from "../types/index.js";
import { utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { BlockExecutor } from "./blockExecutor.js";
import {
  capturingLogger,
  createTestNode,
  heightOf,
  MemoryNetwork,
  makeDisk,
  makeTestChain,
  runUntil,
  type TestNode,
  TestSetupError,
  tempDir,
} from "./testing/harness.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function dir(): string {
  const d = tempDir();
  cleanups.push(d.cleanup);
  return d.dir;
}

/**
 * What block sync does to a node's stores: saves blocks from..to of `source` with the next
 * block's LastCommit (the source's seen commit for its last block) and applies them.
 */
async function applyBlocksFrom(source: TestNode, target: TestNode, from: number, to: number, clock: ManualClock) {
  const exec = new BlockExecutor({
    app: target.app,
    blockStore: target.blockStore,
    stateStore: target.stateStore,
    mempool: target.mempool,
    clock,
    log: silentLogger(),
  });
  let state = target.stateStore.load() ?? target.consensus.chainState();
  for (let h = from; h <= to; h++) {
    const block = source.blockStore.loadBlock(h);
    const meta = source.blockStore.loadBlockMeta(h);
    const seen = source.blockStore.loadBlock(h + 1)?.lastCommit ?? source.blockStore.loadSeenCommit(h);
    if (block === undefined || meta === undefined || seen === undefined) {
      throw new TestSetupError(`source lacks block ${h} or its commit`);
    }
    await target.blockStore.saveBlock(block, makePartSet(block), seen);
    state = (await exec.applyBlock(state, meta.blockId, block, { validate: true })).state;
  }
  return state;
}

function expectSameBlocks(a: TestNode, b: TestNode, from: number, to: number): void {
  for (let h = from; h <= to; h++) {
    const ma = a.blockStore.loadBlockMeta(h);
    const mb = b.blockStore.loadBlockMeta(h);
    expect(ma && mb && blockIdEquals(ma.blockId, mb.blockId), `block ${h}`).toBe(true);
  }
}

describe("switch to consensus after block sync", () => {
  test("behavior: start() adopts the state block sync saved and the validator goes on from the next height", async () => {
    const clock = new ManualClock();
    const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
    const a = await createTestNode({ disk: makeDisk(dir(), chain.privKeys[0]), genesis: chain.genesis, clock });
    await a.consensus.start();
    await a.mempool.checkTx(utf8ToBytes("x=1"));
    await runUntil([a.consensus], clock, () => heightOf(a) >= 6);
    await a.consensus.stop();
    const n = a.blockStore.height();

    // The validator moves to a new machine that block-synced A's chain (consensus built before that).
    const { log, lines } = capturingLogger();
    const b = await createTestNode({ disk: makeDisk(dir(), chain.privKeys[0]), genesis: chain.genesis, clock, log });
    expect(b.consensus.chainState().lastBlockHeight).toBe(0);
    await applyBlocksFrom(a, b, 1, n, clock);

    await b.consensus.start();
    expect(b.consensus.chainState().lastBlockHeight).toBe(n);
    expect(b.consensus.roundStateView().height).toBe(n + 1);
    expect(lines).toContain("switching to consensus: adopting the state block sync reached");
    await runUntil([b.consensus], clock, () => heightOf(b) >= n + 3);
    expect(b.consensus.haltError()).toBeUndefined();
    const next = b.blockStore.loadBlock(n + 1);
    const last = a.blockStore.loadBlockMeta(n);
    expect(next && last && blockIdEquals(next.header.lastBlockId, last.blockId)).toBe(true);
    // The WAL was not replayed: it only knows heights before the handover.
    expect(lines.some((l) => l.startsWith("error on catchup replay"))).toBe(false);
    await b.consensus.stop();
  });

  test("behavior: a node whose WAL is behind its stores adopts the synced state and keeps up with its peer", async () => {
    const clock = new ManualClock();
    const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
    const net = new MemoryNetwork();
    const a = await createTestNode({
      disk: makeDisk(dir(), chain.privKeys[0]),
      genesis: chain.genesis,
      clock,
      gossip: net.gossipFor("A"),
    });
    const oDisk = makeDisk(dir(), undefined);
    const o = await createTestNode({ disk: oDisk, genesis: chain.genesis, clock, gossip: net.gossipFor("O") });
    net.join("A", a.consensus);
    net.join("O", o.consensus);
    await a.consensus.start();
    await o.consensus.start();
    await runUntil([a.consensus, o.consensus], clock, () => heightOf(o) >= 3);
    // O goes down with a WAL that ends at height 3; the chain moves on without it.
    net.leave("O");
    await o.consensus.stop();
    const oHeight = heightOf(o);
    await runUntil([a.consensus], clock, () => heightOf(a) >= oHeight + 5);

    // O restarts: handshake at its old height, then block sync brings the stores to A's height - 1.
    const { log, lines } = capturingLogger();
    const o2 = await createTestNode({ disk: oDisk, genesis: chain.genesis, clock, gossip: net.gossipFor("O"), log });
    expect(o2.consensus.chainState().lastBlockHeight).toBe(oHeight);
    const synced = a.blockStore.height() - 1;
    await applyBlocksFrom(a, o2, oHeight + 1, synced, clock);
    await o2.consensus.start();
    expect(o2.consensus.roundStateView().height).toBe(synced + 1);
    net.join("O", o2.consensus);
    await runUntil([a.consensus, o2.consensus], clock, () => heightOf(o2) >= synced + 3);
    expect(o2.consensus.haltError()).toBeUndefined();
    expectSameBlocks(a, o2, 1, synced + 3);
    expect(lines.some((l) => l.startsWith("error on catchup replay"))).toBe(false);
    await Promise.all([a.consensus.stop(), o2.consensus.stop()]);
  });

  test("behavior: a WAL without #ENDHEIGHT for the last height is logged and consensus proceeds", async () => {
    const clock = new ManualClock();
    const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
    const disk = makeDisk(dir(), chain.privKeys[0]);
    const a = await createTestNode({ disk, genesis: chain.genesis, clock });
    await a.consensus.start();
    await runUntil([a.consensus], clock, () => heightOf(a) >= 4);
    await a.consensus.stop();
    const n = heightOf(a);
    // A fresh WAL only holds #ENDHEIGHT 0 (as after losing the file).
    rmSync(join(disk.dir, "cs.wal"), { recursive: true, force: true });

    const { log, lines } = capturingLogger();
    const a2 = await createTestNode({ disk, genesis: chain.genesis, clock, log });
    await a2.consensus.start();
    expect(lines.find((l) => l.startsWith("error on catchup replay"))).toContain(
      `cannot replay height ${n + 1}. WAL does not contain #ENDHEIGHT for ${n}`,
    );
    await runUntil([a2.consensus], clock, () => heightOf(a2) >= n + 3);
    expect(a2.consensus.haltError()).toBeUndefined();
    await a2.consensus.stop();
  });
});
