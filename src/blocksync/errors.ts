import { ComethError } from "../util/errors.js";

/** Base of every error block sync raises. */
export class BlocksyncError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** Bytes on the blocksync channel that are not a valid tendermint.blocksync.Message (ValidateMsg). */
export class InvalidBlocksyncMessageError extends BlocksyncError {}

/**
 * A peer misbehaved (unrequested or wrong block, timeout, shrinking range, block that fails
 * verification); the reactor hands it to the switch's stopPeerForError.
 */
export class BlocksyncPeerError extends BlocksyncError {
  readonly peerId: string;
  constructor(peerId: string, message: string, opts: { cause?: unknown } = {}) {
    super(`error with peer ${peerId}: ${message}`, opts);
    this.peerId = peerId;
  }
}

/** The block store and the chain state disagree on the last height (CometBFT panics here). */
export class StoreStateMismatchError extends BlocksyncError {
  constructor(stateHeight: number, storeHeight: number) {
    super(
      `state (${stateHeight}) and block store (${storeHeight}) height mismatch. ` +
        "Run the ABCI handshake before block sync so stores, state and app agree",
    );
  }
}

/** Saving or applying a verified block failed: this node cannot go on syncing (CometBFT panics). */
export class BlocksyncApplyError extends BlocksyncError {}
