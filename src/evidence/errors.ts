import type { Evidence } from "../types/index.js";
import { ComethError } from "../util/errors.js";

/** Base of the evidence pool's errors. */
export class EvidenceError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/**
 * CometBFT ErrInvalidEvidence: the evidence fails verification (bad signature, unknown validator,
 * wrong powers or time, expired, already committed, duplicated in a block). A peer that sends it
 * is stopped; a block that carries it is invalid.
 */
export class InvalidEvidenceSubmissionError extends EvidenceError {
  readonly evidence: Evidence;
  readonly reason: string;
  constructor(evidence: Evidence, reason: string, opts: { cause?: unknown } = {}) {
    super(`invalid evidence: ${reason}`, opts);
    this.evidence = evidence;
    this.reason = reason;
  }
}

/** The pool has no chain state yet (the state store is empty: the handshake has not run). */
export class EvidencePoolNotReadyError extends EvidenceError {
  constructor() {
    super("evidence pool has no chain state yet. Run the ABCI handshake (it saves the genesis state) first");
  }
}

/**
 * Evidence for a height this node has not committed yet: it cannot be verified now (the sender is
 * ahead), which is not the sender's fault. CometBFT reports it as invalid; cometh does not punish it.
 */
export class UnverifiableEvidenceError extends EvidenceError {
  readonly height: number;
  constructor(height: number, lastBlockHeight: number) {
    super(
      `evidence from height ${height} is above the last committed height ${lastBlockHeight}. It can be verified once that block is committed`,
    );
    this.height = height;
  }
}

/** An evidence list message from a peer that does not decode or fails ValidateBasic. */
export class InvalidEvidenceMessageError extends EvidenceError {}
