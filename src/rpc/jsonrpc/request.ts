import { ComethError } from "../../util/errors.js";
import type { JsonRpcId, JsonRpcRequest } from "./envelope.js";
import { goValueKind, type JsonNode, JsonSyntaxError, parseJson } from "./json.js";

/**
 * Request decoding with CometBFT's Go semantics (rpc/jsonrpc/types RPCRequest.UnmarshalJSON): field
 * names match case-insensitively, unknown fields are ignored, `jsonrpc` is not checked, an absent or
 * null id makes a notification, a numeric id is truncated to an integer, any other id type fails.
 */

/** Why a payload is not a request (Go's wording); the server answers with a parse error. */
export class RequestDecodeError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}

// Go's reflect name of the anonymous struct RPCRequest.UnmarshalJSON decodes into.
const REQUEST_STRUCT =
  'struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }';

export interface ParsedPayload {
  /** True when the payload was a JSON array (even with one element). */
  readonly batch: boolean;
  /** Notifications included (id undefined); `null` as a whole payload gives none. */
  readonly requests: readonly JsonRpcRequest[];
}

/**
 * Decodes an HTTP body: a batch (array) first, else a single object, as CometBFT does. Throws
 * {@link RequestDecodeError} with the single-object attempt's error text.
 */
export function parseRequestPayload(text: string): ParsedPayload {
  let root: JsonNode;
  try {
    root = parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new RequestDecodeError(err.message, { cause: err });
    throw err;
  }
  if (root.kind === "null") return { batch: true, requests: [] };
  if (root.kind === "array") {
    try {
      return { batch: true, requests: root.items.map(decodeRequest) };
    } catch (err) {
      if (!(err instanceof RequestDecodeError)) throw err;
      // Go then retries the array as one object, which is the error it reports.
      throw new RequestDecodeError(`json: cannot unmarshal array into Go value of type ${REQUEST_STRUCT}`);
    }
  }
  return { batch: false, requests: [decodeRequest(root)] };
}

/** Decodes one WebSocket frame: only its first JSON value counts (Go's json.Decoder); no batches. */
export function parseSingleRequest(text: string): JsonRpcRequest {
  let root: JsonNode;
  try {
    root = parseJson(text, { firstValueOnly: true });
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new RequestDecodeError(err.message, { cause: err });
    throw err;
  }
  return decodeRequest(root);
}

const FIELDS = ["jsonrpc", "id", "method", "params"] as const;
type Field = (typeof FIELDS)[number];

function matchField(key: string): Field | undefined {
  for (const f of FIELDS) if (f === key) return f;
  const lower = key.toLowerCase();
  for (const f of FIELDS) if (f === lower) return f;
  return undefined;
}

function decodeRequest(node: JsonNode): JsonRpcRequest {
  if (node.kind === "null") return { id: undefined, method: "", params: undefined };
  if (node.kind !== "object") {
    throw new RequestDecodeError(`json: cannot unmarshal ${goValueKind(node)} into Go value of type ${REQUEST_STRUCT}`);
  }
  let method = "";
  let idNode: JsonNode | undefined;
  let params: JsonNode | undefined;
  let firstError: string | undefined;
  for (const [key, value] of node.entries) {
    const field = matchField(key);
    if (field === undefined) continue;
    if (field === "jsonrpc" || field === "method") {
      if (value.kind === "string") {
        if (field === "method") method = value.value;
      } else if (value.kind !== "null") {
        firstError ??= `json: cannot unmarshal ${goValueKind(value)} into Go struct field .${field} of type string`;
      }
    } else if (field === "id") {
      idNode = value;
      if (value.kind === "number" && !Number.isFinite(Number(value.raw))) {
        firstError ??= `json: cannot unmarshal number ${value.raw} into Go struct field .id of type float64`;
      }
    } else {
      params = value;
    }
  }
  if (firstError !== undefined) throw new RequestDecodeError(firstError);
  if (idNode === undefined || idNode.kind === "null") return { id: undefined, method, params };
  return { id: decodeId(idNode), method, params };
}

const INT64_MIN = -(1n << 63n);

function decodeId(node: JsonNode): JsonRpcId {
  if (node.kind === "string") return node.value;
  if (node.kind === "number") {
    // Go: float64 then int(); out-of-range conversions give math.MinInt64 on amd64.
    const f = Math.trunc(Number(node.raw));
    if (Math.abs(f) >= 2 ** 63) return INT64_MIN;
    return BigInt(f);
  }
  const typ = node.kind === "bool" ? "bool" : node.kind === "object" ? "map[string]interface {}" : "[]interface {}";
  throw new RequestDecodeError(`json-rpc ID (${goFormatAny(node)}) is of unknown type (${typ})`);
}

/** Go's `%v` of a scalar decoded into interface{}. */
function goFormatScalar(node: JsonNode): string {
  switch (node.kind) {
    case "null":
      return "<nil>";
    case "bool":
      return String(node.value);
    case "number": {
      const n = Number(node.raw);
      if (n !== 0 && (Math.abs(n) >= 1e21 || Math.abs(n) < 1e-4)) {
        return n.toExponential().replace(/e([+-])(\d)$/, "e$10$2");
      }
      return String(n);
    }
    case "string":
      return node.value;
    default:
      return "";
  }
}

/**
 * Go's `%v` of a value decoded into interface{} (maps print sorted keys). Iterative: an id may nest
 * as deep as the parser allows (MAX_JSON_DEPTH).
 */
function goFormatAny(root: JsonNode): string {
  let out = "";
  // Work items: a node to print, or text to append once the nodes before it are printed.
  const todo: (JsonNode | string)[] = [root];
  while (todo.length > 0) {
    const item = todo.pop() as JsonNode | string;
    if (typeof item === "string") {
      out += item;
      continue;
    }
    if (item.kind === "array") {
      out += "[";
      todo.push("]");
      for (let i = item.items.length - 1; i >= 0; i--) {
        todo.push(item.items[i] as JsonNode);
        if (i > 0) todo.push(" ");
      }
    } else if (item.kind === "object") {
      const m = new Map<string, JsonNode>();
      for (const [k, v] of item.entries) m.set(k, v);
      const keys = [...m.keys()].sort();
      out += "map[";
      todo.push("]");
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        todo.push(m.get(k) as JsonNode, `${k}:`);
        if (i > 0) todo.push(" ");
      }
    } else {
      out += goFormatScalar(item);
    }
  }
  return out;
}
