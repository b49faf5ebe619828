/** Go time.Duration text ("1m0s", "500ms", "1.5s", "168h0m0s"): CometBFT writes and reads durations this way. */

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** The units Go's time.ParseDuration accepts, for error messages. */
export const DURATION_UNITS = ["ns", "us", "ms", "s", "m", "h"] as const;

const MAX_INT64 = (1n << 63n) - 1n;

/**
 * time.ParseDuration: a signed sequence of decimal numbers, each with an optional fraction and a unit
 * ("300ms", "-1.5h", "2h45m"); "0" alone is allowed. Returns nanoseconds, or undefined when malformed.
 */
export function parseGoDuration(text: string): bigint | undefined {
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s.startsWith("-");
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return undefined;
  let total = 0n;
  const re = /^(\d*)(?:\.(\d*))?([a-z\u00b5\u03bc]+)/;
  while (s !== "") {
    const m = re.exec(s);
    if (!m) return undefined;
    const [whole, intPart = "", fracPart, unit = ""] = m;
    if (intPart === "" && (fracPart === undefined || fracPart === "")) return undefined;
    const scale = UNIT_NS[unit];
    if (scale === undefined) return undefined;
    let ns = BigInt(intPart === "" ? "0" : intPart) * scale;
    if (fracPart !== undefined && fracPart !== "") {
      // Truncate like Go: fraction * scale / 10^digits.
      ns += (BigInt(fracPart) * scale) / 10n ** BigInt(fracPart.length);
    }
    total += ns;
    if (total > MAX_INT64) return undefined;
    s = s.slice(whole.length);
  }
  return negative ? -total : total;
}

/** time.Duration.String(): "0s", "500ms", "1.5µs", "1m0s", "168h0m0s". */
export function formatGoDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  let out: string;
  if (u < 1_000_000_000n) {
    // Sub-second: one unit with a fraction.
    let unit: string;
    let scale: bigint;
    if (u < 1_000n) {
      unit = "ns";
      scale = 1n;
    } else if (u < 1_000_000n) {
      unit = "µs";
      scale = 1_000n;
    } else {
      unit = "ms";
      scale = 1_000_000n;
    }
    out = `${fixed(u, scale)}${unit}`;
  } else {
    const h = u / 3_600_000_000_000n;
    u -= h * 3_600_000_000_000n;
    const m = u / 60_000_000_000n;
    u -= m * 60_000_000_000n;
    const sec = fixed(u, 1_000_000_000n);
    out = h > 0n ? `${h}h${m}m${sec}s` : m > 0n ? `${m}m${sec}s` : `${sec}s`;
  }
  return neg ? `-${out}` : out;
}

function fixed(v: bigint, scale: bigint): string {
  const whole = v / scale;
  const frac = v % scale;
  if (frac === 0n) return whole.toString();
  const digits = scale.toString().length - 1;
  return `${whole}.${frac.toString().padStart(digits, "0").replace(/0+$/, "")}`;
}

/** Milliseconds (possibly fractional) from nanoseconds. */
export function nsToMs(ns: bigint): number {
  return Number(ns) / 1_000_000;
}

/** Go duration text for a millisecond count. */
export function formatDurationMs(ms: number): string {
  return formatGoDuration(BigInt(Math.round(ms * 1_000_000)));
}
