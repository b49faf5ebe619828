import {
  BitArray,
  type PartSetHeader,
  type Proposal,
  SIGNED_MSG_TYPE,
  type Vote,
  type VoteType,
} from "../types/index.js";
import type { Timestamp } from "../util/time.js";
import { GO_ZERO_TIME } from "../util/time.js";
import type {
  HasVoteMessage,
  NewRoundStepMessage,
  NewValidBlockMessage,
  ProposalPolMessage,
  VoteSetBitsMessage,
} from "./messages.js";
import { compareHrs } from "./roundStep.js";

/** What this node knows of a peer's round state (consensus/types.PeerRoundState). */
export interface PeerRoundState {
  height: number;
  round: number;
  step: number;
  startTime: Timestamp;
  proposal: boolean;
  proposalBlockPartSetHeader: PartSetHeader;
  proposalBlockParts: BitArray | undefined;
  proposalPolRound: number;
  proposalPol: BitArray | undefined;
  prevotes: BitArray | undefined;
  precommits: BitArray | undefined;
  lastCommitRound: number;
  lastCommit: BitArray | undefined;
  catchupCommitRound: number;
  catchupCommit: BitArray | undefined;
}

export interface PeerStats {
  votes: number;
  blockParts: number;
}

/** A peer in the dump: `<id>@<ip>:<port>`, its round state (undefined before any message) and stats. */
export interface PeerStateView {
  readonly nodeAddress: string;
  readonly roundState: Readonly<PeerRoundState> | undefined;
  readonly stats: Readonly<PeerStats>;
}

function emptyPartSetHeader(): PartSetHeader {
  return { total: 0, hash: new Uint8Array(0) };
}

/**
 * A peer's consensus state (consensus/reactor.go PeerState), updated from its messages. It decides
 * nothing; gossip reads it to know what the peer still lacks.
 */
export class PeerState {
  readonly peerId: string;
  nodeAddress: string;
  /** False until the first NewRoundStep (the dump shows `peer_state: null` until then). */
  #known = false;
  readonly prs: PeerRoundState = {
    height: 0,
    round: -1,
    step: 0,
    startTime: GO_ZERO_TIME,
    proposal: false,
    proposalBlockPartSetHeader: emptyPartSetHeader(),
    proposalBlockParts: undefined,
    proposalPolRound: -1,
    proposalPol: undefined,
    prevotes: undefined,
    precommits: undefined,
    lastCommitRound: -1,
    lastCommit: undefined,
    catchupCommitRound: -1,
    catchupCommit: undefined,
  };
  readonly stats: PeerStats = { votes: 0, blockParts: 0 };

  constructor(peerId: string, nodeAddress: string) {
    this.peerId = peerId;
    this.nodeAddress = nodeAddress;
  }

  setHasProposal(p: Proposal): void {
    const prs = this.prs;
    if (prs.height !== p.height || prs.round !== p.round || prs.proposal) return;
    prs.proposal = true;
    if (prs.proposalBlockParts !== undefined) return; // set by NewValidBlock
    prs.proposalBlockPartSetHeader = p.blockId.partSetHeader;
    prs.proposalBlockParts = new BitArray(p.blockId.partSetHeader.total);
    prs.proposalPolRound = p.polRound;
    prs.proposalPol = undefined;
  }

  initProposalBlockParts(header: PartSetHeader): void {
    if (this.prs.proposalBlockParts !== undefined) return;
    this.prs.proposalBlockPartSetHeader = header;
    this.prs.proposalBlockParts = new BitArray(header.total);
  }

  setHasProposalBlockPart(height: number, round: number, index: number): void {
    const prs = this.prs;
    if (prs.height !== height || prs.round !== round) return;
    if (prs.proposalBlockParts !== undefined && index < prs.proposalBlockParts.size)
      prs.proposalBlockParts.set(index, true);
  }

  /** Allocates the vote bit arrays for `height` (or its last commit) once the validator count is known. */
  ensureVoteBitArrays(height: number, numValidators: number): void {
    const prs = this.prs;
    if (prs.height === height) {
      prs.prevotes ??= new BitArray(numValidators);
      prs.precommits ??= new BitArray(numValidators);
      prs.catchupCommit ??= new BitArray(numValidators);
      prs.proposalPol ??= new BitArray(numValidators);
    } else if (prs.height === height + 1) {
      prs.lastCommit ??= new BitArray(numValidators);
    }
  }

  ensureCatchupCommitRound(height: number, round: number, numValidators: number): void {
    const prs = this.prs;
    if (prs.height !== height || prs.catchupCommitRound === round) return;
    prs.catchupCommitRound = round;
    prs.catchupCommit = round === prs.round ? prs.precommits : new BitArray(numValidators);
  }

  setHasVote(vote: Vote): void {
    this.#setHasVoteAt(vote.height, vote.round, vote.type, vote.validatorIndex);
  }

  #setHasVoteAt(height: number, round: number, type: VoteType, index: number): void {
    const ba = this.voteBitArray(height, round, type);
    if (ba !== undefined && index >= 0 && index < ba.size) ba.set(index, true);
  }

  /** The bit array tracking the peer's votes of that kind, if this node tracks it. */
  voteBitArray(height: number, round: number, type: VoteType): BitArray | undefined {
    const prs = this.prs;
    const prevote = type === SIGNED_MSG_TYPE.prevote;
    if (prs.height === height) {
      if (prs.round === round) return prevote ? prs.prevotes : prs.precommits;
      if (prs.catchupCommitRound === round) return prevote ? undefined : prs.catchupCommit;
      if (prs.proposalPolRound === round) return prevote ? prs.proposalPol : undefined;
      return undefined;
    }
    if (prs.height === height + 1 && prs.lastCommitRound === round) return prevote ? undefined : prs.lastCommit;
    return undefined;
  }

  applyNewRoundStep(msg: NewRoundStepMessage, nowNs: bigint): void {
    const prs = this.prs;
    if (this.#known && compareHrs(msg.height, msg.round, msg.step, prs.height, prs.round, prs.step) <= 0) return;
    this.#known = true;
    const psHeight = prs.height;
    const psRound = prs.round;
    const psCatchupCommitRound = prs.catchupCommitRound;
    const psCatchupCommit = prs.catchupCommit;
    const lastPrecommits = prs.precommits;
    prs.height = msg.height;
    prs.round = msg.round;
    prs.step = msg.step;
    prs.startTime = nowNs - BigInt(Math.trunc(msg.secondsSinceStartTime)) * 1_000_000_000n;
    if (psHeight !== msg.height || psRound !== msg.round) {
      prs.proposal = false;
      prs.proposalBlockPartSetHeader = emptyPartSetHeader();
      prs.proposalBlockParts = undefined;
      prs.proposalPolRound = -1;
      prs.proposalPol = undefined;
      prs.prevotes = undefined;
      prs.precommits = undefined;
    }
    if (psHeight === msg.height && psRound !== msg.round && msg.round === psCatchupCommitRound) {
      prs.precommits = psCatchupCommit;
    }
    if (psHeight !== msg.height) {
      prs.lastCommitRound = msg.lastCommitRound;
      prs.lastCommit = psHeight + 1 === msg.height && psRound === msg.lastCommitRound ? lastPrecommits : undefined;
      prs.catchupCommitRound = -1;
      prs.catchupCommit = undefined;
    }
  }

  applyNewValidBlock(msg: NewValidBlockMessage): void {
    const prs = this.prs;
    if (prs.height !== msg.height) return;
    if (prs.round !== msg.round && !msg.isCommit) return;
    prs.proposalBlockPartSetHeader = msg.blockPartSetHeader;
    prs.proposalBlockParts = msg.blockParts.copy();
  }

  applyProposalPol(msg: ProposalPolMessage): void {
    const prs = this.prs;
    if (prs.height !== msg.height || prs.proposalPolRound !== msg.proposalPolRound) return;
    prs.proposalPol = msg.proposalPol.copy();
  }

  applyHasVote(msg: HasVoteMessage): void {
    if (this.prs.height !== msg.height) return;
    this.#setHasVoteAt(msg.height, msg.round, msg.type, msg.index);
  }

  /** `ours`: the votes this node has for msg.blockId (undefined when it does not track them). */
  applyVoteSetBits(msg: VoteSetBitsMessage, ours: BitArray | undefined): void {
    const votes = this.voteBitArray(msg.height, msg.round, msg.type);
    if (votes === undefined) return;
    for (let i = 0; i < votes.size; i++) {
      const theirs = i < msg.votes.size && msg.votes.get(i);
      const keep = ours === undefined ? false : votes.get(i) && !(i < ours.size && ours.get(i));
      votes.set(i, keep || theirs);
    }
  }

  view(): PeerStateView {
    const copy = (b: BitArray | undefined) => b?.copy();
    const prs = this.prs;
    return {
      nodeAddress: this.nodeAddress,
      roundState: this.#known
        ? {
            ...prs,
            proposalBlockPartSetHeader: { ...prs.proposalBlockPartSetHeader },
            proposalBlockParts: copy(prs.proposalBlockParts),
            proposalPol: copy(prs.proposalPol),
            prevotes: copy(prs.prevotes),
            precommits: copy(prs.precommits),
            lastCommit: copy(prs.lastCommit),
            catchupCommit: copy(prs.catchupCommit),
          }
        : undefined,
      stats: { ...this.stats },
    };
  }
}
