import { ComethError } from "../../../util/errors.js";
import {
  compactGoJson,
  encodeGoString,
  encodeJson,
  type JsonNode,
  JsonSyntaxError,
  parseJson,
  type RpcError,
  type WireValue,
} from "../../jsonrpc/index.js";

/**
 * geth's JSON-RPC envelope (rpc/json.go): a message is a call when it has `"jsonrpc":"2.0"`, a
 * method and an id that is not an object or array; without an id it is a notification (run, not
 * answered). The id is echoed byte for byte (numbers, strings and null alike). Anything else is
 * -32600 "invalid request".
 */

export type MessageKind = "call" | "notification" | "invalid";

export interface EvmMessage {
  readonly kind: MessageKind;
  /** Raw id JSON to echo ("null" when absent or unusable). */
  readonly id: string;
  readonly method: string;
  readonly params: JsonNode | undefined;
}

export interface EvmPayload {
  readonly batch: boolean;
  readonly messages: readonly EvmMessage[];
}

/** The payload is not JSON, or a message has a field of the wrong JSON type (geth: parse error). */
export class PayloadParseError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}

/** The id of answers that have none (parse errors, invalid messages). */
export const NULL_ID = "null";

function decodeMessage(node: JsonNode): EvmMessage {
  if (node.kind === "null") return { kind: "invalid", id: NULL_ID, method: "", params: undefined };
  if (node.kind !== "object") throw new PayloadParseError(`cannot decode ${node.kind} as a JSON-RPC message`);
  let version: string | undefined;
  let method = "";
  let id: JsonNode | undefined;
  let params: JsonNode | undefined;
  for (const [rawKey, value] of node.entries) {
    // encoding/json matches field names case-insensitively.
    const key = rawKey.toLowerCase();
    if (key === "jsonrpc" || key === "method") {
      if (value.kind === "null") continue;
      if (value.kind !== "string") throw new PayloadParseError(`field ${rawKey} must be a string`);
      if (key === "jsonrpc") version = value.value;
      else method = value.value;
    } else if (key === "id") id = value;
    else if (key === "params") params = value;
  }
  const validId = id !== undefined && id.kind !== "object" && id.kind !== "array";
  const idText = validId ? compactGoJson((id as JsonNode).raw) : NULL_ID;
  const kind: MessageKind =
    version !== "2.0" || method === "" ? "invalid" : id === undefined ? "notification" : validId ? "call" : "invalid";
  return { kind, id: idText, method, params };
}

/** Decodes a body or frame: a batch when the top level is an array. */
export function parsePayload(text: string): EvmPayload {
  let root: JsonNode;
  try {
    root = parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new PayloadParseError(err.message, { cause: err });
    throw err;
  }
  if (root.kind === "array") return { batch: true, messages: root.items.map(decodeMessage) };
  return { batch: false, messages: [decodeMessage(root)] };
}

/** `{"jsonrpc":"2.0","id":…,"result":…}` from already encoded result JSON. */
export function encodeSuccessText(id: string, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${resultJson}}`;
}

/** `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…[,"data":…]}}`. */
export function encodeFailure(id: string, err: RpcError): string {
  let out = `{"jsonrpc":"2.0","id":${id},"error":{"code":${err.code},"message":${encodeGoString(err.message)}`;
  if (err.data !== undefined) out += `,"data":${encodeJson(err.data as WireValue)}`;
  return `${out}}}`;
}

/** `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":…,"result":…}}`. */
export function encodeNotification(subscription: string, result: WireValue): string {
  return `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":${encodeGoString(subscription)},"result":${encodeJson(result)}}}`;
}
