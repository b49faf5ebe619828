import {
  type CallRunner,
  callMethod,
  compactGoJson,
  type Deadline,
  encodeFailureText,
  encodeGoString,
  encodeJson,
  isPromise,
  type JsonNode,
  type MaybePromise,
  type MessageDialect,
  type MethodServer,
  observeResult,
  type PayloadAnswer,
  PayloadError,
  type PayloadRules,
  parsePayload,
  type RpcError,
  type RpcMessage,
  type RpcPayload,
  runPayload,
  type WireValue,
  type WsConnection,
  type WsFrame,
  type WsSubscription,
} from "../jsonrpc/index.js";
import type { EvmCallContext, EvmRuntime, SubscriptionSink, UnservedMark } from "./context.js";
import {
  internalError,
  invalidRequest,
  notificationsUnsupported,
  parseError,
  requestTimedOut,
  responseTooLarge,
  toEvmRpcError,
} from "./errors.js";
import { forkHistoryCall } from "./forkHistory.js";
import { ForwardToMainError } from "./forward.js";
import { decodeArgs, type Method } from "./method.js";
import { findMethod } from "./namespaces/index.js";
import type { EvmServices } from "./services.js";

/**
 * The Ethereum JSON-RPC server's calls on the shared core (rpc/jsonrpc/calls.ts, dispatch.ts),
 * with geth's envelope (rpc/json.go, handler.handleBatch/handleMsg): a message is a call when it
 * has `"jsonrpc":"2.0"`, a method and an id that is not an object or array; without an id it is a
 * notification (run, not answered). The id is echoed byte for byte (numbers, strings and null
 * alike). Anything else is -32600 "invalid request". Batches answer in request order without the
 * notifications; an empty batch is one "empty batch" error; more than batch-request-limit items is
 * one "batch too large" error carrying the first call's id. Once the answered results pass
 * batch-response-max-size, the remaining calls get -32003; once the deadline passes, -32002.
 */

/** The id of answers that have none (parse errors, invalid messages). */
const NULL_ID = "null";

function decodeMessage(node: JsonNode): RpcMessage {
  if (node.kind === "null") return { kind: "invalid", idJson: NULL_ID, id: undefined, method: "", params: undefined };
  if (node.kind !== "object") throw new PayloadError(`cannot decode ${node.kind} as a JSON-RPC message`);
  let version: string | undefined;
  let method = "";
  let id: JsonNode | undefined;
  let params: JsonNode | undefined;
  for (const [rawKey, value] of node.entries) {
    // encoding/json matches field names case-insensitively.
    const key = rawKey.toLowerCase();
    if (key === "jsonrpc" || key === "method") {
      if (value.kind === "null") continue;
      if (value.kind !== "string") throw new PayloadError(`field ${rawKey} must be a string`);
      if (key === "jsonrpc") version = value.value;
      else method = value.value;
    } else if (key === "id") id = value;
    else if (key === "params") params = value;
  }
  const validId = id !== undefined && id.kind !== "object" && id.kind !== "array";
  const idJson = validId ? compactGoJson((id as JsonNode).raw) : NULL_ID;
  const kind: RpcMessage["kind"] =
    version !== "2.0" || method === "" ? "invalid" : id === undefined ? "notification" : validId ? "call" : "invalid";
  return { kind, idJson, id: undefined, method, params };
}

/** geth's request decoding as the core's message dialect (a payload that is not JSON, or a field of the wrong type, is a parse error). */
const GETH_MESSAGES: MessageDialect = {
  decode: decodeMessage,
  nullIsEmptyBatch: false,
  batchItemFailed: undefined,
  decodeBatchItem: decodeBatchItem,
};

/** geth's parseMessage reads each batch item on its own and ignores its errors: an item that is not an object is invalid. */
function decodeBatchItem(node: JsonNode): RpcMessage {
  if (node.kind === "object" || node.kind === "null") return decodeMessage(node);
  return { kind: "invalid", idJson: NULL_ID, id: undefined, method: "", params: undefined };
}

/** `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…[,"data":…]}}`. */
export function encodeFailure(idJson: string | undefined, err: RpcError): string {
  return encodeFailureText(idJson ?? NULL_ID, err, false);
}

/** `{"jsonrpc":"2.0","id":…,"result":…}` from already encoded result JSON. */
function encodeSuccess(idJson: string | undefined, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${idJson ?? NULL_ID},"result":${resultJson}}`;
}

/** `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":…,"result":…}}`. */
export function encodeNotification(subscription: string, result: WireValue): string {
  return `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":${encodeGoString(subscription)},"result":${encodeJson(result)}}}`;
}

/** What a call arrives with: its transport and, over WebSocket, its connection's side for eth_subscribe. */
export interface EvmRequest {
  readonly transport: "http" | "ws";
  readonly sink: SubscriptionSink | undefined;
  /** In a read process: marked when a call needs the main process (EvmCallContext.unserved). */
  readonly unserved?: UnservedMark;
}

/** Every HTTP call's request: nothing per request. */
export const HTTP_REQUEST: EvmRequest = { transport: "http", sink: undefined };

type EvmCalls = MethodServer<EvmServices, EvmCallContext, Method, EvmRequest>;

/**
 * WebSocket only, guard, params and handler, observed together (metrics count a call whose params
 * do not decode as a failed call of its method).
 */
function runMethod(m: Method, msg: RpcMessage, ctx: EvmCallContext, services: EvmServices): MaybePromise<WireValue> {
  if (m.wsOnly === true && ctx.transport !== "ws") throw notificationsUnsupported();
  m.guard?.(services, ctx);
  const args = decodeArgs(m, msg.params);
  if (services.dev !== undefined) {
    // A forked dev chain's history before the fork is its source's.
    const routed = forkHistoryCall(msg, args, services, (a) => m.run(a, services, ctx));
    if (routed !== undefined) return routed;
  }
  return m.run(args, services, ctx);
}

function evmCalls(services: EvmServices, runtime: EvmRuntime): EvmCalls {
  const observer = runtime.observer;
  return {
    services,
    context: (msg, request) =>
      request.unserved === undefined
        ? { method: msg.method, transport: request.transport, runtime, sink: request.sink }
        : { method: msg.method, transport: request.transport, runtime, sink: request.sink, unserved: request.unserved },
    find: (msg) => {
      // A dev chain logs each method, as Anvil does.
      services.dev?.onRequest(msg.method);
      return findMethod(msg.method, runtime.settings.namespaces);
    },
    // The params are decoded in `run`, after the WebSocket-only check and the guard.
    decode: (_m, msg) => msg,
    run: (m, _args, ctx, msg) => {
      if (observer === undefined) return runMethod(m, msg, ctx, services);
      // Only methods the server serves are observed: the names stay bounded.
      const mo = observer.method(msg.method);
      const start = performance.now();
      let result: MaybePromise<WireValue>;
      try {
        result = runMethod(m, msg, ctx, services);
      } catch (err) {
        mo.done(start, true);
        throw err;
      }
      return observeResult(mo, start, result);
    },
    mapError: (err, msg, ctx) => {
      if (err instanceof ForwardToMainError && ctx?.unserved !== undefined) ctx.unserved.hit = true;
      const rpcErr = toEvmRpcError(err);
      if (rpcErr.code === -32000 || rpcErr.code === -32603) {
        runtime.log.debug({ method: msg.method, err }, "EVM RPC call failed");
      }
      return rpcErr;
    },
    encodeSuccess,
    encodeFailure,
    encodeFailed: (err) => internalError(`could not encode the result: ${(err as Error).message}`, err),
  };
}

export interface EvmPayloadLimits {
  /** 0 = unlimited. */
  readonly batchRequestLimit: number;
  /** 0 = unlimited. */
  readonly batchResponseMaxSize: number;
}

/** Runs HTTP bodies and WebSocket frames. */
export interface EvmPayloads {
  /** The answer text, or undefined when there is nothing to send (notifications only). */
  answer(text: string, request: EvmRequest, deadline: Deadline): MaybePromise<string | undefined>;
  /**
   * A read process's answer (node/evm/readProcess.ts): as `answer`, or FORWARD when the payload
   * names a method outside `methods` or one of its calls needed what only the main process has
   * (ForwardToMainError); then nothing of it was sent and the main process answers all of it.
   */
  answerHere(
    text: string,
    deadline: Deadline,
    methods: ReadonlySet<string>,
  ): MaybePromise<string | undefined | typeof FORWARD>;
}

/** A payload's requests, or the parse-error answer (-32700) to text that is not JSON-RPC at all. */
function parseOrFailure(text: string): RpcPayload | string {
  try {
    return parsePayload(text, GETH_MESSAGES);
  } catch (err) {
    if (err instanceof PayloadError) return encodeFailure(NULL_ID, parseError());
    throw err;
  }
}

/** See EvmPayloads.answerHere. */
export const FORWARD: unique symbol = Symbol("answered by the main process");

function firstCallId(payload: RpcPayload): string | undefined {
  return payload.requests.find((m) => m.kind === "call")?.idJson;
}

function answerText(a: PayloadAnswer): string | undefined {
  return a.text;
}

function noop(): void {}

export function evmPayloads(services: EvmServices, runtime: EvmRuntime, limits: EvmPayloadLimits): EvmPayloads {
  const calls = evmCalls(services, runtime);
  const runner: CallRunner<EvmRequest> = {
    call: (msg, request) => callMethod(calls, msg, request),
    notify: (msg, request) => {
      const out = callMethod(calls, msg, request);
      return isPromise(out) ? out.then(noop) : undefined;
    },
    invalid: (msg) => encodeFailure(msg.idJson, invalidRequest()),
    failure: encodeFailure,
  };
  const rules: PayloadRules = {
    emptyBatch: () => invalidRequest("empty batch"),
    batchTooLarge: (payload) => `[${encodeFailure(firstCallId(payload), invalidRequest("batch too large"))}]`,
    batchLimit: limits.batchRequestLimit,
    responseLimit:
      limits.batchResponseMaxSize > 0 ? { maxBytes: limits.batchResponseMaxSize, error: responseTooLarge } : undefined,
    timedOut: requestTimedOut,
    unwrapSingle: false,
  };
  return {
    answer(text, request, deadline) {
      const payload = parseOrFailure(text);
      if (typeof payload === "string") return payload;
      const a = runPayload(payload, runner, request, rules, deadline);
      return isPromise(a) ? a.then(answerText) : a.text;
    },
    answerHere(text, deadline, methods) {
      const payload = parseOrFailure(text);
      if (typeof payload === "string") return payload;
      for (const m of payload.requests) if (m.kind !== "invalid" && !methods.has(m.method)) return FORWARD;
      const unserved: UnservedMark = { hit: false };
      const request: EvmRequest = { transport: "http", sink: undefined, unserved };
      const a = runPayload(payload, runner, request, rules, deadline);
      if (!isPromise(a)) return unserved.hit ? FORWARD : a.text;
      return a.then((done) => (unserved.hit ? FORWARD : done.text));
    },
  };
}

/** A WebSocket frame's side for eth_subscribe: pushes go to the connection, deferred work to the frame. */
export class FrameSink implements SubscriptionSink {
  readonly #conn: WsConnection;
  readonly #frame: WsFrame;

  constructor(conn: WsConnection, frame: WsFrame) {
    this.#conn = conn;
    this.#frame = frame;
  }

  get subscriptions(): Map<string, WsSubscription> {
    return this.#conn.subscriptions;
  }

  notify(subscription: string, result: WireValue): boolean {
    return this.#conn.trySend(encodeNotification(subscription, result));
  }

  afterReply(fn: () => void): void {
    this.#frame.afterReply(fn);
  }
}
