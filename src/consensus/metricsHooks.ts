import type { Proposal, ValidatorSet, Vote, VoteType } from "../types/index.js";
import type { RoundStep } from "./roundStep.js";

/**
 * What the state machine reports for CometBFT's consensus metrics (consensus/metrics.go), at the
 * places upstream records them. node/ implements it when `[instrumentation] prometheus` is on;
 * without it nothing is called. Each call is O(1) except `finalizing` and `precommitWaitTimedOut`,
 * which run once per height or per timeout.
 */
export interface ConsensusMetricsHooks {
  /**
   * updateRoundStep (not during WAL replay): the round/step before and after, and the height's
   * start time (ns). Upstream marks a round when the round changes or round 0 starts, and a step
   * when the step changes (MarkRound, MarkStep).
   */
  roundStep(prevRound: number, prevStep: RoundStep, round: number, step: RoundStep, startTimeNs: bigint): void;
  /** A vote for an earlier height, or an earlier round of this height (MarkLateVote). */
  lateVote(type: VoteType): void;
  /** A vote that was already there (DuplicateVote). */
  duplicateVote(): void;
  /** A vote of this height was added; its power counts over `validators` (MarkVoteReceived). */
  voteReceived(vote: Vote, validators: ValidatorSet): void;
  /** This node signed a proposal (ProposalCreateCount). */
  proposalCreated(): void;
  /** ProcessProposal answered (MarkProposalProcessed). */
  proposalProcessed(accepted: boolean): void;
  /**
   * A proposal block part arrived (BlockGossipPartsReceived, DuplicateBlockPart): `matchesCurrent`
   * when it belongs to the block being gathered, `added` false for a duplicate of a matching part.
   */
  blockPartReceived(matchesCurrent: boolean, added: boolean): void;
  /** timeout_precommit fired in PrecommitWait: the round's precommits (emitPrecommitTimeoutMetrics). */
  precommitWaitTimedOut(precommits: readonly Vote[], validators: ValidatorSet): void;
  /** finalizeCommit: the proposal and the votes of the commit round (quorum and full-prevote delays). */
  finalizing(
    proposal: Proposal | undefined,
    prevotes: readonly Vote[],
    precommits: readonly Vote[],
    validators: ValidatorSet,
  ): void;
}
