import { describe, expect, test } from "vitest";
import { utf8ToBytes } from "../util/bytes.js";
import { parseRfc3339, type Timestamp } from "../util/time.js";
import {
  decodeVote,
  encodeVote,
  formatVote,
  generateEd25519PrivKey,
  InvalidProposalError,
  InvalidVoteError,
  isNilVote,
  type Proposal,
  proposalSignBytes,
  pubKeyFromPrivKey,
  rememberVoteSignBytes,
  SIGNED_MSG_TYPE,
  sha256,
  signBytes,
  type Vote,
  validateProposalBasic,
  validateVoteBasic,
  verifyProposal,
  verifyVote,
  verifyVoteExtension,
  voteExtensionSignBytes,
  voteSignBytes,
  voteSignBytesFor,
  zeroBlockId,
} from "./index.js";
import { addressFromPubKey } from "./keys.js";

const CHAIN = "test-chain";
const T = parseRfc3339("2024-01-01T00:00:07.1Z") as Timestamp;
const priv = generateEd25519PrivKey(sha256(utf8ToBytes("vote-test")));
const pub = pubKeyFromPrivKey(priv);
const BLOCK_ID = { hash: sha256(utf8ToBytes("b")), partSetHeader: { total: 1, hash: sha256(utf8ToBytes("p")) } };

function precommit(overrides: Partial<Vote> = {}): Vote {
  const v: Vote = {
    type: SIGNED_MSG_TYPE.precommit,
    height: 6,
    round: 0,
    blockId: BLOCK_ID,
    timestamp: T,
    validatorAddress: addressFromPubKey(pub),
    validatorIndex: 0,
    signature: new Uint8Array(0),
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
    ...overrides,
  };
  return { ...v, signature: signBytes(priv, voteSignBytes(CHAIN, v)) };
}

describe("votes", () => {
  test("default: signed vote verifies; other chain, key or content does not", () => {
    const v = precommit();
    expect(verifyVote(CHAIN, v, pub)).toBe(true);
    expect(verifyVote("other-chain", v, pub)).toBe(false);
    expect(verifyVote(CHAIN, { ...v, round: 1 }, pub)).toBe(false);
    expect(verifyVote(CHAIN, v, pubKeyFromPrivKey(generateEd25519PrivKey()))).toBe(false);
    expect(() => validateVoteBasic(v)).not.toThrow();
  });

  test("behavior: sign bytes kept with a signature are reused only for the same fields", () => {
    const v = precommit();
    expect(verifyVote(CHAIN, v, pub)).toBe(true);
    // The same signature asked with any field changed: encoded afresh, and the signature fails.
    const changed: Vote[] = [
      { ...v, type: SIGNED_MSG_TYPE.prevote },
      { ...v, height: 7 },
      { ...v, round: 1 },
      { ...v, timestamp: T + 1n },
      { ...v, blockId: zeroBlockId() },
      { ...v, blockId: { hash: sha256(utf8ToBytes("c")), partSetHeader: BLOCK_ID.partSetHeader } },
      { ...v, blockId: { hash: BLOCK_ID.hash, partSetHeader: { total: 2, hash: BLOCK_ID.partSetHeader.hash } } },
    ];
    for (const c of changed) {
      expect(voteSignBytesFor(CHAIN, c, v.signature)).toEqual(voteSignBytes(CHAIN, c));
      expect(verifyVote(CHAIN, c, pub)).toBe(false);
      expect(voteSignBytesFor(CHAIN, v, v.signature)).toEqual(voteSignBytes(CHAIN, v));
    }
    expect(voteSignBytesFor("other-chain", v, v.signature)).toEqual(voteSignBytes("other-chain", v));
    // Bytes of a block id kept, then changed in place: the vote's new bytes, not the kept ones.
    const hash = sha256(utf8ToBytes("d"));
    const w = precommit({ blockId: { hash, partSetHeader: BLOCK_ID.partSetHeader } });
    rememberVoteSignBytes(CHAIN, w, w.signature, voteSignBytes(CHAIN, w));
    hash.fill(7);
    expect(voteSignBytesFor(CHAIN, w, w.signature)).toEqual(voteSignBytes(CHAIN, w));
    expect(verifyVote(CHAIN, w, pub)).toBe(false);
  });

  test("behavior: the extension is signed separately", () => {
    const v = precommit({ extension: utf8ToBytes("ext") });
    const withExt = { ...v, extensionSignature: signBytes(priv, voteExtensionSignBytes(CHAIN, v)) };
    expect(verifyVote(CHAIN, withExt, pub)).toBe(true);
    expect(verifyVoteExtension(CHAIN, withExt, pub)).toBe(true);
    expect(verifyVoteExtension(CHAIN, { ...withExt, extension: utf8ToBytes("other") }, pub)).toBe(false);
  });

  test("default: formatVote of a nil vote", () => {
    const v = precommit({ blockId: zeroBlockId(), round: 3, validatorIndex: 2 });
    expect(isNilVote(v)).toBe(true);
    expect(formatVote({ ...v, signature: new Uint8Array([0x9f, 0x11, 0xa2, 0xb3, 0xc4, 0xd5, 0xe6]) })).toBe(
      `Vote{2:${Buffer.from(v.validatorAddress.subarray(0, 6)).toString("hex").toUpperCase()} 6/03/SIGNED_MSG_TYPE_PRECOMMIT(Precommit) 000000000000 9F11A2B3C4D5 000000000000 @ 2024-01-01T00:00:07.1Z}`,
    );
    expect(formatVote({ ...v, round: 123 })).toContain(" 6/123/");
  });

  test("default: proto round trip", () => {
    const v = precommit({ extension: utf8ToBytes("e"), extensionSignature: new Uint8Array(64).fill(1) });
    expect(decodeVote(encodeVote(v))).toEqual(v);
  });

  test("error: validateVoteBasic", () => {
    const cases: [Partial<Vote>, string][] = [
      [{ height: 0 }, "negative or zero Height"],
      [{ round: -1 }, "negative Round"],
      [{ validatorAddress: new Uint8Array(3) }, "expected ValidatorAddress size to be 20 bytes, got 3 bytes"],
      [{ blockId: { ...BLOCK_ID, hash: new Uint8Array(0) } }, "blockID must be either empty or complete"],
      [
        { type: SIGNED_MSG_TYPE.prevote, extension: utf8ToBytes("x") },
        "unexpected vote extension; vote type 1, isNil false",
      ],
      [{ extension: utf8ToBytes("x") }, "vote extension signature absent on vote with extension"],
    ];
    for (const [o, message] of cases)
      expect(() => validateVoteBasic(precommit(o))).toThrow(new InvalidVoteError(message));
    expect(() => validateVoteBasic({ ...precommit(), signature: new Uint8Array(0) })).toThrow("signature is missing");
  });
});

describe("proposals", () => {
  const p: Proposal = {
    type: 32,
    height: 7,
    round: 1,
    polRound: -1,
    blockId: BLOCK_ID,
    timestamp: T,
    signature: new Uint8Array(0),
  };
  const signed = { ...p, signature: signBytes(priv, proposalSignBytes(CHAIN, p)) };

  test("default: signed proposal verifies", () => {
    expect(verifyProposal(CHAIN, signed, pub)).toBe(true);
    expect(verifyProposal(CHAIN, { ...signed, polRound: 0 }, pub)).toBe(false);
    expect(() => validateProposalBasic(signed)).not.toThrow();
  });

  test("error: validateProposalBasic", () => {
    expect(() => validateProposalBasic({ ...signed, polRound: -2 })).toThrow(
      new InvalidProposalError("negative POLRound (exception: -1)"),
    );
    expect(() => validateProposalBasic({ ...signed, blockId: zeroBlockId() })).toThrow(/complete, non-empty BlockID/);
  });
});
