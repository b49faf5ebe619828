// Open dashboards for the benches' `--dashboards N`: what N browser tabs on /dashboard ask of the
// node. Runs in a child process (forked from here) so that its work does not slow the bench's own
// load generator. Two modes:
//   sim       (default) each dashboard is a client doing what the page does: loads /dashboard, the
//             start-up reads (status, validators, up to 300 block metas, commit, 15 block_results),
//             one WebSocket with the NewBlock, NewRound, NewRoundStep and Vote subscriptions (every
//             event parsed), and every 2 s dump_consensus_state, net_info, num_unconfirmed_txs
//             (status every 10 s);
//   chromium  N pages of the real dashboard in one headless Chromium (Debian's package), which
//             also costs the machine the browser's own CPU.
import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

export type DashboardMode = "sim" | "chromium";

export interface OpenDashboards {
  /** Events received over all dashboards' WebSockets so far (sim mode). */
  readonly events: () => Promise<number>;
  stop(): Promise<void>;
}

/** Opens `count` dashboards of the node RPC at `rpcUrl` (`http://host:port`) in a child process. */
export async function openDashboards(rpcUrl: string, count: number, mode: DashboardMode): Promise<OpenDashboards> {
  const child = fork(fileURLToPath(import.meta.url), ["--dashboards-child", rpcUrl, String(count), mode], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`dashboards exited with ${code} before opening`)));
  });
  return {
    events: () =>
      new Promise<number>((resolve) => {
        child.once("message", (m: { events?: number }) => resolve(m.events ?? 0));
        child.send("count");
      }),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

// ---- child

let events = 0;

async function call(rpcUrl: string, method: string, params: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(`${rpcUrl}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function simulatedDashboard(rpcUrl: string): Promise<() => void> {
  await (await fetch(`${rpcUrl}/dashboard`)).text();
  const status = (await call(rpcUrl, "status")) as { sync_info: { latest_block_height: string } };
  await call(rpcUrl, "validators", { page: "1", per_page: "100" });
  const latest = Number(status.sync_info.latest_block_height);
  const from = Math.max(1, latest - 299);
  for (let max = latest; max >= from; max -= 20) {
    await call(rpcUrl, "blockchain", { minHeight: String(Math.max(from, max - 19)), maxHeight: String(max) });
  }
  if (latest > 0) await call(rpcUrl, "commit", { height: String(latest) });
  for (let h = Math.max(1, latest - 14); h <= latest; h++) await call(rpcUrl, "block_results", { height: String(h) });

  const ws = new WebSocket(`${rpcUrl.replace("http://", "ws://")}/websocket`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const queries = ["tm.event='NewBlock'", "tm.event='NewRound'", "tm.event='NewRoundStep'", "tm.event='Vote'"];
  queries.forEach((query, i) => {
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: `sub-${i}`, method: "subscribe", params: { query } }));
  });
  ws.on("message", (data) => {
    JSON.parse(String(data));
    events++;
  });
  let polls = 0;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const reads = [call(rpcUrl, "dump_consensus_state"), call(rpcUrl, "net_info"), call(rpcUrl, "num_unconfirmed_txs")];
    if (++polls % 5 === 0) reads.push(call(rpcUrl, "status"));
    Promise.all(reads)
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, 2000);
  return () => {
    clearInterval(timer);
    ws.close();
  };
}

async function chromiumDashboards(rpcUrl: string, count: number): Promise<() => Promise<void>> {
  const path = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
  if (path === undefined) throw new Error("--dashboard-mode chromium needs Debian's chromium package");
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: path, headless: true, args: ["--no-sandbox"] });
  for (let i = 0; i < count; i++) {
    const page = await browser.newPage();
    await page.goto(`${rpcUrl}/dashboard`);
  }
  return () => browser.close();
}

async function child(rpcUrl: string, count: number, mode: DashboardMode): Promise<void> {
  let stop: () => void | Promise<void>;
  if (mode === "chromium") stop = await chromiumDashboards(rpcUrl, count);
  else {
    const stops = await Promise.all(Array.from({ length: count }, () => simulatedDashboard(rpcUrl)));
    stop = () => {
      for (const s of stops) s();
    };
  }
  process.on("message", () => process.send?.({ events }));
  const quit = async () => {
    await stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void quit());
  process.on("disconnect", () => void quit());
  process.send?.({ ready: true });
}

if (process.argv[2] === "--dashboards-child") {
  const [, , , rpcUrl = "", count = "0", mode = "sim"] = process.argv;
  await child(rpcUrl, Number(count), mode as DashboardMode);
}
