import type {
  CheckTxRequest,
  CheckTxResponse,
  ExecTxResult,
  FinalizeBlockResponse,
  InfoResponse,
  QueryRequest,
  QueryResponse,
} from "../../types/abci.js";
import type { Block, BlockMeta, Commit, Header } from "../../types/block.js";
import type { BlockId, PartSetHeader } from "../../types/blockId.js";
import type { Evidence } from "../../types/evidence.js";
import type { GenesisDoc } from "../../types/genesis.js";
import type { PubKey } from "../../types/keys.js";
import type { ConsensusParams } from "../../types/params.js";
import type { Proposal } from "../../types/proposal.js";
import type { Validator } from "../../types/validator.js";
import type { Vote } from "../../types/vote.js";
import type { Timestamp } from "../../util/time.js";

/**
 * What the CometBFT node RPC needs from the rest of the node, and nothing more. These are
 * structural interfaces in domain types: node/ passes the real objects (BlockStore, StateStore,
 * Mempool, EventBus, Consensus, the Application, the types/ helpers) or thin adapters.
 */
export interface CometServices {
  blocks: BlockReader;
  /**
   * How many times the chain reused heights (a dev chain's rollback): answers kept by height are
   * dropped when it moves. Absent: never.
   */
  epoch?: { current(): number };
  state: StateReader;
  app: AppReader;
  mempool: MempoolAccess;
  events: EventBusAccess;
  /** broadcast_tx_commit's wait for its tx's block (events/ TxInclusion, adapted by node/). */
  txWaits: TxWaitAccess;
  /** The events/ query parser (`parseQuery`); throws with "offset N: got X, wanted Y". */
  parseQuery(text: string): EventQuery;
  consensus: ConsensusViews;
  /** tx, tx_search and block_search. */
  indexer: TxIndexReader;
  node: NodeStatusSource;
  /** Pure helpers from types/ (node passes the types/index.js namespace). */
  types: TypesHelpers;
  /** The genesis document after ValidateAndComplete (initial_height ≥ 1). */
  genesis: GenesisDoc;
  /** Absent when the node has no p2p layer: net_info shows no listeners and peers, dial_* fail. */
  p2p?: P2PAccess;
  /** Absent when the node has no evidence pool: broadcast_evidence fails after validation. */
  evidence?: EvidenceAccess;
}

/** store/ BlockStore, read side. */
export interface BlockReader {
  /** Lowest stored height; 0 when empty. */
  base(): number;
  /** Highest stored height; 0 when empty. */
  height(): number;
  loadBlock(height: number): Block | undefined;
  loadBlockByHash(hash: Uint8Array): Block | undefined;
  loadBlockMeta(height: number): BlockMeta | undefined;
  loadBlockMetaByHash(hash: Uint8Array): BlockMeta | undefined;
  /** The canonical commit for `height` (from block height+1's LastCommit). */
  loadBlockCommit(height: number): Commit | undefined;
  /** The commit this node saw for `height` (kept for the latest height). */
  loadSeenCommit(height: number): Commit | undefined;
}

/** A validator set as RPC reads it (types/ ValidatorSet satisfies it). */
export interface ValidatorSetView {
  /** In set order: voting power descending, then address ascending. */
  readonly validators: readonly Validator[];
  getProposer(): Validator | undefined;
}

/** store/ StateStore, read side. */
export interface StateReader {
  loadValidators(height: number): ValidatorSetView | undefined;
  loadConsensusParams(height: number): ConsensusParams | undefined;
  loadFinalizeBlockResponse(height: number): FinalizeBlockResponse | undefined;
}

/** The Application's query connection (app/ Application satisfies it). */
export interface AppReader {
  info(): Promise<InfoResponse>;
  query(req: QueryRequest): Promise<QueryResponse>;
  /** check_tx runs the app's CheckTx directly, without the mempool. */
  checkTx(req: CheckTxRequest): Promise<CheckTxResponse>;
}

/** mempool/ Mempool. */
export interface MempoolAccess {
  /**
   * Admits a tx through the app's CheckTx. Rejects with CometBFT's texts for pre-check failures
   * (`tx already exists in cache`, `Tx too large...`, `mempool is full...`); resolves with the
   * CheckTx response otherwise (code ≠ 0 means not admitted).
   */
  checkTx(tx: Uint8Array): Promise<CheckTxResponse>;
  reapMaxTxs(max: number): Uint8Array[];
  size(): number;
  sizeBytes(): number;
  flush(): void;
}

/** A parsed event query (events/ Query). */
export interface EventQuery {
  readonly text: string;
  /** Conditions joined by " AND ", each "tag op arg": the key of a subscription. */
  canonical(): string;
}

/** One published event as a subscriber receives it. */
export interface EventMessage {
  /** The event name, e.g. "NewBlock", "Tx", "NewRoundStep" (see {@link EventPayloads}). */
  readonly type: string;
  /** The domain payload: `EventPayloads[type]`. */
  readonly data: unknown;
  /** Composite key → values, including tm.event (and tx.hash/tx.height for Tx). */
  readonly events: Readonly<Record<string, readonly string[]>>;
}

export interface EventSubscription {
  /** The next message; undefined once the subscription is cancelled. */
  next(): Promise<EventMessage | undefined>;
  /** Why it was cancelled, e.g. "internal subscription event buffer is out of capacity"; undefined while live. */
  cancelled(): string | undefined;
}

/** events/ EventBus, subscriber side. */
export interface EventBusAccess {
  /**
   * Subscribes `subscriber` (the client's remote address) to `query`. With `capacity`, a full
   * buffer cancels the subscription (out of capacity) instead of blocking the publisher.
   * Throws when the subscriber already has this query.
   */
  subscribe(subscriber: string, query: EventQuery, opts?: { capacity?: number }): EventSubscription;
  unsubscribe(subscriber: string, query: EventQuery): void;
  unsubscribeAll(subscriber: string): void;
  numClients(): number;
  numClientSubscriptions(subscriber: string): number;
}

/**
 * How a wait for a tx's block ended: "cancelled" when the node is stopping ("CometBFT exited") or the
 * chain was rolled back; "notIncluded" only for waits bounded by blocks (not broadcast_tx_commit's).
 */
export type TxWaitOutcome =
  | { kind: "included"; height: number; index: number; result: ExecTxResult }
  | { kind: "timeout" }
  | { kind: "cancelled"; reason: string }
  | { kind: "notIncluded"; reason: string };

/**
 * The node's one wait for a tx's block (events/ TxInclusion). A wait counts as one of its owner's
 * subscriptions in EventBusAccess's numbers, as CometBFT's broadcast_tx_commit subscription does.
 */
export interface TxWaitAccess {
  /** Waits for the block that includes `tx`, at most `timeoutMs`; `cancel` drops a wait never awaited. */
  waitOutcome(
    tx: Uint8Array,
    opts: { timeoutMs: number; owner: string },
  ): { outcome: Promise<TxWaitOutcome>; cancel(): void };
  /** True when `owner` already waits for `tx`. */
  isWaiting(owner: string, tx: Uint8Array): boolean;
  /** The owners with at least one open wait, and how many each has. */
  owners(): Iterable<string>;
  ownerWaits(owner: string): number;
}

/** The domain payloads of the events RPC pushes (events/ EventMap). */
export interface EventPayloads {
  NewBlock: { block: Block; blockId: BlockId; resultFinalizeBlock: FinalizeBlockResponse };
  NewBlockHeader: { header: Header };
  NewBlockEvents: { height: number; events: FinalizeBlockResponse["events"]; numTxs: number | bigint };
  Tx: { height: number; index: number; tx: Uint8Array; result: ExecTxResult };
  ValidatorSetUpdates: { validatorUpdates: Validator[] };
  NewEvidence: { height: number; evidence: Evidence };
  NewRound: { height: number; round: number; step: string | number; proposer: { address: Uint8Array; index: number } };
  CompleteProposal: { height: number; round: number; step: string | number; blockId: BlockId };
  /** Also NewRoundStep, Polka, Lock, Unlock, Relock, TimeoutPropose, TimeoutWait, ValidBlock. */
  RoundState: { height: number; round: number; step: string | number };
  Vote: { vote: Vote };
}

/** A bit array as RPC reads it (types/ BitArray satisfies it). */
export interface BitArrayView {
  readonly size: number;
  get(index: number): boolean;
}

/** A part set as RPC reads it (types/ PartSet satisfies it). */
export interface PartSetView {
  readonly total: number;
  count(): number;
  bitArray(): BitArrayView;
}

/** A vote set (one round, one vote type) as a snapshot. */
export interface VoteSetView {
  /** One slot per validator, in validator-index order; undefined where no vote has arrived. */
  readonly votes: readonly (Vote | undefined)[];
  /** Voting power of every received vote, whatever block it is for (nil votes count). */
  readonly sum: bigint;
  /** The set's total voting power. */
  readonly totalVotingPower: bigint;
  /** Peer ID → the +2/3 block ID that peer claimed. */
  readonly peerMaj23s: ReadonlyMap<string, BlockId>;
}

export interface RoundVotesView {
  readonly round: number;
  readonly prevotes: VoteSetView;
  readonly precommits: VoteSetView;
}

/** Consensus RoundState as a snapshot (CometBFT consensus/types RoundState). */
export interface RoundStateView {
  readonly height: number;
  readonly round: number;
  /** 1 NewHeight … 8 Commit. */
  readonly step: number;
  readonly startTime: Timestamp;
  readonly commitTime: Timestamp;
  readonly validators: ValidatorSetView;
  readonly proposal: Proposal | undefined;
  readonly proposalBlock: Block | undefined;
  readonly proposalBlockParts: PartSetView | undefined;
  readonly lockedRound: number;
  readonly lockedBlock: Block | undefined;
  readonly lockedBlockParts: PartSetView | undefined;
  readonly validRound: number;
  readonly validBlock: Block | undefined;
  readonly validBlockParts: PartSetView | undefined;
  /** HeightVoteSet, rounds ascending from 0. */
  readonly votes: readonly RoundVotesView[];
  readonly commitRound: number;
  readonly lastCommit: VoteSetView | undefined;
  /** Empty set at the initial height. */
  readonly lastValidators: ValidatorSetView;
  readonly triggeredTimeoutPrecommit: boolean;
}

/** A peer's consensus round state (consensus/types PeerRoundState). */
export interface PeerRoundStateView {
  readonly height: number;
  readonly round: number;
  readonly step: number;
  readonly startTime: Timestamp;
  readonly proposal: boolean;
  readonly proposalBlockPartSetHeader: PartSetHeader;
  readonly proposalBlockParts: BitArrayView | undefined;
  readonly proposalPolRound: number;
  readonly proposalPol: BitArrayView | undefined;
  readonly prevotes: BitArrayView | undefined;
  readonly precommits: BitArrayView | undefined;
  readonly lastCommitRound: number;
  readonly lastCommit: BitArrayView | undefined;
  readonly catchupCommitRound: number;
  readonly catchupCommit: BitArrayView | undefined;
}

export interface PeerStateView {
  /** `<node id>@<ip>:<port>`. */
  readonly nodeAddress: string;
  /** Undefined while the peer has no consensus state yet (shown as `peer_state: null`). */
  readonly roundState: PeerRoundStateView | undefined;
  readonly stats: { readonly votes: number; readonly blockParts: number };
}

/** consensus/ Consensus, the dump views. */
export interface ConsensusViews {
  roundStateView(): RoundStateView;
  peerStateViews(): PeerStateView[];
}

/** One indexed tx (the kv indexer's TxResult). */
export interface IndexedTx {
  readonly height: number;
  readonly index: number;
  readonly tx: Uint8Array;
  readonly result: ExecTxResult;
}

/** The tx and block indexers ([tx_index] indexer). */
export interface TxIndexReader {
  /** False for the null indexer: tx and tx_search answer "transaction indexing is disabled". */
  readonly txIndexEnabled: boolean;
  /** False for the null indexer: block_search answers "block indexing is disabled". */
  readonly blockIndexEnabled: boolean;
  getTx(hash: Uint8Array): IndexedTx | undefined | Promise<IndexedTx | undefined>;
  /** Every match, in any order (the route sorts and pages). */
  searchTxs(query: EventQuery): IndexedTx[] | Promise<IndexedTx[]>;
  /** Heights of every matching block, in any order. */
  searchBlocks(query: EventQuery): number[] | Promise<number[]>;
}

/** p2p DefaultNodeInfo in domain form. */
export interface NodeInfoView {
  readonly protocolVersion: { readonly p2p: bigint; readonly block: bigint; readonly app: bigint };
  /** Lowercase hex node ID. */
  readonly id: string;
  readonly listenAddr: string;
  readonly network: string;
  readonly version: string;
  readonly channels: Uint8Array;
  readonly moniker: string;
  readonly other: { readonly txIndex: string; readonly rpcAddress: string };
}

/** What `status` reports about this node. */
export interface NodeStatusSource {
  nodeInfo(): NodeInfoView;
  /** This node's validator key (privval), shown in validator_info. */
  validatorPubKey(): PubKey;
  /** Block sync or state sync still running (consensus reactor WaitSync). */
  isCatchingUp(): boolean;
}

/** flowrate.Status of a peer connection direction. */
export interface FlowStatusView {
  readonly start: Timestamp;
  readonly bytes: bigint;
  readonly samples: bigint;
  readonly instRate: bigint;
  readonly curRate: bigint;
  readonly avgRate: bigint;
  readonly peakRate: bigint;
  readonly bytesRem: bigint;
  readonly durationNs: bigint;
  readonly idleNs: bigint;
  readonly timeRemNs: bigint;
  readonly progress: number;
  readonly active: boolean;
}

export interface PeerView {
  readonly nodeInfo: NodeInfoView;
  readonly isOutbound: boolean;
  readonly remoteIp: string;
  readonly connectionStatus: {
    readonly durationNs: bigint;
    readonly sendMonitor: FlowStatusView;
    readonly recvMonitor: FlowStatusView;
    readonly channels: readonly {
      readonly id: number;
      readonly sendQueueCapacity: number;
      readonly sendQueueSize: number;
      readonly priority: number;
      readonly recentlySent: bigint;
    }[];
  };
}

export interface P2PAccess {
  isListening(): boolean;
  listeners(): string[];
  peers(): PeerView[];
  /** Throws with the failure text. */
  dialSeeds(seeds: readonly string[]): void | Promise<void>;
  addPersistentPeers(peers: readonly string[]): void | Promise<void>;
  addUnconditionalPeerIds(ids: readonly string[]): void | Promise<void>;
  addPrivatePeerIds(ids: readonly string[]): void | Promise<void>;
  dialPeers(peers: readonly string[]): void | Promise<void>;
}

export interface EvidenceAccess {
  /** Throws with the ValidateBasic failure text. */
  validateBasic(ev: Evidence): void;
  /** Throws with the pool's failure text. */
  addEvidence(ev: Evidence): void | Promise<void>;
  /** tmhash of the evidence's proto bytes. */
  hash(ev: Evidence): Uint8Array;
}

export interface MerkleProofView {
  readonly total: number;
  readonly index: number;
  readonly leafHash: Uint8Array;
  readonly aunts: readonly Uint8Array[];
}

/** The types/ functions RPC uses (node passes `import * as types from "../types/index.js"`). */
export interface TypesHelpers {
  /** CometBFT Vote.String() text. */
  formatVote(vote: Vote): string;
  /** Undefined when validatorsHash is empty. */
  headerHash(header: Header): Uint8Array | undefined;
  /** sha256(tx). */
  txHash(tx: Uint8Array): Uint8Array;
  proofsFromByteSlices(items: Uint8Array[]): { root: Uint8Array; proofs: MerkleProofView[] };
  addressFromPubKey(pubKey: PubKey): Uint8Array;
}
