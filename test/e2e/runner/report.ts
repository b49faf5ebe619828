// The numbers next to the checks: the round each height was decided in (share in round 0, and for
// every other height what was out or had just come back around it), block intervals from header
// times, and recovery times.
import type { Recovery, RunData } from "./checks.js";
import { fmtT, namesByAddress, outDuring, quorumThroughout } from "./checks.js";
import type { TimelineEvent } from "./perturb.js";

/** Heights this long after a validator came back count as "after a rejoin" in the round statistics. */
export const REJOIN_WINDOW_MS = 30_000;

export interface LateHeight {
  height: number;
  round: number;
  lines: string[];
}

export interface RunStats {
  /** Heights 2..H (height 1 is left out: the nodes start one after the other). */
  heights: number;
  round0: number;
  round0Share: number;
  /** Heights during which validators with a quorum of power were in all along. */
  withQuorum: { heights: number; round0: number };
  /** Of those, heights within REJOIN_WINDOW_MS after a validator came back. */
  afterRejoin: { heights: number; round0: number };
  /** Heights with a quorum all along, not decided in round 0, whose round-0 proposer was in (not out). */
  proposerInLate: number[];
  late: LateHeight[];
  intervals: { medianMs: number; p90Ms: number; maxMs: number; count: number };
  /** kill outages: process start to the first block the node voted for. */
  killRecoveryMs: number[];
  recoveryMs: number[];
}

/** The q-quantile with linear interpolation between the two nearest ranks (the median of 2 values is their mean). */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(s.length - 1, lo + 1);
  return (s[lo] as number) + ((s[hi] as number) - (s[lo] as number)) * (pos - lo);
}

export function runStats(d: RunData, timeline: readonly TimelineEvent[], recs: readonly Recovery[]): RunStats {
  const names = namesByAddress(d);
  const name = (a: string | undefined) => (a === undefined ? "?" : (names.get(a.toUpperCase()) ?? a.slice(0, 8)));
  const validators = d.nodes.filter((n) => n.spec.isValidator);
  let heights = 0;
  let round0 = 0;
  const withQuorum = { heights: 0, round0: 0 };
  const proposerInLate: number[] = [];
  const afterRejoin = { heights: 0, round0: 0 };
  const late: LateHeight[] = [];
  for (let h = 2; h <= d.chain.height; h++) {
    const c = d.chain.commits.get(h);
    const b = d.observer.firstSeen.get(h);
    const a = d.observer.firstSeen.get(h - 1);
    if (c === undefined || a === undefined || b === undefined) continue;
    heights++;
    if (c.round === 0) round0++;
    const quorum = quorumThroughout(d, a, b);
    const rejoined = d.outages.filter(
      (o) =>
        o.kind !== "partition" &&
        o.nodes.some((n) => validators.some((v) => v.name === n)) &&
        o.back !== undefined &&
        o.back <= b &&
        b - o.back <= REJOIN_WINDOW_MS,
    );
    if (quorum) {
      withQuorum.heights++;
      if (c.round === 0) withQuorum.round0++;
      if (rejoined.length > 0) {
        afterRejoin.heights++;
        if (c.round === 0) afterRejoin.round0++;
      }
    }
    if (c.round === 0) continue;
    const lines: string[] = [];
    if (!quorum) lines.push("no quorum for part of this height (more than f out): a later round is expected");
    const r0 = d.chain.round0Proposer.get(h);
    const decidedBy = d.chain.blocks.get(h)?.proposer;
    // Was the round-0 proposer out when the height began (at a, the previous height's commit)?
    const r0Name = r0 === undefined ? undefined : name(r0);
    const r0Out = d.outages.find(
      (o) =>
        r0Name !== undefined && o.nodes.includes(r0Name) && o.start <= b && (o.back ?? Number.POSITIVE_INFINITY) >= a,
    );
    let r0State = "in";
    if (r0Name === undefined) r0State = "unknown";
    else if (r0Out !== undefined) {
      const back = r0Out.back;
      r0State =
        back === undefined || back >= b
          ? `out all through (${r0Out.kind}#${r0Out.occurrence + 1} from ${fmtT(r0Out.start)})`
          : `out until ${fmtT(back)}, ${((back - a) / 1000).toFixed(1)} s after the height began at ${fmtT(a)} (${r0Out.kind}#${r0Out.occurrence + 1})`;
    }
    if (quorum && r0Name !== undefined && r0Out === undefined) proposerInLate.push(h);
    lines.push(
      `round-0 proposer ${r0Name ?? "?"}${d.chain.proposerRuleChecked ? "" : " (unverified)"} was ${r0State}; block proposed by ${name(decidedBy)} in round ${c.round}`,
    );
    const absent = validators.filter((v) => !c.signers.includes(v.spec.address)).map((v) => v.name);
    lines.push(
      `seen ${fmtT(b)} (${((b - a) / 1000).toFixed(1)} s after h=${h - 1}); commit lacks: ${absent.join(",") || "nobody"}`,
    );
    const out = outDuring(d, a, b);
    if (out.length > 0) lines.push(`out during it: ${out.join("; ")}`);
    const back = rejoined.map(
      (o) =>
        `${o.nodes.join(",")} (${o.kind}#${o.occurrence + 1}) back ${((b - (o.back ?? 0)) / 1000).toFixed(1)} s before`,
    );
    if (back.length > 0) lines.push(`recently back: ${back.join("; ")}`);
    const events = timeline.filter((e) => e.t >= a - 5000 && e.t <= b).map((e) => `${fmtT(e.t)} ${e.node}: ${e.what}`);
    if (events.length > 0) lines.push(`events: ${events.slice(-6).join(" | ")}`);
    late.push({ height: h, round: c.round, lines });
  }
  // From height 3: block 1's header time is the genesis time, written before the nodes started.
  const intervals: number[] = [];
  for (let h = 3; h <= d.chain.height; h++) {
    const x = d.chain.blocks.get(h - 1)?.timeMs;
    const y = d.chain.blocks.get(h)?.timeMs;
    if (x !== undefined && y !== undefined) intervals.push(y - x);
  }
  const rec = recs.filter((r) => r.recoveryMs !== undefined);
  return {
    heights,
    round0,
    round0Share: heights === 0 ? Number.NaN : round0 / heights,
    withQuorum,
    afterRejoin,
    proposerInLate,
    late,
    intervals: {
      medianMs: quantile(intervals, 0.5),
      p90Ms: quantile(intervals, 0.9),
      maxMs: intervals.length === 0 ? Number.NaN : Math.max(...intervals),
      count: intervals.length,
    },
    killRecoveryMs: rec.filter((r) => r.outage.kind === "kill").map((r) => r.recoveryMs as number),
    recoveryMs: rec.map((r) => r.recoveryMs as number),
  };
}

export function formatStats(s: RunStats): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const share = (x: { heights: number; round0: number }) =>
    `${x.round0}/${x.heights}${x.heights === 0 ? "" : ` (${pct(x.round0 / x.heights)})`}`;
  const out = [
    `rounds: ${share({ heights: s.heights, round0: s.round0 })} of heights 2..H decided in round 0`,
    `  with a quorum in all along: ${share(s.withQuorum)} in round 0; of those, within ${REJOIN_WINDOW_MS / 1000} s after a validator came back: ${share(s.afterRejoin)}`,
  ];
  out.push(
    `  not in round 0 although there was a quorum and the round-0 proposer was in: ${s.proposerInLate.length === 0 ? "none" : `h=${s.proposerInLate.join(", ")}`}`,
  );
  if (s.late.length === 0) out.push("  every height was decided in round 0");
  for (const l of s.late) {
    out.push(`  h=${l.height} decided in round ${l.round}:`);
    for (const line of l.lines) out.push(`      ${line}`);
  }
  const ms = (x: number) => (Number.isNaN(x) ? "n/a" : `${(x / 1000).toFixed(2)} s`);
  out.push(
    `block interval (header times, ${s.intervals.count} intervals): median ${ms(s.intervals.medianMs)}, p90 ${ms(s.intervals.p90Ms)}, max ${ms(s.intervals.maxMs)}`,
  );
  if (s.recoveryMs.length > 0) {
    out.push(
      `recovery (to the first block voted): median ${ms(quantile(s.recoveryMs, 0.5))}, max ${ms(Math.max(...s.recoveryMs))} over ${s.recoveryMs.length} outages` +
        (s.killRecoveryMs.length === 0
          ? ""
          : `; after SIGKILL, from process start: median ${ms(quantile(s.killRecoveryMs, 0.5))}, max ${ms(Math.max(...s.killRecoveryMs))} (${s.killRecoveryMs.length})`),
    );
  }
  return out;
}
