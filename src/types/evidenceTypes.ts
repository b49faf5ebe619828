/**
 * Evidence's plain shapes. Declarations only: protoCodec.ts and the hashing and validation in
 * evidence.ts import them, never the other way.
 */
import type { Timestamp } from "../util/time.js";
import type { Vote } from "./vote.js";

export interface DuplicateVoteEvidence {
  type: "duplicateVote";
  voteA: Vote;
  voteB: Vote;
  totalVotingPower: bigint;
  validatorPower: bigint;
  timestamp: Timestamp;
}

/** Light-client attack evidence is accepted only as a type here; cometh does not produce it. */
export type Evidence = DuplicateVoteEvidence;
