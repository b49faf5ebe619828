import { compareBytes, concatBytes } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import type { Timestamp } from "../util/time.js";
import type { BlockId } from "./blockId.js";
import type { DuplicateVoteEvidence, Evidence } from "./evidenceTypes.js";
import { hashFromByteSlices, sha256 } from "./merkle.js";
import { encodeEvidenceBytes, encodePartSetHeader } from "./protoCodec.js";
import type { ValidatorSet } from "./validatorSet.js";
import { type Vote, validateVoteBasic } from "./vote.js";

// The declarations live in evidenceTypes.ts; rpc/comet imports Evidence from this file by name.
export type { DuplicateVoteEvidence, Evidence } from "./evidenceTypes.js";

/** Evidence that fails types.DuplicateVoteEvidence.ValidateBasic, or cannot be built. */
export class InvalidEvidenceError extends ComethError {}

/**
 * evidence_hash: merkle over each evidence's own proto bytes (EvidenceList.Hash,
 * docs/cometbft-hashes.md "Hashes in the header").
 */
export function evidenceHash(list: readonly Evidence[]): Uint8Array {
  return hashFromByteSlices(list.map(encodeEvidenceBytes));
}

/** One evidence's hash, sha256 of its proto bytes (Evidence.Hash(): NewEvidence events, RPC). */
export function hashEvidence(e: Evidence): Uint8Array {
  return sha256(encodeEvidenceBytes(e));
}

/** types.BlockID.Key(): hash bytes followed by the PartSetHeader proto bytes; orders the two votes. */
function blockIdSortKey(id: BlockId): Uint8Array {
  return concatBytes(id.hash, encodePartSetHeader(id.partSetHeader));
}

/** types.DuplicateVoteEvidence.ValidateBasic. Throws InvalidEvidenceError. */
export function validateEvidenceBasic(e: Evidence): void {
  for (const [name, vote] of [
    ["VoteA", e.voteA],
    ["VoteB", e.voteB],
  ] as const) {
    try {
      validateVoteBasic(vote);
    } catch (err) {
      throw new InvalidEvidenceError(`invalid ${name}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (compareBytes(blockIdSortKey(e.voteA.blockId), blockIdSortKey(e.voteB.blockId)) >= 0) {
    throw new InvalidEvidenceError("duplicate votes in invalid order");
  }
}

/**
 * types.NewDuplicateVoteEvidence: orders the votes by BlockID key and records the powers from
 * the validator set of the votes' height. `blockTime` is the time of the block at that height.
 */
export function newDuplicateVoteEvidence(
  vote1: Vote,
  vote2: Vote,
  blockTime: Timestamp,
  valSet: ValidatorSet,
): DuplicateVoteEvidence {
  const found = valSet.getByAddress(vote1.validatorAddress);
  if (!found) throw new InvalidEvidenceError("validator not in validator set");
  const first = compareBytes(blockIdSortKey(vote1.blockId), blockIdSortKey(vote2.blockId)) < 0;
  return {
    type: "duplicateVote",
    voteA: first ? vote1 : vote2,
    voteB: first ? vote2 : vote1,
    totalVotingPower: valSet.totalVotingPower(),
    validatorPower: found.validator.votingPower,
    timestamp: blockTime,
  };
}
