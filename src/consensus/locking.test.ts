import { afterEach, describe, expect, test } from "vitest";
import {
  addressFromPubKey,
  type Block,
  type BlockId,
  emptyCommit,
  headerHash,
  makePartSet,
  type PartSet,
  type PrivKey,
  type Proposal,
  proposalSignBytes,
  pubKeyFromPrivKey,
  SIGNED_MSG_TYPE,
  signBytes,
  type ValidatorSet,
  type Vote,
  type VoteType,
  voteSignBytes,
  zeroBlockId,
} from "../types/index.js";
import { bytesEqual, EMPTY_BYTES, utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { BlockExecutor } from "./blockExecutor.js";
import type { ConsensusMessage } from "./messages.js";
import { ROUND_STEP } from "./roundStep.js";
import { createTestNode, makeDisk, makeTestChain, settle, TestSetupError, tempDir } from "./testing/harness.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/**
 * One real validator (X) against three scripted ones whose messages the test signs itself, so the
 * exact vote patterns of the locking rules can be produced.
 */
async function scripted() {
  const clock = new ManualClock();
  const chain = makeTestChain(4, clock.nowNs() - 1_000_000_000n);
  const keyOf = (addr: Uint8Array): PrivKey => {
    const k = chain.privKeys.find((p) => bytesEqual(addressFromPubKey(pubKeyFromPrivKey(p)), addr));
    if (k === undefined) throw new TestSetupError("unknown validator");
    return k;
  };
  // Pick X: neither the round-0 nor the round-1 proposer of height 1.
  const { makeGenesisState } = await import("./genesisState.js");
  const vals0 = makeGenesisState(chain.genesis).validators;
  const p0 = vals0.getProposer();
  const vals1 = vals0.copy();
  vals1.incrementProposerPriority(1);
  const p1 = vals1.getProposer();
  if (p0 === undefined || p1 === undefined) throw new TestSetupError("no proposer");
  const x = vals0.validators.find((v) => !bytesEqual(v.address, p0.address) && !bytesEqual(v.address, p1.address));
  if (x === undefined) throw new TestSetupError("no candidate");
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const sent: ConsensusMessage[] = [];
  const node = await createTestNode({
    disk: makeDisk(dir, keyOf(x.address)),
    genesis: chain.genesis,
    clock,
    gossip: { broadcast: (m) => sent.push(m) },
    options: { timeoutCommitMs: 1000, timeoutProposeMs: 3000, timeoutPrecommitMs: 1000, timeoutPrevoteMs: 1000 },
  });
  const cs = node.consensus;
  const state = cs.chainState();
  const vals: ValidatorSet = state.validators;
  const others = vals.validators.filter((v) => !bytesEqual(v.address, x.address));
  const exec = new BlockExecutor({
    app: node.app,
    blockStore: node.blockStore,
    stateStore: node.stateStore,
    clock,
    log: silentLogger(),
  });
  const makeBlock = (proposer: Uint8Array, txs: Uint8Array[]) => {
    const block = exec.makeBlock(1, state, txs, emptyCommit(), proposer);
    const parts = makePartSet(block);
    const id: BlockId = { hash: headerHash(block.header) ?? EMPTY_BYTES, partSetHeader: parts.header() };
    return { block, parts, id };
  };
  const propose = (proposer: Uint8Array, round: number, b: { parts: PartSet; id: BlockId }) => {
    const p: Proposal = {
      type: SIGNED_MSG_TYPE.proposal,
      height: 1,
      round,
      polRound: -1,
      blockId: b.id,
      timestamp: clock.nowNs(),
      signature: EMPTY_BYTES,
    };
    const signed = { ...p, signature: signBytes(keyOf(proposer), proposalSignBytes(state.chainId, p)) };
    cs.receivePeerMessage("p", { kind: "proposal", proposal: signed });
    for (let i = 0; i < b.parts.total; i++) {
      const part = b.parts.getPart(i);
      if (part) cs.receivePeerMessage("p", { kind: "blockPart", height: 1, round, part });
    }
  };
  const vote = (addr: Uint8Array, type: VoteType, round: number, id: BlockId) => {
    const found = vals.getByAddress(addr);
    if (found === undefined) throw new TestSetupError("not a validator");
    const v: Vote = {
      type,
      height: 1,
      round,
      blockId: id,
      timestamp: clock.nowNs(),
      validatorAddress: addr,
      validatorIndex: found.index,
      signature: EMPTY_BYTES,
      extension: EMPTY_BYTES,
      extensionSignature: EMPTY_BYTES,
    };
    cs.receivePeerMessage("p", {
      kind: "vote",
      vote: { ...v, signature: signBytes(keyOf(addr), voteSignBytes(state.chainId, v)) },
    });
  };
  const ownVotes = (type: VoteType, round: number): Vote[] =>
    sent
      .filter((m): m is Extract<ConsensusMessage, { kind: "vote" }> => m.kind === "vote")
      .map((m) => m.vote)
      .filter((v) => v.type === type && v.round === round && bytesEqual(v.validatorAddress, x.address));
  const step = async (ms: number) => {
    clock.advance(ms);
    await settle([cs]);
  };
  return { node, cs, p0, p1, others, makeBlock, propose, vote, ownVotes, step };
}

const isFor = (v: Vote | undefined, b: { block: Block }) =>
  v !== undefined && bytesEqual(v.blockId.hash, headerHash(b.block.header) ?? EMPTY_BYTES);

describe("locking", () => {
  test("behavior: a locked validator prevotes its locked block, and moves only on a newer POL", async () => {
    const t = await scripted();
    await t.cs.start();
    await t.step(1000); // start_time reached: round 0
    const a = t.makeBlock(t.p0.address, [utf8ToBytes("a=1")]);
    t.propose(t.p0.address, 0, a);
    await t.step(0);
    expect(isFor(t.ownVotes(SIGNED_MSG_TYPE.prevote, 0)[0], a)).toBe(true);

    // Two more prevotes for A: a polka; X locks on A and precommits it.
    const [o1, o2, o3] = t.others;
    if (!o1 || !o2 || !o3) throw new TestSetupError("need three others");
    t.vote(o1.address, SIGNED_MSG_TYPE.prevote, 0, a.id);
    t.vote(o2.address, SIGNED_MSG_TYPE.prevote, 0, a.id);
    await t.step(0);
    expect(isFor(t.ownVotes(SIGNED_MSG_TYPE.precommit, 0)[0], a)).toBe(true);
    expect(t.cs.roundStateView().lockedRound).toBe(0);
    expect(t.node.events.types()).toContain("Lock");

    // The others precommit nil: no commit, round 1 after the precommit timeout.
    for (const o of [o1, o2, o3]) t.vote(o.address, SIGNED_MSG_TYPE.precommit, 0, zeroBlockId());
    await t.step(0);
    expect(t.cs.roundStateView().triggeredTimeoutPrecommit).toBe(true);
    await t.step(1000);
    expect(t.cs.roundStateView().round).toBe(1);

    // Round 1 proposes another block B without a POL: X still prevotes A.
    const b = t.makeBlock(t.p1.address, [utf8ToBytes("b=2")]);
    t.propose(t.p1.address, 1, b);
    await t.step(0);
    const pv1 = t.ownVotes(SIGNED_MSG_TYPE.prevote, 1);
    expect(pv1).toHaveLength(1);
    expect(isFor(pv1[0], a)).toBe(true);
    expect(t.cs.roundStateView().lockedRound).toBe(0);

    // A newer POL (round 1) for B: X unlocks, locks on B and precommits it.
    for (const o of [o1, o2, o3]) t.vote(o.address, SIGNED_MSG_TYPE.prevote, 1, b.id);
    await t.step(0);
    const rs = t.cs.roundStateView();
    expect(rs.lockedRound).toBe(1);
    expect(rs.lockedBlock && bytesEqual(headerHash(rs.lockedBlock.header) ?? EMPTY_BYTES, b.id.hash)).toBe(true);
    expect(isFor(t.ownVotes(SIGNED_MSG_TYPE.precommit, 1)[0], b)).toBe(true);
    expect(t.node.events.types()).toContain("Unlock");

    // +2/3 precommits for B commit it.
    for (const o of [o1, o2]) t.vote(o.address, SIGNED_MSG_TYPE.precommit, 1, b.id);
    await t.step(0);
    expect(t.cs.chainState().lastBlockHeight).toBe(1);
    expect(t.node.blockStore.loadBlock(1)?.data.txs).toEqual([utf8ToBytes("b=2")]);
    expect(t.cs.roundStateView().step).toBe(ROUND_STEP.newHeight);
    await t.cs.stop();
  });

  test("behavior: +2/3 prevotes for nil unlock", async () => {
    const t = await scripted();
    await t.cs.start();
    await t.step(1000);
    const a = t.makeBlock(t.p0.address, [utf8ToBytes("a=1")]);
    t.propose(t.p0.address, 0, a);
    const [o1, o2, o3] = t.others;
    if (!o1 || !o2 || !o3) throw new TestSetupError("need three others");
    t.vote(o1.address, SIGNED_MSG_TYPE.prevote, 0, a.id);
    t.vote(o2.address, SIGNED_MSG_TYPE.prevote, 0, a.id);
    await t.step(0);
    expect(t.cs.roundStateView().lockedRound).toBe(0);
    for (const o of [o1, o2, o3]) t.vote(o.address, SIGNED_MSG_TYPE.precommit, 0, zeroBlockId());
    await t.step(0);
    await t.step(1000);
    // Round 1: no proposal; everyone else prevotes nil. That polka (round 1 > locked round 0)
    // unlocks X before it prevotes, so after the propose timeout X prevotes and precommits nil.
    for (const o of [o1, o2, o3]) t.vote(o.address, SIGNED_MSG_TYPE.prevote, 1, zeroBlockId());
    await t.step(0);
    expect(t.cs.roundStateView().lockedRound).toBe(-1);
    await t.step(3500);
    expect(t.ownVotes(SIGNED_MSG_TYPE.prevote, 1)[0]?.blockId.hash.length).toBe(0);
    const rs = t.cs.roundStateView();
    expect(rs.lockedRound).toBe(-1);
    expect(rs.lockedBlock).toBeUndefined();
    expect(t.ownVotes(SIGNED_MSG_TYPE.precommit, 1)[0]?.blockId.hash.length).toBe(0);
    await t.cs.stop();
  });
});
