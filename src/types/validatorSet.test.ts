import { describe, expect, test } from "vitest";
import { bytesEqual, utf8ToBytes } from "../util/bytes.js";
import { GO_ZERO_TIME, parseRfc3339, type Timestamp } from "../util/time.js";
import {
  absentCommitSig,
  BLOCK_ID_FLAG,
  type BlockId,
  type Commit,
  CommitVerificationError,
  commitSigToVote,
  decodeValidatorSet,
  encodeValidatorSet,
  generateEd25519PrivKey,
  InvalidBlockError,
  InvalidValidatorUpdateError,
  MAX_TOTAL_VOTING_POWER,
  medianTime,
  type PrivKey,
  type PubKey,
  pubKeyFromPrivKey,
  SIGNED_MSG_TYPE,
  sha256,
  signBytes,
  type Validator,
  ValidatorSet,
  ValidatorSetError,
  verifyVote,
  voteSignBytes,
  zeroBlockId,
} from "./index.js";
import { addressFromPubKey } from "./keys.js";

const CHAIN = "test-chain";
const T0 = parseRfc3339("2024-01-01T00:00:00Z") as Timestamp;
const SEC = 1_000_000_000n;

function key(i: number): { priv: PrivKey; pub: PubKey } {
  const priv = generateEd25519PrivKey(sha256(utf8ToBytes(`validator-${i}`)));
  return { priv, pub: pubKeyFromPrivKey(priv) };
}

function val(pub: PubKey, power: bigint): Validator {
  return { address: addressFromPubKey(pub), pubKey: pub, votingPower: power, proposerPriority: 0n };
}

/** A set plus the private keys, looked up by address. */
function fixture(powers: bigint[]) {
  const keys = powers.map((_, i) => key(i));
  const set = ValidatorSet.create(keys.map((k, i) => val(k.pub, powers[i] as bigint)));
  const privOf = (addr: Uint8Array) =>
    (keys.find((k) => bytesEqual(addressFromPubKey(k.pub), addr)) as { priv: PrivKey }).priv;
  return { keys, set, privOf };
}

const BLOCK_ID: BlockId = {
  hash: sha256(utf8ToBytes("block")),
  partSetHeader: { total: 1, hash: sha256(utf8ToBytes("parts")) },
};

type SigPlan = "commit" | "nil" | "absent";

/** A commit signed by the validators as the plan says, timestamps T0 + index seconds. */
function makeCommit(f: ReturnType<typeof fixture>, plan: SigPlan[], height = 5, round = 0): Commit {
  const commit: Commit = { height, round, blockId: BLOCK_ID, signatures: [] };
  f.set.validators.forEach((v, i) => {
    const p = plan[i] ?? "commit";
    if (p === "absent") {
      commit.signatures.push(absentCommitSig());
      return;
    }
    commit.signatures.push({
      blockIdFlag: p === "commit" ? BLOCK_ID_FLAG.commit : BLOCK_ID_FLAG.nil,
      validatorAddress: v.address,
      timestamp: T0 + BigInt(i) * SEC,
      signature: new Uint8Array(0),
    });
    const sig = commit.signatures[i];
    if (sig) sig.signature = signBytes(f.privOf(v.address), voteSignBytes(CHAIN, commitSigToVote(commit, i)));
  });
  return commit;
}

function verifyError(
  f: ReturnType<typeof fixture>,
  commit: Commit,
  blockId = BLOCK_ID,
  height = 5,
): CommitVerificationError {
  try {
    f.set.verifyCommit(CHAIN, blockId, height, commit);
  } catch (err) {
    expect(err).toBeInstanceOf(CommitVerificationError);
    return err as CommitVerificationError;
  }
  throw new TypeError("verifyCommit did not throw");
}

describe("ValidatorSet.verifyCommit", () => {
  test("default: +2/3 signed for the block", () => {
    const f = fixture([10n, 10n, 10n, 10n]);
    expect(() =>
      f.set.verifyCommit(CHAIN, BLOCK_ID, 5, makeCommit(f, ["commit", "commit", "commit", "absent"])),
    ).not.toThrow();
  });

  test("behavior: nil votes are verified but not counted", () => {
    const f = fixture([10n, 10n, 10n, 10n]);
    const commit = makeCommit(f, ["commit", "commit", "nil", "nil"]);
    const err = verifyError(f, commit);
    expect(err.kind).toBe("notEnoughPower");
    expect(err.message).toMatchInlineSnapshot(
      `"invalid commit -- insufficient voting power: got 20, needed more than 26"`,
    );
  });

  test("error: exactly 2/3 is not enough", () => {
    const f = fixture([10n, 10n, 10n]);
    expect(verifyError(f, makeCommit(f, ["commit", "commit", "absent"])).kind).toBe("notEnoughPower");
  });

  test("error: wrong signature", () => {
    const f = fixture([10n, 10n, 10n]);
    const commit = makeCommit(f, ["commit", "commit", "commit"]);
    const sig = commit.signatures[1];
    if (sig) sig.signature = new Uint8Array(sig.signature.map((b, i) => (i === 0 ? b ^ 1 : b)));
    const err = verifyError(f, commit);
    expect(err.kind).toBe("wrongSignature");
    expect(err.message).toMatch(/^wrong signature \(#1\): [0-9A-F]{128}$/);
  });

  test("error: signature by a different validator at the index", () => {
    const f = fixture([10n, 10n, 10n]);
    const commit = makeCommit(f, ["commit", "commit", "commit"]);
    const [a, b] = commit.signatures;
    if (a && b) commit.signatures = [b, a, ...commit.signatures.slice(2)];
    expect(verifyError(f, commit).kind).toBe("addressMismatch");
  });

  test("error: wrong set size, height, block id", () => {
    const f = fixture([10n, 10n, 10n]);
    const commit = makeCommit(f, ["commit", "commit", "commit"]);
    expect(verifyError(f, { ...commit, signatures: commit.signatures.slice(1) }).message).toMatchInlineSnapshot(
      `"Invalid commit -- wrong set size: 3 vs 2"`,
    );
    expect(verifyError(f, commit, BLOCK_ID, 6).message).toMatchInlineSnapshot(
      `"Invalid commit -- wrong height: 6 vs 5"`,
    );
    expect(verifyError(f, commit, zeroBlockId()).kind).toBe("blockId");
  });

  test("error: malformed commit sig", () => {
    const f = fixture([10n, 10n, 10n]);
    const commit = makeCommit(f, ["commit", "commit", "commit"]);
    const sig = commit.signatures[2];
    if (sig) sig.signature = new Uint8Array(0);
    expect(verifyError(f, commit).kind).toBe("invalidSignature");
  });

  test("behavior: the rebuilt precommit verifies as a vote", () => {
    const f = fixture([10n, 10n]);
    const commit = makeCommit(f, ["commit", "nil"]);
    const v0 = commitSigToVote(commit, 0);
    const v1 = commitSigToVote(commit, 1);
    expect(v0.type).toBe(SIGNED_MSG_TYPE.precommit);
    expect(v1.blockId).toEqual(zeroBlockId());
    expect(verifyVote(CHAIN, v0, f.set.getByIndex(0)?.pubKey as PubKey)).toBe(true);
    expect(verifyVote(CHAIN, v1, f.set.getByIndex(1)?.pubKey as PubKey)).toBe(true);
    expect(verifyVote(CHAIN, v1, f.set.getByIndex(0)?.pubKey as PubKey)).toBe(false);
  });
});

describe("medianTime", () => {
  test("default: power-weighted median of non-absent timestamps", () => {
    // Set order is power desc: 40, 30, 20, 10 → times T0+0s, +1s, +2s, +3s.
    const f = fixture([10n, 20n, 30n, 40n]);
    const commit = makeCommit(f, ["commit", "commit", "commit", "commit"]);
    // Sorted by time, cumulative weights 40, 70, ... ; median = 100/2 = 50 → falls in the second.
    expect(medianTime(commit, f.set)).toBe(T0 + SEC);
  });

  test("behavior: absent signatures do not count, nil ones do", () => {
    const f = fixture([10n, 20n, 30n, 40n]);
    const commit = makeCommit(f, ["absent", "nil", "commit", "commit"]);
    // Weights 30 (T0+1s), 20 (T0+2s), 10 (T0+3s); total 60, median 30 → T0+1s.
    expect(medianTime(commit, f.set)).toBe(T0 + SEC);
    const later = makeCommit(f, ["absent", "absent", "commit", "commit"]);
    // Weights 20 (T0+2s), 10 (T0+3s); total 30, median 15 → T0+2s.
    expect(medianTime(later, f.set)).toBe(T0 + 2n * SEC);
  });

  test("behavior: an empty commit gives Go's zero time", () => {
    const f = fixture([10n]);
    expect(medianTime({ height: 0, round: 0, blockId: zeroBlockId(), signatures: [] }, f.set)).toBe(GO_ZERO_TIME);
  });

  test("error: signer not in the set", () => {
    const f = fixture([10n, 10n]);
    const commit = makeCommit(f, ["commit", "commit"]);
    const other = fixture([5n]);
    expect(() => medianTime(commit, other.set)).toThrow(InvalidBlockError);
  });
});

describe("ValidatorSet.updateWithChangeSet", () => {
  const pubs = [0, 1, 2, 3, 4].map((i) => key(i).pub);
  const base = () =>
    ValidatorSet.create([val(pubs[0] as PubKey, 10n), val(pubs[1] as PubKey, 20n), val(pubs[2] as PubKey, 30n)]);

  test("default: add, update and remove, then re-sort", () => {
    const vs = base();
    const hashBefore = vs.hash();
    vs.updateWithChangeSet([
      { pubKey: pubs[0] as PubKey, power: 0n },
      { pubKey: pubs[1] as PubKey, power: 50n },
      { pubKey: pubs[3] as PubKey, power: 5n },
    ]);
    expect(vs.validators.map((v) => v.votingPower)).toEqual([50n, 30n, 5n]);
    expect(vs.totalVotingPower()).toBe(85n);
    expect(vs.getByAddress(addressFromPubKey(pubs[0] as PubKey))).toBeUndefined();
    expect(vs.getByAddress(addressFromPubKey(pubs[3] as PubKey))?.index).toBe(2);
    expect(vs.hash()).not.toEqual(hashBefore);
    // Priorities are centred: their floor average is 0 (or -1 after truncation).
    const sum = vs.validators.reduce((s, v) => s + v.proposerPriority, 0n);
    expect(sum >= -BigInt(vs.size()) && sum <= BigInt(vs.size())).toBe(true);
  });

  test("behavior: a newcomer starts at -1.125 x the total before centring", () => {
    // One validator set at priority 0; adding a second of power 10 makes the total 20, so the
    // newcomer starts at -(20 + 20>>3) = -22, then both are centred on floor((0 + -22)/2) = -11.
    const vs = ValidatorSet.restore([val(pubs[0] as PubKey, 10n)], undefined);
    vs.updateWithChangeSet([{ pubKey: pubs[1] as PubKey, power: 10n }]);
    const byAddr = (p: PubKey) => vs.getByAddress(addressFromPubKey(p))?.validator.proposerPriority;
    expect(byAddr(pubs[0] as PubKey)).toBe(11n);
    expect(byAddr(pubs[1] as PubKey)).toBe(-11n);
  });

  test("error: duplicate entries", () => {
    const vs = base();
    const before = vs.hash();
    expect(() =>
      vs.updateWithChangeSet([
        { pubKey: pubs[3] as PubKey, power: 1n },
        { pubKey: pubs[3] as PubKey, power: 2n },
      ]),
    ).toThrow(InvalidValidatorUpdateError);
    expect(vs.hash()).toEqual(before);
  });

  test("error: negative power", () => {
    expect(() =>
      base().updateWithChangeSet([{ pubKey: pubs[0] as PubKey, power: -1n }]),
    ).toThrowErrorMatchingInlineSnapshot(`[InvalidValidatorUpdateError: voting power can't be negative: -1]`);
  });

  test("error: removing an unknown validator", () => {
    expect(() => base().updateWithChangeSet([{ pubKey: pubs[4] as PubKey, power: 0n }])).toThrow(
      /^failed to find validator [0-9A-F]{40} to remove$/,
    );
  });

  test("error: removing everyone", () => {
    expect(() =>
      base().updateWithChangeSet([0, 1, 2].map((i) => ({ pubKey: pubs[i] as PubKey, power: 0n }))),
    ).toThrowErrorMatchingInlineSnapshot(
      `[InvalidValidatorUpdateError: applying the validator changes would result in empty set]`,
    );
  });

  test("error: total power above MaxTotalVotingPower", () => {
    const vs = base();
    expect(() => vs.updateWithChangeSet([{ pubKey: pubs[3] as PubKey, power: MAX_TOTAL_VOTING_POWER + 1n }])).toThrow(
      /voting power can't be higher than/,
    );
    expect(() => vs.updateWithChangeSet([{ pubKey: pubs[3] as PubKey, power: MAX_TOTAL_VOTING_POWER - 10n }])).toThrow(
      /total voting power of resulting valset exceeds max/,
    );
    expect(vs.totalVotingPower()).toBe(60n);
  });

  test("error: create refuses zero power", () => {
    expect(() => ValidatorSet.create([val(pubs[0] as PubKey, 0n)])).toThrow(
      /cannot process validators with voting power 0/,
    );
  });
});

describe("ValidatorSet", () => {
  test("default: empty set", () => {
    const vs = ValidatorSet.empty();
    expect(vs.isEmpty()).toBe(true);
    expect(vs.getProposer()).toBeUndefined();
    expect(vs.totalVotingPower()).toBe(0n);
    expect(() => vs.incrementProposerPriority(1)).toThrow(ValidatorSetError);
  });

  test("behavior: copy is independent", () => {
    const f = fixture([10n, 20n, 30n]);
    const c = f.set.copyIncrementProposerPriority(3);
    expect(c.validators.map((v) => v.proposerPriority)).not.toEqual(f.set.validators.map((v) => v.proposerPriority));
    expect(c.hash()).toEqual(f.set.hash());
  });

  test("behavior: encode/decode keeps order, priorities and proposer", () => {
    const f = fixture([10n, 20n, 30n, 30n]);
    f.set.incrementProposerPriority(2);
    const back = decodeValidatorSet(encodeValidatorSet(f.set));
    expect(back.validators).toEqual(f.set.validators);
    expect(back.getProposer()?.address).toEqual(f.set.getProposer()?.address);
    expect(back.copyIncrementProposerPriority(5).getProposer()).toEqual(
      f.set.copyIncrementProposerPriority(5).getProposer(),
    );
  });

  test("error: restore with a proposer outside the set", () => {
    const f = fixture([10n]);
    expect(() => ValidatorSet.restore(f.set.validators, new Uint8Array(20))).toThrow(ValidatorSetError);
  });
});
