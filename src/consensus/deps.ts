import type {
  AbciEvent,
  Block,
  BlockId,
  BlockMeta,
  ChainState,
  Commit,
  CommitResponse,
  Evidence,
  ExecTxResult,
  FinalizeBlockRequest,
  FinalizeBlockResponse,
  GenesisDoc,
  Header,
  InfoResponse,
  InitChainRequest,
  InitChainResponse,
  Part,
  PartSet,
  PrepareProposalRequest,
  ProcessProposalRequest,
  Proposal,
  PubKey,
  Validator,
  ValidatorSet,
  Vote,
} from "../types/index.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { Timestamp } from "../util/time.js";
import type { ConsensusMessage } from "./messages.js";
import type { ConsensusMetricsHooks } from "./metricsHooks.js";

/**
 * What consensus needs from its neighbours (app, mempool, store, p2p, events), declared structurally
 * so that consensus/ code imports none of them (its tests do). node/ passes the real objects; tests
 * pass fakes.
 */

/** The application's consensus connection (app/ Application satisfies it). */
export interface ConsensusApp {
  info(): Promise<InfoResponse>;
  initChain(req: InitChainRequest): Promise<InitChainResponse>;
  prepareProposal(req: PrepareProposalRequest): Promise<{ txs: Uint8Array[] }>;
  processProposal(req: ProcessProposalRequest): Promise<"accept" | "reject">;
  finalizeBlock(req: FinalizeBlockRequest): Promise<FinalizeBlockResponse>;
  commit(): Promise<CommitResponse>;
}

/** store/ BlockStore. */
export interface BlockStoreAccess {
  base(): number;
  height(): number;
  /** Durable when the promise resolves. */
  saveBlock(block: Block, parts: PartSet, seenCommit: Commit): Promise<void>;
  loadBlock(height: number): Block | undefined;
  loadBlockMeta(height: number): BlockMeta | undefined;
  loadBlockPart?(height: number, index: number): Part | undefined;
  /** The commit for `height` from block height+1's LastCommit. */
  loadBlockCommit(height: number): Commit | undefined;
  /** The commit this node saw for `height`. */
  loadSeenCommit(height: number): Commit | undefined;
  /**
   * Removes blocks below `retainHeight`; headers and commits stay from the first height where
   * `keepHeader` holds (evidence from it could still be submitted).
   */
  pruneBlocks?(
    retainHeight: number,
    keepHeader?: (height: number, time: Timestamp) => boolean,
  ): number | Promise<number>;
  /** Lowest height whose header and canonical commit are kept (≤ base). */
  headerBase?(): number;
}

/** store/ StateStore. */
export interface StateStoreAccess {
  load(): ChainState | undefined;
  /** Durable when the promise resolves; also records validators/params by height. */
  save(state: ChainState): Promise<void>;
  loadValidators(height: number): ValidatorSet | undefined;
  saveFinalizeBlockResponse(height: number, resp: FinalizeBlockResponse): Promise<void>;
  loadFinalizeBlockResponse(height: number): FinalizeBlockResponse | undefined;
  /** Drops per-height records below `retainHeight`, keeping validator sets from `evidenceHeight` on. */
  pruneStates?(retainHeight: number, evidenceHeight: number): Promise<void>;
}

/** mempool/ Mempool, the parts consensus uses. */
export interface MempoolAccess {
  reapMaxBytesMaxGas(maxBytes: number, maxGas: bigint): Uint8Array[];
  /** Held across app commit and update; resolves with the release function. */
  lock(): Promise<() => void>;
  update(height: number, txs: Uint8Array[], results: ExecTxResult[]): Promise<void>;
  /** Fires once per height when the first tx arrives after update; returns the unsubscribe function. */
  onTxsAvailable(cb: () => void): () => void;
  /** Fires for every admitted tx (dev chains' automine listens); returns the unsubscribe function. */
  onTxAdded?(cb: (tx: Uint8Array) => void): () => void;
  size(): number;
}

/** Payloads of the events consensus publishes (events/ EventMap, same names). */
export interface ConsensusEventMap {
  NewBlock: { block: Block; blockId: BlockId; resultFinalizeBlock: FinalizeBlockResponse };
  NewBlockHeader: { header: Header };
  NewBlockEvents: { height: number; events: AbciEvent[]; numTxs: number };
  Tx: { height: number; index: number; tx: Uint8Array; result: ExecTxResult };
  ValidatorSetUpdates: { validatorUpdates: Validator[] };
  NewEvidence: { height: number; evidence: Evidence };
  NewRound: { height: number; round: number; step: string; proposer: { address: Uint8Array; index: number } };
  CompleteProposal: { height: number; round: number; step: string; blockId: BlockId };
  NewRoundStep: RoundStateEvent;
  Polka: RoundStateEvent;
  Lock: RoundStateEvent;
  Unlock: RoundStateEvent;
  Relock: RoundStateEvent;
  TimeoutPropose: RoundStateEvent;
  TimeoutWait: RoundStateEvent;
  ValidBlock: RoundStateEvent;
  Vote: { vote: Vote };
}

/** EventDataRoundState: `step` is the RoundStep name, e.g. "RoundStepPropose". */
export interface RoundStateEvent {
  height: number;
  round: number;
  step: string;
}

/** events/ EventBus, publisher side. */
export interface EventPublisher {
  publish<K extends keyof ConsensusEventMap>(type: K, data: ConsensusEventMap[K]): void;
}

/** The validator's signer (privval/ FilePV satisfies it). Refuses to double sign. */
export interface Signer {
  pubKey(): PubKey;
  address(): Uint8Array;
  /**
   * The vote with its signature (the timestamp may be reset to a previously signed one).
   * `signExtension` false: no extension signature is wanted (CometBFT v1's flag; a signer without
   * it signs one anyway, and consensus drops it).
   */
  signVote(chainId: string, vote: Vote, signExtension?: boolean): Promise<Vote>;
  signProposal(chainId: string, proposal: Proposal): Promise<Proposal>;
}

/** Outgoing consensus messages (p2p later; in memory for now). A lone node passes a no-op. */
export interface Gossip {
  broadcast(msg: ConsensusMessage): void;
  /** Sends to one peer (catch-up answers); without it they are broadcast. */
  sendTo?(peerId: string, msg: ConsensusMessage): void;
}

/** Where conflicting votes go (an evidence pool later); without one they are logged. */
export interface EvidenceReporter {
  reportConflictingVotes(voteA: Vote, voteB: Vote): void;
}

/**
 * The evidence pool as the block executor uses it (evidence/ EvidencePool satisfies it): evidence
 * for proposals, checks of incoming blocks' evidence, and the update after each commit.
 */
export interface EvidencePoolAccess {
  /** Pending evidence, oldest first, whose EvidenceList proto fits in `maxBytes` (-1: no cap); `bytes` is its size. */
  pendingEvidence(maxBytes: number): { evidence: Evidence[]; bytes: number };
  /** CheckEvidence: throws when a piece does not verify against `state`, is committed already or appears twice. */
  checkEvidence(list: readonly Evidence[], state: ChainState): void;
  /** After the block at state.lastBlockHeight is committed, with the evidence it carried. */
  update(state: ChainState, committed: readonly Evidence[]): Promise<void>;
}

/** Named points where tests can simulate a crash (the hook throws; consensus halts there). */
export type FailPoint =
  | "afterOwnMessageWal"
  | "beforeSaveBlock"
  | "afterSaveBlock"
  | "afterEndHeight"
  | "afterFinalizeBlock"
  | "afterSaveFinalizeResponse"
  | "afterAppCommit"
  | "afterStateSave";

/** Context of a fail point: the height, and for own messages the message just written to the WAL. */
export interface FailPointDetail {
  height: number;
  msg?: { kind: "proposal" | "blockPart" | "vote"; voteType?: number; round: number };
}

export type FailPointHook = (point: FailPoint, detail?: FailPointDetail) => void;

export interface ConsensusDeps {
  app: ConsensusApp;
  blockStore: BlockStoreAccess;
  stateStore: StateStoreAccess;
  mempool: MempoolAccess;
  events: EventPublisher;
  /** Genesis, for the initial state and InitChain. */
  genesis: GenesisDoc;
  /** Absent for a non-validator node. */
  signer?: Signer;
  clock: Clock;
  log: Logger;
  gossip?: Gossip;
  evidence?: EvidenceReporter;
  /** Checks blocks' evidence and supplies it to proposals; without it blocks carrying evidence are refused. */
  evidencePool?: EvidencePoolAccess;
  /** Test hook: called at each FailPoint; throwing simulates a crash there. */
  failPoint?: FailPointHook;
  /** CometBFT's consensus metrics (`[instrumentation] prometheus`); absent: nothing is recorded. */
  metrics?: ConsensusMetricsHooks;
}
