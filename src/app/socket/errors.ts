import { ComethError } from "../../util/errors.js";

/** The bytes on an ABCI socket are not a length-delimited message (bad length prefix, too long). */
export class AbciFrameError extends ComethError {}

/**
 * An ABCI socket connection failed: it could not be used, the application closed it, answered out
 * of order, or answered with an exception. Every request waiting on it is rejected with this error,
 * and the node stops (as CometBFT does when an ABCI client stops for an error).
 */
export class AbciConnectionError extends ComethError {
  /** Which of the four connections: consensus, mempool, query or snapshot. */
  readonly connection: string;
  constructor(connection: string, message: string, options?: ErrorOptions) {
    super(`ABCI ${connection} connection: ${message}`, options);
    this.connection = connection;
  }
}

/** The application's response is well-formed protobuf but not a valid answer (e.g. ProcessProposal status UNKNOWN). */
export class AbciResponseError extends ComethError {}
