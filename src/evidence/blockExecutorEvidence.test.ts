import { afterEach, describe, expect, test, vi } from "vitest";
import { BlockExecutor, type ConsensusApp, InvalidBlockError } from "../consensus/index.js";
import {
  createTestNode,
  heightOf,
  makeDisk,
  makeTestChain,
  runUntil,
  TestSetupError,
  tempDir,
} from "../consensus/testing/harness.js";
import { openMemoryKvStore } from "../store/index.js";
import {
  blockId,
  type Evidence,
  evidenceHash,
  type FinalizeBlockRequest,
  makePartSet,
  newDuplicateVoteEvidence,
  type PrepareProposalRequest,
  type PrivKey,
  type Vote,
} from "../types/index.js";
import { bytesToHex, EMPTY_BYTES } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { EvidencePool } from "./evidencePool.js";
import { fakeBlockId, signedVote } from "./testing/fakeChain.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A single-validator chain committed to height 3, consensus stopped, and an executor with a pool over its stores. */
async function setup() {
  const clock = new ManualClock();
  const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const key = chain.privKeys[0];
  if (key === undefined) throw new TestSetupError("no key");
  const node = await createTestNode({ disk: makeDisk(dir, key), genesis: chain.genesis, clock });
  await node.consensus.start();
  await runUntil([node.consensus], clock, () => heightOf(node) >= 3);
  await node.consensus.stop();
  const log = silentLogger();
  const pool = new EvidencePool({
    db: openMemoryKvStore(),
    stateStore: node.stateStore,
    blockStore: node.blockStore,
    log,
  });
  const prepared: PrepareProposalRequest[] = [];
  const finalized: FinalizeBlockRequest[] = [];
  const app: ConsensusApp = {
    info: () => node.app.info(),
    initChain: (req) => node.app.initChain(req),
    prepareProposal: (req) => {
      prepared.push(req);
      return node.app.prepareProposal(req);
    },
    processProposal: (req) => node.app.processProposal(req),
    finalizeBlock: (req) => {
      finalized.push(req);
      return node.app.finalizeBlock(req);
    },
    commit: () => node.app.commit(),
  };
  const deps = { app, blockStore: node.blockStore, stateStore: node.stateStore, events: node.events, clock, log };
  const exec = new BlockExecutor({ ...deps, evidence: pool });
  const noPoolExec = new BlockExecutor(deps);
  const chainId = chain.genesis.chainId;

  const vote = (height: number, tag: number, signer: PrivKey = key): Vote =>
    signedVote(signer, chainId, {
      height,
      blockId: fakeBlockId(tag),
      timestamp: clock.nowNs(),
      validatorAddress: node.consensus.chainState().validators.validators[0]?.address ?? EMPTY_BYTES,
      validatorIndex: 0,
    });
  /** The validator double-signed at `height`. */
  const evidenceAt = (height: number, signer?: PrivKey): Evidence => {
    const meta = node.blockStore.loadBlockMeta(height);
    const vals = node.stateStore.loadValidators(height);
    if (meta === undefined || vals === undefined) throw new TestSetupError(`no block ${height}`);
    return newDuplicateVoteEvidence(vote(height, 1), vote(height, 5, signer), meta.header.time, vals);
  };
  const proposal = async (evidence?: Evidence[]) => {
    const state = node.consensus.chainState();
    const h = state.lastBlockHeight;
    const lastCommit = node.blockStore.loadSeenCommit(h);
    const proposer = state.validators.validators[0]?.address;
    if (lastCommit === undefined || proposer === undefined) throw new TestSetupError("no commit");
    if (evidence === undefined) return exec.createProposalBlock(h + 1, state, lastCommit, proposer);
    const block = exec.makeBlock(h + 1, state, [], lastCommit, proposer, evidence);
    return { block, parts: makePartSet(block) };
  };
  return { node, pool, exec, noPoolExec, prepared, finalized, evidenceAt, proposal };
}

describe("block executor with an evidence pool", () => {
  test("behavior: pending evidence is proposed, validated, reaches the app and is committed once", async () => {
    const { node, pool, exec, prepared, finalized, evidenceAt, proposal } = await setup();
    const ev = evidenceAt(2);
    await pool.addEvidence(ev);

    const { block, parts } = await proposal();
    expect(block.evidence).toEqual([ev]);
    expect(block.header.evidenceHash).toEqual(evidenceHash([ev]));
    const misbehavior = {
      type: "duplicateVote",
      validatorAddress: ev.voteA.validatorAddress,
      validatorPower: 10n,
      height: 2,
      time: ev.timestamp,
      totalVotingPower: 10n,
    };
    expect(prepared.at(-1)?.misbehavior).toEqual([misbehavior]);

    const state = node.consensus.chainState();
    expect(() => exec.validateBlock(state, block)).not.toThrow();
    const { state: next } = await exec.applyBlock(state, blockId(block, parts), block, { validate: true });
    expect(finalized.at(-1)?.misbehavior).toEqual([misbehavior]);
    expect(pool.isCommitted(ev)).toBe(true);
    expect(pool.size()).toBe(0);
    expect(node.events.types()).toContain("NewEvidence");

    // Not proposed again, and a block that carries it again is refused.
    expect(pool.pendingEvidence(-1).evidence).toEqual([]);
    expect(() => pool.checkEvidence([ev], next)).toThrow(/evidence was already committed/);
  });

  test("error: a block with evidence that does not verify is invalid", async () => {
    const { node, exec, evidenceAt, proposal } = await setup();
    const stranger = makeTestChain(2, 0n).privKeys[1];
    if (stranger === undefined) throw new TestSetupError("no key");
    const bad = evidenceAt(2, stranger);
    const { block } = await proposal([bad]);
    expect(() => exec.validateBlock(node.consensus.chainState(), block)).toThrow(InvalidBlockError);
    expect(() => exec.validateBlock(node.consensus.chainState(), block)).toThrow(
      /^invalid evidence: verifying VoteB: invalid signature$/,
    );
  });

  test("error: the header's evidence hash must match the evidence", async () => {
    const { node, exec, evidenceAt, proposal } = await setup();
    const { block } = await proposal([evidenceAt(2)]);
    block.header.evidenceHash = evidenceHash([]);
    expect(() => exec.validateBlock(node.consensus.chainState(), block)).toThrow(/wrong Header.EvidenceHash/);
  });

  test("behavior: valid evidence the node had not seen is accepted in a block", async () => {
    const { node, pool, exec, evidenceAt, proposal } = await setup();
    const ev = evidenceAt(1);
    const { block } = await proposal([ev]);
    exec.validateBlock(node.consensus.chainState(), block);
    // CheckEvidence keeps verified evidence as pending.
    expect(pool.isPending(ev)).toBe(true);
    await pool.flush();
  });

  test("error: without a pool, blocks carrying evidence are refused", async () => {
    const { node, noPoolExec, evidenceAt, proposal } = await setup();
    const { block } = await proposal([evidenceAt(2)]);
    expect(() => noPoolExec.validateBlock(node.consensus.chainState(), block)).toThrow(/no evidence pool/);
    expect(bytesToHex(block.header.evidenceHash)).not.toBe(bytesToHex(evidenceHash([])));
  });

  test("behavior: a block that passed against a state is not checked again against it; a changed state, header field or evidence is", async () => {
    const { node, exec, evidenceAt, proposal } = await setup();
    const state = node.consensus.chainState();
    const verify = vi.spyOn(state.lastValidators, "verifyCommit");
    const { block } = await proposal();
    exec.validateBlock(state, block);
    exec.validateBlock(state, block);
    expect(verify).toHaveBeenCalledTimes(1);
    // Another state object (here with another app hash) is checked, and refused.
    expect(() => exec.validateBlock({ ...state, appHash: new Uint8Array(32).fill(7) }, block)).toThrow(
      /wrong Block.Header.AppHash/,
    );
    // A header field assigned after it passed is checked again.
    const good = block.header.appHash;
    block.header.appHash = new Uint8Array(32).fill(9);
    expect(() => exec.validateBlock(state, block)).toThrow(/wrong Block.Header.AppHash/);
    block.header.appHash = good;
    exec.validateBlock(state, block);
    // A block carrying evidence is checked every time (the pool's view may change).
    const withEvidence = (await proposal([evidenceAt(2)])).block;
    exec.validateBlock(state, withEvidence);
    exec.validateBlock(state, withEvidence);
    expect(verify).toHaveBeenCalledTimes(3);
  });
});
