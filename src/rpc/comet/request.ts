import {
  encodeId,
  goValueKind,
  InvalidRequestError,
  type JsonNode,
  type JsonRpcId,
  type JsonRpcRequest,
  type MessageDialect,
  PayloadError,
  parseMessage,
  parsePayload,
  type RpcPayload,
} from "../jsonrpc/index.js";

/**
 * Request decoding with CometBFT's Go semantics (rpc/jsonrpc/types RPCRequest.UnmarshalJSON): field
 * names match case-insensitively, unknown fields are ignored, `jsonrpc` is not checked, an absent or
 * null id makes a notification, a numeric id is truncated to an integer, any other id type fails.
 */

/** Why a payload is not a request (Go's wording); the server answers with a parse error. */
export { PayloadError as RequestDecodeError };

// Go's reflect name of the anonymous struct RPCRequest.UnmarshalJSON decodes into.
const REQUEST_STRUCT =
  'struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }';

/** Notifications included (id undefined); `null` as a whole payload gives none. */
export type ParsedPayload = RpcPayload;

/** CometBFT's request decoding as the core's message dialect. */
const COMET_MESSAGES: MessageDialect = {
  decode: decodeRequest,
  nullIsEmptyBatch: true,
  // Go retries an array whose items do not decode as one object, which is the error it reports.
  batchItemFailed: () => new PayloadError(`json: cannot unmarshal array into Go value of type ${REQUEST_STRUCT}`),
};

/**
 * Decodes an HTTP body: a batch (array) first, else a single object, as CometBFT does. Throws
 * {@link RequestDecodeError} with the single-object attempt's error text.
 */
export function parseRequestPayload(text: string): ParsedPayload {
  return parsePayload(text, COMET_MESSAGES);
}

/** Decodes one WebSocket frame: only its first JSON value counts (Go's json.Decoder); no batches. */
export function parseSingleRequest(text: string): JsonRpcRequest {
  return parseMessage(text, COMET_MESSAGES);
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
  if (node.kind === "null")
    return { kind: "notification", idJson: undefined, id: undefined, method: "", params: undefined };
  if (node.kind !== "object") {
    throw new PayloadError(`json: cannot unmarshal ${goValueKind(node)} into Go value of type ${REQUEST_STRUCT}`);
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
  if (firstError !== undefined) throw new PayloadError(firstError);
  if (idNode === undefined || idNode.kind === "null") {
    return { kind: "notification", idJson: undefined, id: undefined, method, params };
  }
  const id = decodeId(idNode);
  return { kind: "call", idJson: encodeId(id), id, method, params };
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
  throw new PayloadError(`json-rpc ID (${goFormatAny(node)}) is of unknown type (${typ})`);
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

/**
 * CometBFT's batch pre-check (max_request_batch_size): the error for a batch longer than `max`
 * items (0 = unlimited), or undefined when it fits.
 */
export function batchLimitError(payload: RpcPayload, max: number): InvalidRequestError | undefined {
  if (max <= 0 || !payload.batch || payload.requests.length <= max) return undefined;
  return new InvalidRequestError(`batch request exceeds maximum (${max}) allowed number of requests`);
}
