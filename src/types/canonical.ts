import protobuf from "protobufjs";
import { type Timestamp, timestampToSecondsNanos } from "../util/time.js";
import { type BlockId, isZeroBlockId } from "./blockId.js";

/**
 * Messages cosmjs-types does not generate: CometBFT's proto/tendermint/types/canonical.proto
 * (what votes and proposals sign) and the gogoproto wrapper types the header hash uses for its
 * leaves. Field numbers and types copied from v0.38.25; protobufjs encodes them with proto3
 * default omission.
 */
const SCHEMA = `
syntax = "proto3";
package cometh.canonical;

message Timestamp { int64 seconds = 1; int32 nanos = 2; }

message CanonicalPartSetHeader { uint32 total = 1; bytes hash = 2; }
message CanonicalBlockID { bytes hash = 1; CanonicalPartSetHeader part_set_header = 2; }

message CanonicalProposal {
  int32 type = 1;
  sfixed64 height = 2;
  sfixed64 round = 3;
  int64 pol_round = 4;
  CanonicalBlockID block_id = 5;
  Timestamp timestamp = 6;
  string chain_id = 7;
}

message CanonicalVote {
  int32 type = 1;
  sfixed64 height = 2;
  sfixed64 round = 3;
  CanonicalBlockID block_id = 4;
  Timestamp timestamp = 5;
  string chain_id = 6;
}

message CanonicalVoteExtension {
  bytes extension = 1;
  sfixed64 height = 2;
  sfixed64 round = 3;
  string chain_id = 4;
}

message StringValue { string value = 1; }
message Int64Value { int64 value = 1; }
message BytesValue { bytes value = 1; }
`;

/** The schema's types, parsed on first use (not at import: start-up time, docs/dev-chain.md "Start-up"). */
function makeTypes() {
  const root = protobuf.parse(SCHEMA).root;
  const T = (name: string) => root.lookupType(`cometh.canonical.${name}`);
  return {
    CanonicalVote: T("CanonicalVote"),
    CanonicalProposal: T("CanonicalProposal"),
    CanonicalVoteExtension: T("CanonicalVoteExtension"),
    TimestampMsg: T("Timestamp"),
    StringValue: T("StringValue"),
    Int64Value: T("Int64Value"),
    BytesValue: T("BytesValue"),
  };
}
let parsed: ReturnType<typeof makeTypes> | undefined;
function types(): ReturnType<typeof makeTypes> {
  parsed ??= makeTypes();
  return parsed;
}

/** protobufjs returns a Buffer under Node; hand out plain Uint8Arrays (Buffer#slice does not copy). */
function plain(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

interface TimestampObj {
  seconds: number;
  nanos: number;
}

/** protobufjs takes int64 as a JS number; Unix seconds for any real timestamp are far below 2^53. */
function timestampObj(t: Timestamp): TimestampObj {
  const { seconds, nanos } = timestampToSecondsNanos(t);
  return { seconds: Number(seconds), nanos };
}

/** types.CanonicalizeBlockID: a zero BlockID is nil, so the field is left out entirely. */
function canonicalBlockId(id: BlockId) {
  if (isZeroBlockId(id)) return undefined;
  return { hash: id.hash, partSetHeader: { total: id.partSetHeader.total, hash: id.partSetHeader.hash } };
}

export interface CanonicalVoteInput {
  type: number;
  height: number;
  round: number;
  blockId: BlockId;
  timestamp: Timestamp;
}

/** Length-prefixed CanonicalVote (types.VoteSignBytes → protoio.MarshalDelimited). */
export function encodeCanonicalVoteDelimited(chainId: string, v: CanonicalVoteInput): Uint8Array {
  const blockId = canonicalBlockId(v.blockId);
  const msg = {
    type: v.type,
    height: v.height,
    round: v.round,
    ...(blockId ? { blockId } : {}),
    timestamp: timestampObj(v.timestamp),
    chainId,
  };
  return plain(types().CanonicalVote.encodeDelimited(msg).finish());
}

export interface CanonicalProposalInput {
  type: number;
  height: number;
  round: number;
  polRound: number;
  blockId: BlockId;
  timestamp: Timestamp;
}

/** Length-prefixed CanonicalProposal (types.ProposalSignBytes). */
export function encodeCanonicalProposalDelimited(chainId: string, p: CanonicalProposalInput): Uint8Array {
  const blockId = canonicalBlockId(p.blockId);
  const msg = {
    type: p.type,
    height: p.height,
    round: p.round,
    polRound: p.polRound,
    ...(blockId ? { blockId } : {}),
    timestamp: timestampObj(p.timestamp),
    chainId,
  };
  return plain(types().CanonicalProposal.encodeDelimited(msg).finish());
}

/** Length-prefixed CanonicalVoteExtension (types.VoteExtensionSignBytes). */
export function encodeCanonicalVoteExtensionDelimited(
  chainId: string,
  v: { extension: Uint8Array; height: number; round: number },
): Uint8Array {
  return plain(
    types()
      .CanonicalVoteExtension.encodeDelimited({
        extension: v.extension,
        height: v.height,
        round: v.round,
        chainId,
      })
      .finish(),
  );
}

/** google.protobuf.Timestamp bytes with zero fields omitted (header hash leaf 4). */
export function encodeTimestampMessage(t: Timestamp): Uint8Array {
  return plain(types().TimestampMsg.encode(timestampObj(t)).finish());
}

/** gogotypes.StringValue bytes: empty for "". */
export function encodeStringValue(value: string): Uint8Array {
  return plain(types().StringValue.encode({ value }).finish());
}

/** gogotypes.Int64Value bytes: empty for 0. */
export function encodeInt64Value(value: number): Uint8Array {
  return plain(types().Int64Value.encode({ value }).finish());
}

/** gogotypes.BytesValue bytes: empty for an empty slice. */
export function encodeBytesValue(value: Uint8Array): Uint8Array {
  return plain(types().BytesValue.encode({ value }).finish());
}
