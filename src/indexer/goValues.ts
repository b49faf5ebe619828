import { type BinaryFloat, compareBinaryFloat } from "../events/index.js";
import { TxHashQueryError } from "./errors.js";

/**
 * How CometBFT's kv indexers read numbers, text and hashes (Go's math/big, bytes and encoding/hex).
 * They differ from the pubsub matcher in events/: a range query parses the *whole* attribute value
 * with big.Int SetString, falling back to big.ParseFloat at 125 bits (so "-3" and "1e3" are numbers
 * and "8stake" is not), while the query argument goes through Arg.Number.
 */

/** A Go big.Int or big.Float value: ±mag, or ±Inf. */
export interface GoNumber {
  readonly neg: boolean;
  readonly inf: boolean;
  readonly mag: BinaryFloat;
}

const FLOAT_PRECISION_BITS = 125;
/** Beyond this decimal exponent we stop (Go would build 10^exp); such values are treated as non-numbers. */
const MAX_DECIMAL_EXPONENT = 100_000;

const INTEGER = /^([+-]?)([0-9]+)$/;
const INFINITY = /^([+-]?)(?:Inf|inf)$/;
const FLOAT = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:([eEpP])([+-]?[0-9]+))?$/;

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

/** n/d (both > 0) rounded to `bits` bits, half to even. */
function roundQuotient(n: bigint, d: bigint, bits: number): BinaryFloat {
  let s = bits - (bitLength(n) - bitLength(d));
  for (;;) {
    const num = s >= 0 ? n << BigInt(s) : n;
    const den = s >= 0 ? d : d << BigInt(-s);
    const q = num / den;
    const len = bitLength(q);
    if (len > bits) {
      s--;
      continue;
    }
    if (len < bits) {
      s++;
      continue;
    }
    const r2 = (num % den) * 2n;
    const up = r2 > den || (r2 === den && (q & 1n) === 1n);
    return { mant: up ? q + 1n : q, exp: -s };
  }
}

/**
 * `new(big.Int).SetString(s, 10)`, else `big.ParseFloat(s, 10, 125, big.ToNearestEven)`; undefined
 * when neither accepts s. This is also Arg.Number() of a query argument.
 */
export function parseGoNumber(s: string): GoNumber | undefined {
  const int = INTEGER.exec(s);
  if (int !== null) return { neg: int[1] === "-", inf: false, mag: { mant: BigInt(int[2] ?? "0"), exp: 0 } };
  const inf = INFINITY.exec(s);
  if (inf !== null) return { neg: inf[1] === "-", inf: true, mag: { mant: 0n, exp: 0 } };
  const m = FLOAT.exec(s);
  if (m === null) return undefined;
  const intDigits = m[2] ?? "";
  const fracDigits = m[3] ?? "";
  if (intDigits === "" && fracDigits === "") return undefined;
  const neg = m[1] === "-";
  const digits = BigInt(intDigits + fracDigits);
  if (digits === 0n) return { neg, inf: false, mag: { mant: 0n, exp: 0 } };
  const expText = m[5];
  const exp = expText === undefined ? 0 : Number(expText);
  const binaryExp = m[4] === "p" || m[4] === "P";
  const exp10 = (binaryExp ? 0 : exp) - fracDigits.length;
  const exp2 = binaryExp ? exp : 0;
  if (Math.abs(exp10) > MAX_DECIMAL_EXPONENT || Math.abs(exp2) > MAX_DECIMAL_EXPONENT * 4) return undefined;
  const n = exp10 >= 0 ? digits * 10n ** BigInt(exp10) : digits;
  const d = exp10 >= 0 ? 1n : 10n ** BigInt(-exp10);
  const rounded = roundQuotient(n, d, FLOAT_PRECISION_BITS);
  return { neg, inf: false, mag: { mant: rounded.mant, exp: rounded.exp + exp2 } };
}

/** The GoNumber of a (non-negative) height. */
export function goNumberFromInteger(n: number | bigint): GoNumber {
  const v = BigInt(n);
  return { neg: v < 0n, inf: false, mag: { mant: v < 0n ? -v : v, exp: 0 } };
}

function signOf(x: GoNumber): number {
  if (!x.inf && x.mag.mant === 0n) return 0;
  return x.neg ? -1 : 1;
}

/** big.Float Cmp: -1, 0 or 1 (zeros are equal whatever their sign). */
export function compareGoNumber(a: GoNumber, b: GoNumber): number {
  const sa = signOf(a);
  const sb = signOf(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  let c: number;
  if (a.inf || b.inf) c = a.inf === b.inf ? 0 : a.inf ? 1 : -1;
  else c = compareBinaryFloat(a.mag, b.mag);
  if (c === 0) return 0;
  return sa < 0 ? -c : c;
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** big.Float Int64(): truncated toward zero, clamped to the int64 range. */
export function goNumberToInt64(x: GoNumber): bigint {
  if (x.inf) return x.neg ? INT64_MIN : INT64_MAX;
  const { mant, exp } = x.mag;
  let v: bigint;
  if (exp >= 0) v = exp > 64 && mant !== 0n ? INT64_MAX + 1n : mant << BigInt(exp);
  else v = mant >> BigInt(-exp);
  if (x.neg) v = -v;
  return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : v;
}

// unicode.IsSpace, which bytes.TrimSpace uses.
const GO_SPACE = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const GO_TRIM = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, "g");

/** bytes.TrimSpace. */
export function goTrimSpace(s: string): string {
  return s.replace(GO_TRIM, "");
}

function hexNibble(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
}

/** fmt's %#U of a byte turned rune: `U+0058 'X'`, without the quoted char when Go deems it unprintable. */
function formatInvalidByte(b: number): string {
  const code = `U+${b.toString(16).toUpperCase().padStart(4, "0")}`;
  const printable = (b >= 0x20 && b <= 0x7e) || (b >= 0xa1 && b !== 0xad);
  return printable ? `${code} '${String.fromCharCode(b)}'` : code;
}

/** hex.DecodeString over the UTF-8 bytes of `text`; throws TxHashQueryError with Go's texts. */
export function decodeGoHex(text: string): Uint8Array {
  const src = Buffer.from(text, "utf8");
  const out = new Uint8Array(src.length >> 1);
  let j = 1;
  for (; j < src.length; j += 2) {
    const p = src[j - 1] as number;
    const q = src[j] as number;
    const a = hexNibble(p);
    if (a < 0) throw new TxHashQueryError(`invalid byte: ${formatInvalidByte(p)}`);
    const b = hexNibble(q);
    if (b < 0) throw new TxHashQueryError(`invalid byte: ${formatInvalidByte(q)}`);
    out[(j - 1) >> 1] = (a << 4) | b;
  }
  if (src.length % 2 === 1) {
    const last = src[j - 1] as number;
    if (hexNibble(last) < 0) throw new TxHashQueryError(`invalid byte: ${formatInvalidByte(last)}`);
    throw new TxHashQueryError("odd length hex string");
  }
  return out;
}
