import { describe, expect, test } from "vitest";
import { defaultConsensusParams } from "../types/index.js";
import { FAKE_CHAIN_ID, FakeChain, fakeBlockId } from "./testing/fakeChain.js";
import { isEvidenceExpired, verifyDuplicateVote } from "./verifyDuplicateVote.js";

describe("verifyDuplicateVote", () => {
  const chain = new FakeChain(4);

  test("default: two signed votes for different blocks verify", () => {
    expect(() => verifyDuplicateVote(chain.evidence(0, 3), FAKE_CHAIN_ID, chain.valSet)).not.toThrow();
  });

  test("error: height, round or type differ", () => {
    const ev = chain.evidence(0, 3);
    const later = { ...ev, voteB: chain.vote(0, 3, ev.voteB.blockId, { round: 1 }) };
    expect(() => verifyDuplicateVote(later, FAKE_CHAIN_ID, chain.valSet)).toThrow(
      /^invalid evidence: h\/r\/s does not match: 3\/0\/1 vs 3\/1\/1$/,
    );
  });

  test("error: the same block id twice", () => {
    const ev = chain.evidence(0, 3);
    const same = { ...ev, voteB: chain.vote(0, 3, fakeBlockId(1)) };
    expect(() => verifyDuplicateVote(same, FAKE_CHAIN_ID, chain.valSet)).toThrow(
      /^invalid evidence: block IDs are the same \(.*\) - not a real duplicate vote$/,
    );
  });

  test("error: votes of two validators", () => {
    const ev = chain.evidence(0, 3);
    const mixed = { ...ev, voteB: chain.vote(1, 3, ev.voteB.blockId) };
    expect(() => verifyDuplicateVote(mixed, FAKE_CHAIN_ID, chain.valSet)).toThrow(
      /^invalid evidence: validator addresses do not match/,
    );
  });

  test("error: signed for another chain", () => {
    expect(() => verifyDuplicateVote(chain.evidence(0, 3), "other-chain", chain.valSet)).toThrow(
      /^invalid evidence: verifying VoteA: invalid signature$/,
    );
  });
});

describe("isEvidenceExpired", () => {
  const params = { ...defaultConsensusParams().evidence, maxAgeNumBlocks: 10n, maxAgeDurationNs: 100n };

  test("default: expired only past both limits", () => {
    expect(isEvidenceExpired(111, 1000n, 100, 899n, params)).toBe(true);
    expect(isEvidenceExpired(110, 1000n, 100, 899n, params)).toBe(false);
    expect(isEvidenceExpired(111, 1000n, 100, 900n, params)).toBe(false);
  });
});
