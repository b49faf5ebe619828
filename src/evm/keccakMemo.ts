import { keccakWord } from "./crypto.js";
import type { Word } from "./words.js";

/**
 * KECCAK256 of one or two words, remembered: the storage keys of Solidity mappings.
 *
 * `mapping[key]` hashes the 64 bytes (key, slot) at every access, and a loop over a token's balances
 * and allowances hashes the same few inputs thousands of times (the approve + transferFrom loop of
 * bench:evm: nine KECCAK256 per round, over three distinct inputs). A hash of 32 or 64 bytes costs about
 * 1.2 µs in WebAssembly; comparing the input with a remembered one costs tens of nanoseconds.
 *
 * Only inputs whose first word starts with 12 zero bytes are looked up (the key of `mapping(address
 * => …)` or of an integer mapping, and the slot of a dynamic array): a chain of hashes, whose inputs are
 * new every time, pays nothing for the table.
 *
 * The table is direct-mapped (one entry per index; a new input replaces the old one), its size fixed,
 * and keyed by the input bytes themselves, compared in full: a hit is the hash of exactly these bytes,
 * so the table can be shared by every transaction and call of the process. Keccak is a pure function,
 * which is what makes remembering it safe.
 */

const ENTRIES = 4096;
const INTS = 16;
const KEYS = new Int32Array(ENTRIES * INTS);
/** The input length of each entry (32 or 64), 0 when empty. */
const LENS = new Int32Array(ENTRIES);
const VALUES: Word[] = new Array<Word>(ENTRIES).fill(0);

/** The Keccak-256 of `len` bytes of `buf` from `off` (`dv` views `buf`'s buffer), as a word. */
export function keccakMemoWord(buf: Uint8Array, dv: DataView, off: number, len: number): Word {
  // A mapping key that is an address or an integer starts with 12 zero bytes; an input that does not
  // (a hash chain, a bytes32 key) is hashed directly, without the table's cost.
  if ((len !== 64 && len !== 32) || (dv.getInt32(off) | dv.getInt32(off + 4) | dv.getInt32(off + 8)) !== 0) {
    return keccakWord(buf, off, len);
  }
  const n = len >> 2;
  let h = len;
  for (let i = 0; i < n; i++) {
    h = Math.imul(h ^ dv.getInt32(off + 4 * i), 0x01000193);
    h ^= h >>> 15;
  }
  const e = (h ^ (h >>> 13)) & (ENTRIES - 1);
  const base = e * INTS;
  if (LENS[e] === len) {
    let i = 0;
    while (i < n && KEYS[base + i] === dv.getInt32(off + 4 * i)) i++;
    if (i === n) return VALUES[e] as Word;
  }
  const v = keccakWord(buf, off, len);
  for (let i = 0; i < n; i++) KEYS[base + i] = dv.getInt32(off + 4 * i);
  LENS[e] = len;
  VALUES[e] = v;
  return v;
}
