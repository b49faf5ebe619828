import { describe, expect, test } from "vitest";
import {
  addressFromPubKey,
  BLOCK_ID_FLAG,
  type BlockId,
  generateEd25519PrivKey,
  type PrivKey,
  pubKeyFromPrivKey,
  SIGNED_MSG_TYPE,
  signBytes,
  ValidatorSet,
  type Vote,
  type VoteType,
  voteSignBytes,
  zeroBlockId,
} from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import {
  ConflictingVoteError,
  InvalidVoteError,
  NonDeterministicSignatureError,
  UnwantedRoundVoteError,
} from "./errors.js";
import { HeightVoteSet } from "./heightVoteSet.js";
import { TestSetupError } from "./testing/harness.js";
import { formatFraction, formatVoteSetBitArray, formatVoteSetVotes, VoteSet } from "./voteSet.js";

const CHAIN = "vs-chain";
const T = 1_700_000_000_000_000_000n;

function makeVals(n: number, power = 10n) {
  const keys = Array.from({ length: n }, (_, i) => generateEd25519PrivKey(new Uint8Array(32).fill(i + 7)));
  const set = ValidatorSet.create(
    keys.map((k) => {
      const pubKey = pubKeyFromPrivKey(k);
      return { address: addressFromPubKey(pubKey), pubKey, votingPower: power, proposerPriority: 0n };
    }),
  );
  // Keys in validator-index order.
  const byIndex = set.validators.map((v) => {
    const k = keys.find((key) => addressFromPubKey(pubKeyFromPrivKey(key)).every((b, i) => b === v.address[i]));
    if (k === undefined) throw new TestSetupError("key not found");
    return k;
  });
  return { set, keys: byIndex };
}

const blockA: BlockId = {
  hash: new Uint8Array(32).fill(0xaa),
  partSetHeader: { total: 1, hash: new Uint8Array(32).fill(1) },
};
const blockB: BlockId = {
  hash: new Uint8Array(32).fill(0xbb),
  partSetHeader: { total: 1, hash: new Uint8Array(32).fill(2) },
};

function vote(
  keys: PrivKey[],
  set: ValidatorSet,
  index: number,
  blockId: BlockId,
  opts: { type?: VoteType; height?: number; round?: number; time?: bigint } = {},
): Vote {
  const val = set.getByIndex(index);
  const key = keys[index];
  if (val === undefined || key === undefined) throw new TestSetupError("bad index");
  const v: Vote = {
    type: opts.type ?? SIGNED_MSG_TYPE.prevote,
    height: opts.height ?? 1,
    round: opts.round ?? 0,
    blockId,
    timestamp: opts.time ?? T,
    validatorAddress: val.address,
    validatorIndex: index,
    signature: EMPTY_BYTES,
    extension: EMPTY_BYTES,
    extensionSignature: EMPTY_BYTES,
  };
  return { ...v, signature: signBytes(key, voteSignBytes(CHAIN, v)) };
}

describe("VoteSet", () => {
  test("behavior: +2/3 majority needs more than two thirds of the power for one block", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    expect(vs.addVote(vote(keys, set, 0, blockA))).toBe(true);
    expect(vs.addVote(vote(keys, set, 1, blockA))).toBe(true);
    expect(vs.hasTwoThirdsAny()).toBe(false);
    expect(vs.addVote(vote(keys, set, 2, zeroBlockId()))).toBe(true);
    expect(vs.hasTwoThirdsAny()).toBe(true);
    expect(vs.twoThirdsMajority()).toBeUndefined();
    expect(vs.addVote(vote(keys, set, 3, blockA))).toBe(true);
    expect(vs.twoThirdsMajority()).toEqual(blockA);
    expect(vs.hasAll()).toBe(true);
    expect(
      vs
        .tallies()
        .map((t) => t.sum)
        .sort(),
    ).toEqual([10n, 30n]);
  });

  test("behavior: nil majority", () => {
    const { set, keys } = makeVals(3);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    for (let i = 0; i < 3; i++) vs.addVote(vote(keys, set, i, zeroBlockId()));
    expect(vs.twoThirdsMajority()?.hash.length).toBe(0);
  });

  test("behavior: an exact duplicate is not added", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    const v = vote(keys, set, 0, blockA);
    expect(vs.addVote(v)).toBe(true);
    expect(vs.addVote({ ...v })).toBe(false);
    expect(vs.sum()).toBe(10n);
  });

  test("error: same block, different signature", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    vs.addVote(vote(keys, set, 0, blockA));
    expect(() => vs.addVote(vote(keys, set, 0, blockA, { time: T + 1n }))).toThrow(NonDeterministicSignatureError);
  });

  test("error: conflicting votes come back as evidence material", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    const a = vote(keys, set, 1, blockA);
    const b = vote(keys, set, 1, blockB);
    vs.addVote(a);
    let err: unknown;
    try {
      vs.addVote(b);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConflictingVoteError);
    expect((err as ConflictingVoteError).voteA).toBe(a);
    expect((err as ConflictingVoteError).voteB).toBe(b);
    expect((err as ConflictingVoteError).added).toBe(false);
    expect(vs.getByIndex(1)).toBe(a);
    expect(vs.sum()).toBe(10n);
  });

  test("behavior: a peer's +2/3 claim makes a conflicting vote count for that block", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    vs.addVote(vote(keys, set, 0, blockA));
    vs.setPeerMaj23("peer1", blockB);
    let err: unknown;
    try {
      vs.addVote(vote(keys, set, 0, blockB));
    } catch (e) {
      err = e;
    }
    expect((err as ConflictingVoteError).added).toBe(true);
    expect(vs.bitArrayByBlockId(blockB)?.get(0)).toBe(true);
    expect(vs.peerMaj23s().get("peer1")).toEqual(blockB);
    vs.addVote(vote(keys, set, 1, blockB));
    vs.addVote(vote(keys, set, 2, blockB));
    expect(vs.twoThirdsMajority()).toEqual(blockB);
    // The canonical vote of validator 0 is replaced by its vote for the majority block.
    expect(vs.getByIndex(0)?.blockId).toEqual(blockB);
  });

  test("error: invalid votes", () => {
    const { set, keys } = makeVals(2);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.prevote, set);
    expect(() => vs.addVote(vote(keys, set, 0, blockA, { height: 2 }))).toThrow(InvalidVoteError);
    expect(() => vs.addVote({ ...vote(keys, set, 0, blockA), validatorIndex: 5 })).toThrow(InvalidVoteError);
    expect(() => vs.addVote({ ...vote(keys, set, 0, blockA), signature: new Uint8Array(64) })).toThrow(
      InvalidVoteError,
    );
    expect(() => vs.addVote({ ...vote(keys, set, 0, blockA), validatorIndex: 1 })).toThrow(InvalidVoteError);
  });

  test("behavior: bit-array text counts the power of every received vote", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.precommit, set);
    expect(formatVoteSetBitArray(vs.view())).toBe("BA{4:____} 0/40 = 0.00");
    vs.addVote(vote(keys, set, 0, blockA, { type: SIGNED_MSG_TYPE.precommit }));
    vs.addVote(vote(keys, set, 1, zeroBlockId(), { type: SIGNED_MSG_TYPE.precommit }));
    vs.addVote(vote(keys, set, 2, blockA, { type: SIGNED_MSG_TYPE.precommit }));
    expect(formatVoteSetBitArray(vs.view())).toBe("BA{4:xxx_} 30/40 = 0.75");
    const lines = formatVoteSetVotes(vs.view());
    expect(lines[3]).toBe("nil-Vote");
    expect(lines[0]).toMatch(
      /^Vote\{0:[0-9A-F]{12} 1\/00\/SIGNED_MSG_TYPE_PRECOMMIT\(Precommit\) AAAAAAAAAAAA [0-9A-F]{12} 000000000000 @ 2023-11-14T22:13:20Z\}$/,
    );
    expect(lines[1]).toContain(" 000000000000 ");
  });

  test("default: %.2f rounds half to even", () => {
    expect(formatFraction(1n, 8n)).toBe("0.12");
    expect(formatFraction(3n, 8n)).toBe("0.38");
    expect(formatFraction(2n, 3n)).toBe("0.67");
    expect(formatFraction(10n, 10n)).toBe("1.00");
  });

  test("behavior: makeCommit marks absent, nil and other-block votes", () => {
    const { set, keys } = makeVals(4);
    const vs = new VoteSet(CHAIN, 1, 0, SIGNED_MSG_TYPE.precommit, set);
    const pc = (i: number, id: BlockId) => vote(keys, set, i, id, { type: SIGNED_MSG_TYPE.precommit });
    vs.addVote(pc(0, blockA));
    vs.addVote(pc(1, blockA));
    vs.addVote(pc(2, blockA));
    vs.addVote(pc(3, zeroBlockId()));
    const commit = vs.makeCommit();
    expect(commit.blockId).toEqual(blockA);
    expect(commit.signatures.map((s) => s.blockIdFlag)).toEqual([
      BLOCK_ID_FLAG.commit,
      BLOCK_ID_FLAG.commit,
      BLOCK_ID_FLAG.commit,
      BLOCK_ID_FLAG.nil,
    ]);
    set.verifyCommit(CHAIN, blockA, 1, commit);
    const rebuilt = VoteSet.fromCommit(CHAIN, commit, set);
    expect(rebuilt.twoThirdsMajority()).toEqual(blockA);
    expect(rebuilt.sum()).toBe(40n);
  });
});

describe("HeightVoteSet", () => {
  test("behavior: tracks rounds 0..R+1 and up to two catch-up rounds per peer", () => {
    const { set, keys } = makeVals(4);
    const hvs = new HeightVoteSet(CHAIN, 1, set);
    hvs.setRound(1);
    expect(hvs.view().map((r) => r.round)).toEqual([0, 1]);
    expect(hvs.addVote(vote(keys, set, 0, blockA, { round: 5 }), "p1")).toBe(true);
    expect(hvs.addVote(vote(keys, set, 0, blockA, { round: 6 }), "p1")).toBe(true);
    expect(() => hvs.addVote(vote(keys, set, 0, blockA, { round: 7 }), "p1")).toThrow(UnwantedRoundVoteError);
    expect(hvs.addVote(vote(keys, set, 1, blockA, { round: 7 }), "p2")).toBe(true);
    // Catch-up rounds are not listed until the height reaches them.
    expect(hvs.view().map((r) => r.round)).toEqual([0, 1]);
    hvs.setRound(6);
    expect(hvs.view().map((r) => r.round)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  test("behavior: POL info is the last round with a prevote majority", () => {
    const { set, keys } = makeVals(4);
    const hvs = new HeightVoteSet(CHAIN, 1, set);
    hvs.setRound(3);
    for (let i = 0; i < 3; i++) hvs.addVote(vote(keys, set, i, blockB, { round: 2 }), "");
    expect(hvs.polInfo()).toEqual({ polRound: 2, polBlockId: blockB });
  });
});
