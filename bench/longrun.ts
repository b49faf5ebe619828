// npm run bench:longrun [-- --blocks N --mode on|off|both --retain R --sample K --timeout-commit 0s --keep]
// A single EVM validator (`cometh start`, as `npm start` runs it) making empty blocks as fast as it can,
// sampled every K blocks: its databases' disk use (allocated bytes of data/*.lmdb and data/evm.db), the
// consensus WAL's, and the process's RSS. With pruning on, app.toml has min-retain-blocks = R and
// genesis lets evidence expire after R blocks and 10 s, so the Cosmos SDK rule gives commit − R
// (docs/operations.md, "Pruning"); off keeps every block. Prints the samples, then bytes per block
// over the second half of the run (least squares): flat with pruning, the per-block growth without.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { initHome } from "../src/config/index.js";
import { spawnNode } from "../test/integration/testNode.js";

const { values } = parseArgs({
  options: {
    blocks: { type: "string", default: "100000" },
    mode: { type: "string", default: "both" },
    retain: { type: "string", default: "100" },
    sample: { type: "string", default: "" },
    "timeout-commit": { type: "string", default: "0s" },
    keep: { type: "boolean", default: false },
  },
});
const BLOCKS = Number(values.blocks);
const RETAIN = Number(values.retain);
const SAMPLE = values.sample === "" ? Math.max(10, Math.round(BLOCKS / 20)) : Number(values.sample);
const MODES = values.mode === "both" ? (["on", "off"] as const) : ([values.mode] as ("on" | "off")[]);
if (!Number.isInteger(BLOCKS) || BLOCKS < SAMPLE * 2) throw new RangeError("--blocks must be at least twice --sample");
if (MODES.some((m) => m !== "on" && m !== "off")) throw new RangeError("--mode is on, off or both");

interface Sample {
  height: number;
  dbBytes: number;
  walBytes: number;
  rssBytes: number;
}

/** Allocated bytes (st_blocks × 512) of every file under `dir`. */
function allocated(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += allocated(p);
    else if (e.isFile()) total += statSync(p).blocks * 512;
  }
  return total;
}

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m === null ? 0 : Number(m[1]) * 1024;
}

async function height(rpc: string): Promise<number> {
  const res = await fetch(`http://${rpc}/status`);
  const body = (await res.json()) as { result: { sync_info: { latest_block_height: string } } };
  return Number(body.result.sync_info.latest_block_height);
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const MiB = 1024 * 1024;

async function run(mode: "on" | "off"): Promise<Sample[]> {
  const home = await mkdtemp(join(tmpdir(), "cometh-longrun-"));
  try {
    await initHome(home, { chainId: "longrun-chain" });
    if (mode === "on") {
      const genesisFile = join(home, "config", "genesis.json");
      const g = JSON.parse(readFileSync(genesisFile, "utf8"));
      g.consensus_params.evidence.max_age_num_blocks = String(RETAIN);
      g.consensus_params.evidence.max_age_duration = "10000000000";
      writeFileSync(genesisFile, JSON.stringify(g, null, 2));
      const appToml = join(home, "config", "app.toml");
      writeFileSync(
        appToml,
        readFileSync(appToml, "utf8").replace(/^min-retain-blocks = 0$/m, `min-retain-blocks = ${RETAIN}`),
      );
    }
    const node = spawnNode(
      [
        "start",
        "--home",
        home,
        "--rpc.laddr",
        "tcp://127.0.0.1:0",
        "--p2p.laddr",
        "tcp://127.0.0.1:0",
        "--json-rpc.enable=false",
        "--consensus.timeout_commit",
        values["timeout-commit"] as string,
        "--log_level",
        "error",
      ],
      { launcher: true },
    );
    const rpc = await node.ready;
    const pid = node.child.pid as number;
    const samples: Sample[] = [];
    const data = join(home, "data");
    const t0 = performance.now();
    try {
      let next = SAMPLE;
      for (;;) {
        const h = await height(rpc);
        if (h >= next) {
          const total = allocated(data);
          const walBytes = allocated(join(data, "cs.wal"));
          const s = { height: h, dbBytes: total - walBytes, walBytes, rssBytes: rss(pid) };
          samples.push(s);
          const rate = (h / (performance.now() - t0)) * 1000;
          console.log(
            `${mode} height ${h}: databases ${(s.dbBytes / MiB).toFixed(1)} MiB, WAL ${(walBytes / MiB).toFixed(1)} MiB, RSS ${(s.rssBytes / MiB).toFixed(0)} MiB (${rate.toFixed(0)} blocks/s)`,
          );
          next = h - (h % SAMPLE) + SAMPLE;
          if (h >= BLOCKS) break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      node.child.kill("SIGTERM");
      await node.exited;
    }
    return samples;
  } finally {
    if (values.keep === true) console.log(`${mode}: home kept in ${home}`);
    else await rm(home, { recursive: true, force: true });
  }
}

const results: Record<string, Sample[]> = {};
for (const mode of MODES) results[mode] = await run(mode);
console.log(`\n${BLOCKS} empty blocks, min-retain-blocks ${RETAIN} when on; slopes over the second half:`);
for (const [mode, samples] of Object.entries(results)) {
  const half = samples.slice(Math.floor(samples.length / 2));
  const xs = half.map((s) => s.height);
  const last = samples[samples.length - 1] as Sample;
  console.log(
    `pruning ${mode}: databases ${slope(
      xs,
      half.map((s) => s.dbBytes),
    ).toFixed(1)} B/block, WAL ${slope(
      xs,
      half.map((s) => s.walBytes),
    ).toFixed(1)} B/block, RSS ${slope(
      xs,
      half.map((s) => s.rssBytes),
    ).toFixed(
      1,
    )} B/block; at ${last.height}: databases ${(last.dbBytes / MiB).toFixed(1)} MiB, WAL ${(last.walBytes / MiB).toFixed(1)} MiB, RSS ${(last.rssBytes / MiB).toFixed(0)} MiB`,
  );
}
