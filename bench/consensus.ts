// npm run bench:consensus [-- --seconds N --trials N --txs N --dashboards N --dashboard-mode sim|chromium]
// Measures a single-validator node started in process on a temp home (kvstore app, LMDB):
//  1. empty blocks/s with timeout_commit = 0,
//  2. kvstore txs/s committed when the mempool is kept full (blocks as large as the mempool allows),
// next to a reference measured in the same run: durable LMDB write transactions/s on the same disk
// (each block needs at least a few of them, so it bounds blocks/s from above).
// --dashboards N serves the node RPC with /dashboard and keeps N dashboards open on it during each
// measurement (bench/dashboards.ts), to measure what they cost consensus.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { initHome, loadNodeConfig } from "../src/config/index.js";
import { type RunningNode, startNode } from "../src/node/index.js";
import { openKvStore } from "../src/store/index.js";
import { createLogger } from "../src/util/logger.js";
import { type DashboardMode, openDashboards } from "./dashboards.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    trials: { type: "string", default: "3" },
    txs: { type: "string", default: "20000" },
    dashboards: { type: "string", default: "0" },
    "dashboard-mode": { type: "string", default: "sim" },
  },
});
const SECONDS = Number(values.seconds);
const TRIALS = Number(values.trials);
const TXS = Number(values.txs);
const DASHBOARDS = Number(values.dashboards);
const DASHBOARD_MODE = values["dashboard-mode"] as DashboardMode;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

async function withNode<T>(flags: Record<string, string | boolean>, fn: (node: RunningNode) => Promise<T>): Promise<T> {
  const home = await mkdtemp(join(tmpdir(), "cometh-bench-"));
  try {
    await initHome(home, { chainId: "bench-chain" });
    const config = loadNodeConfig(home, {
      "--rpc.laddr": "",
      "--json-rpc.enable": false,
      "--proxy_app": "kvstore",
      "--consensus.timeout_commit": "0s",
      "--log_level": "error",
      ...(DASHBOARDS > 0 ? { "--rpc.laddr": "tcp://127.0.0.1:0", "--rpc.dashboard": true } : {}),
      ...flags,
    });
    const node = await startNode(config, createLogger({ level: "error" }));
    const rpc = node.rpcAddresses[0]?.replace("tcp://", "http://");
    const dash =
      DASHBOARDS > 0 && rpc !== undefined ? await openDashboards(rpc, DASHBOARDS, DASHBOARD_MODE) : undefined;
    try {
      return await fn(node);
    } finally {
      await dash?.stop();
      await node.stop();
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** Empty blocks/s, and the CPU time (user + system, ms, every thread of this process: the node's) per block. */
async function emptyBlocksPerSecond(): Promise<{ bps: number; cpuMsPerBlock: number }> {
  return withNode({}, async (node) => {
    await node.consensus.waitForHeight(3);
    const h0 = node.consensus.chainState().lastBlockHeight;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const cpu = process.cpuUsage(cpu0);
    const h1 = node.consensus.chainState().lastBlockHeight;
    const blocks = Math.max(1, h1 - h0);
    return { bps: (blocks * 1000) / (performance.now() - t0), cpuMsPerBlock: (cpu.user + cpu.system) / 1000 / blocks };
  });
}

async function kvTxsPerSecond(
  trial: number,
): Promise<{ txsPerSec: number; blocks: number; maxTxsPerBlock: number; cpuMsPer1000: number }> {
  return withNode({ "--mempool.size": String(TXS + 10), "--mempool.cache_size": String(TXS + 10) }, async (node) => {
    const mempool = node.mempool;
    await node.consensus.waitForHeight(2);
    const startHeight = node.consensus.chainState().lastBlockHeight;
    const enc = new TextEncoder();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    // Admission runs concurrently with block production, as RPC clients would drive it.
    const admissions: Promise<{ code: number; log: string }>[] = [];
    for (let i = 0; i < TXS; i++) admissions.push(mempool.checkTx(enc.encode(`bench${trial}-${i}=v${i}`)));
    const refused = (await Promise.all(admissions)).filter((r) => r.code !== 0);
    if (refused.length > 0) throw new RangeError(`${refused.length} txs refused by CheckTx: ${refused[0]?.log}`);
    // Every tx is committed once the mempool is empty after a block.
    while (mempool.size() > 0) await node.consensus.waitForHeight(node.consensus.chainState().lastBlockHeight + 1);
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const endHeight = node.consensus.chainState().lastBlockHeight;
    let maxTxs = 0;
    for (let h = startHeight + 1; h <= endHeight; h++) {
      maxTxs = Math.max(maxTxs, node.blockStore.loadBlock(h)?.data.txs.length ?? 0);
    }
    return {
      txsPerSec: (TXS * 1000) / elapsed,
      blocks: endHeight - startHeight,
      maxTxsPerBlock: maxTxs,
      cpuMsPer1000: (cpu.user + cpu.system) / TXS,
    };
  });
}

async function lmdbCommitsPerSecond(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "cometh-bench-lmdb-"));
  try {
    const kv = await openKvStore(join(dir, "ref.lmdb"));
    const value = new Uint8Array(256);
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 1000 * Math.min(SECONDS, 3)) {
      const key = new TextEncoder().encode(`k${n}`);
      await kv.transaction(() => kv.put(key, value));
      n++;
    }
    const rate = (n * 1000) / (performance.now() - t0);
    await kv.close();
    return rate;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const refs: number[] = [];
const blocks: number[] = [];
const cpuPerBlock: number[] = [];
const txs: number[] = [];
const cpuPerTxs: number[] = [];
let detail = "";
for (let t = 0; t < TRIALS; t++) {
  refs.push(await lmdbCommitsPerSecond());
  const empty = await emptyBlocksPerSecond();
  blocks.push(empty.bps);
  cpuPerBlock.push(empty.cpuMsPerBlock);
  const r = await kvTxsPerSecond(t);
  txs.push(r.txsPerSec);
  cpuPerTxs.push(r.cpuMsPer1000);
  detail = `${r.blocks} blocks, up to ${r.maxTxsPerBlock} txs per block`;
}
const ref = median(refs);
const bps = median(blocks);
const open = DASHBOARDS > 0 ? `; ${DASHBOARDS} dashboards open (${DASHBOARD_MODE})` : "";
console.log(
  `cometh bench:consensus (${TRIALS} trials, median; node ${process.version}, 1 validator, kvstore, LMDB${open})`,
);
console.log(`  reference: durable LMDB write transactions/s      ${ref.toFixed(0)}`);
console.log(
  `  empty blocks/s, timeout_commit=0                 ${bps.toFixed(1)}  (${(bps / ref).toFixed(3)} x reference; trials ${blocks.map((b) => b.toFixed(1)).join(", ")})`,
);
console.log(
  `  node CPU per empty block (all threads, ms)        ${median(cpuPerBlock).toFixed(2)}  (trials ${cpuPerBlock.map((c) => c.toFixed(2)).join(", ")})`,
);
console.log(
  `  kvstore txs/s committed (${TXS} txs, full mempool)  ${median(txs).toFixed(0)}  (trials ${txs.map((x) => x.toFixed(0)).join(", ")}; last: ${detail})`,
);
console.log(
  `  node CPU per 1000 txs (all threads, ms)           ${median(cpuPerTxs).toFixed(1)}  (trials ${cpuPerTxs.map((c) => c.toFixed(1)).join(", ")})`,
);
