import type { Frame } from "../frames.js";
import { bytesToWord, type Word } from "../words.js";

import type { Handler } from "./common.js";

/** Handlers of 0x5f–0x9f: PUSH, DUP and SWAP, and the PUSH values of a code. */

// ---- 0x5f-0x9f: PUSH, DUP, SWAP ---------------------------------------------------------------

export function opPush0(f: Frame): void {
  f.stack[f.sp++] = 0;
}
const pushValueCache = new WeakMap<Uint8Array, Word[]>();

/**
 * The value of every PUSH in `code`, by the pc right after its opcode (where the handler reads it), so
 * that a PUSH allocates nothing; bytes past the end of the code count as zero. Cached per code object.
 */
export function pushValuesOf(code: Uint8Array): Word[] {
  let values = pushValueCache.get(code);
  if (values !== undefined) return values;
  values = new Array<Word>(code.length + 1).fill(0);
  const len = code.length;
  for (let pc = 0; pc < len; pc++) {
    const op = code[pc] as number;
    if (op < 0x60 || op > 0x7f) continue;
    const n = op - 0x5f;
    if (n <= 6 && pc + n < len) {
      // Up to 48 bits: a number, no BigInt.
      let x = 0;
      for (let i = pc + 1; i <= pc + n; i++) x = x * 256 + (code[i] as number);
      values[pc + 1] = x;
    } else {
      // Bytes past the end of the code read as zero (a truncated PUSH at the end).
      const bytes = new Uint8Array(n);
      bytes.set(code.subarray(pc + 1, Math.min(len, pc + 1 + n)));
      values[pc + 1] = bytesToWord(bytes);
    }
    pc += n;
  }
  pushValueCache.set(code, values);
  return values;
}

export function pushN(f: Frame, n: number): void {
  const pc = f.pc;
  f.stack[f.sp++] = f.pushValues[pc] as Word;
  f.pc = pc + n;
}
export function dupN(f: Frame, n: number): void {
  const s = f.stack;
  s[f.sp] = s[f.sp - n] as Word;
  f.sp++;
}
export function swapN(f: Frame, n: number): void {
  const s = f.stack;
  const top = f.sp - 1;
  const t = s[top] as Word;
  s[top] = s[top - n] as Word;
  s[top - n] = t;
}
export function makePush(n: number): Handler {
  return (f: Frame): void => pushN(f, n);
}
export function makeDup(n: number): Handler {
  return (f: Frame): void => dupN(f, n);
}
export function makeSwap(n: number): Handler {
  return (f: Frame): void => swapN(f, n);
}
