import { describe, expect, test } from "vitest";
import type { ConsensusMessage } from "../consensus/index.js";
import { BitArray, SIGNED_MSG_TYPE, type VoteType } from "../types/index.js";
import { bytesToHex } from "../util/bytes.js";
import vectors from "./codecVectors.json" with { type: "json" };
import { decodeConsensusMessage, encodeConsensusMessage, MAX_BLOCK_PARTS_COUNT } from "./consensusCodec.js";
import { InvalidConsensusMessageError } from "./errors.js";
import {
  comparable,
  completeBlockId,
  everyKind,
  fill,
  hex,
  makePart,
  makeProposal,
  makeVote,
  messageFromJson,
  zeroId,
} from "./testing/fixtures.js";

type Json = Parameters<typeof messageFromJson>[0];

describe("consensus codec vectors", () => {
  for (const v of vectors.consensus) {
    test(`default: ${v.name}`, () => {
      const msg = messageFromJson(v.msg as Json);
      expect(bytesToHex(encodeConsensusMessage(msg))).toBe(v.hex);
      expect(comparable(decodeConsensusMessage(hex(v.hex)))).toEqual(comparable(msg));
    });
  }
});

describe("encodeConsensusMessage / decodeConsensusMessage", () => {
  for (const msg of everyKind()) {
    test(`behavior: ${msg.kind} round-trips`, () => {
      const bytes = encodeConsensusMessage(msg);
      const back = decodeConsensusMessage(bytes);
      expect(comparable(back)).toEqual(comparable(msg));
      expect(bytesToHex(encodeConsensusMessage(back))).toBe(bytesToHex(bytes));
      // Decoded byte fields are plain Uint8Arrays, not Buffers.
      if (back.kind === "vote") expect(back.vote.signature.constructor).toBe(Uint8Array);
    });
  }

  test("behavior: a nil prevote without extensions round-trips", () => {
    const msg: ConsensusMessage = {
      kind: "vote",
      vote: makeVote({
        type: SIGNED_MSG_TYPE.prevote,
        blockId: zeroId(),
        extension: new Uint8Array(0),
        extensionSignature: new Uint8Array(0),
      }),
    };
    expect(comparable(decodeConsensusMessage(encodeConsensusMessage(msg)))).toEqual(comparable(msg));
  });

  test("behavior: a zero-size votes bit array in VoteSetBits is written as an empty message", () => {
    const msg: ConsensusMessage = {
      kind: "voteSetBits",
      height: 3,
      round: 0,
      type: SIGNED_MSG_TYPE.prevote,
      blockId: completeBlockId(),
      votes: new BitArray(0),
    };
    const bytes = encodeConsensusMessage(msg);
    expect(bytesToHex(bytes).endsWith("2a00")).toBe(true);
    expect(comparable(decodeConsensusMessage(bytes))).toEqual(comparable(msg));
  });

  test("behavior: set bits beyond the size in the last elem are ignored", () => {
    // ProposalPOL{height 2, pol_round 1, pol{bits 3, elems [0xff]}}.
    const msg = decodeConsensusMessage(hex("220c080210011a0608031202ff01"));
    expect(comparable(msg)).toEqual(
      comparable({
        kind: "proposalPol",
        height: 2,
        proposalPolRound: 1,
        proposalPol: BitArray.fromCompactString("xxx"),
      }),
    );
  });
});

/** Bytes of `msg` encoded without validation (the encoder writes whatever it is given). */
function raw(msg: unknown): Uint8Array {
  return encodeConsensusMessage(msg as ConsensusMessage);
}

function expectInvalid(bytes: Uint8Array, problem: RegExp): void {
  expect(() => decodeConsensusMessage(bytes)).toThrow(InvalidConsensusMessageError);
  expect(() => decodeConsensusMessage(bytes)).toThrow(problem);
}

describe("decodeConsensusMessage validation", () => {
  const nrs = { kind: "newRoundStep", height: 5, round: 0, step: 1, secondsSinceStartTime: 0, lastCommitRound: 0 };
  const prevote = SIGNED_MSG_TYPE.prevote as VoteType;

  test("error: bytes that are not a protobuf message", () => {
    expectInvalid(hex("0aff"), /cannot decode tendermint.consensus.Message/);
  });

  test("error: an empty message (no oneof member)", () => {
    expectInvalid(new Uint8Array(0), /no known type/);
  });

  test("error: NewRoundStep with negative height, negative round, bad step or last commit round", () => {
    expectInvalid(raw({ ...nrs, height: -1 }), /NewRoundStep message: negative Height/);
    expectInvalid(raw({ ...nrs, round: -1 }), /negative Round/);
    expectInvalid(raw({ ...nrs, step: 0 }), /invalid Step/);
    expectInvalid(raw({ ...nrs, step: 9 }), /invalid Step/);
    expectInvalid(raw({ ...nrs, step: 300 }), /invalid Step/);
    expectInvalid(raw({ ...nrs, lastCommitRound: -2 }), /invalid LastCommitRound/);
  });

  test("error: a height beyond 2^53", () => {
    // NewRoundStep{height: 2^62, step: 1}.
    expectInvalid(hex("0a0c088080808080808080401801"), /does not fit in a safe integer/);
  });

  test("error: NewValidBlock with empty, mismatched or oversized parts, or a bad header hash", () => {
    const nvb = {
      kind: "newValidBlock",
      height: 5,
      round: 0,
      blockPartSetHeader: { total: 2, hash: fill(1, 32) },
      blockParts: new BitArray(2),
      isCommit: false,
    };
    expectInvalid(raw({ ...nvb, blockParts: new BitArray(0) }), /empty blockParts/);
    expectInvalid(raw({ ...nvb, blockParts: new BitArray(3) }), /size 3 not equal to BlockPartSetHeader.Total 2/);
    expectInvalid(
      raw({ ...nvb, blockPartSetHeader: { total: 2, hash: fill(1, 31) } }),
      /wrong BlockPartSetHeader: wrong Hash/,
    );
    const big = MAX_BLOCK_PARTS_COUNT + 1;
    expectInvalid(
      raw({ ...nvb, blockPartSetHeader: { total: big, hash: fill(1, 32) }, blockParts: new BitArray(big) }),
      /too big/,
    );
  });

  test("error: a bit array whose elems do not match its size", () => {
    // ProposalPOL{height 2, pol_round 1, pol{bits 65, elems [1]}}: 65 bits need 2 elems.
    expectInvalid(hex("220b080210011a050841120101"), /mismatch between specified number of bits 65/);
    // bits 3 with no elems.
    expectInvalid(hex("2208080210011a020803"), /number of elements 0, expected 1/);
  });

  test("error: ProposalPOL with negative round or an empty bit array", () => {
    const pol = { kind: "proposalPol", height: 2, proposalPolRound: 1, proposalPol: new BitArray(3) };
    expectInvalid(raw({ ...pol, proposalPolRound: -1 }), /negative ProposalPOLRound/);
    expectInvalid(raw({ ...pol, proposalPol: new BitArray(0) }), /empty ProposalPOL bit array/);
    expectInvalid(raw({ ...pol, proposalPol: new BitArray(10_001) }), /too big: 10001, max: 10000/);
  });

  test("error: a proposal that fails ValidateBasic", () => {
    expectInvalid(raw({ kind: "proposal", proposal: makeProposal({ polRound: -2 }) }), /POLRound/);
    expectInvalid(raw({ kind: "proposal", proposal: makeProposal({ blockId: zeroId() }) }), /complete/);
    // Proposal{} with no proposal field: the zero proposal has type 0.
    expectInvalid(hex("1a00"), /invalid Type/);
  });

  test("error: a block part that fails ValidateBasic", () => {
    const part = makePart();
    expectInvalid(raw({ kind: "blockPart", height: -1, round: 0, part }), /negative Height/);
    expectInvalid(
      raw({ kind: "blockPart", height: 1, round: 0, part: { ...part, index: 3 } }),
      /wrong Part: error invalid part index/,
    );
  });

  test("error: a vote that fails ValidateBasic, or no vote at all", () => {
    expectInvalid(raw({ kind: "vote", vote: makeVote({ type: 32 as VoteType }) }), /Vote message: invalid Type/);
    expectInvalid(raw({ kind: "vote", vote: makeVote({ signature: new Uint8Array(0) }) }), /signature is missing/);
    expectInvalid(
      raw({ kind: "vote", vote: makeVote({ type: prevote, blockId: zeroId() }) }),
      /unexpected vote extension/,
    );
    expectInvalid(hex("3200"), /nil vote/);
  });

  test("error: HasVote with a bad type or index", () => {
    const hv = { kind: "hasVote", height: 1, round: 0, type: prevote, index: 0 };
    expectInvalid(raw({ ...hv, type: 32 }), /HasVote message: invalid Type/);
    expectInvalid(raw({ ...hv, index: -1 }), /negative Index/);
    expectInvalid(raw({ ...hv, round: -1 }), /negative Round/);
  });

  test("error: VoteSetMaj23 and VoteSetBits with a bad type, block id or size", () => {
    const m23 = { kind: "voteSetMaj23", height: 1, round: 0, type: prevote, blockId: completeBlockId() };
    expectInvalid(raw({ ...m23, type: 0 }), /VoteSetMaj23 message: invalid Type/);
    expectInvalid(raw({ ...m23, blockId: { ...completeBlockId(), hash: fill(1, 5) } }), /wrong BlockID: wrong Hash/);
    const vsb = { kind: "voteSetBits", height: 1, round: 0, type: prevote, blockId: zeroId(), votes: new BitArray(1) };
    expectInvalid(raw({ ...vsb, height: -1 }), /VoteSetBits message: negative Height/);
    expectInvalid(raw({ ...vsb, type: 3 }), /invalid Type/);
    expectInvalid(raw({ ...vsb, votes: new BitArray(10_001) }), /too big/);
    // A VoteSetMaj23 for the nil block id is valid, as in CometBFT.
    expect(decodeConsensusMessage(raw({ ...m23, blockId: zeroId() })).kind).toBe("voteSetMaj23");
  });
});
