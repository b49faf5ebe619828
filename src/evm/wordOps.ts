import { SAFE_LIMIT, toWord, type Word } from "./words.js";

/**
 * The arithmetic, comparison and bitwise opcodes on words (words.ts: a number below 2^53, a bigint
 * from 2^53). Each function takes the operands in stack order (`a` the top) and returns the canonical
 * result. Numbers take plain double arithmetic, exact below 2^53 (a sum, difference or product whose
 * exact value is below 2^53 is computed exactly, and one that is not comes out at 2^53 or more, which
 * sends it to the bigint path); anything else goes through BigInt modulo 2^256.
 *
 * The interpreter's loop inlines the number cases of the common ones and calls these for the rest.
 */

const WORD_MOD = 1n << 256n;
export const MASK = WORD_MOD - 1n;
export const SIGN_BIT = 1n << 255n;
const TWO_32 = 2 ** 32;
/** BigInt(i) for 0-255: shift amounts and small operands, so neither allocates. */
const SHIFTS: bigint[] = Array.from({ length: 256 }, (_, i) => BigInt(i));
const POW2: number[] = Array.from({ length: 54 }, (_, i) => 2 ** i);

/**
 * 2^k and 2^k − 1 as words, k = 0..256. Solidity builds its masks at run time (`sub(shl(160, 1), 1)`
 * before it cleans an address with AND, about six times a round of a token loop): SHL of 1 answers from
 * the first table, and a SUB of 1 from the power SHL last made answers from the second, without BigInt
 * arithmetic. (A general "is this 2^k − 1" test costs more than the arithmetic: Number() of a bigint
 * takes ~140 ns.)
 */
const ONE_SHL: Word[] = Array.from({ length: 257 }, (_, k) => toWord(1n << BigInt(k)));
const LOW_MASKS: Word[] = Array.from({ length: 257 }, (_, k) => toWord((1n << BigInt(k)) - 1n));
let lastPower: Word = 1;
let lastPowerBits = 0;

/** A word as a bigint; the small numbers (0-255: constants such as 1, 3, 7, 32) from a table, not allocated. */
function big(x: Word): bigint {
  return typeof x === "number" ? (x < 256 ? (SHIFTS[x] as bigint) : BigInt(x)) : x;
}

export function add(a: Word, b: Word): Word {
  if (typeof a === "number" && typeof b === "number") {
    const r = a + b;
    if (r < SAFE_LIMIT) return r;
  }
  const r = big(a) + big(b);
  return r > MASK ? toWord(r - WORD_MOD) : r;
}

export function sub(a: Word, b: Word): Word {
  if (typeof a === "number" && typeof b === "number") {
    const r = a - b;
    if (r >= 0) return r;
  }
  if (b === 1 && a === lastPower) return LOW_MASKS[lastPowerBits] as Word;
  const r = big(a) - big(b);
  return toWord(r < 0n ? r + WORD_MOD : r);
}

export function mul(a: Word, b: Word): Word {
  if (typeof a === "number" && typeof b === "number") {
    const r = a * b;
    if (r < SAFE_LIMIT) return r;
  }
  const r = big(a) * big(b);
  return toWord(r > MASK ? r & MASK : r);
}

export function div(a: Word, b: Word): Word {
  if (b === 0) return 0;
  if (typeof a === "number") return typeof b === "number" ? (a - (a % b)) / b : 0;
  return toWord(a / big(b));
}

export function mod(a: Word, b: Word): Word {
  if (b === 0) return 0;
  if (typeof a === "number") return typeof b === "number" ? a % b : a;
  return toWord(a % big(b));
}

function toSigned(x: Word): bigint {
  return typeof x === "number" ? big(x) : x >= SIGN_BIT ? x - WORD_MOD : x;
}

function fromSigned(x: bigint): Word {
  return toWord(x < 0n ? x + WORD_MOD : x);
}

export function sdiv(a: Word, b: Word): Word {
  if (b === 0) return 0;
  if (typeof a === "number" && typeof b === "number") return (a - (a % b)) / b;
  return fromSigned(toSigned(a) / toSigned(b));
}

export function smod(a: Word, b: Word): Word {
  if (b === 0) return 0;
  if (typeof a === "number" && typeof b === "number") return a % b;
  return fromSigned(toSigned(a) % toSigned(b));
}

export function addmod(a: Word, b: Word, n: Word): Word {
  if (n === 0) return 0;
  return toWord((big(a) + big(b)) % big(n));
}

export function mulmod(a: Word, b: Word, n: Word): Word {
  if (n === 0) return 0;
  return toWord((big(a) * big(b)) % big(n));
}

/** The exponent's length in bytes (EXP's dynamic gas). */
export function byteLength(x: Word): number {
  if (typeof x === "bigint") return Math.ceil(x.toString(16).length / 2);
  let n = 0;
  for (let v = x; v > 0; v = Math.floor(v / 256)) n++;
  return n;
}

export function exp(a: Word, e: Word): Word {
  if (e === 0) return 1;
  if (typeof a === "number" && typeof e === "number") {
    if (a < 2) return a;
    // a ≥ 2: at most 53 exact products before the safe range ends.
    let r = 1;
    for (let i = 0; i < e && r < SAFE_LIMIT; i++) r *= a;
    if (r < SAFE_LIMIT) return r;
  }
  let base = big(a);
  let x = big(e);
  let r = 1n;
  while (x > 0n) {
    if ((x & 1n) === 1n) r = (r * base) & MASK;
    x >>= 1n;
    if (x > 0n) base = (base * base) & MASK;
  }
  return toWord(r);
}

export function signextend(b: Word, x: Word): Word {
  if (typeof b !== "number" || b >= 31) return x;
  // A number is below 2^53: from byte 6 up its sign bit is 0 and it already fits.
  if (typeof x === "number" && b >= 6) return x;
  const bit = SHIFTS[b * 8 + 7] as bigint;
  const v = big(x);
  const low = (1n << (bit + 1n)) - 1n;
  return toWord(((v >> bit) & 1n) === 1n ? v | (MASK ^ low) : v & low);
}

export function slt(a: Word, b: Word): boolean {
  // Numbers are non-negative; a bigint from 2^255 is negative.
  const an = typeof a === "bigint" && a >= SIGN_BIT;
  const bn = typeof b === "bigint" && b >= SIGN_BIT;
  return an === bn ? a < b : an;
}

/** The low 53 bits of a word, as a number. */
function low53(x: Word): number {
  return typeof x === "number" ? x : Number(BigInt.asUintN(53, x));
}

function andNumbers(a: number, b: number): number {
  if (a < TWO_32 && b < TWO_32) return (a & b) >>> 0;
  return (Math.floor(a / TWO_32) & Math.floor(b / TWO_32)) * TWO_32 + ((a & b) >>> 0);
}

export function and(a: Word, b: Word): Word {
  if (typeof a === "number") return andNumbers(a, low53(b));
  if (typeof b === "number") return andNumbers(low53(a), b);
  return toWord(a & b);
}

export function or(a: Word, b: Word): Word {
  if (typeof a === "number" && typeof b === "number") {
    if (a < TWO_32 && b < TWO_32) return (a | b) >>> 0;
    return (Math.floor(a / TWO_32) | Math.floor(b / TWO_32)) * TWO_32 + ((a | b) >>> 0);
  }
  // One side is at least 2^53: so is the result.
  return big(a) | big(b);
}

export function xor(a: Word, b: Word): Word {
  if (typeof a === "number" && typeof b === "number") {
    if (a < TWO_32 && b < TWO_32) return (a ^ b) >>> 0;
    return (Math.floor(a / TWO_32) ^ Math.floor(b / TWO_32)) * TWO_32 + ((a ^ b) >>> 0);
  }
  return toWord(big(a) ^ big(b));
}

let notIn: Word = 0;
let notOut: Word = MASK;

/** NOT, remembering its last answer (contracts invert the same mask again and again). */
export function not(a: Word): Word {
  if (a === notIn) return notOut;
  const r = typeof a === "number" ? MASK ^ BigInt(a) : toWord(MASK ^ a);
  notIn = a;
  notOut = r;
  return r;
}

export function byte(i: Word, x: Word): Word {
  if (typeof i !== "number" || i >= 32) return 0;
  if (typeof x === "number") {
    // A number has at most 7 significant bytes: 25-31.
    if (i < 25) return 0;
    return Math.floor(x / (POW2[8 * (31 - i)] as number)) % 256;
  }
  return Number((x >> (SHIFTS[8 * (31 - i)] as bigint)) & 0xffn);
}

export function shl(shift: Word, x: Word): Word {
  if (typeof shift !== "number" || shift >= 256) return 0;
  if (typeof x === "number") {
    if (x === 0) return 0;
    if (x === 1) {
      lastPower = ONE_SHL[shift] as Word;
      lastPowerBits = shift;
      return lastPower;
    }
    if (shift < 53) {
      const r = x * (POW2[shift] as number);
      if (r < SAFE_LIMIT) return r;
    }
  }
  return toWord((big(x) << (SHIFTS[shift] as bigint)) & MASK);
}

export function shr(shift: Word, x: Word): Word {
  if (typeof shift !== "number" || shift >= 256) return 0;
  if (typeof x === "number") return shift >= 53 ? 0 : Math.floor(x / (POW2[shift] as number));
  return toWord(x >> (SHIFTS[shift] as bigint));
}

export function sar(shift: Word, x: Word): Word {
  if (typeof x === "number" || x < SIGN_BIT) return shr(shift, x);
  // Negative: the sign fills from the left.
  if (typeof shift !== "number" || shift >= 256) return MASK;
  return toWord(((x - WORD_MOD) >> (SHIFTS[shift] as bigint)) & MASK);
}
