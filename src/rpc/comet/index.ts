// rpc/comet/: the CometBFT v0.38 node RPC.
// Owns: the route table (every v0.38 route, its arguments, height/paging rules and error texts) on
// the shared core's method-table shape (table.ts), domain → wire encoders (cmtjson shapes,
// dump_consensus_state, event payloads), what CometBFT's transports do differently on the shared
// HTTP and WebSocket transports of rpc/jsonrpc (URI calls, the mux, X-Server-Time, the batch
// pre-check, the fast path's answers in node:http's bytes: transports/http.ts; one request per
// WebSocket frame: session.ts), `[rpc]` settings and listen addresses (transports/server.ts), and
// WebSocket subscriptions.
// Does not own: any domain logic. It reaches the node only through services.ts (structural
// interfaces that node/ satisfies with the real BlockStore, StateStore, Mempool, EventBus,
// Consensus, Application and types/ helpers).
export type {
  ActiveSubscription,
  CometCallContext,
  CometRouteSettings,
  CometRuntime,
  WsSession,
} from "./context.js";
export { encodeEventData } from "./encode/events.js";
export { toCometRpcError } from "./errors.js";
export { COMET_ROUTE_NAMES, cometRoutes } from "./routes.js";
export type * from "./services.js";
export type { PageHandler } from "./transports/http.js";
export {
  type CometRpcConfig,
  CometRpcConfigError,
  ListenAddressError,
  type RunningCometRpc,
  routesFor,
  type StartCometRpcOptions,
  startCometRpc,
} from "./transports/server.js";
