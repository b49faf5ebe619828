import type { Vote } from "../types/vote.js";
import { ComethError } from "../util/errors.js";

/** Base of every error consensus throws. */
export class ConsensusError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/**
 * Base of the errors caused by what a peer sent (a vote, proposal, block part or +2/3 claim):
 * consensus logs them and goes on. Any other error halts consensus.
 */
export class PeerFaultError extends ConsensusError {}

/** A vote that cannot be added: wrong height/round/type, unknown validator, bad signature, stray extension. */
export class InvalidVoteError extends PeerFaultError {}

/** Same validator, same block, different signature (types.ErrVoteNonDeterministicSignature). */
export class NonDeterministicSignatureError extends PeerFaultError {}

/** A validator signed two different blocks at one height/round/type: the material of DuplicateVoteEvidence. */
export class ConflictingVoteError extends PeerFaultError {
  readonly voteA: Vote;
  readonly voteB: Vote;
  /** True when voteB was still recorded because a peer claimed +2/3 for its block. */
  readonly added: boolean;
  constructor(voteA: Vote, voteB: Vote, added = false) {
    super(
      `conflicting votes from validator ${voteA.validatorIndex} at ${voteA.height}/${voteA.round}/${voteA.type}. ` +
        "Report them as DuplicateVoteEvidence",
    );
    this.voteA = voteA;
    this.voteB = voteB;
    this.added = added;
  }
}

/** A peer sent votes for more catch-up rounds than HeightVoteSet tracks (ErrGotVoteFromUnwantedRound). */
export class UnwantedRoundVoteError extends PeerFaultError {
  constructor() {
    super("peer has sent a vote that does not match our round for more than one round");
  }
}

/** A peer claimed two different +2/3 blocks for one vote set. */
export class ConflictingPeerMaj23Error extends PeerFaultError {}

/** A proposal that fails its checks (POL round, signature, part count). */
export class InvalidProposalError extends PeerFaultError {}

/** A block part that does not belong to the expected part set or overflows max block bytes. */
export class InvalidBlockPartError extends PeerFaultError {}

/** A block that breaks a validity rule (state/validation.go); the message says which and what was expected. */
export class InvalidBlockError extends ConsensusError {}

/** The application or the state update failed while applying a block. */
export class BlockExecutionError extends ConsensusError {}

/** The ABCI handshake could not reconcile app, block store and state. */
export class HandshakeError extends ConsensusError {}

/** app block height (A) is higher than core (C): the app is ahead of the block store. */
export class AppBlockHeightTooHighError extends HandshakeError {
  readonly appHeight: number;
  readonly coreHeight: number;
  constructor(appHeight: number, coreHeight: number) {
    super(`app block height (${appHeight}) is higher than core (${coreHeight})`);
    this.appHeight = appHeight;
    this.coreHeight = coreHeight;
  }
}

/** app block height (A) is too far below block store base (B): the blocks it needs were pruned. */
export class AppBlockHeightTooLowError extends HandshakeError {
  readonly appHeight: number;
  readonly storeBase: number;
  constructor(appHeight: number, storeBase: number) {
    super(`app block height (${appHeight}) is too far below block store base (${storeBase})`);
    this.appHeight = appHeight;
    this.storeBase = storeBase;
  }
}

/** The app hash after replay differs from the one recorded in state or in the next block. */
export class AppHashMismatchError extends HandshakeError {}

/** WAL bytes that fail their checksum or do not decode; `file` names the WAL file when known. */
export class WalCorruptionError extends ConsensusError {
  file: string | undefined;
}

/**
 * The records of the height being replayed are still corrupted after the head file was repaired
 * (CometBFT's OnStart returns the replay error then): the node does not start. Names the file.
 */
export class WalRepairError extends ConsensusError {
  readonly file: string;
  constructor(message: string, file: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.file = file;
  }
}

/** Catch-up replay cannot proceed (e.g. `wal should not contain #ENDHEIGHT H`). */
export class WalReplayError extends ConsensusError {}

/** A WAL write failed; consensus halts rather than risk signing without a record. */
export class WalWriteError extends ConsensusError {}

/** Consensus found an internal invariant broken and halted (CometBFT's "CONSENSUS FAILURE!!!"). */
export class ConsensusFailureError extends ConsensusError {}

/** double_sign_check_height found this validator's signature in recent commits. */
export class DoubleSignRiskError extends ConsensusError {}
