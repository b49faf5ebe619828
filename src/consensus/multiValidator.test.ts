import { afterEach, describe, expect, test } from "vitest";
import { addressFromPubKey, pubKeyFromPrivKey } from "../types/index.js";
import { bytesEqual, bytesToHex, utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import {
  createTestNode,
  heightOf,
  MemoryNetwork,
  makeDisk,
  makeTestChain,
  runUntil,
  SignLog,
  SimulatedCrash,
  settle,
  type TestChain,
  type TestNode,
  TestSetupError,
  tempDir,
} from "./testing/harness.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

interface Net {
  clock: ManualClock;
  chain: TestChain;
  net: MemoryNetwork;
  nodes: TestNode[];
  ids: string[];
  signs: SignLog;
}

async function makeNet(n: number, opts: { start?: (i: number) => boolean } = {}): Promise<Net> {
  const clock = new ManualClock();
  const chain = makeTestChain(n, clock.nowNs() - 1_000_000_000n);
  const net = new MemoryNetwork();
  const signs = new SignLog();
  const ids = chain.privKeys.map((k) => bytesToHex(addressFromPubKey(pubKeyFromPrivKey(k))));
  const nodes: TestNode[] = [];
  for (let i = 0; i < n; i++) {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    // biome-ignore lint/style/noNonNullAssertion: i < n
    const id = ids[i]!;
    const node = await createTestNode({
      disk: makeDisk(dir, chain.privKeys[i]),
      genesis: chain.genesis,
      clock,
      gossip: net.gossipFor(id),
      signLog: signs,
    });
    nodes.push(node);
  }
  for (let i = 0; i < n; i++) {
    if (opts.start && !opts.start(i)) continue;
    // biome-ignore lint/style/noNonNullAssertion: i < n
    net.join(ids[i]!, nodes[i]!.consensus);
  }
  for (let i = 0; i < n; i++) {
    if (opts.start && !opts.start(i)) continue;
    await nodes[i]?.consensus.start();
  }
  return { clock, chain, net, nodes, ids, signs };
}

function expectSameBlocks(nodes: TestNode[], upTo: number): void {
  for (let h = 1; h <= upTo; h++) {
    const metas = nodes.map((n) => n.blockStore.loadBlockMeta(h));
    for (const m of metas) expect(m, `height ${h}`).toBeDefined();
    const first = metas[0];
    for (const m of metas) expect(m && first && bytesEqual(m.blockId.hash, first.blockId.hash)).toBe(true);
  }
}

describe("4 validators over in-memory gossip", () => {
  test("behavior: all reach consensus on the same blocks", async () => {
    const { clock, nodes, signs } = await makeNet(4);
    await nodes[0]?.mempool.checkTx(utf8ToBytes("x=1"));
    await runUntil(
      nodes.map((n) => n.consensus),
      clock,
      () => nodes.every((n) => heightOf(n) >= 5),
    );
    expectSameBlocks(nodes, 5);
    expect(signs.conflicts()).toEqual([]);
    // Every validator signed block 4's commit (all online).
    const commit = nodes[0]?.blockStore.loadBlock(5)?.lastCommit;
    expect(commit?.signatures.filter((s) => s.blockIdFlag === 2).length).toBeGreaterThanOrEqual(3);
    // Peers show up in the dump with their round states.
    const peers = nodes[0]?.consensus.peerStateViews() ?? [];
    expect(peers).toHaveLength(3);
    for (const p of peers) {
      expect(p.roundState?.height).toBeGreaterThanOrEqual(5);
      expect(p.nodeAddress).toMatch(/@127\.0\.0\.1:26656$/);
    }
    expect(peers.some((p) => p.stats.votes > 0)).toBe(true);
    await Promise.all(nodes.map((n) => n.consensus.stop()));
  });

  test("behavior: a validator that learns a decision late counts timeout_commit from the quorum's time", async () => {
    const { clock, nodes, net, ids, signs } = await makeNet(4);
    const all = nodes.map((n) => n.consensus);
    await runUntil(all, clock, () => nodes.every((n) => heightOf(n) >= 2));
    // validator 3 is cut off; the other three decide the next height without it.
    const late = nodes[3] as TestNode;
    const lateId = ids[3] as string;
    const from = heightOf(late);
    net.leave(lateId);
    await runUntil(all, clock, () => nodes.slice(0, 3).every((n) => heightOf(n) >= from + 1));
    const target = Math.max(...nodes.slice(0, 3).map(heightOf));
    // The three stop hearing each other (no further height), and 2 s pass before validator 3 is back.
    net.filter = (a, b) => a === lateId || b === lateId;
    for (let i = 0; i < 20; i++) {
      clock.advance(100);
      await settle(all);
    }
    net.join(lateId, late.consensus);
    await runUntil(all, clock, () => heightOf(late) >= target, { stepMs: 10 });
    // CometBFT would start the next height timeout_commit (1 s) after this late commit; the quorum
    // decided it over 2 s ago, so it starts now.
    const rs = late.consensus.roundStateView();
    expect(rs.height).toBe(target + 1);
    expect(rs.startTime <= clock.nowNs()).toBe(true);
    // An on-time validator still waits timeout_commit from its own commit.
    const onTime = nodes[0]?.consensus.roundStateView();
    expect(onTime !== undefined && onTime.startTime > onTime.commitTime).toBe(true);
    expect(signs.conflicts()).toEqual([]);
    await Promise.all(all.map((c) => c.stop()));
  });

  test("behavior: a silent proposer of round 0 makes round 1 commit", async () => {
    const clock = new ManualClock();
    const probe = makeTestChain(4, clock.nowNs() - 1_000_000_000n);
    // Which validator proposes height 1 round 0: the genesis set's proposer.
    const { makeGenesisState } = await import("./genesisState.js");
    const proposer = makeGenesisState(probe.genesis).validators.getProposer();
    const silent = probe.privKeys.findIndex((k) =>
      bytesEqual(addressFromPubKey(pubKeyFromPrivKey(k)), proposer?.address ?? new Uint8Array()),
    );
    expect(silent).toBeGreaterThanOrEqual(0);
    const { nodes, clock: c, signs } = await makeNet(4, { start: (i) => i !== silent });
    const live = nodes.filter((_, i) => i !== silent);
    await runUntil(
      live.map((n) => n.consensus),
      c,
      () => live.every((n) => heightOf(n) >= 1),
    );
    const seen = live[0]?.blockStore.loadSeenCommit(1);
    expect(seen?.round).toBe(1);
    const timeouts = live[0]?.events.types().filter((t) => t === "TimeoutPropose");
    expect(timeouts?.length).toBeGreaterThanOrEqual(1);
    expect(signs.conflicts()).toEqual([]);
    await Promise.all(live.map((n) => n.consensus.stop()));
  });

  test("behavior: a crashed validator restarts and catches up through gossip", async () => {
    const clock = new ManualClock();
    const chain = makeTestChain(4, clock.nowNs() - 1_000_000_000n);
    const net = new MemoryNetwork();
    const signs = new SignLog();
    const ids = chain.privKeys.map((k) => bytesToHex(addressFromPubKey(pubKeyFromPrivKey(k))));
    const disks = chain.privKeys.map((k) => {
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      return makeDisk(dir, k);
    });
    let crashed = false;
    const nodes: TestNode[] = [];
    for (let i = 0; i < 4; i++) {
      nodes.push(
        await createTestNode({
          // biome-ignore lint/style/noNonNullAssertion: i < 4
          disk: disks[i]!,
          genesis: chain.genesis,
          clock,
          // biome-ignore lint/style/noNonNullAssertion: i < 4
          gossip: net.gossipFor(ids[i]!),
          signLog: signs,
          ...(i === 3
            ? {
                failPoint: (p: string, d?: { height: number }) => {
                  if (!crashed && p === "afterEndHeight" && d === undefined) {
                    crashed = true;
                    throw new SimulatedCrash(p);
                  }
                },
              }
            : {}),
        }),
      );
    }
    // biome-ignore lint/style/noNonNullAssertion: i < 4
    for (let i = 0; i < 4; i++) net.join(ids[i]!, nodes[i]!.consensus);
    for (const n of nodes) await n.consensus.start();
    const victim = nodes[3];
    if (victim === undefined) throw new TestSetupError("no victim");
    await runUntil(
      nodes.map((n) => n.consensus),
      clock,
      () => victim.consensus.haltError() !== undefined,
    );
    expect(victim.consensus.haltError()).toBeInstanceOf(SimulatedCrash);
    // biome-ignore lint/style/noNonNullAssertion: fixed ids
    net.leave(ids[3]!);
    const others = nodes.slice(0, 3);
    const target = Math.max(...others.map(heightOf)) + 3;
    await runUntil(
      others.map((n) => n.consensus),
      clock,
      () => others.every((n) => heightOf(n) >= target),
    );
    // Restart the victim on its disk and reconnect it.
    const [victimDisk, victimId] = [disks[3], ids[3]];
    if (victimDisk === undefined || victimId === undefined) throw new TestSetupError("no victim");
    const restarted = await createTestNode({
      disk: victimDisk,
      genesis: chain.genesis,
      clock,
      gossip: net.gossipFor(victimId),
      signLog: signs,
    });
    net.join(victimId, restarted.consensus);
    await restarted.consensus.start();
    const all = [...others, restarted];
    await runUntil(
      all.map((n) => n.consensus),
      clock,
      () => heightOf(restarted) >= target + 2 && others.every((n) => heightOf(n) >= target + 2),
    );
    expectSameBlocks(all, target + 2);
    expect(signs.conflicts()).toEqual([]);
    await Promise.all(all.map((n) => n.consensus.stop()));
  });
});
