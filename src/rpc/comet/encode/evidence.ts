import type { BlockId } from "../../../types/blockId.js";
import type { Evidence } from "../../../types/evidence.js";
import type { Vote, VoteType } from "../../../types/vote.js";
import { GO_ZERO_TIME, parseRfc3339, type Timestamp } from "../../../util/time.js";
import { goValueKind, type JsonNode } from "../../jsonrpc/index.js";
import { ParamDecodeError, p } from "../params.js";

/**
 * broadcast_evidence's argument: cmtjson's registered-interface form
 * `{"type":"tendermint/DuplicateVoteEvidence","value":{"vote_a":…,"vote_b":…,"TotalVotingPower":"…","ValidatorPower":"…","Timestamp":"…"}}`,
 * decoded with cmtjson's rules and error texts.
 */

function fields(node: JsonNode, goType: string): Map<string, JsonNode> {
  if (node.kind !== "object") {
    throw new ParamDecodeError(`json: cannot unmarshal ${goValueKind(node)} into Go value of type ${goType}`);
  }
  const m = new Map<string, JsonNode>();
  for (const [k, v] of node.entries) m.set(k, v);
  return m;
}

function int32(node: JsonNode | undefined, goType: string): number {
  return int32Like(node, goType, -(2 ** 31), 2 ** 31 - 1);
}

function uint32(node: JsonNode | undefined): number {
  return int32Like(node, "uint32", 0, 2 ** 32 - 1);
}

function int32Like(node: JsonNode | undefined, goType: string, min: number, max: number): number {
  if (node === undefined || node.kind === "null") return 0;
  if (node.kind !== "number") {
    throw new ParamDecodeError(`json: cannot unmarshal ${goValueKind(node)} into Go value of type ${goType}`);
  }
  const v = Number(node.raw);
  if (!/^-?\d+$/.test(node.raw) || v < min || v > max) {
    throw new ParamDecodeError(`json: cannot unmarshal number ${node.raw} into Go value of type ${goType}`);
  }
  return v;
}

function timestamp(node: JsonNode | undefined): Timestamp {
  if (node === undefined || node.kind === "null") return GO_ZERO_TIME;
  const raw = node.raw;
  if (raw.length < 2 || !raw.startsWith('"') || !raw.endsWith('"')) {
    throw new ParamDecodeError(`JSON time must be an RFC3339 string, but got ${JSON.stringify(raw)}`);
  }
  if (raw[raw.length - 2] !== "Z") {
    throw new ParamDecodeError(`JSON time must be UTC and end with 'Z', but got ${JSON.stringify(raw)}`);
  }
  const t = node.kind === "string" ? parseRfc3339(node.value) : undefined;
  if (t === undefined) {
    throw new ParamDecodeError(`parsing time ${raw} as "2006-01-02T15:04:05Z07:00": cannot parse ${raw}`);
  }
  return t;
}

function blockId(node: JsonNode | undefined): BlockId {
  if (node === undefined || node.kind === "null") {
    return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
  }
  const f = fields(node, "map[string]json.RawMessage");
  const parts = f.get("parts");
  const pf =
    parts === undefined || parts.kind === "null"
      ? new Map<string, JsonNode>()
      : fields(parts, "map[string]json.RawMessage");
  return {
    hash: decodeWith(p.hexBytes, f.get("hash")),
    partSetHeader: { total: uint32(pf.get("total")), hash: decodeWith(p.hexBytes, pf.get("hash")) },
  };
}

function decodeWith<T>(codec: { decode(n: JsonNode): T; zero: T }, node: JsonNode | undefined): T {
  return node === undefined ? codec.zero : codec.decode(node);
}

function vote(node: JsonNode | undefined): Vote | undefined {
  if (node === undefined || node.kind === "null") return undefined;
  const f = fields(node, "map[string]json.RawMessage");
  return {
    type: int32(f.get("type"), "types.SignedMsgType") as VoteType,
    height: Number(decodeWith(p.int64, f.get("height"))),
    round: int32(f.get("round"), "int32"),
    blockId: blockId(f.get("block_id")),
    timestamp: timestamp(f.get("timestamp")),
    validatorAddress: decodeWith(p.hexBytes, f.get("validator_address")),
    validatorIndex: int32(f.get("validator_index"), "int32"),
    signature: decodeWith(p.bytes, f.get("signature")),
    extension: decodeWith(p.bytes, f.get("extension")),
    extensionSignature: decodeWith(p.bytes, f.get("extension_signature")),
  };
}

/** Evidence with one or both votes missing (ValidateBasic refuses it with this text). */
export class MissingVoteEvidence {
  readonly voteA: Vote | undefined;
  readonly voteB: Vote | undefined;
  constructor(voteA: Vote | undefined, voteB: Vote | undefined) {
    this.voteA = voteA;
    this.voteB = voteB;
  }
}

/** Decodes the evidence argument; undefined for null ("no evidence was provided"). */
export function decodeEvidence(node: JsonNode): Evidence | MissingVoteEvidence | undefined {
  if (node.kind === "null") return undefined;
  const wrapper = fields(node, "json.interfaceWrapper");
  const typeNode = wrapper.get("type");
  let type = "";
  if (typeNode !== undefined && typeNode.kind !== "null") {
    if (typeNode.kind !== "string") {
      throw new ParamDecodeError(
        `json: cannot unmarshal ${goValueKind(typeNode)} into Go struct field interfaceWrapper.type of type string`,
      );
    }
    type = typeNode.value;
  }
  if (type === "") throw new ParamDecodeError("interface type cannot be empty");
  const value = wrapper.get("value");
  if (value === undefined) throw new ParamDecodeError("interface value cannot be empty");
  if (type === "tendermint/LightClientAttackEvidence") {
    throw new ParamDecodeError(`evidence type "${type}" is not supported by this node`);
  }
  if (type !== "tendermint/DuplicateVoteEvidence") throw new ParamDecodeError(`unknown type ${JSON.stringify(type)}`);
  if (value.kind === "null") return undefined;
  const f = fields(value, "map[string]json.RawMessage");
  const voteA = vote(f.get("vote_a"));
  const voteB = vote(f.get("vote_b"));
  if (voteA === undefined || voteB === undefined) return new MissingVoteEvidence(voteA, voteB);
  return {
    type: "duplicateVote",
    voteA,
    voteB,
    totalVotingPower: decodeWith(p.int64, f.get("TotalVotingPower")),
    validatorPower: decodeWith(p.int64, f.get("ValidatorPower")),
    timestamp: timestamp(f.get("Timestamp")),
  };
}
