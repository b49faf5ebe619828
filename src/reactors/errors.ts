import { ComethError } from "../util/errors.js";

/** Base of every error the reactors throw; the switch stops the peer that caused one. */
export class ReactorError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/**
 * Bytes on a consensus channel that are not a tendermint.consensus.Message, or a message that fails
 * CometBFT's ValidateBasic (or the reactor's height / block-size checks).
 */
export class InvalidConsensusMessageError extends ReactorError {}

/** Bytes on the mempool channel that are not a tendermint.mempool.Message. */
export class InvalidMempoolMessageError extends ReactorError {}
