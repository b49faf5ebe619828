import { afterEach, describe, expect, test } from "vitest";
import type { ConsensusApp } from "../consensus/index.js";
import {
  createTestNode,
  heightOf,
  MemoryNetwork,
  makeDisk,
  makeTestChain,
  runUntil,
  type TestNode,
  TestSetupError,
  tempDir,
} from "../consensus/testing/harness.js";
import { openMemoryKvStore } from "../store/index.js";
import { addressFromPubKey, type MisbehaviorInfo, pubKeyFromPrivKey, type Vote } from "../types/index.js";
import { bytesToHex } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { EvidencePool } from "./evidencePool.js";
import { fakeBlockId, signedVote } from "./testing/fakeChain.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe("evidence through consensus (4 validators, one byzantine)", () => {
  test("behavior: two conflicting prevotes become evidence in exactly one committed block", async () => {
    const clock = new ManualClock();
    const chain = makeTestChain(4, clock.nowNs() - 1_000_000_000n);
    const net = new MemoryNetwork();
    const ids = chain.privKeys.map((k) => bytesToHex(addressFromPubKey(pubKeyFromPrivKey(k))));
    const pools: EvidencePool[] = [];
    const misbehavior: { node: number; height: number; list: MisbehaviorInfo[] }[] = [];
    const nodes: TestNode[] = [];
    // Validator 3 does not run: 30 of 40 power keeps the chain live; the test signs for it.
    for (let i = 0; i < 3; i++) {
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const node = await createTestNode({
        disk: makeDisk(dir, chain.privKeys[i]),
        genesis: chain.genesis,
        clock,
        gossip: net.gossipFor(ids[i] ?? ""),
        evidencePool: (stores) => {
          const pool = new EvidencePool({ db: openMemoryKvStore(), ...stores });
          pools.push(pool);
          return pool;
        },
        wrapApp: (app): ConsensusApp => ({
          info: () => app.info(),
          initChain: (req) => app.initChain(req),
          prepareProposal: (req) => app.prepareProposal(req),
          processProposal: (req) => app.processProposal(req),
          finalizeBlock: (req) => {
            if (req.misbehavior.length > 0) misbehavior.push({ node: i, height: req.height, list: req.misbehavior });
            return app.finalizeBlock(req);
          },
          commit: () => app.commit(),
        }),
      });
      nodes.push(node);
    }
    nodes.forEach((n, i) => {
      net.join(ids[i] ?? "", n.consensus);
    });
    for (const n of nodes) await n.consensus.start();
    const cs = nodes.map((n) => n.consensus);
    await runUntil(cs, clock, () => nodes.every((n) => heightOf(n) >= 2));

    const target = nodes[0];
    const byzKey = chain.privKeys[3];
    if (target === undefined || byzKey === undefined) throw new TestSetupError("setup");
    const state = target.consensus.chainState();
    const height = state.lastBlockHeight + 1;
    const byzAddress = addressFromPubKey(pubKeyFromPrivKey(byzKey));
    const index = state.validators.getByAddress(byzAddress)?.index;
    if (index === undefined) throw new TestSetupError("byzantine validator not in the set");
    const vote = (tag: number): Vote =>
      signedVote(byzKey, state.chainId, {
        height,
        blockId: fakeBlockId(tag),
        timestamp: clock.nowNs(),
        validatorAddress: byzAddress,
        validatorIndex: index,
      });
    target.consensus.receivePeerMessage("byzantine", { kind: "vote", vote: vote(1) });
    target.consensus.receivePeerMessage("byzantine", { kind: "vote", vote: vote(9) });

    const withEvidence = () => {
      const found: number[] = [];
      for (let h = 1; h <= heightOf(target); h++) {
        if ((target.blockStore.loadBlock(h)?.evidence.length ?? 0) > 0) found.push(h);
      }
      return found;
    };
    await runUntil(cs, clock, () => withEvidence().length > 0 && nodes.every((n) => heightOf(n) >= height + 1), {
      maxMs: 300_000,
    });
    const evHeight = withEvidence()[0] ?? 0;
    // A few more heights: the evidence is not proposed again.
    await runUntil(cs, clock, () => nodes.every((n) => heightOf(n) >= evHeight + 3), { maxMs: 300_000 });
    expect(withEvidence()).toEqual([evHeight]);

    const block = target.blockStore.loadBlock(evHeight);
    const ev = block?.evidence[0];
    expect(ev?.voteA.height).toBe(height);
    expect(ev?.validatorPower).toBe(10n);
    expect(ev?.totalVotingPower).toBe(40n);
    expect(ev?.timestamp).toBe(target.blockStore.loadBlockMeta(height)?.header.time);

    // Every running node passed the same misbehavior to its app, once.
    const expected = [
      {
        type: "duplicateVote",
        validatorAddress: byzAddress,
        validatorPower: 10n,
        height,
        time: ev?.timestamp,
        totalVotingPower: 40n,
      },
    ];
    for (let i = 0; i < 3; i++) {
      expect(misbehavior.filter((m) => m.node === i)).toEqual([{ node: i, height: evHeight, list: expected }]);
    }
    for (const pool of pools) {
      if (ev !== undefined) expect(pool.isCommitted(ev)).toBe(true);
      expect(pool.size()).toBe(0);
    }
    for (const n of nodes) await n.consensus.stop();
  });
});
