// The invariants checked after a run. Each returns a CheckResult: a name, ok, and detail lines (the
// evidence when it fails: heights, nodes, times, values).
import type { ChainView } from "./chain.js";
import { mapLimit } from "./chain.js";
import { isAlreadyKnown, type TxLoad, type TxRecord } from "./load.js";
import type { Manifest } from "./manifest.js";
import type { E2eNode } from "./nodeProcess.js";
import type { Observer, SignState } from "./observer.js";
import type { Outage } from "./perturb.js";
import { cometRpc, ethRpc } from "./rpc.js";

export interface CheckResult {
  name: string;
  ok: boolean;
  details: string[];
}

export interface RunData {
  manifest: Manifest;
  nodes: E2eNode[];
  observer: Observer;
  outages: Outage[];
  load: TxLoad | undefined;
  chain: ChainView;
  /** ms since the run started. */
  netStart: number;
  end: number;
  timeoutProposeMs: number;
  targetReached: boolean;
  runnerErrors: string[];
  /** Nodes running when the checks started (before the runner stopped them). */
  runningAtEnd: Set<string>;
  /** "node#start" -> blocks its block sync applied before switching to consensus (from its log). */
  blockSynced: Map<string, number>;
  /** What each state-syncing node's log says: the restored height, or the fall back to block sync. */
  stateSyncLogs: Map<string, StateSyncLog>;
  /** The trusted height the runner gave each state-syncing node. */
  stateSyncTrust: Map<string, number>;
  /** Snapshot chunk files corrupt_snapshot damaged, per node. */
  corruptedChunks: Map<string, string[]>;
}

export interface StateSyncLog {
  restoredHeight: number | undefined;
  /** ms from "Starting state sync" to "State sync complete", from the log line. */
  elapsedMs: number | undefined;
  fellBack: boolean;
  /** Lines that show a refused chunk (its sender rejected, the chunk fetched again). */
  refusedChunks: string[];
  /** Lines that stopped the node ("State sync failed"). */
  failures: string[];
}

/** Nodes that may lack heights below their earliest: those expected to restore a snapshot. */
function restoresSnapshot(d: RunData, name: string): boolean {
  return d.manifest.nodes.find((n) => n.name === name)?.stateSync?.expect === "restore";
}

/** Liveness bounds (docs/e2e.md): a block within timeout_propose + this with at most f out... */
export const LIVE_SLACK_MS = 3000;
/** ...and within this after quorum is back when more than f were out. */
export const RESUME_MS = 10_000;
/** Blocks first seen this long after more than f went hard-down are blocks that should not exist. */
export const HALT_GRACE_MS = 2000;

const MAX_LINES = 12;

export function fmtT(ms: number): string {
  return `+${(ms / 1000).toFixed(1)} s`;
}

function cap(lines: string[], max = MAX_LINES): string[] {
  return lines.length <= max ? lines : [...lines.slice(0, max), `… and ${lines.length - max} more`];
}

export function validatorPowers(d: RunData): Map<string, number> {
  return new Map(d.nodes.filter((n) => n.spec.isValidator).map((n) => [n.name, n.spec.power]));
}

/** Names of validators by address. */
export function namesByAddress(d: RunData): Map<string, string> {
  return new Map(d.nodes.filter((n) => n.spec.isValidator).map((n) => [n.spec.address, n.name]));
}

/**
 * Voting power that can form a quorum at time t: validators not out (each outage from its start to
 * `end(o)`), and during a partition only the best group counts.
 */
export function upPower(d: RunData, t: number, end: (o: Outage) => number | undefined): number {
  const powers = validatorPowers(d);
  const out = new Set<string>();
  let groups: readonly (readonly string[])[] | undefined;
  for (const o of d.outages) {
    const e = end(o) ?? Number.POSITIVE_INFINITY;
    if (t < o.start || t >= e) continue;
    if (o.kind === "partition") groups = o.groups;
    else for (const n of o.nodes) out.add(n);
  }
  const sum = (names: readonly string[]) => names.reduce((s, n) => s + (out.has(n) ? 0 : (powers.get(n) ?? 0)), 0);
  if (groups === undefined) return sum([...powers.keys()]);
  return Math.max(...groups.map(sum));
}

export function hasQuorum(d: RunData, up: number): boolean {
  const total = [...validatorPowers(d).values()].reduce((a, b) => a + b, 0);
  return 3 * up > 2 * total;
}

const softEnd = (o: Outage) => o.back;
const hardEnd = (o: Outage) => o.hardEnd;

function breakpoints(d: RunData, a: number, b: number, end: (o: Outage) => number | undefined): number[] {
  const xs = new Set<number>([a]);
  for (const o of d.outages) {
    for (const x of [o.start, end(o)]) if (x !== undefined && x > a && x < b) xs.add(x);
  }
  return [...xs].sort((x, y) => x - y);
}

/** Whether validators with a quorum of power were in (not out) at every moment of [a, b]. */
export function quorumThroughout(d: RunData, a: number, b: number): boolean {
  return breakpoints(d, a, b, softEnd).every((x) => hasQuorum(d, upPower(d, x, softEnd)));
}

/** Describes who was out at some point in [a, b]. */
export function outDuring(d: RunData, a: number, b: number): string[] {
  const out: string[] = [];
  const powers = validatorPowers(d);
  for (const o of d.outages) {
    const e = o.back ?? Number.POSITIVE_INFINITY;
    if (o.start > b || e < a) continue;
    if (o.kind !== "partition" && !o.nodes.some((n) => powers.has(n))) continue;
    const who = o.kind === "partition" ? (o.groups ?? []).map((g) => `{${g.join(",")}}`).join("|") : o.nodes.join(",");
    const back = o.back === undefined ? "not back" : `back ${fmtT(o.back)}`;
    out.push(`${who} ${o.kind}#${o.occurrence + 1} ${fmtT(o.start)}..${back}`);
  }
  return out;
}

export function checkTarget(d: RunData): CheckResult {
  const h = d.observer.maxHeight;
  return {
    name: `target height ${d.manifest.targetHeight} reached before the deadline`,
    ok: d.targetReached,
    details: [`highest height seen: ${h}`, ...d.runnerErrors],
  };
}

export function checkNoFork(d: RunData): CheckResult {
  const details: string[] = [];
  const bad: string[] = [];
  const missing: string[] = [];
  for (let h = 1; h <= d.chain.height; h++) {
    const seen = new Map<string, string[]>();
    for (const [name, m] of d.chain.perNode) {
      const v = m.get(h);
      if (v === undefined) {
        // A state-synced node's block store starts above the snapshot height.
        if (restoresSnapshot(d, name) && h < (d.chain.earliest.get(name) ?? 1)) continue;
        missing.push(`${name} h=${h}`);
        continue;
      }
      const key = `block ${v[0]} app ${v[1]}`;
      seen.set(key, [...(seen.get(key) ?? []), name]);
    }
    if (seen.size > 1) {
      bad.push(`h=${h}: ${[...seen.entries()].map(([k, ns]) => `${ns.join(",")} have ${k}`).join("; ")}`);
    }
  }
  details.push(`${d.chain.height} heights compared on ${d.chain.perNode.size} nodes`);
  for (const [name, e] of d.chain.earliest) {
    if (e > 1) details.push(`${name} holds heights ${e}..${d.chain.height} (its block store starts at ${e})`);
  }
  if (bad.length > 0) details.push("diverging heights:", ...cap(bad));
  if (missing.length > 0) details.push("heights a node could not serve:", ...cap(missing));
  return {
    name: "no fork: every node has the same block hash and app hash at every height",
    ok: bad.length === 0 && missing.length === 0,
    details,
  };
}

function summarize(tx: TxRecord): string {
  const subs = tx.submissions.map(
    (s) => `${s.node}@${fmtT(s.t)} ${s.outcome}${s.reason === "" ? "" : ` (${s.reason})`}`,
  );
  const who = tx.kind === "kv" ? "" : ` from account ${tx.from} nonce ${tx.nonce}`;
  return `tx ${tx.ethHash || tx.cometHash} (${tx.kind}${who}): ${cap(subs, 4).join("; ")}`;
}

export async function checkTxs(d: RunData): Promise<CheckResult> {
  const name =
    "txs: every tx a node accepted is mined exactly once (same result on every node), the others rejected with a reason";
  const load = d.load;
  if (load === undefined) return { name, ok: true, details: ["no load in the manifest"] };
  const count = new Map<string, number[]>();
  for (let h = 1; h <= d.chain.height; h++) {
    for (const t of d.chain.blocks.get(h)?.txs ?? []) count.set(t, [...(count.get(t) ?? []), h]);
  }
  const problems: string[] = [];
  const mined: TxRecord[] = [];
  let rejected = 0;
  let unsent = 0;
  let resent = 0;
  const reasons = new Map<string, number>();
  for (const tx of load.txs) {
    const heights = count.get(tx.cometHash) ?? [];
    const accepted = tx.submissions.some((s) => s.outcome === "accepted" || isAlreadyKnown(s.reason));
    if (tx.submissions.length > 1) resent++;
    for (const s of tx.submissions) {
      if (s.outcome === "rejected") {
        const r = s.reason.replace(/0x[0-9a-f]+|\d+/gi, "N").slice(0, 90);
        reasons.set(r, (reasons.get(r) ?? 0) + 1);
        if (s.reason.trim() === "") problems.push(`rejected without a reason: ${summarize(tx)}`);
      }
    }
    if (heights.length > 1)
      problems.push(`mined ${heights.length} times (heights ${heights.join(", ")}): ${summarize(tx)}`);
    else if (heights.length === 1) mined.push(tx);
    else if (accepted) problems.push(`accepted but never mined (lost): ${summarize(tx)}`);
    else if (tx.submissions.some((s) => s.outcome === "rejected")) rejected++;
    else unsent++;
  }
  // Each mined tx, as every running node reports it.
  const running = d.nodes.filter((n) => n.state === "running");
  const disagreements: string[] = [];
  await mapLimit(mined, 8, async (tx) => {
    const h = count.get(tx.cometHash)?.[0] as number;
    for (const n of running) {
      // Below a state-synced node's first block it has no receipts (the snapshot is state, not history).
      if (restoresSnapshot(d, n.name) && h < (d.chain.earliest.get(n.name) ?? 1)) continue;
      try {
        if (d.manifest.app === "evm") {
          const r = await ethRpc<{ blockNumber: string; status: string } | null>(
            n.evmUrl,
            "eth_getTransactionReceipt",
            [tx.ethHash],
            5000,
          );
          if (r === null) disagreements.push(`${n.name}: no receipt for ${tx.ethHash} (in block ${h})`);
          else if (Number(r.blockNumber) !== h || r.status !== "0x1") {
            disagreements.push(
              `${n.name}: receipt of ${tx.ethHash} says block ${Number(r.blockNumber)} status ${r.status}; the chain has it at ${h}`,
            );
          }
        } else {
          const r = await cometRpc<{ height: string; tx_result: { code: number; log: string } }>(
            n.rpcUrl,
            "tx",
            { hash: `0x${tx.cometHash}` },
            5000,
          );
          if (Number(r.height) !== h || r.tx_result.code !== 0) {
            disagreements.push(
              `${n.name}: tx ${tx.cometHash} at ${r.height} code ${r.tx_result.code} (${r.tx_result.log}); the chain has it at ${h}`,
            );
          }
        }
      } catch (err) {
        disagreements.push(`${n.name}: ${tx.ethHash || tx.cometHash}: ${(err as Error).message}`);
      }
    }
  });
  const details = [
    `${load.txs.length} txs sent: ${mined.length} mined once, ${rejected} rejected with a reason, ${unsent} never reached a node; ${resent} were sent more than once`,
    `results of the ${mined.length} mined txs read back on ${running.length} nodes (${d.manifest.app === "evm" ? "eth_getTransactionReceipt" : "tx"})`,
  ];
  if (reasons.size > 0) {
    details.push(
      `rejections: ${[...reasons.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([r, n]) => `${n}× "${r}"`)
        .join(", ")}`,
    );
  }
  details.push(...cap(problems), ...cap(disagreements));
  return { name, ok: problems.length === 0 && disagreements.length === 0, details };
}

/** Every running node's app, after its last height, has the app hash the chain's next header carries. */
export function checkAppHash(d: RunData): CheckResult {
  const bad: string[] = [];
  const lines: string[] = [];
  for (const n of d.nodes) {
    if (!d.runningAtEnd.has(n.name)) continue;
    const a = d.chain.appHashes.get(n.name);
    if (a === undefined) bad.push(`${n.name}: abci_info did not answer`);
    else if (a.header === undefined) bad.push(`${n.name}: no block ${a.height + 1} to compare its app hash with`);
    else if (a.own !== a.header)
      bad.push(`${n.name}: app hash after h=${a.height} is ${a.own}; header ${a.height + 1} has ${a.header}`);
    else lines.push(`${n.name}: h=${a.height} ${a.own.slice(0, 16)}…`);
  }
  return {
    name: "app hash: every node's app (abci_info) has the app hash of the next block's header",
    ok: bad.length === 0,
    details: [...cap(lines), ...cap(bad)],
  };
}

/** Where the validator set changed around a snapshot height S (headers S-2..S+2), for the report. */
function valsetChanges(d: RunData, s: number): string {
  const changed: number[] = [];
  for (let h = s - 1; h <= s + 2; h++) {
    const a = d.chain.blocks.get(h - 1)?.validatorsHash;
    const b = d.chain.blocks.get(h)?.validatorsHash;
    if (a !== undefined && b !== undefined && a !== b) changed.push(h);
  }
  return changed.length === 0 ? "" : `; the validator set changes at height ${changed.join(", ")}`;
}

/**
 * Nodes that join by state sync: a node expected to restore did (its log's "State sync complete" at
 * height S, its block store starting at S + 1, at or below the trusted height's neighbourhood), and a
 * node expected to fall back logged the "no snapshot" message and holds every height from 1.
 */
export function checkStateSync(d: RunData): CheckResult | undefined {
  const syncers = d.manifest.nodes.filter((n) => n.stateSync !== undefined);
  if (syncers.length === 0) return undefined;
  const bad: string[] = [];
  const lines: string[] = [];
  for (const mn of syncers) {
    const log = d.stateSyncLogs.get(mn.name);
    const earliest = d.chain.earliest.get(mn.name);
    const trust = d.stateSyncTrust.get(mn.name);
    const label = `${mn.name} (trust height ${trust ?? "never set"})`;
    if (log === undefined || trust === undefined) {
      bad.push(`${label}: did not start`);
      continue;
    }
    bad.push(...log.failures.map((f) => `${mn.name}: ${f}`));
    const refused = log.refusedChunks.length > 0 ? `; ${log.refusedChunks.length} chunk(s) refused` : "";
    if (mn.stateSync?.expect === "restore") {
      if (log.restoredHeight === undefined) bad.push(`${label}: no "State sync complete" in its log`);
      else if (earliest !== log.restoredHeight + 1)
        bad.push(`${label}: restored height ${log.restoredHeight}, but its block store starts at ${earliest}`);
      else if (log.fellBack) bad.push(`${label}: restored, yet also logged the fall back to block sync`);
      else if (d.corruptedChunks.size > 0 && log.refusedChunks.length === 0)
        bad.push(
          `${label}: restored, but refused no chunk although ${[...d.corruptedChunks.keys()].join(", ")} served damaged ones`,
        );
      else
        lines.push(
          `${label}: restored the snapshot at height ${log.restoredHeight} in ${((log.elapsedMs ?? 0) / 1000).toFixed(1)} s, block store from ${earliest}${refused}${valsetChanges(d, log.restoredHeight)}`,
        );
    } else {
      if (!log.fellBack) bad.push(`${label}: no "State sync found no snapshot" in its log`);
      else if (log.restoredHeight !== undefined) bad.push(`${label}: restored height ${log.restoredHeight}`);
      else if (earliest !== 1) bad.push(`${label}: fell back, but its block store starts at ${earliest}, not 1`);
      else lines.push(`${label}: found no snapshot, said so, and block synced from height 1${refused}`);
    }
  }
  for (const [node, files] of d.corruptedChunks) lines.push(`${node} served damaged chunks: ${files.join(", ")}`);
  return {
    name: "state sync: each node joining by state sync restored a snapshot (or, expected, fell back to block sync)",
    ok: bad.length === 0,
    details: [...cap(lines), ...cap(bad)],
  };
}

export function checkNoDoubleSign(d: RunData, logHits: string[]): CheckResult {
  const found: string[] = [];
  for (let h = 1; h <= d.chain.height; h++) {
    for (const ev of d.chain.blocks.get(h)?.evidence ?? []) {
      found.push(`h=${h}: ${ev.type} ${JSON.stringify(ev.value).slice(0, 300)}`);
    }
  }
  return {
    name: "no double signing: no evidence in any block, no conflicting votes in any node's log",
    ok: found.length === 0 && logHits.length === 0,
    details: [
      `${d.chain.height} blocks scanned for evidence, ${d.nodes.length} node logs for conflicting votes`,
      ...cap(found),
      ...cap(logHits),
    ],
  };
}

function cmpSign(a: SignState, b: SignState): number {
  return a.height - b.height || a.round - b.round || a.step - b.step;
}

export function checkPrivval(d: RunData): CheckResult {
  const bad: string[] = [];
  let samples = 0;
  for (const [name, list] of d.observer.signStates) {
    samples += list.length;
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1] as SignState;
      const b = list[i] as SignState;
      if (cmpSign(b, a) < 0) {
        bad.push(
          `${name}: ${a.height}/${a.round}/${a.step} at ${fmtT(a.t)} then ${b.height}/${b.round}/${b.step} at ${fmtT(b.t)}`,
        );
      }
    }
  }
  return {
    name: "privval: no validator's priv_validator_state.json (height/round/step) ever went backwards, across restarts too",
    ok: bad.length === 0,
    details: [
      `${samples} distinct states read (every second, and before and after each kill and restart)`,
      ...cap(bad),
    ],
  };
}

export function checkLiveness(d: RunData): CheckResult[] {
  const bound = d.timeoutProposeMs + LIVE_SLACK_MS;
  const live: string[] = [];
  const resume: string[] = [];
  const halt: string[] = [];
  let gapsLive = 0;
  let gapsOut = 0;
  let maxLive = 0;
  const seen = d.observer.firstSeen;
  for (let h = 2; h <= d.chain.height; h++) {
    const a = seen.get(h - 1);
    const b = seen.get(h);
    if (a === undefined || b === undefined) continue;
    const points = breakpoints(d, a, b, softEnd);
    const noQuorum = points.filter((x) => !hasQuorum(d, upPower(d, x, softEnd)));
    if (noQuorum.length === 0) {
      gapsLive++;
      maxLive = Math.max(maxLive, b - a);
      if (b - a > bound) {
        live.push(
          `h=${h}: ${((b - a) / 1000).toFixed(1)} s after h=${h - 1} (${fmtT(a)}..${fmtT(b)}); out: ${outDuring(d, a, b).join("; ") || "none"}`,
        );
      }
      continue;
    }
    gapsOut++;
    // The last moment in the gap without quorum: the end of the piece starting at the last no-quorum point.
    const last = noQuorum.at(-1) as number;
    const next = points.find((x) => x > last);
    const q = next ?? breakpointAfter(d, last, softEnd);
    if (b - q > RESUME_MS) {
      resume.push(
        `h=${h}: ${((b - q) / 1000).toFixed(1)} s after quorum was back at ${fmtT(q)}; out: ${outDuring(d, a, b).join("; ")}`,
      );
    }
  }
  // Hard no-quorum windows: no block may be committed inside them (after in-flight votes land).
  const hardPoints = new Set<number>();
  for (const o of d.outages) {
    hardPoints.add(o.start);
    if (o.hardEnd !== undefined) hardPoints.add(o.hardEnd);
  }
  const sorted = [...hardPoints].sort((x, y) => x - y);
  let windows = 0;
  for (let i = 0; i < sorted.length; i++) {
    const s = sorted[i] as number;
    if (hasQuorum(d, upPower(d, s, hardEnd))) continue;
    const e = sorted[i + 1] ?? d.end;
    windows++;
    for (const [h, t] of seen) {
      if (t > s + HALT_GRACE_MS && t < e)
        halt.push(`h=${h} first seen at ${fmtT(t)}, while more than f were down (${fmtT(s)}..${fmtT(e)})`);
    }
  }
  return [
    {
      name: `liveness (at most f out): a block at least every timeout_propose + ${LIVE_SLACK_MS / 1000} s = ${bound / 1000} s`,
      ok: live.length === 0,
      details: [
        `${gapsLive} block intervals with at most f out, longest ${(maxLive / 1000).toFixed(1)} s`,
        ...cap(live),
      ],
    },
    {
      name: `liveness (more than f out): the chain stops, and resumes within ${RESUME_MS / 1000} s of quorum coming back`,
      ok: resume.length === 0 && halt.length === 0,
      details: [
        `${gapsOut} block intervals with more than f out at some point; ${windows} windows with more than f down`,
        ...cap(halt),
        ...cap(resume),
      ],
    },
  ];
}

function breakpointAfter(d: RunData, t: number, end: (o: Outage) => number | undefined): number {
  let best = Number.POSITIVE_INFINITY;
  for (const o of d.outages) {
    for (const x of [o.start, end(o)]) if (x !== undefined && x > t && x < best) best = x;
  }
  return best;
}

export interface Recovery {
  outage: Outage;
  node: string;
  /** First height the node signed after it was brought back, and when that height was first seen. */
  votedHeight: number | undefined;
  votedAt: number | undefined;
  /** kill/restart/join: votedAt - process spawn; pause/disconnect/partition: votedAt - hardEnd. */
  recoveryMs: number | undefined;
  /** Another outage of the node started before it voted. */
  interrupted: boolean;
}

export function recoveries(d: RunData): Recovery[] {
  const addr = new Map(d.nodes.map((n) => [n.name, n.spec.address]));
  const isVal = new Map(d.nodes.map((n) => [n.name, n.spec.isValidator]));
  const out: Recovery[] = [];
  for (const o of d.outages) {
    for (const node of o.nodes) {
      if (isVal.get(node) !== true) {
        out.push({
          outage: o,
          node,
          votedHeight: undefined,
          votedAt: undefined,
          recoveryMs: undefined,
          interrupted: false,
        });
        continue;
      }
      const from = o.hardEnd ?? Number.POSITIVE_INFINITY;
      const nextOutage = d.outages.find((x) => x !== o && x.nodes.includes(node) && x.start > o.start);
      let votedHeight: number | undefined;
      let votedAt: number | undefined;
      for (let h = 1; h <= d.chain.height; h++) {
        const t = d.observer.firstSeen.get(h);
        if (t === undefined || t <= from) continue;
        if (d.chain.commits.get(h)?.signers.includes(addr.get(node) ?? "")) {
          votedHeight = h;
          votedAt = t;
          break;
        }
      }
      const interrupted = nextOutage !== undefined && (votedAt === undefined || votedAt > nextOutage.start);
      const base = o.spawnAt ?? o.hardEnd;
      out.push({
        outage: o,
        node,
        votedHeight: interrupted ? undefined : votedHeight,
        votedAt: interrupted ? undefined : votedAt,
        recoveryMs: interrupted || votedAt === undefined || base === undefined ? undefined : votedAt - base,
        interrupted,
      });
    }
  }
  return out;
}

export function checkRecovery(d: RunData, recs: Recovery[]): CheckResult {
  const bad: string[] = [];
  const lines: string[] = [];
  const statusH = (n: string) => d.observer.status.get(n)?.height ?? 0;
  for (const r of recs) {
    const o = r.outage;
    const label = `${r.node} ${o.kind}#${o.occurrence + 1} at ${fmtT(o.start)}`;
    if (o.hardEnd === undefined) {
      bad.push(`${label}: never brought back (${o.problems.join("; ") || "run ended"})`);
      continue;
    }
    if (o.problems.length > 0) bad.push(`${label}: ${o.problems.join("; ")}`);
    const restarted = o.spawnAt !== undefined;
    const synced = restarted ? d.blockSynced.get(`${r.node}#${o.startNo ?? 0}`) : undefined;
    const caught = !restarted
      ? "resumed"
      : o.interrupted === true
        ? "perturbed again before it caught up"
        : o.back === undefined
          ? "never caught up"
          : `caught up ${((o.back - o.hardEnd) / 1000).toFixed(1)} s after its RPC was up${synced === undefined ? "" : ` (block sync: ${synced} blocks)`}`;
    if (o.back === undefined && !r.interrupted) bad.push(`${label}: ${caught}`);
    const isVal = d.nodes.find((n) => n.name === r.node)?.spec.isValidator === true;
    if (!isVal) {
      lines.push(`${label}: ${caught}, at height ${statusH(r.node)} at the end`);
      continue;
    }
    if (r.interrupted) {
      lines.push(
        o.interrupted === true ? `${label}: ${caught}` : `${label}: ${caught}; perturbed again before it voted`,
      );
      continue;
    }
    if (r.votedHeight === undefined) {
      bad.push(`${label}: ${caught}, but its signature is in no later commit (up to h=${d.chain.height})`);
      continue;
    }
    lines.push(
      `${label}: ${caught}; voted at h=${r.votedHeight}, ${((r.recoveryMs ?? 0) / 1000).toFixed(1)} s after ${o.spawnAt !== undefined ? "its process started" : "it was back"}`,
    );
  }
  // Every node that is running at the end has every height.
  for (const n of d.nodes) {
    if (!d.runningAtEnd.has(n.name)) bad.push(`${n.name} is not running at the end`);
  }
  return {
    name: "recovery: every node that was down or joined late caught up (block sync), and validators voted again",
    ok: bad.length === 0,
    details: [`${recs.length} outages`, ...cap(lines, 20), ...cap(bad)],
  };
}

export function checkNoCrash(d: RunData): CheckResult {
  const bad: string[] = [];
  for (const n of d.nodes)
    for (const e of n.unexpectedExits) bad.push(`${n.name} exited by itself at ${fmtT(e.t)} (${e.how})`);
  return {
    name: "no node exited unless the runner stopped it",
    ok: bad.length === 0,
    details: [`${d.nodes.reduce((s, n) => s + n.starts, 0)} process starts`, ...cap(bad)],
  };
}
