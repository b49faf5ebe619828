import { ComethError } from "../../util/errors.js";
import type { RpcError } from "./errors.js";
import { encodeGoString, encodeJson, type JsonNode, JsonSyntaxError, parseJson, type WireValue } from "./json.js";

/** A request id as echoed: a string stays a string, a number becomes an integer (bigint keeps int64 exact). */
export type JsonRpcId = string | bigint;

/**
 * One message of a payload, as either server's request decoding leaves it: a call (answered), a
 * notification (run or skipped, never answered) or, for geth, an invalid message (answered with
 * -32600).
 */
export interface RpcMessage {
  readonly kind: "call" | "notification" | "invalid";
  /** The id as the answer writes it (JSON text); undefined: the answer has no id (CometBFT's notifications, parse errors). */
  readonly idJson: string | undefined;
  /** The decoded id (CometBFT: subscriptions answer with it); undefined for a notification and for geth. */
  readonly id: JsonRpcId | undefined;
  readonly method: string;
  /** The raw `params` value; undefined when absent. */
  readonly params: JsonNode | undefined;
}

/** A decoded HTTP body or WebSocket frame. */
export interface RpcPayload {
  /** True when the payload was a JSON array (even with one element). */
  readonly batch: boolean;
  /** Notifications included. */
  readonly requests: readonly RpcMessage[];
}

/** A CometBFT request: `id` undefined means a notification (not executed, not answered). */
export type JsonRpcRequest = RpcMessage;

/**
 * A body or frame that is not JSON, or whose messages the server cannot read; the message is the
 * server's wording (CometBFT puts it in its parse error's data).
 */
export class PayloadError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}

/** How a server reads the messages of a payload: its request decoding rules. */
export interface MessageDialect {
  /** One message of the payload; throws {@link PayloadError} when the server cannot read it. */
  readonly decode: (node: JsonNode) => RpcMessage;
  /** `null` as the whole payload is an empty batch (CometBFT). */
  readonly nullIsEmptyBatch: boolean;
  /** The error reported for a batch one of whose items cannot be read; undefined: that item's own. */
  readonly batchItemFailed: (() => PayloadError) | undefined;
  /** One item of a batch, when the server reads those otherwise than a lone message. */
  readonly decodeBatchItem?: (node: JsonNode) => RpcMessage;
}

function parseRoot(text: string, firstValueOnly: boolean): JsonNode {
  try {
    return parseJson(text, { firstValueOnly });
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new PayloadError(err.message, { cause: err });
    throw err;
  }
}

/** Decodes an HTTP body (or a geth WebSocket frame): a batch when the top level is an array. */
export function parsePayload(text: string, dialect: MessageDialect): RpcPayload {
  const root = parseRoot(text, false);
  if (root.kind === "null" && dialect.nullIsEmptyBatch) return { batch: true, requests: [] };
  if (root.kind !== "array") return { batch: false, requests: [dialect.decode(root)] };
  if (dialect.batchItemFailed === undefined) {
    return { batch: true, requests: root.items.map(dialect.decodeBatchItem ?? dialect.decode) };
  }
  try {
    return { batch: true, requests: root.items.map(dialect.decode) };
  } catch (err) {
    if (!(err instanceof PayloadError)) throw err;
    throw dialect.batchItemFailed();
  }
}

/** Decodes one message from a frame of which only the first JSON value counts (Go's json.Decoder); no batches. */
export function parseMessage(text: string, dialect: MessageDialect): RpcMessage {
  return dialect.decode(parseRoot(text, true));
}

export interface JsonRpcSuccess {
  readonly id: JsonRpcId | undefined;
  readonly result: WireValue;
}

export interface JsonRpcFailure {
  /** Left out of the wire object when undefined (parse errors, batch-limit and body-read errors). */
  readonly id: JsonRpcId | undefined;
  readonly error: RpcError;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

export function isFailure(r: JsonRpcResponse): r is JsonRpcFailure {
  return "error" in r;
}

export function successResponse(id: JsonRpcId | undefined, result: WireValue): JsonRpcSuccess {
  return { id, result };
}

export function errorResponse(id: JsonRpcId | undefined, error: RpcError): JsonRpcFailure {
  return { id, error };
}

/** A decoded id as the answer writes it. */
export function encodeId(id: JsonRpcId): string {
  return typeof id === "string" ? encodeGoString(id) : id.toString();
}

function idPart(idJson: string | undefined): string {
  return idJson === undefined ? '{"jsonrpc":"2.0"' : `{"jsonrpc":"2.0","id":${idJson}`;
}

/** `{"jsonrpc":"2.0"[,"id":…],"result":…}` from already encoded result JSON. */
export function encodeSuccessText(idJson: string | undefined, resultJson: string): string {
  return `${idPart(idJson)},"result":${resultJson}}`;
}

/**
 * `{"jsonrpc":"2.0"[,"id":…],"error":{"code":…,"message":…[,"data":…]}}`; `data` is left out when
 * undefined, and when empty with `omitEmptyData` (CometBFT).
 */
export function encodeFailureText(idJson: string | undefined, err: RpcError, omitEmptyData: boolean): string {
  let out = `${idPart(idJson)},"error":{"code":${err.code},"message":${encodeGoString(err.message)}`;
  const data = err.data;
  if (data !== undefined && !(omitEmptyData && data === "")) out += `,"data":${encodeJson(data as WireValue)}`;
  return `${out}}}`;
}

/** Compact wire text, keys in the order jsonrpc, id, result|error; empty `data` is left out. */
export function encodeResponse(res: JsonRpcResponse): string {
  const idJson = res.id === undefined ? undefined : encodeId(res.id);
  if (isFailure(res)) return encodeFailureText(idJson, res.error, true);
  return encodeSuccessText(idJson, encodeJson(res.result));
}

/** A batch answer: one object when there is exactly one response, else an array (`unwrapSingle`). */
export function encodeResponses(responses: readonly JsonRpcResponse[], opts: { unwrapSingle: boolean }): string {
  const [only] = responses;
  if (opts.unwrapSingle && responses.length === 1 && only !== undefined) return encodeResponse(only);
  return `[${responses.map(encodeResponse).join(",")}]`;
}
