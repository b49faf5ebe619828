import type { BinaryWriter } from "cosmjs-types/binary";
import type { Timestamp as PbTimestamp } from "cosmjs-types/google/protobuf/timestamp";
import { ExecTxResult as PbExecTxResult } from "cosmjs-types/tendermint/abci/types";
import { PublicKey as PbPublicKey } from "cosmjs-types/tendermint/crypto/keys";
import { Block as PbBlock } from "cosmjs-types/tendermint/types/block";
import {
  DuplicateVoteEvidence as PbDuplicateVoteEvidence,
  Evidence as PbEvidence,
} from "cosmjs-types/tendermint/types/evidence";
import {
  ConsensusParams as PbConsensusParams,
  HashedParams as PbHashedParams,
} from "cosmjs-types/tendermint/types/params";
import {
  BlockID as PbBlockID,
  Commit as PbCommit,
  CommitSig as PbCommitSig,
  Header as PbHeader,
  Part as PbPart,
  PartSetHeader as PbPartSetHeader,
  Proposal as PbProposal,
  Vote as PbVote,
} from "cosmjs-types/tendermint/types/types";
import {
  SimpleValidator as PbSimpleValidator,
  type Validator as PbValidator,
  ValidatorSet as PbValidatorSet,
} from "cosmjs-types/tendermint/types/validator";
import { Consensus as PbConsensus } from "cosmjs-types/tendermint/version/types";
import { ComethError } from "../util/errors.js";
import { type Timestamp, timestampFromSecondsNanos, timestampToSecondsNanos } from "../util/time.js";
import type { ExecTxResult } from "./abci.js";
import { type BlockId, type PartSetHeader, zeroBlockId } from "./blockId.js";
import type { Block, BlockIdFlag, Commit, CommitSig, Header } from "./blockTypes.js";
import type { DuplicateVoteEvidence, Evidence } from "./evidenceTypes.js";
import { KEY_TYPES, type PubKey } from "./keys.js";
import type { ConsensusParams } from "./paramsTypes.js";
import type { Part } from "./partSet.js";
import type { Proposal } from "./proposal.js";
import type { Validator } from "./validator.js";
import type { Vote, VoteType } from "./vote.js";

/**
 * Domain ⇄ protobuf for CometBFT v0.38 messages, via cosmjs-types' generated code. gogoproto
 * non-nullable fields (Header.version/time/last_block_id, BlockID.part_set_header, every
 * timestamp, Block.header/data/evidence, Commit.block_id) are always set so they are always
 * emitted, as Go does; scalar zero values are left out by the generated encoders (proto3).
 *
 * Byte fields of decoded values are views into the input buffer: do not reuse or mutate it.
 */

/** The bytes could not be decoded as the expected CometBFT message. */
export class ProtoDecodeError extends ComethError {}

/** A domain value cannot be expressed in the proto message (e.g. an unsupported key type). */
export class ProtoEncodeError extends ComethError {}

/**
 * BinaryWriter.finish() hands out small results as views into a fresh 8 KiB slab; copy the ops
 * into an exact-size array instead so stored encodings do not pin 8 KiB each.
 */
function finish(w: BinaryWriter): Uint8Array {
  const buf = new Uint8Array(w.len);
  let pos = 0;
  for (let op = w.head.next; op; op = op.next) {
    op.proceed(buf, pos);
    pos += op.len;
  }
  return buf;
}

function toNumber(v: bigint, what: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new ProtoDecodeError(`${what} ${v} does not fit in a safe integer`);
  }
  return Number(v);
}

function decodeWith<T>(what: string, bytes: Uint8Array, decode: (b: Uint8Array) => T): T {
  try {
    return decode(bytes);
  } catch (err) {
    if (err instanceof ProtoDecodeError) throw err;
    throw new ProtoDecodeError(`invalid ${what} bytes: ${(err as Error).message}`, { cause: err });
  }
}

// ---- scalars and small messages -------------------------------------------------------------

export function timestampToProto(t: Timestamp): PbTimestamp {
  return timestampToSecondsNanos(t);
}

/** A Timestamp message that is present but empty is the Unix epoch (1970), not Go's zero time. */
export function timestampFromProto(ts: PbTimestamp): Timestamp {
  return timestampFromSecondsNanos(ts.seconds, ts.nanos);
}

export function blockIdToProto(id: BlockId): PbBlockID {
  return { hash: id.hash, partSetHeader: { total: id.partSetHeader.total, hash: id.partSetHeader.hash } };
}

export function blockIdFromProto(pb: PbBlockID): BlockId {
  return { hash: pb.hash, partSetHeader: { total: pb.partSetHeader.total, hash: pb.partSetHeader.hash } };
}

/** PartSetHeader proto bytes (part of types.BlockID.Key, which orders duplicate-vote evidence). */
export function encodePartSetHeader(h: PartSetHeader): Uint8Array {
  return finish(PbPartSetHeader.encode({ total: h.total, hash: h.hash }));
}

/** BlockID proto bytes; part_set_header is always present, so the zero BlockID is 1200 (header hash leaf 5). */
export function encodeBlockId(id: BlockId): Uint8Array {
  return finish(PbBlockID.encode(blockIdToProto(id)));
}

/** tendermint.version.Consensus bytes (header hash leaf 1: block 11, app 0 → 080b). */
export function encodeConsensusVersion(v: { block: bigint; app: bigint }): Uint8Array {
  return finish(PbConsensus.encode({ block: v.block, app: v.app }));
}

export function pubKeyToProto(pk: PubKey): PbPublicKey {
  if (pk.type === KEY_TYPES.ed25519) return { ed25519: pk.bytes };
  if (pk.type === KEY_TYPES.secp256k1) return { secp256k1: pk.bytes };
  throw new ProtoEncodeError(`unsupported public key type ${String(pk.type)}`);
}

export function pubKeyFromProto(pb: PbPublicKey): PubKey {
  if (pb.ed25519 !== undefined) return { type: KEY_TYPES.ed25519, bytes: pb.ed25519 };
  if (pb.secp256k1 !== undefined) return { type: KEY_TYPES.secp256k1, bytes: pb.secp256k1 };
  throw new ProtoDecodeError("public key has no ed25519 or secp256k1 value");
}

/** tendermint.crypto.PublicKey bytes (ed25519 → 0a20‖key). */
export function encodePubKey(pk: PubKey): Uint8Array {
  return finish(PbPublicKey.encode(pubKeyToProto(pk)));
}

export function decodePubKey(bytes: Uint8Array): PubKey {
  return decodeWith("PublicKey", bytes, (b) => pubKeyFromProto(PbPublicKey.decode(b)));
}

export function validatorToProto(v: Validator): PbValidator {
  return {
    address: v.address,
    pubKey: pubKeyToProto(v.pubKey),
    votingPower: v.votingPower,
    proposerPriority: v.proposerPriority,
  };
}

export function validatorFromProto(pb: PbValidator): Validator {
  return {
    address: pb.address,
    pubKey: pubKeyFromProto(pb.pubKey),
    votingPower: pb.votingPower,
    proposerPriority: pb.proposerPriority,
  };
}

/** SimpleValidator{pub_key, voting_power}: the leaf of validators_hash (priority is not hashed). */
export function encodeSimpleValidator(v: Validator): Uint8Array {
  return finish(PbSimpleValidator.encode({ pubKey: pubKeyToProto(v.pubKey), votingPower: v.votingPower }));
}

/** tendermint.types.ValidatorSet bytes; total_voting_power is written as 0, as Go's ToProto does. */
export function encodeValidatorSetMessage(
  validators: readonly Validator[],
  proposer: Validator | undefined,
): Uint8Array {
  return finish(
    PbValidatorSet.encode({
      validators: validators.map(validatorToProto),
      ...(proposer ? { proposer: validatorToProto(proposer) } : {}),
      totalVotingPower: 0n,
    }),
  );
}

export function decodeValidatorSetMessage(bytes: Uint8Array): {
  validators: Validator[];
  proposerAddress: Uint8Array | undefined;
} {
  return decodeWith("ValidatorSet", bytes, (b) => {
    const pb = PbValidatorSet.decode(b);
    return { validators: pb.validators.map(validatorFromProto), proposerAddress: pb.proposer?.address };
  });
}

// ---- header, commit, block -------------------------------------------------------------------

export function headerToProto(h: Header): PbHeader {
  return {
    version: { block: h.version.block, app: h.version.app },
    chainId: h.chainId,
    height: BigInt(h.height),
    time: timestampToProto(h.time),
    lastBlockId: blockIdToProto(h.lastBlockId),
    lastCommitHash: h.lastCommitHash,
    dataHash: h.dataHash,
    validatorsHash: h.validatorsHash,
    nextValidatorsHash: h.nextValidatorsHash,
    consensusHash: h.consensusHash,
    appHash: h.appHash,
    lastResultsHash: h.lastResultsHash,
    evidenceHash: h.evidenceHash,
    proposerAddress: h.proposerAddress,
  };
}

export function headerFromProto(pb: PbHeader): Header {
  return {
    version: { block: pb.version.block, app: pb.version.app },
    chainId: pb.chainId,
    height: toNumber(pb.height, "header height"),
    time: timestampFromProto(pb.time),
    lastBlockId: blockIdFromProto(pb.lastBlockId),
    lastCommitHash: pb.lastCommitHash,
    dataHash: pb.dataHash,
    validatorsHash: pb.validatorsHash,
    nextValidatorsHash: pb.nextValidatorsHash,
    consensusHash: pb.consensusHash,
    appHash: pb.appHash,
    lastResultsHash: pb.lastResultsHash,
    evidenceHash: pb.evidenceHash,
    proposerAddress: pb.proposerAddress,
  };
}

export function encodeHeader(h: Header): Uint8Array {
  return finish(PbHeader.encode(headerToProto(h)));
}

export function decodeHeader(bytes: Uint8Array): Header {
  return decodeWith("Header", bytes, (b) => headerFromProto(PbHeader.decode(b)));
}

export function commitSigToProto(s: CommitSig): PbCommitSig {
  return {
    blockIdFlag: s.blockIdFlag,
    validatorAddress: s.validatorAddress,
    timestamp: timestampToProto(s.timestamp),
    signature: s.signature,
  };
}

export function commitSigFromProto(pb: PbCommitSig): CommitSig {
  return {
    // Unknown flags survive decoding so validateCommitBasic can name them.
    blockIdFlag: pb.blockIdFlag as number as BlockIdFlag,
    validatorAddress: pb.validatorAddress,
    timestamp: timestampFromProto(pb.timestamp),
    signature: pb.signature,
  };
}

/** CommitSig proto bytes: the leaf of last_commit_hash. */
export function encodeCommitSig(s: CommitSig): Uint8Array {
  return finish(PbCommitSig.encode(commitSigToProto(s)));
}

export function commitToProto(c: Commit): PbCommit {
  return {
    height: BigInt(c.height),
    round: c.round,
    blockId: blockIdToProto(c.blockId),
    signatures: c.signatures.map(commitSigToProto),
  };
}

export function commitFromProto(pb: PbCommit): Commit {
  return {
    height: toNumber(pb.height, "commit height"),
    round: pb.round,
    blockId: blockIdFromProto(pb.blockId),
    signatures: pb.signatures.map(commitSigFromProto),
  };
}

export function encodeCommit(c: Commit): Uint8Array {
  return finish(PbCommit.encode(commitToProto(c)));
}

export function decodeCommit(bytes: Uint8Array): Commit {
  return decodeWith("Commit", bytes, (b) => commitFromProto(PbCommit.decode(b)));
}

// ---- votes, proposals, evidence ----------------------------------------------------------------

export function voteToProto(v: Vote): PbVote {
  return {
    type: v.type,
    height: BigInt(v.height),
    round: v.round,
    blockId: blockIdToProto(v.blockId),
    timestamp: timestampToProto(v.timestamp),
    validatorAddress: v.validatorAddress,
    validatorIndex: v.validatorIndex,
    signature: v.signature,
    extension: v.extension,
    extensionSignature: v.extensionSignature,
  };
}

export function voteFromProto(pb: PbVote): Vote {
  return {
    // Other type values survive decoding; validateVoteBasic rejects them.
    type: pb.type as number as VoteType,
    height: toNumber(pb.height, "vote height"),
    round: pb.round,
    blockId: blockIdFromProto(pb.blockId),
    timestamp: timestampFromProto(pb.timestamp),
    validatorAddress: pb.validatorAddress,
    validatorIndex: pb.validatorIndex,
    signature: pb.signature,
    extension: pb.extension,
    extensionSignature: pb.extensionSignature,
  };
}

/** tendermint.types.Vote bytes (the consensus reactor's and privval's wire form). */
export function encodeVote(v: Vote): Uint8Array {
  return finish(PbVote.encode(voteToProto(v)));
}

export function decodeVote(bytes: Uint8Array): Vote {
  return decodeWith("Vote", bytes, (b) => voteFromProto(PbVote.decode(b)));
}

export function proposalToProto(p: Proposal): PbProposal {
  return {
    type: p.type,
    height: BigInt(p.height),
    round: p.round,
    polRound: p.polRound,
    blockId: blockIdToProto(p.blockId),
    timestamp: timestampToProto(p.timestamp),
    signature: p.signature,
  };
}

export function proposalFromProto(pb: PbProposal): Proposal {
  return {
    // Other type values survive decoding; validateProposalBasic rejects them.
    type: pb.type as number as 32,
    height: toNumber(pb.height, "proposal height"),
    round: pb.round,
    polRound: pb.polRound,
    blockId: blockIdFromProto(pb.blockId),
    timestamp: timestampFromProto(pb.timestamp),
    signature: pb.signature,
  };
}

export function encodeProposal(p: Proposal): Uint8Array {
  return finish(PbProposal.encode(proposalToProto(p)));
}

export function decodeProposal(bytes: Uint8Array): Proposal {
  return decodeWith("Proposal", bytes, (b) => proposalFromProto(PbProposal.decode(b)));
}

function duplicateVoteEvidenceToProto(e: DuplicateVoteEvidence): PbDuplicateVoteEvidence {
  return {
    voteA: voteToProto(e.voteA),
    voteB: voteToProto(e.voteB),
    totalVotingPower: e.totalVotingPower,
    validatorPower: e.validatorPower,
    timestamp: timestampToProto(e.timestamp),
  };
}

function duplicateVoteEvidenceFromProto(pb: PbDuplicateVoteEvidence): DuplicateVoteEvidence {
  if (!pb.voteA || !pb.voteB) throw new ProtoDecodeError("duplicate vote evidence is missing a vote");
  return {
    type: "duplicateVote",
    voteA: voteFromProto(pb.voteA),
    voteB: voteFromProto(pb.voteB),
    totalVotingPower: pb.totalVotingPower,
    validatorPower: pb.validatorPower,
    timestamp: timestampFromProto(pb.timestamp),
  };
}

export function evidenceToProto(e: Evidence): PbEvidence {
  return { duplicateVoteEvidence: duplicateVoteEvidenceToProto(e) };
}

export function evidenceFromProto(pb: PbEvidence): Evidence {
  if (pb.duplicateVoteEvidence) return duplicateVoteEvidenceFromProto(pb.duplicateVoteEvidence);
  if (pb.lightClientAttackEvidence) throw new ProtoDecodeError("light client attack evidence is not supported");
  throw new ProtoDecodeError("evidence has no known type");
}

/**
 * The evidence's own proto bytes (DuplicateVoteEvidence, not the Evidence oneof): what
 * Evidence.Bytes() returns, the leaf of evidence_hash and the input of the evidence hash.
 */
export function encodeEvidenceBytes(e: Evidence): Uint8Array {
  return finish(PbDuplicateVoteEvidence.encode(duplicateVoteEvidenceToProto(e)));
}

/** tendermint.types.Evidence (the oneof wrapper), as gossiped and stored. */
export function encodeEvidence(e: Evidence): Uint8Array {
  return finish(PbEvidence.encode(evidenceToProto(e)));
}

export function decodeEvidence(bytes: Uint8Array): Evidence {
  return decodeWith("Evidence", bytes, (b) => evidenceFromProto(PbEvidence.decode(b)));
}

// ---- block ------------------------------------------------------------------------------------

export function blockToProto(b: Block): PbBlock {
  return {
    header: headerToProto(b.header),
    data: { txs: b.data.txs },
    evidence: { evidence: b.evidence.map(evidenceToProto) },
    lastCommit: commitToProto(b.lastCommit),
  };
}

export function blockFromProto(pb: PbBlock): Block {
  return {
    header: headerFromProto(pb.header),
    data: { txs: pb.data.txs },
    evidence: pb.evidence.evidence.map(evidenceFromProto),
    // Go's Block.LastCommit is nullable; cometh always carries one (the empty commit at genesis).
    lastCommit: pb.lastCommit
      ? commitFromProto(pb.lastCommit)
      : { height: 0, round: 0, blockId: zeroBlockId(), signatures: [] },
  };
}

/** tendermint.types.Block bytes: what the part set splits and the block store keeps. */
export function encodeBlock(b: Block): Uint8Array {
  return finish(PbBlock.encode(blockToProto(b)));
}

export function decodeBlock(bytes: Uint8Array): Block {
  return decodeWith("Block", bytes, (b) => blockFromProto(PbBlock.decode(b)));
}

// ---- parts ------------------------------------------------------------------------------------

export function partToProto(p: Part): PbPart {
  return {
    index: p.index,
    bytes: p.bytes,
    proof: {
      total: BigInt(p.proof.total),
      index: BigInt(p.proof.index),
      leafHash: p.proof.leafHash,
      aunts: p.proof.aunts,
    },
  };
}

export function partFromProto(pb: PbPart): Part {
  return {
    index: pb.index,
    bytes: pb.bytes,
    proof: {
      total: toNumber(pb.proof.total, "proof total"),
      index: toNumber(pb.proof.index, "proof index"),
      leafHash: pb.proof.leafHash,
      aunts: pb.proof.aunts,
    },
  };
}

export function encodePart(p: Part): Uint8Array {
  return finish(PbPart.encode(partToProto(p)));
}

export function decodePart(bytes: Uint8Array): Part {
  return decodeWith("Part", bytes, (b) => partFromProto(PbPart.decode(b)));
}

// ---- params and results -----------------------------------------------------------------------

const NS_PER_SEC = 1_000_000_000n;

export function consensusParamsToProto(p: ConsensusParams): PbConsensusParams {
  return {
    block: { maxBytes: p.block.maxBytes, maxGas: p.block.maxGas },
    evidence: {
      maxAgeNumBlocks: p.evidence.maxAgeNumBlocks,
      maxAgeDuration: {
        seconds: p.evidence.maxAgeDurationNs / NS_PER_SEC,
        nanos: Number(p.evidence.maxAgeDurationNs % NS_PER_SEC),
      },
      maxBytes: p.evidence.maxBytes,
    },
    validator: { pubKeyTypes: [...p.validator.pubKeyTypes] },
    version: { app: p.version.app },
    abci: { voteExtensionsEnableHeight: p.abci.voteExtensionsEnableHeight },
  };
}

/** Missing sections decode as zero values, as Go's ConsensusParamsFromProto would see them. */
export function consensusParamsFromProto(pb: PbConsensusParams): ConsensusParams {
  const d = pb.evidence?.maxAgeDuration;
  return {
    block: { maxBytes: pb.block?.maxBytes ?? 0n, maxGas: pb.block?.maxGas ?? 0n },
    evidence: {
      maxAgeNumBlocks: pb.evidence?.maxAgeNumBlocks ?? 0n,
      maxAgeDurationNs: d ? d.seconds * NS_PER_SEC + BigInt(d.nanos) : 0n,
      maxBytes: pb.evidence?.maxBytes ?? 0n,
    },
    validator: { pubKeyTypes: pb.validator?.pubKeyTypes ?? [] },
    version: { app: pb.version?.app ?? 0n },
    abci: { voteExtensionsEnableHeight: pb.abci?.voteExtensionsEnableHeight ?? 0n },
  };
}

export function encodeConsensusParams(p: ConsensusParams): Uint8Array {
  return finish(PbConsensusParams.encode(consensusParamsToProto(p)));
}

export function decodeConsensusParams(bytes: Uint8Array): ConsensusParams {
  return decodeWith("ConsensusParams", bytes, (b) => consensusParamsFromProto(PbConsensusParams.decode(b)));
}

/** HashedParams{block_max_bytes, block_max_gas}: the only params that enter consensus_hash. */
export function encodeHashedParams(p: ConsensusParams): Uint8Array {
  return finish(PbHashedParams.encode({ blockMaxBytes: p.block.maxBytes, blockMaxGas: p.block.maxGas }));
}

/** ExecTxResult with only the deterministic fields (code, data, gas_wanted, gas_used): a last_results_hash leaf. */
export function encodeDeterministicExecTxResult(r: ExecTxResult): Uint8Array {
  return finish(
    PbExecTxResult.encode({
      code: r.code,
      data: r.data,
      log: "",
      info: "",
      gasWanted: r.gasWanted,
      gasUsed: r.gasUsed,
      events: [],
      codespace: "",
    }),
  );
}
