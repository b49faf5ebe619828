import { afterEach, describe, expect, test } from "vitest";
import {
  createTestNode,
  heightOf,
  makeDisk,
  makeTestChain,
  runUntil,
  type TestNode,
  tempDir,
} from "../consensus/testing/harness.js";
import { addressFromPubKey, pubKeyFromPrivKey } from "../types/index.js";
import { bytesEqual, bytesToHex, utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { ConsensusReactor } from "./consensusReactor.js";
import { MempoolReactor } from "./mempoolReactor.js";
import { MemorySwitch } from "./testing/fakeP2p.js";

/**
 * Real consensus instances (harness: kvstore app, stores, mempool, privval) talking only through the
 * reactors: every message is encoded to CometBFT's protobuf, carried by an in-memory switch pair and
 * decoded and validated on the other side.
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

interface Member {
  node: TestNode;
  sw: MemorySwitch;
  mempoolReactor: MempoolReactor;
  id: string;
}

async function makeNet(n: number, opts: { connect?: (i: number) => boolean } = {}) {
  const clock = new ManualClock();
  const chain = makeTestChain(n, clock.nowNs() - 1_000_000_000n);
  const members: Member[] = [];
  for (let i = 0; i < n; i++) {
    const { dir, cleanup } = tempDir("cometh-reactors-");
    cleanups.push(cleanup);
    const id = bytesToHex(addressFromPubKey(pubKeyFromPrivKey(chain.privKeys[i] as never)));
    // The reactor exists first: consensus is built with it as its Gossip.
    const csReactor = new ConsensusReactor(silentLogger());
    const node = await createTestNode({
      disk: makeDisk(dir, chain.privKeys[i]),
      genesis: chain.genesis,
      clock,
      gossip: csReactor,
    });
    csReactor.setConsensus(node.consensus);
    const mpReactor = new MempoolReactor(node.mempool, { broadcast: true, maxTxBytes: 1 << 20 }, silentLogger());
    const sw = new MemorySwitch(id, [csReactor, mpReactor]);
    await sw.start();
    members.push({ node, sw, mempoolReactor: mpReactor, id });
  }
  const joined = (i: number) => opts.connect?.(i) ?? true;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (!joined(i) || !joined(j)) continue;
      MemorySwitch.connect((members[i] as Member).sw, (members[j] as Member).sw);
    }
  }
  return { clock, members };
}

describe("consensus over ConsensusReactor + MempoolReactor", () => {
  test("behavior: two validators commit the same blocks, including a tx relayed by the mempool reactor", async () => {
    const { clock, members } = await makeNet(2);
    const nodes = members.map((m) => m.node);
    for (const n of nodes) await n.consensus.start();
    // Submitted at node 1 only; the mempool reactor carries it to node 0.
    await nodes[1]?.mempool.checkTx(utf8ToBytes("k=v"));
    await new Promise((r) => setImmediate(r)); // the message crosses the in-memory wire
    await members[0]?.mempoolReactor.idle();
    expect(nodes[0]?.mempool.size()).toBe(1);

    await runUntil(
      nodes.map((n) => n.consensus),
      clock,
      () => nodes.every((n) => heightOf(n) >= 3),
    );

    for (let h = 1; h <= 3; h++) {
      const [a, b] = nodes.map((n) => n.blockStore.loadBlockMeta(h));
      expect(a && b && bytesEqual(a.blockId.hash, b.blockId.hash), `height ${h}`).toBe(true);
    }
    const txs = [1, 2, 3].flatMap((h) => nodes[0]?.blockStore.loadBlock(h)?.data.txs ?? []);
    expect(txs.map((t) => new TextDecoder().decode(t))).toEqual(["k=v"]);
    for (const m of members) {
      expect(m.sw.errors).toEqual([]);
      // Every consensus channel carried traffic.
      for (const ch of [0x20, 0x21, 0x22]) expect(m.sw.received.get(ch) ?? 0).toBeGreaterThan(0);
    }
    // The dump shows each peer at its socket address.
    const views = nodes[0]?.consensus.peerStateViews() ?? [];
    expect(views.map((v) => v.nodeAddress)).toEqual([`${members[1]?.id}@127.0.0.1:26656`]);
    for (const n of nodes) await n.consensus.stop();
  });

  test("behavior: a validator that connects late catches up through the reactor and then votes", async () => {
    // 4 validators of equal power: 3 make +2/3, the 4th joins at height 3 and must catch up.
    const { clock, members } = await makeNet(4, { connect: (i) => i < 3 });
    const nodes = members.map((m) => m.node);
    const early = nodes.slice(0, 3);
    for (const n of early) await n.consensus.start();
    await runUntil(
      early.map((n) => n.consensus),
      clock,
      () => early.every((n) => heightOf(n) >= 3),
    );
    const late = members[3] as Member;
    for (const m of members.slice(0, 3)) MemorySwitch.connect(late.sw, m.sw);
    await late.node.consensus.start();
    const joinedAt = Math.max(...early.map(heightOf));
    const target = joinedAt + 3;
    await runUntil(
      nodes.map((n) => n.consensus),
      clock,
      () => nodes.every((n) => heightOf(n) >= target),
    );
    for (let h = 1; h <= target; h++) {
      const metas = nodes.map((n) => n.blockStore.loadBlockMeta(h));
      for (const m of metas)
        expect(m && bytesEqual(m.blockId.hash, metas[0]?.blockId.hash ?? new Uint8Array()), `height ${h}`).toBe(true);
    }
    // Once caught up it votes: its precommit is in a later block's LastCommit (timeout_commit lets
    // the proposer collect every precommit).
    const lateAddress = addressFromPubKey(late.node.signer?.pubKey() ?? (undefined as never));
    const signedBy = (h: number) =>
      nodes[0]?.blockStore.loadBlockCommit(h)?.signatures.some((s) => bytesEqual(s.validatorAddress, lateAddress));
    expect(Array.from({ length: target - joinedAt - 1 }, (_, i) => signedBy(joinedAt + 1 + i))).toContain(true);
    for (const m of members) expect(m.sw.errors).toEqual([]);
    for (const n of nodes) await n.consensus.stop();
  });
});
