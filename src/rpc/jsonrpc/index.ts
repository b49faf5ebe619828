// rpc/jsonrpc/: the JSON-RPC 2.0 machinery both RPC servers share.
// Owns: the envelope (ids, request decoding, response encoding with Go's key order and escaping),
// one error class per code, param codecs (cmtjson and URI rules), route tables and dispatch, batches.
// Does not own: routes, transports, HTTP statuses or any server's domain (those live in rpc/comet
// and rpc/evm).
export { type BatchOutcome, batchLimitError, runBatch } from "./batch.js";
export { DeadlineSweeper } from "./deadlineSweeper.js";
export {
  type DispatchOptions,
  type DispatchResult,
  defaultMapError,
  defineRoutes,
  dispatchRequest,
  dispatchUri,
  isCacheable,
  isPromise,
  type MaybePromise,
  type Route,
  type RouteTable,
  routeParamNames,
} from "./dispatch.js";
export {
  encodeResponse,
  encodeResponses,
  errorResponse,
  isFailure,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcSuccess,
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
} from "./errors.js";
export { type FastHttpOptions, serveFastHttp } from "./fastHttp.js";
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
export { type LimitedListener, listenLimited, type SocketTarget } from "./limitedListener.js";
export { observeResult, observeRoutes, type RpcMethodObserver, type RpcObserver } from "./observe.js";
export {
  decodeJsonParams,
  decodeUriParam,
  decodeUriParams,
  goBase64Decode,
  goHexDecode,
  type ParamCodec,
  ParamDecodeError,
  type ParamShape,
  type ParamValue,
  type ParamValues,
  p,
  type UriForm,
} from "./params.js";
export { type ParsedPayload, parseRequestPayload, parseSingleRequest, RequestDecodeError } from "./request.js";
