import { type Consensus, type ConsensusMessage, type Gossip, MAX_BLOCK_SIZE_BYTES } from "../consensus/index.js";
import type { ChannelDescriptor, Peer, Reactor, ReactorSwitch } from "../p2p/reactor.js";
import { PART_SIZE_BYTES } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import { decodeConsensusMessage, encodeConsensusMessage } from "./consensusCodec.js";
import { InvalidConsensusMessageError } from "./errors.js";
import { PeerSender } from "./peerSender.js";

/** The consensus reactor's channel IDs (consensus/reactor.go). */
export const CONSENSUS_CHANNEL = { state: 0x20, data: 0x21, vote: 0x22, voteSetBits: 0x23 } as const;
export type ConsensusChannelId = (typeof CONSENSUS_CHANNEL)[keyof typeof CONSENSUS_CHANNEL];

/** maxMsgSize in consensus/reactor.go: every consensus channel's RecvMessageCapacity. */
export const CONSENSUS_MAX_MSG_BYTES = 1_048_576;

/** Which channel CometBFT sends each message kind on. */
export const CONSENSUS_MESSAGE_CHANNEL: Readonly<Record<ConsensusMessage["kind"], ConsensusChannelId>> = {
  newRoundStep: CONSENSUS_CHANNEL.state,
  newValidBlock: CONSENSUS_CHANNEL.state,
  hasVote: CONSENSUS_CHANNEL.state,
  voteSetMaj23: CONSENSUS_CHANNEL.state,
  proposal: CONSENSUS_CHANNEL.data,
  proposalPol: CONSENSUS_CHANNEL.data,
  blockPart: CONSENSUS_CHANNEL.data,
  vote: CONSENSUS_CHANNEL.vote,
  voteSetBits: CONSENSUS_CHANNEL.voteSetBits,
};

/**
 * Kinds CometBFT sends with TrySend (dropped when the queue is full): the maj23 queries and their
 * VoteSetBits answers, which are repeated anyway. Everything else is sent with a blocking Send there,
 * and consensus here marks a message as known to the peer once handed over, so those are never
 * dropped (see PeerSender).
 */
const TRY_ONLY: ReadonlySet<ConsensusMessage["kind"]> = new Set(["voteSetMaj23", "voteSetBits"]);

const CHANNELS: readonly ChannelDescriptor[] = [
  {
    id: CONSENSUS_CHANNEL.state,
    priority: 6,
    sendQueueCapacity: 100,
    recvMessageCapacity: CONSENSUS_MAX_MSG_BYTES,
    name: "consensus-state",
  },
  {
    // RecvBufferCapacity 50*4096 in CometBFT; the p2p contract has no such knob.
    id: CONSENSUS_CHANNEL.data,
    priority: 10,
    sendQueueCapacity: 100,
    recvMessageCapacity: CONSENSUS_MAX_MSG_BYTES,
    name: "consensus-data",
  },
  {
    id: CONSENSUS_CHANNEL.vote,
    priority: 7,
    sendQueueCapacity: 100,
    recvMessageCapacity: CONSENSUS_MAX_MSG_BYTES,
    name: "consensus-vote",
  },
  {
    id: CONSENSUS_CHANNEL.voteSetBits,
    priority: 1,
    sendQueueCapacity: 2,
    recvMessageCapacity: CONSENSUS_MAX_MSG_BYTES,
    name: "consensus-vote-set-bits",
  },
];

/** What the reactor uses of consensus (createConsensus's Consensus satisfies it). */
export type ConsensusPort = Pick<Consensus, "receivePeerMessage" | "addPeer" | "removePeer" | "chainState">;

export interface ConsensusReactorOptions {
  /** Messages that may wait for one peer's channel before new ones are dropped (default 10000). */
  maxPendingPerPeer?: number;
}

/** `<id>@<ip>:<port>` of the peer's socket (docs/cometbft-rpc.md §3, node_address; IPv6 in brackets). */
export function peerNodeAddress(peer: Peer): string {
  const host = peer.remoteHost.includes(":") ? `[${peer.remoteHost}]` : peer.remoteHost;
  return `${peer.id}@${host}:${peer.remotePort}`;
}

/**
 * The consensus reactor (consensus/reactor.go) as glue: consensus already keeps the per-peer state
 * and decides what to gossip; this class moves its messages over p2p. It is the Gossip consensus is
 * built with, so it exists first: until setConsensus(), incoming messages are dropped and peers are
 * only remembered (and handed over when consensus is set).
 */
export class ConsensusReactor implements Reactor, Gossip {
  readonly name = "CONSENSUS";
  readonly #log: Logger;
  readonly #sender: PeerSender;
  /** Peers the switch has added, by ID: the targets of broadcast and sendTo. */
  readonly #peers = new Map<string, Peer>();
  #consensus: ConsensusPort | undefined;
  #waitSync = false;
  #stopped = false;

  constructor(log: Logger, opts: ConsensusReactorOptions = {}) {
    this.#log = log;
    this.#sender = new PeerSender(
      log,
      opts.maxPendingPerPeer === undefined ? {} : { maxPending: opts.maxPendingPerPeer },
    );
  }

  /** Connects the consensus built with this reactor as its Gossip; known peers are added to it. */
  setConsensus(consensus: ConsensusPort): void {
    this.#consensus = consensus;
    for (const peer of this.#peers.values()) consensus.addPeer(peer.id, peerNodeAddress(peer));
  }

  /** Block sync runs first: data and vote messages are ignored until switchToConsensus() (CometBFT WaitSync). */
  waitForSync(): void {
    this.#waitSync = true;
  }

  /** True while block sync runs. */
  isWaitingForSync(): boolean {
    return this.#waitSync;
  }

  /** Block sync is done: data and vote messages are handled from now on. */
  switchToConsensus(): void {
    this.#waitSync = false;
  }

  // ---- Reactor ------------------------------------------------------------------------------------

  channels(): readonly ChannelDescriptor[] {
    return CHANNELS;
  }

  start(_sw: ReactorSwitch): void {
    this.#stopped = false;
  }

  stop(): void {
    this.#stopped = true;
    this.#sender.clear();
  }

  addPeer(peer: Peer): void {
    this.#peers.set(peer.id, peer);
    this.#consensus?.addPeer(peer.id, peerNodeAddress(peer));
  }

  removePeer(peer: Peer, _reason: unknown): void {
    this.#sender.removePeer(peer);
    // A reconnected peer with the same ID may already have replaced this one.
    if (this.#peers.get(peer.id) !== peer) return;
    this.#peers.delete(peer.id);
    this.#consensus?.removePeer(peer.id);
  }

  receive(channelId: number, peer: Peer, msg: Uint8Array): void {
    const decoded = decodeConsensusMessage(msg);
    const expected = CONSENSUS_MESSAGE_CHANNEL[decoded.kind];
    if (expected !== channelId) {
      // CometBFT logs an unknown message type for the channel and keeps the peer (soft upgrades).
      this.#log.error({ peer: peer.id, channel: channelId, kind: decoded.kind }, "consensus message on wrong channel");
      return;
    }
    const cs = this.#consensus;
    if (cs === undefined || this.#stopped) return;
    // During block sync only peer state (the State channel) is tracked, as CometBFT does.
    if (this.#waitSync && channelId !== CONSENSUS_CHANNEL.state) return;
    if (decoded.kind === "newRoundStep") validateNewRoundStepHeight(decoded, cs.chainState().initialHeight);
    if (decoded.kind === "proposal") {
      validateProposalBlockSize(decoded.proposal.blockId.partSetHeader.total, cs.chainState().consensusParams);
    }
    cs.receivePeerMessage(peer.id, decoded);
  }

  // ---- Gossip -------------------------------------------------------------------------------------

  /** Encodes once and queues the message for every peer (ordered, see PeerSender). */
  broadcast(msg: ConsensusMessage): void {
    if (this.#stopped || this.#peers.size === 0) return;
    const bytes = encodeConsensusMessage(msg);
    for (const peer of this.#peers.values()) this.#deliver(peer, msg.kind, bytes);
  }

  sendTo(peerId: string, msg: ConsensusMessage): void {
    if (this.#stopped) return;
    const peer = this.#peers.get(peerId);
    if (peer === undefined) return;
    this.#deliver(peer, msg.kind, encodeConsensusMessage(msg));
  }

  #deliver(peer: Peer, kind: ConsensusMessage["kind"], bytes: Uint8Array): void {
    const channel = CONSENSUS_MESSAGE_CHANNEL[kind];
    if (TRY_ONLY.has(kind)) {
      if (!peer.trySend(channel, bytes)) this.#log.debug({ peer: peer.id, kind }, "send queue full; dropped");
      return;
    }
    this.#sender.send(peer, channel, bytes);
  }
}

/** NewRoundStepMessage.ValidateHeight: the peer's height must fit the chain's initial height. */
function validateNewRoundStepHeight(m: { height: number; lastCommitRound: number }, initialHeight: number): void {
  const fail = (problem: string) =>
    new InvalidConsensusMessageError(`invalid NewRoundStep message: ${problem}. The peer is on another chain or buggy`);
  if (m.height < initialHeight) {
    throw fail(`invalid Height ${m.height} (lower than initial height ${initialHeight})`);
  }
  if (m.height === initialHeight && m.lastCommitRound !== -1) {
    throw fail(`invalid LastCommitRound ${m.lastCommitRound} (must be -1 for initial height ${initialHeight})`);
  }
  if (m.height > initialHeight && m.lastCommitRound < 0) {
    throw fail(`LastCommitRound can only be negative for initial height ${initialHeight}`);
  }
}

/** Proposal.ValidateBlockSize (ErrProposalTooManyParts): more parts than block.max_bytes allows. */
function validateProposalBlockSize(totalParts: number, params: { block: { maxBytes: bigint } }): void {
  const maxBytes = params.block.maxBytes === -1n ? BigInt(MAX_BLOCK_SIZE_BYTES) : params.block.maxBytes;
  const maxParts = (maxBytes - 1n) / BigInt(PART_SIZE_BYTES) + 1n;
  if (BigInt(totalParts) > maxParts) {
    throw new InvalidConsensusMessageError(
      `proposal has too many parts ${totalParts} (max: ${maxParts}). The peer proposed a block over block.max_bytes`,
    );
  }
}
