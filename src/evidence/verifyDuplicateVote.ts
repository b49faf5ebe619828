import {
  addressFromPubKey,
  blockIdEquals,
  type ConsensusParams,
  type Evidence,
  formatBlockId,
  type ValidatorSet,
  verifySignature,
  voteSignBytes,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper } from "../util/bytes.js";
import type { Timestamp } from "../util/time.js";
import { InvalidEvidenceSubmissionError } from "./errors.js";

/**
 * evidence/verify.go IsEvidenceExpired: expired only when older than BOTH max_age_num_blocks and
 * max_age_duration (measured from the last block's height and time).
 */
export function isEvidenceExpired(
  heightNow: number,
  timeNow: Timestamp,
  heightEv: number,
  timeEv: Timestamp,
  params: ConsensusParams["evidence"],
): boolean {
  const ageDurationNs = timeNow - timeEv;
  const ageNumBlocks = BigInt(heightNow - heightEv);
  return ageDurationNs > params.maxAgeDurationNs && ageNumBlocks > params.maxAgeNumBlocks;
}

/**
 * evidence/verify.go VerifyDuplicateVote: the votes share height/round/type and validator address,
 * are for different blocks, the validator is in `valSet` with the recorded power, the total power
 * matches, and both signatures verify over the chain's vote sign bytes. Throws
 * InvalidEvidenceSubmissionError with CometBFT's reason text.
 *
 * Like CometBFT, the validator index is not compared: it is not signed, and refusing evidence
 * CometBFT accepts would make this node reject blocks the rest of the network commits.
 */
export function verifyDuplicateVote(ev: Evidence, chainId: string, valSet: ValidatorSet): void {
  const { voteA: a, voteB: b } = ev;
  const fail = (reason: string): never => {
    throw new InvalidEvidenceSubmissionError(ev, reason);
  };
  const found = valSet.getByAddress(a.validatorAddress);
  if (found === undefined) {
    fail(`address ${bytesToHexUpper(a.validatorAddress)} was not a validator at height ${a.height}`);
    return;
  }
  const val = found.validator;
  if (a.height !== b.height || a.round !== b.round || a.type !== b.type) {
    fail(`h/r/s does not match: ${a.height}/${a.round}/${a.type} vs ${b.height}/${b.round}/${b.type}`);
  }
  if (!bytesEqual(a.validatorAddress, b.validatorAddress)) {
    fail(
      `validator addresses do not match: ${bytesToHexUpper(a.validatorAddress)} vs ${bytesToHexUpper(b.validatorAddress)}`,
    );
  }
  if (blockIdEquals(a.blockId, b.blockId)) {
    fail(`block IDs are the same (${formatBlockId(a.blockId)}) - not a real duplicate vote`);
  }
  const pubAddress = addressFromPubKey(val.pubKey);
  if (!bytesEqual(pubAddress, a.validatorAddress)) {
    fail(`address (${bytesToHexUpper(a.validatorAddress)}) doesn't match pubkey (${bytesToHexUpper(pubAddress)})`);
  }
  if (val.votingPower !== ev.validatorPower) {
    fail(
      `validator power from evidence and our validator set does not match (${ev.validatorPower} != ${val.votingPower})`,
    );
  }
  const total = valSet.totalVotingPower();
  if (total !== ev.totalVotingPower) {
    fail(
      `total voting power from the evidence and our validator set does not match (${ev.totalVotingPower} != ${total})`,
    );
  }
  if (!verifySignature(val.pubKey, voteSignBytes(chainId, a), a.signature)) {
    fail("verifying VoteA: invalid signature");
  }
  if (!verifySignature(val.pubKey, voteSignBytes(chainId, b), b.signature)) {
    fail("verifying VoteB: invalid signature");
  }
}
