import { afterEach, describe, expect, test } from "vitest";
import { SIGNED_MSG_TYPE } from "../types/index.js";
import { ManualClock } from "../util/clock.js";
import type { BlockProductionPolicy } from "./blockProduction.js";
import type { Signer } from "./deps.js";
import {
  createTestNode,
  heightOf,
  makeDisk,
  makeTestChain,
  runUntil,
  SignLog,
  type StartNodeArgs,
  type TestNode,
  tempDir,
} from "./testing/harness.js";

/**
 * Sole rounds (BlockProductionPolicy.soleRounds, consensusState.ts #decideAlone): a sole validator
 * with no peer and no WAL signs only its precommit. Every other case keeps CometBFT's round.
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** CometBFT's create_empty_blocks rule (propose at once, proof blocks), with sole rounds allowed. */
function solePolicy(): BlockProductionPolicy {
  return {
    waitsForTxs: false,
    proofBlocks: true,
    durableWal: false,
    rewindable: false,
    soleRounds: true,
    proposerTime: undefined,
    start: () => () => {},
    wantsBlock: () => true,
    atNewRound: () => ({ propose: true, recheckMs: 0 }),
    reaping: () => {},
    committed: () => {},
    abandon: () => {},
  };
}

interface Run {
  node: TestNode;
  clock: ManualClock;
  signLog: SignLog;
  proposalsSigned: () => number;
  chainId: string;
}

async function startSole(opts: { wal: boolean; extra?: Partial<StartNodeArgs> }): Promise<Run> {
  const clock = new ManualClock();
  const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const signLog = new SignLog();
  let proposals = 0;
  const countProposals = (s: Signer): Signer => ({
    pubKey: () => s.pubKey(),
    address: () => s.address(),
    signVote: (c, v, ext) => s.signVote(c, v, ext),
    signProposal: (c, p) => {
      proposals++;
      return s.signProposal(c, p);
    },
  });
  const node = await createTestNode({
    disk: makeDisk(dir, chain.privKeys[0]),
    genesis: chain.genesis,
    clock,
    signLog,
    wrapSigner: countProposals,
    options: { production: solePolicy(), timeoutCommitMs: 0, ...(opts.wal ? {} : { noWal: true }) },
    ...opts.extra,
  });
  return { node, clock, signLog, proposalsSigned: () => proposals, chainId: chain.genesis.chainId };
}

/** The vote types signed, over every height and round. */
function typesSigned(log: SignLog): Set<number> {
  return new Set([...log.votes.keys()].map((k) => Number(k.split("/")[3])));
}

function expectVerifyingCommits(run: Run, upTo: number): void {
  for (let h = 1; h < upTo; h++) {
    const meta = run.node.blockStore.loadBlockMeta(h);
    const next = run.node.blockStore.loadBlock(h + 1);
    expect(meta, `block ${h}`).toBeDefined();
    expect(next, `block ${h + 1}`).toBeDefined();
    if (meta === undefined || next === undefined) return;
    const vals = run.node.stateStore.loadValidators(h);
    expect(vals, `validators at ${h}`).toBeDefined();
    if (vals === undefined) return;
    expect(() => vals.verifyCommit(run.chainId, meta.blockId, h, next.lastCommit)).not.toThrow();
    const seen = run.node.blockStore.loadSeenCommit(h);
    if (seen !== undefined) expect(() => vals.verifyCommit(run.chainId, meta.blockId, h, seen)).not.toThrow();
  }
}

describe("sole rounds", () => {
  test("behavior: without peers or WAL, only precommits are signed, and every commit verifies", async () => {
    const run = await startSole({ wal: false });
    await run.node.consensus.start();
    await runUntil([run.node.consensus], run.clock, () => heightOf(run.node) >= 6);
    expect(run.proposalsSigned()).toBe(0);
    expect(typesSigned(run.signLog)).toEqual(new Set([SIGNED_MSG_TYPE.precommit]));
    expect(run.signLog.conflicts()).toEqual([]);
    expectVerifyingCommits(run, 6);
    // Heights 1-5 were decided in round 0 (the commits in blocks 2-6).
    for (let h = 2; h <= 6; h++) expect(run.node.blockStore.loadBlock(h)?.lastCommit.round).toBe(0);
    await run.node.consensus.stop();
  });

  test("behavior: with a WAL, the same policy runs CometBFT's round (proposal and prevote signed)", async () => {
    const run = await startSole({ wal: true });
    await run.node.consensus.start();
    await runUntil([run.node.consensus], run.clock, () => heightOf(run.node) >= 3);
    expect(run.proposalsSigned()).toBeGreaterThanOrEqual(3);
    expect(typesSigned(run.signLog)).toEqual(new Set([SIGNED_MSG_TYPE.prevote, SIGNED_MSG_TYPE.precommit]));
    expectVerifyingCommits(run, 3);
    await run.node.consensus.stop();
  });

  test("behavior: with a peer connected, proposals and prevotes are signed for it", async () => {
    const run = await startSole({ wal: false, extra: { gossip: { broadcast: () => {}, sendTo: () => {} } } });
    run.node.consensus.addPeer("peer", "peer@127.0.0.1:26656");
    await run.node.consensus.start();
    await runUntil([run.node.consensus], run.clock, () => heightOf(run.node) >= 3);
    expect(run.proposalsSigned()).toBeGreaterThanOrEqual(3);
    expect(typesSigned(run.signLog)).toEqual(new Set([SIGNED_MSG_TYPE.prevote, SIGNED_MSG_TYPE.precommit]));
    // The peer leaves: the next heights are decided alone.
    run.node.consensus.removePeer("peer");
    const signedBefore = run.proposalsSigned();
    const h = heightOf(run.node);
    await runUntil([run.node.consensus], run.clock, () => heightOf(run.node) >= h + 3);
    expect(run.proposalsSigned()).toBe(signedBefore);
    expectVerifyingCommits(run, h + 3);
    await run.node.consensus.stop();
  });

  test("failure: a block ProcessProposal refuses gets a signed nil prevote, and round 1 commits another", async () => {
    let refused = 0;
    const run = await startSole({
      wal: false,
      extra: {
        wrapApp: (app) => ({
          info: () => app.info(),
          initChain: (r) => app.initChain(r),
          prepareProposal: (r) => app.prepareProposal(r),
          processProposal: async (r) => {
            if (r.height === 2 && refused === 0) {
              refused++;
              return "reject";
            }
            return app.processProposal(r);
          },
          finalizeBlock: (r) => app.finalizeBlock(r),
          commit: () => app.commit(),
        }),
      },
    });
    await run.node.consensus.start();
    await runUntil([run.node.consensus], run.clock, () => heightOf(run.node) >= 3);
    expect(refused).toBe(1);
    const nilPrevote = run.signLog.votes.get(
      [...run.signLog.votes.keys()].find((k) => k.endsWith(`/2/0/${SIGNED_MSG_TYPE.prevote}`)) ?? "",
    );
    expect(nilPrevote).toBeDefined();
    expect(run.node.blockStore.loadBlock(3)?.lastCommit.round).toBe(1);
    expect(run.signLog.conflicts()).toEqual([]);
    expectVerifyingCommits(run, 3);
    await run.node.consensus.stop();
  });
});
