import { describe, expect, test } from "vitest";
import { openMemoryKvStore } from "../store/index.js";
import { type DuplicateVoteEvidence, type Evidence, encodeEvidence, generateEd25519PrivKey } from "../types/index.js";
import { silentLogger } from "../util/logger.js";
import { InvalidEvidenceSubmissionError, UnverifiableEvidenceError } from "./errors.js";
import { EvidencePool } from "./evidencePool.js";
import { FakeChain, fakeBlockId } from "./testing/fakeChain.js";

function setup(height = 10) {
  const chain = new FakeChain(4);
  chain.advanceTo(height);
  const db = openMemoryKvStore();
  const pool = new EvidencePool({
    db,
    stateStore: chain.stateStore,
    blockStore: chain.blockStore,
    log: silentLogger(),
  });
  return { chain, db, pool };
}

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidEvidenceSubmissionError);
    return (err as Error).message;
  }
  throw new RangeError("expected a rejection");
}

describe("EvidencePool.addEvidence", () => {
  test("default: valid evidence becomes pending and listeners hear of it", async () => {
    const { chain, pool } = setup();
    const heard: Evidence[] = [];
    pool.onEvidenceAdded((ev) => heard.push(ev));
    const ev = chain.evidence(1, 5);
    await pool.addEvidence(ev);
    expect(pool.size()).toBe(1);
    expect(pool.isPending(ev)).toBe(true);
    expect(heard).toEqual([ev]);
    // Adding it again is a no-op.
    await pool.addEvidence(ev);
    expect(pool.size()).toBe(1);
    expect(heard).toHaveLength(1);
  });

  test("error: a vote with a wrong signature", async () => {
    const { chain, pool } = setup();
    const ev = chain.evidence(1, 5) as DuplicateVoteEvidence;
    const forged = {
      ...ev,
      voteB: chain.vote(1, 5, ev.voteB.blockId, { key: generateEd25519PrivKey(new Uint8Array(32)) }),
    };
    expect(await rejection(pool.addEvidence(forged))).toMatchInlineSnapshot(
      `"invalid evidence: verifying VoteB: invalid signature"`,
    );
    expect(pool.size()).toBe(0);
  });

  test("error: both votes for the same block", async () => {
    const { chain, pool } = setup();
    const a = chain.vote(1, 5, fakeBlockId(1));
    const b = chain.vote(1, 5, fakeBlockId(1), { round: 0 });
    const ev: Evidence = {
      type: "duplicateVote",
      voteA: a,
      voteB: { ...b, timestamp: b.timestamp + 1n },
      totalVotingPower: 40n,
      validatorPower: 10n,
      timestamp: chain.timeOf(5),
    };
    // ValidateBasic already refuses equal block ids (not in strictly increasing order).
    expect(await rejection(pool.addEvidence(ev))).toMatchInlineSnapshot(
      `"invalid evidence: duplicate votes in invalid order"`,
    );
  });

  test("error: wrong validator power", async () => {
    const { chain, pool } = setup();
    const ev = { ...chain.evidence(1, 5), validatorPower: 11n };
    expect(await rejection(pool.addEvidence(ev))).toMatchInlineSnapshot(
      `"invalid evidence: validator power from evidence and our validator set does not match (11 != 10)"`,
    );
  });

  test("error: wrong total voting power", async () => {
    const { chain, pool } = setup();
    const ev = { ...chain.evidence(1, 5), totalVotingPower: 39n };
    expect(await rejection(pool.addEvidence(ev))).toMatchInlineSnapshot(
      `"invalid evidence: total voting power from the evidence and our validator set does not match (39 != 40)"`,
    );
  });

  test("error: unknown validator", async () => {
    const { pool } = setup();
    const stranger = new FakeChain(4, 90);
    stranger.advanceTo(10);
    const msg = await rejection(pool.addEvidence(stranger.evidence(0, 5)));
    expect(msg).toMatch(/^invalid evidence: address [0-9A-F]{40} was not a validator at height 5$/);
  });

  test("error: time differs from the block time", async () => {
    const { chain, pool } = setup();
    const ev = { ...chain.evidence(1, 5), timestamp: chain.timeOf(5) + 1n };
    expect(await rejection(pool.addEvidence(ev))).toMatch(
      /^invalid evidence: evidence has a different time to the block it is associated with/,
    );
  });

  test("error: expired by both blocks and duration", async () => {
    const { chain, pool } = setup(10);
    chain.state.consensusParams = {
      ...chain.state.consensusParams,
      evidence: { maxAgeNumBlocks: 3n, maxAgeDurationNs: 2_000_000_000n, maxBytes: 1_048_576n },
    };
    expect(await rejection(pool.addEvidence(chain.evidence(1, 5)))).toMatch(
      /^invalid evidence: evidence from height 5 \(created at: .*\) is too old; min height is 7/,
    );
    // Old in blocks but not in time: still valid (both limits must be passed).
    chain.state.consensusParams = {
      ...chain.state.consensusParams,
      evidence: { maxAgeNumBlocks: 3n, maxAgeDurationNs: 3600_000_000_000n, maxBytes: 1_048_576n },
    };
    await pool.addEvidence(chain.evidence(1, 5));
    expect(pool.size()).toBe(1);
  });

  test("error: evidence above the committed height cannot be verified yet", async () => {
    const { chain, pool } = setup(10);
    await expect(pool.addEvidence(chain.evidence(1, 11))).rejects.toBeInstanceOf(UnverifiableEvidenceError);
  });
});

describe("EvidencePool lifecycle", () => {
  test("behavior: conflicting votes become evidence at the update for their height", async () => {
    const { chain, pool } = setup(10);
    const heard: Evidence[] = [];
    pool.onEvidenceAdded((ev) => heard.push(ev));
    const b = chain.vote(2, 11, fakeBlockId(7));
    const a = chain.vote(2, 11, fakeBlockId(3));
    pool.reportConflictingVotes(b, a);
    expect(pool.size()).toBe(0);
    await pool.update(chain.advanceTo(11), []);
    expect(heard).toHaveLength(1);
    const ev = heard[0] as DuplicateVoteEvidence;
    expect(ev.voteA).toBe(a); // ordered by BlockID key
    expect(ev.timestamp).toBe(chain.timeOf(11));
    expect(ev.totalVotingPower).toBe(40n);
    expect(ev.validatorPower).toBe(10n);
    expect(pool.size()).toBe(1);
  });

  test("behavior: pending → proposed → committed → never proposed again", async () => {
    const { chain, pool, db } = setup(10);
    const ev1 = chain.evidence(1, 5);
    const ev2 = chain.evidence(2, 4);
    await pool.addEvidence(ev1);
    await pool.addEvidence(ev2);
    // Proposal order is by height.
    const all = pool.pendingEvidence(-1);
    expect(all.evidence).toEqual([ev2, ev1]);
    // EvidenceList size: per piece a field tag, a 2-byte length varint (pieces are 128..16383 bytes) and the bytes.
    const entry = (ev: Evidence) => 1 + 2 + encodeEvidence(ev).length;
    expect(all.bytes).toBe(entry(ev1) + entry(ev2));
    const limited = pool.pendingEvidence(all.bytes - 1);
    expect(limited.evidence).toEqual([ev2]);
    expect(pool.pendingEvidence(0).evidence).toEqual([]);

    await pool.update(chain.advanceTo(11), [ev2]);
    expect(pool.pendingEvidence(-1).evidence).toEqual([ev1]);
    expect(pool.isCommitted(ev2)).toBe(true);
    // Re-sent by a peer that is behind: ignored, not pending again.
    await pool.addEvidence(ev2);
    expect(pool.isPending(ev2)).toBe(false);
    expect(() => pool.checkEvidence([ev2], chain.state)).toThrow(/^invalid evidence: evidence was already committed$/);

    // The records survive a restart.
    const reopened = new EvidencePool({
      db,
      stateStore: chain.stateStore,
      blockStore: chain.blockStore,
      log: silentLogger(),
    });
    expect(reopened.pendingEvidence(-1).evidence).toEqual([ev1]);
    expect(reopened.isCommitted(ev2)).toBe(true);
  });

  test("behavior: checkEvidence verifies unknown evidence and refuses duplicates", async () => {
    const { chain, pool } = setup(10);
    const ev = chain.evidence(1, 5);
    pool.checkEvidence([ev], chain.state);
    expect(pool.isPending(ev)).toBe(true);
    expect(() => pool.checkEvidence([ev, ev], chain.state)).toThrow(/^invalid evidence: duplicate evidence$/);
    const bad = { ...chain.evidence(2, 5), validatorPower: 1n };
    expect(() => pool.checkEvidence([bad], chain.state)).toThrow(InvalidEvidenceSubmissionError);
    await pool.flush();
  });

  test("behavior: expired pending evidence is pruned on update", async () => {
    const { chain, pool, db } = setup(10);
    chain.state.consensusParams = {
      ...chain.state.consensusParams,
      evidence: { maxAgeNumBlocks: 3n, maxAgeDurationNs: 2_000_000_000n, maxBytes: 1_048_576n },
    };
    const old = chain.evidence(1, 8);
    const recent = chain.evidence(1, 10);
    await pool.addEvidence(old);
    await pool.addEvidence(recent);
    // At 11, height 8 is 3 blocks old: not more than max_age_num_blocks yet.
    await pool.update(chain.advanceTo(11), []);
    expect(pool.pendingEvidence(-1).evidence).toEqual([old, recent]);
    // At 12 it is 4 blocks and 4 s old: expired on both counts.
    await pool.update(chain.advanceTo(12), [recent]);
    expect(pool.pendingEvidence(-1).evidence).toEqual([]);
    expect(pool.isCommitted(recent)).toBe(true);
    // The committed record goes once it has expired too.
    await pool.update(chain.advanceTo(20), []);
    expect(pool.isCommitted(recent)).toBe(false);
    expect([...db.table("evidence").range()]).toEqual([]);
  });
});
