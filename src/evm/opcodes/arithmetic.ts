import type { Frame } from "../frames.js";
import { G_EXP_BYTE, G_KECCAK_WORD, words } from "../gas.js";
import { keccakMemoWord } from "../keccakMemo.js";
import { byteLength, exp, not } from "../wordOps.js";
import type { Word } from "../words.js";

import type { Handler } from "./common.js";

/** Handlers of 0x00–0x20: stop, arithmetic, comparison and bitwise opcodes, KECCAK256. */

// ---- 0x00s: stop and arithmetic ----------------------------------------------------------------

export function opStop(f: Frame): void {
  f.stopped = true;
}
export function ternary(op: (a: Word, b: Word, n: Word) => Word): Handler {
  return (f: Frame): void => {
    const s = f.stack;
    f.sp -= 2;
    const sp = f.sp;
    s[sp - 1] = op(s[sp + 1] as Word, s[sp] as Word, s[sp - 1] as Word);
  };
}
export function opExp(f: Frame): void {
  const s = f.stack;
  const sp = --f.sp;
  const e = s[sp - 1] as Word;
  if (e !== 0) f.useGas(G_EXP_BYTE * byteLength(e));
  s[sp - 1] = exp(s[sp] as Word, e);
}

// ---- 0x10s: comparison and bitwise -----------------------------------------------------------

export function opIszero(f: Frame): void {
  const s = f.stack;
  const sp = f.sp;
  s[sp - 1] = s[sp - 1] === 0 ? 1 : 0;
}
export function opNot(f: Frame): void {
  const s = f.stack;
  s[f.sp - 1] = not(s[f.sp - 1] as Word);
}

// ---- 0x20: KECCAK256 -------------------------------------------------------------------------

export function opKeccak(f: Frame): void {
  const s = f.stack;
  const sp = --f.sp;
  const size = s[sp - 1] as Word;
  const off = f.expand(s[sp] as Word, size);
  const len = size as number;
  f.useGas(G_KECCAK_WORD * words(len));
  s[sp - 1] = keccakMemoWord(f.memory.buf, f.memory.dv, off, len);
}
