import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BlockExecutor } from "../consensus/index.js";
import {
  createTestNode,
  heightOf,
  makeDisk,
  makeTestChain,
  runUntil,
  type TestChain,
  type TestNode,
  TestSetupError,
  tempDir,
} from "../consensus/testing/harness.js";
import type { Peer } from "../p2p/reactor.js";
import { type Block, blockIdEquals, type ChainState } from "../types/index.js";
import { bytesEqual, utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { decodeBlocksyncMessage } from "./blocksyncCodec.js";
import {
  BLOCKSYNC_CHANNEL,
  type BlocksyncBlockExecutor,
  type BlocksyncBlockStore,
  type BlocksyncOptions,
  BlocksyncReactor,
} from "./blocksyncReactor.js";
import { BlocksyncPeerError, InvalidBlocksyncMessageError, StoreStateMismatchError } from "./errors.js";
import { MemoryNet } from "./testing/memorySwitch.js";

const SOURCE_HEIGHT = 32;
const cleanups: (() => void)[] = [];
let clock: ManualClock;
let chain: TestChain;
let source: TestNode;

/** Node A: a single-validator chain of SOURCE_HEIGHT blocks (with txs), consensus stopped. */
beforeAll(async () => {
  clock = new ManualClock();
  chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
  const { dir, cleanup } = tempDir("cometh-bs-");
  cleanups.push(cleanup);
  source = await createTestNode({
    disk: makeDisk(dir, chain.privKeys[0]),
    genesis: chain.genesis,
    clock,
    options: { timeoutCommitMs: 100 },
  });
  await source.consensus.start();
  for (let i = 0; i < 6; i++) {
    await source.mempool.checkTx(utf8ToBytes(`k${i}=v${i}`));
    await runUntil([source.consensus], clock, () => heightOf(source) >= 2 * i + 2);
  }
  await runUntil([source.consensus], clock, () => heightOf(source) >= SOURCE_HEIGHT);
  await source.consensus.stop();
  if (source.blockStore.height() !== source.stateStore.load()?.lastBlockHeight) {
    throw new TestSetupError("source node stopped between saving and applying a block");
  }
}, 30_000);

afterAll(() => {
  for (const c of cleanups.splice(0)) c();
});

const FAST: Partial<BlocksyncOptions> = { peerConnWaitMs: 0 };

function executorFor(node: TestNode): BlockExecutor {
  return new BlockExecutor({
    app: node.app,
    blockStore: node.blockStore,
    stateStore: node.stateStore,
    mempool: node.mempool,
    events: node.events,
    clock,
    log: silentLogger(),
  });
}

/** The executor, but applying block `height` fails (a disk or app error after the block verified). */
function failingAt(exec: BlockExecutor, height: number | undefined): BlocksyncBlockExecutor {
  if (height === undefined) return exec;
  return {
    validateBlock: (state, block) => exec.validateBlock(state, block),
    applyBlock: (state, id, block) => {
      if (block.header.height === height) return Promise.reject(new TestSetupError(`apply of ${height} fails`));
      return exec.applyBlock(state, id, block);
    },
  };
}

/** A reactor that only serves `store` (block sync off), like a node already running consensus. */
function servingReactor(store: BlocksyncBlockStore, state: ChainState): BlocksyncReactor {
  return new BlocksyncReactor(
    { blockStore: store, blockExec: executorFor(source), state, clock, log: silentLogger() },
    { enabled: false },
  );
}

function sourceState(): ChainState {
  const s = source.stateStore.load();
  if (s === undefined) throw new TestSetupError("source has no state");
  return s;
}

interface SyncingNode {
  node: TestNode;
  reactor: BlocksyncReactor;
  caughtUp: { state: ChainState; blocksSynced: number }[];
}

/** An empty node with the same genesis; on catching up it starts consensus (the handover). */
async function emptyNode(
  opts: Partial<BlocksyncOptions> = FAST,
  fault: { failApplyAt?: number } = {},
): Promise<SyncingNode> {
  const { dir, cleanup } = tempDir("cometh-bs-");
  cleanups.push(cleanup);
  const node = await createTestNode({ disk: makeDisk(dir, undefined), genesis: chain.genesis, clock });
  const caughtUp: SyncingNode["caughtUp"] = [];
  const reactor = new BlocksyncReactor(
    {
      blockStore: node.blockStore,
      blockExec: failingAt(executorFor(node), fault.failApplyAt),
      state: node.consensus.chainState(),
      clock,
      log: silentLogger(),
      onCaughtUp: async (state, blocksSynced) => {
        caughtUp.push({ state, blocksSynced });
        await node.consensus.start();
      },
    },
    opts,
  );
  cleanups.push(() => {
    void node.consensus.stop();
  });
  return { node, reactor, caughtUp };
}

/** Waits until no message is in flight and no reactor is applying a block. */
async function settle(net: MemoryNet, reactors: BlocksyncReactor[]): Promise<void> {
  let quietRounds = 0;
  for (let i = 0; i < 100_000; i++) {
    await Promise.all(reactors.map((r) => r.idle()));
    await new Promise((r) => setImmediate(r));
    if (net.isQuiet() && reactors.every((r) => r.isIdle())) {
      if (++quietRounds >= 3) return;
    } else {
      quietRounds = 0;
    }
  }
  throw new TestSetupError("memory network never settled");
}

/** Runs the switch check (every switchCheckIntervalMs) and lets the handover finish. */
async function tick(net: MemoryNet, reactors: BlocksyncReactor[], ms = 1000): Promise<void> {
  clock.advance(ms);
  await settle(net, reactors);
}

/** The synced node's chain equals the source's up to its height, and so do state and app. */
async function expectSameChain(synced: TestNode, state: ChainState, from: TestNode = source): Promise<void> {
  const h = state.lastBlockHeight;
  for (let i = 1; i <= h; i++) {
    const a = from.blockStore.loadBlockMeta(i);
    const b = synced.blockStore.loadBlockMeta(i);
    expect(a && b && blockIdEquals(a.blockId, b.blockId), `block ${i}`).toBe(true);
  }
  // The app hash after h is in the header of h+1.
  const next = source.blockStore.loadBlock(h + 1);
  expect(next).toBeDefined();
  expect(bytesEqual(state.appHash, next?.header.appHash ?? new Uint8Array(0))).toBe(true);
  expect(bytesEqual(state.lastResultsHash, next?.header.lastResultsHash ?? new Uint8Array(0))).toBe(true);
  expect(bytesEqual(state.lastBlockId.hash, next?.header.lastBlockId.hash ?? new Uint8Array(0))).toBe(true);
  expect(synced.stateStore.load()?.lastBlockHeight).toBe(h);
  const info = await synced.app.info();
  expect(info.lastBlockHeight).toBe(h);
  expect(bytesEqual(info.lastBlockAppHash, state.appHash)).toBe(true);
  // Seen commit of the last synced block = the next block's LastCommit.
  const seen = synced.blockStore.loadSeenCommit(h);
  expect(seen && next && blockIdEquals(seen.blockId, next.lastCommit.blockId)).toBe(true);
}

describe("BlocksyncReactor", () => {
  test("default: an empty node syncs the chain from a peer, matches its state and hands over to consensus once", async () => {
    const net = new MemoryNet();
    const b = await emptyNode();
    await net.add("A", servingReactor(source.blockStore, sourceState()));
    await net.add("B", b.reactor);
    expect(b.reactor.isSyncing()).toBe(true);
    net.connect("A", "B");
    await settle(net, [b.reactor]);
    expect(b.caughtUp).toEqual([]);
    await tick(net, [b.reactor]);

    expect(b.caughtUp.length).toBe(1);
    const { state, blocksSynced } = b.caughtUp[0] as SyncingNode["caughtUp"][number];
    // Block H needs H+1's LastCommit: the peer's last block is left to consensus.
    expect(state.lastBlockHeight).toBe(SOURCE_HEIGHT - 1);
    expect(blocksSynced).toBe(SOURCE_HEIGHT - 1);
    await expectSameChain(b.node, state);
    expect(b.reactor.isSyncing()).toBe(false);
    expect(b.reactor.syncError()).toBeUndefined();
    // Consensus adopted the synced state.
    expect(b.node.consensus.chainState().lastBlockHeight).toBe(SOURCE_HEIGHT - 1);
    expect(b.node.consensus.roundStateView().height).toBe(SOURCE_HEIGHT);
    // Block txs went through the app: k0..k5 are queryable.
    const q = await b.node.app.query({ path: "", data: utf8ToBytes("k5"), height: 0, prove: false });
    expect(q.value).toEqual(utf8ToBytes("v5"));

    await tick(net, [b.reactor], 30_000);
    expect(b.caughtUp.length).toBe(1);
    expect(net.stops).toEqual([]);
  });

  test("behavior: a peer sending a block with a bad commit is dropped and the block fetched from another peer", async () => {
    const badHeight = 5;
    const tampered: BlocksyncBlockStore = {
      base: () => source.blockStore.base(),
      height: () => source.blockStore.height(),
      saveBlock: () => Promise.reject(new TestSetupError("read only")),
      loadBlock: (h) => {
        const blk = source.blockStore.loadBlock(h);
        return blk === undefined || h !== badHeight ? blk : withBadCommitSignature(blk);
      },
    };
    const net = new MemoryNet();
    const b = await emptyNode();
    await net.add("M", servingReactor(tampered, sourceState()));
    await net.add("A", servingReactor(source.blockStore, sourceState()));
    await net.add("B", b.reactor);
    net.connect("M", "B");
    await settle(net, [b.reactor]);

    // Block 4 is verified with block 5's LastCommit, whose signature M broke.
    expect(b.reactor.status().blocksSynced).toBe(badHeight - 2);
    expect(net.stops.map((s) => [s.by, s.peer])).toEqual([["B", "M"]]);
    const reason = net.stops[0]?.reason;
    expect(reason).toBeInstanceOf(BlocksyncPeerError);
    expect(reason instanceof Error ? reason.message : "").toMatch(/block 4 failed verification: .*wrong signature/);
    await tick(net, [b.reactor]);
    expect(b.caughtUp).toEqual([]);

    net.connect("A", "B");
    await settle(net, [b.reactor]);
    // M is banned: reconnecting does not bring it back into the pool.
    net.connect("M", "B");
    await tick(net, [b.reactor]);
    expect(b.caughtUp.length).toBe(1);
    const { state } = b.caughtUp[0] as SyncingNode["caughtUp"][number];
    expect(state.lastBlockHeight).toBe(SOURCE_HEIGHT - 1);
    await expectSameChain(b.node, state);
    const refetched = b.node.blockStore.loadBlock(badHeight);
    expect(refetched?.lastCommit).toEqual(source.blockStore.loadBlock(badHeight)?.lastCommit);
  });

  test("behavior: after the handover the node keeps serving blocks; a third node syncs from it", async () => {
    const net = new MemoryNet();
    const b = await emptyNode();
    const c = await emptyNode();
    await net.add("A", servingReactor(source.blockStore, sourceState()));
    await net.add("B", b.reactor);
    await net.add("C", c.reactor);
    net.connect("A", "B");
    await settle(net, [b.reactor, c.reactor]);
    await tick(net, [b.reactor, c.reactor]);
    expect(b.caughtUp.length).toBe(1);
    const bHeight = b.node.blockStore.height();

    net.connect("B", "C");
    await settle(net, [b.reactor, c.reactor]);
    await tick(net, [b.reactor, c.reactor]);
    expect(c.caughtUp.length).toBe(1);
    const { state } = c.caughtUp[0] as SyncingNode["caughtUp"][number];
    expect(state.lastBlockHeight).toBe(bHeight - 1);
    await expectSameChain(c.node, state, b.node);
    const served = net.delivered
      .filter((d) => d.from === "B" && d.to === "C")
      .map((d) => decodeBlocksyncMessage(d.msg).kind);
    expect(served.filter((k) => k === "blockResponse").length).toBeGreaterThanOrEqual(bHeight - 1);
  });

  test("behavior: a node whose peers have no blocks switches as soon as one answers; a lone node after startTimeoutMs", async () => {
    const net = new MemoryNet();
    const x = await emptyNode({ ...FAST, startTimeoutMs: 5000 });
    const y = await emptyNode({ ...FAST, startTimeoutMs: 5000 });
    await net.add("X", x.reactor);
    await net.add("Y", y.reactor);
    net.connect("X", "Y");
    await settle(net, [x.reactor, y.reactor]);
    await tick(net, [x.reactor, y.reactor]);
    expect(x.caughtUp.map((c) => c.state.lastBlockHeight)).toEqual([0]);
    expect(y.caughtUp.length).toBe(1);

    const lone = await emptyNode({ ...FAST, startTimeoutMs: 5000 });
    const net2 = new MemoryNet();
    await net2.add("L", lone.reactor);
    await tick(net2, [lone.reactor], 4000);
    expect(lone.caughtUp).toEqual([]);
    await tick(net2, [lone.reactor], 1000);
    expect(lone.caughtUp.map((c) => c.blocksSynced)).toEqual([0]);
  });

  test("behavior: a validator holding >= 1/3 of the power does not wait for peers", async () => {
    const net = new MemoryNet();
    const v = await emptyNode({
      ...FAST,
      startTimeoutMs: 60_000,
      localAddress: chain.genesis.validators[0]?.address ?? new Uint8Array(0),
    });
    await net.add("V", v.reactor);
    await tick(net, [v.reactor]);
    expect(v.caughtUp.length).toBe(1);
  });

  test("error: a block that cannot be applied stops the sync; the node stays catching up and never starts consensus", async () => {
    const net = new MemoryNet();
    const b = await emptyNode(FAST, { failApplyAt: 5 });
    await net.add("A", servingReactor(source.blockStore, sourceState()));
    await net.add("B", b.reactor);
    net.connect("A", "B");
    await settle(net, [b.reactor]);
    await tick(net, [b.reactor], 30_000);
    expect(b.reactor.syncError()?.message).toMatch(/failed to process committed block 5/);
    expect(b.reactor.isSyncing()).toBe(true);
    expect(b.caughtUp).toEqual([]);
    expect(b.node.blockStore.height()).toBe(5);
  });

  test("default: channel descriptor and status answers", async () => {
    const r = servingReactor(source.blockStore, sourceState());
    expect(r.channels()).toEqual([
      { id: 0x40, priority: 5, sendQueueCapacity: 1000, recvMessageCapacity: 104_857_600 + 1024, name: "blocksync" },
    ]);
    const sent: Uint8Array[] = [];
    const peer = { id: "p", trySend: (_ch: number, m: Uint8Array) => sent.push(m) > 0 } as unknown as Peer;
    r.receive(BLOCKSYNC_CHANNEL, peer, new Uint8Array([0x22, 0x00]));
    r.receive(BLOCKSYNC_CHANNEL, peer, new Uint8Array([0x0a, 0x02, 0x08, 0x63]));
    expect(sent.map((m) => decodeBlocksyncMessage(m))).toEqual([
      { kind: "statusResponse", height: SOURCE_HEIGHT, base: 1 },
      { kind: "noBlockResponse", height: 99 },
    ]);
    expect(() => r.receive(BLOCKSYNC_CHANNEL, peer, new Uint8Array([0xff]))).toThrow(InvalidBlocksyncMessageError);
  });

  test("error: state and block store heights must agree", () => {
    expect(
      () =>
        new BlocksyncReactor({
          blockStore: source.blockStore,
          blockExec: executorFor(source),
          state: { ...sourceState(), lastBlockHeight: 3 },
          clock,
          log: silentLogger(),
        }),
    ).toThrow(StoreStateMismatchError);
  });
});

function withBadCommitSignature(b: Block): Block {
  return {
    ...b,
    lastCommit: {
      ...b.lastCommit,
      signatures: b.lastCommit.signatures.map((s) => {
        const sig = new Uint8Array(s.signature);
        sig[0] = (sig[0] ?? 0) ^ 0xff;
        return { ...s, signature: sig };
      }),
    },
  };
}
