import {
  BitArray,
  BLOCK_ID_FLAG,
  type BlockId,
  type Commit,
  commitSigToVote,
  makePartSet,
  type PartSet,
  type Proposal,
  SIGNED_MSG_TYPE,
  type ValidatorSet,
  type Vote,
  type VoteType,
} from "../types/index.js";
import { bytesEqual } from "../util/bytes.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import type { Timestamp } from "../util/time.js";
import type { BlockStoreAccess, Gossip } from "./deps.js";
import { ConflictingPeerMaj23Error } from "./errors.js";
import type { HeightVoteSet } from "./heightVoteSet.js";
import {
  type ConsensusMessage,
  isStateMachineMessage,
  type NewRoundStepMessage,
  type StateMachineMessage,
} from "./messages.js";
import { PeerState, type PeerStateView } from "./peerState.js";
import { ROUND_STEP, type RoundStep } from "./roundStep.js";
import type { VoteSet } from "./voteSet.js";

/**
 * Peer gossip: the consensus reactor's part of consensus (CometBFT consensus/reactor.go). It keeps
 * what each peer is known to have (PeerState), answers peers' messages about their state, announces
 * this node's steps, votes and valid blocks, and on every peer_gossip_sleep_duration sends each peer
 * what it lacks. It decides nothing about the round: it reads the state machine's round state and
 * hands peers' proposals, parts and votes to the state machine's queue. p2p only moves the messages
 * (reactors/consensusReactor.ts encodes them).
 *
 * The parts, by their reactor.go names:
 * - peers: addPeer (AddPeer + the first NewRoundStep), removePeer, peerStateViews
 * - receive (Receive): peer-state bookkeeping, VoteSetMaj23 answers, hand-off to the queue
 * - broadcasts: broadcastNewRoundStep, broadcastNewValidBlock, broadcastHasVote, broadcastOwn
 * - the gossip pass (gossipDataRoutine + gossipVotesRoutine, one pass per peer per tick):
 *   gossipDataForHeight, gossipVotesForHeight, gossipVotesForCatchup, gossipDataForCatchup, sendVotes
 * (queryMaj23Routine has no counterpart here: this node never sends VoteSetMaj23, it only answers it.)
 */

/** The round state gossip reads (ConsensusState's public RoundState fields). */
export interface GossipRoundState {
  readonly height: number;
  readonly round: number;
  readonly step: RoundStep;
  readonly startTime: Timestamp;
  readonly validators: ValidatorSet;
  readonly proposal: Proposal | undefined;
  readonly proposalBlockParts: PartSet | undefined;
  /** Also written: a peer's +2/3 claim is recorded in it (SetPeerMaj23). */
  readonly votes: HeightVoteSet;
  readonly commitRound: number;
  readonly lastCommit: VoteSet | undefined;
}

/** What gossip asks of the state machine besides its round state. */
export interface GossipHost {
  /** start() ran. */
  started(): boolean;
  /** stop() ran. */
  stopped(): boolean;
  /** Consensus halted (CONSENSUS FAILURE). */
  halted(): boolean;
  /** The WAL is being replayed: what is replayed is not news to peers. */
  replaying(): boolean;
  /** Queues a peer's proposal, block part or vote for the state machine. */
  enqueue(peerId: string, msg: StateMachineMessage): void;
}

export interface PeerGossipDeps {
  /** The transport (p2p); without one nothing is sent and no gossip pass runs. */
  transport: Gossip | undefined;
  blockStore: BlockStoreAccess;
  clock: Clock;
  log: Logger;
  /** peer_gossip_sleep_duration (ms): how often peers are sent what they lack; <= 0 turns the pass off. */
  sleepMs: number;
}

/** A source of votes to gossip: a VoteSet or a stored commit. */
interface VoteSource {
  height: number;
  round: number;
  type: VoteType;
  size(): number;
  isCommit(): boolean;
  bitArray(): BitArray;
  getByIndex(i: number): Vote | undefined;
}

function commitVoteSource(commit: Commit): VoteSource {
  const bits = new BitArray(commit.signatures.length);
  commit.signatures.forEach((s, i) => {
    if (s.blockIdFlag !== BLOCK_ID_FLAG.absent) bits.set(i, true);
  });
  return {
    height: commit.height,
    round: commit.round,
    type: SIGNED_MSG_TYPE.precommit,
    size: () => commit.signatures.length,
    isCommit: () => true,
    bitArray: () => bits.copy(),
    getByIndex: (i) =>
      commit.signatures[i] !== undefined && commit.signatures[i]?.blockIdFlag !== BLOCK_ID_FLAG.absent
        ? commitSigToVote(commit, i)
        : undefined,
  };
}

/** makeRoundStepMessage: our height, round and step, for peers to know what we lack. */
export function newRoundStepMessage(rs: GossipRoundState, now: Timestamp): NewRoundStepMessage {
  const elapsedNs = now - rs.startTime;
  return {
    kind: "newRoundStep",
    height: rs.height,
    round: rs.round,
    step: rs.step,
    secondsSinceStartTime: Number(elapsedNs / 1_000_000_000n),
    lastCommitRound: rs.lastCommit?.round ?? -1,
  };
}

export class PeerGossip {
  readonly #deps: PeerGossipDeps;
  readonly #rs: GossipRoundState;
  readonly #host: GossipHost;
  readonly #peers = new Map<string, PeerState>();
  #cancelTick: (() => void) | undefined;

  constructor(deps: PeerGossipDeps, rs: GossipRoundState, host: GossipHost) {
    this.#deps = deps;
    this.#rs = rs;
    this.#host = host;
  }

  // ---------------------------------------------------------------------------------------------
  // Peers

  /** A peer connected: it gets our round step right away. */
  addPeer(peerId: string, nodeAddress = ""): void {
    // A new connection starts from scratch: nothing sent before is assumed received.
    this.#peers.set(peerId, new PeerState(peerId, nodeAddress));
    if (this.#host.started() && !this.#host.stopped()) this.#sendTo(peerId, this.#newRoundStepMessage());
  }

  removePeer(peerId: string): void {
    this.#peers.delete(peerId);
  }

  /** How many peers are connected. */
  peerCount(): number {
    return this.#peers.size;
  }

  peerStateViews(): PeerStateView[] {
    return [...this.#peers.values()].map((p) => p.view());
  }

  // ---------------------------------------------------------------------------------------------
  // Receive

  /** A message from a peer: peer-state bookkeeping now; proposals, parts and votes go to the queue. */
  receive(peerId: string, msg: ConsensusMessage): void {
    if (this.#host.stopped() || this.#host.halted()) return;
    let ps = this.#peers.get(peerId);
    if (ps === undefined) {
      ps = new PeerState(peerId, "");
      this.#peers.set(peerId, ps);
    }
    const rs = this.#rs;
    switch (msg.kind) {
      case "newRoundStep":
        ps.applyNewRoundStep(msg, this.#deps.clock.nowNs());
        if (this.#host.started()) this.gossipToPeer(ps);
        return;
      case "newValidBlock":
        ps.applyNewValidBlock(msg);
        return;
      case "hasVote":
        ps.applyHasVote(msg);
        return;
      case "proposalPol":
        ps.applyProposalPol(msg);
        return;
      case "voteSetMaj23":
        this.#answerVoteSetMaj23(peerId, msg.height, msg.round, msg.type, msg.blockId);
        return;
      case "voteSetBits": {
        const ours =
          msg.height === rs.height
            ? rs.votes.getVoteSet(msg.round, msg.type)?.bitArrayByBlockId(msg.blockId)
            : undefined;
        ps.applyVoteSetBits(msg, ours);
        return;
      }
      case "proposal":
        ps.setHasProposal(msg.proposal);
        break;
      case "blockPart":
        ps.setHasProposalBlockPart(msg.height, msg.round, msg.part.index);
        break;
      case "vote":
        ps.ensureVoteBitArrays(rs.height, rs.validators.size());
        if (rs.lastCommit !== undefined) ps.ensureVoteBitArrays(rs.height - 1, rs.lastCommit.size());
        ps.setHasVote(msg.vote);
        break;
    }
    if (isStateMachineMessage(msg)) this.#host.enqueue(peerId, msg);
  }

  /** The state machine added a peer's vote or block part: it counts in the peer's stats. */
  recordAdded(peerId: string, msg: StateMachineMessage): void {
    const ps = this.#peers.get(peerId);
    if (ps === undefined) return;
    if (msg.kind === "vote") ps.stats.votes++;
    else if (msg.kind === "blockPart") ps.stats.blockParts++;
  }

  /** VoteSetMaj23: records the peer's +2/3 claim and answers with the votes we have for that block. */
  #answerVoteSetMaj23(peerId: string, height: number, round: number, type: VoteType, blockId: BlockId): void {
    const rs = this.#rs;
    if (height !== rs.height) return;
    try {
      rs.votes.setPeerMaj23(round, type, peerId, blockId);
    } catch (err) {
      if (err instanceof ConflictingPeerMaj23Error) {
        this.#deps.log.info({ peer: peerId, err: err.message }, "conflicting +2/3 claim");
        return;
      }
      throw err;
    }
    const votes = rs.votes.getVoteSet(round, type)?.bitArrayByBlockId(blockId) ?? new BitArray(rs.validators.size());
    this.#sendTo(peerId, { kind: "voteSetBits", height, round, type, blockId, votes });
  }

  // ---------------------------------------------------------------------------------------------
  // Broadcasts

  /** Our round step, to every peer (after each step change, and once at start). */
  broadcastNewRoundStep(): void {
    this.#broadcast(this.#newRoundStepMessage());
  }

  /** NewValidBlock: the part set header of the block we now wait for (a polka or a commit for it). */
  broadcastNewValidBlock(isCommit: boolean): void {
    const rs = this.#rs;
    const parts = rs.proposalBlockParts;
    if (parts === undefined || this.#host.replaying()) return;
    this.#broadcast({
      kind: "newValidBlock",
      height: rs.height,
      round: rs.round,
      blockPartSetHeader: parts.header(),
      blockParts: parts.bitArray(),
      isCommit,
    });
  }

  /** HasVote: peers stop sending a vote we have. */
  broadcastHasVote(vote: Vote): void {
    this.#broadcast({
      kind: "hasVote",
      height: vote.height,
      round: vote.round,
      type: vote.type,
      index: vote.validatorIndex,
    });
  }

  /** Own proposals, parts and votes go to every peer once in the WAL (and are marked as sent). */
  broadcastOwn(msg: StateMachineMessage): void {
    if (this.#host.replaying()) return;
    this.#broadcast(msg);
    for (const ps of this.#peers.values()) {
      if (msg.kind === "proposal") ps.setHasProposal(msg.proposal);
      else if (msg.kind === "blockPart") ps.setHasProposalBlockPart(msg.height, msg.round, msg.part.index);
      else ps.setHasVote(msg.vote);
    }
  }

  #newRoundStepMessage(): NewRoundStepMessage {
    return newRoundStepMessage(this.#rs, this.#deps.clock.nowNs());
  }

  #broadcast(msg: ConsensusMessage): void {
    try {
      this.#deps.transport?.broadcast(msg);
    } catch (err) {
      this.#deps.log.error({ err, kind: msg.kind }, "gossip broadcast failed");
    }
  }

  #sendTo(peerId: string, msg: ConsensusMessage): void {
    const g = this.#deps.transport;
    if (g === undefined) return;
    try {
      if (g.sendTo !== undefined) g.sendTo(peerId, msg);
      else g.broadcast(msg);
    } catch (err) {
      this.#deps.log.error({ err, kind: msg.kind, peer: peerId }, "gossip send failed");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The gossip pass

  /** Starts the pass every peer_gossip_sleep_duration (none without a transport). */
  start(): void {
    const every = this.#deps.sleepMs;
    if (this.#deps.transport === undefined || every <= 0) return;
    const tick = () => {
      if (this.#host.stopped() || this.#host.halted()) return;
      for (const ps of this.#peers.values()) this.gossipToPeer(ps);
      this.#cancelTick = this.#deps.clock.schedule(every, tick);
    };
    this.#cancelTick = this.#deps.clock.schedule(every, tick);
  }

  stop(): void {
    this.#cancelTick?.();
  }

  /**
   * Sends a peer what it lacks (gossipDataRoutine + gossipVotesRoutine, one pass): the proposal and
   * its parts, the committed block of a lagging peer's height, and votes it has not seen.
   */
  gossipToPeer(ps: PeerState): void {
    if (this.#host.replaying() || this.#host.stopped() || this.#host.halted()) return;
    const prs = ps.prs;
    if (prs.height === 0) return;
    if (prs.height < this.#rs.height) {
      this.#gossipVotesForCatchup(ps);
      this.#gossipDataForCatchup(ps);
      return;
    }
    if (prs.height !== this.#rs.height) return;
    this.#gossipDataForHeight(ps);
    this.#gossipVotesForHeight(ps);
  }

  /** A peer at our height: the proposal of our round (with its POL), then the parts it lacks. */
  #gossipDataForHeight(ps: PeerState): void {
    const rs = this.#rs;
    const prs = ps.prs;
    const proposal = rs.proposal;
    if (proposal !== undefined && prs.round === rs.round && !prs.proposal) {
      this.#sendTo(ps.peerId, { kind: "proposal", proposal });
      ps.setHasProposal(proposal);
      if (proposal.polRound >= 0) {
        const pol = rs.votes.prevotes(proposal.polRound)?.bitArray();
        if (pol !== undefined) {
          this.#sendTo(ps.peerId, {
            kind: "proposalPol",
            height: rs.height,
            proposalPolRound: proposal.polRound,
            proposalPol: pol,
          });
        }
      }
    }
    const parts = rs.proposalBlockParts;
    if (
      parts !== undefined &&
      prs.proposalBlockParts !== undefined &&
      parts.hasHeader(prs.proposalBlockPartSetHeader)
    ) {
      for (const i of parts.bitArray().sub(prs.proposalBlockParts).trueIndices()) {
        const part = parts.getPart(i);
        if (part === undefined) continue;
        this.#sendTo(ps.peerId, { kind: "blockPart", height: rs.height, round: prs.round, part });
        ps.setHasProposalBlockPart(rs.height, prs.round, i);
      }
    }
  }

  /** A peer at our height (gossipVotesForHeight): the votes it lacks of the rounds it can use. */
  #gossipVotesForHeight(ps: PeerState): void {
    const rs = this.#rs;
    const prs = ps.prs;
    if (prs.step === ROUND_STEP.newHeight && rs.lastCommit !== undefined) this.#sendVotes(ps, rs.lastCommit);
    if (prs.round !== -1 && prs.round <= rs.round) {
      const pv = rs.votes.prevotes(prs.round);
      const pc = rs.votes.precommits(prs.round);
      if (pv !== undefined) this.#sendVotes(ps, pv);
      if (pc !== undefined) this.#sendVotes(ps, pc);
    }
    if (prs.proposalPolRound !== -1) {
      const pol = rs.votes.prevotes(prs.proposalPolRound);
      if (pol !== undefined) this.#sendVotes(ps, pol);
    }
    // The commit round, when we are committing in another round than the peer's.
    if (rs.commitRound >= 0 && rs.commitRound !== prs.round) {
      const pc = rs.votes.precommits(rs.commitRound);
      if (pc !== undefined) this.#sendVotes(ps, pc);
    }
  }

  /** A peer at an older height: the commit that decided its height. */
  #gossipVotesForCatchup(ps: PeerState): void {
    const h = ps.prs.height;
    const store = this.#deps.blockStore;
    if (h + 1 === this.#rs.height && this.#rs.lastCommit !== undefined) this.#sendVotes(ps, this.#rs.lastCommit);
    else {
      const commit =
        h === store.height() ? store.loadSeenCommit(h) : (store.loadBlockCommit(h) ?? store.loadSeenCommit(h));
      if (commit !== undefined) this.#sendVotes(ps, commitVoteSource(commit));
    }
  }

  /** A peer at an older height (gossipDataForCatchup): the parts it lacks of the block stored for it. */
  #gossipDataForCatchup(ps: PeerState): void {
    const prs = ps.prs;
    const h = prs.height;
    const store = this.#deps.blockStore;
    if (h < store.base()) return;
    const meta = store.loadBlockMeta(h);
    if (meta === undefined) return;
    ps.initProposalBlockParts(meta.blockId.partSetHeader);
    const have = prs.proposalBlockParts;
    const want = meta.blockId.partSetHeader;
    const theirs = prs.proposalBlockPartSetHeader;
    if (have === undefined || theirs.total !== want.total || !bytesEqual(theirs.hash, want.hash)) return;
    let parts: PartSet | undefined;
    for (let i = 0; i < meta.blockId.partSetHeader.total; i++) {
      if (have.get(i)) continue;
      let part = store.loadBlockPart?.(h, i);
      if (part === undefined) {
        if (parts === undefined) {
          const block = store.loadBlock(h);
          if (block === undefined) return;
          parts = makePartSet(block);
        }
        part = parts.getPart(i);
      }
      if (part === undefined) continue;
      this.#sendTo(ps.peerId, { kind: "blockPart", height: h, round: prs.round, part });
      have.set(i, true);
    }
  }

  /** Sends the votes of `votes` the peer is not known to have (PickSendVote, all at once). */
  #sendVotes(ps: PeerState, votes: VoteSource): void {
    if (votes.size() === 0) return;
    if (votes.isCommit()) ps.ensureCatchupCommitRound(votes.height, votes.round, votes.size());
    ps.ensureVoteBitArrays(votes.height, votes.size());
    const theirs = ps.voteBitArray(votes.height, votes.round, votes.type);
    if (theirs === undefined) return;
    for (const i of votes.bitArray().sub(theirs).trueIndices()) {
      const vote = votes.getByIndex(i);
      if (vote === undefined) continue;
      this.#sendTo(ps.peerId, { kind: "vote", vote });
      theirs.set(i, true);
    }
  }
}
