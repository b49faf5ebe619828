/** Errors of the event bus and the query language. Messages match CometBFT's where clients see them. */

/**
 * A query that does not parse. The message is CometBFT's, e.g. `offset 15: got tag, wanted number,
 * timestamp, datestamp or string` (libs/pubsub/query/syntax); the RPC layer prefixes it with
 * `failed to parse query: `.
 */
export class QueryParseError extends Error {
  /** Byte offset of the offending token in the query text. */
  readonly offset: number;
  constructor(offset: number, message: string) {
    super(message);
    this.name = new.target.name;
    this.offset = offset;
  }
}

/** libs/pubsub ErrAlreadySubscribed: the subscriber already holds this (canonical) query. */
export class AlreadySubscribedError extends Error {
  constructor() {
    super("already subscribed");
    this.name = new.target.name;
  }
}

/** libs/pubsub ErrSubscriptionNotFound: unsubscribe of a query (or of everything) the subscriber does not hold. */
export class SubscriptionNotFoundError extends Error {
  constructor() {
    super("subscription not found");
    this.name = new.target.name;
  }
}

/** Subscribing after close(); CometBFT's pubsub answers the same text once it is stopping. */
export class EventBusClosedError extends Error {
  constructor() {
    super("service is shutting down");
    this.name = new.target.name;
  }
}

/** A subscription buffer must hold at least one message. */
export class InvalidCapacityError extends Error {
  constructor(capacity: number) {
    super(`subscription capacity ${capacity} is invalid. Pass a positive integer such as 200`);
    this.name = new.target.name;
  }
}

/** subscribe() was handed an AbortSignal that had already fired. */
export class SubscribeAbortedError extends Error {
  constructor(cause: unknown) {
    super("subscribe aborted before it started", { cause });
    this.name = new.target.name;
  }
}
