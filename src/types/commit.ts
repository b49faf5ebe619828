/**
 * Commit and CommitSig logic that needs no encoding: the empty commit, a CommitSig's vote, and
 * types.Commit.ValidateBasic. Hashing a commit is in block.ts (it needs protoCodec.ts).
 */
import { ComethError } from "../util/errors.js";
import { GO_ZERO_TIME } from "../util/time.js";
import { isZeroBlockId, zeroBlockId } from "./blockId.js";
import { BLOCK_ID_FLAG, type Commit, type CommitSig } from "./blockTypes.js";
import { ADDRESS_SIZE } from "./keys.js";
import { MAX_SIGNATURE_SIZE, SIGNED_MSG_TYPE, type Vote } from "./vote.js";

/** A commit fails types.Commit.ValidateBasic; the message is CometBFT's. */
export class InvalidCommitError extends ComethError {}

/** The LastCommit of a block at the initial height: height 0, round 0, zero BlockId, no signatures. */
export function emptyCommit(): Commit {
  return { height: 0, round: 0, blockId: zeroBlockId(), signatures: [] };
}

/**
 * types.Commit.GetVote: the precommit a CommitSig stands for. Flag commit uses the commit's
 * BlockId; nil and absent use the zero BlockId (docs/cometbft-hashes.md "Commit verification").
 */
export function commitSigToVote(commit: Commit, index: number): Vote {
  const sig = commit.signatures[index];
  if (!sig)
    throw new InvalidCommitError(`no commit signature at index ${index} (commit has ${commit.signatures.length})`);
  return {
    type: SIGNED_MSG_TYPE.precommit,
    height: commit.height,
    round: commit.round,
    blockId: sig.blockIdFlag === BLOCK_ID_FLAG.commit ? commit.blockId : zeroBlockId(),
    timestamp: sig.timestamp,
    validatorAddress: sig.validatorAddress,
    validatorIndex: index,
    signature: sig.signature,
    extension: new Uint8Array(0),
    extensionSignature: new Uint8Array(0),
  };
}

/** An absent slot: flag absent, no address, no signature, Go's zero time. */
export function absentCommitSig(): CommitSig {
  return {
    blockIdFlag: BLOCK_ID_FLAG.absent,
    validatorAddress: new Uint8Array(0),
    timestamp: GO_ZERO_TIME,
    signature: new Uint8Array(0),
  };
}

/** types.CommitSig.ValidateBasic as a message, or undefined when the sig is well formed. */
export function commitSigProblem(cs: CommitSig): string | undefined {
  const flag: number = cs.blockIdFlag;
  if (flag !== BLOCK_ID_FLAG.absent && flag !== BLOCK_ID_FLAG.commit && flag !== BLOCK_ID_FLAG.nil) {
    return `unknown BlockIDFlag: ${flag}`;
  }
  if (flag === BLOCK_ID_FLAG.absent) {
    if (cs.validatorAddress.length !== 0) return "validator address is present";
    if (cs.timestamp !== GO_ZERO_TIME) return "time is present";
    if (cs.signature.length !== 0) return "signature is present";
    return undefined;
  }
  if (cs.validatorAddress.length !== ADDRESS_SIZE) {
    return `expected ValidatorAddress size to be ${ADDRESS_SIZE} bytes, got ${cs.validatorAddress.length} bytes`;
  }
  if (cs.signature.length === 0) return "signature is missing";
  if (cs.signature.length > MAX_SIGNATURE_SIZE) return `signature is too big (max: ${MAX_SIGNATURE_SIZE})`;
  return undefined;
}

/** types.Commit.ValidateBasic. Throws InvalidCommitError. */
export function validateCommitBasic(c: Commit): void {
  if (c.height < 0) throw new InvalidCommitError("negative Height");
  if (c.round < 0) throw new InvalidCommitError("negative Round");
  if (c.height >= 1) {
    if (isZeroBlockId(c.blockId)) throw new InvalidCommitError("commit cannot be for nil block");
    if (c.signatures.length === 0) throw new InvalidCommitError("no signatures in commit");
    c.signatures.forEach((s, i) => {
      const p = commitSigProblem(s);
      if (p) throw new InvalidCommitError(`wrong CommitSig #${i}: ${p}`);
    });
  }
}
