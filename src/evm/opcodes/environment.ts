import { ERR, type Frame, smallOr, VmError } from "../frames.js";
import { G_COPY_WORD, words } from "../gas.js";
import { bytesToWord, loadWord, toBig, toWord, type Word } from "../words.js";

import { accountAccess, isEmptyAccount, push } from "./common.js";

/** Handlers of 0x30–0x4a: the call's environment (addresses, calldata, code, return data) and the block. */

// ---- 0x30s: environment ----------------------------------------------------------------------

export function opAddress(f: Frame): void {
  push(f, f.addressWord());
}
export function opBalance(f: Frame): void {
  const s = f.stack;
  const a = f.host.addressOf(s[f.sp - 1] as Word);
  accountAccess(f, a.key);
  s[f.sp - 1] = toWord(f.host.state.account(a.bytes, a.key).balance);
}
export function opOrigin(f: Frame): void {
  push(f, bytesToWord(f.host.origin));
}
export function opCaller(f: Frame): void {
  push(f, f.callerWord());
}
export function opCallvalue(f: Frame): void {
  push(f, toWord(f.value));
}
export function opCalldataload(f: Frame): void {
  const s = f.stack;
  const x = s[f.sp - 1] as Word;
  s[f.sp - 1] = typeof x === "number" ? loadWord(f.input, x) : 0;
}
export function opCalldatasize(f: Frame): void {
  push(f, f.input.length);
}
/** CALLDATACOPY, CODECOPY, RETURNDATACOPY's shared tail: gas for the copy, then the write. */
export function copyToMemory(f: Frame, src: Uint8Array, memOff: Word, srcOff: Word, size: Word): void {
  const off = f.expand(memOff, size);
  if (size === 0) return;
  const len = size as number;
  f.useGas(G_COPY_WORD * words(len));
  f.memory.writePadded(off, len, src, smallOr(srcOff, Number.MAX_SAFE_INTEGER));
}
export function opCalldatacopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 3;
  const sp = f.sp;
  copyToMemory(f, f.input, s[sp + 2] as Word, s[sp + 1] as Word, s[sp] as Word);
}
export function opCodesize(f: Frame): void {
  push(f, f.code.length);
}
export function opCodecopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 3;
  const sp = f.sp;
  copyToMemory(f, f.code, s[sp + 2] as Word, s[sp + 1] as Word, s[sp] as Word);
}
export function opGasprice(f: Frame): void {
  push(f, toWord(f.host.gasPrice));
}
export function opExtcodesize(f: Frame): void {
  const s = f.stack;
  const a = f.host.addressOf(s[f.sp - 1] as Word);
  accountAccess(f, a.key);
  s[f.sp - 1] = f.host.state.code(a.bytes, a.key).length;
}
export function opExtcodecopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 4;
  const sp = f.sp;
  const a = f.host.addressOf(s[sp + 3] as Word);
  const memOff = s[sp + 2] as Word;
  const codeOff = s[sp + 1] as Word;
  const size = s[sp] as Word;
  accountAccess(f, a.key);
  const off = f.expand(memOff, size);
  if (size === 0) return;
  const len = size as number;
  f.useGas(G_COPY_WORD * words(len));
  f.memory.writePadded(off, len, f.host.state.code(a.bytes, a.key), smallOr(codeOff, Number.MAX_SAFE_INTEGER));
}
export function opReturndatasize(f: Frame): void {
  push(f, f.returnData.length);
}
export function opReturndatacopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 3;
  const sp = f.sp;
  const memOff = s[sp + 2] as Word;
  const dataOff = s[sp + 1] as Word;
  const size = s[sp] as Word;
  // A bigint is past any return data; two numbers' sum is exact up to 2^53, far past it too.
  if (typeof dataOff !== "number" || typeof size !== "number" || dataOff + size > f.returnData.length) {
    throw new VmError(ERR.returnDataOutOfBounds);
  }
  copyToMemory(f, f.returnData, memOff, dataOff, size);
}
export function opExtcodehash(f: Frame): void {
  const s = f.stack;
  const ref = f.host.addressOf(s[f.sp - 1] as Word);
  accountAccess(f, ref.key);
  const a = f.host.state.account(ref.bytes, ref.key);
  s[f.sp - 1] = isEmptyAccount(a) ? 0 : bytesToWord(a.codeHash);
}

// ---- 0x40s: block ----------------------------------------------------------------------------

export function opBlockhash(f: Frame): void {
  const s = f.stack;
  const n = s[f.sp - 1] as Word;
  const cur = f.host.block.number;
  const lowest = cur > 256n ? cur - 256n : 0n;
  s[f.sp - 1] = n >= lowest && n < cur ? bytesToWord(f.host.block.blockHash(toBig(n))) : 0;
}
export function opCoinbase(f: Frame): void {
  push(f, bytesToWord(f.host.block.coinbase));
}
export function opTimestamp(f: Frame): void {
  push(f, toWord(f.host.block.timestamp));
}
export function opNumber(f: Frame): void {
  push(f, toWord(f.host.block.number));
}
export function opPrevrandao(f: Frame): void {
  push(f, bytesToWord(f.host.block.prevRandao));
}
export function opGaslimit(f: Frame): void {
  push(f, toWord(f.host.block.gasLimit));
}
export function opChainid(f: Frame): void {
  push(f, toWord(f.host.block.chainId));
}
export function opSelfbalance(f: Frame): void {
  push(f, toWord(f.host.state.account(f.address).balance));
}
export function opBasefee(f: Frame): void {
  push(f, toWord(f.host.block.baseFee));
}
export function opBlobhash(f: Frame): void {
  const s = f.stack;
  const i = s[f.sp - 1] as Word;
  const hashes = f.host.blobHashes;
  const h = typeof i === "number" ? hashes[i] : undefined;
  s[f.sp - 1] = h === undefined ? 0 : bytesToWord(h);
}
export function opBlobbasefee(f: Frame): void {
  push(f, toWord(f.host.block.blobBaseFee));
}
