/**
 * Request floods against a running node (`npm run bench:flood`, requestFlood.test.ts): malformed and
 * oversized requests on each RPC server (node RPC over HTTP and WebSocket, Ethereum JSON-RPC over
 * HTTP and WebSocket) while a loop sends EVM transfers. Every request must get an error answer of the
 * right kind (JSON-RPC error code or HTTP status, or the WebSocket close code for an oversized frame);
 * the node must keep committing; its memory is sampled from /proc/PID/status.
 *
 * Everything talks to 127.0.0.1 only, with bounded counts, connections and time.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { Wallet } from "ethers";
import WebSocket from "ws";
import { type SpawnedNode, spawnNode } from "./testNode.js";

// ---------------------------------------------------------------------------------------------
// The node

/** The `[json-rpc]` http-timeout the flood runs with (bounds how long a slowloris request is held). */
export const FLOOD_HTTP_TIMEOUT = "10s";

/** The limits the malformed requests are built around (config defaults; see docs/operations.md). */
export const LIMITS = {
  /** `[rpc] max_body_bytes`: node RPC HTTP body and WebSocket message. */
  cometMaxBody: 1_000_000,
  /** `[rpc] max_request_batch_size`. */
  cometMaxBatch: 10,
  /** Ethereum JSON-RPC HTTP body (geth's 5 MiB). */
  evmMaxBody: 5 * 1024 * 1024,
  /** Ethereum JSON-RPC WebSocket message (Cosmos EVM's 1 MiB). */
  evmMaxFrame: 1024 * 1024,
  /** `[json-rpc] batch-request-limit`. */
  evmMaxBatch: 1000,
} as const;

export interface FloodNode {
  readonly node: SpawnedNode;
  readonly pid: number;
  /** host:port of each server. */
  readonly rpc: string;
  readonly evmHttp: string;
  readonly evmWs: string;
  stop(): Promise<number | null>;
}

/**
 * Starts `cometh start` on a fresh home (EVM app, both RPC servers on ephemeral 127.0.0.1 ports);
 * `launcher` runs it as `npm start` does (its Node flags, the bundled build when fresh).
 */
export async function startFloodNode(home: string, opts: { launcher?: boolean } = {}): Promise<FloodNode> {
  const node = spawnNode(
    [
      "start",
      "--home",
      home,
      "--rpc.laddr",
      "tcp://127.0.0.1:0",
      "--p2p.laddr",
      "tcp://127.0.0.1:0",
      "--json-rpc.address",
      "127.0.0.1:0",
      "--json-rpc.ws-address",
      "127.0.0.1:0",
      "--json-rpc.http-timeout",
      FLOOD_HTTP_TIMEOUT,
      "--consensus.timeout_commit",
      "200ms",
      "--log_level",
      "error",
    ],
    opts,
  );
  const rpc = await node.ready;
  const deadline = Date.now() + 30_000;
  let m: RegExpExecArray | null = null;
  while (m === null) {
    m = /Ethereum JSON-RPC listening on http:\/\/(\S+) and ws:\/\/(\S+)/.exec(node.output());
    if (m !== null) break;
    if (Date.now() > deadline) throw new Error(`no Ethereum JSON-RPC address announced:\n${node.output()}`);
    await sleep(50);
  }
  const pid = node.child.pid;
  if (pid === undefined) throw new Error("the node has no pid");
  return {
    node,
    pid,
    rpc,
    evmHttp: m[1] as string,
    evmWs: m[2] as string,
    async stop() {
      node.child.kill("SIGTERM");
      const timer = setTimeout(() => node.child.kill("SIGKILL"), 20_000);
      const code = await node.exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of a process, in MiB (undefined off Linux or once it has exited). */
export function memoryOf(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN);
    return { rss: kib("VmRSS") / 1024, hwm: kib("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

async function latestHeight(rpc: string): Promise<number> {
  const res = await fetch(`http://${rpc}/status`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { result: { sync_info: { latest_block_height: string } } };
  return Number(body.result.sync_info.latest_block_height);
}

// ---------------------------------------------------------------------------------------------
// Watching the node: heights and memory

export interface Watch {
  /** Blocks committed and the longest time without a new block, since start. */
  stop(): Promise<{ blocks: number; longestStallMs: number; peakRssMiB: number; hwmMiB: number }>;
}

export async function watchNode(node: FloodNode): Promise<Watch> {
  const first = await latestHeight(node.rpc);
  let last = first;
  let lastChange = Date.now();
  let longestStallMs = 0;
  let peakRss = memoryOf(node.pid)?.rss ?? 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const mem = memoryOf(node.pid);
      if (mem !== undefined) peakRss = Math.max(peakRss, mem.rss);
      try {
        const h = await latestHeight(node.rpc);
        const now = Date.now();
        if (h > last) {
          last = h;
          lastChange = now;
        }
        longestStallMs = Math.max(longestStallMs, now - lastChange);
      } catch {
        // A status call lost in the flood: the stall keeps counting.
        longestStallMs = Math.max(longestStallMs, Date.now() - lastChange);
      }
      await sleep(250);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const h = await latestHeight(node.rpc);
      return {
        blocks: h - first,
        longestStallMs,
        peakRssMiB: peakRss,
        hwmMiB: memoryOf(node.pid)?.hwm ?? 0,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The transfer loop

export interface TxLoop {
  stop(): Promise<{ sent: number; accepted: number; committed: number }>;
}

/** The first Hardhat/Anvil dev key (funded on cometh's default genesis). */
const DEV_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

async function evmCall(
  evmHttp: string,
  method: string,
  params: unknown[],
): Promise<{ result?: unknown; error?: unknown }> {
  const res = await fetch(`http://${evmHttp}/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(15_000),
  });
  return (await res.json()) as { result?: unknown; error?: unknown };
}

/** Sends 1-wei transfers one after another (each waits for its CheckTx answer) until stopped. */
export async function startTxLoop(evmHttp: string): Promise<TxLoop> {
  const wallet = new Wallet(DEV_KEY);
  const chainId = BigInt((await evmCall(evmHttp, "eth_chainId", [])).result as string);
  const nonceOf = async (tag: string) =>
    Number(BigInt((await evmCall(evmHttp, "eth_getTransactionCount", [wallet.address, tag])).result as string));
  const startNonce = await nonceOf("latest");
  let nonce = await nonceOf("pending");
  let sent = 0;
  let accepted = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const raw = await wallet.signTransaction({
        type: 2,
        chainId,
        nonce,
        to: "0x000000000000000000000000000000000000dEaD",
        value: 1n,
        gasLimit: 21_000n,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1n,
      });
      sent++;
      try {
        const r = await evmCall(evmHttp, "eth_sendRawTransaction", [raw]);
        if (r.error === undefined) {
          accepted++;
          nonce++;
        } else {
          nonce = await nonceOf("pending");
          await sleep(100);
        }
      } catch {
        await sleep(100);
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      // What was accepted is committed within a few blocks.
      const deadline = Date.now() + 20_000;
      let committed = (await nonceOf("latest")) - startNonce;
      while (committed < accepted && Date.now() < deadline) {
        await sleep(250);
        committed = (await nonceOf("latest")) - startNonce;
      }
      return { sent, accepted, committed };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Requests

export type ServerName =
  | "node RPC HTTP"
  | "node RPC WebSocket"
  | "Ethereum JSON-RPC HTTP"
  | "Ethereum JSON-RPC WebSocket";
export const SERVERS: readonly ServerName[] = [
  "node RPC HTTP",
  "node RPC WebSocket",
  "Ethereum JSON-RPC HTTP",
  "Ethereum JSON-RPC WebSocket",
];

/** What one request got. */
type Outcome =
  /** An error of the expected kind. */
  | "error"
  /** An error, but not the one expected (counted as an error answer, reported apart). */
  | "wrongError"
  /** A normal answer: a result, or nothing (a notification's empty answer). */
  | "nonError"
  /** The connection ended (or the client gave up) without an answer. */
  | "dropped";

/** What a right answer looks like. */
interface Expect {
  /** HTTP status (HTTP requests). */
  status?: number;
  /** JSON-RPC error code of the answer (every element, for a batch answer). */
  code?: number;
  /** WebSocket close code the server sends instead of an answer. */
  close?: number;
}

interface Kind {
  readonly name: string;
  /** Share of the requests (relative weight). */
  readonly weight: number;
  readonly expect: Expect;
  /** The request itself. */
  readonly build: () => Buffer | string;
  /** How it is sent (default: the server's normal way). */
  readonly via?: "raw" | "slowloris" | "declaredHuge" | "chunkedHuge";
}

let nextId = 1;
const call = (method: string, params?: unknown, version: unknown = "2.0") =>
  JSON.stringify({ jsonrpc: version, id: nextId++, method, ...(params === undefined ? {} : { params }) });
const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
/** A JSON-RPC call whose body is just over `limit` bytes. */
const oversized = (limit: number) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "status", params: { pad: "x".repeat(limit) } });
const batchOf = (n: number, method: string) => `[${Array.from({ length: n }, () => call(method)).join(",")}]`;

const COMET_KINDS: readonly Kind[] = [
  {
    name: "invalid JSON",
    weight: 200,
    expect: { status: 500, code: -32700 },
    build: () => '{"jsonrpc":"2.0","id":1,"method":"status"',
  },
  // CometBFT does not check the "jsonrpc" value; a non-string one fails to decode.
  {
    name: "wrong jsonrpc version",
    weight: 150,
    expect: { status: 500, code: -32700 },
    build: () => call("status", undefined, 2),
  },
  { name: "unknown method", weight: 250, expect: { status: 200, code: -32601 }, build: () => call("no_such_route") },
  {
    name: "body over max_body_bytes",
    weight: 2,
    expect: { status: 400, code: -32600 },
    build: () => oversized(LIMITS.cometMaxBody),
  },
  {
    name: "nesting over 10000",
    weight: 50,
    expect: { status: 500, code: -32700 },
    build: () => deep(10_001),
  },
  {
    name: "batch over max_request_batch_size",
    weight: 100,
    expect: { status: 200, code: -32600 },
    build: () => batchOf(LIMITS.cometMaxBatch + 1 + (nextId % 50), "health"),
  },
  { name: "binary garbage", weight: 230, expect: { status: 500, code: -32700 }, build: () => garbage(512) },
  {
    name: "garbage instead of HTTP",
    weight: 15,
    expect: { status: 400 },
    build: () => Buffer.concat([Buffer.from("\x16\x03\x01"), randomBytes(300)]),
    via: "raw",
  },
  {
    name: "slowloris (partial head)",
    weight: 3,
    expect: { status: 408 },
    build: () => "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n",
    via: "slowloris",
  },
];

const COMET_WS_KINDS: readonly Kind[] = [
  { name: "not JSON", weight: 250, expect: { code: -32700 }, build: () => "hello, websocket" },
  { name: "wrong jsonrpc version", weight: 150, expect: { code: -32700 }, build: () => call("status", undefined, 2) },
  { name: "unknown method", weight: 250, expect: { code: -32601 }, build: () => call("no_such_route") },
  { name: "nesting over 10000", weight: 50, expect: { code: -32700 }, build: () => deep(10_001) },
  // The node RPC's WebSocket takes no batches (CometBFT): an array does not decode.
  { name: "batch", weight: 100, expect: { code: -32700 }, build: () => batchOf(20, "health") },
  { name: "binary garbage frame", weight: 190, expect: { code: -32700 }, build: () => garbage(512) },
  {
    name: "frame over max_body_bytes",
    weight: 2,
    expect: { close: 1009 },
    build: () => oversized(LIMITS.cometMaxBody),
  },
  {
    name: "slowloris (partial upgrade)",
    weight: 3,
    expect: { status: 408 },
    build: () => "GET /websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n",
    via: "slowloris",
  },
];

const EVM_KINDS: readonly Kind[] = [
  {
    name: "invalid JSON",
    weight: 200,
    expect: { status: 200, code: -32700 },
    build: () => '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"',
  },
  {
    name: "wrong jsonrpc version",
    weight: 150,
    expect: { status: 200, code: -32600 },
    build: () => call("eth_chainId", [], "1.0"),
  },
  {
    name: "unknown method",
    weight: 250,
    expect: { status: 200, code: -32601 },
    build: () => call("eth_noSuchMethod", []),
  },
  {
    name: "Content-Length over the body limit",
    weight: 10,
    expect: { status: 413 },
    build: () => "",
    via: "declaredHuge",
  },
  {
    name: "chunked body over the body limit",
    weight: 1,
    expect: { status: 413 },
    build: () => "",
    via: "chunkedHuge",
  },
  {
    name: "nesting over 10000",
    weight: 50,
    expect: { status: 200, code: -32700 },
    build: () => deep(10_001),
  },
  {
    name: "batch over batch-request-limit",
    weight: 100,
    expect: { status: 200, code: -32600 },
    build: () => `[${Array.from({ length: LIMITS.evmMaxBatch + 1 }, () => '{"jsonrpc":"2.0","id":1}').join(",")}]`,
  },
  { name: "binary garbage", weight: 220, expect: { status: 200, code: -32700 }, build: () => garbage(512) },
  {
    name: "garbage instead of HTTP",
    weight: 15,
    expect: { status: 400 },
    build: () => Buffer.concat([Buffer.from("\x16\x03\x01"), randomBytes(300)]),
    via: "raw",
  },
  {
    name: "slowloris (partial head)",
    weight: 3,
    expect: { status: 408 },
    build: () => "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n",
    via: "slowloris",
  },
];

const EVM_WS_KINDS: readonly Kind[] = [
  { name: "not JSON", weight: 250, expect: { code: -32700 }, build: () => "hello, websocket" },
  { name: "wrong jsonrpc version", weight: 150, expect: { code: -32600 }, build: () => call("eth_chainId", [], "1.0") },
  { name: "unknown method", weight: 250, expect: { code: -32601 }, build: () => call("eth_noSuchMethod", []) },
  { name: "nesting over 10000", weight: 50, expect: { code: -32700 }, build: () => deep(10_001) },
  {
    name: "batch over batch-request-limit",
    weight: 100,
    expect: { code: -32600 },
    build: () => `[${Array.from({ length: LIMITS.evmMaxBatch + 1 }, () => '{"jsonrpc":"2.0","id":1}').join(",")}]`,
  },
  { name: "binary garbage frame", weight: 190, expect: { code: -32700 }, build: () => garbage(512) },
  { name: "frame over 1 MiB", weight: 2, expect: { close: 1009 }, build: () => oversized(LIMITS.evmMaxFrame) },
  {
    name: "slowloris (partial upgrade)",
    weight: 3,
    expect: { status: 408 },
    build: () => "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n",
    via: "slowloris",
  },
];

/** Random bytes that are not JSON: they start with a byte no JSON value starts with. */
function garbage(n: number): Buffer {
  const b = randomBytes(n);
  b[0] = 0xff;
  return b;
}

/** The kinds of a server, each with its count for `total` requests (largest remainders). */
function plan(kinds: readonly Kind[], total: number): Map<Kind, number> {
  const sum = kinds.reduce((s, k) => s + k.weight, 0);
  const out = new Map<Kind, number>();
  let given = 0;
  for (const k of kinds) {
    const n = Math.floor((total * k.weight) / sum);
    out.set(k, n);
    given += n;
  }
  for (const k of kinds) {
    if (given >= total) break;
    out.set(k, (out.get(k) ?? 0) + 1);
    given++;
  }
  return out;
}

/** Judges a JSON answer against what was expected. */
function judgeJson(text: string, expect: Expect, status?: number): Outcome {
  if (status !== undefined && expect.status !== undefined && status !== expect.status) {
    return status >= 400 ? "wrongError" : hasError(text) ? "wrongError" : "nonError";
  }
  if (text.length === 0) return status !== undefined && status >= 400 ? "wrongError" : "nonError";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return status !== undefined && status >= 400 && expect.code === undefined ? "error" : "wrongError";
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) return "nonError";
  let allErrors = true;
  let allExpected = true;
  for (const item of items) {
    const err = (item as { error?: { code?: unknown } } | null)?.error;
    if (err === undefined || err === null) {
      allErrors = false;
      continue;
    }
    if (expect.code !== undefined && err.code !== expect.code) allExpected = false;
  }
  if (!allErrors) return "nonError";
  return allExpected ? "error" : "wrongError";
}

function hasError(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return (Array.isArray(v) ? v : [v]).every((i) => (i as { error?: unknown } | null)?.error !== undefined);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Senders

/** The status line's code of a raw HTTP answer, if one arrived. */
function rawStatus(text: string): number | undefined {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  return m === null ? undefined : Number(m[1]);
}

/** Raw bytes on a new connection; the status of what comes back before the server closes (bounded). */
function sendRaw(host: string, port: number, bytes: Buffer | string, timeoutMs = 15_000): Promise<number | undefined> {
  return new Promise((resolve) => {
    let got = "";
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(rawStatus(got));
    };
    const socket = connect({ host, port }, () => socket.write(bytes));
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      got += d;
      if (got.includes("\r\n\r\n") || got.length > 4096) finish();
    });
    socket.on("error", finish);
    socket.on("close", finish);
    const timer = setTimeout(finish, timeoutMs);
  });
}

/**
 * A request whose head never completes: one header line every 500 ms until the server answers or
 * closes (expected: 408 after its request/header timeout), at most `maxMs`.
 */
function slowloris(host: string, port: number, head: string, maxMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    let got = "";
    let done = false;
    let n = 0;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(drip);
      clearTimeout(timer);
      socket.destroy();
      resolve(rawStatus(got));
    };
    const socket: Socket = connect({ host, port }, () => socket.write(head));
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      got += d;
      if (got.includes("\r\n\r\n")) finish();
    });
    socket.on("error", finish);
    socket.on("close", finish);
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write(`X-Slow-${n++}: 1\r\n`);
    }, 500);
    const timer = setTimeout(finish, maxMs);
  });
}

/** Headers announcing a body over the limit, and no body (the server must refuse on the head). */
function declaredHuge(host: string, port: number, length: number): Promise<number | undefined> {
  return sendRaw(
    host,
    port,
    `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
  );
}

/** A chunked body streamed past `limit` (the server reads up to its limit, then refuses). */
function chunkedHuge(host: string, port: number, limit: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    let got = "";
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(rawStatus(got));
    };
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const head = Buffer.from(`${chunk.length.toString(16)}\r\n`);
    const tail = Buffer.from("\r\n");
    let sent = 0;
    const pump = () => {
      while (!done && sent <= limit + chunk.length) {
        sent += chunk.length;
        if (!socket.write(Buffer.concat([head, chunk, tail]))) {
          socket.once("drain", pump);
          return;
        }
      }
      if (!done) socket.write("0\r\n\r\n");
    };
    const socket = connect({ host, port }, () => {
      socket.write(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
      );
      pump();
    });
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      got += d;
      if (got.includes("\r\n\r\n")) finish();
    });
    socket.on("error", finish);
    socket.on("close", finish);
    const timer = setTimeout(finish, 30_000);
  });
}

/** One POST on a kept-alive connection of `agent`. */
function post(
  agent: Agent,
  host: string,
  port: number,
  body: Buffer | string,
): Promise<{ status: number; text: string } | undefined> {
  return new Promise((resolve) => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    const req = httpRequest(
      {
        agent,
        host,
        port,
        method: "POST",
        path: "/",
        headers: { "Content-Type": "application/json", "Content-Length": bytes.length },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", () => resolve(undefined));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end(bytes);
  });
}

// ---------------------------------------------------------------------------------------------
// One server's flood

export interface KindReport {
  sent: number;
  errors: number;
  wrongErrors: number;
  nonErrors: number;
  dropped: number;
}

export interface ServerReport extends KindReport {
  server: ServerName;
  seconds: number;
  kinds: Record<string, KindReport>;
  /** Blocks committed while this server was flooded, and the longest wait for one. */
  blocks: number;
  longestStallMs: number;
  /** Highest VmRSS sampled during the flood, and VmHWM (the process's peak so far) at its end. */
  peakRssMiB: number;
  hwmMiB: number;
}

function emptyCounts(): KindReport {
  return { sent: 0, errors: 0, wrongErrors: 0, nonErrors: 0, dropped: 0 };
}

function hostPort(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}

/** The requests of a flood, shuffled (deterministically). */
function queueFor(kinds: readonly Kind[], total: number): Kind[] {
  const queue: Kind[] = [];
  for (const [k, n] of plan(kinds, total)) for (let i = 0; i < n; i++) queue.push(k);
  let seed = 0x2545f491;
  for (let i = queue.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const j = seed % (i + 1);
    [queue[i], queue[j]] = [queue[j] as Kind, queue[i] as Kind];
  }
  return queue;
}

/** Counts one outcome. */
function record(counts: Map<string, KindReport>, kind: Kind, outcome: Outcome): void {
  let c = counts.get(kind.name);
  if (c === undefined) {
    c = emptyCounts();
    counts.set(kind.name, c);
  }
  c.sent++;
  if (outcome === "error") c.errors++;
  else if (outcome === "wrongError") c.wrongErrors++;
  else if (outcome === "nonError") c.nonErrors++;
  else c.dropped++;
}

function statusOutcome(status: number | undefined, expect: Expect): Outcome {
  if (status === undefined) return "dropped";
  if (status === expect.status) return "error";
  return status >= 400 ? "wrongError" : "nonError";
}

/** Sends a request of a raw kind (its own connection). */
async function rawRequest(kind: Kind, host: string, port: number, slowlorisMaxMs: number): Promise<Outcome> {
  switch (kind.via) {
    case "slowloris":
      return statusOutcome(await slowloris(host, port, kind.build() as string, slowlorisMaxMs), kind.expect);
    case "declaredHuge":
      return statusOutcome(await declaredHuge(host, port, LIMITS.evmMaxBody + 1), kind.expect);
    case "chunkedHuge":
      return statusOutcome(await chunkedHuge(host, port, LIMITS.evmMaxBody), kind.expect);
    default:
      return statusOutcome(await sendRaw(host, port, kind.build()), kind.expect);
  }
}

async function floodHttp(
  addr: string,
  kinds: readonly Kind[],
  total: number,
  connections: number,
  slowlorisMaxMs: number,
): Promise<Map<string, KindReport>> {
  const { host, port } = hostPort(addr);
  const counts = new Map<string, KindReport>();
  const queue = queueFor(kinds, total);
  // Slow requests hold their connection for seconds: they start first, on their own connections.
  const slow = queue.filter((k) => k.via === "slowloris");
  const fast = queue.filter((k) => k.via !== "slowloris");
  const slowDone = Promise.all(
    slow.map(async (k) => record(counts, k, await rawRequest(k, host, port, slowlorisMaxMs))),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  const worker = async () => {
    while (next < fast.length) {
      const kind = fast[next++] as Kind;
      if (kind.via !== undefined) {
        record(counts, kind, await rawRequest(kind, host, port, slowlorisMaxMs));
        continue;
      }
      const res = await post(agent, host, port, kind.build());
      record(counts, kind, res === undefined ? "dropped" : judgeJson(res.text, kind.expect, res.status));
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  await slowDone;
  return counts;
}

/** One WebSocket connection's next answer: a message, or the close code, or nothing in time. */
type WsAnswer = { text: string } | { close: number } | undefined;

class WsClient {
  private ws: WebSocket | undefined;
  private waiting: ((a: WsAnswer) => void) | undefined;
  private readonly url: string;
  /** Connections the server ended without being asked to (oversized frames aside). */
  dropped = 0;

  constructor(url: string) {
    this.url = url;
  }

  private open(): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url, { perMessageDeflate: false, handshakeTimeout: 10_000 });
      ws.on("open", () => resolve(ws));
      ws.on("error", (err) => reject(err));
      ws.on("message", (data: WebSocket.RawData) => {
        const w = this.waiting;
        this.waiting = undefined;
        w?.({ text: (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString("utf8") });
      });
      ws.on("close", (code: number) => {
        if (this.ws === ws) this.ws = undefined;
        const w = this.waiting;
        this.waiting = undefined;
        w?.({ close: code });
      });
    });
  }

  /** Sends one frame and waits for what answers it (bounded). */
  async exchange(frame: Buffer | string, binary: boolean): Promise<WsAnswer> {
    if (this.ws === undefined || this.ws.readyState !== WebSocket.OPEN) {
      try {
        this.ws = await this.open();
      } catch {
        return undefined;
      }
    }
    const ws = this.ws;
    return new Promise<WsAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        ws.terminate();
        resolve(undefined);
      }, 15_000);
      this.waiting = (a) => {
        clearTimeout(timer);
        resolve(a);
      };
      ws.send(frame, { binary }, (err) => {
        if (err !== undefined && err !== null && this.waiting !== undefined) {
          const w = this.waiting;
          this.waiting = undefined;
          w(undefined);
        }
      });
    });
  }

  close(): void {
    this.ws?.close();
  }
}

async function floodWs(
  url: string,
  httpAddr: string,
  kinds: readonly Kind[],
  total: number,
  connections: number,
  slowlorisMaxMs: number,
): Promise<Map<string, KindReport>> {
  const { host, port } = hostPort(httpAddr);
  const counts = new Map<string, KindReport>();
  const queue = queueFor(kinds, total);
  const slow = queue.filter((k) => k.via === "slowloris");
  const frames = queue.filter((k) => k.via !== "slowloris");
  const slowDone = Promise.all(
    slow.map(async (k) => record(counts, k, await rawRequest(k, host, port, slowlorisMaxMs))),
  );
  let next = 0;
  const worker = async () => {
    const client = new WsClient(url);
    while (next < frames.length) {
      const kind = frames[next++] as Kind;
      const frame = kind.build();
      const answer = await client.exchange(frame, typeof frame !== "string");
      let outcome: Outcome;
      if (answer === undefined) outcome = "dropped";
      else if ("close" in answer) {
        outcome =
          kind.expect.close === answer.close ? "error" : kind.expect.close !== undefined ? "wrongError" : "dropped";
      } else outcome = kind.expect.close !== undefined ? "wrongError" : judgeJson(answer.text, kind.expect);
      record(counts, kind, outcome);
    }
    client.close();
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await slowDone;
  return counts;
}

export interface FloodOptions {
  /** Requests per server. */
  readonly requests: number;
  /** Concurrent connections per server. */
  readonly connections: number;
  /** How long a slowloris request is held at most (the servers' timeouts end it first). */
  readonly slowlorisMaxMs?: number;
}

/** Floods one server while the node is watched; returns its report. */
export async function floodServer(node: FloodNode, server: ServerName, opts: FloodOptions): Promise<ServerReport> {
  const watch = await watchNode(node);
  const started = Date.now();
  const slowMax = opts.slowlorisMaxMs ?? 30_000;
  let counts: Map<string, KindReport>;
  switch (server) {
    case "node RPC HTTP":
      counts = await floodHttp(node.rpc, COMET_KINDS, opts.requests, opts.connections, slowMax);
      break;
    case "node RPC WebSocket":
      counts = await floodWs(
        `ws://${node.rpc}/websocket`,
        node.rpc,
        COMET_WS_KINDS,
        opts.requests,
        opts.connections,
        slowMax,
      );
      break;
    case "Ethereum JSON-RPC HTTP":
      counts = await floodHttp(node.evmHttp, EVM_KINDS, opts.requests, opts.connections, slowMax);
      break;
    case "Ethereum JSON-RPC WebSocket":
      counts = await floodWs(`ws://${node.evmWs}/`, node.evmWs, EVM_WS_KINDS, opts.requests, opts.connections, slowMax);
      break;
  }
  const seconds = (Date.now() - started) / 1000;
  const w = await watch.stop();
  const total = emptyCounts();
  const kinds: Record<string, KindReport> = {};
  for (const [name, c] of counts) {
    kinds[name] = c;
    total.sent += c.sent;
    total.errors += c.errors;
    total.wrongErrors += c.wrongErrors;
    total.nonErrors += c.nonErrors;
    total.dropped += c.dropped;
  }
  return {
    server,
    ...total,
    seconds,
    kinds,
    blocks: w.blocks,
    longestStallMs: w.longestStallMs,
    peakRssMiB: w.peakRssMiB,
    hwmMiB: w.hwmMiB,
  };
}

/** A table of reports, one line per server (and per kind when `detail`). */
export function formatReports(reports: readonly ServerReport[], detail = false): string {
  const head = [
    "server",
    "requests",
    "errors",
    "wrong errors",
    "non-errors",
    "dropped",
    "seconds",
    "blocks",
    "max gap s",
    "peak RSS MiB",
    "VmHWM MiB",
  ];
  const rows: string[][] = [head];
  for (const r of reports) {
    rows.push([
      r.server,
      String(r.sent),
      String(r.errors),
      String(r.wrongErrors),
      String(r.nonErrors),
      String(r.dropped),
      r.seconds.toFixed(1),
      String(r.blocks),
      (r.longestStallMs / 1000).toFixed(1),
      r.peakRssMiB.toFixed(0),
      r.hwmMiB.toFixed(0),
    ]);
    if (detail) {
      for (const [name, c] of Object.entries(r.kinds)) {
        rows.push([
          `  ${name}`,
          String(c.sent),
          String(c.errors),
          String(c.wrongErrors),
          String(c.nonErrors),
          String(c.dropped),
          "",
          "",
          "",
          "",
          "",
        ]);
      }
    }
  }
  const widths = head.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  "))
    .join("\n");
}

// ---------------------------------------------------------------------------------------------
// Clients that send and never read

export interface StallReport {
  /** Bytes of requests the node took (written and out of the client's own buffer). */
  acceptedBytes: number;
  /** Whether the node stopped taking them (writes blocked for a second) before the time was up. */
  stalled: boolean;
}

/** One masked WebSocket text frame (a zero mask: the payload is sent as is). */
function wsFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  if (payload.length >= 126) throw new Error("short frames only");
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]);
}

/**
 * Writes small requests on one connection as fast as the node takes them, never reading an answer
 * (HTTP: pipelined POSTs; WebSocket: frames after the upgrade), for at most `seconds`.
 */
export async function sendWithoutReading(node: FloodNode, server: ServerName, seconds: number): Promise<StallReport> {
  const ws = server.endsWith("WebSocket");
  const addr = server.startsWith("node RPC") ? node.rpc : ws ? node.evmWs : node.evmHttp;
  const { host, port } = hostPort(addr);
  const method = server.startsWith("node RPC") ? "no_such_route" : "eth_noSuchMethod";
  const body = `{"jsonrpc":"2.0","id":1,"method":"${method}"}`;
  const one = ws
    ? wsFrame(body)
    : Buffer.from(
        `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
  const burst = Buffer.concat(Array.from({ length: 1000 }, () => one));
  const socket = connect({ host, port });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  if (ws) {
    const path = server.startsWith("node RPC") ? "/websocket" : "/";
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    await new Promise<void>((resolve, reject) => {
      let head = "";
      const onData = (d: Buffer) => {
        head += d.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        socket.off("data", onData);
        if (head.startsWith("HTTP/1.1 101")) resolve();
        else reject(new Error(`upgrade refused: ${head.slice(0, 80)}`));
      };
      socket.on("data", onData);
    });
  }
  // From here on nothing is read: the answers pile up on the node's side.
  socket.pause();
  let written = 0;
  let stalled = false;
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline && !socket.destroyed) {
    written += burst.length;
    if (socket.write(burst)) continue;
    const drained = await Promise.race([
      new Promise<boolean>((r) => socket.once("drain", () => r(true))),
      sleep(1000).then(() => false),
    ]);
    if (!drained) {
      stalled = true;
      break;
    }
  }
  const acceptedBytes = written - socket.writableLength;
  socket.destroy();
  return { acceptedBytes, stalled };
}
