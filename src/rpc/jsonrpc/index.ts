// rpc/jsonrpc/: the JSON-RPC core both RPC servers run on.
// Owns: the envelope (messages, ids, answer encoding with Go's key order and escaping), Go-compatible
// JSON reading and writing, one error class per code, the method-table shape and dispatch, batches with
// their limits and deadlines (one sweep timer), the HTTP transport (listener with a connection
// limit, the fast path, body limit, CORS policies) and the WebSocket transport (connection
// lifecycle, read limit, ping/pong, ordered writes and backpressure, per-connection subscriptions).
// Does not own: any server's methods, params, wire encoders or error texts beyond the envelope's
// (those live in rpc/comet and rpc/evm, which configure the core).
export {
  type CallOutcome,
  type CallRunner,
  type Deadline,
  type PayloadAnswer,
  type PayloadRules,
  runPayload,
} from "./calls.js";
export { type Cors, type CorsOptions, createCors, DEFAULT_CORS } from "./cors.js";
export { DeadlineSweeper } from "./deadlineSweeper.js";
export {
  callMethod,
  isPromise,
  type MaybePromise,
  type MethodServer,
  type MethodTable,
  type RpcMethod,
} from "./dispatch.js";
export {
  encodeFailureText,
  encodeId,
  encodeResponse,
  encodeResponses,
  encodeSuccessText,
  errorResponse,
  isFailure,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcSuccess,
  type MessageDialect,
  PayloadError,
  parseMessage,
  parsePayload,
  type RpcMessage,
  type RpcPayload,
  successResponse,
} from "./envelope.js";
export {
  ExecutionRevertedError,
  errorText,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseError,
  RequestTimeoutError,
  ResponseTooLargeError,
  RpcError,
  type RpcErrorOptions,
  ServerError,
  TxSyncTimeoutError,
  TxValidationError,
} from "./errors.js";
export {
  type FastAnswer,
  type FastFallback,
  type FastHttpOptions,
  type FastMethod,
  nodeHttpAnswer,
  serveFastHttp,
  simpleAnswer,
} from "./fastHttp.js";
export {
  type ConnectionSharing,
  createPostHandler,
  type HttpTransport,
  type HttpTransportOptions,
  type PostEndpointOptions,
  readBody,
  sendText,
  serveHttp,
} from "./http.js";
export {
  compactGoJson,
  EncodedJson,
  encodeGoString,
  encodeJson,
  goQuote,
  goValueKind,
  type JsonNode,
  JsonSyntaxError,
  parseJson,
  RawJson,
  type WireValue,
} from "./json.js";
export {
  describeListenAddress,
  type LimitedListener,
  listenLimited,
  type SocketTarget,
  socketTargetOf,
} from "./limitedListener.js";
export { observeResult, observeTable, type RpcMethodObserver, type RpcObserver } from "./observe.js";
export {
  createWsTransport,
  WsConnection,
  WsFrame,
  type WsSubscription,
  type WsTransport,
  type WsTransportOptions,
} from "./ws.js";
