import { addressHexOfWord, ERR, type Frame, hexToAddress, VmError } from "../frames.js";
import { G_COLD_ACCOUNT, G_LOG_DATA, G_NEW_ACCOUNT } from "../gas.js";
import type { Word } from "../words.js";

import { type Handler, isEmptyAccount } from "./common.js";

/** Handlers of 0xa0–0xff: LOG, calls, creations, RETURN, REVERT, INVALID, SELFDESTRUCT, and undefined opcodes. */

// ---- 0xa0s: LOG -------------------------------------------------------------------------------

export function makeLog(n: number): Handler {
  return (f: Frame): void => {
    if (f.isStatic) throw new VmError(ERR.writeProtection);
    const s = f.stack;
    f.sp -= 2 + n;
    const sp = f.sp;
    const size = s[sp + n] as Word;
    const off = f.expand(s[sp + n + 1] as Word, size);
    const len = size as number;
    f.useGas(G_LOG_DATA * len);
    const topics: Word[] = [];
    for (let i = n - 1; i >= 0; i--) topics.push(s[sp + i] as Word);
    f.host.log(f.address, topics, f.memory.read(off, len));
  };
}

// ---- 0xf0s: system ----------------------------------------------------------------------------

export function opCall(f: Frame): void {
  f.host.opCall(f, 0xf1);
}
export function opCallcode(f: Frame): void {
  f.host.opCall(f, 0xf2);
}
export function opDelegatecall(f: Frame): void {
  f.host.opCall(f, 0xf4);
}
export function opStaticcall(f: Frame): void {
  f.host.opCall(f, 0xfa);
}
export function opCreate(f: Frame): void {
  f.host.opCreate(f, 0xf0);
}
export function opCreate2(f: Frame): void {
  f.host.opCreate(f, 0xf5);
}
export function opReturn(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const size = s[sp] as Word;
  const off = f.expand(s[sp + 1] as Word, size);
  f.output = f.memory.read(off, size as number);
  f.stopped = true;
}
export function opRevert(f: Frame): void {
  opReturn(f);
  f.reverted = true;
}
export function opInvalid(_f: Frame): void {
  throw new VmError("invalid opcode: INVALID");
}
export function opSelfdestruct(f: Frame): void {
  if (f.isStatic) throw new VmError(ERR.writeProtection);
  const key = addressHexOfWord(f.stack[--f.sp] as Word);
  const host = f.host;
  if (host.warmAddress(key)) f.useGas(G_COLD_ACCOUNT);
  const beneficiary = hexToAddress(key);
  if (host.state.account(f.address).balance > 0n && isEmptyAccount(host.state.account(beneficiary))) {
    f.useGas(G_NEW_ACCOUNT);
  }
  host.selfdestruct(f, beneficiary);
  f.stopped = true;
}

export function undefinedOp(op: number): Handler {
  const text = `invalid opcode: opcode 0x${op.toString(16)} not defined`;
  return (): void => {
    throw new VmError(text);
  };
}
