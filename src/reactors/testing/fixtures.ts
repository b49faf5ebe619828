import type { ConsensusMessage } from "../../consensus/index.js";
import {
  BitArray,
  type BlockId,
  type Part,
  PartSet,
  type Proposal,
  SIGNED_MSG_TYPE,
  type Vote,
  type VoteType,
} from "../../types/index.js";
import { bytesToHex, hexToBytes } from "../../util/bytes.js";

/** Test support for the reactor tests: domain fixtures and a comparable form of messages. */

export function fill(byte: number, n: number): Uint8Array {
  return new Uint8Array(n).fill(byte);
}

export function hex(s: string): Uint8Array {
  const b = hexToBytes(s);
  if (b === undefined) throw new TypeError(`not hex: ${s}`);
  return b;
}

export function completeBlockId(seed = 0xaa): BlockId {
  return { hash: fill(seed, 32), partSetHeader: { total: 2, hash: fill(seed + 1, 32) } };
}

export function zeroId(): BlockId {
  return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
}

export function makeVote(over: Partial<Vote> = {}): Vote {
  return {
    type: SIGNED_MSG_TYPE.precommit,
    height: 12,
    round: 1,
    blockId: completeBlockId(),
    timestamp: 1_700_000_000_123_456_789n,
    validatorAddress: fill(0x01, 20),
    validatorIndex: 3,
    signature: fill(0x02, 64),
    extension: fill(0x03, 5),
    extensionSignature: fill(0x04, 64),
    ...over,
  };
}

export function makeProposal(over: Partial<Proposal> = {}): Proposal {
  return {
    type: SIGNED_MSG_TYPE.proposal,
    height: 12,
    round: 2,
    polRound: 1,
    blockId: completeBlockId(0x10),
    timestamp: 1_700_000_000_000_000_001n,
    signature: fill(0x05, 64),
    ...over,
  };
}

/** The last part of a 3-part set (a short final part with a real merkle proof). */
export function makePart(): Part {
  const parts = PartSet.fromData(fill(0x07, 2 * 1024 + 100), 1024);
  const part = parts.getPart(2);
  if (part === undefined) throw new TypeError("part set has no part 2");
  return part;
}

/** One valid message of every kind. */
export function everyKind(): ConsensusMessage[] {
  const type: VoteType = SIGNED_MSG_TYPE.prevote;
  return [
    { kind: "newRoundStep", height: 12, round: 3, step: 6, secondsSinceStartTime: -2, lastCommitRound: 0 },
    {
      kind: "newValidBlock",
      height: 12,
      round: 3,
      blockPartSetHeader: { total: 70, hash: fill(0x21, 32) },
      blockParts: BitArray.fromIndices(70, [0, 63, 64, 69]),
      isCommit: false,
    },
    { kind: "proposal", proposal: makeProposal() },
    { kind: "proposalPol", height: 12, proposalPolRound: 1, proposalPol: BitArray.fromIndices(4, [1, 2, 3]) },
    { kind: "blockPart", height: 12, round: 2, part: makePart() },
    { kind: "vote", vote: makeVote() },
    { kind: "hasVote", height: 12, round: 0, type, index: 7 },
    { kind: "voteSetMaj23", height: 12, round: 4, type, blockId: completeBlockId(0x30) },
    {
      kind: "voteSetBits",
      height: 12,
      round: 4,
      type: SIGNED_MSG_TYPE.precommit,
      blockId: zeroId(),
      votes: BitArray.fromIndices(130, [0, 127, 129]),
    },
  ];
}

/** A deep copy with bit arrays as `BA{...}` text and bytes as hex, for toEqual. */
export function comparable(v: unknown): unknown {
  if (v instanceof BitArray) return `BA{${v.size}:${v.toCompactString()}}`;
  if (v instanceof Uint8Array) return `0x${bytesToHex(v)}`;
  if (Array.isArray(v)) return v.map(comparable);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, comparable(x)]));
  }
  return v;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const BYTE_FIELDS = new Set(["hash", "validatorAddress", "signature", "extension", "extensionSignature"]);
const BIT_FIELDS = new Set(["blockParts", "proposalPol", "votes"]);

/** A vector's JSON message as a domain message: hex for bytes, "x_x" for bit arrays, strings for ns. */
export function messageFromJson(j: Json): ConsensusMessage {
  const walk = (v: Json, key: string): unknown => {
    if (typeof v === "string" && BYTE_FIELDS.has(key)) return hex(v);
    if (typeof v === "string" && BIT_FIELDS.has(key)) return BitArray.fromCompactString(v);
    if (typeof v === "string" && key === "timestamp") return BigInt(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v !== null && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    }
    return v;
  };
  return walk(j, "") as ConsensusMessage;
}
