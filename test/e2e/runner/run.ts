// One run of a manifest: write the homes, start the nodes (children of this process only), apply the
// perturbations under a tx load, wait for the target height, let the network settle, check the
// invariants, stop everything and remove the temp directory (unless keep).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parseGoDuration } from "../../../src/config/index.js";
import { collectChain } from "./chain.js";
import {
  type CheckResult,
  checkAppHash,
  checkLiveness,
  checkNoCrash,
  checkNoDoubleSign,
  checkNoFork,
  checkPrivval,
  checkRecovery,
  checkStateSync,
  checkTarget,
  checkTxs,
  type RunData,
  recoveries,
  type StateSyncLog,
} from "./checks.js";
import { TxLoad } from "./load.js";
import type { Manifest } from "./manifest.js";
import { E2eNode } from "./nodeProcess.js";
import { Observer } from "./observer.js";
import { type Outage, type PerturbContext, perturbNode, runPartitions, type TimelineEvent } from "./perturb.js";
import { formatStats, type RunStats, runStats } from "./report.js";
import { writeNetwork } from "./setup.js";

export interface RunOptions {
  /** Parent directory of the run's temp directory (default the OS temp dir). */
  baseDir?: string;
  /** Keep homes and logs. */
  keep?: boolean;
  log?: (line: string) => void;
  /** Aborts the run (SIGINT): nodes are stopped and the checks run on what exists. */
  signal?: AbortSignal;
}

export interface RunResult {
  manifest: Manifest;
  checks: CheckResult[];
  stats: RunStats | undefined;
  passed: number;
  failed: number;
  /** The run's directory (removed unless kept; logs kept when a check failed). */
  dir: string;
  kept: "all" | "logs" | "nothing";
  timeline: TimelineEvent[];
  outages: Outage[];
}

/** Log lines that mean a validator signed twice or a node saw it. */
const DOUBLE_SIGN_LOG =
  /conflicting vote from ourselves|conflicting votes detected|verified new evidence of byzantine behavior/i;

/** The longest timeout_propose among the validators (CometBFT's default 3 s unless set). */
function timeoutPropose(m: Manifest): number {
  const ms = (v: unknown) =>
    typeof v === "string" ? Number((parseGoDuration(v) ?? 3_000_000_000n) / 1_000_000n) : undefined;
  const base = ms(m.config["consensus.timeout_propose"]) ?? 3000;
  let max = 0;
  for (const n of m.nodes)
    if (n.mode === "validator") max = Math.max(max, ms(n.config["consensus.timeout_propose"]) ?? base);
  return max;
}

export async function runManifest(m: Manifest, opts: RunOptions = {}): Promise<RunResult> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const deadline = AbortSignal.timeout(m.deadlineMs);
  const teardown = new AbortController();
  const signal = AbortSignal.any([deadline, teardown.signal, ...(opts.signal === undefined ? [] : [opts.signal])]);
  const dir = mkdtempSync(join(opts.baseDir ?? tmpdir(), `cometh-e2e-${m.name.replace(/[^a-z0-9-]/gi, "_")}-`));
  const timeline: TimelineEvent[] = [];
  const outages: Outage[] = [];
  const runnerErrors: string[] = [];
  const stateSyncTrust = new Map<string, number>();
  const corruptedChunks = new Map<string, string[]>();
  const nodes: E2eNode[] = [];
  let observer: Observer | undefined;
  let load: TxLoad | undefined;
  let links: Awaited<ReturnType<typeof writeNetwork>>["links"] | undefined;
  let perturbations: Promise<void> | undefined;
  const checks: CheckResult[] = [];
  let stats: RunStats | undefined;
  let kept: RunResult["kept"] = "nothing";
  const remaining = () => m.deadlineMs - now();
  let seed = m.seed * 2654435761 + 1;
  const rand = () => {
    // mulberry32: the load's and the runner's choices repeat for a seed.
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };

  try {
    log(
      `e2e ${m.name}: ${m.nodes.length} nodes (${m.nodes.filter((n) => n.mode === "validator").length} validators), app ${m.app}, target height ${m.targetHeight}, deadline ${m.deadlineMs / 1000} s`,
    );
    log(`homes and logs in ${dir}`);
    const net = await writeNetwork(m, dir);
    links = net.links;
    for (const spec of net.specs) {
      nodes.push(new E2eNode(spec, m.app === "kvstore" ? ["--json-rpc.enable=false"] : [], now));
    }
    const byName = new Map(nodes.map((n) => [n.name, n]));
    const obs = new Observer(nodes, now);
    observer = obs;
    const joiners = new Set(m.nodes.filter((n) => n.perturb[0]?.kind === "join").map((n) => n.name));
    obs.start();
    await Promise.all(nodes.filter((n) => !joiners.has(n.name)).map((n) => n.start()));
    const netStart = now();
    log(
      `+${(netStart / 1000).toFixed(1)} s  network started: ${nodes
        .filter((n) => n.state === "running")
        .map((n) => `${n.name} (pid ${n.pid})`)
        .join(", ")}`,
    );

    const ctx: PerturbContext = {
      nodes: byName,
      links: net.links,
      observer: obs,
      now,
      netStart,
      signal,
      timeline,
      outages,
      log,
      stateSyncers: new Set(m.nodes.filter((n) => n.stateSync !== undefined).map((n) => n.name)),
      stateSyncTrust,
      corruptedChunks,
    };
    const tasks: Promise<void>[] = [];
    for (const mn of m.nodes) {
      const node = byName.get(mn.name);
      if (node !== undefined && mn.perturb.length > 0) tasks.push(perturbNode(ctx, node, mn.perturb));
    }
    if (m.partitions.length > 0) tasks.push(runPartitions(ctx, m.partitions));
    perturbations = Promise.allSettled(tasks).then((rs) => {
      for (const r of rs) {
        if (r.status === "rejected" && !signal.aborted)
          runnerErrors.push(`perturbation failed: ${(r.reason as Error).message.split("\n")[0]}`);
      }
    });

    if (m.load !== undefined) {
      await obs.waitForHeight(2, signal);
      const l = new TxLoad(
        m.load,
        m.app,
        () => nodes.filter((n) => n.state === "running" && m.nodes.find((x) => x.name === n.name)?.load !== false),
        now,
        rand,
        log,
      );
      load = l;
      obs.onBlock((b) => l.onBlock(b));
      for (const b of [...obs.blocks.values()]) l.onBlock(b);
      await l.start();
      log(`+${(now() / 1000).toFixed(1)} s  load: ${m.load.rate} tx/s`);
    }

    let targetReached = false;
    try {
      await obs.waitForHeight(m.targetHeight, signal);
      targetReached = true;
      await Promise.race([
        perturbations,
        new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
      ]);
    } catch {
      if (!targetReached)
        runnerErrors.push(
          `stopped at height ${obs.maxHeight}: ${opts.signal?.aborted === true ? "interrupted" : "deadline"}`,
        );
      else
        runnerErrors.push(
          `perturbations still running at the ${opts.signal?.aborted === true ? "interrupt" : "deadline"}`,
        );
    }
    log(
      `+${(now() / 1000).toFixed(1)} s  height ${obs.maxHeight}: ${targetReached ? "target reached, perturbations done" : "stopping early"}`,
    );
    // Whatever is still out comes back, so the checks see a whole network.
    for (const n of nodes) if (n.state === "paused") n.resume();
    net.links.healPartition();
    for (const n of nodes) net.links.heal(n.name);

    if (load !== undefined) {
      const drainMs = Math.max(0, Math.min(m.load?.drainMs ?? 0, remaining() - 30_000));
      log(
        `+${(now() / 1000).toFixed(1)} s  load stopped; waiting up to ${(drainMs / 1000).toFixed(0)} s for ${load.unmined().length} unmined txs`,
      );
      await load.drain(drainMs);
    }

    // Settle: every running node two heights past the current top, and each perturbed validator voting again.
    const settleEnd = Date.now() + Math.max(10_000, Math.min(60_000, remaining()));
    const settleHeight = obs.maxHeight + 2;
    const running = () => nodes.filter((n) => n.state === "running");
    while (Date.now() < settleEnd) {
      const behind = running().filter((n) => (obs.status.get(n.name)?.height ?? 0) < settleHeight);
      const notVoted = votersMissing(nodes, outages, obs);
      if (behind.length === 0 && notVoted.length === 0) break;
      await sleep(250);
    }
    const top = Math.min(...running().map((n) => obs.status.get(n.name)?.height ?? 0));
    const height = Math.max(1, top - 1);
    obs.stop();
    obs.sampleSignStates();
    log(`+${(now() / 1000).toFixed(1)} s  checking heights 1..${height} on ${running().length} nodes`);

    const chain = await collectChain(running(), height);
    const data: RunData = {
      manifest: m,
      nodes,
      observer: obs,
      outages,
      load,
      chain,
      netStart,
      end: now(),
      timeoutProposeMs: timeoutPropose(m),
      targetReached,
      runnerErrors,
      runningAtEnd: new Set(running().map((n) => n.name)),
      blockSynced: new Map(),
      stateSyncLogs: new Map(),
      stateSyncTrust,
      corruptedChunks,
    };
    const txCheck = await checkTxs(data);
    // Stop the nodes before reading their last sign states and logs.
    await Promise.all(nodes.map((n) => n.stop(20_000)));
    obs.sampleSignStates();
    const logHits: string[] = [];
    for (const n of nodes) {
      let text = "";
      try {
        text = readFileSync(n.spec.logPath, "utf8");
      } catch {
        continue;
      }
      let start = 0;
      const ss: StateSyncLog = {
        restoredHeight: undefined,
        elapsedMs: undefined,
        fellBack: false,
        refusedChunks: [],
        failures: [],
      };
      if (stateSyncTrust.has(n.name)) data.stateSyncLogs.set(n.name, ss);
      for (const line of text.split("\n")) {
        readStateSyncLine(ss, line);
        const marker = /^===== e2e: start #(\d+) /.exec(line);
        if (marker !== null) start = Number(marker[1]);
        const synced = /switching to consensus.*blocksSynced=(\d+)/.exec(line);
        if (synced !== null) data.blockSynced.set(`${n.name}#${start}`, Number(synced[1]));
        if (DOUBLE_SIGN_LOG.test(line)) logHits.push(`${n.name}: ${line.slice(0, 300)}`);
      }
    }
    const recs = recoveries(data);
    const stateSyncCheck = checkStateSync(data);
    checks.push(
      checkTarget(data),
      checkNoFork(data),
      checkAppHash(data),
      ...(stateSyncCheck === undefined ? [] : [stateSyncCheck]),
      txCheck,
      checkNoDoubleSign(data, logHits),
      checkPrivval(data),
      ...checkLiveness(data),
      checkRecovery(data, recs),
      checkNoCrash(data),
    );
    stats = runStats(data, timeline, recs);
  } catch (err) {
    checks.push({ name: "the runner completed", ok: false, details: [(err as Error).stack ?? String(err)] });
  } finally {
    teardown.abort(new Error("teardown"));
    load?.stop();
    observer?.stop();
    // Perturbations end soon after the abort (their waits are abortable; a start or stop in flight is
    // bounded): wait for them, so that no node is started after the nodes are killed here.
    if (perturbations !== undefined) await Promise.race([perturbations, sleep(70_000)]);
    await Promise.all(nodes.map((n) => n.kill()));
    await links?.close();
  }
  const failed = checks.filter((c) => !c.ok).length;
  if (opts.keep === true) kept = "all";
  else if (failed > 0) {
    rmSync(join(dir, "homes"), { recursive: true, force: true });
    kept = "logs";
  } else {
    rmSync(dir, { recursive: true, force: true });
  }
  return { manifest: m, checks, stats, passed: checks.length - failed, failed, dir, kept, timeline, outages };
}

/** What a node's log line says about its state sync (the texts of src/node/node.ts and src/statesync/). */
function readStateSyncLine(ss: StateSyncLog, line: string): void {
  if (line.includes("State sync complete")) {
    ss.restoredHeight = Number(/\bheight[=":]+(\d+)/.exec(line)?.[1] ?? Number.NaN);
    const ms = /\belapsedMs[=":]+(\d+)/.exec(line)?.[1];
    if (ms !== undefined) ss.elapsedMs = Number(ms);
  } else if (line.includes("State sync found no snapshot")) ss.fellBack = true;
  else if (line.includes("Applied snapshot chunk") && /\bresult[=":]+"?retry\b/i.test(line))
    ss.refusedChunks.push(line.slice(0, 300));
  else if (line.includes("State sync failed")) ss.failures.push(line.slice(0, 300));
}

/** Validators whose last outage has ended but whose signature is in no commit since. */
function votersMissing(nodes: readonly E2eNode[], outages: readonly Outage[], obs: Observer): string[] {
  const missing: string[] = [];
  for (const n of nodes) {
    if (!n.spec.isValidator || n.state !== "running") continue;
    const last = outages.filter((o) => o.nodes.includes(n.name)).at(-1);
    if (last?.hardEnd === undefined) continue;
    let voted = false;
    for (const [h, c] of obs.commits) {
      if ((obs.firstSeen.get(h) ?? 0) > (last.hardEnd ?? 0) && c.signers.includes(n.spec.address)) {
        voted = true;
        break;
      }
    }
    if (!voted) missing.push(n.name);
  }
  return missing;
}

/** The report: each check with its details, the round and interval statistics, and the closing count line. */
export function formatResult(r: RunResult): string[] {
  const out: string[] = [""];
  for (const c of r.checks) {
    out.push(`${c.ok ? "PASS" : "FAIL"}  ${c.name}`);
    for (const d of c.details) out.push(`      ${d}`);
  }
  if (r.stats !== undefined) out.push("", ...formatStats(r.stats));
  out.push("");
  if (r.kept === "all") out.push(`homes and logs kept in ${r.dir}`);
  else if (r.kept === "logs") out.push(`node logs kept in ${join(r.dir, "logs")}`);
  out.push(`e2e: ${r.passed} passed, ${r.failed} failed`);
  return out;
}
