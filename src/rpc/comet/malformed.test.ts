import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cometRoutes } from "./routes.js";
import { type Reply, rawHttp, type Transport, WsTestClient } from "./testing/rpcTestClient.js";
import { type FakeRpc, startFakeRpc } from "./testing/startFakeRpc.js";

/**
 * Generated malformed requests over every transport: each must get the right error family (and
 * HTTP status), and the server must keep answering afterwards.
 */

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  name: string;
  transport: Transport;
  /** For http/ws: the raw body or frame. For uri: the path with query. */
  payload: string | Buffer;
  binary?: boolean;
  /** Expected JSON-RPC error code. */
  code: number;
  /** Expected HTTP status (http/uri). */
  status?: number;
  data?: RegExp;
  /** JSON id the answer carries ("" when none). */
  id: string;
}

const rand = rng(0xc0ffee);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

const VALID = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "block", params: { height: "2" } });
const INT64_ROUTES: [string, string][] = [
  ["block", "height"],
  ["block_results", "height"],
  ["commit", "height"],
  ["header", "height"],
  ["validators", "height"],
  ["consensus_params", "height"],
];
const BYTES_ROUTES: [string, string][] = [
  ["block_by_hash", "hash"],
  ["tx", "hash"],
  ["check_tx", "tx"],
  ["broadcast_tx_sync", "tx"],
  ["broadcast_tx_async", "tx"],
  ["broadcast_tx_commit", "tx"],
];

function req(id: number, method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

function buildCases(): Case[] {
  const cases: Case[] = [];
  let id = 1000;
  const both = (
    c: Omit<Case, "transport" | "status" | "code"> & { httpCode: number; wsCode: number; status: number },
  ) => {
    const { httpCode, wsCode, status, ...rest } = c;
    cases.push({ ...rest, transport: "http", code: httpCode, status });
    cases.push({ ...rest, transport: "ws", code: wsCode });
  };

  // Truncated requests: never valid JSON.
  for (let cut = 1; cut < VALID.length; cut += 2) {
    const payload = VALID.slice(0, cut);
    cases.push({ name: `truncated@${cut}`, transport: "http", payload, code: -32700, status: 500, id: "" });
    cases.push({ name: `truncated@${cut}`, transport: "ws", payload, code: -32700, id: "" });
  }
  // Random garbage (text and binary).
  for (let i = 0; i < 60; i++) {
    const len = 1 + Math.floor(rand() * 40);
    const bytes = Buffer.from(Array.from({ length: len }, () => Math.floor(rand() * 256)));
    if (bytes[0] === undefined || /^[\s]*$/.test(bytes.toString("latin1"))) continue;
    try {
      const v = JSON.parse(bytes.toString("utf8"));
      if (v === null || Array.isArray(v) || typeof v === "object") continue;
    } catch {
      // Garbage, as intended.
    }
    cases.push({ name: `garbage#${i}`, transport: "http", payload: bytes, code: -32700, status: 500, id: "" });
    cases.push({ name: `binary#${i}`, transport: "ws", payload: bytes, binary: true, code: -32700, id: "" });
  }
  // Bad id types and bad field types.
  for (const bad of [
    '{"id":true,"method":"health"}',
    '{"id":[1],"method":"health"}',
    '{"id":1,"method":5}',
    '{"id":1,"jsonrpc":{}}',
  ]) {
    cases.push({ name: `bad-fields ${bad}`, transport: "http", payload: bad, code: -32700, status: 500, id: "" });
    cases.push({ name: `bad-fields ${bad}`, transport: "ws", payload: bad, code: -32700, id: "" });
  }
  // Unknown methods.
  for (let i = 0; i < 20; i++) {
    const method = `${pick(["get", "eth_", "Block", "status ", "", "../", "héllo"])}${Math.floor(rand() * 1e6).toString(36)}`;
    if (Object.hasOwn(cometRoutes, method)) continue;
    const n = id++;
    both({
      name: `unknown ${method}`,
      payload: req(n, method, {}),
      httpCode: -32601,
      wsCode: -32601,
      status: 200,
      id: String(n),
    });
  }
  // int64 params: numbers, bools, objects, bad strings → params errors; negative/zero heights → handler errors.
  for (const [method, name] of INT64_ROUTES) {
    for (const bad of [5, true, { a: 1 }, [1], 1.5, "abc", "1.5", "1e3", "", " x", "99999999999999999999"]) {
      const n = id++;
      both({
        name: `${method} ${name}=${JSON.stringify(bad)}`,
        payload: req(n, method, { [name]: bad }),
        httpCode: -32602,
        wsCode: -32603,
        status: 200,
        data: /^error converting json params to arguments: /,
        id: String(n),
      });
    }
    for (const h of ["-1", "0", "-9223372036854775808"]) {
      const n = id++;
      both({
        name: `${method} ${name}=${h}`,
        payload: req(n, method, { [name]: h }),
        httpCode: -32603,
        wsCode: -32603,
        status: 200,
        data: /^height must be greater than 0, but got -?\d+$/,
        id: String(n),
      });
    }
    cases.push({
      name: `uri ${method}?${name}=abc`,
      transport: "uri",
      payload: `/${method}?${name}=abc`,
      code: -32602,
      status: 500,
      id: "-1",
    });
    cases.push({
      name: `uri ${method}?${name}=0x01`,
      transport: "uri",
      payload: `/${method}?${name}=0x01`,
      code: -32602,
      status: 500,
      id: "-1",
    });
    cases.push({
      name: `uri ${method}?${name}=-5`,
      transport: "uri",
      payload: `/${method}?${name}=-5`,
      code: -32603,
      status: 500,
      id: "-1",
    });
    cases.push({
      name: `uri ${method}?${name}=1e2`,
      transport: "uri",
      payload: `/${method}?${name}=1e2`,
      code: -32602,
      status: 500,
      id: "-1",
    });
  }
  // []byte params: bad base64, wrong types.
  for (const [method, name] of BYTES_ROUTES) {
    for (const bad of ["abc", "a===", "!!!!", "YWJj ZA==", 12, true, ["a"], { a: "b" }]) {
      const n = id++;
      both({
        name: `${method} ${name}=${JSON.stringify(bad)}`,
        payload: req(n, method, { [name]: bad }),
        httpCode: -32602,
        wsCode: -32603,
        status: 200,
        data: /^error converting json params to arguments: (illegal base64 data at input byte \d+|json: cannot unmarshal)/,
        id: String(n),
      });
    }
    cases.push({
      name: `uri ${method}?${name}=0xabc`,
      transport: "uri",
      payload: `/${method}?${name}=0xabc`,
      code: -32602,
      status: 500,
      id: "-1",
    });
    cases.push({
      name: `uri ${method}?${name}=zz`,
      transport: "uri",
      payload: `/${method}?${name}=zz`,
      code: -32602,
      status: 500,
      id: "-1",
    });
  }
  // HexBytes and bools.
  for (const bad of ["0xAB", "XYZ", "ABC", 7]) {
    const n = id++;
    both({
      name: `header_by_hash hash=${JSON.stringify(bad)}`,
      payload: req(n, "header_by_hash", { hash: bad }),
      httpCode: -32602,
      wsCode: -32603,
      status: 200,
      data: /^error converting json params to arguments: (encoding\/hex: |invalid hex string: )/,
      id: String(n),
    });
  }
  for (const bad of ["true", 1, "yes", {}]) {
    const n = id++;
    both({
      name: `tx prove=${JSON.stringify(bad)}`,
      payload: req(n, "tx", { hash: "AAAA", prove: bad }),
      httpCode: -32602,
      wsCode: -32603,
      status: 200,
      data: /^error converting json params to arguments: json: cannot unmarshal \w+ into Go value of type bool$/,
      id: String(n),
    });
  }
  // Arity and params shapes.
  for (const params of [["1", "2"], [], "x", 5, true]) {
    const n = id++;
    both({
      name: `block params=${JSON.stringify(params)}`,
      payload: req(n, "block", params),
      httpCode: -32602,
      wsCode: -32603,
      status: 200,
      id: String(n),
    });
  }
  // Bad queries.
  for (const q of ["", "tm.event=", "AND", "a='b' OR c='d'", "tm.event='x' AND", "a < 'str'", "'x'='y'", "a=b"]) {
    for (const method of ["tx_search", "block_search"]) {
      const n = id++;
      both({
        name: `${method} query=${q}`,
        payload: req(n, method, { query: q }),
        httpCode: -32603,
        wsCode: -32603,
        status: 200,
        id: String(n),
      });
    }
    const n = id++;
    cases.push({
      name: `subscribe query=${q}`,
      transport: "ws",
      payload: req(n, "subscribe", { query: q }),
      code: -32603,
      data: /^failed to parse query: /,
      id: String(n),
    });
  }
  // Bad pages and orders.
  for (const [page, order] of [
    ["0", ""],
    ["-1", ""],
    ["9", ""],
    ["1", "up"],
    ["1", "ASC"],
  ] as const) {
    const n = id++;
    both({
      name: `tx_search page=${page} order=${order}`,
      payload: req(n, "tx_search", { query: "tx.height=2", page, order_by: order }),
      httpCode: -32603,
      wsCode: -32603,
      status: 200,
      data: /^(page should be within \[1, 1\] range, given -?\d+|expected order_by to be either `asc` or `desc` or empty)$/,
      id: String(n),
    });
  }
  // Bad evidence.
  for (const ev of [5, "x", { type: "" }, { type: "tendermint/DuplicateVoteEvidence" }, { type: "nope", value: {} }]) {
    const n = id++;
    both({
      name: `broadcast_evidence ${JSON.stringify(ev)}`,
      payload: req(n, "broadcast_evidence", { evidence: ev }),
      httpCode: -32602,
      wsCode: -32603,
      status: 200,
      id: String(n),
    });
  }
  // Paths that are not routes.
  for (const path of ["/nope", "/block/", "/Block", "/health/extra", "/%00", "/websocket/x"]) {
    cases.push({ name: `path ${path}`, transport: "uri", payload: path, code: 0, status: 404, id: "" });
  }
  return cases;
}

const CASES = buildCases();

describe("malformed requests", () => {
  let f: FakeRpc;
  let ws: WsTestClient;
  beforeAll(async () => {
    f = await startFakeRpc();
    ws = await WsTestClient.connect(`${f.base.replace(/^http/, "ws")}/websocket`);
  });
  afterAll(async () => {
    await ws.close();
    await f.close();
  });

  test("behavior: there are a few hundred generated cases", () => {
    expect(CASES.length).toBeGreaterThan(400);
  });

  test("error: every malformed request gets the right error and the server keeps answering", async () => {
    const failures: string[] = [];
    for (const c of CASES) {
      let reply: Reply;
      if (c.transport === "ws") {
        const msg = await ws.sendRaw(c.payload, c.id, c.binary === true);
        reply = { status: 0, headers: {}, text: JSON.stringify(msg), body: msg };
      } else if (c.transport === "http") {
        reply = await rawHttp(f.base, { method: "POST", path: "/", body: c.payload });
      } else {
        reply = await rawHttp(f.base, { path: c.payload as string });
      }
      const problems: string[] = [];
      if (c.status !== undefined && reply.status !== c.status) problems.push(`status ${reply.status} ≠ ${c.status}`);
      if (c.code !== 0) {
        const err = reply.body?.error;
        if (err?.code !== c.code) problems.push(`code ${err?.code} ≠ ${c.code}`);
        if (c.data !== undefined && !c.data.test(String(err?.data))) problems.push(`data ${JSON.stringify(err?.data)}`);
        const gotId = reply.body?.id === undefined ? "" : JSON.stringify(reply.body.id);
        if (gotId !== c.id) problems.push(`id ${gotId} ≠ ${c.id}`);
        if (reply.body?.result !== undefined) problems.push("has a result");
      }
      if (problems.length > 0)
        failures.push(`${c.transport} ${c.name}: ${problems.join(", ")} — ${reply.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    // Still alive on every transport.
    expect((await rawHttp(f.base, { path: "/health" })).body.result).toEqual({});
    expect((await rawHttp(f.base, { method: "POST", path: "/", body: req(1, "health", {}) })).body.result).toEqual({});
    expect(await ws.sendRaw(req(2, "health", {}), "2")).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
  });
});
