/**
 * The node-RPC differential's tools: one question asked of two nodes over the three transports
 * (URI GET, JSON-RPC POST, WebSocket JSON-RPC) and a field-by-field comparison of the answers, by value
 * or by shape (key sets and JSON types only).
 */
import { connect } from "node:net";
import {
  type Arg,
  arg,
  type RawHttpOptions,
  rawHttp,
  type Transport,
  WsTestClient,
} from "../../src/rpc/comet/testing/rpcTestClient.js";

export { TRANSPORTS } from "../../src/rpc/comet/testing/rpcTestClient.js";
export type { Arg, Transport };
export { arg };

/** One answer: the HTTP status (0 over WebSocket) and the parsed JSON-RPC envelope. */
export interface Answer {
  status: number;
  /** The Content-Type header (HTTP only). */
  contentType?: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: answers are compared generically
  body: any;
  text: string;
}

/** A node's RPC over the three transports; one WebSocket connection, opened on first use. */
export class RpcAsker {
  readonly base: string;
  #ws: WsTestClient | undefined;

  constructor(base: string) {
    this.base = base;
  }

  async ws(): Promise<WsTestClient> {
    this.#ws ??= await WsTestClient.connect(`${this.base.replace(/^http/, "ws")}/websocket`);
    return this.#ws;
  }

  /** Asks `method` with `params` over `transport`; the JSON-RPC id is `id` (URI GET answers carry -1). */
  async ask(transport: Transport, method: string, params: Record<string, Arg>, id: number): Promise<Answer> {
    if (transport === "uri") {
      const q = Object.entries(params)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.uri)}`)
        .join("&");
      const r = await rawHttp(this.base, { path: `/${method}${q === "" ? "" : `?${q}`}` });
      return { status: r.status, contentType: contentType(r.headers), body: r.body, text: r.text };
    }
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, v.json])),
    });
    return this.askRaw(transport, body, JSON.stringify(id));
  }

  /** Sends a raw JSON-RPC body by POST or over the WebSocket; `expectId` is the JSON of the answer's id. */
  async askRaw(transport: "http" | "ws", body: string, expectId: string): Promise<Answer> {
    if (transport === "http") {
      const r = await rawHttp(this.base, {
        method: "POST",
        path: "/",
        body,
        headers: { "content-type": "application/json" },
      });
      return { status: r.status, contentType: contentType(r.headers), body: r.body, text: r.text };
    }
    const ws = await this.ws();
    const msg = await Promise.race([
      ws.sendRaw(body, expectId),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no WebSocket answer to ${body}`)), 10_000)),
    ]);
    return { status: 0, body: msg, text: JSON.stringify(msg) };
  }

  /** Sends any HTTP request (method, path, body, headers). */
  async http(opts: RawHttpOptions): Promise<Answer> {
    const r = await rawHttp(this.base, opts);
    return { status: r.status, contentType: contentType(r.headers), body: r.body, text: r.text };
  }

  /** Writes raw bytes on a new connection and returns all the server sent until it closed (10 s at most). */
  exchange(bytes: string): Promise<string> {
    const url = new URL(this.base);
    return new Promise((resolve) => {
      const sock = connect(Number(url.port), url.hostname, () => sock.write(bytes));
      let data = "";
      const timer = setTimeout(() => sock.destroy(), 10_000);
      sock.on("data", (d: Buffer) => {
        data += d.toString("latin1");
      });
      sock.on("error", () => undefined);
      sock.on("close", () => {
        clearTimeout(timer);
        resolve(data);
      });
    });
  }

  /** Sends a raw URI GET path (with its query string). */
  async get(path: string): Promise<Answer> {
    const r = await rawHttp(this.base, { path });
    return { status: r.status, contentType: contentType(r.headers), body: r.body, text: r.text };
  }

  async close(): Promise<void> {
    await this.#ws?.close();
    this.#ws = undefined;
  }
}

function contentType(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers["content-type"];
  return Array.isArray(v) ? v.join(",") : v;
}

/** One field that differs: its path (`result.block.header.time`), and both values (or shapes). */
export interface Difference {
  path: string;
  go: unknown;
  cometh: unknown;
}

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** Every field where `cometh` differs from `go`: missing and extra keys, types, values; arrays by index. */
export function diffValues(go: unknown, cometh: unknown, path = ""): Difference[] {
  const tg = jsonType(go);
  const tc = jsonType(cometh);
  if (tg !== tc) return [{ path, go, cometh }];
  if (tg === "array") {
    const a = go as unknown[];
    const b = cometh as unknown[];
    if (a.length !== b.length) return [{ path: `${path}.length`, go: a.length, cometh: b.length }];
    return a.flatMap((v, i) => diffValues(v, b[i], `${path}[${i}]`));
  }
  if (tg === "object") {
    const a = go as Record<string, unknown>;
    const b = cometh as Record<string, unknown>;
    const out: Difference[] = [];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const p = path === "" ? k : `${path}.${k}`;
      if (!(k in b)) out.push({ path: p, go: a[k], cometh: "<missing>" });
      else if (!(k in a)) out.push({ path: p, go: "<missing>", cometh: b[k] });
      else out.push(...diffValues(a[k], b[k], p));
    }
    return out;
  }
  return go === cometh ? [] : [{ path, go, cometh }];
}

/**
 * The shape of a JSON value: its type, the keys of objects (recursively), and the union of the shapes
 * of an array's elements (an empty array is `array`). A field that is null on one node and an object
 * on the other is a difference of shape.
 */
export function shapeOf(v: unknown): unknown {
  const t = jsonType(v);
  if (t === "object") {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, shapeOf(x)]));
  }
  if (t === "array") {
    const elements = (v as unknown[]).map(shapeOf);
    if (elements.length === 0) return "array";
    return [mergeShapes(elements)];
  }
  return t;
}

function mergeShapes(shapes: unknown[]): unknown {
  const objects = shapes.filter((s) => typeof s === "object" && s !== null && !Array.isArray(s)) as Record<
    string,
    unknown
  >[];
  if (objects.length !== shapes.length) return shapes[0];
  const out: Record<string, unknown[]> = {};
  for (const o of objects) {
    for (const [k, s] of Object.entries(o)) {
      const list = out[k] ?? [];
      list.push(s);
      out[k] = list;
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, list]) => [k, mergeShapes(list)]));
}

/** Differences of shape: keys and JSON types, not values. */
export function diffShapes(go: unknown, cometh: unknown, path = ""): Difference[] {
  return diffValues(shapeOf(go), shapeOf(cometh), path);
}

/** A difference two honest nodes of one chain may show, matched by route and field path, with why. */
export interface LegitimateDifference {
  /** The route (method) or `*`. */
  route: string;
  /** Matched against the whole path (`result.node_info.id`). */
  path: RegExp;
  reason: string;
  /** A difference of timing that only some runs show (so it is not stale when unused). */
  sometimes?: boolean;
}

/** The differences not covered by `allowed`; the allowances that covered one are added to `used`. */
export function unexplained(
  route: string,
  diffs: readonly Difference[],
  allowed: readonly LegitimateDifference[],
  used?: Set<LegitimateDifference>,
): Difference[] {
  return diffs.filter((d) => {
    const a = allowed.find((x) => (x.route === "*" || x.route === route) && x.path.test(d.path));
    if (a !== undefined) used?.add(a);
    return a === undefined;
  });
}

/** One line per difference, for a failure message. */
export function describe(label: string, diffs: readonly Difference[]): string {
  return diffs
    .map((d) => `${label}: ${d.path || "(root)"}: go ${JSON.stringify(d.go)} vs cometh ${JSON.stringify(d.cometh)}`)
    .join("\n");
}

/** One question: a route and its arguments (both wire spellings), under a label the allowances can name. */
export interface Question {
  label: string;
  method: string;
  params: Record<string, Arg>;
  /** The transports to ask over (default: all three). */
  transports?: readonly Transport[];
}

/** What the questions are about: one chain's heights, hashes and keys, the same on both nodes. */
export interface ChainFacts {
  /** The height both nodes stopped at (the chain is halted: nothing changes while they are asked). */
  latest: number;
  /** A height holding txs, its block hash (hex) and one of its txs (hash hex, kvstore key). */
  txHeight: number;
  txBlockHash: string;
  txHash: string;
  txKey: string;
  /** The height of a block holding only a `val=` tx (its validator update applies at +2), and its hash. */
  valTxHeight: number;
  valTxHash: string;
  /** The height of the block holding duplicate-vote evidence (its validator leaves the set at +2). */
  evidenceHeight: number;
  /** A tx both mempools hold (the chain is halted, so it stays there). */
  pendingTx: string;
}

const hexBytes = (hex: string): Arg => arg.hex(Buffer.from(hex, "hex"));
const txHashArg = (hex: string): Arg => arg.bytes(Buffer.from(hex, "hex"));
const text = (s: string): Arg => arg.bytes(Buffer.from(s));

/** The read routes, each asked several ways; every answer is compared by value. */
export function readQuestions(f: ChainFacts): Question[] {
  const q = (label: string, method: string, params: Record<string, Arg> = {}): Question => ({ label, method, params });
  const h = arg.int;
  return [
    q("block(1)", "block", { height: h(1) }),
    q("block(tx)", "block", { height: h(f.txHeight) }),
    q("block(val tx)", "block", { height: h(f.valTxHeight) }),
    q("block(latest)", "block", { height: h(f.latest) }),
    q("block()", "block"),
    q("block_by_hash", "block_by_hash", { hash: hexBytes(f.txBlockHash) }),
    q("blockchain()", "blockchain"),
    q("blockchain(1..latest)", "blockchain", { minHeight: h(1), maxHeight: h(f.latest) }),
    q("blockchain(tx±1)", "blockchain", { minHeight: h(f.txHeight - 1), maxHeight: h(f.txHeight + 1) }),
    q("blockchain(0..0)", "blockchain", { minHeight: h(0), maxHeight: h(0) }),
    q("commit(1)", "commit", { height: h(1) }),
    q("commit(tx)", "commit", { height: h(f.txHeight) }),
    q("commit(latest-1)", "commit", { height: h(f.latest - 1) }),
    q("block(evidence)", "block", { height: h(f.evidenceHeight) }),
    q("commit(evidence)", "commit", { height: h(f.evidenceHeight) }),
    q("block_results(evidence)", "block_results", { height: h(f.evidenceHeight) }),
    q("validators(evidence+2)", "validators", { height: h(f.evidenceHeight + 2) }),
    q("validators(1)", "validators", { height: h(1) }),
    q("validators(val tx+1)", "validators", { height: h(f.valTxHeight + 1) }),
    q("validators(val tx+2)", "validators", { height: h(f.valTxHeight + 2) }),
    q("validators(page 2 of 1)", "validators", { height: h(f.latest), page: h(2), per_page: h(1) }),
    q("validators()", "validators"),
    q("block_results(1)", "block_results", { height: h(1) }),
    q("block_results(tx)", "block_results", { height: h(f.txHeight) }),
    q("block_results(val tx)", "block_results", { height: h(f.valTxHeight) }),
    q("block_results()", "block_results"),
    q("header(tx)", "header", { height: h(f.txHeight) }),
    q("header()", "header"),
    q("header_by_hash", "header_by_hash", { hash: hexBytes(f.txBlockHash) }),
    q("tx", "tx", { hash: txHashArg(f.txHash) }),
    q("tx(prove)", "tx", { hash: txHashArg(f.txHash), prove: arg.bool(true) }),
    q("tx(prove, only tx of its block)", "tx", { hash: txHashArg(f.valTxHash), prove: arg.bool(true) }),
    q("tx_search(height)", "tx_search", { query: arg.str(`tx.height=${f.txHeight}`) }),
    q("tx_search(hash, prove)", "tx_search", { query: arg.str(`tx.hash='${f.txHash}'`), prove: arg.bool(true) }),
    q("tx_search(app.key)", "tx_search", { query: arg.str(`app.key='${f.txKey}'`) }),
    q("tx_search(range, desc, page 2)", "tx_search", {
      query: arg.str("tx.height>0"),
      order_by: arg.str("desc"),
      page: h(2),
      per_page: h(2),
    }),
    q("tx_search(asc)", "tx_search", { query: arg.str("tx.height>=1"), order_by: arg.str("asc") }),
    q("tx_search(no match)", "tx_search", { query: arg.str("app.key='no-such-key'") }),
    q("block_search(range)", "block_search", { query: arg.str(`block.height>1 AND block.height<=${f.txHeight}`) }),
    q("block_search(desc, page)", "block_search", {
      query: arg.str("block.height>0"),
      order_by: arg.str("desc"),
      page: h(2),
      per_page: h(3),
    }),
    q("abci_info", "abci_info"),
    q("abci_query(key)", "abci_query", { path: arg.str(""), data: text(f.txKey) }),
    q("abci_query(missing key)", "abci_query", { path: arg.str(""), data: text("no-such-key") }),
    q("abci_query(prove)", "abci_query", { path: arg.str(""), data: text(f.txKey), prove: arg.bool(true) }),
    q("abci_query(height)", "abci_query", { path: arg.str(""), data: text(f.txKey), height: h(f.latest) }),
    q("abci_query(/val)", "abci_query", { path: arg.str("/val"), data: text("x") }),
    q("consensus_params(1)", "consensus_params", { height: h(1) }),
    q("consensus_params()", "consensus_params"),
    q("genesis", "genesis"),
    q("genesis_chunked(0)", "genesis_chunked", { chunk: h(0) }),
    q("genesis_chunked()", "genesis_chunked"),
    q("check_tx(ok)", "check_tx", { tx: text("checked=1") }),
    q("check_tx(bad)", "check_tx", { tx: text("no-equals-sign") }),
    q("check_tx(val)", "check_tx", { tx: text("val=ed25519!AAAA!1") }),
    q("unconfirmed_txs()", "unconfirmed_txs"),
    q("unconfirmed_txs(limit 2)", "unconfirmed_txs", { limit: h(2) }),
    q("num_unconfirmed_txs", "num_unconfirmed_txs"),
  ];
}

/**
 * Routes compared by value where most fields are the chain's but some are each node's own (its id,
 * addresses, moniker, validator key): the allowances name those.
 */
export function nodeQuestions(): Question[] {
  return [
    { label: "status(value)", method: "status", params: {} },
    { label: "net_info(value)", method: "net_info", params: {} },
  ];
}

/** The routes whose answers are node-local (peers, round state): compared by shape only. */
export function shapeQuestions(): Question[] {
  return [
    { label: "status", method: "status", params: {} },
    { label: "net_info", method: "net_info", params: {} },
    { label: "dump_consensus_state", method: "dump_consensus_state", params: {} },
    { label: "consensus_state", method: "consensus_state", params: {} },
    { label: "health", method: "health", params: {} },
  ];
}

/** Bad input: every answer (HTTP status, JSON-RPC code, message and data) is compared by value. */
export function errorQuestions(f: ChainFacts): Question[] {
  const q = (label: string, method: string, params: Record<string, Arg> = {}): Question => ({ label, method, params });
  const h = arg.int;
  return [
    q("block(too high)", "block", { height: h(f.latest + 1000) }),
    q("block(0)", "block", { height: h(0) }),
    q("block(-1)", "block", { height: h(-1) }),
    q("block(abc)", "block", { height: arg.raw("abc", "abc") }),
    q("block(bool)", "block", { height: arg.raw(true, "true") }),
    q("block(object)", "block", { height: arg.raw({ a: 1 }, "{}") }),
    q("block(float)", "block", { height: arg.raw(1.5, "1.5") }),
    q("block(number)", "block", { height: arg.raw(2, "2") }),
    q("block_by_hash(missing)", "block_by_hash"),
    q("block_by_hash(not hex)", "block_by_hash", { hash: arg.raw("ZZZZ", "0xZZZZ") }),
    q("block_by_hash(short)", "block_by_hash", { hash: hexBytes("ABCD") }),
    q("block_by_hash(unknown)", "block_by_hash", { hash: hexBytes("AB".repeat(32)) }),
    q("header(too high)", "header", { height: h(f.latest + 1000) }),
    q("header(0)", "header", { height: h(0) }),
    q("header_by_hash(unknown)", "header_by_hash", { hash: hexBytes("AB".repeat(32)) }),
    q("header_by_hash(missing)", "header_by_hash"),
    q("commit(too high)", "commit", { height: h(f.latest + 1000) }),
    q("commit(-5)", "commit", { height: h(-5) }),
    q("validators(too high)", "validators", { height: h(f.latest + 1000) }),
    q("validators(page too high)", "validators", { height: h(1), page: h(50) }),
    q("validators(page 0)", "validators", { height: h(1), page: h(0) }),
    q("block_results(too high)", "block_results", { height: h(f.latest + 1000) }),
    q("block_results(0)", "block_results", { height: h(0) }),
    q("blockchain(min>max)", "blockchain", { minHeight: h(5), maxHeight: h(2) }),
    q("blockchain(min too high)", "blockchain", { minHeight: h(f.latest + 1000), maxHeight: h(f.latest + 2000) }),
    q("blockchain(negative)", "blockchain", { minHeight: h(-1), maxHeight: h(3) }),
    q("consensus_params(too high)", "consensus_params", { height: h(f.latest + 1000) }),
    q("tx(not found)", "tx", { hash: txHashArg("AB".repeat(32)) }),
    q("tx(missing hash)", "tx"),
    q("tx(short hash)", "tx", { hash: txHashArg("ABCD") }),
    q("tx(bad base64)", "tx", { hash: arg.raw("!!!", "0xZZ") }),
    q("tx_search(missing query)", "tx_search"),
    q("tx_search(bad query)", "tx_search", { query: arg.str("tx.height >>> 5") }),
    q("tx_search(bad order)", "tx_search", { query: arg.str("tx.height>0"), order_by: arg.str("sideways") }),
    q("tx_search(page too high)", "tx_search", { query: arg.str("tx.height>0"), page: h(1000) }),
    q("block_search(bad query)", "block_search", { query: arg.str("block.height=") }),
    q("abci_query(bad hex)", "abci_query", { path: arg.str(""), data: arg.raw("ZZ", "0xZZ") }),
    q("genesis_chunked(too high)", "genesis_chunked", { chunk: h(5) }),
    q("tx_search(page 0)", "tx_search", { query: arg.str("tx.height>0"), page: h(0) }),
    q("tx_search(per_page 0)", "tx_search", { query: arg.str("tx.height>0"), per_page: h(0) }),
    q("block_search(missing query)", "block_search"),
    q("broadcast_evidence(missing)", "broadcast_evidence"),
    q("broadcast_evidence(junk)", "broadcast_evidence", {
      evidence: arg.raw({ type: "x", value: {} }, '{"type":"x"}'),
    }),
    q("abci_query(height too high)", "abci_query", { path: arg.str(""), data: text("k"), height: h(f.latest + 1000) }),
    q("unsafe route (disabled)", "dial_seeds", { seeds: arg.raw([], "[]") }),
    q("check_tx(missing)", "check_tx"),
    q("broadcast_tx_sync(missing)", "broadcast_tx_sync"),
    q("unknown method", "no_such_method"),
    q("broadcast_tx_sync(in the mempool)", "broadcast_tx_sync", { tx: text(f.pendingTx) }),
    q("broadcast_tx_async(in the mempool)", "broadcast_tx_async", { tx: text(f.pendingTx) }),
    q("broadcast_tx_commit(in the mempool)", "broadcast_tx_commit", { tx: text(f.pendingTx) }),
    q("broadcast_tx_sync(refused by CheckTx)", "broadcast_tx_sync", { tx: text("no-equals-sign") }),
    q("broadcast_tx_async(refused by CheckTx)", "broadcast_tx_async", { tx: text("no-equals-sign") }),
    q("broadcast_tx_commit(refused by CheckTx)", "broadcast_tx_commit", { tx: text("no-equals-sign") }),
    q("broadcast_tx_sync(empty)", "broadcast_tx_sync", { tx: text("") }),
    {
      ...q("subscribe over HTTP", "subscribe", { query: arg.str("tm.event='NewBlock'") }),
      transports: ["uri", "http"],
    },
    { ...q("unsubscribe_all over HTTP", "unsubscribe_all"), transports: ["uri", "http"] },
    { ...q("subscribe(bad query)", "subscribe", { query: arg.str("tm.event=") }), transports: ["ws"] },
    { ...q("subscribe(missing query)", "subscribe"), transports: ["ws"] },
    { ...q("unsubscribe(not subscribed)", "unsubscribe", { query: arg.str("tm.event='Vote'") }), transports: ["ws"] },
    { ...q("unsubscribe_all(none)", "unsubscribe_all"), transports: ["ws"] },
    // In this order, on one WebSocket connection: subscribe, again, unsubscribe, again.
    { ...q("subscribe(NewBlock)", "subscribe", { query: arg.str("tm.event='NewBlock'") }), transports: ["ws"] },
    { ...q("subscribe(NewBlock) again", "subscribe", { query: arg.str("tm.event='NewBlock'") }), transports: ["ws"] },
    { ...q("unsubscribe(NewBlock)", "unsubscribe", { query: arg.str("tm.event='NewBlock'") }), transports: ["ws"] },
    {
      ...q("unsubscribe(NewBlock) again", "unsubscribe", { query: arg.str("tm.event='NewBlock'") }),
      transports: ["ws"],
    },
    { ...q("subscribe(unknown event)", "subscribe", { query: arg.str("tm.event='NoSuchEvent'") }), transports: ["ws"] },
    { ...q("unsubscribe_all(one)", "unsubscribe_all"), transports: ["ws"] },
  ];
}

/** URI GETs whose query strings only the URI form can spell (quoting, 0x, empty values): [label, path]. */
export function rawGets(f: ChainFacts): [string, string][] {
  return [
    ["height quoted", `/block?height="${f.txHeight}"`],
    ["height 0x", "/block?height=0x05"],
    ["height empty", "/block?height="],
    ["height text", "/block?height=abc"],
    ["bytes unquoted", "/abci_query?data=hello"],
    ["bytes quoted", '/abci_query?data="hello"'],
    ["hash unquoted hex", `/tx?hash=${f.txHash}`],
    ["hash quoted", `/tx?hash="${f.txHash}"`],
    ["string unquoted", "/tx_search?query=tx.height>0"],
    ["bool as text", `/tx?hash=0x${f.txHash}&prove=yes`],
    ["page text", "/validators?height=1&page=abc"],
    ["unknown param", "/block?heigth=3"],
    ["repeated param", `/block?height=1&height=${f.txHeight}`],
    ["root", "/"],
    ["unknown path", "/no/such/path"],
  ];
}

/** HTTP requests outside the two usual forms: [label, request]; compared by status, content type and body. */
export const ODD_HTTP: readonly [string, RawHttpOptions][] = [
  [
    "a batch",
    {
      method: "POST",
      path: "/",
      body: '[{"jsonrpc":"2.0","id":1,"method":"health"},{"jsonrpc":"2.0","id":2,"method":"block","params":{"height":"1"}}]',
    },
  ],
  [
    "a batch with an error",
    {
      method: "POST",
      path: "/",
      body: '[{"jsonrpc":"2.0","id":1,"method":"no_such"},{"jsonrpc":"2.0","id":2,"method":"block","params":{"height":"0"}}]',
    },
  ],
  ["a notification (no id)", { method: "POST", path: "/", body: '{"jsonrpc":"2.0","method":"health"}' }],
  ["a batch of notifications", { method: "POST", path: "/", body: '[{"jsonrpc":"2.0","method":"health"}]' }],
  ["POST to a route path", { method: "POST", path: "/health", body: '{"jsonrpc":"2.0","id":3,"method":"health"}' }],
  ["POST with an empty body", { method: "POST", path: "/", body: "" }],
  [
    "POST as text/plain",
    {
      method: "POST",
      path: "/",
      body: '{"jsonrpc":"2.0","id":4,"method":"health"}',
      headers: { "content-type": "text/plain" },
    },
  ],
  ["PUT", { method: "PUT", path: "/", body: '{"jsonrpc":"2.0","id":5,"method":"health"}' }],
  ["GET /websocket without an upgrade", { method: "GET", path: "/websocket" }],
  ["HEAD of a route", { method: "HEAD", path: "/health" }],
  ["GET with a JSON-RPC body", { method: "GET", path: "/", body: '{"jsonrpc":"2.0","id":6,"method":"health"}' }],
];

/**
 * Raw bytes on one connection: [label, bytes]; compared by the status lines of the answers, in order
 * (header sets differ between Go's net/http and node:http where no client looks).
 */
export const RAW_EXCHANGES: readonly [string, string][] = [
  [
    "a GET with an undeclared body, then close",
    'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n{"jsonrpc":"2.0"}',
  ],
  ["a GET with an undeclared body, kept alive", 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n{"jsonrpc":"2.0"}\r\n\r\n'],
  ["no Host, kept alive", "GET /health HTTP/1.1\r\n\r\n"],
  [
    "two pipelined GETs",
    "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  ],
  ["not HTTP", "GARBAGE\r\n\r\n"],
  ["no Host", "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"],
  ["HTTP/1.0", "GET /health HTTP/1.0\r\n\r\n"],
];

/** The status lines of a raw HTTP exchange, in order. */
export function statusLines(raw: string): string[] {
  return [...raw.matchAll(/HTTP\/1\.[01] \d{3}[^\r\n]*/g)].map((m) => m[0]);
}

/** Malformed JSON-RPC envelopes sent by POST and over the WebSocket: [label, body, JSON of the answer's id]. */
export const BAD_ENVELOPES: readonly [string, string, string][] = [
  ["not JSON", "{not json", ""],
  ["empty batch", "[]", ""],
  ["no method", '{"jsonrpc":"2.0","id":7}', "7"],
  ["wrong jsonrpc version", '{"jsonrpc":"1.0","id":8,"method":"health"}', "8"],
  ["params an array", '{"jsonrpc":"2.0","id":9,"method":"block","params":["3"]}', "9"],
  ["params a string", '{"jsonrpc":"2.0","id":10,"method":"block","params":"x"}', "10"],
  ["unknown param", '{"jsonrpc":"2.0","id":11,"method":"block","params":{"heigth":"3"}}', "11"],
  ["string id", '{"jsonrpc":"2.0","id":"abc","method":"health"}', '"abc"'],
];
