import type { BitArray, Block, PartSet, PartSetHeader, Proposal, Validator, ValidatorSet } from "../types/index.js";
import type { Timestamp } from "../util/time.js";
import type { RoundVotesView } from "./heightVoteSet.js";
import {
  formatBitArray,
  formatFraction,
  formatVoteSetBitArray,
  formatVoteSetVotes,
  type VoteSetView,
} from "./voteSet.js";

export type { RoundVotesView } from "./heightVoteSet.js";
export type { PeerRoundState, PeerStateView } from "./peerState.js";
export type { VoteSetView } from "./voteSet.js";
export { formatBitArray, formatFraction, formatVoteSetBitArray, formatVoteSetVotes };

/** A validator set as the dump reads it: validators in set order and the proposer. */
export interface ValidatorSetView {
  readonly validators: readonly Validator[];
  getProposer(): Validator | undefined;
  totalVotingPower(): bigint;
}

/** A part set frozen at snapshot time (PartSet.MarshalJSON reads count/total and the bit array). */
export interface PartSetView {
  readonly total: number;
  header(): PartSetHeader;
  count(): number;
  bitArray(): BitArray;
}

/**
 * Every RoundState field of `dump_consensus_state` (docs/cometbft-rpc.md §3), in domain form. Times are Unix
 * nanoseconds; the RPC encodes it.
 */
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
  /** Rounds 0..R+1 while in round R (the next round is pre-created); only round 0 right after a new height. */
  readonly votes: readonly RoundVotesView[];
  readonly commitRound: number;
  /** Undefined at the initial height. */
  readonly lastCommit: VoteSetView | undefined;
  /** The empty set at the initial height. */
  readonly lastValidators: ValidatorSetView;
  readonly triggeredTimeoutPrecommit: boolean;
}

/** What `consensus_state` (RoundStateSimple) shows. Block hashes are empty when there is no block. */
export interface ConsensusStateView {
  readonly height: number;
  readonly round: number;
  readonly step: number;
  readonly startTime: Timestamp;
  readonly proposalBlockHash: Uint8Array;
  readonly lockedBlockHash: Uint8Array;
  readonly validBlockHash: Uint8Array;
  readonly heightVoteSet: readonly RoundVotesView[];
  readonly proposer: { readonly address: Uint8Array; readonly index: number };
}

/** One RoundVotes entry as text (consensus/types roundVotes): vote lines and `BA{..} s/t = f` summaries. */
export interface RoundVotesText {
  round: number;
  prevotes: string[];
  prevotesBitArray: string;
  precommits: string[];
  precommitsBitArray: string;
}

export function formatRoundVotes(rv: RoundVotesView): RoundVotesText {
  return {
    round: rv.round,
    prevotes: formatVoteSetVotes(rv.prevotes),
    prevotesBitArray: formatVoteSetBitArray(rv.prevotes),
    precommits: formatVoteSetVotes(rv.precommits),
    precommitsBitArray: formatVoteSetBitArray(rv.precommits),
  };
}

/** VoteSet JSON as text (last_commit): vote lines and the bit-array summary; peer claims stay domain. */
export function formatVoteSet(vs: VoteSetView): { votes: string[]; votesBitArray: string } {
  return { votes: formatVoteSetVotes(vs), votesBitArray: formatVoteSetBitArray(vs) };
}

export function validatorSetSnapshot(vs: ValidatorSet): ValidatorSetView {
  const copy = vs.copy();
  return copy;
}

export function partSetView(ps: PartSet | undefined): PartSetView | undefined {
  if (ps === undefined) return undefined;
  const header = ps.header();
  const count = ps.count();
  const bits = ps.bitArray();
  return {
    total: ps.total,
    header: () => header,
    count: () => count,
    bitArray: () => bits.copy(),
  };
}
