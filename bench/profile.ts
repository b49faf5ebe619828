/**
 * npm run bench:profile [-- options]
 *
 * Where cometh's main thread spends its time under read load, per route. It starts `cometh start` on a fresh
 * temporary home FROM SOURCES (COMETH_FROM_SOURCE=1: bin/cometh.js runs src/ through tsx, so profile frames
 * name src/ files) with package.json's "start" environment and Node flags plus --inspect=127.0.0.1:0, and the
 * settings bench:evm gives it (bench/nodes.ts comethStart: JSON-RPC on 127.0.0.1, --consensus.timeout_commit
 * --timeout-commit (0s), no empty blocks, --log_level error). It does bench:evm's untimed setup (bench/evm.ts
 * setupContracts: the ERC-20 and the compute-loop contract), then per route: a 1 s warm-up, and
 * --seconds (default 5) of load at --connections keep-alive connections (default 32; bench/load.ts) during
 * which, and only during which, V8's sampling profiler runs on the main thread (the inspector's Profiler
 * domain over its WebSocket, found through http://127.0.0.1:PORT/json/list; a sample every --interval µs,
 * default 250). Setup, warm-ups and the other routes are outside every profile.
 *
 * Routes (--routes, comma-separated keys; default the first four):
 *   balanceOf           eth_call balanceOf, the same body every time
 *   balanceOf-distinct  eth_call balanceOf of a new holder per request
 *   loop-distinct       eth_call of the compute loop (~32 500 steps) with a new argument per request
 *   blockNumber         eth_blockNumber
 *   getBalance          eth_getBalance (not in the default set)
 * The distinct routes are bench:evm's bodies; their warm-ups use other holders and arguments than the
 * measured second so no memo warmed up by the warm-up answers the measured requests.
 *
 * Per route it prints req/s (under the profiler, which costs a few per cent), then the main thread's wall
 * time over the measured window split into (each sample goes to the category of its nearest stack frame
 * that has one, from the leaf up):
 *   interpreter   src/evm/**
 *   state         src/app/evm/stateManager.ts, src/app/evm/stateDb.ts, src/store/**, lmdb (node_modules/lmdb)
 *   evm app       the rest of src/app/evm/** (the reader, the app, the read pool's main-thread side)
 *   rpc           src/rpc/** (HTTP fast path, JSON-RPC envelope, JSON, params, encoding)
 *   socket I/O    native stream-handle calls (writeUtf8String, writev, writeBuffer, readStart, ...) and
 *                 node:internal/stream_base_commons (onStreamRead, writeGeneric): the JS <-> libuv glue.
 *                 A read's own syscall runs in libuv before any JS is on the stack: it is in "other" as
 *                 V8's "(program)" (native code with no JS frame), as is epoll and timer processing
 *   gc            V8's "(garbage collector)"
 *   idle          V8's "(idle)": the main thread waiting in the event loop
 *   other         the rest: "(program)", node: internals with no src/ caller (node:http, timers, streams),
 *                 other src/ (consensus, mempool, node), other packages; its largest parts are listed
 * The samples are of wall time, not CPU time: when the OS preempts the main thread (2 cores shared with the
 * load generator, the read worker and anything else running), the time lands where it stopped, most often in
 * a syscall such as writeUtf8String; on a busy machine "socket I/O" grows and req/s drops from run to run.
 * Then the top 10 functions by self time (name, src path:line of the function through the tsx source map,
 * self ms and % of wall, and the category most of that self time went to). Only the main thread is sampled:
 * worker threads (the JSON-RPC read workers, which run eth_call when [json-rpc] read-workers > 0, and tsx's
 * module-loader threads) are out of scope; the ones running at the end are listed in a note.
 *
 * Options: --routes KEYS, --seconds N (5), --connections N (32), --interval US (250), --timeout-commit D
 * (0s), --node-args="ARGS" (more `cometh start` arguments, split on spaces, e.g.
 * --node-args="--json-rpc.read-workers 0"; with the = since the value starts with a dash),
 * --json (the results as JSON after the table).
 *
 * Everything stays on 127.0.0.1 (the inspector too); every wait is bounded; the node is stopped by its PID
 * (SIGTERM, then SIGKILL to its process group; bench/nodes.ts) at the end and on errors, after the inspector
 * session closes, and its temporary home is removed.
 */
import { SourceMap, type SourceMapPayload } from "node:module";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { load, type Route, Rpc, routeRequests, setupContracts } from "./evm.js";
import type { LoadResult } from "./load.js";
import { comethStart, type NodeSpec, type Running, sleep, startNode, stopNode, waitForChainId } from "./nodes.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** --routes keys, in the order they run. */
const KEYS: Record<string, Route> = {
  balanceOf: "eth_call balanceOf",
  "balanceOf-distinct": "eth_call balanceOf, distinct holders",
  "loop-distinct": "eth_call compute loop, distinct args",
  blockNumber: "eth_blockNumber",
  getBalance: "eth_getBalance",
};
const DEFAULT_KEYS = "balanceOf,balanceOf-distinct,loop-distinct,blockNumber";

const { values } = parseArgs({
  options: {
    routes: { type: "string", default: DEFAULT_KEYS },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    interval: { type: "string", default: "250" },
    "timeout-commit": { type: "string", default: "0s" },
    "node-args": { type: "string", default: "" },
    json: { type: "boolean", default: false },
  },
});

/** Warm-ups of the distinct routes use request numbers from here on, the measured window from 0. */
const WARM_UP_OFFSET = 2 ** 40;

// ---------------------------------------------------------------------------------------------------------
// A minimal Chrome DevTools Protocol client over the inspector's WebSocket.

interface CdpMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

class Inspector {
  private next = 0;
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();
  private readonly ws: WebSocket;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as CdpMessage;
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        if (p === undefined) return;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        if (msg.error !== undefined) p.reject(new Error(`inspector: ${msg.error.code} ${msg.error.message}`));
        else p.resolve(msg.result);
      } else if (msg.method !== undefined) {
        for (const fn of this.listeners.get(msg.method) ?? []) fn(msg.params);
      }
    });
    ws.on("close", () => {
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error("inspector session closed"));
      }
      this.pending.clear();
    });
  }

  static connect(url: string, timeoutMs: number): Promise<Inspector> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { handshakeTimeout: timeoutMs, maxPayload: 512 * 1024 * 1024 });
      ws.once("open", () => resolve(new Inspector(ws)));
      ws.once("error", reject);
    });
  }

  send<T = unknown>(method: string, params: object = {}, timeoutMs = 60_000): Promise<T> {
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`inspector: ${method} unanswered after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Calls `fn` on each `event` until the returned function is called. */
  on<P>(event: string, fn: (params: P) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    this.listeners.set(event, set);
    const f = fn as (params: unknown) => void;
    set.add(f);
    return () => set.delete(f);
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, 2000);
      this.ws.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.close();
    });
  }
}

/** The node's inspector port, from its "Debugger listening on ws://127.0.0.1:PORT/..." line (10 s at most). */
async function inspectorPort(node: Running): Promise<number> {
  for (const deadline = performance.now() + 10_000; performance.now() < deadline; ) {
    const m = /Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(node.output());
    if (m?.[1] !== undefined) return Number(m[1]);
    const exited = node.exited();
    if (exited !== undefined) throw new Error(`cometh exited (${exited}): ${node.output().trim()}`);
    await sleep(20);
  }
  throw new Error(`no inspector within 10 s: ${node.output().trim()}`);
}

/** The main thread's debugger WebSocket URL, from /json/list. */
async function debuggerUrl(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(5000) });
  const targets = (await res.json()) as { type: string; webSocketDebuggerUrl?: string }[];
  const url = targets.find((t) => t.type === "node")?.webSocketDebuggerUrl ?? targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) throw new Error(`no debugger target at http://127.0.0.1:${port}/json/list`);
  return url;
}

// ---------------------------------------------------------------------------------------------------------
// The profile and its split.

interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const CATEGORIES = ["interpreter", "state", "evm app", "rpc", "socket I/O", "gc", "idle", "other"] as const;
type Category = (typeof CATEGORIES)[number];

const CATEGORY_LABELS: Record<Category, string> = {
  interpreter: "interpreter (src/evm/**)",
  state: "state (stateManager, stateDb, src/store/**, lmdb)",
  "evm app": "EVM app/reader (other src/app/evm/**)",
  rpc: "RPC envelope/JSON/params/encoding (src/rpc/**)",
  "socket I/O": "socket I/O (native writes/reads + glue)",
  gc: "GC",
  idle: "idle",
  other: "other",
};

/** Native stream-handle methods (node's StreamBase / TCPWrap). */
const SOCKET_NATIVES = new Set([
  "writeUtf8String",
  "writeLatin1String",
  "writeAsciiString",
  "writeUcs2String",
  "writeBuffer",
  "writev",
  "readStart",
  "readStop",
  "shutdown",
  "useUserBuffer",
]);

/** A frame's file: src/... or node_modules/... relative to the checkout, node:..., or "" (native). */
function framePath(url: string): string {
  if (url.startsWith("file://")) {
    try {
      return relative(ROOT, fileURLToPath(new URL(url).href.replace(/[?#].*$/, "")));
    } catch {
      return url;
    }
  }
  return url;
}

/** The category a frame gives its samples on its own, or undefined (its caller's then). */
function frameCategory(f: CallFrame): Category | undefined {
  if (f.url === "") {
    if (f.functionName === "(garbage collector)") return "gc";
    if (f.functionName === "(idle)") return "idle";
    if (SOCKET_NATIVES.has(f.functionName)) return "socket I/O";
    return undefined;
  }
  if (f.url === "node:internal/stream_base_commons") return "socket I/O";
  const p = framePath(f.url);
  if (p.startsWith("src/evm/")) return "interpreter";
  if (p === "src/app/evm/stateManager.ts" || p === "src/app/evm/stateDb.ts" || p.startsWith("src/store/")) {
    return "state";
  }
  if (/(^|\/)node_modules\/lmdb\//.test(p)) return "state";
  if (p.startsWith("src/app/evm/")) return "evm app";
  if (p.startsWith("src/rpc/")) return "rpc";
  return undefined;
}

/** Where a sample in "other" goes in the breakdown of "other": the nearest frame with a file, grouped. */
function otherGroup(path: readonly CallFrame[]): string {
  const leaf = path[0];
  if (leaf !== undefined && leaf.url === "" && leaf.functionName.startsWith("(")) return leaf.functionName;
  for (const f of path) {
    if (f.url === "") continue;
    const p = framePath(f.url);
    if (p.startsWith("node:")) return p.split("/").slice(0, 3).join("/");
    const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(p);
    if (nm?.[1] !== undefined) return nm[1];
    if (p.startsWith("src/")) return p.split("/").slice(0, 2).join("/");
    return p;
  }
  return leaf === undefined ? "?" : `${leaf.functionName || "(anonymous)"} (native)`;
}

interface TopFunction {
  name: string;
  /** path:line (1-based); src/ lines through the source map when the script has one. */
  where: string;
  selfMs: number;
  pct: number;
  /** The category most of its self time went to. */
  category: Category;
  /** For the source-map pass. */
  frame: CallFrame;
}

interface Split {
  wallMs: number;
  samples: number;
  /** Percent of wall time per category. */
  split: Record<Category, number>;
  /** The largest parts of "other", percent of wall time. */
  other: { group: string; pct: number }[];
  top: TopFunction[];
  /** Percent of wall time in `__name`, the keepNames helper tsx's esbuild adds to each module (not in dist/). */
  keepNames: number;
}

function analyse(profile: Profile, topN: number): Split {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Category of each node: its own frame's, else its parent's (nearest frame with one, from the leaf up).
  const catOf = new Map<number, Category | undefined>();
  const category = (id: number): Category | undefined => {
    if (catOf.has(id)) return catOf.get(id);
    const chain: number[] = [];
    let cur: number | undefined = id;
    let found: Category | undefined;
    while (cur !== undefined) {
      if (catOf.has(cur)) {
        found = catOf.get(cur);
        break;
      }
      chain.push(cur);
      const own = frameCategory((byId.get(cur) as ProfileNode).callFrame);
      if (own !== undefined) {
        found = own;
        break;
      }
      cur = parent.get(cur);
    }
    for (const c of chain) catOf.set(c, found);
    return found;
  };
  const stack = (id: number): CallFrame[] => {
    const out: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      out.push((byId.get(cur) as ProfileNode).callFrame);
    }
    return out;
  };

  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const wall = profile.endTime - profile.startTime;
  // Sample i stands for the time since the previous one (timeDeltas[i]); the last also for the rest up to endTime.
  const dur = samples.map((_, i) => Math.max(0, deltas[i] ?? 0));
  const last = profile.startTime + deltas.reduce((a, b) => a + b, 0);
  if (dur.length > 0) dur[dur.length - 1] = (dur[dur.length - 1] as number) + Math.max(0, profile.endTime - last);

  const perCat = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  const selfByNode = new Map<number, number>();
  let keepNamesUs = 0;
  const other = new Map<string, number>();
  samples.forEach((id, i) => {
    const d = dur[i] as number;
    const c = category(id) ?? "other";
    perCat[c] += d;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + d);
    if ((byId.get(id) as ProfileNode).callFrame.functionName === "__name") keepNamesUs += d;
    if (c === "other") {
      const g = otherGroup(stack(id));
      other.set(g, (other.get(g) ?? 0) + d);
    }
  });
  const pct = (us: number) => (wall > 0 ? (100 * us) / wall : 0);

  // Self time per function (every node of the same function summed), idle excluded.
  // Each function's category: where most of its self time went (its own frame's, else its callers').
  const byFunction = new Map<string, { frame: CallFrame; us: number; cats: Map<Category, number> }>();
  for (const [id, us] of selfByNode) {
    const f = (byId.get(id) as ProfileNode).callFrame;
    if (f.functionName === "(idle)") continue;
    const key = `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`;
    const e = byFunction.get(key) ?? { frame: f, us: 0, cats: new Map() };
    e.us += us;
    const c = category(id) ?? "other";
    e.cats.set(c, (e.cats.get(c) ?? 0) + us);
    byFunction.set(key, e);
  }
  const top = [...byFunction.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, topN)
    .map(
      ({ frame, us, cats }): TopFunction => ({
        name: frame.functionName || "(anonymous)",
        where: frame.url === "" ? "(native)" : `${framePath(frame.url)}:${frame.lineNumber + 1}`,
        selfMs: us / 1000,
        pct: pct(us),
        category: [...cats.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "other",
        frame,
      }),
    );
  return {
    wallMs: wall / 1000,
    samples: samples.length,
    split: Object.fromEntries(CATEGORIES.map((c) => [c, pct(perCat[c])])) as Record<Category, number>,
    other: [...other.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([group, us]) => ({ group, pct: pct(us) })),
    top,
    keepNames: pct(keepNamesUs),
  };
}

/**
 * Maps each top function's line to its src/ line: tsx compiles src/*.ts with an inline source map, which the
 * Debugger domain reports per script (enabled only now, after every profile).
 */
async function mapLines(inspector: Inspector, functions: TopFunction[]): Promise<string> {
  const wanted = new Set(functions.filter((t) => t.frame.url.startsWith("file://")).map((t) => t.frame.scriptId));
  if (wanted.size === 0) return "";
  const maps = new Map<string, string>();
  const off = inspector.on<{ scriptId: string; sourceMapURL?: string }>("Debugger.scriptParsed", (p) => {
    if (wanted.has(p.scriptId) && p.sourceMapURL !== undefined && p.sourceMapURL !== "") {
      maps.set(p.scriptId, p.sourceMapURL);
    }
  });
  try {
    await inspector.send("Debugger.enable", { maxScriptsCacheSize: 0 }, 120_000);
  } finally {
    off();
    await inspector.send("Debugger.disable").catch(() => undefined);
  }
  const decoded = new Map<string, SourceMap | undefined>();
  const unmapped = new Set<string>();
  for (const t of functions) {
    if (!t.frame.url.startsWith("file://")) continue;
    if (!decoded.has(t.frame.scriptId)) {
      const url = maps.get(t.frame.scriptId);
      let map: SourceMap | undefined;
      const m = url === undefined ? null : /^data:application\/json[^,]*;base64,(.*)$/.exec(url);
      if (m?.[1] !== undefined) {
        try {
          map = new SourceMap(JSON.parse(Buffer.from(m[1], "base64").toString("utf8")) as SourceMapPayload);
        } catch {
          map = undefined;
        }
      }
      decoded.set(t.frame.scriptId, map);
    }
    const map = decoded.get(t.frame.scriptId);
    const entry = map?.findEntry(t.frame.lineNumber, t.frame.columnNumber) as { originalLine?: number } | undefined;
    if (entry?.originalLine !== undefined) t.where = `${framePath(t.frame.url)}:${entry.originalLine + 1}`;
    else if (t.name === "__name") t.where = `${framePath(t.frame.url)} (tsx's keepNames helper)`;
    else if (t.where.startsWith("src/")) unmapped.add(`${t.name} ${t.where}`);
  }
  return unmapped.size > 0
    ? `lines of tsx's output, not of the source (no source-map entry): ${[...unmapped].join(", ")}`
    : "";
}

// ---------------------------------------------------------------------------------------------------------
// The run.

interface RouteResult {
  key: string;
  route: Route;
  load: LoadResult;
  profile: Split;
}

/** The worker threads the inspector reports (NodeWorker domain), attached and detached at once. */
async function workerThreads(inspector: Inspector): Promise<string[]> {
  const seen = new Map<string, string>();
  const off = inspector.on<{ workerInfo: { workerId: string; title: string; url: string } }>(
    "NodeWorker.attachedToWorker",
    (p) => {
      const { title, url } = p.workerInfo;
      seen.set(p.workerInfo.workerId, [title, url === "" ? "" : framePath(url)].filter(Boolean).join(" "));
    },
  );
  try {
    await inspector.send("NodeWorker.enable", { waitForDebuggerOnStart: false });
    await sleep(300);
  } finally {
    off();
    await inspector.send("NodeWorker.disable").catch(() => undefined);
  }
  return [...seen.values()];
}

/** cometh as bench:evm starts it (bench/nodes.ts), from sources, with the inspector on 127.0.0.1. */
function profiledCometh(timeoutCommit: string, extra: string[]): NodeSpec {
  const base = comethStart(timeoutCommit);
  return {
    ...base,
    async launch(port, extraPort) {
      const l = await base.launch(port, extraPort);
      const at = l.args.indexOf("bin/cometh.js");
      if (at < 0) throw new Error(`unexpected cometh launch: ${l.args.join(" ")}`);
      const args = [...l.args.slice(0, at), "--inspect=127.0.0.1:0", ...l.args.slice(at), ...extra];
      return { ...l, args, env: { ...(l.env ?? process.env), COMETH_FROM_SOURCE: "1" } };
    },
  };
}

function pad(s: string, w: number): string {
  return s.length >= w ? s : s + " ".repeat(w - s.length);
}

function printResults(results: RouteResult[], header: string[], notes: string[]): void {
  console.log("");
  for (const h of header) console.log(h);
  console.log("");
  const labelW = 52;
  const w = 20;
  const head = `${pad("% of main-thread wall time", labelW)}${results.map((r) => r.key.padStart(w)).join("")}`;
  console.log(head);
  console.log("-".repeat(head.length));
  console.log(`${pad("req/s (profiled)", labelW)}${results.map((r) => r.load.rps.toFixed(0).padStart(w)).join("")}`);
  for (const c of CATEGORIES) {
    console.log(
      `${pad(CATEGORY_LABELS[c], labelW)}${results.map((r) => r.profile.split[c].toFixed(1).padStart(w)).join("")}`,
    );
  }
  console.log(
    `${pad("samples / window s", labelW)}${results
      .map((r) => `${r.profile.samples} / ${(r.profile.wallMs / 1000).toFixed(2)}`.padStart(w))
      .join("")}`,
  );
  console.log(`${pad("load errors", labelW)}${results.map((r) => String(r.load.errors).padStart(w)).join("")}`);
  for (const r of results) {
    console.log("");
    console.log(
      `${r.key} (${r.route}): ${r.load.rps.toFixed(0)} req/s, p50 ${r.load.p50.toFixed(2)} ms, p99 ${r.load.p99.toFixed(2)} ms`,
    );
    console.log(
      `  other ${r.profile.split.other.toFixed(1)}%: ${r.profile.other.map((o) => `${o.group} ${o.pct.toFixed(1)}%`).join(", ")}`,
    );
    console.log("  top self time:");
    for (const t of r.profile.top) {
      console.log(
        `  ${t.pct.toFixed(1).padStart(5)}% ${t.selfMs.toFixed(0).padStart(6)} ms  ${pad(t.name, 34)} ${pad(t.where, 48)} ${t.category}`,
      );
    }
  }
  if (notes.length > 0) console.log("");
  for (const n of notes) console.log(`note: ${n}`);
}

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const interval = Number(values.interval);
  for (const [k, v] of Object.entries({ seconds, connections, interval })) {
    if (!Number.isFinite(v) || v <= 0) throw new RangeError(`--${k} must be a positive number`);
  }
  const keys = values.routes
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const k of keys) {
    if (KEYS[k] === undefined)
      throw new RangeError(`--routes: unknown ${k} (choose from ${Object.keys(KEYS).join(", ")})`);
  }
  if (keys.length === 0) throw new RangeError("--routes: none given");
  const extra = values["node-args"].split(" ").filter(Boolean);

  const node = await startNode(profiledCometh(values["timeout-commit"], extra), { stdout: false, keepChars: 8000 });
  const rpc = new Rpc({ host: "127.0.0.1", port: node.port, path: "/" });
  let inspector: Inspector | undefined;
  const results: RouteResult[] = [];
  const notes: string[] = [];
  let workers: string[] = [];
  try {
    const port = await inspectorPort(node);
    // Connected only once the node answers: a node that fails to start exits (with a client attached it
    // would wait for the client to go).
    const { startupMs } = await waitForChainId(node, rpc, 20);
    inspector = await Inspector.connect(await debuggerUrl(port), 10_000);
    console.log(
      `cometh (from sources): pid ${node.pid}, JSON-RPC http://127.0.0.1:${node.port}, inspector 127.0.0.1:${port}, answering after ${startupMs.toFixed(0)} ms`,
    );
    const setup = await setupContracts(rpc);
    const requests = routeRequests(setup);
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval });
    for (const key of keys) {
      const route = KEYS[key] as Route;
      const { body, bodyAt } = requests[route];
      await load(
        rpc.target,
        body,
        Math.min(1, seconds),
        connections,
        bodyAt === undefined ? undefined : (i) => bodyAt(WARM_UP_OFFSET + i),
      );
      await inspector.send("Profiler.start");
      const r = await load(rpc.target, body, seconds, connections, bodyAt);
      const { profile } = await inspector.send<{ profile: Profile }>("Profiler.stop", {}, 120_000);
      const split = analyse(profile, 10);
      results.push({ key, route, load: r, profile: split });
      console.log(
        `  ${route}: ${r.rps.toFixed(0)} req/s (${r.errors} errors); ${CATEGORIES.map((c) => `${c} ${split.split[c].toFixed(1)}%`).join(", ")}`,
      );
      if (node.exited() !== undefined || node.output().includes("Waiting for the debugger to disconnect")) {
        throw new Error(`cometh exited (${node.exited() ?? "waiting for the inspector"}): ${node.output().trim()}`);
      }
    }
    await inspector.send("Profiler.disable");
    workers = await workerThreads(inspector);
    const mapNote = await mapLines(
      inspector,
      results.flatMap((r) => r.profile.top),
    );
    if (mapNote !== "") notes.push(mapNote);
  } finally {
    rpc.close();
    await inspector?.close();
    await stopNode(node, 5000);
  }

  if (workers.length === 0) notes.push("no worker threads in the node: the main thread did all the work");
  else {
    notes.push(
      `${workers.length} worker thread(s) in the node at the end (${workers.join("; ")}): not profiled, the split is the main thread's only`,
    );
    if (workers.some((w) => /esm\/worker/.test(w))) {
      notes.push(
        "node:internal/modules/esm/worker threads run tsx's module-loader hooks (one per thread that registers them; from sources only)",
      );
    }
    if (workers.some((w) => /cometh-read/.test(w))) {
      notes.push(
        'cometh-read-* are the JSON-RPC read workers ([json-rpc] read-workers): eth_call runs there, the main thread only dispatches it; --node-args="--json-rpc.read-workers 0" profiles the calls on the main thread',
      );
    }
  }
  const keepNames = Math.max(0, ...results.map((r) => r.profile.keepNames));
  if (keepNames >= 0.1) {
    notes.push(
      `up to ${keepNames.toFixed(1)}% of a route's wall time is in __name, the keepNames helper tsx's esbuild wraps closures in (the dist/ build has none); it is counted in its module's category`,
    );
  }
  const header = [
    `bench:profile: cometh start from sources (COMETH_FROM_SOURCE=1, tsx), main thread sampled (every ${interval} µs asked) during each route's measured window only`,
    `  ${connections} connections, ${seconds} s per route after a ${Math.min(1, seconds)} s warm-up; harness on node ${process.version}, loopback${extra.length > 0 ? `; node args: ${extra.join(" ")}` : ""}`,
  ];
  printResults(results, header, notes);
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          opts: {
            routes: keys,
            seconds,
            connections,
            interval,
            timeoutCommit: values["timeout-commit"],
            nodeArgs: extra,
          },
          workers,
          results: results.map((r) => ({
            ...r,
            profile: { ...r.profile, top: r.profile.top.map(({ frame: _frame, ...t }) => t) },
          })),
          notes,
        },
        null,
        2,
      ),
    );
  }
}

await main();
