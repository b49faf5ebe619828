// events/: the typed event bus (CometBFT event names → payloads, composite-key event maps,
// bounded per-subscription buffers), CometBFT's query language (parser, canonical form, pubsub
// matching) and the chain epoch (chainEpoch.ts: the one "heights were reused" signal of a dev chain's
// rollback, which both RPC servers and every memo by height follow) and the one "tx included" wait
// (txInclusion.ts: broadcast_tx_commit, automined sends, eth_sendRawTransactionSync, dev cheats), and the
// one list of stores a rollback takes back (rewindRegistry.ts). Does not own: subscription limits and the wire shapes of events (rpc/), indexing and
// tx_search/block_search (indexer/), or deciding when events fire (consensus/).

export type { BinaryFloat } from "./bigDecimal.js";
export { compareBinaryFloat, parseArgumentNumber, parseAttributeNumber } from "./bigDecimal.js";
export { ChainEpoch } from "./chainEpoch.js";
export {
  AlreadySubscribedError,
  EventBusClosedError,
  InvalidCapacityError,
  QueryParseError,
  RewindRefusedError,
  SubscribeAbortedError,
  SubscriptionNotFoundError,
  TxNotIncludedError,
  TxWaitError,
  TxWaitRewoundError,
  TxWaitStoppedError,
  TxWaitTimeoutError,
} from "./errors.js";
export type { EventMap, EventType, Message, RoundStateEvent, SubscribeOptions, Subscription } from "./eventBus.js";
export {
  buildEventsMap,
  CANCEL_REASONS,
  DEFAULT_SUBSCRIPTION_CAPACITY,
  EVENT_KEYS,
  EVENT_TYPES,
  EventBus,
  eventsMapFromAbci,
} from "./eventBus.js";
export type { EventsMap, Query, QueryArg, QueryArgType, QueryCondition, QueryOp } from "./query.js";
export { parseQuery, QUERY_ARG_TYPES, QUERY_OPS, QUERY_TOKENS } from "./query.js";
export type { Rewindable } from "./rewindRegistry.js";
export { RewindRegistry } from "./rewindRegistry.js";
export type { TxIncluded, TxWait, TxWaitOptions, TxWaitOutcome } from "./txInclusion.js";
export { DEFAULT_RECENT_INCLUSIONS, TxInclusion } from "./txInclusion.js";
