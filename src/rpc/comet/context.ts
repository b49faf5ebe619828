import type { Logger } from "../../util/logger.js";
import type { JsonRpcId, WsSubscription } from "../jsonrpc/index.js";
import type { EventQuery, EventSubscription } from "./services.js";

/** What a route handler sees of the call besides its arguments. */

/** The [rpc] settings handlers read. */
export interface CometRouteSettings {
  readonly maxSubscriptionClients: number;
  readonly maxSubscriptionsPerClient: number;
  /** experimental_subscription_buffer_size. */
  readonly subscriptionBufferSize: number;
  /** experimental_close_on_slow_client. */
  readonly closeOnSlowClient: boolean;
  readonly timeoutBroadcastTxCommitMs: number;
  /** How long a pushed event waits for room in the connection's write queue (CometBFT: 10 s). */
  readonly subscriptionWriteWaitMs: number;
}

/** State computed once when the server starts. */
export interface CometRuntime {
  readonly settings: CometRouteSettings;
  /** Base64 chunks of the compact genesis (genesis_chunked). */
  readonly genesisChunks: readonly string[];
  readonly log: Logger;
}

/** One live WebSocket subscription; `cancel` (the connection closed) is an unsubscribe on the client's behalf. */
export interface ActiveSubscription extends WsSubscription {
  readonly query: EventQuery;
  readonly subscription: EventSubscription;
  /** Set when the client (or the server on its behalf) unsubscribed: no cancellation error is pushed. */
  closedByClient: boolean;
}

/** The WebSocket connection a call came in on. */
export interface WsSession {
  /** `ip:port`: the subscriber id for the event bus. */
  readonly remoteAddr: string;
  /** Queues a message (its JSON text), waiting up to `timeoutMs` for room; false when it could not be queued. */
  send(text: string, timeoutMs: number): Promise<boolean>;
  /** Queues a message only if there is room now. */
  trySend(text: string): boolean;
  /** Runs `fn` once the current call's reply has been queued (so pushes never overtake it). */
  afterReply(fn: () => void): void;
  /** Live subscriptions by canonical query. */
  readonly subscriptions: Map<string, ActiveSubscription>;
  isClosed(): boolean;
}

export interface CometCallContext {
  readonly transport: "uri" | "http" | "ws";
  /** The client's `ip:port` (the subscriber id of broadcast_tx_commit and subscriptions). */
  readonly remoteAddr: string;
  readonly requestId: JsonRpcId | undefined;
  readonly runtime: CometRuntime;
  readonly ws: WsSession | undefined;
}
