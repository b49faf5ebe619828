import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { arg, type Reply, RpcTestClient, rawHttp, WsTestClient } from "../../src/rpc/comet/testing/rpcTestClient.js";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

/**
 * Generated malformed requests against a real node (consensus, LMDB, kvstore app, kv indexer) over
 * JSON-RPC POST, URI GET, WebSocket and raw TCP. Every request must get the exact answer CometBFT
 * v0.38.25 gives (docs/cometbft-rpc.md §1, §2, §4; Go's net/http, encoding/json,
 * encoding/base64, encoding/hex and gorilla/websocket behaviour), while the node keeps committing.
 *
 * The generator is deterministic (fixed seed); requests run 16 at a time with no sleeps.
 * Heights that move while the test runs are matched by pattern, everything else exactly. A bare
 * "§N" below is a section of docs/cometbft-rpc.md.
 */

// ---------------------------------------------------------------------------------------------
// Expected answers

const PARSE = { code: -32700, message: "Parse error. Invalid JSON" } as const;
const INVALID_REQUEST = { code: -32600, message: "Invalid Request" } as const;
const NOT_FOUND = { code: -32601, message: "Method not found" } as const;
const INVALID_PARAMS = { code: -32602, message: "Invalid params" } as const;
const INTERNAL = { code: -32603, message: "Internal error" } as const;

/** Go's reflect name of the anonymous struct RPCRequest.UnmarshalJSON decodes into. */
const REQUEST_STRUCT =
  'struct { JSONRPC string "json:\\"jsonrpc\\""; ID interface {} "json:\\"id,omitempty\\""; Method string "json:\\"method\\""; Params json.RawMessage "json:\\"params\\"" }';
/** The whole body of an -32600 answer (no id): compact JSON, keys in Go's order. */
const invalidRequestBody = (data: string) => JSON.stringify({ jsonrpc: "2.0", error: { ...INVALID_REQUEST, data } });
const BODY_TOO_LARGE = invalidRequestBody("error reading request body: http: request body too large");
const BATCH_TOO_LARGE = invalidRequestBody("batch request exceeds maximum (10) allowed number of requests");
/** net/http conn.serve answers to unreadable requests. */
const GO_431 =
  "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large";
const GO_400 =
  "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request";
const NOT_FOUND_PAGE = "404 page not found\n";

const MAX_BODY_BYTES = 1_000_000;

const NO_ID = Symbol("no id");

type Data = string | RegExp;

/** What the answer must be. */
type Want =
  /** A JSON-RPC error (single object). */
  | { kind: "error"; status?: number; code: number; message: string; data?: Data; id: unknown }
  /** A JSON-RPC success; `check` inspects the result. */
  | { kind: "result"; status?: number; id: unknown; check?: (result: unknown) => boolean }
  /** A batch answer: one entry per expected item. */
  | { kind: "batch"; status: number; items: readonly Want[] }
  /** An exact HTTP body (404 page, body-too-large error). */
  | { kind: "body"; status: number; body: string }
  /** No answer: an empty 200 body over HTTP, nothing over WebSocket. */
  | { kind: "none" }
  /** A raw HTTP response, byte for byte. */
  | { kind: "raw"; text: string }
  /** A raw HTTP response's status and body (its headers carry a Date). */
  | { kind: "rawHttp"; status: number; body: string }
  /** The server closes the WebSocket with this code. */
  | { kind: "close"; code: number };

type Send =
  | { via: "post"; body: string | Buffer; path?: string }
  | { via: "get"; path: string; body?: Buffer }
  | { via: "ws"; frame: string | Buffer; binary?: boolean }
  /** Raw bytes on a fresh TCP connection (headers over the limit, bad request lines). */
  | { via: "tcp"; bytes: string }
  /** Raw WebSocket frames after a handshake on a fresh connection. */
  | { via: "wsFrames"; bytes: Buffer }
  /** One big text frame on a fresh WebSocket. */
  | { via: "wsBig"; size: number };

interface Case {
  readonly name: string;
  readonly send: Send;
  readonly want: Want;
}

const err = (
  fam: { code: number; message: string },
  id: unknown,
  data?: Data,
  status?: number,
): Want & { kind: "error" } => ({
  kind: "error",
  code: fam.code,
  message: fam.message,
  id,
  ...(data === undefined ? {} : { data }),
  ...(status === undefined ? {} : { status }),
});

// ---------------------------------------------------------------------------------------------
// The generator

/** mulberry32: a small deterministic PRNG. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Go strconv.Quote's inside for one ASCII byte (json's quoteChar). */
function goQuoteChar(c: number): string {
  const named: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r" };
  if (c === 0x27) return "\\'";
  if (c === 0x5c) return "\\\\";
  if (named[c] !== undefined) return named[c];
  if (c < 0x20 || c === 0x7f) return `\\x${c.toString(16).padStart(2, "0")}`;
  return String.fromCharCode(c);
}

const HEIGHT_ROUTES = ["block", "block_results", "commit", "header", "validators", "consensus_params"] as const;
const BYTES_ROUTES = [
  ["tx", "hash"],
  ["block_by_hash", "hash"],
  ["check_tx", "tx"],
  ["broadcast_tx_sync", "tx"],
  ["broadcast_tx_async", "tx"],
  ["broadcast_tx_commit", "tx"],
] as const;

/** `%v` of a []json.RawMessage: each item's bytes. */
const goRawList = (items: readonly unknown[]) =>
  `[${items.map((i) => `[${[...Buffer.from(JSON.stringify(i))].join(" ")}]`).join(" ")}]`;

function buildCases(): Case[] {
  const rand = rng(0x5eed_c0de);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const cases: Case[] = [];
  let nextId = 100_000;
  const names = new Set<string>();
  const add = (name: string, send: Send, want: Want) => {
    const unique = names.has(name) ? `${name} #${cases.length}` : name;
    names.add(unique);
    cases.push({ name: unique, send, want });
  };
  const frame = (id: unknown, method: string, params?: unknown) =>
    JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

  /** A JSON-RPC request over POST and over WebSocket, each answering with its own id. */
  const both = (name: string, method: string, params: unknown, want: (t: "http" | "ws", id: number) => Want) => {
    for (const t of ["http", "ws"] as const) {
      const id = nextId++;
      const body = frame(id, method, params);
      add(`${t} ${name}`, t === "http" ? { via: "post", body } : { via: "ws", frame: body }, want(t, id));
    }
  };
  /** Params that do not decode: -32602 over POST (HTTP 200), -32603 over WebSocket (§1.3, §1.5). */
  const badParams = (name: string, method: string, params: unknown, detail: Data) =>
    both(name, method, params, (t, id) => {
      const data =
        typeof detail === "string"
          ? `error converting json params to arguments: ${detail}`
          : new RegExp(`^error converting json params to arguments: ${detail.source}`);
      return err(t === "http" ? INVALID_PARAMS : INTERNAL, id, data, t === "http" ? 200 : undefined);
    });
  /** The handler refuses: -32603 with its text, HTTP 200. */
  const handlerError = (name: string, method: string, params: unknown, data: Data) =>
    both(name, method, params, (t, id) => err(INTERNAL, id, data, t === "http" ? 200 : undefined));
  /** URI GET: params errors are -32602, handler errors -32603, both HTTP 500 with id -1 (§1.2). */
  const uriParams = (path: string, detail: string) => {
    const data = `error converting http params to arguments: ${detail}`;
    add(`uri ${path}`, { via: "get", path }, err(INVALID_PARAMS, -1, data, 500));
  };
  const uriHandler = (path: string, data: Data) =>
    add(`uri ${path}`, { via: "get", path }, err(INTERNAL, -1, data, 500));
  /** Undecodable bodies: HTTP 500 -32700 without id; the same frame on WebSocket. */
  const parseError = (name: string, payload: string | Buffer, http: Data, ws: Data = http, binary = false) => {
    const data = (d: Data) =>
      typeof d === "string"
        ? `error unmarshaling request: ${d}`
        : new RegExp(`^error unmarshaling request: ${d.source}`);
    add(`http ${name}`, { via: "post", body: payload }, err(PARSE, NO_ID, data(http), 500));
    add(`ws ${name}`, { via: "ws", frame: payload, binary }, err(PARSE, NO_ID, data(ws)));
  };

  // 1. Truncated requests. json.Unmarshal checks the whole input first ("unexpected end of JSON
  //    input"); the WebSocket's json.Decoder reports io.ErrUnexpectedEOF instead.
  const templates = [
    '{"jsonrpc":"2.0","id":1,"method":"block","params":{"height":"1"}}',
    '[{"jsonrpc":"2.0","id":2,"method":"health"},{"jsonrpc":"2.0","id":3,"method":"status"}]',
    '{"jsonrpc":"2.0","id":"abc","method":"tx_search","params":{"query":"tx.height > 1","page":"1"}}',
    '{"method":"broadcast_tx_sync","params":["YT1i"],"id":4}',
  ];
  for (const t of templates) {
    for (let cut = 1; cut < t.length; cut++) {
      parseError(
        `truncated@${cut} ${t.slice(0, 12)}`,
        t.slice(0, cut),
        "unexpected end of JSON input",
        "unexpected EOF",
      );
    }
  }
  // Whitespace only: empty for the decoder (EOF), incomplete for Unmarshal.
  for (const ws of [" ", "\n\t ", "\r\n"])
    parseError(`whitespace ${JSON.stringify(ws)}`, ws, "unexpected end of JSON input", "EOF");
  add("ws empty frame", { via: "ws", frame: "" }, err(PARSE, NO_ID, "error unmarshaling request: EOF"));

  // 2. Garbage whose first byte cannot start a JSON value.
  const starters = "ABCDEFGHIJKLMOPQRSUVWXYZabcdeghijklmopqrsuvwxyz!#$%&()*+,.:;<=>?@^_`|~/]}\\'";
  for (let i = 0; i < 60; i++) {
    const first = pick([...starters]);
    const rest = Array.from({ length: Math.floor(rand() * 30) }, () =>
      String.fromCharCode(32 + Math.floor(rand() * 95)),
    );
    const lead = pick(["", " ", "\n", "\t\r "]);
    const msg = `invalid character '${goQuoteChar(first.charCodeAt(0))}' looking for beginning of value`;
    parseError(`garbage#${i}`, `${lead}${first}${rest.join("")}`, msg);
  }
  for (const c of [0x00, 0x01, 0x02, 0x07, 0x08, 0x0b, 0x0c, 0x0e, 0x1b, 0x1f, 0x7f]) {
    const msg = `invalid character '${goQuoteChar(c)}' looking for beginning of value`;
    parseError(`control 0x${c.toString(16)}`, Buffer.from([c, 0x41, 0x42]), msg, msg, true);
  }
  // Bytes >= 0x80: Go names the byte as a Latin-1 rune ('ÿ', '\u0080'); our transports decode the
  // body as UTF-8 before src/rpc/jsonrpc parses it, so the character shown is U+FFFD. Code, message
  // and wording are exact; the quoted character is a known difference.
  for (let i = 0; i < 40; i++) {
    const bytes = Buffer.from([
      0x80 + Math.floor(rand() * 128),
      ...Array.from({ length: 1 + Math.floor(rand() * 40) }, () => Math.floor(rand() * 256)),
    ]);
    parseError(
      `binary#${i}`,
      bytes,
      /invalid character '.{1,6}' looking for beginning of value$/,
      /invalid character '.{1,6}' looking for beginning of value$/,
      true,
    );
  }

  // 3. JSON that is not a request object.
  for (const [text, kind] of [
    ["5", "number"],
    ["-1.5", "number"],
    ["1e300", "number"],
    ['"health"', "string"],
    ["true", "bool"],
    ["false", "bool"],
  ] as const) {
    parseError(`value ${text}`, text, `json: cannot unmarshal ${kind} into Go value of type ${REQUEST_STRUCT}`);
  }
  // A batch with one undecodable item: Go retries the array as one object (§1.3).
  for (const item of ['{"id":true,"method":"health"}', "5", '"x"', "[1]"]) {
    add(
      `http batch with ${item}`,
      { via: "post", body: `[{"jsonrpc":"2.0","id":1,"method":"health"},${item}]` },
      err(
        PARSE,
        NO_ID,
        `error unmarshaling request: json: cannot unmarshal array into Go value of type ${REQUEST_STRUCT}`,
        500,
      ),
    );
  }
  add(
    "ws batch",
    { via: "ws", frame: `[${frame(1, "health")}]` },
    err(
      PARSE,
      NO_ID,
      `error unmarshaling request: json: cannot unmarshal array into Go value of type ${REQUEST_STRUCT}`,
    ),
  );

  // 4. Envelope fields: id types other than number/string, non-string method/jsonrpc.
  for (const [id, text] of [
    ["true", "json-rpc ID (true) is of unknown type (bool)"],
    ["false", "json-rpc ID (false) is of unknown type (bool)"],
    ["{}", "json-rpc ID (map[]) is of unknown type (map[string]interface {})"],
    ['{"b":2,"a":"x"}', "json-rpc ID (map[a:x b:2]) is of unknown type (map[string]interface {})"],
    ["[]", "json-rpc ID ([]) is of unknown type ([]interface {})"],
    ['[1,"x",null]', "json-rpc ID ([1 x <nil>]) is of unknown type ([]interface {})"],
  ] as const) {
    parseError(`id ${id}`, `{"jsonrpc":"2.0","id":${id},"method":"health"}`, text);
  }
  for (const [field, value, kind] of [
    ["method", "5", "number"],
    ["method", "true", "bool"],
    ["method", "{}", "object"],
    ["method", '["health"]', "array"],
    ["jsonrpc", "2", "number"],
    ["jsonrpc", "[]", "array"],
  ] as const) {
    const body = field === "method" ? `{"id":1,"method":${value}}` : `{"jsonrpc":${value},"id":1,"method":"health"}`;
    parseError(
      `${field} ${value}`,
      body,
      `json: cannot unmarshal ${kind} into Go struct field .${field} of type string`,
    );
  }
  // Envelope oddities CometBFT accepts: jsonrpc is not checked, ids truncate, names match any case.
  for (const [body, id] of [
    ['{"jsonrpc":"1.0","id":%,"method":"health"}', 0],
    ['{"id":%,"method":"health"}', 0],
    ['{"ID":%,"METHOD":"health","PARAMS":{}}', 0],
    ['{"id":%,"method":"health","extra":[1,{"x":2}]}', 0],
    ['{"id":%,"method":"health","params":null}', 0],
    ['{"id":%,"method":"health","params":[]}', 0],
    ['{"id":%.75,"method":"health"}', 0],
    ['{"id":-%,"method":"health"}', -1],
  ] as const) {
    for (const t of ["http", "ws"] as const) {
      const n = nextId++;
      const text = body.replace("%", String(n));
      const want: Want = { kind: "result", id: id === -1 ? -n : n, check: (r) => JSON.stringify(r) === "{}" };
      add(`${t} accepted ${body}`, t === "http" ? { via: "post", body: text } : { via: "ws", frame: text }, {
        ...want,
        ...(t === "http" ? { status: 200 } : {}),
      });
    }
  }
  for (const t of ["http", "ws"] as const) {
    const text = '{"jsonrpc":"2.0","id":"","method":"health"}';
    add(`${t} empty string id`, t === "http" ? { via: "post", body: text } : { via: "ws", frame: text }, {
      kind: "result",
      id: "",
    });
  }
  // Notifications (absent or null id) are not answered, alone or in a batch (§1.3, §1.5).
  for (const body of [
    '{"jsonrpc":"2.0","method":"health"}',
    '{"jsonrpc":"2.0","id":null,"method":"block","params":{"height":"abc"}}',
    '{"method":"no_such_method"}',
    "null",
  ]) {
    add(`http notification ${body}`, { via: "post", body }, { kind: "none" });
    add(`ws notification ${body}`, { via: "ws", frame: body }, { kind: "none" });
  }
  for (const body of ["[]", '[{"method":"health"},{"id":null,"method":"status"}]', "[null]"]) {
    add(`http empty batch ${body}`, { via: "post", body }, { kind: "none" });
  }

  // 5. Unknown methods: -32601 without data; ws-only routes over HTTP; unsafe routes while off.
  const methodParts = [
    "get",
    "eth_",
    "Block",
    "HEALTH",
    "status ",
    " health",
    "../",
    "héllo",
    "tx-search",
    "block_",
    "\u0000",
  ];
  for (let i = 0; i < 30; i++) {
    const method = `${pick(methodParts)}${Math.floor(rand() * 1e6).toString(36)}`;
    both(`unknown method ${JSON.stringify(method)}`, method, {}, (t, id) =>
      err(NOT_FOUND, id, undefined, t === "http" ? 200 : undefined),
    );
  }
  for (const method of [
    "",
    "Health",
    "health ",
    "subscribe",
    "unsubscribe",
    "unsubscribe_all",
    "dial_seeds",
    "dial_peers",
    "unsafe_flush_mempool",
  ]) {
    const id = nextId++;
    add(
      `http method ${JSON.stringify(method)}`,
      { via: "post", body: frame(id, method, {}) },
      err(NOT_FOUND, id, undefined, 200),
    );
  }
  for (const method of ["", "dial_seeds", "dial_peers", "unsafe_flush_mempool"]) {
    const id = nextId++;
    add(`ws method ${JSON.stringify(method)}`, { via: "ws", frame: frame(id, method, {}) }, err(NOT_FOUND, id));
  }
  for (const route of ["subscribe", "unsubscribe", "unsubscribe_all"]) {
    add(
      `uri /${route}`,
      { via: "get", path: `/${route}?query=%22tm.event%3D'Tx'%22` },
      err(NOT_FOUND, -1, undefined, 404),
    );
  }
  for (const path of [
    "/nope",
    "/block/",
    "/Block",
    "/health/extra",
    "/dial_seeds",
    "/unsafe_flush_mempool",
    "/websocket/x",
    "/%62lock_x",
  ]) {
    add(`uri ${path}`, { via: "get", path }, { kind: "body", status: 404, body: NOT_FOUND_PAGE });
  }
  for (const path of ["/nope", "/health/", "/v1"]) {
    add(
      `post ${path}`,
      { via: "post", path, body: frame(1, "health") },
      { kind: "body", status: 404, body: NOT_FOUND_PAGE },
    );
  }

  // 6. Params of the wrong type (cmtjson: int64 as JSON strings, []byte base64, HexBytes hex).
  const int64Bad: readonly [unknown, string][] = [
    [5, 'invalid 64-bit integer encoding "5", expected string'],
    [-1, 'invalid 64-bit integer encoding "-1", expected string'],
    [1.5, 'invalid 64-bit integer encoding "1.5", expected string'],
    [true, 'invalid 64-bit integer encoding "true", expected string'],
    [[1], 'invalid 64-bit integer encoding "[1]", expected string'],
    [{ a: 1 }, 'invalid 64-bit integer encoding "{\\"a\\":1}", expected string'],
    ["abc", "invalid character 'a' looking for beginning of value"],
    ["1.5", "json: cannot unmarshal number 1.5 into Go value of type int64"],
    ["1e3", "json: cannot unmarshal number 1e3 into Go value of type int64"],
    ["", "unexpected end of JSON input"],
    ["-", "unexpected end of JSON input"],
    ["tru", "unexpected end of JSON input"],
    ["true", "json: cannot unmarshal bool into Go value of type int64"],
    ["0x10", "invalid character 'x' after top-level value"],
    ['"5"', "invalid character '\\\\' looking for beginning of value"],
    ["99999999999999999999", "json: cannot unmarshal number 99999999999999999999 into Go value of type int64"],
    ["-9223372036854775809", "json: cannot unmarshal number -9223372036854775809 into Go value of type int64"],
  ];
  for (const route of HEIGHT_ROUTES) {
    for (const [value, detail] of int64Bad)
      badParams(`${route} height=${JSON.stringify(value)}`, route, { height: value }, detail);
    // URI forms (§1.2): digits are integers, 0x is refused for integers, anything else is JSON.
    uriParams(`/${route}?height=abc`, 'invalid 64-bit integer encoding "abc", expected string');
    uriParams(`/${route}?height=1.5`, 'invalid 64-bit integer encoding "1.5", expected string');
    uriParams(`/${route}?height=0x01`, "got a hex string arg, but expected 'int64'");
    uriParams(`/${route}?height=true`, 'invalid 64-bit integer encoding "true", expected string');
    uriParams(`/${route}?height=%22abc%22`, "invalid character 'a' looking for beginning of value");
    uriParams(
      `/${route}?height=99999999999999999999`,
      "json: cannot unmarshal number 99999999999999999999 into Go value of type int64",
    );
  }
  for (const [route, name] of [
    ["blockchain", "minHeight"],
    ["blockchain", "maxHeight"],
    ["abci_query", "height"],
  ] as const) {
    for (const [value, detail] of int64Bad.slice(0, 10))
      badParams(`${route} ${name}=${JSON.stringify(value)}`, route, { [name]: value }, detail);
  }
  for (const [route, name, extra] of [
    ["tx_search", "page", { query: "tx.height > 0" }],
    ["tx_search", "per_page", { query: "tx.height > 0" }],
    ["block_search", "page", { query: "block.height > 0" }],
    ["validators", "per_page", {}],
    ["unconfirmed_txs", "limit", {}],
  ] as const) {
    badParams(
      `${route} ${name}=7`,
      route,
      { ...extra, [name]: 7 },
      'invalid 64-bit integer encoding "7", expected string',
    );
    badParams(
      `${route} ${name}="x"`,
      route,
      { ...extra, [name]: "x" },
      "invalid character 'x' looking for beginning of value",
    );
    badParams(
      `${route} ${name} overflow`,
      route,
      { ...extra, [name]: "9223372036854775808" },
      "json: cannot unmarshal number 9223372036854775808 into Go value of type int",
    );
    uriParams(`/${route}?${name}=0x1`, "got a hex string arg, but expected 'int'");
  }
  badParams(
    "genesis_chunked chunk=-1",
    "genesis_chunked",
    { chunk: "-1" },
    "json: cannot unmarshal number -1 into Go value of type uint",
  );
  badParams(
    "genesis_chunked chunk overflow",
    "genesis_chunked",
    { chunk: "18446744073709551616" },
    "json: cannot unmarshal number 18446744073709551616 into Go value of type uint",
  );
  badParams(
    "genesis_chunked chunk=1",
    "genesis_chunked",
    { chunk: 1 },
    'invalid 64-bit integer encoding "1", expected string',
  );
  uriParams("/genesis_chunked?chunk=-1", "json: cannot unmarshal number -1 into Go value of type uint");
  uriParams("/genesis_chunked?chunk=0xff", "got a hex string arg, but expected 'uint'");

  // []byte: std base64 (Go's CorruptInputError offsets) or another JSON type.
  const bytesBad: readonly [unknown, string][] = [
    ["abc", "illegal base64 data at input byte 0"],
    ["a===", "illegal base64 data at input byte 1"],
    ["!!!!", "illegal base64 data at input byte 0"],
    ["YWJj ZA==", "illegal base64 data at input byte 4"],
    ["YWJjZA=", "illegal base64 data at input byte 7"],
    ["YWJjZA==x", "illegal base64 data at input byte 8"],
    ["YW-j", "illegal base64 data at input byte 2"],
    [12, "json: cannot unmarshal number into Go value of type []uint8"],
    [true, "json: cannot unmarshal bool into Go value of type []uint8"],
    [{ a: "b" }, "json: cannot unmarshal object into Go value of type []uint8"],
  ];
  for (const [route, name] of BYTES_ROUTES) {
    for (const [value, detail] of bytesBad)
      badParams(`${route} ${name}=${JSON.stringify(value)}`, route, { [name]: value }, detail);
    uriParams(`/${route}?${name}=0xabc`, "encoding/hex: odd length hex string");
    uriParams(`/${route}?${name}=0xzz`, "encoding/hex: invalid byte: U+007A 'z'");
    uriParams(`/${route}?${name}=zz`, "invalid character 'z' looking for beginning of value");
    uriParams(`/${route}?${name}=123`, "json: cannot unmarshal number into Go value of type []uint8");
    uriParams(`/${route}?${name}=%22unterminated`, "unexpected end of JSON input");
  }
  // HexBytes (header_by_hash hash, abci_query data): hex without 0x.
  for (const [route, name] of [
    ["header_by_hash", "hash"],
    ["abci_query", "data"],
  ] as const) {
    for (const [value, detail] of [
      ["0xAB", "encoding/hex: invalid byte: U+0078 'x'"],
      ["XYZ1", "encoding/hex: invalid byte: U+0058 'X'"],
      ["ABC", "encoding/hex: odd length hex string"],
      ["ABG", "encoding/hex: invalid byte: U+0047 'G'"],
      [7, "invalid hex string: 7"],
      [false, "invalid hex string: false"],
      [["AB"], 'invalid hex string: ["AB"]'],
    ] as const) {
      badParams(`${route} ${name}=${JSON.stringify(value)}`, route, { [name]: value }, detail);
    }
    uriParams(`/${route}?${name}=0xGG`, "encoding/hex: invalid byte: U+0047 'G'");
    uriParams(`/${route}?${name}=ABCD`, "invalid hex string: ABCD");
  }
  uriParams("/block?height=%5B1", 'invalid 64-bit integer encoding "[1", expected string');
  // bool and string arguments.
  for (const [route, name, extra] of [
    ["tx", "prove", { hash: "AAAA" }],
    ["tx_search", "prove", { query: "tx.height > 0" }],
    ["abci_query", "prove", {}],
  ] as const) {
    for (const [value, kind] of [
      ["true", "string"],
      [1, "number"],
      [{}, "object"],
      [[true], "array"],
    ] as const) {
      badParams(
        `${route} ${name}=${JSON.stringify(value)}`,
        route,
        { ...extra, [name]: value },
        `json: cannot unmarshal ${kind} into Go value of type bool`,
      );
    }
  }
  uriParams("/tx?hash=0xAAAA&prove=yes", "invalid character 'y' looking for beginning of value");
  uriParams("/tx?hash=0xAAAA&prove=1", "json: cannot unmarshal number into Go value of type bool");
  uriParams("/tx?hash=0xAAAA&prove=0x1", "got a hex string arg, but expected 'bool'");
  for (const [route, name] of [
    ["tx_search", "query"],
    ["tx_search", "order_by"],
    ["block_search", "query"],
    ["abci_query", "path"],
  ] as const) {
    for (const [value, kind] of [
      [5, "number"],
      [true, "bool"],
      [["x"], "array"],
      [{ q: 1 }, "object"],
    ] as const) {
      badParams(
        `${route} ${name}=${JSON.stringify(value)}`,
        route,
        { [name]: value },
        `json: cannot unmarshal ${kind} into Go value of type string`,
      );
    }
  }
  // Strings in URI must be quoted JSON (§1.2).
  uriParams("/tx_search?query=tm.event='Tx'", "invalid character 'm' in literal true (expecting 'r')");
  uriParams("/tx_search?query=abc", "invalid character 'a' looking for beginning of value");
  uriParams("/block_search?query=%22unterminated", "unexpected end of JSON input");
  uriParams("/abci_query?path=5", "json: cannot unmarshal number into Go value of type string");

  // params shapes and arity (§1.3).
  for (const [route, params, detail] of [
    [
      "block",
      "x",
      "unknown type for JSON params: json: cannot unmarshal string into Go value of type []json.RawMessage. Expected map or array",
    ],
    [
      "block",
      5,
      "unknown type for JSON params: json: cannot unmarshal number into Go value of type []json.RawMessage. Expected map or array",
    ],
    [
      "health",
      true,
      "unknown type for JSON params: json: cannot unmarshal bool into Go value of type []json.RawMessage. Expected map or array",
    ],
    ["block", [], "expected 1 parameters ([height]), got 0 ([])"],
    ["block", ["1", "2"], `expected 1 parameters ([height]), got 2 (${goRawList(["1", "2"])})`],
    ["health", ["x"], `expected 0 parameters ([]), got 1 (${goRawList(["x"])})`],
    ["tx_search", ["q"], `expected 5 parameters ([query prove page per_page order_by]), got 1 (${goRawList(["q"])})`],
    ["blockchain", ["1"], `expected 2 parameters ([minHeight maxHeight]), got 1 (${goRawList(["1"])})`],
    [
      "abci_query",
      ["", "", "0"],
      `expected 4 parameters ([path data height prove]), got 3 (${goRawList(["", "", "0"])})`,
    ],
    ["block", [5], 'invalid 64-bit integer encoding "5", expected string'],
  ] as const) {
    badParams(`${route} params=${JSON.stringify(params)}`, route, params, detail);
  }

  // 7. Heights: zero, negative and future (rpc/core getHeight); blockchain's filterMinMax.
  for (const route of HEIGHT_ROUTES) {
    for (const h of ["0", "-1", "-9223372036854775808", "null"]) {
      const shown = h === "null" ? "0" : h;
      handlerError(`${route} height=${h}`, route, { height: h }, `height must be greater than 0, but got ${shown}`);
    }
    for (const h of ["1000000000", "9223372036854775807"]) {
      const future = new RegExp(`^height ${h} must be less than or equal to the current blockchain height \\d+$`);
      handlerError(`${route} height=${h}`, route, { height: h }, future);
      uriHandler(`/${route}?height=${h}`, future);
    }
    uriHandler(`/${route}?height=-5`, "height must be greater than 0, but got -5");
    uriHandler(`/${route}?height=0`, "height must be greater than 0, but got 0");
  }
  handlerError("blockchain minHeight=-1", "blockchain", { minHeight: "-1" }, "heights must be non-negative");
  handlerError(
    "blockchain maxHeight=-5",
    "blockchain",
    { minHeight: "1", maxHeight: "-5" },
    "heights must be non-negative",
  );
  handlerError(
    "blockchain minHeight=1e9",
    "blockchain",
    { minHeight: "1000000000" },
    /^min height 1000000000 can't be greater than max height \d+$/,
  );
  uriHandler(
    "/blockchain?minHeight=1000000000&maxHeight=1000000001",
    /^min height 1000000000 can't be greater than max height \d+$/,
  );
  handlerError("genesis_chunked chunk=1", "genesis_chunked", { chunk: "1" }, "there are 0 chunks, 1 is invalid");
  uriHandler("/genesis_chunked?chunk=7", "there are 0 chunks, 7 is invalid");
  handlerError(
    "tx unknown hash",
    "tx",
    { hash: Buffer.alloc(32, 7).toString("base64") },
    `tx (${"07".repeat(32)}) not found`,
  );
  handlerError("tx empty hash", "tx", {}, "transaction hash cannot be empty");
  uriHandler(`/tx?hash=0x${"ab".repeat(32)}`, `tx (${"AB".repeat(32)}) not found`);
  handlerError("broadcast_evidence empty", "broadcast_evidence", {}, "no evidence was provided");

  // 8. Event queries: tx_search, block_search (the parse error itself) and subscribe (wrapped).
  const badQueries: readonly [string, Data][] = [
    ["", "offset 0: EOF"],
    ["tm.event=", "offset 9: EOF"],
    ["AND", "offset 0: got AND operator, wanted tag"],
    ["a='b' OR c='d'", "offset 6: got tag, want AND operator"],
    ["tm.event='x' AND", "offset 16: EOF"],
    ["a < 'str'", "offset 4: got string, wanted number, timestamp or datestamp"],
    ["'x'='y'", "offset 0: got string, wanted tag"],
    ["a=b", "offset 2: got tag, wanted number, timestamp, datestamp or string"],
    ["tm.event=='x'", "offset 9: got = operator, wanted number, timestamp, datestamp or string"],
    ["tx.height=1 AND", "offset 15: EOF"],
    ["tm.event='unterminated", "offset 9: EOF"],
    ["#", "offset 0: invalid input # at offset 1"],
    ["a CONTAINS 5", "offset 11: got number, wanted string"],
    ["a EXISTS 5", "offset 9: got number, want AND operator"],
    ["a > TIME 2013-05-03", /^offset 4: invalid TIME value: /],
    ["a = DATE 2013-13-45", /^offset 4: invalid DATE value: /],
    [
      "NOT a='b'",
      "offset 4: got tag, wanted <= operator, >= operator, < operator, > operator, = operator, CONTAINS operator or EXISTS operator",
    ],
  ];
  const longQuery = `tx.height > 0${" AND tx.height > 0".repeat(30)}`;
  for (const [q, msg] of badQueries) {
    for (const route of ["tx_search", "block_search"])
      handlerError(`${route} query=${JSON.stringify(q)}`, route, { query: q }, msg);
    const id = nextId++;
    const wrapped =
      typeof msg === "string"
        ? `failed to parse query: ${msg}`
        : new RegExp(`^failed to parse query: ${msg.source.slice(1)}`);
    add(
      `ws subscribe query=${JSON.stringify(q)}`,
      { via: "ws", frame: frame(id, "subscribe", { query: q }) },
      err(INTERNAL, id, wrapped),
    );
    const id2 = nextId++;
    add(
      `ws unsubscribe query=${JSON.stringify(q)}`,
      { via: "ws", frame: frame(id2, "unsubscribe", { query: q }) },
      err(INTERNAL, id2, wrapped),
    );
  }
  uriHandler("/tx_search?query=%22a%3Db%22", "offset 2: got tag, wanted number, timestamp, datestamp or string");
  handlerError("tx_search long query", "tx_search", { query: longQuery }, "maximum query length exceeded");
  {
    const id = nextId++;
    add(
      "ws subscribe long query",
      { via: "ws", frame: frame(id, "subscribe", { query: longQuery }) },
      err(INTERNAL, id, "maximum query length exceeded"),
    );
    const id2 = nextId++;
    add(
      "ws unsubscribe unknown",
      { via: "ws", frame: frame(id2, "unsubscribe", { query: "tm.event='NewBlock'" }) },
      err(INTERNAL, id2, "subscription not found"),
    );
  }
  for (const order of ["up", "ASC", "Desc", " asc", "asc "]) {
    for (const route of ["tx_search", "block_search"]) {
      handlerError(
        `${route} order_by=${JSON.stringify(order)}`,
        route,
        { query: "tx.height > 0", order_by: order },
        "expected order_by to be either `asc` or `desc` or empty",
      );
    }
  }

  // 9. Huge and nonsense pages: out-of-range pages fail; per_page is clamped to [1, 100] (§2).
  for (const page of ["0", "-1", "1000000", "2147483648", "9223372036854775807", "-9223372036854775808"]) {
    handlerError(
      `tx_search page=${page}`,
      "tx_search",
      { query: "tx.height > 0", page },
      new RegExp(`^page should be within \\[1, \\d+\\] range, given ${page}$`),
    );
    handlerError(
      `block_search page=${page}`,
      "block_search",
      { query: "block.height > 0", page, per_page: "100" },
      new RegExp(`^page should be within \\[1, \\d+\\] range, given ${page}$`),
    );
    handlerError(
      `validators page=${page}`,
      "validators",
      { page },
      `page should be within [1, 1] range, given ${page}`,
    );
  }
  uriHandler("/validators?page=2", "page should be within [1, 1] range, given 2");
  const upTo = (max: number) => (r: unknown) => {
    const res = r as { txs?: unknown[]; blocks?: unknown[]; validators?: unknown[] };
    const list = res.txs ?? res.blocks ?? res.validators ?? [];
    return Array.isArray(list) && list.length <= max;
  };
  for (const perPage of ["1000000", "101", "0", "-5", "9223372036854775807"]) {
    for (const [route, params] of [
      ["tx_search", { query: "tx.height > 0", per_page: perPage }],
      ["block_search", { query: "block.height > 0", per_page: perPage, page: "1" }],
      ["validators", { per_page: perPage }],
      ["unconfirmed_txs", { limit: perPage }],
    ] as const) {
      both(`${route} per_page=${perPage}`, route, params, (t, id) => ({
        kind: "result",
        id,
        check: upTo(100),
        ...(t === "http" ? { status: 200 } : {}),
      }));
    }
  }

  // 10. Batches: more than max_request_batch_size (10) items is one error object (§1.3).
  for (const size of [11, 12, 15, 20, 33, 64, 100]) {
    const items = Array.from({ length: size }, (_, i) =>
      i % 3 === 2 ? { method: "health" } : { jsonrpc: "2.0", id: i, method: pick(["health", "status", "block"]) },
    );
    add(
      `http batch of ${size}`,
      { via: "post", body: JSON.stringify(items) },
      { kind: "body", status: 200, body: BATCH_TOO_LARGE },
    );
  }
  add(
    `http batch of 11 notifications`,
    { via: "post", body: JSON.stringify(Array.from({ length: 11 }, () => ({ method: "health" }))) },
    { kind: "body", status: 200, body: BATCH_TOO_LARGE },
  );
  for (let b = 0; b < 12; b++) {
    const size = 2 + Math.floor(rand() * 9);
    const items: unknown[] = [];
    const wants: Want[] = [];
    for (let i = 0; i < size; i++) {
      const id = nextId++;
      const kind = pick(["ok", "unknown", "params", "height", "notification"] as const);
      if (kind === "ok") {
        items.push({ jsonrpc: "2.0", id, method: "health" });
        wants.push({ kind: "result", id });
      } else if (kind === "unknown") {
        items.push({ jsonrpc: "2.0", id, method: "no_such" });
        wants.push(err(NOT_FOUND, id));
      } else if (kind === "params") {
        items.push({ jsonrpc: "2.0", id, method: "block", params: { height: 5 } });
        wants.push(
          err(
            INVALID_PARAMS,
            id,
            'error converting json params to arguments: invalid 64-bit integer encoding "5", expected string',
          ),
        );
      } else if (kind === "height") {
        items.push({ jsonrpc: "2.0", id, method: "header", params: { height: "-3" } });
        wants.push(err(INTERNAL, id, "height must be greater than 0, but got -3"));
      } else {
        items.push({ jsonrpc: "2.0", method: "status" });
      }
    }
    // One answer is written as a single object; none is an empty body (§1.3).
    const want: Want =
      wants.length === 0
        ? { kind: "none" }
        : wants.length === 1
          ? ({ ...(wants[0] as Want), status: 200 } as Want)
          : { kind: "batch", status: 200, items: wants };
    add(`http mixed batch #${b}`, { via: "post", body: JSON.stringify(items) }, want);
  }

  // 11. Bodies over max_body_bytes: HTTP 400 -32600 before anything else (PreChecksHandler).
  for (const size of [MAX_BODY_BYTES + 1, MAX_BODY_BYTES + 100, 1_048_577, 1_500_000, 2_000_000, 3_000_000]) {
    const json = `{"jsonrpc":"2.0","id":1,"method":"health","params":{"pad":"${"p".repeat(size)}"}}`.slice(0, size);
    add(`http body ${size} bytes`, { via: "post", body: json }, { kind: "body", status: 400, body: BODY_TOO_LARGE });
    add(
      `http garbage body ${size} bytes`,
      { via: "post", body: garbageBody(rand, size) },
      { kind: "body", status: 400, body: BODY_TOO_LARGE },
    );
  }
  // Any request's body counts, a GET's too (PreChecksHandler reads every body).
  for (const path of ["/health", "/block?height=1", "/nope"]) {
    add(
      `tcp GET ${path} with a body over the limit`,
      {
        via: "tcp",
        bytes: `GET ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n${" ".repeat(MAX_BODY_BYTES + 1)}`,
      },
      { kind: "rawHttp", status: 400, body: BODY_TOO_LARGE },
    );
  }
  {
    const body = frame(7, "health");
    add(
      "http body of exactly max_body_bytes",
      { via: "post", body: body + " ".repeat(MAX_BODY_BYTES - body.length) },
      { kind: "result", id: 7, status: 200 },
    );
  }

  // 12. Request headers over max_header_bytes: Go's plain-text 431; malformed request lines: 400.
  for (const size of [1_100_000, 1_500_000, 2_500_000]) {
    add(
      `tcp header of ${size} bytes`,
      { via: "tcp", bytes: `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(size)}\r\n\r\n` },
      { kind: "raw", text: GO_431 },
    );
  }
  add(
    "tcp 20000 headers",
    {
      via: "tcp",
      bytes: `GET /health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 20_000 }, (_, i) => `X-H${i}: ${"v".repeat(50)}\r\n`).join("")}\r\n`,
    },
    { kind: "raw", text: GO_431 },
  );
  add(
    "tcp POST header over the limit",
    {
      via: "tcp",
      bytes: `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nCookie: ${"c".repeat(1_200_000)}\r\n\r\n{}`,
    },
    { kind: "raw", text: GO_431 },
  );
  for (const line of [
    "GARBAGE",
    "GET /health HTTP/9.9x",
    "GET\u0001/health HTTP/1.1",
    "GET /health HTTP/1.1\r\nBad Header Line",
  ]) {
    add(
      `tcp bad request ${JSON.stringify(line)}`,
      { via: "tcp", bytes: `${line}\r\n\r\n` },
      { kind: "raw", text: GO_400 },
    );
  }

  // 13. WebSocket: binary frames, invalid UTF-8 text frames, frames over the read limit, and
  //     frames that break the protocol (gorilla answers each with a close frame).
  for (let i = 0; i < 6; i++) {
    const id = nextId++;
    add(
      `ws binary request #${i}`,
      { via: "ws", frame: Buffer.from(frame(id, "health")), binary: true },
      { kind: "result", id },
    );
  }
  add(
    "ws invalid UTF-8 outside strings",
    { via: "ws", frame: Buffer.from([0x7b, 0xff, 0x7d]) },
    err(
      PARSE,
      NO_ID,
      /^error unmarshaling request: invalid character '.{1,6}' looking for beginning of object key string$/,
    ),
  );
  for (const bad of [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x90, 0x80], [0xed, 0xa0, 0x80]]) {
    const id = nextId++;
    const text = Buffer.concat([
      Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"health`),
      Buffer.from(bad),
      Buffer.from('"}'),
    ]);
    // Inside a string Go replaces invalid bytes with U+FFFD: an unknown method, not a closed socket.
    add(
      `ws invalid UTF-8 in method ${Buffer.from(bad).toString("hex")}`,
      { via: "ws", frame: text },
      err(NOT_FOUND, id),
    );
  }
  for (const size of [MAX_BODY_BYTES + 1, 1_048_576, 2_000_000]) {
    add(`ws frame of ${size} bytes`, { via: "wsBig", size }, { kind: "close", code: 1009 });
  }
  {
    const id = nextId++;
    const body = frame(id, "health");
    add(
      "ws frame of exactly max_body_bytes",
      { via: "ws", frame: body + " ".repeat(MAX_BODY_BYTES - body.length) },
      { kind: "result", id },
    );
  }
  const text = Buffer.from(frame(1, "health"));
  const protocolErrors: readonly [string, Buffer][] = [
    ["rsv1 set", wsFrame(0x1, text, { rsv: 0x40 })],
    ["rsv2 set", wsFrame(0x1, text, { rsv: 0x20 })],
    ["rsv3 set", wsFrame(0x2, text, { rsv: 0x10 })],
    ...[0x3, 0x4, 0x5, 0x6, 0x7, 0xb, 0xc, 0xd, 0xe, 0xf].map((op): [string, Buffer] => [
      `opcode ${op}`,
      wsFrame(op, text),
    ]),
    ["unmasked text frame", wsFrame(0x1, text, { mask: false })],
    ["unmasked ping", wsFrame(0x9, Buffer.from("hi"), { mask: false })],
    ["ping over 125 bytes", wsFrame(0x9, Buffer.alloc(126, 1))],
    ["fragmented ping", wsFrame(0x9, Buffer.from("p"), { fin: false })],
    ["fragmented close", wsFrame(0x8, Buffer.from([0x03, 0xe8]), { fin: false })],
    ["continuation without a start", wsFrame(0x0, text)],
    [
      "new message inside a fragmented one",
      Buffer.concat([wsFrame(0x1, text.subarray(0, 5), { fin: false }), wsFrame(0x1, text)]),
    ],
    ...[999, 1004, 1005, 1006, 1015, 2000, 5000].map((code): [string, Buffer] => [
      `close code ${code}`,
      wsFrame(0x8, Buffer.from([code >> 8, code & 0xff])),
    ]),
  ];
  for (const [name, bytes] of protocolErrors)
    add(`ws frames: ${name}`, { via: "wsFrames", bytes }, { kind: "close", code: 1002 });

  return cases;
}

/** Bytes that never form JSON: a leading `@`, then random letters. */
function garbageBody(rand: () => number, size: number): Buffer {
  const b = Buffer.alloc(size, 0x41);
  for (let i = 1; i < size; i += 997) b[i] = 0x61 + Math.floor(rand() * 26);
  b[0] = 0x40;
  return b;
}

/** A client WebSocket frame (RFC 6455 §5.2), masked unless told otherwise. */
function wsFrame(opcode: number, payload: Buffer, opts: { fin?: boolean; rsv?: number; mask?: boolean } = {}): Buffer {
  const fin = opts.fin ?? true;
  const mask = opts.mask ?? true;
  const head: number[] = [(fin ? 0x80 : 0) | (opts.rsv ?? 0) | opcode];
  const m = mask ? 0x80 : 0;
  if (payload.length < 126) head.push(m | payload.length);
  else if (payload.length < 65536) head.push(m | 126, payload.length >> 8, payload.length & 0xff);
  else throw new RangeError("frames in this test stay under 64 KiB");
  if (!mask) return Buffer.concat([Buffer.from(head), payload]);
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(payload.map((b, i) => b ^ (key[i % 4] as number)));
  return Buffer.concat([Buffer.from(head), key, masked]);
}

// ---------------------------------------------------------------------------------------------
// Running a case

const TIMEOUT_MS = 10_000;

function withTimeout<T>(p: Promise<T>, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new RangeError(`${label}: no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Sends raw bytes on a new TCP connection and collects everything until the server closes it. */
function tcpExchange(base: string, bytes: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = connect(Number(url.port), url.hostname, () => {
      s.write(bytes, () => undefined);
    });
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", () => undefined);
    s.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

/** Opens a WebSocket by hand, sends raw frames, and resolves with the server's close code. */
function wsFramesExchange(base: string, frames: Buffer): Promise<number | string> {
  const url = new URL(base);
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const s: Socket = connect(Number(url.port), url.hostname, () => {
      s.write(
        `GET /websocket HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    const done = (v: number | string) => {
      resolve(v);
      s.destroy();
    };
    s.on("data", (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      if (!upgraded) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString("latin1");
        if (!head.startsWith("HTTP/1.1 101")) return done(`no upgrade: ${head.split("\r\n")[0]}`);
        upgraded = true;
        buf = buf.subarray(end + 4);
        s.write(frames);
      }
      // Server frames are unmasked; skip anything before the close frame.
      while (buf.length >= 2) {
        const op = (buf[0] as number) & 0x0f;
        let len = (buf[1] as number) & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        if (op === 0x8) return done(len >= 2 ? buf.readUInt16BE(off) : 1005);
        buf = buf.subarray(off + len);
      }
    });
    s.on("error", () => undefined);
    s.on("close", () => resolve("closed without a close frame"));
  });
}

function dataMatches(want: Data | undefined, got: unknown): boolean {
  if (want === undefined) return got === undefined;
  return typeof want === "string" ? got === want : typeof got === "string" && want.test(got);
}

/** Compares one JSON-RPC message with an error/result expectation; returns the problems. */
function checkMessage(want: Want, msg: unknown): string[] {
  const m = msg as Record<string, unknown> | undefined;
  if (m === undefined || typeof m !== "object" || m === null || Array.isArray(m))
    return [`not an object: ${JSON.stringify(msg)}`];
  const problems: string[] = [];
  if (m.jsonrpc !== "2.0") problems.push("jsonrpc");
  if (want.kind === "error") {
    const keys = Object.keys(m).join();
    if (keys !== (want.id === NO_ID ? "jsonrpc,error" : "jsonrpc,id,error")) problems.push(`keys ${keys}`);
    if (want.id !== NO_ID && m.id !== want.id) problems.push(`id ${JSON.stringify(m.id)} ≠ ${JSON.stringify(want.id)}`);
    const e = m.error as Record<string, unknown> | undefined;
    if (e?.code !== want.code) problems.push(`code ${String(e?.code)} ≠ ${want.code}`);
    if (e?.message !== want.message) problems.push(`message ${JSON.stringify(e?.message)}`);
    if (!dataMatches(want.data, e?.data)) problems.push(`data ${JSON.stringify(e?.data)} ≠ ${String(want.data)}`);
    const ekeys = e === undefined ? "" : Object.keys(e).join();
    if (ekeys !== (want.data === undefined ? "code,message" : "code,message,data"))
      problems.push(`error keys ${ekeys}`);
  } else if (want.kind === "result") {
    if (Object.keys(m).join() !== "jsonrpc,id,result") problems.push(`keys ${Object.keys(m).join()}`);
    if (m.id !== want.id) problems.push(`id ${JSON.stringify(m.id)} ≠ ${JSON.stringify(want.id)}`);
    if (want.check !== undefined && !want.check(m.result)) problems.push("result check failed");
  } else {
    problems.push(`expected ${want.kind}`);
  }
  return problems;
}

function checkHttp(want: Want, r: Reply): string[] {
  if (want.kind === "body") {
    const p: string[] = [];
    if (r.status !== want.status) p.push(`HTTP ${r.status} ≠ ${want.status}`);
    if (r.text !== want.body) p.push(`body ${JSON.stringify(r.text.slice(0, 200))}`);
    return p;
  }
  if (want.kind === "none")
    return r.status === 200 && r.text === "" ? [] : [`HTTP ${r.status} body ${JSON.stringify(r.text.slice(0, 200))}`];
  const p: string[] = [];
  const status =
    want.kind === "batch" ? want.status : want.kind === "error" || want.kind === "result" ? want.status : undefined;
  if (status !== undefined && r.status !== status) p.push(`HTTP ${r.status} ≠ ${status}`);
  if (r.headers["content-type"] !== "application/json") p.push(`content-type ${String(r.headers["content-type"])}`);
  if (want.kind === "batch") {
    const list = r.body as unknown[];
    if (!Array.isArray(list) || list.length !== want.items.length) return [...p, `batch ${r.text.slice(0, 200)}`];
    want.items.forEach((w, i) => {
      for (const q of checkMessage(w, list[i])) p.push(`[${i}] ${q}`);
    });
    return p;
  }
  return [...p, ...checkMessage(want, r.body)];
}

/** A WebSocket connection that runs cases one at a time (answers come back in order). */
class WsLane {
  private client: WsTestClient | undefined;
  private probe = 0;
  private readonly url: string;
  constructor(url: string) {
    this.url = url;
  }

  private async ws(): Promise<WsTestClient> {
    if (this.client === undefined || this.client.ws.readyState !== WebSocket.OPEN) {
      this.client = await WsTestClient.connect(this.url);
    }
    return this.client;
  }

  async run(c: Case & { send: { via: "ws" } }): Promise<string[]> {
    const ws = await this.ws();
    const { frame, binary } = c.send;
    if (c.want.kind === "none") {
      // Nothing may come back: a probe sent after the frame must be the next answer.
      ws.ws.send(frame, { binary: binary === true });
      const id = `probe-${this.probe++}`;
      const probe = ws.sendRaw(JSON.stringify({ jsonrpc: "2.0", id, method: "health" }), JSON.stringify(id));
      const closed = ws.closed.then(({ code }) => ({ closedWith: code }));
      const answer = await withTimeout(Promise.race([probe, closed]), c.name);
      const stray = [...ws.pushes.values()].flat();
      ws.pushes.clear();
      return stray.length === 0 && (answer as { result?: unknown }).result !== undefined
        ? []
        : [`answered: ${JSON.stringify(stray)}`];
    }
    const key = c.want.kind === "error" && c.want.id === NO_ID ? "" : JSON.stringify((c.want as { id: unknown }).id);
    // A closed connection fails the case at once instead of waiting for the timeout.
    const closed = ws.closed.then(({ code }) => ({ closedWith: code }));
    const msg = await withTimeout(Promise.race([ws.sendRaw(frame, key, binary === true), closed]), c.name);
    if (typeof msg === "object" && msg !== null && "closedWith" in msg)
      return [`connection closed with ${msg.closedWith}`];
    const problems = checkMessage(c.want, msg);
    if (ws.pushes.size > 0) {
      problems.push(`unexpected messages ${JSON.stringify([...ws.pushes.entries()]).slice(0, 300)}`);
      ws.pushes.clear();
    }
    return problems;
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}

async function runCase(base: string, wsUrl: string, c: Case, lane: WsLane | undefined): Promise<string[]> {
  const s = c.send;
  switch (s.via) {
    case "post":
      return checkHttp(
        c.want,
        await withTimeout(rawHttp(base, { method: "POST", path: s.path ?? "/", body: s.body }), c.name),
      );
    case "get":
      return checkHttp(
        c.want,
        await withTimeout(rawHttp(base, { path: s.path, ...(s.body === undefined ? {} : { body: s.body }) }), c.name),
      );
    case "ws":
      if (lane === undefined) throw new RangeError("WebSocket cases run on a lane");
      return lane.run({ ...c, send: s });
    case "tcp": {
      const text = await withTimeout(tcpExchange(base, s.bytes), c.name);
      if (c.want.kind === "rawHttp") {
        const [head = "", body = ""] = text.split("\r\n\r\n");
        const ok = head.startsWith(`HTTP/1.1 ${c.want.status} `) && body === c.want.body;
        return ok ? [] : [`got ${JSON.stringify(text.slice(0, 300))}`];
      }
      return c.want.kind === "raw" && text === c.want.text ? [] : [`got ${JSON.stringify(text.slice(0, 200))}`];
    }
    case "wsFrames": {
      const code = await withTimeout(wsFramesExchange(base, s.bytes), c.name);
      return c.want.kind === "close" && code === c.want.code ? [] : [`close ${code}`];
    }
    case "wsBig": {
      const ws = await WsTestClient.connect(wsUrl);
      const body = `{"jsonrpc":"2.0","id":1,"method":"health","params":{"pad":"${"x".repeat(s.size)}"}}`.slice(
        0,
        s.size,
      );
      ws.ws.send(body);
      const closed = await withTimeout(ws.closed, c.name);
      return c.want.kind === "close" && closed.code === c.want.code ? [] : [`close ${closed.code} ${closed.reason}`];
    }
  }
}

// ---------------------------------------------------------------------------------------------

const CASES = buildCases();
/** At most this many requests in flight (HTTP workers plus WebSocket lanes). */
const CONCURRENCY = 16;
const WS_LANES = 4;

let n: InProcessNode;

beforeAll(async () => {
  n = await startInProcessNode();
  const rpc = new RpcTestClient(n.rpcUrl);
  await n.node.consensus.waitForHeight(2);
  // A committed tx, so that tx_search has something to page through.
  const r = await rpc.call("http", "broadcast_tx_commit", {
    tx: arg.bytes(new TextEncoder().encode("malformed=setup")),
  });
  expect(r.body.result.tx_result.code).toBe(0);
  await rpc.close();
});

afterAll(async () => {
  await n?.close();
});

describe("malformed requests against a real node", () => {
  test("behavior: the generator is deterministic and large", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(1000);
    expect(buildCases().map((c) => c.name)).toEqual(CASES.map((c) => c.name));
    const names = new Set(CASES.map((c) => c.name));
    expect(names.size).toBe(CASES.length);
  });

  test("error: every malformed request gets CometBFT's exact answer while the node keeps committing", async () => {
    const startHeight = n.node.blockStore.height();
    const wsCases = CASES.filter((c) => c.send.via === "ws");
    const otherCases = CASES.filter((c) => c.send.via !== "ws");
    const failures: string[] = [];
    const record = async (c: Case, lane: WsLane | undefined) => {
      try {
        const problems = await runCase(n.rpcUrl, n.wsUrl, c, lane);
        if (problems.length > 0) failures.push(`${c.name}: ${problems.join("; ")}`);
      } catch (e) {
        failures.push(`${c.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    let nextWs = 0;
    let nextOther = 0;
    const lanes = Array.from({ length: WS_LANES }, () => new WsLane(n.wsUrl));
    const wsWorkers = lanes.map(async (lane) => {
      for (let c = wsCases[nextWs++]; c !== undefined; c = wsCases[nextWs++]) await record(c, lane);
      await lane.close();
    });
    const httpWorkers = Array.from({ length: CONCURRENCY - WS_LANES }, async () => {
      for (let c = otherCases[nextOther++]; c !== undefined; c = otherCases[nextOther++]) await record(c, undefined);
    });
    await Promise.all([...wsWorkers, ...httpWorkers]);
    expect(failures).toEqual([]);

    // Still serving on every transport, and still committing blocks.
    expect((await rawHttp(n.rpcUrl, { path: "/health" })).body).toEqual({ jsonrpc: "2.0", id: -1, result: {} });
    const ws = await WsTestClient.connect(n.wsUrl);
    expect(await ws.sendRaw('{"jsonrpc":"2.0","id":"after","method":"health"}', '"after"')).toEqual({
      jsonrpc: "2.0",
      id: "after",
      result: {},
    });
    await ws.close();
    const endHeight = n.node.blockStore.height();
    expect(endHeight).toBeGreaterThan(startHeight);
    await n.node.consensus.waitForHeight(endHeight + 2);
  });

  test("behavior: subscription errors on one connection (already subscribed, per-client limit, unsubscribe_all)", async () => {
    const ws = await WsTestClient.connect(n.wsUrl);
    const send = (id: string, method: string, params: unknown) =>
      ws.sendRaw(JSON.stringify({ jsonrpc: "2.0", id, method, params }), JSON.stringify(id));
    expect(await send("none", "unsubscribe_all", {})).toEqual({
      jsonrpc: "2.0",
      id: "none",
      error: { code: -32603, message: "Internal error", data: "subscription not found" },
    });
    expect(await send("s1", "subscribe", { query: "tm.event='NewBlock'" })).toEqual({
      jsonrpc: "2.0",
      id: "s1",
      result: {},
    });
    // The same query in another spelling is the same subscription (canonical form).
    expect(await send("s1b", "subscribe", { query: "tm.event = 'NewBlock'" })).toEqual({
      jsonrpc: "2.0",
      id: "s1b",
      error: { code: -32603, message: "Internal error", data: "already subscribed" },
    });
    for (const [i, q] of [
      "tm.event='Tx'",
      "tm.event='NewBlockHeader'",
      "tx.height > 1",
      "block.height > 1",
    ].entries()) {
      expect(await send(`s${i + 2}`, "subscribe", { query: q })).toEqual({
        jsonrpc: "2.0",
        id: `s${i + 2}`,
        result: {},
      });
    }
    expect(await send("s6", "subscribe", { query: "tm.event='Vote'" })).toEqual({
      jsonrpc: "2.0",
      id: "s6",
      error: { code: -32603, message: "Internal error", data: "max_subscriptions_per_client 5 reached" },
    });
    expect(await send("u1", "unsubscribe", { query: "tm.event='Vote'" })).toEqual({
      jsonrpc: "2.0",
      id: "u1",
      error: { code: -32603, message: "Internal error", data: "subscription not found" },
    });
    expect(await send("ua", "unsubscribe_all", {})).toEqual({ jsonrpc: "2.0", id: "ua", result: {} });
    await ws.close();
  });
});
