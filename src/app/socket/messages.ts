import type {
  CommitInfo as PbCommitInfo,
  Event as PbEvent,
  ExecTxResult as PbExecTxResult,
  ExtendedCommitInfo as PbExtendedCommitInfo,
  Misbehavior as PbMisbehavior,
  RequestFinalizeBlock as PbRequestFinalizeBlock,
  RequestInitChain as PbRequestInitChain,
  RequestPrepareProposal as PbRequestPrepareProposal,
  RequestProcessProposal as PbRequestProcessProposal,
  ResponseCheckTx as PbResponseCheckTx,
  ResponseFinalizeBlock as PbResponseFinalizeBlock,
  ResponseInfo as PbResponseInfo,
  ResponseInitChain as PbResponseInitChain,
  ResponseQuery as PbResponseQuery,
  Snapshot as PbSnapshot,
  ValidatorUpdate as PbValidatorUpdate,
} from "cosmjs-types/tendermint/abci/types";
import type { ConsensusParams as PbConsensusParams } from "cosmjs-types/tendermint/types/params";
import {
  type AbciEvent,
  type ApplySnapshotChunkResponse,
  type CheckTxResponse,
  type CommitInfo,
  type ConsensusParams,
  type ConsensusParamsUpdate,
  consensusParamsToProto,
  type ExecTxResult,
  type FinalizeBlockRequest,
  type FinalizeBlockResponse,
  type InfoResponse,
  type InitChainRequest,
  type InitChainResponse,
  type MisbehaviorInfo,
  type OfferSnapshotResult,
  type PrepareProposalRequest,
  type ProcessProposalRequest,
  pubKeyFromProto,
  pubKeyToProto,
  type QueryResponse,
  type Snapshot,
  timestampToProto,
  updateConsensusParams,
  type ValidatorUpdate,
} from "../../types/index.js";
import { AbciResponseError } from "./errors.js";

/**
 * cometh's ABCI values (types/abci.ts) ⇄ CometBFT v0.38's `tendermint.abci` protobuf messages
 * (cosmjs-types' generated code, whose field numbers are v0.38's). Vote extensions are not part of
 * cometh's Application, so the extended commit info carries none.
 */

const NS_PER_SEC = 1_000_000_000n;

/** An int64 on the wire as a JS number (heights): refused when it does not fit exactly. */
function heightFromProto(v: bigint, what: string): number {
  if (v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new AbciResponseError(`${what} ${v} is out of range (0 to ${Number.MAX_SAFE_INTEGER})`);
  }
  return Number(v);
}

function misbehaviorToProto(m: MisbehaviorInfo): PbMisbehavior {
  return {
    type: m.type === "duplicateVote" ? 1 : 2,
    validator: { address: m.validatorAddress, power: m.validatorPower },
    height: BigInt(m.height),
    time: timestampToProto(m.time),
    totalVotingPower: m.totalVotingPower,
  };
}

function commitInfoToProto(c: CommitInfo): PbCommitInfo {
  return {
    round: c.round,
    votes: c.votes.map((v) => ({
      validator: { address: v.validatorAddress, power: v.power },
      blockIdFlag: v.blockIdFlag,
    })),
  };
}

function extendedCommitInfoToProto(c: CommitInfo): PbExtendedCommitInfo {
  return {
    round: c.round,
    votes: c.votes.map((v) => ({
      validator: { address: v.validatorAddress, power: v.power },
      voteExtension: new Uint8Array(0),
      extensionSignature: new Uint8Array(0),
      blockIdFlag: v.blockIdFlag,
    })),
  };
}

function validatorUpdateToProto(u: ValidatorUpdate): PbValidatorUpdate {
  return { pubKey: pubKeyToProto(u.pubKey), power: u.power };
}

function validatorUpdateFromProto(pb: PbValidatorUpdate, i: number): ValidatorUpdate {
  if (pb.pubKey === undefined) throw new AbciResponseError(`validator update ${i} has no public key`);
  return { pubKey: pubKeyFromProto(pb.pubKey), power: pb.power };
}

function eventsFromProto(events: readonly PbEvent[]): AbciEvent[] {
  return events.map((e) => ({
    type: e.type,
    attributes: e.attributes.map((a) => ({ key: a.key, value: a.value, index: a.index })),
  }));
}

function execTxResultFromProto(r: PbExecTxResult): ExecTxResult {
  return {
    code: r.code,
    data: r.data,
    log: r.log,
    info: r.info,
    gasWanted: r.gasWanted,
    gasUsed: r.gasUsed,
    events: eventsFromProto(r.events),
    codespace: r.codespace,
  };
}

/**
 * The sections an app's ConsensusParams message sets (types.ConsensusParams.Update applies only
 * those): an absent section is no change, unlike consensusParamsFromProto, which reads it as zeros.
 */
export function consensusParamsUpdateFromProto(pb: PbConsensusParams): ConsensusParamsUpdate {
  const u: ConsensusParamsUpdate = {};
  if (pb.block !== undefined) u.block = { maxBytes: pb.block.maxBytes, maxGas: pb.block.maxGas };
  if (pb.evidence !== undefined) {
    const d = pb.evidence.maxAgeDuration;
    u.evidence = {
      maxAgeNumBlocks: pb.evidence.maxAgeNumBlocks,
      maxAgeDurationNs: d === undefined ? 0n : d.seconds * NS_PER_SEC + BigInt(d.nanos),
      maxBytes: pb.evidence.maxBytes,
    };
  }
  if (pb.validator !== undefined) u.validator = { pubKeyTypes: [...pb.validator.pubKeyTypes] };
  if (pb.version !== undefined) u.version = { app: pb.version.app };
  if (pb.abci !== undefined) u.abci = { voteExtensionsEnableHeight: pb.abci.voteExtensionsEnableHeight };
  return u;
}

// ---- requests ----------------------------------------------------------------------------------

export function initChainRequestToProto(r: InitChainRequest): PbRequestInitChain {
  return {
    time: timestampToProto(r.time),
    chainId: r.chainId,
    consensusParams: consensusParamsToProto(r.consensusParams),
    validators: r.validators.map(validatorUpdateToProto),
    appStateBytes: r.appStateBytes,
    initialHeight: BigInt(r.initialHeight),
  };
}

export function prepareProposalRequestToProto(r: PrepareProposalRequest): PbRequestPrepareProposal {
  return {
    maxTxBytes: BigInt(r.maxTxBytes),
    txs: r.txs,
    localLastCommit: extendedCommitInfoToProto(r.localLastCommit),
    misbehavior: r.misbehavior.map(misbehaviorToProto),
    height: BigInt(r.height),
    time: timestampToProto(r.time),
    nextValidatorsHash: r.nextValidatorsHash,
    proposerAddress: r.proposerAddress,
  };
}

export function processProposalRequestToProto(r: ProcessProposalRequest): PbRequestProcessProposal {
  return {
    txs: r.txs,
    proposedLastCommit: commitInfoToProto(r.proposedLastCommit),
    misbehavior: r.misbehavior.map(misbehaviorToProto),
    hash: r.hash,
    height: BigInt(r.height),
    time: timestampToProto(r.time),
    nextValidatorsHash: r.nextValidatorsHash,
    proposerAddress: r.proposerAddress,
  };
}

export function finalizeBlockRequestToProto(r: FinalizeBlockRequest): PbRequestFinalizeBlock {
  return {
    txs: r.txs,
    decidedLastCommit: commitInfoToProto(r.decidedLastCommit),
    misbehavior: r.misbehavior.map(misbehaviorToProto),
    hash: r.hash,
    height: BigInt(r.height),
    time: timestampToProto(r.time),
    nextValidatorsHash: r.nextValidatorsHash,
    proposerAddress: r.proposerAddress,
  };
}

// ---- responses ---------------------------------------------------------------------------------

export function infoResponseFromProto(pb: PbResponseInfo): InfoResponse {
  return {
    data: pb.data,
    version: pb.version,
    appVersion: pb.appVersion,
    lastBlockHeight: heightFromProto(pb.lastBlockHeight, "Info last_block_height"),
    lastBlockAppHash: pb.lastBlockAppHash,
  };
}

/**
 * The app's params apply over the genesis params the request carried, as the handshake's
 * ConsensusParams.Update would: absent sections keep the genesis values.
 */
export function initChainResponseFromProto(pb: PbResponseInitChain, req: InitChainRequest): InitChainResponse {
  const res: InitChainResponse = {
    validators: pb.validators.map(validatorUpdateFromProto),
    appHash: pb.appHash,
  };
  if (pb.consensusParams !== undefined) {
    res.consensusParams = updateConsensusParams(
      req.consensusParams,
      consensusParamsUpdateFromProto(pb.consensusParams),
    );
  }
  return res;
}

/** ResponseCheckTx has ExecTxResult's fields in v0.38. */
export function checkTxResponseFromProto(pb: PbResponseCheckTx): CheckTxResponse {
  return execTxResultFromProto(pb);
}

/**
 * `current` is the params in force at the block: a partial update from the app is completed with
 * them, so the stored response says what the params become (see docs/compatibility.md).
 */
export function finalizeBlockResponseFromProto(
  pb: PbResponseFinalizeBlock,
  current: () => ConsensusParams,
): FinalizeBlockResponse {
  const res: FinalizeBlockResponse = {
    events: eventsFromProto(pb.events),
    txResults: pb.txResults.map(execTxResultFromProto),
    validatorUpdates: pb.validatorUpdates.map(validatorUpdateFromProto),
    appHash: pb.appHash,
  };
  if (pb.consensusParamUpdates !== undefined) {
    res.consensusParamUpdates = updateConsensusParams(
      current(),
      consensusParamsUpdateFromProto(pb.consensusParamUpdates),
    );
  }
  return res;
}

export function queryResponseFromProto(pb: PbResponseQuery): QueryResponse {
  return {
    code: pb.code,
    log: pb.log,
    info: pb.info,
    index: pb.index,
    key: pb.key,
    value: pb.value,
    proofOps: pb.proofOps?.ops.map((op) => ({ type: op.type, key: op.key, data: op.data })),
    height: heightFromProto(pb.height, "Query height"),
    codespace: pb.codespace,
  };
}

/** ResponseProcessProposal.status: ACCEPT or REJECT; UNKNOWN is an app bug (CometBFT panics on it). */
export function processProposalStatusFromProto(status: number): "accept" | "reject" {
  if (status === 1) return "accept";
  if (status === 2) return "reject";
  throw new AbciResponseError(
    `ProcessProposal answered status ${status} (UNKNOWN): an application must ACCEPT or REJECT`,
  );
}

// ---- state sync (snapshot connection) --------------------------------------------------------------

/** ResponseOfferSnapshot.Result values in enum order (UNKNOWN = 0 and anything else abort, as CometBFT). */
const OFFER_RESULTS: readonly OfferSnapshotResult[] = [
  "abort",
  "accept",
  "abort",
  "reject",
  "rejectFormat",
  "rejectSender",
];
/** ResponseApplySnapshotChunk.Result values in enum order. */
const APPLY_RESULTS: readonly ApplySnapshotChunkResponse["result"][] = [
  "abort",
  "accept",
  "abort",
  "retry",
  "retrySnapshot",
  "rejectSnapshot",
];

export function snapshotFromProto(pb: PbSnapshot): Snapshot {
  if (pb.height > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new AbciResponseError(`snapshot height ${pb.height} is out of range (0 to ${Number.MAX_SAFE_INTEGER})`);
  }
  return { height: Number(pb.height), format: pb.format, chunks: pb.chunks, hash: pb.hash, metadata: pb.metadata };
}

export function snapshotToProto(s: Snapshot): PbSnapshot {
  return { height: BigInt(s.height), format: s.format, chunks: s.chunks, hash: s.hash, metadata: s.metadata };
}

export function offerSnapshotResultFromProto(result: number): OfferSnapshotResult {
  return OFFER_RESULTS[result] ?? "abort";
}

export function applySnapshotChunkResultFromProto(result: number): ApplySnapshotChunkResponse["result"] {
  return APPLY_RESULTS[result] ?? "abort";
}
