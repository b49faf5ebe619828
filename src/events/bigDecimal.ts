/**
 * Numbers as CometBFT's query matcher sees them (libs/pubsub/query): a Go big.Float. Integers keep
 * every bit (precision = their bit length); anything else is rounded to 125 bits, half to even.
 * Comparing two such values is exact, so big integers never go through a lossy float64.
 */

/** value = mant · 2^exp, mant ≥ 0 (the query language has no negative numbers). */
export interface BinaryFloat {
  readonly mant: bigint;
  readonly exp: number;
}

const DECIMAL_PRECISION_BITS = 125;

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

/** An exact integer. */
export function binaryFloatFromInteger(n: bigint): BinaryFloat {
  return { mant: n, exp: 0 };
}

/** `int.frac` (frac may be empty, as in "5.") rounded to `precisionBits` bits, half to even. */
export function binaryFloatFromDecimal(
  intDigits: string,
  fracDigits: string,
  precisionBits = DECIMAL_PRECISION_BITS,
): BinaryFloat {
  const n = BigInt(intDigits + fracDigits || "0");
  if (n === 0n) return { mant: 0n, exp: 0 };
  const d = 10n ** BigInt(fracDigits.length);
  // Find the shift s with floor(n·2^s / d) exactly precisionBits long, then round the remainder.
  let s = precisionBits - (bitLength(n) - bitLength(d));
  for (;;) {
    const num = s >= 0 ? n << BigInt(s) : n;
    const den = s >= 0 ? d : d << BigInt(-s);
    const q = num / den;
    const len = bitLength(q);
    if (len > precisionBits) {
      s--;
      continue;
    }
    if (len < precisionBits) {
      s++;
      continue;
    }
    const r2 = (num % den) * 2n;
    const roundUp = r2 > den || (r2 === den && (q & 1n) === 1n);
    return { mant: roundUp ? q + 1n : q, exp: -s };
  }
}

/** Exact comparison: -1, 0 or 1. */
export function compareBinaryFloat(a: BinaryFloat, b: BinaryFloat): number {
  if (a.mant === 0n || b.mant === 0n) return a.mant === b.mant ? 0 : a.mant === 0n ? -1 : 1;
  const e = Math.min(a.exp, b.exp);
  const x = a.mant << BigInt(a.exp - e);
  const y = b.mant << BigInt(b.exp - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

const INTEGER = /^[+-]?[0-9]+$/;
const LEADING_NUMBER = /^([0-9]+)(?:\.([0-9]+))?/;

/**
 * An event attribute value as a number, like CometBFT's parseNumber: a plain integer is exact;
 * otherwise the leading `\d+(\.\d+)?` is used ("8stake" → 8, "6.5atom" → 6.5). A value without a
 * leading digit (including signed ones) is not a number.
 */
export function parseAttributeNumber(s: string): BinaryFloat | undefined {
  const m = LEADING_NUMBER.exec(s);
  if (m === null) return undefined;
  const intDigits = m[1] ?? "0";
  if (INTEGER.test(s)) return binaryFloatFromInteger(BigInt(intDigits));
  return binaryFloatFromDecimal(intDigits, m[2] ?? "");
}

/** A query number argument (`\d+(\.\d*)?` as scanned): integers exact, decimals 125 bits. */
export function parseArgumentNumber(text: string): BinaryFloat {
  const dot = text.indexOf(".");
  if (dot < 0) return binaryFloatFromInteger(BigInt(text));
  return binaryFloatFromDecimal(text.slice(0, dot), text.slice(dot + 1));
}
