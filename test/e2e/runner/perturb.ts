// Applies the manifest's perturbations: each node's list in order (a repeat never starts before the
// previous one ended), partitions in their own sequence, all nodes at once. Every perturbation leaves
// an Outage (when the node went out, when the runner brought it back, when it had caught up) and lines
// in the timeline, which the checks and the round report read.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Links } from "./links.js";
import type { Every, Partition, Perturbation, PerturbationKind, Trigger } from "./manifest.js";
import type { E2eNode } from "./nodeProcess.js";
import type { Observer } from "./observer.js";
import { cometRpc, type StatusResult, type ValidatorsResult } from "./rpc.js";
import { writeStateSyncConfig } from "./setup.js";

export interface TimelineEvent {
  t: number;
  node: string;
  what: string;
}

export interface Outage {
  /** The node, or every node of the partition's minority groups. */
  nodes: string[];
  kind: PerturbationKind | "partition";
  key: string;
  occurrence: number;
  /** When the node went out (SIGKILL, SIGTERM, SIGSTOP, links cut; for join: the run's start). */
  start: number;
  /** When the runner brought it back: RPC answering after a (re)start, SIGCONT, links restored. */
  hardEnd: number | undefined;
  /** When its status first showed it caught up (kill/restart/join), else hardEnd. */
  back: number | undefined;
  /** kill/restart/join: when the new process was spawned, and which start of the node it was (1, 2, …). */
  spawnAt: number | undefined;
  startNo?: number;
  heightAtStart: number;
  /** Partitions: the groups. */
  groups?: readonly (readonly string[])[];
  /** Problems met while applying it (a node that did not stop on SIGTERM in time, failed to start). */
  problems: string[];
  /** The node was perturbed again before it had caught up (`back` is then the next outage's start). */
  interrupted?: boolean;
}

export interface PerturbContext {
  nodes: Map<string, E2eNode>;
  links: Links;
  observer: Observer;
  now: () => number;
  /** ms since the run started at which the network was started (times in the manifest count from it). */
  netStart: number;
  signal: AbortSignal;
  timeline: TimelineEvent[];
  outages: Outage[];
  log: (line: string) => void;
  /** Nodes that join by state sync; the trusted height the runner gave each is recorded here. */
  stateSyncers: ReadonlySet<string>;
  stateSyncTrust: Map<string, number>;
  /** Snapshot chunk files damaged by corrupt_snapshot, per node. */
  corruptedChunks: Map<string, string[]>;
}

function event(ctx: PerturbContext, node: string, what: string): void {
  const t = ctx.now();
  ctx.timeline.push({ t, node, what });
  ctx.log(`+${(t / 1000).toFixed(1).padStart(6)} s  h=${String(ctx.observer.maxHeight).padEnd(5)} ${node}: ${what}`);
}

async function waitTrigger(ctx: PerturbContext, at: Trigger): Promise<void> {
  if ("height" in at) {
    await ctx.observer.waitForHeight(at.height, ctx.signal);
  } else {
    const wait = ctx.netStart + at.timeMs - ctx.now();
    if (wait > 0) await sleep(wait, undefined, { signal: ctx.signal });
  }
}

function nextTrigger(
  at: Trigger,
  every: Every | undefined,
  startedAt: number,
  heightAt: number,
  netStart: number,
): Trigger {
  if (every === undefined) return at;
  if ("heights" in every) return { height: heightAt + every.heights };
  return { timeMs: startedAt - netStart + every.ms };
}

/** Runs one node's perturbations in order. */
export async function perturbNode(ctx: PerturbContext, node: E2eNode, list: readonly Perturbation[]): Promise<void> {
  for (const p of list) {
    let at = p.at;
    for (let k = 0; k < p.repeat; k++) {
      await waitTrigger(ctx, at);
      const started = ctx.now();
      const height = ctx.observer.maxHeight;
      await applyOne(ctx, node, p, k);
      at = nextTrigger(p.at, p.every, started, height, ctx.netStart);
    }
  }
}

function newOutage(ctx: PerturbContext, nodes: string[], p: { kind: Outage["kind"]; key: string }, k: number): Outage {
  // A node perturbed again before it had caught up: the earlier outage runs into this one.
  for (const prev of ctx.outages) {
    if (prev.back === undefined && prev.kind !== "partition" && prev.nodes.some((n) => nodes.includes(n))) {
      prev.back = ctx.now();
      prev.interrupted = true;
    }
  }
  const o: Outage = {
    nodes,
    kind: p.kind,
    key: p.key,
    occurrence: k,
    start: ctx.now(),
    hardEnd: undefined,
    back: undefined,
    spawnAt: undefined,
    heightAtStart: ctx.observer.maxHeight,
    problems: [],
  };
  ctx.outages.push(o);
  return o;
}

/** Starts the node; then, without waiting, records when it has caught up. */
async function startAndTrack(ctx: PerturbContext, node: E2eNode, o: Outage): Promise<void> {
  o.spawnAt = ctx.now();
  event(ctx, node.name, "starting");
  try {
    await node.start();
  } catch (err) {
    o.problems.push(`did not start: ${(err as Error).message.split("\n")[0]}`);
    event(ctx, node.name, `FAILED to start: ${(err as Error).message.split("\n")[0]}`);
    throw err;
  }
  o.hardEnd = ctx.now();
  o.startNo = node.starts;
  ctx.observer.sampleSignState(node);
  event(ctx, node.name, `RPC up (pid ${node.pid}, ${((o.hardEnd - o.spawnAt) / 1000).toFixed(1)} s after spawn)`);
  void ctx.observer
    .waitCaughtUp(node.name, o.hardEnd, ctx.signal)
    .then((t) => {
      if (o.back !== undefined) return;
      o.back = t;
      event(ctx, node.name, `caught up at height ${ctx.observer.status.get(node.name)?.height}`);
    })
    .catch(() => undefined);
}

/**
 * Before a state-syncing node starts: two running nodes are its rpc_servers (primary and witness),
 * and the first one's latest block is the trusted height and hash (as CometBFT's e2e runner does).
 */
async function fillStateSyncTrust(ctx: PerturbContext, node: E2eNode): Promise<void> {
  const servers = [...ctx.nodes.values()].filter((n) => n !== node && n.state === "running").slice(0, 2);
  const primary = servers[0];
  if (primary === undefined || servers.length < 2)
    throw new Error(`${node.name}: state sync needs two running nodes as rpc_servers`);
  const st = await cometRpc<StatusResult>(primary.rpcUrl, "status", {}, 5000);
  const height = Number(st.sync_info.latest_block_height);
  const hash = st.sync_info.latest_block_hash;
  writeStateSyncConfig(node.spec.home, { rpcServers: servers.map((n) => n.rpcUrl), height, hash });
  ctx.stateSyncTrust.set(node.name, height);
  event(
    ctx,
    node.name,
    `join by state sync: trust height ${height} (${hash.slice(0, 12)}…), rpc_servers ${servers.map((n) => n.name).join(", ")}`,
  );
}

/**
 * Damages every snapshot chunk the node has on disk now (the first byte of each `chunk-<i>` under
 * `data/<app>.db/snapshots/<height>/` is inverted): the node goes on serving them, and a node that
 * state syncs must refuse them (their hash is not the metadata's) and fetch them from another peer.
 */
function corruptSnapshots(ctx: PerturbContext, node: E2eNode): void {
  const data = join(node.spec.home, "data");
  const files: string[] = [];
  for (const db of readdirSync(data).filter((d) => d.endsWith(".db"))) {
    const dir = join(data, db, "snapshots");
    if (!existsSync(dir)) continue;
    for (const height of readdirSync(dir).filter((h) => /^\d+$/.test(h))) {
      for (const f of readdirSync(join(dir, height)).filter((c) => c.startsWith("chunk-"))) {
        const path = join(dir, height, f);
        const bytes = readFileSync(path);
        if (bytes.length === 0) continue;
        bytes[0] = (bytes[0] as number) ^ 0xff;
        writeFileSync(path, bytes);
        files.push(`${height}/${f}`);
      }
    }
  }
  if (files.length === 0) throw new Error(`${node.name}: corrupt_snapshot found no snapshot chunk on disk`);
  ctx.corruptedChunks.set(node.name, [...(ctx.corruptedChunks.get(node.name) ?? []), ...files]);
  event(ctx, node.name, `snapshot chunks damaged on disk: ${files.join(", ")}`);
}

/**
 * Changes the validator's voting power with the kvstore app's `val=ed25519!<pubkey>!<power>` tx, sent
 * to a running node, and waits until /validators shows the new power (the update takes effect at the
 * height after next, as in CometBFT).
 */
async function setPower(ctx: PerturbContext, node: E2eNode, power: number): Promise<void> {
  const key = JSON.parse(readFileSync(join(node.spec.home, "config", "priv_validator_key.json"), "utf8")) as {
    pub_key: { value: string };
  };
  const tx = `0x${Buffer.from(`val=ed25519!${key.pub_key.value}!${power}`).toString("hex")}`;
  const via = [...ctx.nodes.values()].find((n) => n.state === "running");
  if (via === undefined) throw new Error(`${node.name}: set_power found no running node to send the tx to`);
  const r = await cometRpc<{ code: number; log: string; hash: string }>(via.rpcUrl, "broadcast_tx_sync", { tx }, 5000);
  if (r.code !== 0) throw new Error(`${node.name}: set_power tx refused by ${via.name}: code ${r.code} ${r.log}`);
  event(ctx, node.name, `set_power ${power}: val= tx ${r.hash.slice(0, 12)}… accepted by ${via.name}`);
  while (!ctx.signal.aborted) {
    try {
      const v = await cometRpc<ValidatorsResult>(via.rpcUrl, "validators", { per_page: "100" }, 3000);
      const mine = v.validators.find((x) => x.address.toUpperCase() === node.spec.address);
      if (mine !== undefined && Number(mine.voting_power) === power) {
        event(ctx, node.name, `voting power ${power} from height ${v.block_height}`);
        return;
      }
    } catch {
      // Asked again.
    }
    await sleep(250, undefined, { signal: ctx.signal });
  }
}

async function applyOne(ctx: PerturbContext, node: E2eNode, p: Perturbation, k: number): Promise<void> {
  const tag = p.repeat > 1 ? ` (${k + 1}/${p.repeat})` : "";
  switch (p.kind) {
    case "corrupt_snapshot":
      corruptSnapshots(ctx, node);
      return;
    case "set_power":
      await setPower(ctx, node, p.power ?? 0);
      return;
    case "join": {
      const o = newOutage(ctx, [node.name], p, k);
      o.start = 0;
      if (ctx.stateSyncers.has(node.name)) await fillStateSyncTrust(ctx, node);
      else event(ctx, node.name, "join: starting from genesis");
      await startAndTrack(ctx, node, o);
      return;
    }
    case "kill":
    case "restart": {
      if (node.state !== "running" && node.state !== "paused") {
        event(ctx, node.name, `${p.kind}${tag} skipped: not running`);
        return;
      }
      ctx.observer.sampleSignState(node);
      const o = newOutage(ctx, [node.name], p, k);
      if (p.kind === "kill") {
        event(ctx, node.name, `SIGKILL${tag} (pid ${node.pid})`);
        await node.kill();
      } else {
        event(ctx, node.name, `SIGTERM${tag} (pid ${node.pid})`);
        const inTime = await node.stop(20_000);
        if (!inTime) {
          o.problems.push("did not exit within 20 s of SIGTERM (killed)");
          event(ctx, node.name, "did not exit within 20 s of SIGTERM: SIGKILL");
        }
      }
      // The state file as the stopped process left it: the restarted node must not sign below it.
      ctx.observer.sampleSignState(node);
      if (p.durationMs > 0) await sleep(p.durationMs, undefined, { signal: ctx.signal });
      await startAndTrack(ctx, node, o);
      return;
    }
    case "pause": {
      if (node.state !== "running") {
        event(ctx, node.name, `pause${tag} skipped: not running`);
        return;
      }
      const o = newOutage(ctx, [node.name], p, k);
      event(ctx, node.name, `SIGSTOP${tag} for ${p.durationMs / 1000} s`);
      node.pause();
      try {
        await sleep(p.durationMs, undefined, { signal: ctx.signal });
      } finally {
        node.resume();
        o.hardEnd = ctx.now();
        o.back = o.hardEnd;
        event(ctx, node.name, "SIGCONT");
      }
      return;
    }
    case "disconnect": {
      const o = newOutage(ctx, [node.name], p, k);
      event(ctx, node.name, `links cut${tag} for ${p.durationMs / 1000} s`);
      ctx.links.cut(node.name);
      try {
        await sleep(p.durationMs, undefined, { signal: ctx.signal });
      } finally {
        ctx.links.heal(node.name);
        o.hardEnd = ctx.now();
        o.back = o.hardEnd;
        event(ctx, node.name, "links restored");
      }
      return;
    }
  }
}

/** Runs the partitions in order. */
export async function runPartitions(ctx: PerturbContext, list: readonly Partition[]): Promise<void> {
  for (const p of list) {
    await waitTrigger(ctx, p.at);
    const o = newOutage(ctx, p.groups.flat(), { kind: "partition", key: p.key }, 0);
    o.groups = p.groups;
    const text = p.groups.map((g) => `{${g.join(",")}}`).join(" | ");
    event(ctx, "network", `partition ${text} for ${p.durationMs / 1000} s`);
    ctx.links.partition(p.groups);
    try {
      await sleep(p.durationMs, undefined, { signal: ctx.signal });
    } finally {
      ctx.links.healPartition();
      o.hardEnd = ctx.now();
      o.back = o.hardEnd;
      event(ctx, "network", "partition healed");
    }
  }
}
