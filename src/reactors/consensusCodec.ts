import { BlockID as PbBlockID, PartSetHeader as PbPartSetHeader } from "cosmjs-types/tendermint/types/types";
import type protobuf from "protobufjs";
import { type ConsensusMessage, MAX_BLOCK_SIZE_BYTES, ROUND_STEP } from "../consensus/index.js";
import {
  BitArray,
  type BlockId,
  blockIdFromProto,
  decodePart,
  decodeProposal,
  decodeVote,
  encodeBlockId,
  encodePart,
  encodePartSetHeader,
  encodeProposal,
  encodeVote,
  hashSizeProblem,
  PART_SIZE_BYTES,
  type PartSetHeader,
  SchemaMessage,
  SIGNED_MSG_TYPE,
  type VoteType,
  validateBlockIdBasic,
  validatePartBasic,
  validateProposalBasic,
  validateVoteBasic,
} from "../types/index.js";
import { InvalidConsensusMessageError } from "./errors.js";

/**
 * tendermint.consensus.Message (CometBFT v0.38 proto/tendermint/consensus/types.proto) ⇄ the domain
 * ConsensusMessage. Field numbers and types are copied from the .proto, BitArray from
 * proto/tendermint/libs/bits/types.proto. The embedded Vote, Proposal, Part, PartSetHeader and BlockID
 * are declared as `bytes` here and filled with types/protoCodec's encodings: a length-delimited
 * field has the same wire form whether it holds bytes or a message. gogoproto non-nullable embedded
 * messages are `optional bytes`, so they are written even when empty, as Go always writes them; the
 * non-nullable BitArrays are written as (possibly empty) messages for the same reason.
 */
const SCHEMA = `
syntax = "proto3";
package tendermint.consensus;

message BitArray { int64 bits = 1; repeated uint64 elems = 2; }

message NewRoundStep {
  int64 height = 1;
  int32 round = 2;
  uint32 step = 3;
  int64 seconds_since_start_time = 4;
  int32 last_commit_round = 5;
}
message NewValidBlock {
  int64 height = 1;
  int32 round = 2;
  optional bytes block_part_set_header = 3;
  BitArray block_parts = 4;
  bool is_commit = 5;
}
message Proposal { optional bytes proposal = 1; }
message ProposalPOL { int64 height = 1; int32 proposal_pol_round = 2; BitArray proposal_pol = 3; }
message BlockPart { int64 height = 1; int32 round = 2; optional bytes part = 3; }
message Vote { optional bytes vote = 1; }
message HasVote { int64 height = 1; int32 round = 2; int32 type = 3; int32 index = 4; }
message VoteSetMaj23 { int64 height = 1; int32 round = 2; int32 type = 3; optional bytes block_id = 4; }
message VoteSetBits {
  int64 height = 1;
  int32 round = 2;
  int32 type = 3;
  optional bytes block_id = 4;
  BitArray votes = 5;
}
message Message {
  oneof sum {
    NewRoundStep new_round_step = 1;
    NewValidBlock new_valid_block = 2;
    Proposal proposal = 3;
    ProposalPOL proposal_pol = 4;
    BlockPart block_part = 5;
    Vote vote = 6;
    HasVote has_vote = 7;
    VoteSetMaj23 vote_set_maj23 = 8;
    VoteSetBits vote_set_bits = 9;
  }
}
`;

const PbMessage = new SchemaMessage<PbMessageShape>(SCHEMA, "tendermint.consensus.Message");

/** types.MaxVotesCount: the largest vote bit array a peer may send. */
export const MAX_VOTES_COUNT = 10_000;
/** types.MaxBlockPartsCount: parts of the largest possible block, plus one. */
export const MAX_BLOCK_PARTS_COUNT = Math.floor(MAX_BLOCK_SIZE_BYTES / PART_SIZE_BYTES) + 1;

// ---- decoded shapes (protobufjs: int64/uint64 as Long, bytes as Buffer, absent fields undefined) ----

type Int64 = number | protobuf.Long;
type Bytes = Uint8Array | null | undefined;

interface PbBitArray {
  bits?: Int64;
  elems?: Int64[];
}

interface PbMessageShape {
  newRoundStep?: {
    height?: Int64;
    round?: number;
    step?: number;
    secondsSinceStartTime?: Int64;
    lastCommitRound?: number;
  };
  newValidBlock?: {
    height?: Int64;
    round?: number;
    blockPartSetHeader?: Bytes;
    blockParts?: PbBitArray | null;
    isCommit?: boolean;
  };
  proposal?: { proposal?: Bytes };
  proposalPol?: { height?: Int64; proposalPolRound?: number; proposalPol?: PbBitArray | null };
  blockPart?: { height?: Int64; round?: number; part?: Bytes };
  vote?: { vote?: Bytes };
  hasVote?: { height?: Int64; round?: number; type?: number; index?: number };
  voteSetMaj23?: { height?: Int64; round?: number; type?: number; blockId?: Bytes };
  voteSetBits?: { height?: Int64; round?: number; type?: number; blockId?: Bytes; votes?: PbBitArray | null };
}

const EMPTY = new Uint8Array(0);

/** protobufjs hands out Buffers under Node; decoders below get plain Uint8Array views. */
function plain(b: Bytes): Uint8Array {
  if (b === null || b === undefined) return EMPTY;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function invalid(what: string, problem: string, cause?: unknown): InvalidConsensusMessageError {
  return new InvalidConsensusMessageError(
    `invalid ${what} message: ${problem}. The peer sent a malformed tendermint.consensus.Message`,
    cause === undefined ? {} : { cause },
  );
}

function int64ToNumber(v: Int64 | undefined, what: string, field: string): number {
  if (v === undefined) return 0;
  if (typeof v === "number") return v;
  const big = BigInt(v.toString());
  if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw invalid(what, `${field} ${big} does not fit in a safe integer`);
  }
  return Number(big);
}

// ---- bit arrays ---------------------------------------------------------------------------------

/** libs/bits BitArray.ToProto: bit i is bit i%64 of elems[i/64]; a zero-size array has no fields. */
function bitArrayToPb(ba: BitArray): { bits?: number; elems?: string[] } {
  if (ba.size === 0) return {};
  const elems = new Array<bigint>(Math.ceil(ba.size / 64)).fill(0n);
  for (const i of ba.trueIndices()) elems[i >> 6] = (elems[i >> 6] as bigint) | (1n << BigInt(i & 63));
  return { bits: ba.size, elems: elems.map((e) => e.toString()) };
}

/**
 * BitArray.FromProto + ValidateBasic (the elems count must match the size). The size bound is checked
 * before anything is allocated. CometBFT lets a negative size through; it is refused here.
 */
function bitArrayFromPb(pb: PbBitArray | null | undefined, max: number, what: string, field: string): BitArray {
  const size = int64ToNumber(pb?.bits, what, `${field} size`);
  const elems = pb?.elems ?? [];
  if (size < 0) throw invalid(what, `${field} has negative size ${size}`);
  if (size > max) throw invalid(what, `${field} bit array is too big: ${size}, max: ${max}`);
  const expected = Math.ceil(size / 64);
  if (elems.length !== expected) {
    throw invalid(
      what,
      `${field}: mismatch between specified number of bits ${size}, and number of elements ${elems.length}, expected ${expected} elements`,
    );
  }
  const ba = new BitArray(size);
  for (let e = 0; e < elems.length; e++) {
    const word = BigInt.asUintN(64, BigInt((elems[e] as Int64).toString()));
    if (word === 0n) continue;
    for (let b = 0; b < 64; b++) if ((word >> BigInt(b)) & 1n) ba.set(e * 64 + b, true);
  }
  return ba;
}

// ---- encode ---------------------------------------------------------------------------------------

function toPb(msg: ConsensusMessage): Record<string, unknown> {
  switch (msg.kind) {
    case "newRoundStep":
      return {
        newRoundStep: {
          height: msg.height,
          round: msg.round,
          step: msg.step,
          secondsSinceStartTime: msg.secondsSinceStartTime,
          lastCommitRound: msg.lastCommitRound,
        },
      };
    case "newValidBlock":
      return {
        newValidBlock: {
          height: msg.height,
          round: msg.round,
          blockPartSetHeader: encodePartSetHeader(msg.blockPartSetHeader),
          // block_parts is nullable: Go's ToProto gives nil (field left out) for an empty array.
          ...(msg.blockParts.size === 0 ? {} : { blockParts: bitArrayToPb(msg.blockParts) }),
          isCommit: msg.isCommit,
        },
      };
    case "proposal":
      return { proposal: { proposal: encodeProposal(msg.proposal) } };
    case "proposalPol":
      return {
        proposalPol: {
          height: msg.height,
          proposalPolRound: msg.proposalPolRound,
          proposalPol: bitArrayToPb(msg.proposalPol),
        },
      };
    case "blockPart":
      return { blockPart: { height: msg.height, round: msg.round, part: encodePart(msg.part) } };
    case "vote":
      return { vote: { vote: encodeVote(msg.vote) } };
    case "hasVote":
      return { hasVote: { height: msg.height, round: msg.round, type: msg.type, index: msg.index } };
    case "voteSetMaj23":
      return {
        voteSetMaj23: { height: msg.height, round: msg.round, type: msg.type, blockId: encodeBlockId(msg.blockId) },
      };
    case "voteSetBits":
      return {
        voteSetBits: {
          height: msg.height,
          round: msg.round,
          type: msg.type,
          blockId: encodeBlockId(msg.blockId),
          votes: bitArrayToPb(msg.votes),
        },
      };
  }
}

/** tendermint.consensus.Message bytes of a consensus message (what the reactor sends). */
export function encodeConsensusMessage(msg: ConsensusMessage): Uint8Array {
  return PbMessage.encode(toPb(msg));
}

// ---- decode ---------------------------------------------------------------------------------------

function embedded<T>(what: string, field: string, bytes: Bytes, decode: (b: Uint8Array) => T): T {
  try {
    return decode(plain(bytes));
  } catch (err) {
    throw invalid(what, `${field}: ${(err as Error).message}`, err);
  }
}

function partSetHeaderFrom(what: string, bytes: Bytes): PartSetHeader {
  return embedded(what, "block_part_set_header", bytes, (b) => {
    const pb = PbPartSetHeader.decode(b);
    return { total: pb.total, hash: pb.hash };
  });
}

function blockIdFrom(what: string, bytes: Bytes): BlockId {
  return embedded(what, "block_id", bytes, (b) => blockIdFromProto(PbBlockID.decode(b)));
}

function fromPb(pb: PbMessageShape): ConsensusMessage {
  if (pb.newRoundStep) {
    const m = pb.newRoundStep;
    const w = "NewRoundStep";
    return {
      kind: "newRoundStep",
      height: int64ToNumber(m.height, w, "height"),
      round: m.round ?? 0,
      step: m.step ?? 0,
      secondsSinceStartTime: int64ToNumber(m.secondsSinceStartTime, w, "seconds_since_start_time"),
      lastCommitRound: m.lastCommitRound ?? 0,
    };
  }
  if (pb.newValidBlock) {
    const m = pb.newValidBlock;
    const w = "NewValidBlock";
    return {
      kind: "newValidBlock",
      height: int64ToNumber(m.height, w, "height"),
      round: m.round ?? 0,
      blockPartSetHeader: partSetHeaderFrom(w, m.blockPartSetHeader),
      blockParts: bitArrayFromPb(m.blockParts, MAX_BLOCK_PARTS_COUNT, w, "blockParts"),
      isCommit: m.isCommit ?? false,
    };
  }
  if (pb.proposal) {
    return { kind: "proposal", proposal: embedded("Proposal", "proposal", pb.proposal.proposal, decodeProposal) };
  }
  if (pb.proposalPol) {
    const m = pb.proposalPol;
    const w = "ProposalPOL";
    return {
      kind: "proposalPol",
      height: int64ToNumber(m.height, w, "height"),
      proposalPolRound: m.proposalPolRound ?? 0,
      proposalPol: bitArrayFromPb(m.proposalPol, MAX_VOTES_COUNT, w, "ProposalPOL"),
    };
  }
  if (pb.blockPart) {
    const m = pb.blockPart;
    const w = "BlockPart";
    return {
      kind: "blockPart",
      height: int64ToNumber(m.height, w, "height"),
      round: m.round ?? 0,
      part: embedded(w, "part", m.part, decodePart),
    };
  }
  if (pb.vote) {
    // Vote.vote is nullable in Go, and VoteFromProto(nil) fails.
    if (pb.vote.vote === undefined || pb.vote.vote === null) throw invalid("Vote", "nil vote");
    return { kind: "vote", vote: embedded("Vote", "vote", pb.vote.vote, decodeVote) };
  }
  if (pb.hasVote) {
    const m = pb.hasVote;
    return {
      kind: "hasVote",
      height: int64ToNumber(m.height, "HasVote", "height"),
      round: m.round ?? 0,
      type: (m.type ?? 0) as VoteType,
      index: m.index ?? 0,
    };
  }
  if (pb.voteSetMaj23) {
    const m = pb.voteSetMaj23;
    const w = "VoteSetMaj23";
    return {
      kind: "voteSetMaj23",
      height: int64ToNumber(m.height, w, "height"),
      round: m.round ?? 0,
      type: (m.type ?? 0) as VoteType,
      blockId: blockIdFrom(w, m.blockId),
    };
  }
  if (pb.voteSetBits) {
    const m = pb.voteSetBits;
    const w = "VoteSetBits";
    return {
      kind: "voteSetBits",
      height: int64ToNumber(m.height, w, "height"),
      round: m.round ?? 0,
      type: (m.type ?? 0) as VoteType,
      blockId: blockIdFrom(w, m.blockId),
      votes: bitArrayFromPb(m.votes, MAX_VOTES_COUNT, w, "Votes"),
    };
  }
  throw new InvalidConsensusMessageError(
    "consensus message has no known type (empty oneof). The peer sent a message this version does not know",
  );
}

/**
 * Decodes tendermint.consensus.Message bytes and validates the result (MsgFromProto + ValidateBasic).
 * Throws InvalidConsensusMessageError.
 */
export function decodeConsensusMessage(bytes: Uint8Array): ConsensusMessage {
  const pb = PbMessage.decode(
    bytes,
    (err) =>
      new InvalidConsensusMessageError(
        `cannot decode tendermint.consensus.Message: ${err.message}. The peer sent corrupt bytes`,
        { cause: err },
      ),
  );
  const msg = fromPb(pb);
  validateConsensusMessage(msg);
  return msg;
}

// ---- ValidateBasic ------------------------------------------------------------------------------

/** RoundStepType.IsValid: 1 (NewHeight) to 8 (Commit). */
function isRoundStep(step: number): boolean {
  return Number.isInteger(step) && step >= ROUND_STEP.newHeight && step <= ROUND_STEP.commit;
}

function isVoteType(t: number): t is VoteType {
  return t === SIGNED_MSG_TYPE.prevote || t === SIGNED_MSG_TYPE.precommit;
}

function check(what: string, fn: () => void, prefix: string): void {
  try {
    fn();
  } catch (err) {
    throw invalid(what, `${prefix}${(err as Error).message}`, err);
  }
}

/** The ValidateBasic of each message in consensus/reactor.go; throws InvalidConsensusMessageError. */
export function validateConsensusMessage(msg: ConsensusMessage): void {
  switch (msg.kind) {
    case "newRoundStep": {
      const w = "NewRoundStep";
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (msg.round < 0) throw invalid(w, "negative Round");
      if (!isRoundStep(msg.step)) throw invalid(w, "invalid Step");
      // SecondsSinceStartTime may be negative; LastCommitRound is -1 at the initial height.
      if (msg.lastCommitRound < -1) throw invalid(w, "invalid LastCommitRound (cannot be < -1)");
      return;
    }
    case "newValidBlock": {
      const w = "NewValidBlock";
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (msg.round < 0) throw invalid(w, "negative Round");
      const p = hashSizeProblem(msg.blockPartSetHeader.hash);
      if (p !== undefined) throw invalid(w, `wrong BlockPartSetHeader: wrong Hash: ${p}`);
      const size = msg.blockParts.size;
      if (size === 0) throw invalid(w, "empty blockParts");
      if (size !== msg.blockPartSetHeader.total) {
        throw invalid(
          w,
          `blockParts bit array size ${size} not equal to BlockPartSetHeader.Total ${msg.blockPartSetHeader.total}`,
        );
      }
      if (size > MAX_BLOCK_PARTS_COUNT) {
        throw invalid(w, `blockParts bit array is too big: ${size}, max: ${MAX_BLOCK_PARTS_COUNT}`);
      }
      return;
    }
    case "proposal":
      check("Proposal", () => validateProposalBasic(msg.proposal), "");
      return;
    case "proposalPol": {
      const w = "ProposalPOL";
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (msg.proposalPolRound < 0) throw invalid(w, "negative ProposalPOLRound");
      if (msg.proposalPol.size === 0) throw invalid(w, "empty ProposalPOL bit array");
      if (msg.proposalPol.size > MAX_VOTES_COUNT) {
        throw invalid(w, `proposalPOL bit array is too big: ${msg.proposalPol.size}, max: ${MAX_VOTES_COUNT}`);
      }
      return;
    }
    case "blockPart": {
      const w = "BlockPart";
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (msg.round < 0) throw invalid(w, "negative Round");
      check(w, () => validatePartBasic(msg.part), "wrong Part: ");
      return;
    }
    case "vote":
      check("Vote", () => validateVoteBasic(msg.vote), "");
      return;
    case "hasVote": {
      const w = "HasVote";
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (msg.round < 0) throw invalid(w, "negative Round");
      if (!isVoteType(msg.type)) throw invalid(w, "invalid Type");
      if (msg.index < 0) throw invalid(w, "negative Index");
      return;
    }
    case "voteSetMaj23": {
      const w = "VoteSetMaj23";
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (msg.round < 0) throw invalid(w, "negative Round");
      if (!isVoteType(msg.type)) throw invalid(w, "invalid Type");
      check(w, () => validateBlockIdBasic(msg.blockId), "wrong BlockID: ");
      return;
    }
    case "voteSetBits": {
      const w = "VoteSetBits";
      // CometBFT checks no Round here.
      if (msg.height < 0) throw invalid(w, "negative Height");
      if (!isVoteType(msg.type)) throw invalid(w, "invalid Type");
      check(w, () => validateBlockIdBasic(msg.blockId), "wrong BlockID: ");
      // The size may be zero when the sender has none of the votes.
      if (msg.votes.size > MAX_VOTES_COUNT) {
        throw invalid(w, `votes bit array is too big: ${msg.votes.size}, max: ${MAX_VOTES_COUNT}`);
      }
      return;
    }
  }
}
