import { ComethError } from "../util/errors.js";

/** Errors of the event bus and the query language. Messages match CometBFT's where clients see them. */

/**
 * A query that does not parse. The message is CometBFT's, e.g. `offset 15: got tag, wanted number,
 * timestamp, datestamp or string` (libs/pubsub/query/syntax); the RPC layer prefixes it with
 * `failed to parse query: `.
 */
export class QueryParseError extends ComethError {
  /** Byte offset of the offending token in the query text. */
  readonly offset: number;
  constructor(offset: number, message: string) {
    super(message);
    this.offset = offset;
  }
}

/** libs/pubsub ErrAlreadySubscribed: the subscriber already holds this (canonical) query. */
export class AlreadySubscribedError extends ComethError {
  constructor() {
    super("already subscribed");
  }
}

/** libs/pubsub ErrSubscriptionNotFound: unsubscribe of a query (or of everything) the subscriber does not hold. */
export class SubscriptionNotFoundError extends ComethError {
  constructor() {
    super("subscription not found");
  }
}

/** Subscribing after close(); CometBFT's pubsub answers the same text once it is stopping. */
export class EventBusClosedError extends ComethError {
  constructor() {
    super("service is shutting down");
  }
}

/** A subscription buffer must hold at least one message. */
export class InvalidCapacityError extends ComethError {
  constructor(capacity: number) {
    super(`subscription capacity ${capacity} is invalid. Pass a positive integer such as 200`);
  }
}

/** subscribe() was handed an AbortSignal that had already fired. */
export class SubscribeAbortedError extends ComethError {
  constructor(cause: unknown) {
    super("subscribe aborted before it started", { cause });
  }
}

/** Why a wait for a tx's block (txInclusion.ts) ended without the block. */
export class TxWaitError extends ComethError {}

/** The wait's `timeoutMs` passed before a block included the tx. */
export class TxWaitTimeoutError extends TxWaitError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no block included the tx within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The chain went back to `height` (a dev chain's rollback) while the tx waited: its mempool was flushed. */
export class TxWaitRewoundError extends TxWaitError {
  readonly height: number;
  constructor(height: number) {
    super(`the chain was rolled back to height ${height} before a block included the tx`);
    this.height = height;
  }
}

/** The node is stopping; `reason` is what the node RPC reports ("CometBFT exited"). */
export class TxWaitStoppedError extends TxWaitError {
  readonly reason: string;
  constructor(reason: string) {
    super(`stopped waiting for the tx: ${reason}`);
    this.reason = reason;
  }
}

/**
 * The tx will not be included: `maxBlocks` blocks were committed without it ("blocks"), or the
 * wait's `stillPending` said it left the mempool ("dropped").
 */
export class TxNotIncludedError extends TxWaitError {
  readonly why: "blocks" | "dropped";
  constructor(why: "blocks" | "dropped", blocks: number) {
    super(
      why === "blocks"
        ? `${blocks} blocks were committed without the tx`
        : `the tx left the mempool without being included (after ${blocks} blocks)`,
    );
    this.why = why;
  }
}

/** A store registered as rewindable cannot go back (a psql tx indexer); nothing was touched. */
export class RewindRefusedError extends ComethError {
  readonly store: string;
  constructor(store: string, reason: string) {
    super(reason);
    this.store = store;
  }
}
