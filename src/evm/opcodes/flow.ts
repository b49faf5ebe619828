import { countJump, ERR, type Frame, VmError } from "../frames.js";
import { G_COLD_SLOAD, G_COPY_WORD, G_SSTORE_SENTRY, G_WARM_ACCESS, sstoreCost, words } from "../gas.js";
import { readWord, toWord, type Word, writeWord } from "../words.js";

import { push } from "./common.js";

/** Handlers of 0x50–0x5e: stack, memory, storage (persistent and transient) and control flow. */

// ---- 0x50s: stack, memory, storage, flow -----------------------------------------------------

export function opPop(f: Frame): void {
  f.sp--;
}
export function opMload(f: Frame): void {
  const s = f.stack;
  const off = f.expand(s[f.sp - 1] as Word, 32);
  s[f.sp - 1] = readWord(f.memory.dv, off);
}
export function opMstore(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const off = f.expand(s[sp + 1] as Word, 32);
  writeWord(f.memory.dv, off, s[sp] as Word);
}
export function opMstore8(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const off = f.expand(s[sp + 1] as Word, 1);
  const v = s[sp] as Word;
  f.memory.buf[off] = typeof v === "number" ? v % 256 : Number(v & 0xffn);
}
export function opSload(f: Frame): void {
  const s = f.stack;
  const key = s[f.sp - 1] as Word;
  const host = f.host;
  f.useGas(host.warmSlot(f.addressKey, key) ? G_COLD_SLOAD : G_WARM_ACCESS);
  s[f.sp - 1] = host.state.slotOf(f.address, f.addressKey, key).value;
}
export function opSstore(f: Frame): void {
  if (f.isStatic) throw new VmError(ERR.writeProtection);
  // EIP-2200: SSTORE fails when no more than the call stipend is left.
  if (f.gas <= G_SSTORE_SENTRY && f.reserve === 0n) throw new VmError(ERR.outOfGas);
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const key = s[sp + 1] as Word;
  const value = s[sp] as Word;
  const host = f.host;
  const cold = host.warmSlot(f.addressKey, key);
  const slot = host.state.slotOf(f.address, f.addressKey, key);
  const current = slot.value;
  const { gas, refund } = sstoreCost(slot.original, current, value);
  f.useGas(gas + (cold ? G_COLD_SLOAD : 0));
  if (refund !== 0) host.addRefund(refund);
  if (current !== value) host.state.writeSlot(slot, value);
}
export function jumpTo(f: Frame, dest: Word): void {
  const host = f.host;
  countJump(host);
  if (typeof dest !== "number" || dest >= f.code.length || f.jumpdests[dest] !== 1) {
    throw new VmError(ERR.invalidJump);
  }
  f.pc = dest;
}
export function opJump(f: Frame): void {
  jumpTo(f, f.stack[--f.sp] as Word);
}
export function opJumpi(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  if (s[sp] !== 0) jumpTo(f, s[sp + 1] as Word);
}
export function opPc(f: Frame): void {
  push(f, f.pc - 1);
}
export function opMsize(f: Frame): void {
  push(f, f.memory.size);
}
export function opGas(f: Frame): void {
  push(f, f.reserve === 0n ? f.gas : toWord(f.totalGas()));
}
export function opJumpdest(_f: Frame): void {}
export function opTload(f: Frame): void {
  const s = f.stack;
  s[f.sp - 1] = f.host.tload(f.addressKey, s[f.sp - 1] as Word);
}
export function opTstore(f: Frame): void {
  if (f.isStatic) throw new VmError(ERR.writeProtection);
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  f.host.tstore(f.addressKey, s[sp + 1] as Word, s[sp] as Word);
}
export function opMcopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 3;
  const sp = f.sp;
  const dst = s[sp + 2] as Word;
  const src = s[sp + 1] as Word;
  const size = s[sp] as Word;
  if (size === 0) return;
  const d = f.expand(dst, size);
  const o = f.expand(src, size);
  const len = size as number;
  f.useGas(G_COPY_WORD * words(len));
  f.memory.copyWithin(d, o, len);
}
