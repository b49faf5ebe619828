/**
 * 256-bit words as the engine holds them, and their conversions to and from bytes.
 *
 * A word is a `Word`: a plain number when it is below 2^53 (pointers, lengths, counters, booleans,
 * selectors, jump targets: most words a contract moves), a bigint from 2^53 up. The form is canonical:
 * every value below 2^53 is a number and never a bigint, so `===` compares words and a word can key a
 * Map. Arithmetic on two numbers allocates nothing; only results that leave the safe range become
 * bigints (`toWord` brings a bigint result back to the canonical form).
 *
 * 32 big-endian bytes are read and written as four 64-bit halves through a DataView. One scratch
 * buffer serves the conversions that have no memory of their own; it is never handed out.
 */

/** A 256-bit word: a number below 2^53, a bigint from 2^53 (never a bigint below it). */
export type Word = number | bigint;

/** 2^53: the first value that is a bigint. */
export const SAFE_LIMIT = 9007199254740992;
const SAFE_LIMIT_BIG = 9007199254740992n;
const SCRATCH = new Uint8Array(32);
const SCRATCH_VIEW = new DataView(SCRATCH.buffer);
const TWO_32 = 2 ** 32;
const TWO_128 = 1n << 128n;

/** The canonical word of a bigint in [0, 2^256). */
export function toWord(x: bigint): Word {
  return x < SAFE_LIMIT_BIG ? Number(x) : x;
}

/** A word as a bigint (for arithmetic that needs all 256 bits). */
export function toBig(x: Word): bigint {
  return typeof x === "number" ? BigInt(x) : x;
}

/** The word at `off` of `view` (32 bytes, big-endian). */
export function readWord(view: DataView, off: number): Word {
  if (
    view.getUint32(off) === 0 &&
    view.getUint32(off + 4) === 0 &&
    view.getUint32(off + 8) === 0 &&
    view.getUint32(off + 12) === 0 &&
    view.getUint32(off + 16) === 0 &&
    view.getUint32(off + 20) === 0 &&
    view.getUint16(off + 24) < 0x20
  ) {
    // Bytes 0-24 and the top 3 bits of byte 25 are zero: the value is below 2^53, exact as a double.
    return view.getUint16(off + 24) * 2 ** 48 + view.getUint16(off + 26) * TWO_32 + view.getUint32(off + 28);
  }
  return readBig(view, off);
}

/*
 * Words of 2^53 and up are BigInts, and building one from 32 bytes (or its bytes from one) takes about ten
 * BigInt allocations. Contracts move the same big words again and again: addresses (CALLER, calldata,
 * mapping keys), storage keys out of KECCAK256, masks. So the conversions are remembered in a direct-mapped
 * table of 32-byte values (one entry per index; a new value replaces the old one), indexed by the low 32
 * bits of the value: a read whose bytes are in the table returns the same bigint without allocating, and a
 * write of a bigint that the table holds copies its eight 32-bit halves. The low bits are what a bigint
 * gives with one allocation (`BigInt.asUintN`); a Map keyed by BigInts was slower than the allocations it
 * saved (V8 hashes a BigInt by its low 64 bits only: ~0.3 µs a lookup in a large map, and a chain per
 * value when they share those bits). Every hit compares the whole value: the table is exact, and shared
 * by every frame and transaction of the thread.
 */
const ENTRIES = 4096;
const HALVES = new Int32Array(ENTRIES * 8);
const VALUES: Word[] = new Array<Word>(ENTRIES).fill(0);

function entryOf(low32: number): number {
  const h = Math.imul(low32, 0x9e3779b1);
  return (h ^ (h >>> 16)) & (ENTRIES - 1);
}

function readBig(view: DataView, off: number): bigint {
  const e = entryOf(view.getInt32(off + 28));
  const base = e * 8;
  let i = 0;
  while (i < 8 && HALVES[base + i] === view.getInt32(off + 4 * i)) i++;
  const known = VALUES[e] as Word;
  if (i === 8 && typeof known === "bigint") return known;
  // Each BigInt operation allocates: a value below 2^128 (fixed-point numbers, products of two of them)
  // is built from its two low halves only.
  const v =
    view.getUint32(off) === 0 &&
    view.getUint32(off + 4) === 0 &&
    view.getUint32(off + 8) === 0 &&
    view.getUint32(off + 12) === 0
      ? (view.getBigUint64(off + 16) << 64n) | view.getBigUint64(off + 24)
      : (view.getBigUint64(off) << 192n) |
        (view.getBigUint64(off + 8) << 128n) |
        (view.getBigUint64(off + 16) << 64n) |
        view.getBigUint64(off + 24);
  for (let j = 0; j < 8; j++) HALVES[base + j] = view.getInt32(off + 4 * j);
  VALUES[e] = v;
  return v;
}

/** Writes `v` (0 ≤ v < 2^256) as 32 big-endian bytes at `off` of `view`. */
export function writeWord(view: DataView, off: number, v: Word): void {
  if (typeof v === "number") {
    view.setUint32(off, 0);
    view.setUint32(off + 4, 0);
    view.setUint32(off + 8, 0);
    view.setUint32(off + 12, 0);
    view.setUint32(off + 16, 0);
    view.setUint32(off + 20, 0);
    view.setUint32(off + 24, Math.floor(v / TWO_32));
    view.setUint32(off + 28, v >>> 0);
    return;
  }
  const e = entryOf(Number(BigInt.asUintN(32, v)) | 0);
  if (VALUES[e] === v) {
    const base = e * 8;
    for (let i = 0; i < 8; i++) view.setInt32(off + 4 * i, HALVES[base + i] as number);
    return;
  }
  view.setBigUint64(off + 24, BigInt.asUintN(64, v));
  if (v < TWO_128) {
    view.setBigUint64(off + 16, v >> 64n);
    view.setUint32(off + 12, 0);
    view.setUint32(off + 8, 0);
    view.setUint32(off + 4, 0);
    view.setUint32(off, 0);
    return;
  }
  view.setBigUint64(off + 16, BigInt.asUintN(64, v >> 64n));
  view.setBigUint64(off + 8, BigInt.asUintN(64, v >> 128n));
  view.setBigUint64(off, v >> 192n);
}

/** Big-endian bytes of any length up to 32 as a word (empty = 0). */
export function bytesToWord(b: Uint8Array): Word {
  const n = b.length;
  if (n <= 6) {
    let x = 0;
    for (let i = 0; i < n; i++) x = x * 256 + (b[i] as number);
    return x;
  }
  if (n > 32) return toWord(BigInt(`0x${Buffer.from(b.buffer, b.byteOffset, n).toString("hex")}`));
  const pad = 32 - n;
  for (let i = 0; i < pad; i++) SCRATCH[i] = 0;
  for (let i = 0; i < n; i++) SCRATCH[pad + i] = b[i] as number;
  return readWord(SCRATCH_VIEW, 0);
}

/** Big-endian bytes of any length as a bigint (empty = 0). */
export function bytesToBigint(b: Uint8Array): bigint {
  return toBig(bytesToWord(b));
}

/** The word that `src` holds at `offset`, zero-padded past its end (CALLDATALOAD). */
export function loadWord(src: Uint8Array, offset: number): Word {
  const len = src.length;
  if (offset >= len) return 0;
  const end = Math.min(32, len - offset);
  for (let i = 0; i < end; i++) SCRATCH[i] = src[offset + i] as number;
  for (let i = end; i < 32; i++) SCRATCH[i] = 0;
  return readWord(SCRATCH_VIEW, 0);
}

/** The 32-byte big-endian encoding of a word (a new array). */
export function wordToBytes(v: Word): Uint8Array {
  const out = new Uint8Array(32);
  if (v !== 0) {
    writeWord(SCRATCH_VIEW, 0, v);
    out.set(SCRATCH);
  }
  return out;
}

/** A word's big-endian bytes without leading zeros (empty for 0; a new array). */
export function wordToMinimalBytes(v: Word): Uint8Array {
  if (v === 0 || v === 0n) return new Uint8Array(0);
  writeWord(SCRATCH_VIEW, 0, v);
  let i = 0;
  while (SCRATCH[i] === 0) i++;
  return SCRATCH.slice(i);
}
