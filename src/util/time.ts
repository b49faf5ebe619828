/**
 * Timestamps are bigint nanoseconds since the Unix epoch: CometBFT keeps nanosecond precision in
 * headers, votes and proposals, which a JS Date (milliseconds) would lose.
 */
export type Timestamp = bigint;

const NS_PER_SEC = 1_000_000_000n;
const NS_PER_MS = 1_000_000n;

/** Go's zero time.Time (0001-01-01T00:00:00Z) in Unix nanoseconds. */
export const GO_ZERO_TIME: Timestamp = -62135596800n * NS_PER_SEC;

export function timestampFromMs(ms: number): Timestamp {
  return BigInt(Math.trunc(ms)) * NS_PER_MS;
}

export function timestampToMs(t: Timestamp): number {
  return Number(t / NS_PER_MS);
}

/** Splits into protobuf Timestamp seconds/nanos (nanos always in [0, 1e9)). */
export function timestampToSecondsNanos(t: Timestamp): { seconds: bigint; nanos: number } {
  let seconds = t / NS_PER_SEC;
  let nanos = t % NS_PER_SEC;
  if (nanos < 0n) {
    nanos += NS_PER_SEC;
    seconds -= 1n;
  }
  return { seconds, nanos: Number(nanos) };
}

export function timestampFromSecondsNanos(seconds: bigint, nanos: number): Timestamp {
  return seconds * NS_PER_SEC + BigInt(nanos);
}

/** RFC3339 with nanoseconds in UTC, trailing fractional zeros dropped (Go's RFC3339Nano). */
export function formatRfc3339Nano(t: Timestamp): string {
  const { seconds, nanos } = timestampToSecondsNanos(t);
  const date = new Date(Number(seconds) * 1000);
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ (or ±YYYYYY for far years)
  const base = iso.slice(0, iso.indexOf("."));
  const frac = nanos === 0 ? "" : `.${nanos.toString().padStart(9, "0").replace(/0+$/, "")}`;
  return `${base}${frac}Z`;
}

/** Parses an RFC3339 timestamp with up to nanosecond precision; undefined when malformed. */
export function parseRfc3339(s: string): Timestamp | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d)); // setUTCFullYear keeps years < 100 literal
  date.setUTCHours(Number(h), Number(mi), Number(sec), 0);
  const ms = date.getTime();
  if (Number.isNaN(ms)) return undefined;
  if (date.getUTCDate() !== Number(d) || date.getUTCMonth() !== Number(mo) - 1) return undefined;
  let offsetSec = 0;
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    offsetSec = sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  }
  const nanos = frac ? BigInt(frac.padEnd(9, "0")) : 0n;
  return (BigInt(ms) / 1000n - BigInt(offsetSec)) * NS_PER_SEC + nanos;
}

export function formatDurationMs(ms: number): string {
  return `${ms}ms`;
}
