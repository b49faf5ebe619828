import type { Registry } from "prom-client";
import type { Application } from "../app/index.js";
import type { ConsensusApp, ConsensusMetricsHooks, RoundStep } from "../consensus/index.js";
import type { MempoolMetricsHooks } from "../mempool/index.js";
import type { PeerTraffic } from "../p2p/index.js";
import type { BlockStore } from "../store/index.js";
import {
  BLOCK_ID_FLAG,
  type Block,
  type CheckTxRequest,
  type CheckTxResponse,
  type FinalizeBlockResponse,
  type Proposal,
  SIGNED_MSG_TYPE,
  type ValidatorSet,
  type Vote,
  type VoteType,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper } from "../util/bytes.js";
import {
  DEFAULT_BUCKETS,
  exponentialBuckets,
  exponentialBucketsRange,
  type HistogramChild,
  HistogramFamily,
  linearBuckets,
  type ScalarChild,
  ScalarFamily,
} from "./metricsKit.js";

/**
 * CometBFT v0.38.25's Prometheus metrics under their names, types, buckets and labels
 * (consensus/, p2p/, mempool/, state/, blocksync/, statesync/ and proxy/ metrics.gen.go), plus the
 * block store's access timing of CometBFT v1 (store/metrics.gen.go). docs/compatibility.md lists the
 * ones whose value cometh cannot produce and why. `chain_id` comes from the registry's default labels.
 */

/** What the metrics read from the node when Prometheus scrapes. */
export interface CometbftMetricsSources {
  /** Height in progress (cs.Height). */
  height(): number;
  validators(): ValidatorSet;
  mempoolSize(): number;
  mempoolSizeBytes(): number;
  /** Connected peers with their send queues (messages queued per channel). */
  peers(): readonly { readonly id: string; pendingSend(): number }[];
  blockSyncing(): boolean;
  /** True while state sync restores a snapshot (the state sync reactor's sync is running). */
  stateSyncing(): boolean;
  /** Validator sets by height (missing validators are counted against the set that signed the last commit). */
  validatorsAt(height: number): ValidatorSet | undefined;
  /** This node's validator address, if it has a key. */
  ownAddress(): Uint8Array | undefined;
  /** Header time (ns) of a stored block. */
  blockTime(height: number): bigint | undefined;
  initialHeight(): number;
}

/** Message type names by channel and protobuf oneof field (p2p metricsLabelCache: `package_Type`). */
const CONSENSUS_MESSAGES: readonly string[] = [
  "",
  "consensus_NewRoundStep",
  "consensus_NewValidBlock",
  "consensus_Proposal",
  "consensus_ProposalPOL",
  "consensus_BlockPart",
  "consensus_Vote",
  "consensus_HasVote",
  "consensus_VoteSetMaj23",
  "consensus_VoteSetBits",
];
const MESSAGE_TYPES = new Map<number, readonly string[]>([
  [0x00, ["", "p2p_PexRequest", "p2p_PexAddrs"]],
  [0x20, CONSENSUS_MESSAGES],
  [0x21, CONSENSUS_MESSAGES],
  [0x22, CONSENSUS_MESSAGES],
  [0x23, CONSENSUS_MESSAGES],
  [0x30, ["", "mempool_Txs"]],
  [
    0x40,
    [
      "",
      "blocksync_BlockRequest",
      "blocksync_NoBlockResponse",
      "blocksync_BlockResponse",
      "blocksync_StatusRequest",
      "blocksync_StatusResponse",
    ],
  ],
]);

/** The consensus DataChannel and the BlockPart field of its Message oneof. */
const DATA_CHANNEL = 0x21;
const BLOCK_PART_FIELD = 5;

/** The evidence channel carries a bare EvidenceList, not a oneof wrapper. */
const EVIDENCE_CHANNEL = 0x38;

/** `package_Type` of a channel message from its first byte (the oneof field's tag). */
export function messageTypeLabel(channelId: number, msg: Uint8Array): string {
  if (channelId === EVIDENCE_CHANNEL) return "types_EvidenceList";
  const names = MESSAGE_TYPES.get(channelId);
  const field = (msg[0] ?? 0) >> 3;
  return names?.[field] || "unknown";
}

const STEP_LABELS: Record<RoundStep, string> = {
  1: "NewHeight",
  2: "NewRound",
  3: "Propose",
  4: "Prevote",
  5: "PrevoteWait",
  6: "Precommit",
  7: "PrecommitWait",
  8: "Commit",
};

/** Seconds between two nanosecond timestamps. */
function secondsBetween(fromNs: bigint, toNs: bigint): number {
  return Number(toNs - fromNs) / 1e9;
}

/** A peer's counters per channel (256 slots: channel IDs are one byte). */
type ChannelChildren = (ScalarChild | undefined)[];

export class CometbftMetrics implements ConsensusMetricsHooks, MempoolMetricsHooks, PeerTraffic {
  /** Told of each FinalizeBlock response (the EVM metrics read gas from it). */
  onFinalizeBlock: ((res: FinalizeBlockResponse) => void) | undefined;
  readonly #sources: CometbftMetricsSources;
  // consensus
  readonly #validatorLastSignedHeight: ScalarFamily;
  readonly #rounds: ScalarFamily;
  readonly #roundDuration: HistogramFamily;
  readonly #validatorPower: ScalarFamily;
  readonly #validatorMissedBlocks: ScalarFamily;
  readonly #missingValidators: ScalarFamily;
  readonly #missingValidatorsPower: ScalarFamily;
  readonly #byzantineValidators: ScalarFamily;
  readonly #byzantineValidatorsPower: ScalarFamily;
  readonly #blockInterval: HistogramFamily;
  readonly #numTxs: ScalarFamily;
  readonly #blockSize: ScalarFamily;
  readonly #chainSize: ScalarFamily;
  readonly #totalTxs: ScalarFamily;
  readonly #latestHeight: ScalarFamily;
  readonly #blockParts: ScalarFamily;
  readonly #blockPartsByPeer = new Map<string, ScalarChild>();
  readonly #duplicateBlockPart: ScalarFamily;
  readonly #duplicateVote: ScalarFamily;
  readonly #stepDuration: HistogramFamily;
  readonly #stepChildren: Map<RoundStep, HistogramChild> = new Map();
  #stepStartMs: number | undefined;
  readonly #gossipPartsTrue: ScalarChild;
  readonly #gossipPartsFalse: ScalarChild;
  readonly #quorumPrevoteDelay: ScalarFamily;
  readonly #quorumPrecommitDelay: ScalarFamily;
  readonly #fullPrevoteDelay: ScalarFamily;
  readonly #precommitsCounted: ScalarFamily;
  readonly #precommitsStakingPercentage: ScalarFamily;
  readonly #proposalAccepted: ScalarChild;
  readonly #proposalRejected: ScalarChild;
  readonly #proposalCreate: ScalarFamily;
  readonly #roundPowerPrevote: ScalarChild;
  readonly #roundPowerPrecommit: ScalarChild;
  readonly #lateVotePrevote: ScalarChild;
  readonly #lateVotePrecommit: ScalarChild;
  #lastBlockTimeNs: bigint | undefined;
  // p2p
  readonly #peerSend: ScalarFamily;
  readonly #peerRecv: ScalarFamily;
  readonly #peerSendByPeer = new Map<string, ChannelChildren>();
  readonly #peerRecvByPeer = new Map<string, ChannelChildren>();
  readonly #messageSend: ScalarFamily;
  readonly #messageRecv: ScalarFamily;
  readonly #messageSendByType = new Map<string, ScalarChild>();
  readonly #messageRecvByType = new Map<string, ScalarChild>();
  // mempool
  readonly #txSize: HistogramFamily;
  readonly #failedTxs: ScalarFamily;
  readonly #rejectedTxs: ScalarFamily;
  readonly #evictedTxs: ScalarFamily;
  readonly #recheckTimes: ScalarFamily;
  // state
  readonly #blockProcessingTime: HistogramFamily;
  readonly #consensusParamUpdates: ScalarFamily;
  readonly #validatorSetUpdates: ScalarFamily;
  // blocksync
  readonly #bsNumTxs: ScalarFamily;
  readonly #bsTotalTxs: ScalarFamily;
  readonly #bsBlockSize: ScalarFamily;
  readonly #bsLatestHeight: ScalarFamily;
  // abci, store
  readonly #abciTiming: HistogramFamily;
  readonly #storeAccess: HistogramFamily;

  constructor(registry: Registry, namespace: string, sources: CometbftMetricsSources) {
    this.#sources = sources;
    const ns = namespace === "" ? "" : `${namespace}_`;
    const gauge = (name: string, help: string, labelNames?: string[], collect?: (f: ScalarFamily) => void) =>
      new ScalarFamily(registry, {
        name: `${ns}${name}`,
        help,
        type: "gauge",
        ...(labelNames === undefined ? {} : { labelNames }),
        ...(collect === undefined ? {} : { collect }),
      });
    const counter = (name: string, help: string, labelNames?: string[]) =>
      new ScalarFamily(registry, {
        name: `${ns}${name}`,
        help,
        type: "counter",
        ...(labelNames === undefined ? {} : { labelNames }),
      });
    const histogram = (name: string, help: string, buckets: readonly number[], labelNames?: string[]) =>
      new HistogramFamily(registry, {
        name: `${ns}${name}`,
        help,
        buckets,
        ...(labelNames === undefined ? {} : { labelNames }),
      });
    const validatorAddress = ["validator_address"];
    const proposerAddress = ["proposer_address"];

    // consensus/metrics.gen.go, in its order.
    gauge("consensus_height", "Height of the chain.", undefined, (f) => f.set(sources.height()));
    this.#validatorLastSignedHeight = gauge(
      "consensus_validator_last_signed_height",
      "Last height signed by this validator if the node is a validator.",
      validatorAddress,
    );
    this.#rounds = gauge("consensus_rounds", "Number of rounds.");
    this.#roundDuration = histogram(
      "consensus_round_duration_seconds",
      "Histogram of round duration.",
      exponentialBucketsRange(0.1, 100, 8),
    );
    gauge("consensus_validators", "Number of validators.", undefined, (f) => f.set(sources.validators().size()));
    gauge("consensus_validators_power", "Total power of all validators.", undefined, (f) =>
      f.set(Number(sources.validators().totalVotingPower())),
    );
    this.#validatorPower = gauge("consensus_validator_power", "Power of a validator.", validatorAddress);
    this.#validatorMissedBlocks = gauge(
      "consensus_validator_missed_blocks",
      "Amount of blocks missed per validator.",
      validatorAddress,
    );
    this.#missingValidators = gauge("consensus_missing_validators", "Number of validators who did not sign.");
    this.#missingValidatorsPower = gauge(
      "consensus_missing_validators_power",
      "Total power of the missing validators.",
    );
    this.#byzantineValidators = gauge(
      "consensus_byzantine_validators",
      "Number of validators who tried to double sign.",
    );
    this.#byzantineValidatorsPower = gauge(
      "consensus_byzantine_validators_power",
      "Total power of the byzantine validators.",
    );
    this.#blockInterval = histogram(
      "consensus_block_interval_seconds",
      "Time between this and the last block.",
      DEFAULT_BUCKETS,
    );
    this.#numTxs = gauge("consensus_num_txs", "Number of transactions.");
    this.#blockSize = gauge("consensus_block_size_bytes", "Size of the block.");
    this.#chainSize = counter("consensus_chain_size_bytes", "Size of the chain in bytes.");
    this.#totalTxs = gauge("consensus_total_txs", "Total number of transactions.");
    this.#latestHeight = gauge("consensus_latest_block_height", "The latest block height.");
    this.#blockParts = counter("consensus_block_parts", "Number of block parts transmitted by each peer.", ["peer_id"]);
    this.#duplicateBlockPart = counter(
      "consensus_duplicate_block_part",
      "Number of times we received a duplicate block part",
    );
    this.#duplicateVote = counter("consensus_duplicate_vote", "Number of times we received a duplicate vote");
    this.#stepDuration = histogram(
      "consensus_step_duration_seconds",
      "Histogram of durations for each step in the consensus protocol.",
      exponentialBucketsRange(0.1, 100, 8),
      ["step"],
    );
    const gossipParts = counter(
      "consensus_block_gossip_parts_received",
      "Number of block parts received by the node, separated by whether the part was relevant to the block the node is trying to gather or not.",
      ["matches_current"],
    );
    this.#gossipPartsTrue = gossipParts.child("true");
    this.#gossipPartsFalse = gossipParts.child("false");
    this.#quorumPrevoteDelay = gauge(
      "consensus_quorum_prevote_delay",
      "Interval in seconds between the proposal timestamp and the timestamp of the earliest prevote that achieved a quorum.",
      proposerAddress,
    );
    this.#quorumPrecommitDelay = gauge(
      "consensus_quorum_precommit_delay",
      "Interval in seconds between the proposal timestamp and the timestamp of the earliest precommit that achieved a quorum.",
      proposerAddress,
    );
    this.#fullPrevoteDelay = gauge(
      "consensus_full_prevote_delay",
      "Interval in seconds between the proposal timestamp and the timestamp of the latest prevote in a round where all validators voted.",
      proposerAddress,
    );
    this.#precommitsCounted = gauge(
      "consensus_precommits_counted",
      "PrecommitsCounted is the number of precommit votes counted after the timeout commit period has ended.",
    );
    this.#precommitsStakingPercentage = gauge(
      "consensus_precommits_staking_percentage",
      "PrecommitsStakingPercentage is the voting power percentage of precommit votes once the timeout commit period has ended.",
    );
    // Vote extensions are refused (docs/compatibility.md): the family exists, no child is ever made.
    counter(
      "consensus_vote_extension_receive_count",
      "VoteExtensionReceiveCount is the number of vote extensions received by this node. The metric is annotated by the status of the vote extension from the application, either 'accepted' or 'rejected'.",
      ["status"],
    );
    const proposalReceive = counter(
      "consensus_proposal_receive_count",
      "ProposalReceiveCount is the total number of proposals received by this node since process start. The metric is annotated by the status of the proposal from the application, either 'accepted' or 'rejected'.",
      ["status"],
    );
    this.#proposalAccepted = proposalReceive.child("accepted");
    this.#proposalRejected = proposalReceive.child("rejected");
    this.#proposalCreate = counter(
      "consensus_proposal_create_count",
      "ProposalCreationCount is the total number of proposals created by this node since process start. The metric is annotated by the status of the proposal from the application, either 'accepted' or 'rejected'.",
    );
    const roundPower = gauge(
      "consensus_round_voting_power_percent",
      "RoundVotingPowerPercent is the percentage of the total voting power received with a round. The value begins at 0 for each round and approaches 1.0 as additional voting power is observed. The metric is labeled by vote type.",
      ["vote_type"],
    );
    this.#roundPowerPrevote = roundPower.child("prevote");
    this.#roundPowerPrecommit = roundPower.child("precommit");
    const lateVotes = counter(
      "consensus_late_votes",
      "LateVotes stores the number of votes that were received by this node that correspond to earlier heights and rounds than this node is currently in.",
      ["vote_type"],
    );
    this.#lateVotePrevote = lateVotes.child("prevote");
    this.#lateVotePrecommit = lateVotes.child("precommit");

    // p2p/metrics.gen.go
    gauge("p2p_peers", "Number of peers.", undefined, (f) => f.set(sources.peers().length));
    this.#peerRecv = counter("p2p_peer_receive_bytes_total", "Number of bytes received from a given peer.", [
      "peer_id",
      "chID",
    ]);
    this.#peerSend = counter("p2p_peer_send_bytes_total", "Number of bytes sent to a given peer.", ["peer_id", "chID"]);
    gauge("p2p_peer_pending_send_bytes", "Pending bytes to be sent to a given peer.", ["peer_id"], (f) => {
      // Upstream keeps a gone peer's last value; only connected peers are shown here.
      f.reset();
      for (const p of sources.peers()) f.child(p.id).value = p.pendingSend();
    });
    // Never set by CometBFT v0.38 either (docs/compatibility.md).
    gauge("p2p_num_txs", "Number of transactions submitted by each peer.", ["peer_id"]);
    this.#messageRecv = counter("p2p_message_receive_bytes_total", "Number of bytes of each message type received.", [
      "message_type",
    ]);
    this.#messageSend = counter("p2p_message_send_bytes_total", "Number of bytes of each message type sent.", [
      "message_type",
    ]);

    // mempool/metrics.gen.go
    gauge("mempool_size", "Number of uncommitted transactions in the mempool.", undefined, (f) =>
      f.set(sources.mempoolSize()),
    );
    gauge("mempool_size_bytes", "Total size of the mempool in bytes.", undefined, (f) =>
      f.set(sources.mempoolSizeBytes()),
    );
    this.#txSize = histogram(
      "mempool_tx_size_bytes",
      "Histogram of transaction sizes in bytes.",
      exponentialBuckets(1, 3, 7),
    );
    this.#failedTxs = counter(
      "mempool_failed_txs",
      "FailedTxs defines the number of failed transactions. These are transactions that failed to make it into the mempool because they were deemed invalid. metrics:Number of failed transactions.",
    );
    this.#rejectedTxs = counter(
      "mempool_rejected_txs",
      "RejectedTxs defines the number of rejected transactions. These are transactions that failed to make it into the mempool due to resource limits, e.g. mempool is full. metrics:Number of rejected transactions.",
    );
    this.#evictedTxs = counter(
      "mempool_evicted_txs",
      "EvictedTxs defines the number of evicted transactions. These are valid transactions that passed CheckTx and make it into the mempool but later became invalid. metrics:Number of evicted transactions.",
    );
    this.#recheckTimes = counter("mempool_recheck_times", "Number of times transactions are rechecked in the mempool.");
    // experimental_max_gossip_connections_* is not implemented: 0, as upstream with the feature off.
    gauge(
      "mempool_active_outbound_connections",
      "Number of connections being actively used for gossiping transactions (experimental feature).",
    );

    // state/metrics.gen.go (block_processing_time is in milliseconds, as upstream observes it).
    this.#blockProcessingTime = histogram(
      "state_block_processing_time",
      "Time spent processing FinalizeBlock",
      linearBuckets(1, 10, 10),
    );
    this.#consensusParamUpdates = counter(
      "state_consensus_param_updates",
      "Number of consensus parameter updates returned by the application since process start.",
    );
    this.#validatorSetUpdates = counter(
      "state_validator_set_updates",
      "Number of validator set updates returned by the application since process start.",
    );

    // blocksync/metrics.gen.go
    gauge("blocksync_syncing", "Whether or not a node is block syncing. 1 if yes, 0 if no.", undefined, (f) =>
      f.set(sources.blockSyncing() ? 1 : 0),
    );
    this.#bsNumTxs = gauge("blocksync_num_txs", "Number of transactions in the latest block.");
    this.#bsTotalTxs = gauge("blocksync_total_txs", "Total number of transactions.");
    this.#bsBlockSize = gauge("blocksync_block_size_bytes", "Size of the latest block.");
    this.#bsLatestHeight = gauge("blocksync_latest_block_height", "The height of the latest block.");

    // statesync/metrics.gen.go: 1 while the reactor's sync runs (discovery, chunks, restore), 0 before and after.
    gauge("statesync_syncing", "Whether or not a node is state syncing. 1 if yes, 0 if no.", undefined, (f) =>
      f.set(sources.stateSyncing() ? 1 : 0),
    );

    // proxy/metrics.gen.go
    this.#abciTiming = histogram(
      "abci_connection_method_timing_seconds",
      "Timing for each ABCI method.",
      [0.0001, 0.0004, 0.002, 0.009, 0.02, 0.1, 0.65, 2, 6, 25],
      ["method", "type"],
    );

    // store/metrics.gen.go (CometBFT v1.0; v0.38 has no store metrics).
    this.#storeAccess = histogram(
      "store_block_store_access_duration_seconds",
      "The duration of accesses to the state store labeled by which method was called on the store.",
      exponentialBuckets(0.0002, 10, 5),
      ["method"],
    );
  }

  // ---- consensus (ConsensusMetricsHooks)

  roundStep(prevRound: number, prevStep: RoundStep, round: number, step: RoundStep, startTimeNs: bigint): void {
    if (round !== prevRound || (round === 0 && step === 2)) {
      // MarkRound(cs.Round, cs.StartTime): the round that ends, timed from the height's start.
      this.#rounds.set(prevRound);
      if (startTimeNs > 0n) {
        this.#roundDuration.observe(Math.max(0, Date.now() - Number(startTimeNs / 1_000_000n)) / 1000);
      }
      this.#roundPowerPrevote.value = 0;
      this.#roundPowerPrecommit.value = 0;
    }
    if (step !== prevStep) {
      const now = performance.now();
      // MarkStep(cs.Step): the step that ends.
      if (this.#stepStartMs !== undefined) {
        let child = this.#stepChildren.get(prevStep);
        if (child === undefined) {
          child = this.#stepDuration.child(STEP_LABELS[prevStep]);
          this.#stepChildren.set(prevStep, child);
        }
        child.observe((now - this.#stepStartMs) / 1000);
      }
      this.#stepStartMs = now;
    }
  }

  lateVote(type: VoteType): void {
    if (type === SIGNED_MSG_TYPE.prevote) this.#lateVotePrevote.value++;
    else this.#lateVotePrecommit.value++;
  }

  duplicateVote(): void {
    this.#duplicateVote.inc();
  }

  voteReceived(vote: Vote, validators: ValidatorSet): void {
    const val = validators.getByIndex(vote.validatorIndex);
    const total = validators.totalVotingPower();
    if (val === undefined || total === 0n) return;
    const share = Number(val.votingPower) / Number(total);
    if (vote.type === SIGNED_MSG_TYPE.prevote) this.#roundPowerPrevote.value += share;
    else this.#roundPowerPrecommit.value += share;
  }

  proposalCreated(): void {
    this.#proposalCreate.inc();
  }

  proposalProcessed(accepted: boolean): void {
    if (accepted) this.#proposalAccepted.value++;
    else this.#proposalRejected.value++;
  }

  blockPartReceived(matchesCurrent: boolean, added: boolean): void {
    if (!matchesCurrent) {
      this.#gossipPartsFalse.value++;
      return;
    }
    this.#gossipPartsTrue.value++;
    if (!added) this.#duplicateBlockPart.inc();
  }

  precommitWaitTimedOut(precommits: readonly Vote[], validators: ValidatorSet): void {
    let power = 0n;
    for (const v of precommits) power += validators.getByAddress(v.validatorAddress)?.validator.votingPower ?? 0n;
    const total = validators.totalVotingPower();
    this.#precommitsCounted.set(precommits.length);
    this.#precommitsStakingPercentage.set(total > 0n ? Number(power) / Number(total) : 0);
  }

  finalizing(
    proposal: Proposal | undefined,
    prevotes: readonly Vote[],
    precommits: readonly Vote[],
    validators: ValidatorSet,
  ): void {
    if (proposal === undefined) return;
    const proposer = validators.getProposer();
    if (proposer === undefined) return;
    const label = bytesToHexUpper(proposer.address);
    const quorum = (validators.totalVotingPower() * 2n) / 3n + 1n;
    const delay = (votes: readonly Vote[]): number | undefined => {
      const sorted = [...votes].sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
      let seen = 0n;
      for (const v of sorted) {
        seen += validators.getByAddress(v.validatorAddress)?.validator.votingPower ?? 0n;
        if (seen >= quorum) return secondsBetween(proposal.timestamp, v.timestamp);
      }
      return undefined;
    };
    const prevoteDelay = delay(prevotes);
    if (prevoteDelay !== undefined) this.#quorumPrevoteDelay.child(label).value = prevoteDelay;
    if (prevotes.length === validators.size() && prevotes.length > 0) {
      let latest = (prevotes[0] as Vote).timestamp;
      for (const v of prevotes) if (v.timestamp > latest) latest = v.timestamp;
      this.#fullPrevoteDelay.child(label).value = secondsBetween(proposal.timestamp, latest);
    }
    const precommitDelay = delay(precommits);
    if (precommitDelay !== undefined) this.#quorumPrecommitDelay.child(label).value = precommitDelay;
  }

  /**
   * A committed block (the NewBlock event): consensus' recordMetrics, or blocksync's
   * recordBlockMetrics when block sync applied it.
   */
  onBlock(block: Block, sizeBytes: number, bySync: boolean): void {
    const height = block.header.height;
    const numTxs = block.data.txs.length;
    if (bySync) {
      this.#bsNumTxs.set(numTxs);
      this.#bsTotalTxs.inc(numTxs);
      this.#bsBlockSize.set(sizeBytes);
      this.#bsLatestHeight.set(height);
      this.#lastBlockTimeNs = block.header.time;
      return;
    }
    const s = this.#sources;
    let missing = 0;
    let missingPower = 0n;
    if (height > s.initialHeight()) {
      const signers = s.validatorsAt(height - 1);
      const own = s.ownAddress();
      const sigs = block.lastCommit.signatures;
      if (signers !== undefined && signers.size() === sigs.length) {
        const vals = signers.validators;
        for (let i = 0; i < vals.length; i++) {
          const val = vals[i];
          const sig = sigs[i];
          if (val === undefined || sig === undefined) continue;
          if (sig.blockIdFlag === BLOCK_ID_FLAG.absent) {
            missing++;
            missingPower += val.votingPower;
          }
          if (own !== undefined && bytesEqual(val.address, own)) {
            const label = bytesToHexUpper(val.address);
            this.#validatorPower.child(label).value = Number(val.votingPower);
            if (sig.blockIdFlag === BLOCK_ID_FLAG.commit) this.#validatorLastSignedHeight.child(label).value = height;
            else this.#validatorMissedBlocks.child(label).value++;
          }
        }
      }
    }
    this.#missingValidators.set(missing);
    this.#missingValidatorsPower.set(Number(missingPower));
    let byzantine = 0;
    let byzantinePower = 0n;
    const current = s.validators();
    for (const ev of block.evidence) {
      const val = current.getByAddress(ev.voteA.validatorAddress);
      if (val === undefined) continue;
      byzantine++;
      byzantinePower += val.validator.votingPower;
    }
    this.#byzantineValidators.set(byzantine);
    this.#byzantineValidatorsPower.set(Number(byzantinePower));
    const previous = this.#lastBlockTimeNs ?? (height > 1 ? s.blockTime(height - 1) : undefined);
    if (previous !== undefined && height > 1) this.#blockInterval.observe(secondsBetween(previous, block.header.time));
    this.#lastBlockTimeNs = block.header.time;
    this.#numTxs.set(numTxs);
    this.#totalTxs.inc(numTxs);
    this.#blockSize.set(sizeBytes);
    this.#chainSize.inc(sizeBytes);
    this.#latestHeight.set(height);
  }

  // ---- mempool (MempoolMetricsHooks)

  added(sizeBytes: number): void {
    this.#txSize.observe(sizeBytes);
  }

  failed(): void {
    this.#failedTxs.inc();
  }

  rejected(reason: "full" | "too_large" | "in_cache" | "duplicate"): void {
    // Upstream counts a full mempool and a tx already in it; a tx too large or in the cache is only an error.
    if (reason === "full" || reason === "duplicate") this.#rejectedTxs.inc();
  }

  evicted(): void {
    this.#evictedTxs.inc();
  }

  rechecked(): void {
    this.#recheckTimes.inc();
  }

  // ---- p2p (PeerTraffic)

  sent(peerId: string, channelId: number, msg: Uint8Array): void {
    this.#count(this.#peerSend, this.#peerSendByPeer, peerId, channelId, msg.length);
    this.#countType(this.#messageSend, this.#messageSendByType, channelId, msg);
  }

  received(peerId: string, channelId: number, msg: Uint8Array): void {
    this.#count(this.#peerRecv, this.#peerRecvByPeer, peerId, channelId, msg.length);
    this.#countType(this.#messageRecv, this.#messageRecvByType, channelId, msg);
    // consensus_block_parts: the reactor counts each BlockPart message a peer sends (DataChannel).
    if (channelId === DATA_CHANNEL && (msg[0] ?? 0) >> 3 === BLOCK_PART_FIELD) this.#blockPartFrom(peerId).value++;
  }

  #blockPartFrom(peerId: string): ScalarChild {
    let child = this.#blockPartsByPeer.get(peerId);
    if (child === undefined) {
      child = this.#blockParts.child(peerId);
      this.#blockPartsByPeer.set(peerId, child);
    }
    return child;
  }

  #count(
    family: ScalarFamily,
    byPeer: Map<string, ChannelChildren>,
    peerId: string,
    channelId: number,
    bytes: number,
  ): void {
    let channels = byPeer.get(peerId);
    if (channels === undefined) {
      channels = [];
      byPeer.set(peerId, channels);
    }
    let child = channels[channelId];
    if (child === undefined) {
      child = family.child(peerId, `0x${channelId.toString(16)}`);
      channels[channelId] = child;
    }
    child.value += bytes;
  }

  #countType(family: ScalarFamily, byType: Map<string, ScalarChild>, channelId: number, msg: Uint8Array): void {
    const label = messageTypeLabel(channelId, msg);
    let child = byType.get(label);
    if (child === undefined) {
      child = family.child(label);
      byType.set(label, child);
    }
    child.value += msg.length;
  }

  // ---- abci (proxy/app_conn.go) and state (state/execution.go)

  /** The consensus connection's methods, timed (`type="sync"`); FinalizeBlock also feeds state_*. */
  consensusApp(app: ConsensusApp): ConsensusApp {
    const t = (method: string) => this.#abciTiming.child(method, "sync");
    const info = t("info");
    const initChain = t("init_chain");
    const prepare = t("prepare_proposal");
    const process = t("process_proposal");
    const finalize = t("finalize_block");
    const commit = t("commit");
    const timed = async <T>(child: HistogramChild, run: () => Promise<T>): Promise<T> => {
      const start = performance.now();
      try {
        return await run();
      } finally {
        child.observe((performance.now() - start) / 1000);
      }
    };
    return {
      info: () => timed(info, () => app.info()),
      initChain: (req) => timed(initChain, () => app.initChain(req)),
      prepareProposal: (req) => timed(prepare, () => app.prepareProposal(req)),
      processProposal: (req) => timed(process, () => app.processProposal(req)),
      finalizeBlock: async (req) => {
        const start = performance.now();
        let res: FinalizeBlockResponse;
        try {
          res = await app.finalizeBlock(req);
        } finally {
          const ms = performance.now() - start;
          finalize.observe(ms / 1000);
          this.#blockProcessingTime.observe(ms);
        }
        if (res.validatorUpdates.length > 0) this.#validatorSetUpdates.inc();
        if (res.consensusParamUpdates !== undefined) this.#consensusParamUpdates.inc();
        this.onFinalizeBlock?.(res);
        return res;
      },
      commit: () => timed(commit, () => app.commit()),
    };
  }

  /** The mempool connection's CheckTx, timed (`type="async"`, as the mempool calls CheckTxAsync upstream). */
  mempoolApp(app: Pick<Application, "checkTx">): Pick<Application, "checkTx"> {
    const child = this.#abciTiming.child("check_tx", "async");
    return {
      checkTx: (req: CheckTxRequest): Promise<CheckTxResponse> => {
        const start = performance.now();
        const p = app.checkTx(req);
        return p.finally(() => child.observe((performance.now() - start) / 1000));
      },
    };
  }

  // ---- store (store/store.go in CometBFT v1)

  /** Times the block store's reads and writes, replacing the methods on this instance. */
  instrumentBlockStore(store: BlockStore): void {
    const methods = {
      loadBlock: "load_block",
      loadBlockByHash: "load_block_by_hash",
      loadBlockPart: "load_block_part",
      loadBlockMeta: "load_block_meta",
      loadBlockMetaByHash: "load_block_meta_by_hash",
      loadBlockCommit: "load_block_commit",
      loadSeenCommit: "load_seen_commit",
      pruneBlocks: "prune_blocks",
      saveBlock: "save_block",
    } as const;
    const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const [name, label] of Object.entries(methods)) {
      const original = target[name];
      if (typeof original !== "function") continue;
      const fn = original.bind(store);
      const child = this.#storeAccess.child(label);
      target[name] = (...args: unknown[]) => {
        const start = performance.now();
        const result = fn(...args);
        if (result instanceof Promise) {
          return result.finally(() => child.observe((performance.now() - start) / 1000));
        }
        child.observe((performance.now() - start) / 1000);
        return result;
      };
    }
  }
}
