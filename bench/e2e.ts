// npm run bench:e2e [-- --manifest test/e2e/churn.toml --baseline-heights 80 --keep]
// Runs an e2e manifest (default churn.toml: every validator killed, paused and cut off in turn) and
// then the same network undisturbed (no perturbations, same load) for as many heights (at most
// --baseline-heights), and prints next to each other: median/p90/max block interval (header times),
// the share of heights decided in round 0, and the recovery time after a SIGKILL (process start to the
// first block the node voted for); then each run's checks. Loopback only; every process started here
// is stopped here.
import { parseArgs } from "node:util";
import { loadManifest, withoutPerturbations } from "../test/e2e/runner/manifest.js";
import { killStartedNodes } from "../test/e2e/runner/nodeProcess.js";
import { quantile, type RunStats } from "../test/e2e/runner/report.js";
import { formatResult, type RunResult, runManifest } from "../test/e2e/runner/run.js";

const { values } = parseArgs({
  options: {
    manifest: { type: "string", default: "test/e2e/churn.toml" },
    "baseline-heights": { type: "string", default: "80" },
    keep: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
});

const log = (line: string) => {
  if (values.verbose) console.log(line);
};

process.on("exit", killStartedNodes);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    killStartedNodes();
    process.exit(130);
  });
}

const churnManifest = loadManifest(values.manifest);
console.log(`bench:e2e: running ${values.manifest} …`);
const churn = await runManifest(churnManifest, { keep: values.keep, log });
const heights = Math.max(10, Math.min(Number(values["baseline-heights"]), (churn.stats?.heights ?? 0) + 1));
const baseManifest = { ...withoutPerturbations(churnManifest), targetHeight: heights };
console.log(`bench:e2e: running the same network undisturbed to height ${heights} …`);
const base = await runManifest(baseManifest, { keep: values.keep, log });

const s = (x: number) => (Number.isNaN(x) ? "n/a" : `${(x / 1000).toFixed(2)} s`);
const pct = (x: number) => (Number.isNaN(x) ? "n/a" : `${(x * 100).toFixed(1)}%`);
const row = (label: string, a: string, b: string, extra = "") =>
  console.log(`${label.padEnd(40)}${a.padStart(14)}${b.padStart(14)}${extra === "" ? "" : `   ${extra}`}`);
const stats = (r: RunResult): RunStats | undefined => r.stats;
const cs = stats(churn);
const bs = stats(base);

console.log("");
console.log(
  `cometh bench:e2e (${churnManifest.name}: ${churnManifest.nodes.filter((n) => n.mode === "validator").length} validators, app ${churnManifest.app}, node ${process.version}, loopback)`,
);
row("", "perturbed", "undisturbed");
row("heights (2..H)", String(cs?.heights ?? "n/a"), String(bs?.heights ?? "n/a"));
const cm = cs?.intervals.medianMs ?? Number.NaN;
const bm = bs?.intervals.medianMs ?? Number.NaN;
row("median block interval", s(cm), s(bm), `ratio ${(cm / bm).toFixed(2)}`);
row("p90 block interval", s(cs?.intervals.p90Ms ?? Number.NaN), s(bs?.intervals.p90Ms ?? Number.NaN));
row("max block interval", s(cs?.intervals.maxMs ?? Number.NaN), s(bs?.intervals.maxMs ?? Number.NaN));
row("decided in round 0", pct(cs?.round0Share ?? Number.NaN), pct(bs?.round0Share ?? Number.NaN));
const kills = cs?.killRecoveryMs ?? [];
row(
  "recovery after SIGKILL (start → voted)",
  kills.length === 0 ? "n/a" : `${s(quantile(kills, 0.5))} med`,
  "",
  kills.length === 0 ? "" : `max ${s(Math.max(...kills))} over ${kills.length} kills`,
);
if ((cs?.late.length ?? 0) > 0) {
  console.log(
    `heights not decided in round 0 (perturbed run): ${cs?.late.map((l) => `h=${l.height} (round ${l.round})`).join(", ")}`,
  );
}
console.log("");
console.log(`--- perturbed run (${churnManifest.name})`);
for (const line of formatResult(churn)) console.log(line);
console.log("--- undisturbed run");
for (const line of formatResult(base)) console.log(line);
process.exit(churn.failed + base.failed > 0 ? 1 : 0);
