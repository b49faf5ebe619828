import { type BlockId, SIGNED_MSG_TYPE, type ValidatorSet, type Vote, type VoteType } from "../types/index.js";
import { InvalidVoteError, UnwantedRoundVoteError } from "./errors.js";
import { VoteSet, type VoteSetView } from "./voteSet.js";

/** Catch-up rounds a single peer may open beyond the tracked ones: its LastCommit round and the commit round. */
const MAX_PEER_CATCHUP_ROUNDS = 2;

export interface RoundVoteSet {
  prevotes: VoteSet;
  precommits: VoteSet;
}

/** One round of a HeightVoteSet as the dump shows it. */
export interface RoundVotesView {
  readonly round: number;
  readonly prevotes: VoteSetView;
  readonly precommits: VoteSetView;
}

/**
 * All vote sets of one height (consensus/types.HeightVoteSet): rounds 0..round are tracked (the
 * state machine keeps round = current + 1), plus up to two higher "catch-up" rounds per peer so a
 * lagging node can still collect a commit.
 */
export class HeightVoteSet {
  readonly chainId: string;
  readonly height: number;
  readonly valSet: ValidatorSet;
  #maxRound = 0;
  readonly #rounds = new Map<number, RoundVoteSet>();
  readonly #peerCatchupRounds = new Map<string, number[]>();

  constructor(chainId: string, height: number, valSet: ValidatorSet) {
    this.chainId = chainId;
    this.height = height;
    this.valSet = valSet;
    this.#addRound(0);
  }

  /** The highest tracked round (not counting catch-up rounds). */
  round(): number {
    return this.#maxRound;
  }

  /** Tracks rounds up to `round` (creating the missing ones from round − 1). */
  setRound(round: number): void {
    const from = Math.max(0, this.#maxRound - 1);
    if (this.#maxRound !== 0 && round < from) {
      throw new InvalidVoteError(`setRound(${round}) must not go below round ${from}`);
    }
    for (let r = from; r <= round; r++) {
      if (!this.#rounds.has(r)) this.#addRound(r);
    }
    this.#maxRound = Math.max(this.#maxRound, round);
  }

  #addRound(round: number): void {
    this.#rounds.set(round, {
      prevotes: new VoteSet(this.chainId, this.height, round, SIGNED_MSG_TYPE.prevote, this.valSet),
      precommits: new VoteSet(this.chainId, this.height, round, SIGNED_MSG_TYPE.precommit, this.valSet),
    });
  }

  /**
   * Adds a vote; a vote for an untracked round opens a catch-up round for that peer (at most two).
   * Returns what VoteSet.addVote returns; throws its errors and UnwantedRoundVoteError.
   */
  addVote(vote: Vote, peerId: string): boolean {
    if (vote.type !== SIGNED_MSG_TYPE.prevote && vote.type !== SIGNED_MSG_TYPE.precommit) return false;
    let vs = this.getVoteSet(vote.round, vote.type);
    if (vs === undefined) {
      const used = this.#peerCatchupRounds.get(peerId) ?? [];
      if (used.length >= MAX_PEER_CATCHUP_ROUNDS) throw new UnwantedRoundVoteError();
      this.#addRound(vote.round);
      this.#peerCatchupRounds.set(peerId, [...used, vote.round]);
      vs = this.getVoteSet(vote.round, vote.type);
      if (vs === undefined) return false;
    }
    return vs.addVote(vote);
  }

  prevotes(round: number): VoteSet | undefined {
    return this.getVoteSet(round, SIGNED_MSG_TYPE.prevote);
  }

  precommits(round: number): VoteSet | undefined {
    return this.getVoteSet(round, SIGNED_MSG_TYPE.precommit);
  }

  getVoteSet(round: number, type: VoteType): VoteSet | undefined {
    const rvs = this.#rounds.get(round);
    if (rvs === undefined) return undefined;
    return type === SIGNED_MSG_TYPE.prevote ? rvs.prevotes : rvs.precommits;
  }

  /** The last round with +2/3 prevotes for something, and that block id (−1 when none). */
  polInfo(): { polRound: number; polBlockId: BlockId | undefined } {
    for (let r = this.#maxRound; r >= 0; r--) {
      const id = this.prevotes(r)?.twoThirdsMajority();
      if (id !== undefined) return { polRound: r, polBlockId: id };
    }
    return { polRound: -1, polBlockId: undefined };
  }

  /** Records a peer's +2/3 claim; ignored for rounds not tracked yet. */
  setPeerMaj23(round: number, type: VoteType, peerId: string, blockId: BlockId): void {
    this.getVoteSet(round, type)?.setPeerMaj23(peerId, blockId);
  }

  /** Rounds 0..round(), as the dump lists them (catch-up rounds above are not shown, as in CometBFT). */
  view(): RoundVotesView[] {
    const out: RoundVotesView[] = [];
    for (let r = 0; r <= this.#maxRound; r++) {
      const rvs = this.#rounds.get(r);
      if (rvs === undefined) continue;
      out.push({ round: r, prevotes: rvs.prevotes.view(), precommits: rvs.precommits.view() });
    }
    return out;
  }
}
