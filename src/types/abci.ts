import type { Timestamp } from "../util/time.js";
import type { Block } from "./blockTypes.js";
import type { Evidence } from "./evidenceTypes.js";
import type { PubKey } from "./keys.js";
import type { ConsensusParams } from "./paramsTypes.js";

/** ABCI 2.0 shaped values, in domain form (no wire encodings). */
export interface EventAttribute {
  key: string;
  value: string;
  index: boolean;
}

export interface AbciEvent {
  type: string;
  attributes: EventAttribute[];
}

export interface ExecTxResult {
  code: number;
  data: Uint8Array;
  log: string;
  info: string;
  gasWanted: bigint;
  gasUsed: bigint;
  events: AbciEvent[];
  codespace: string;
}

export interface ValidatorUpdate {
  pubKey: PubKey;
  power: bigint;
}

export interface CheckTxResponse {
  code: number;
  data: Uint8Array;
  log: string;
  info: string;
  gasWanted: bigint;
  gasUsed: bigint;
  events: AbciEvent[];
  codespace: string;
  /** App-assigned priority/sender info is not part of v0.38's response; mempool orders FIFO. */
}

export interface InfoResponse {
  data: string;
  version: string;
  appVersion: bigint;
  lastBlockHeight: number;
  lastBlockAppHash: Uint8Array;
}

export interface InitChainRequest {
  time: Timestamp;
  chainId: string;
  consensusParams: ConsensusParams;
  validators: ValidatorUpdate[];
  appStateBytes: Uint8Array;
  initialHeight: number;
}

export interface InitChainResponse {
  consensusParams?: ConsensusParams;
  validators: ValidatorUpdate[];
  appHash: Uint8Array;
}

export const CHECK_TX_TYPE = { new: 0, recheck: 1 } as const;
export type CheckTxType = (typeof CHECK_TX_TYPE)[keyof typeof CHECK_TX_TYPE];

export interface CheckTxRequest {
  tx: Uint8Array;
  type: CheckTxType;
}

export interface MisbehaviorInfo {
  type: "duplicateVote" | "lightClientAttack";
  validatorAddress: Uint8Array;
  validatorPower: bigint;
  height: number;
  time: Timestamp;
  totalVotingPower: bigint;
}

export interface CommitInfoVote {
  validatorAddress: Uint8Array;
  power: bigint;
  blockIdFlag: 1 | 2 | 3;
}

export interface CommitInfo {
  round: number;
  votes: CommitInfoVote[];
}

export interface PrepareProposalRequest {
  maxTxBytes: number;
  txs: Uint8Array[];
  localLastCommit: CommitInfo;
  misbehavior: MisbehaviorInfo[];
  height: number;
  time: Timestamp;
  nextValidatorsHash: Uint8Array;
  proposerAddress: Uint8Array;
}

export interface ProcessProposalRequest {
  txs: Uint8Array[];
  proposedLastCommit: CommitInfo;
  misbehavior: MisbehaviorInfo[];
  hash: Uint8Array;
  height: number;
  time: Timestamp;
  nextValidatorsHash: Uint8Array;
  proposerAddress: Uint8Array;
}

export interface FinalizeBlockRequest {
  txs: Uint8Array[];
  decidedLastCommit: CommitInfo;
  misbehavior: MisbehaviorInfo[];
  hash: Uint8Array;
  height: number;
  time: Timestamp;
  nextValidatorsHash: Uint8Array;
  proposerAddress: Uint8Array;
  /** The whole block, for in-process apps that want it (the EVM app derives Ethereum blocks). */
  block: Block;
}

export interface FinalizeBlockResponse {
  events: AbciEvent[];
  txResults: ExecTxResult[];
  validatorUpdates: ValidatorUpdate[];
  consensusParamUpdates?: ConsensusParams;
  appHash: Uint8Array;
  /**
   * How no validator updates read in the `NewBlock` event. CometBFT marshals the app's own value
   * there, so an app that answers an empty list (v0.38's kvstore) shows `[]`, and one that answers nil
   * (an app over a socket, decoded from protobuf; Cosmos SDK apps) shows `null`, the default. Never
   * stored: `block_results` reads the stored protobuf, which has `null` either way.
   */
  validatorUpdatesEmptyList?: boolean;
}

export interface CommitResponse {
  retainHeight: number;
}

export interface QueryRequest {
  data: Uint8Array;
  path: string;
  height: number;
  prove: boolean;
}

export interface ProofOp {
  type: string;
  key: Uint8Array;
  data: Uint8Array;
}

export interface QueryResponse {
  code: number;
  log: string;
  info: string;
  index: bigint;
  key: Uint8Array;
  value: Uint8Array;
  proofOps: ProofOp[] | undefined;
  height: number;
  codespace: string;
}

/** abci.Snapshot: one snapshot an app offers (state sync, docs/state-sync.md). */
export interface Snapshot {
  height: number;
  /** The app's own format number; a node only restores formats the app accepts. */
  format: number;
  chunks: number;
  /** Identifies the snapshot; compared byte for byte between peers. */
  hash: Uint8Array;
  /** App-defined (ours: the chunk hash list, docs/state-sync.md). */
  metadata: Uint8Array;
}

/** ResponseOfferSnapshot.Result, by name. */
export type OfferSnapshotResult = "accept" | "abort" | "reject" | "rejectFormat" | "rejectSender";

export interface OfferSnapshotRequest {
  snapshot: Snapshot;
  /** The light-client-verified app hash at the snapshot height. */
  appHash: Uint8Array;
}

export interface LoadSnapshotChunkRequest {
  height: number;
  format: number;
  chunk: number;
}

export interface ApplySnapshotChunkRequest {
  index: number;
  chunk: Uint8Array;
  /** The p2p ID of the peer that sent the chunk. */
  sender: string;
}

/** ResponseApplySnapshotChunk.Result, by name. */
export type ApplySnapshotChunkResult = "accept" | "abort" | "retry" | "retrySnapshot" | "rejectSnapshot";

export interface ApplySnapshotChunkResponse {
  result: ApplySnapshotChunkResult;
  /** Chunks to fetch again (e.g. the one just refused). */
  refetchChunks: number[];
  /** Peers whose chunks must not be used again. */
  rejectSenders: string[];
}

export type { Evidence };
