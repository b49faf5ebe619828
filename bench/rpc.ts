// npm run bench:rpc [-- --seconds N --connections N --dashboards N --dashboard-mode sim|chromium]
// Requests/s and latency of node RPC routes at N concurrent keep-alive connections (default 32, the
// raw-socket client of bench/load.ts, which is faster than node:http's Agent),
// next to a bare node:http server answering a fixed JSON body (the ceiling), measured in the same
// run, and next to the same bare server sent the same request (GET, or POST with the same body) and
// answering a body of the route's answer size: the last column is what cometh adds to the cost of the
// bytes themselves on this machine's loopback. Both servers run as child processes; the
// load generator runs here. Loopback only.
// --dashboards N keeps N dashboards open on the node meanwhile (bench/dashboards.ts: simulated page
// clients by default, or real headless Chromium pages), to measure what they cost the node.
import { type ChildProcess, fork, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startNodeProcess } from "../test/integration/testNode.js";
import { type DashboardMode, type OpenDashboards, openDashboards } from "./dashboards.js";
import { type LoadResult, loadRaw } from "./load.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    "bare-server": { type: "boolean", default: false },
    dashboards: { type: "string", default: "0" },
    "dashboard-mode": { type: "string", default: "sim" },
  },
});

/** How long the node's CPU use is measured with no load (but the open dashboards, if any). */
const IDLE_SECONDS = 10;

// Child mode: the ceiling server.
if (values["bare-server"]) {
  const { createServer } = await import("node:http");
  const body = JSON.stringify({ jsonrpc: "2.0", id: -1, result: { fixed: true } });
  // `/?bytes=N`: a fixed body of N bytes (a route's answer size), made once per size.
  const sized = new Map<number, Buffer>();
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const q = req.url?.indexOf("?bytes=") ?? -1;
    if (q < 0) {
      res.end(body);
      return;
    }
    const n = Number(req.url?.slice(q + 7));
    let b = sized.get(n);
    if (b === undefined) {
      b = Buffer.alloc(n, 0x20);
      sized.set(n, b);
    }
    res.end(b);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    process.send?.({ port: typeof addr === "object" && addr !== null ? addr.port : 0 });
  });
  process.on("disconnect", () => process.exit(0));
} else {
  await main();
}

interface Result extends LoadResult {
  name: string;
  /** The answer's body size, and the bare server's req/s for a body of that size (same run). */
  bytes?: number;
  sameSize?: number;
}

/** A route run: GET of `path`, or (with `body`) a JSON-RPC POST to `/`, as CosmJS sends. */
interface Run {
  name: string;
  port: number;
  path: string;
  body?: string;
}

async function load(run: Run, seconds: number, connections: number): Promise<Result> {
  const request = run.body === undefined ? { method: "GET" as const } : { method: "POST" as const, body: run.body };
  return {
    name: run.name,
    ...(await loadRaw({ host: "127.0.0.1", port: run.port, path: run.path }, request, seconds, connections)),
  };
}

function post(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
}

/** CPU time (user + system) a process used over `seconds`, as a share of one core (Linux /proc). */
async function cpuShare(pid: number | undefined, seconds: number): Promise<number> {
  const ticks = async () => {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  if (pid === undefined) return Number.NaN;
  const t0 = await ticks();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const used = ((await ticks()) - t0) / 100; // USER_HZ
  return used / ((performance.now() - w0) / 1000);
}

async function getJson(port: number, path: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return res.json();
}

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const dashboards = Number(values.dashboards);
  const dashboardMode = values["dashboard-mode"] as DashboardMode;
  let dash: OpenDashboards | undefined;
  const root = fileURLToPath(new URL("..", import.meta.url));
  // The bundled build, fresh (untimed), as `npm start` runs it after install.
  if (spawnSync(process.execPath, ["bin/build.mjs"], { cwd: root, stdio: "inherit" }).status !== 0) {
    throw new Error("bin/build.mjs failed");
  }
  const home = await mkdtemp(join(tmpdir(), "cometh-bench-rpc-"));
  const children: ChildProcess[] = [];
  try {
    // The node under test.
    const node = await startNodeProcess(
      home,
      [
        "--proxy_app",
        "kvstore",
        "--log_level",
        "error",
        "--rpc.max_open_connections",
        "0",
        ...(dashboards > 0 ? ["--rpc.dashboard", "true"] : []),
      ],
      { launcher: true },
    );
    children.push(node.child);
    const nodePort = Number(new URL(node.rpcUrl).port);
    // The ceiling.
    const bare = fork(fileURLToPath(import.meta.url), ["--bare-server"], { execArgv: ["--import", "tsx"] });
    children.push(bare);
    const barePort = await new Promise<number>((resolve) =>
      bare.once("message", (m: { port: number }) => resolve(m.port)),
    );

    // Data for block and tx_search: 200 committed txs.
    for (let i = 0; i < 200; i++) {
      await getJson(nodePort, `/broadcast_tx_async?tx="bench${i}=value${i}"`);
    }
    for (;;) {
      const s = (await getJson(nodePort, "/num_unconfirmed_txs")) as { result: { n_txs: string } };
      if (s.result.n_txs === "0") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const status = (await getJson(nodePort, "/status")) as { result: { sync_info: { latest_block_height: string } } };
    const height = Number(status.result.sync_info.latest_block_height);
    if (dashboards > 0) dash = await openDashboards(node.rpcUrl, dashboards, dashboardMode);
    // What the node spends with no load but the open dashboards (blocks every second, their polls).
    const idleCpu = await cpuShare(node.child.pid, IDLE_SECONDS);

    const blockHeight = Math.max(1, height - 1);
    const ceilingRun: Run = { name: "bare node:http (ceiling)", port: barePort, path: "/" };
    const get = (name: string, path: string): Run => ({ name: `GET ${name}`, port: nodePort, path });
    const rpc = (name: string, params: Record<string, unknown> = {}): Run => ({
      name: `POST ${name}`,
      port: nodePort,
      path: "/",
      body: post(name, params),
    });
    const runs: Run[] = [
      ceilingRun,
      get("health", "/health"),
      get("status", "/status"),
      get("block", `/block?height=${blockHeight}`),
      get("validators", "/validators"),
      get("abci_info", "/abci_info"),
      get("dump_consensus_state", "/dump_consensus_state"),
      get("tx_search (30)", `/tx_search?query="tx.height>0"&per_page=30`),
      rpc("health"),
      rpc("status"),
      rpc("block", { height: String(blockHeight) }),
      rpc("validators"),
      rpc("abci_info"),
      rpc("dump_consensus_state"),
      { ...rpc("tx_search", { query: "tx.height>0", per_page: "30" }), name: "POST tx_search (30)" },
    ];
    const results: Result[] = [];
    for (const run of runs) {
      await load(run, 1, connections); // warm-up
      const r = await load(run, seconds, connections);
      if (run !== ceilingRun) {
        // The same number of bytes from the bare server: what the answer's size alone costs.
        const res = await fetch(`http://127.0.0.1:${run.port}${run.path}`, {
          method: run.body === undefined ? "GET" : "POST",
          ...(run.body === undefined ? {} : { body: run.body, headers: { "content-type": "application/json" } }),
        });
        r.bytes = (await res.arrayBuffer()).byteLength;
        // The same request (method and body) to the bare server, answered with that many bytes.
        const same: Run = { ...run, name: "same size", port: barePort, path: `/?bytes=${r.bytes}` };
        r.sameSize = (await load(same, Math.max(1, seconds / 2), connections)).rps;
      }
      results.push(r);
    }
    // The ceiling again at the end: the higher of the two runs is the reference.
    const again = await load(ceilingRun, seconds, connections);
    if (results[0] !== undefined && again.rps > results[0].rps) results[0] = again;
    const ceiling = results[0]?.rps ?? 1;
    const open =
      dash === undefined ? "" : `, ${dashboards} dashboards open (${dashboardMode}, ${await dash.events()} events)`;
    console.log(
      `cometh bench:rpc (${connections} connections, ${seconds}s per route, node ${process.version}, chain height ${height}${open})`,
    );
    console.log(
      `node CPU with no load for ${IDLE_SECONDS} s: ${(idleCpu * 100).toFixed(1)}% of a core (blocks every second)`,
    );
    console.log(
      "route                         req/s    x ceiling   p50 ms   p99 ms   errors    bytes   x same-size bare",
    );
    for (const r of results) {
      const same =
        r.sameSize === undefined || r.bytes === undefined
          ? ""
          : `${String(r.bytes).padStart(8)}   ${(r.rps / r.sameSize).toFixed(2).padStart(8)}`;
      console.log(
        `${r.name.padEnd(28)} ${r.rps.toFixed(0).padStart(7)}   ${(r.rps / ceiling).toFixed(2).padStart(8)}   ${r.p50.toFixed(2).padStart(6)}   ${r.p99.toFixed(2).padStart(6)}   ${String(r.errors).padStart(6)}   ${same}`,
      );
    }
  } finally {
    await dash?.stop();
    for (const c of children) c.kill("SIGTERM");
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))));
    await rm(home, { recursive: true, force: true });
  }
}
