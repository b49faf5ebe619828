import type { RpcError } from "./errors.js";
import { encodeGoString, encodeJson, type JsonNode, type WireValue } from "./json.js";

/** A request id as echoed: a string stays a string, a number becomes an integer (bigint keeps int64 exact). */
export type JsonRpcId = string | bigint;

/** One decoded request. `id` undefined means a notification (not executed, not answered). */
export interface JsonRpcRequest {
  readonly id: JsonRpcId | undefined;
  readonly method: string;
  /** The raw `params` value; undefined when absent. */
  readonly params: JsonNode | undefined;
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

function encodeId(id: JsonRpcId): string {
  return typeof id === "string" ? encodeGoString(id) : id.toString();
}

/** Compact wire text, keys in the order jsonrpc, id, result|error; empty `data` is left out. */
export function encodeResponse(res: JsonRpcResponse): string {
  let out = '{"jsonrpc":"2.0"';
  if (res.id !== undefined) out += `,"id":${encodeId(res.id)}`;
  if (isFailure(res)) {
    const { code, message, data } = res.error;
    out += `,"error":{"code":${code},"message":${encodeGoString(message)}`;
    if (data !== undefined && data !== "") out += `,"data":${encodeJson(data as WireValue)}`;
    out += "}";
  } else {
    out += `,"result":${encodeJson(res.result)}`;
  }
  return `${out}}`;
}

/** A batch answer: one object when there is exactly one response, else an array (`unwrapSingle`). */
export function encodeResponses(responses: readonly JsonRpcResponse[], opts: { unwrapSingle: boolean }): string {
  const [only] = responses;
  if (opts.unwrapSingle && responses.length === 1 && only !== undefined) return encodeResponse(only);
  return `[${responses.map(encodeResponse).join(",")}]`;
}
