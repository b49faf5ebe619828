import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { COMET_ROUTE_NAMES } from "../../src/rpc/comet/index.js";
import {
  type Arg,
  arg,
  type Reply,
  RpcTestClient,
  TRANSPORTS,
  type Transport,
  WsTestClient,
} from "../../src/rpc/comet/testing/rpcTestClient.js";
import {
  ADDITIONS,
  createSchemaSet,
  formatErrors,
  OVERRIDES,
  responsePointer,
  type SchemaSet,
} from "./cometOpenapiSchema.js";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

/**
 * Every CometBFT v0.38 route of a real node (kvstore app, kv indexer, `[rpc] unsafe = true`) over
 * URI GET, JSON-RPC POST and WebSocket, each answer validated against CometBFT's own OpenAPI
 * document (copied in test/spec/cometbft-openapi-v0.38.yaml). Where that document contradicts the
 * real v0.38 wire, the wire wins (docs/compatibility.md, "clients") and the correction is listed in
 * cometOpenapiSchema.ts with its reason; a test below proves every correction is needed. Routes the
 * document lacks (subscribe, unsubscribe, unsubscribe_all, unsafe_flush_mempool, pushed events) are
 * checked against the shapes of docs/cometbft-rpc.md §2.1 and §4 and docs/compatibility.md. "§N"
 * below is a section of docs/cometbft-rpc.md.
 *
 * Not overridden on purpose: dump_consensus_state's `valid_round`, `votes[].round` (decimal strings)
 * follow the document, whose types are our contract where no client decodes the value, although
 * real v0.38 sends numbers there (docs/compatibility.md, "documented shape" and the
 * `dump_consensus_state` row). consensus_state's `height_vote_set[].round` is a number in the
 * document, in real v0.38 and in our answers.
 */

const enc = new TextEncoder();

function sha256(b: Uint8Array): Buffer {
  return createHash("sha256").update(b).digest();
}

/** What the calls refer to: a committed tx and its block. */
interface Fixtures {
  tx: Uint8Array;
  txHash: Buffer;
  height: number;
  blockHash: Buffer;
}

interface RouteCall {
  /** Unique label. */
  readonly name: string;
  readonly method: string;
  readonly params?: (fx: Fixtures, t: Transport) => Record<string, Arg>;
  /** The schema: a JSON pointer into the document; default is the route's 200 (or 500 on error) answer. */
  readonly schema?: string;
  /** The call must fail with exactly this error. */
  readonly error?: { code: number; message: string; data: string };
  /** Extra checks on the result (what a schema cannot say). */
  // biome-ignore lint/suspicious/noExplicitAny: wire results are inspected freely
  readonly check?: (result: any, fx: Fixtures) => void;
}

const uniqueTx = (label: string, t: Transport) => arg.bytes(enc.encode(`openapi-${label}-${t}=${t}`));
const seedList = (items: string[]) => arg.raw(items, JSON.stringify(items));

const CALLS: readonly RouteCall[] = [
  { name: "health", method: "health", check: (r) => expect(r).toEqual({}) },
  { name: "status", method: "status", check: (r) => expect(r.node_info.network).toBe("test-chain") },
  { name: "net_info", method: "net_info" },
  {
    name: "blockchain",
    method: "blockchain",
    params: (fx) => ({ minHeight: arg.int(1), maxHeight: arg.int(fx.height) }),
    check: (r, fx) => expect(r.block_metas).toHaveLength(fx.height),
  },
  { name: "genesis", method: "genesis", check: (r) => expect(r.genesis.chain_id).toBe("test-chain") },
  {
    name: "genesis_chunked",
    method: "genesis_chunked",
    params: () => ({ chunk: arg.int(0) }),
    check: (r) => expect(JSON.parse(Buffer.from(r.data, "base64").toString()).chain_id).toBe("test-chain"),
  },
  {
    name: "block",
    method: "block",
    params: (fx) => ({ height: arg.int(fx.height) }),
    check: (r, fx) => expect(r.block.data.txs).toEqual([Buffer.from(fx.tx).toString("base64")]),
  },
  { name: "block (latest)", method: "block" },
  {
    name: "block_by_hash",
    method: "block_by_hash",
    params: (fx) => ({ hash: arg.bytes(fx.blockHash) }),
    check: (r, fx) => expect(r.block.header.height).toBe(String(fx.height)),
  },
  {
    name: "block_by_hash (unknown hash)",
    method: "block_by_hash",
    params: () => ({ hash: arg.bytes(sha256(enc.encode("no such block"))) }),
    check: (r) => expect(r).toEqual({ block_id: { hash: "", parts: { total: 0, hash: "" } }, block: null }),
  },
  {
    name: "block_results",
    method: "block_results",
    params: (fx) => ({ height: arg.int(fx.height) }),
    check: (r) => expect(r.txs_results).toHaveLength(1),
  },
  { name: "header", method: "header", params: (fx) => ({ height: arg.int(fx.height) }) },
  { name: "header_by_hash", method: "header_by_hash", params: (fx) => ({ hash: arg.hex(fx.blockHash) }) },
  {
    name: "header_by_hash (unknown hash)",
    method: "header_by_hash",
    params: () => ({ hash: arg.hex(sha256(enc.encode("no such header"))) }),
    check: (r) => expect(r).toEqual({ header: null }),
  },
  {
    name: "commit",
    method: "commit",
    params: (fx) => ({ height: arg.int(fx.height) }),
    check: (r) => expect(r.canonical).toBe(true),
  },
  { name: "commit (latest)", method: "commit", check: (r) => expect(r.canonical).toBe(false) },
  { name: "validators", method: "validators", params: (fx) => ({ height: arg.int(fx.height) }) },
  {
    name: "validators (paged)",
    method: "validators",
    params: () => ({ page: arg.int(1), per_page: arg.int(1) }),
    check: (r) => expect(r.count).toBe("1"),
  },
  { name: "consensus_params", method: "consensus_params", params: (fx) => ({ height: arg.int(fx.height) }) },
  { name: "dump_consensus_state", method: "dump_consensus_state", check: (r) => expect(r.peers).toEqual([]) },
  { name: "consensus_state", method: "consensus_state" },
  { name: "unconfirmed_txs", method: "unconfirmed_txs", params: () => ({ limit: arg.int(5) }) },
  { name: "num_unconfirmed_txs", method: "num_unconfirmed_txs" },
  {
    name: "broadcast_tx_sync",
    method: "broadcast_tx_sync",
    params: (_, t) => ({ tx: uniqueTx("sync", t) }),
    check: (r) => expect(r.code).toBe(0),
  },
  {
    name: "broadcast_tx_async",
    method: "broadcast_tx_async",
    params: (_, t) => ({ tx: uniqueTx("async", t) }),
    check: (r) => expect(r.code).toBe(0),
  },
  {
    name: "broadcast_tx_commit",
    method: "broadcast_tx_commit",
    params: (_, t) => ({ tx: uniqueTx("commit", t) }),
    check: (r) => expect(r.tx_result.code).toBe(0),
  },
  {
    name: "check_tx",
    method: "check_tx",
    params: (_, t) => ({ tx: uniqueTx("check", t) }),
    check: (r) => expect(r.code).toBe(0),
  },
  {
    name: "tx (prove)",
    method: "tx",
    params: (fx) => ({ hash: arg.bytes(fx.txHash), prove: arg.bool(true) }),
    check: (r, fx) => expect(r.proof.data).toBe(Buffer.from(fx.tx).toString("base64")),
  },
  {
    name: "tx",
    method: "tx",
    params: (fx) => ({ hash: arg.bytes(fx.txHash), prove: arg.bool(false) }),
    check: (r) => expect(r.proof).toBeUndefined(),
  },
  {
    name: "tx_search (prove)",
    method: "tx_search",
    params: (fx) => ({ query: arg.str(`tx.height=${fx.height}`), prove: arg.bool(true) }),
    check: (r) => expect(r.total_count).toBe("1"),
  },
  {
    name: "tx_search (paged, desc)",
    method: "tx_search",
    params: () => ({
      query: arg.str("app.creator='Cosmoshi'"),
      prove: arg.bool(false),
      page: arg.int(1),
      per_page: arg.int(2),
      order_by: arg.str("desc"),
    }),
    check: (r) => expect(r.txs.length).toBeGreaterThan(0),
  },
  {
    name: "block_search",
    method: "block_search",
    params: (fx) => ({
      query: arg.str(`block.height <= ${fx.height}`),
      page: arg.int(1),
      per_page: arg.int(2),
      order_by: arg.str("asc"),
    }),
    check: (r, fx) => expect(r.total_count).toBe(String(fx.height)),
  },
  { name: "abci_info", method: "abci_info" },
  {
    name: "abci_query",
    method: "abci_query",
    params: () => ({
      path: arg.str(""),
      data: arg.hex(enc.encode("openapi-a")),
      height: arg.int(0),
      prove: arg.bool(false),
    }),
    check: (r) => expect(Buffer.from(r.response.value, "base64").toString()).toBe("1"),
  },
  {
    name: "abci_query (missing key)",
    method: "abci_query",
    params: () => ({ path: arg.str(""), data: arg.hex(enc.encode("openapi-none")) }),
    check: (r) => expect(r.response.value).toBeNull(),
  },
  {
    name: "broadcast_evidence (no evidence)",
    method: "broadcast_evidence",
    error: { code: -32603, message: "Internal error", data: "no evidence was provided" },
  },
  {
    name: "dial_seeds (empty list)",
    method: "dial_seeds",
    params: () => ({ seeds: seedList([]) }),
    error: { code: -32603, message: "Internal error", data: "no seeds provided" },
  },
  {
    // The p2p switch dials in the background (an unreachable seed is only logged).
    name: "dial_seeds",
    method: "dial_seeds",
    params: () => ({ seeds: seedList(["f00dbabef00dbabef00dbabef00dbabef00dbabe@127.0.0.1:1"]) }),
    check: (r) => expect(r).toEqual({ log: "Dialing seeds in progress. See /net_info for details" }),
  },
  {
    name: "dial_peers (empty list)",
    method: "dial_peers",
    params: () => ({ peers: seedList([]) }),
    error: { code: -32603, message: "Internal error", data: "no peers provided" },
  },
  {
    name: "dial_peers (no ID)",
    method: "dial_peers",
    params: () => ({ peers: seedList(["127.0.0.1:1"]), persistent: arg.bool(true) }),
    error: { code: -32603, message: "Internal error", data: "address (127.0.0.1:1) does not contain ID" },
  },
  {
    // Not in the document; §2.1: `{}`.
    name: "unsafe_flush_mempool",
    method: "unsafe_flush_mempool",
    schema: "/components/schemas/EmptyResponse",
    check: (r) => expect(r).toEqual({}),
  },
];

let n: InProcessNode;
let rpc: RpcTestClient;
let fx: Fixtures;
const full: SchemaSet = createSchemaSet([...ADDITIONS, ...OVERRIDES]);

/** One validated answer. */
interface Answer {
  label: string;
  schema: string;
  reply: Reply;
  /** The expected HTTP status (undefined over WebSocket). */
  status: number | undefined;
  /** The expected `id` (undefined: not checked). */
  id?: unknown;
  /** A whole JSON-RPC message (false for an event's `data.value`, validated on its own). */
  envelope: boolean;
  call?: RouteCall;
}
const answers: Answer[] = [];
const calledRoutes = new Set<string>();

function schemaFor(call: RouteCall): string {
  if (call.schema !== undefined) return call.schema;
  return responsePointer(call.method, call.error === undefined ? "200" : "500");
}

/** HTTP status per transport (§1.2, §1.3): URI errors 500, JSON-RPC POST always 200. */
function statusFor(t: Transport, failed: boolean): number | undefined {
  if (t === "ws") return undefined;
  return t === "uri" && failed ? 500 : 200;
}

async function runCalls(): Promise<void> {
  for (const t of TRANSPORTS) {
    for (const call of CALLS) {
      const reply = await rpc.call(t, call.method, call.params?.(fx, t) ?? {});
      calledRoutes.add(call.method);
      answers.push({
        label: `${t} ${call.name}`,
        schema: schemaFor(call),
        reply,
        status: statusFor(t, call.error !== undefined),
        envelope: true,
        call,
        ...(t === "uri" ? { id: -1 } : {}),
      });
    }
  }
}

/** subscribe / unsubscribe / unsubscribe_all and the events they push, over one WebSocket. */
async function runSubscriptions(): Promise<void> {
  const ws = await WsTestClient.connect(n.wsUrl);
  const empty = "/components/schemas/EmptyResponse";
  const frame = (id: string, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
  const send = async (label: string, id: string, method: string, params: unknown) => {
    const msg = await ws.sendRaw(frame(id, method, params), JSON.stringify(id));
    calledRoutes.add(method);
    answers.push({ label: `ws ${label}`, schema: empty, reply: asReply(msg), status: undefined, id, envelope: true });
    return msg as { result?: unknown };
  };
  const events = [
    ["NewBlock", "/components/schemas/NewBlockValue"],
    ["NewBlockHeader", "/components/schemas/NewBlockHeaderValue"],
    ["NewBlockEvents", "/components/schemas/NewBlockEventsValue"],
    ["Tx", "/components/schemas/TxEventValue"],
  ] as const;
  for (const [type] of events)
    await send(`subscribe ${type}`, `sub-${type}`, "subscribe", { query: `tm.event='${type}'` });
  const tx = enc.encode("openapi-event=pushed");
  const sync = await rpc.call("http", "broadcast_tx_sync", { tx: arg.bytes(tx) });
  expect(sync.body.result.code).toBe(0);
  for (const [type, valueSchema] of events) {
    const pushes = await ws.waitPushes(`sub-${type}`, 1, 20_000);
    const push = pushes[0];
    answers.push({
      label: `ws event ${type}`,
      schema: "/components/schemas/EventPush",
      reply: asReply(push),
      status: undefined,
      id: `sub-${type}`,
      envelope: true,
    });
    const value = (push as { result: { data: { value: unknown } } }).result.data.value;
    answers.push({
      label: `ws event ${type} value`,
      schema: valueSchema,
      reply: asReply(value),
      status: undefined,
      envelope: false,
    });
  }
  await send("unsubscribe", "unsub", "unsubscribe", { query: "tm.event = 'NewBlock'" });
  await send("unsubscribe_all", "unsub-all", "unsubscribe_all", {});
  // A string id is echoed as a string (§0).
  await send("health (string id)", "health-string-id", "health", {});
  await ws.close();
}

function asReply(msg: unknown): Reply {
  return { status: 0, headers: {}, text: JSON.stringify(msg), body: msg };
}

beforeAll(async () => {
  n = await startInProcessNode({ "--rpc.unsafe": true });
  rpc = new RpcTestClient(n.rpcUrl);
  await n.node.consensus.waitForHeight(2);
  // A few committed kvstore txs; the last one is the fixture.
  let last: { tx: Uint8Array; hash: string; height: string } | undefined;
  for (const kv of ["openapi-a=1", "openapi-b=2", "openapi-c=3"]) {
    const tx = enc.encode(kv);
    const r = await rpc.call("http", "broadcast_tx_commit", { tx: arg.bytes(tx) });
    expect(r.body.error).toBeUndefined();
    last = { tx, hash: r.body.result.hash, height: r.body.result.height };
  }
  if (last === undefined) throw new RangeError("no tx committed");
  const height = Number(last.height);
  // The fixture block must not be the latest, so that `commit` at its height is canonical.
  await n.node.consensus.waitForHeight(height + 1);
  const block = await rpc.call("http", "block", { height: arg.int(height) });
  fx = {
    tx: last.tx,
    txHash: Buffer.from(last.hash, "hex"),
    height,
    blockHash: Buffer.from(block.body.result.block_id.hash, "hex"),
  };
  await runCalls();
  await runSubscriptions();
});

afterAll(async () => {
  await rpc?.close();
  await n?.close();
});

describe("OpenAPI v0.38 schemas against a real node", () => {
  test("behavior: every v0.38 route was called, unsafe ones included", () => {
    expect([...calledRoutes].sort()).toEqual([...COMET_ROUTE_NAMES].sort());
    expect(COMET_ROUTE_NAMES).toHaveLength(34);
  });

  test("default: every answer has the envelope of §1.4 (keys in order, echoed id, HTTP status per transport)", () => {
    const problems: string[] = [];
    for (const a of answers) {
      if (!a.envelope) continue;
      const body = a.reply.body as Record<string, unknown> | undefined;
      const failed = a.call?.error !== undefined;
      const keys = body === undefined ? [] : Object.keys(body);
      if (keys.join() !== ["jsonrpc", "id", failed ? "error" : "result"].join())
        problems.push(`${a.label}: keys ${keys}`);
      if (body?.jsonrpc !== "2.0") problems.push(`${a.label}: jsonrpc ${String(body?.jsonrpc)}`);
      if (a.id !== undefined && body?.id !== a.id) problems.push(`${a.label}: id ${JSON.stringify(body?.id)}`);
      if (a.status !== undefined && a.reply.status !== a.status) problems.push(`${a.label}: HTTP ${a.reply.status}`);
      if (a.status !== undefined && a.reply.headers["content-type"] !== "application/json") {
        problems.push(`${a.label}: content-type ${a.reply.headers["content-type"]}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("default: every answer is valid against the corrected OpenAPI document", () => {
    const problems: string[] = [];
    for (const a of answers) {
      const validate = full.validator(a.schema);
      if (!validate(a.reply.body)) {
        problems.push(`${a.label} (${a.schema}):\n  ${formatErrors(validate.errors).join("\n  ")}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("error: error answers carry the exact code, message and data", () => {
    const problems: string[] = [];
    for (const a of answers) {
      const want = a.call?.error;
      if (want === undefined) continue;
      const got = a.reply.body?.error;
      if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${a.label}: ${JSON.stringify(got)}`);
    }
    expect(problems).toEqual([]);
  });

  test("behavior: route-specific checks hold on every transport", () => {
    for (const a of answers) {
      if (a.call?.check === undefined) continue;
      expect(a.reply.body?.error, a.label).toBeUndefined();
      a.call.check(a.reply.body.result, fx);
    }
  });

  test("behavior: every correction is needed — without it the document rejects a real answer", () => {
    const fixes = OVERRIDES.filter((o) => o.kind === "fix");
    const unneeded = fixes.filter((fix) => {
      const without = createSchemaSet([...ADDITIONS, ...OVERRIDES.filter((o) => o !== fix)]);
      return answers.every((a) => without.validator(a.schema)(a.reply.body));
    });
    expect(unneeded.map((o) => o.at)).toEqual([]);
  });
});
