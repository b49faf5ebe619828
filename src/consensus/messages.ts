import type { BlockId, PartSetHeader } from "../types/blockId.js";
import type { BitArray, Part } from "../types/index.js";
import type { Proposal } from "../types/proposal.js";
import type { Vote, VoteType } from "../types/vote.js";

/**
 * The consensus reactor's messages (consensus/msgs.go) in domain form. p2p encodes them; consensus
 * only produces and consumes these objects.
 */
export type ConsensusMessage =
  | ProposalMessage
  | BlockPartMessage
  | VoteMessage
  | HasVoteMessage
  | NewRoundStepMessage
  | NewValidBlockMessage
  | ProposalPolMessage
  | VoteSetMaj23Message
  | VoteSetBitsMessage;

export interface ProposalMessage {
  kind: "proposal";
  proposal: Proposal;
}

export interface BlockPartMessage {
  kind: "blockPart";
  height: number;
  round: number;
  part: Part;
}

export interface VoteMessage {
  kind: "vote";
  vote: Vote;
}

/** Tells peers which votes this node has, so they stop sending them. */
export interface HasVoteMessage {
  kind: "hasVote";
  height: number;
  round: number;
  type: VoteType;
  index: number;
}

/** Sent on every step change. */
export interface NewRoundStepMessage {
  kind: "newRoundStep";
  height: number;
  round: number;
  step: number;
  secondsSinceStartTime: number;
  lastCommitRound: number;
}

/** Sent when a valid block (polka) or the committed block's part set becomes known. */
export interface NewValidBlockMessage {
  kind: "newValidBlock";
  height: number;
  round: number;
  blockPartSetHeader: PartSetHeader;
  blockParts: BitArray;
  isCommit: boolean;
}

export interface ProposalPolMessage {
  kind: "proposalPol";
  height: number;
  proposalPolRound: number;
  proposalPol: BitArray;
}

export interface VoteSetMaj23Message {
  kind: "voteSetMaj23";
  height: number;
  round: number;
  type: VoteType;
  blockId: BlockId;
}

export interface VoteSetBitsMessage {
  kind: "voteSetBits";
  height: number;
  round: number;
  type: VoteType;
  blockId: BlockId;
  votes: BitArray;
}

/** Messages that enter the state machine's queue (and the WAL); the rest only update peer state. */
export type StateMachineMessage = ProposalMessage | BlockPartMessage | VoteMessage;

export function isStateMachineMessage(m: ConsensusMessage): m is StateMachineMessage {
  return m.kind === "proposal" || m.kind === "blockPart" || m.kind === "vote";
}
