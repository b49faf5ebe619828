/**
 * Go's time.Parse for exactly the two layouts the query language uses, with Go's error texts:
 * CometBFT puts them into query parse errors (`invalid TIME value: parsing time "…" as "…": …`),
 * so they are part of the wire behaviour. Follows the general parser of Go's time/format.go (its
 * RFC3339 fast path accepts a subset of what the general parser accepts, with the same result).
 */

/** time.RFC3339, the layout of TIME values. */
export const RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00";
/** The layout of DATE values. */
export const DATE_LAYOUT = "2006-01-02";

type Std = "2006" | "01" | "02" | "15" | "04" | "05" | "Z07:00";
interface Chunk {
  prefix: string;
  std: Std | undefined;
}

const LAYOUT_CHUNKS: Record<string, readonly Chunk[]> = {
  [RFC3339_LAYOUT]: [
    { prefix: "", std: "2006" },
    { prefix: "-", std: "01" },
    { prefix: "-", std: "02" },
    { prefix: "T", std: "15" },
    { prefix: ":", std: "04" },
    { prefix: ":", std: "05" },
    { prefix: "", std: "Z07:00" },
    { prefix: "", std: undefined },
  ],
  [DATE_LAYOUT]: [
    { prefix: "", std: "2006" },
    { prefix: "-", std: "01" },
    { prefix: "-", std: "02" },
    { prefix: "", std: undefined },
  ],
};

/** A parsed instant: the wall-clock year as written (what Go's Year() reports) and UTC nanoseconds. */
export interface GoTime {
  year: number;
  unixNs: bigint;
}

export type GoTimeResult = { ok: true; time: GoTime } | { ok: false; error: string };

const BAD = Symbol("bad value for field");

/** Go's time.quote: double quotes, backslash-escaped `"` and `\`, \xNN for control and non-ASCII bytes. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0x80 || cp < 0x20) {
      for (const b of Buffer.from(ch, "utf8")) out += `\\x${b.toString(16).padStart(2, "0")}`;
    } else {
      if (ch === '"' || ch === "\\") out += "\\";
      out += ch;
    }
  }
  return `${out}"`;
}

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** getnum: one or two digits (`fixed` forces two). */
function getnum(s: string, fixed: boolean): [number, string] | typeof BAD {
  if (!isDigitAt(s, 0)) return BAD;
  if (!isDigitAt(s, 1)) {
    if (fixed) return BAD;
    return [s.charCodeAt(0) - 48, s.slice(1)];
  }
  return [(s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), s.slice(2)];
}

/** atoi: optional sign, then only digits. */
function atoi(s: string): number | typeof BAD {
  let t = s;
  let neg = false;
  if (t.length > 0 && (t[0] === "-" || t[0] === "+")) {
    neg = t[0] === "-";
    t = t.slice(1);
  }
  if (!/^[0-9]*$/.test(t)) return BAD;
  const x = t === "" ? 0 : Number(t);
  return neg ? -x : x;
}

function skip(value: string, prefix: string): string | typeof BAD {
  let v = value;
  for (const p of prefix) {
    if (v.length === 0 || v[0] !== p) return BAD;
    v = v.slice(1);
  }
  return v;
}

function isLeap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(month: number, year: number): number {
  if (month === 2 && isLeap(year)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Go's time.Parse(layout, value) for RFC3339_LAYOUT or DATE_LAYOUT. */
export function goParseTime(layout: typeof RFC3339_LAYOUT | typeof DATE_LAYOUT, value: string): GoTimeResult {
  const chunks = LAYOUT_CHUNKS[layout] ?? [];
  const cannotParse = (valueElem: string, layoutElem: string): GoTimeResult => ({
    ok: false,
    error: `parsing time ${goQuote(value)} as ${goQuote(layout)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`,
  });
  const withMessage = (message: string): GoTimeResult => ({
    ok: false,
    error: `parsing time ${goQuote(value)}${message}`,
  });

  let rest = value;
  let year = 0;
  let month = -1;
  let day = -1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let zoneOffsetSec = 0;

  for (const { prefix, std } of chunks) {
    const skipped = skip(rest, prefix);
    if (skipped === BAD) return cannotParse(rest, prefix);
    rest = skipped;
    if (std === undefined) {
      if (rest.length !== 0) return withMessage(`: extra text: ${goQuote(rest)}`);
      break;
    }
    const hold = rest;
    let bad = false;
    let rangeErr = "";
    switch (std) {
      case "2006": {
        if (rest.length < 4 || !isDigitAt(rest, 0)) {
          bad = true;
          break;
        }
        const y = atoi(rest.slice(0, 4));
        rest = rest.slice(4);
        if (y === BAD) bad = true;
        else year = y;
        break;
      }
      case "01": {
        const r = getnum(rest, true);
        if (r === BAD) {
          bad = true;
          break;
        }
        [month, rest] = r;
        if (month <= 0 || month > 12) rangeErr = "month";
        break;
      }
      case "02": {
        const r = getnum(rest, true);
        if (r === BAD) bad = true;
        else [day, rest] = r;
        break;
      }
      case "15": {
        const r = getnum(rest, false);
        if (r === BAD) bad = true;
        else [hour, rest] = r;
        if (hour >= 24) rangeErr = "hour";
        break;
      }
      case "04": {
        const r = getnum(rest, true);
        if (r === BAD) bad = true;
        else [min, rest] = r;
        if (min >= 60) rangeErr = "minute";
        break;
      }
      case "05": {
        const r = getnum(rest, true);
        if (r === BAD) {
          bad = true;
          break;
        }
        [sec, rest] = r;
        if (sec >= 60) {
          rangeErr = "second";
          break;
        }
        // A fractional second is accepted after the seconds even though the layout has none.
        if (rest.length >= 2 && (rest[0] === "." || rest[0] === ",") && isDigitAt(rest, 1)) {
          let n = 2;
          while (n < rest.length && isDigitAt(rest, n)) n++;
          const digits = rest.slice(1, Math.min(n, 10));
          nsec = Number(digits.padEnd(9, "0"));
          rest = rest.slice(n);
        }
        break;
      }
      case "Z07:00": {
        if (rest.length >= 1 && rest[0] === "Z") {
          rest = rest.slice(1);
          zoneOffsetSec = 0;
          break;
        }
        if (rest.length < 6 || rest[3] !== ":") {
          bad = true;
          break;
        }
        const sign = rest[0];
        const hh = getnum(rest.slice(1, 3), true);
        const mm = hh === BAD ? BAD : getnum(rest.slice(4, 6), true);
        rest = rest.slice(6);
        const hr = hh === BAD ? 0 : hh[0];
        const mi = mm === BAD ? 0 : mm[0];
        if (hh === BAD || mm === BAD) bad = true;
        // Go's range test uses > rather than >=: offsets of 24 hours or 60 minutes pass.
        if (hr > 24) rangeErr = "time zone offset hour";
        if (mi > 60) rangeErr = "time zone offset minute";
        zoneOffsetSec = (hr * 60 + mi) * 60;
        if (sign === "-") zoneOffsetSec = -zoneOffsetSec;
        else if (sign !== "+") bad = true;
        break;
      }
    }
    if (rangeErr !== "") return withMessage(`: ${rangeErr} out of range`);
    if (bad) return cannotParse(hold, std);
  }

  if (month < 0) month = 1;
  if (day < 0) day = 1;
  if (day < 1 || day > daysIn(month, year)) return withMessage(": day out of range");

  const days = daysFromCivil(year, month, day);
  const secs = BigInt(days) * 86400n + BigInt(hour * 3600 + min * 60 + sec - zoneOffsetSec);
  return { ok: true, time: { year, unixNs: secs * 1_000_000_000n + BigInt(nsec) } };
}
