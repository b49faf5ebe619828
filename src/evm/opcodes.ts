import { equalBytes, KECCAK256_NULL } from "./bytes.js";
import { addressHexOfWord, ERR, type Frame, hexToAddress, STACK_LIMIT, smallOr, VmError } from "./frames.js";
import {
  G_BASE,
  G_BLOCKHASH,
  G_COLD_ACCOUNT,
  G_COLD_SLOAD,
  G_COPY_WORD,
  G_EXP,
  G_EXP_BYTE,
  G_HIGH,
  G_JUMPDEST,
  G_KECCAK,
  G_KECCAK_WORD,
  G_LOG,
  G_LOG_DATA,
  G_LOG_TOPIC,
  G_LOW,
  G_MID,
  G_NEW_ACCOUNT,
  G_SELFDESTRUCT,
  G_SSTORE_SENTRY,
  G_TRANSIENT,
  G_VERYLOW,
  G_WARM_ACCESS,
  G_ZERO,
  sstoreCost,
  words,
} from "./gas.js";
import { keccakMemoWord } from "./keccakMemo.js";
import {
  add,
  addmod,
  and,
  byte,
  byteLength,
  div,
  exp,
  mod,
  mul,
  mulmod,
  not,
  or,
  sar,
  sdiv,
  shl,
  shr,
  signextend,
  slt,
  smod,
  sub,
  xor,
} from "./wordOps.js";
import { bytesToWord, loadWord, readWord, toBig, toWord, type Word, writeWord } from "./words.js";

/**
 * The opcode table: one entry per opcode with its name, static gas, stack arity and handler. Dynamic
 * gas (memory, cold access, copies, SSTORE, calls) is charged by the handler before it changes
 * anything; an exceptional halt throws VmError, which the interpreter turns into a failed frame.
 * Cancun and Prague share the table: Prague's EIP-7702 changes frames (interpreter.ts), not opcodes.
 */

export type Handler = (f: Frame) => void;

export interface OpInfo {
  readonly name: string;
  /** Static gas, charged by the loop before the handler. */
  readonly gas: number;
  /** Stack items read (underflow below). */
  readonly pops: number;
  /** Stack items written (overflow check: pushes − pops). */
  readonly pushes: number;
  readonly handler: Handler;
}

function isEmptyAccount(a: { exists: boolean; nonce: bigint; balance: bigint; codeHash: Uint8Array }): boolean {
  return !a.exists || (a.nonce === 0n && a.balance === 0n && equalBytes(a.codeHash, KECCAK256_NULL));
}

/** EIP-2929 access cost of an address given as a stack word, warming it. */
function accountAccess(f: Frame, key: string): void {
  f.useGas(f.host.warmAddress(key) ? G_COLD_ACCOUNT : G_WARM_ACCESS);
}

/** The binary opcodes: pop `a` (the top) and `b`, push op(a, b). */
function binary(op: (a: Word, b: Word) => Word): Handler {
  return (f: Frame): void => {
    const s = f.stack;
    const sp = --f.sp;
    s[sp - 1] = op(s[sp] as Word, s[sp - 1] as Word);
  };
}

/** The comparisons: pop `a` and `b`, push 1 or 0. */
function comparison(op: (a: Word, b: Word) => boolean): Handler {
  return (f: Frame): void => {
    const s = f.stack;
    const sp = --f.sp;
    s[sp - 1] = op(s[sp] as Word, s[sp - 1] as Word) ? 1 : 0;
  };
}

// ---- 0x00s: stop and arithmetic ----------------------------------------------------------------

function opStop(f: Frame): void {
  f.stopped = true;
}
function ternary(op: (a: Word, b: Word, n: Word) => Word): Handler {
  return (f: Frame): void => {
    const s = f.stack;
    f.sp -= 2;
    const sp = f.sp;
    s[sp - 1] = op(s[sp + 1] as Word, s[sp] as Word, s[sp - 1] as Word);
  };
}
function opExp(f: Frame): void {
  const s = f.stack;
  const sp = --f.sp;
  const e = s[sp - 1] as Word;
  if (e !== 0) f.useGas(G_EXP_BYTE * byteLength(e));
  s[sp - 1] = exp(s[sp] as Word, e);
}

// ---- 0x10s: comparison and bitwise -----------------------------------------------------------

function opIszero(f: Frame): void {
  const s = f.stack;
  const sp = f.sp;
  s[sp - 1] = s[sp - 1] === 0 ? 1 : 0;
}
function opNot(f: Frame): void {
  const s = f.stack;
  s[f.sp - 1] = not(s[f.sp - 1] as Word);
}

// ---- 0x20: KECCAK256 -------------------------------------------------------------------------

function opKeccak(f: Frame): void {
  const s = f.stack;
  const sp = --f.sp;
  const size = s[sp - 1] as Word;
  const off = f.expand(s[sp] as Word, size);
  const len = size as number;
  f.useGas(G_KECCAK_WORD * words(len));
  s[sp - 1] = keccakMemoWord(f.memory.buf, f.memory.dv, off, len);
}

// ---- 0x30s: environment ----------------------------------------------------------------------

function push(f: Frame, v: Word): void {
  f.stack[f.sp++] = v;
}
function opAddress(f: Frame): void {
  push(f, f.addressWord());
}
function opBalance(f: Frame): void {
  const s = f.stack;
  const a = f.host.addressOf(s[f.sp - 1] as Word);
  accountAccess(f, a.key);
  s[f.sp - 1] = toWord(f.host.state.account(a.bytes, a.key).balance);
}
function opOrigin(f: Frame): void {
  push(f, bytesToWord(f.host.origin));
}
function opCaller(f: Frame): void {
  push(f, f.callerWord());
}
function opCallvalue(f: Frame): void {
  push(f, toWord(f.value));
}
function opCalldataload(f: Frame): void {
  const s = f.stack;
  const x = s[f.sp - 1] as Word;
  s[f.sp - 1] = typeof x === "number" ? loadWord(f.input, x) : 0;
}
function opCalldatasize(f: Frame): void {
  push(f, f.input.length);
}
/** CALLDATACOPY, CODECOPY, RETURNDATACOPY's shared tail: gas for the copy, then the write. */
function copyToMemory(f: Frame, src: Uint8Array, memOff: Word, srcOff: Word, size: Word): void {
  const off = f.expand(memOff, size);
  if (size === 0) return;
  const len = size as number;
  f.useGas(G_COPY_WORD * words(len));
  f.memory.writePadded(off, len, src, smallOr(srcOff, Number.MAX_SAFE_INTEGER));
}
function opCalldatacopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 3;
  const sp = f.sp;
  copyToMemory(f, f.input, s[sp + 2] as Word, s[sp + 1] as Word, s[sp] as Word);
}
function opCodesize(f: Frame): void {
  push(f, f.code.length);
}
function opCodecopy(f: Frame): void {
  const s = f.stack;
  f.sp -= 3;
  const sp = f.sp;
  copyToMemory(f, f.code, s[sp + 2] as Word, s[sp + 1] as Word, s[sp] as Word);
}
function opGasprice(f: Frame): void {
  push(f, toWord(f.host.gasPrice));
}
function opExtcodesize(f: Frame): void {
  const s = f.stack;
  const a = f.host.addressOf(s[f.sp - 1] as Word);
  accountAccess(f, a.key);
  s[f.sp - 1] = f.host.state.code(a.bytes, a.key).length;
}
function opExtcodecopy(f: Frame): void {
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
function opReturndatasize(f: Frame): void {
  push(f, f.returnData.length);
}
function opReturndatacopy(f: Frame): void {
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
function opExtcodehash(f: Frame): void {
  const s = f.stack;
  const ref = f.host.addressOf(s[f.sp - 1] as Word);
  accountAccess(f, ref.key);
  const a = f.host.state.account(ref.bytes, ref.key);
  s[f.sp - 1] = isEmptyAccount(a) ? 0 : bytesToWord(a.codeHash);
}

// ---- 0x40s: block ----------------------------------------------------------------------------

function opBlockhash(f: Frame): void {
  const s = f.stack;
  const n = s[f.sp - 1] as Word;
  const cur = f.host.block.number;
  const lowest = cur > 256n ? cur - 256n : 0n;
  s[f.sp - 1] = n >= lowest && n < cur ? bytesToWord(f.host.block.blockHash(toBig(n))) : 0;
}
function opCoinbase(f: Frame): void {
  push(f, bytesToWord(f.host.block.coinbase));
}
function opTimestamp(f: Frame): void {
  push(f, toWord(f.host.block.timestamp));
}
function opNumber(f: Frame): void {
  push(f, toWord(f.host.block.number));
}
function opPrevrandao(f: Frame): void {
  push(f, bytesToWord(f.host.block.prevRandao));
}
function opGaslimit(f: Frame): void {
  push(f, toWord(f.host.block.gasLimit));
}
function opChainid(f: Frame): void {
  push(f, toWord(f.host.block.chainId));
}
function opSelfbalance(f: Frame): void {
  push(f, toWord(f.host.state.account(f.address).balance));
}
function opBasefee(f: Frame): void {
  push(f, toWord(f.host.block.baseFee));
}
function opBlobhash(f: Frame): void {
  const s = f.stack;
  const i = s[f.sp - 1] as Word;
  const hashes = f.host.blobHashes;
  const h = typeof i === "number" ? hashes[i] : undefined;
  s[f.sp - 1] = h === undefined ? 0 : bytesToWord(h);
}
function opBlobbasefee(f: Frame): void {
  push(f, toWord(f.host.block.blobBaseFee));
}

// ---- 0x50s: stack, memory, storage, flow -----------------------------------------------------

function opPop(f: Frame): void {
  f.sp--;
}
function opMload(f: Frame): void {
  const s = f.stack;
  const off = f.expand(s[f.sp - 1] as Word, 32);
  s[f.sp - 1] = readWord(f.memory.dv, off);
}
function opMstore(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const off = f.expand(s[sp + 1] as Word, 32);
  writeWord(f.memory.dv, off, s[sp] as Word);
}
function opMstore8(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const off = f.expand(s[sp + 1] as Word, 1);
  const v = s[sp] as Word;
  f.memory.buf[off] = typeof v === "number" ? v % 256 : Number(v & 0xffn);
}
function opSload(f: Frame): void {
  const s = f.stack;
  const key = s[f.sp - 1] as Word;
  const host = f.host;
  f.useGas(host.warmSlot(f.addressKey, key) ? G_COLD_SLOAD : G_WARM_ACCESS);
  s[f.sp - 1] = host.state.slotOf(f.address, f.addressKey, key).value;
}
function opSstore(f: Frame): void {
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
function jumpTo(f: Frame, dest: Word): void {
  const host = f.host;
  if (host.interrupt !== undefined && (++host.ticks & 4095) === 0) host.interrupt();
  if (typeof dest !== "number" || dest >= f.code.length || f.jumpdests[dest] !== 1) {
    throw new VmError(ERR.invalidJump);
  }
  f.pc = dest;
}
function opJump(f: Frame): void {
  jumpTo(f, f.stack[--f.sp] as Word);
}
function opJumpi(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  if (s[sp] !== 0) jumpTo(f, s[sp + 1] as Word);
}
function opPc(f: Frame): void {
  push(f, f.pc - 1);
}
function opMsize(f: Frame): void {
  push(f, f.memory.size);
}
function opGas(f: Frame): void {
  push(f, f.reserve === 0n ? f.gas : toWord(f.totalGas()));
}
function opJumpdest(_f: Frame): void {}
function opTload(f: Frame): void {
  const s = f.stack;
  s[f.sp - 1] = f.host.tload(f.addressKey, s[f.sp - 1] as Word);
}
function opTstore(f: Frame): void {
  if (f.isStatic) throw new VmError(ERR.writeProtection);
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  f.host.tstore(f.addressKey, s[sp + 1] as Word, s[sp] as Word);
}
function opMcopy(f: Frame): void {
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

// ---- 0x5f-0x9f: PUSH, DUP, SWAP ---------------------------------------------------------------

function opPush0(f: Frame): void {
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
  for (let pc = 0; pc < code.length; pc++) {
    const op = code[pc] as number;
    if (op < 0x60 || op > 0x7f) continue;
    const n = op - 0x5f;
    let v = 0n;
    let x = 0;
    let bytes = 0;
    for (let i = pc + 1; i <= pc + n; i++) {
      x = x * 256 + (code[i] ?? 0);
      if (++bytes === 6) {
        v = (v << 48n) | BigInt(x);
        x = 0;
        bytes = 0;
      }
    }
    if (bytes > 0) v = (v << BigInt(8 * bytes)) | BigInt(x);
    values[pc + 1] = toWord(v);
    pc += n;
  }
  pushValueCache.set(code, values);
  return values;
}

function pushN(f: Frame, n: number): void {
  const pc = f.pc;
  f.stack[f.sp++] = f.pushValues[pc] as Word;
  f.pc = pc + n;
}
function dupN(f: Frame, n: number): void {
  const s = f.stack;
  s[f.sp] = s[f.sp - n] as Word;
  f.sp++;
}
function swapN(f: Frame, n: number): void {
  const s = f.stack;
  const top = f.sp - 1;
  const t = s[top] as Word;
  s[top] = s[top - n] as Word;
  s[top - n] = t;
}
function makePush(n: number): Handler {
  return (f: Frame): void => pushN(f, n);
}
function makeDup(n: number): Handler {
  return (f: Frame): void => dupN(f, n);
}
function makeSwap(n: number): Handler {
  return (f: Frame): void => swapN(f, n);
}

// ---- 0xa0s: LOG -------------------------------------------------------------------------------

function makeLog(n: number): Handler {
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

function opCall(f: Frame): void {
  f.host.opCall(f, 0xf1);
}
function opCallcode(f: Frame): void {
  f.host.opCall(f, 0xf2);
}
function opDelegatecall(f: Frame): void {
  f.host.opCall(f, 0xf4);
}
function opStaticcall(f: Frame): void {
  f.host.opCall(f, 0xfa);
}
function opCreate(f: Frame): void {
  f.host.opCreate(f, 0xf0);
}
function opCreate2(f: Frame): void {
  f.host.opCreate(f, 0xf5);
}
function opReturn(f: Frame): void {
  const s = f.stack;
  f.sp -= 2;
  const sp = f.sp;
  const size = s[sp] as Word;
  const off = f.expand(s[sp + 1] as Word, size);
  f.output = f.memory.read(off, size as number);
  f.stopped = true;
}
function opRevert(f: Frame): void {
  opReturn(f);
  f.reverted = true;
}
function opInvalid(_f: Frame): void {
  throw new VmError("invalid opcode: INVALID");
}
function opSelfdestruct(f: Frame): void {
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

function undefinedOp(op: number): Handler {
  const text = `invalid opcode: opcode 0x${op.toString(16)} not defined`;
  return (): void => {
    throw new VmError(text);
  };
}

// ---- the table --------------------------------------------------------------------------------

function op(name: string, gas: number, pops: number, pushes: number, handler: Handler): OpInfo {
  return { name, gas, pops, pushes, handler };
}

function buildTable(): OpInfo[] {
  const t: OpInfo[] = [];
  for (let i = 0; i < 256; i++) t.push(op(`0x${i.toString(16).padStart(2, "0")}`, 0, 0, 0, undefinedOp(i)));
  const set = (code: number, info: OpInfo): void => {
    t[code] = info;
  };
  set(0x00, op("STOP", G_ZERO, 0, 0, opStop));
  set(0x01, op("ADD", G_VERYLOW, 2, 1, binary(add)));
  set(0x02, op("MUL", G_LOW, 2, 1, binary(mul)));
  set(0x03, op("SUB", G_VERYLOW, 2, 1, binary(sub)));
  set(0x04, op("DIV", G_LOW, 2, 1, binary(div)));
  set(0x05, op("SDIV", G_LOW, 2, 1, binary(sdiv)));
  set(0x06, op("MOD", G_LOW, 2, 1, binary(mod)));
  set(0x07, op("SMOD", G_LOW, 2, 1, binary(smod)));
  set(0x08, op("ADDMOD", G_MID, 3, 1, ternary(addmod)));
  set(0x09, op("MULMOD", G_MID, 3, 1, ternary(mulmod)));
  set(0x0a, op("EXP", G_EXP, 2, 1, opExp));
  set(0x0b, op("SIGNEXTEND", G_LOW, 2, 1, binary(signextend)));
  set(
    0x10,
    op(
      "LT",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => a < b),
    ),
  );
  set(
    0x11,
    op(
      "GT",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => a > b),
    ),
  );
  set(0x12, op("SLT", G_VERYLOW, 2, 1, comparison(slt)));
  set(
    0x13,
    op(
      "SGT",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => slt(b, a)),
    ),
  );
  set(
    0x14,
    op(
      "EQ",
      G_VERYLOW,
      2,
      1,
      comparison((a, b) => a === b),
    ),
  );
  set(0x15, op("ISZERO", G_VERYLOW, 1, 1, opIszero));
  set(0x16, op("AND", G_VERYLOW, 2, 1, binary(and)));
  set(0x17, op("OR", G_VERYLOW, 2, 1, binary(or)));
  set(0x18, op("XOR", G_VERYLOW, 2, 1, binary(xor)));
  set(0x19, op("NOT", G_VERYLOW, 1, 1, opNot));
  set(0x1a, op("BYTE", G_VERYLOW, 2, 1, binary(byte)));
  set(0x1b, op("SHL", G_VERYLOW, 2, 1, binary(shl)));
  set(0x1c, op("SHR", G_VERYLOW, 2, 1, binary(shr)));
  set(0x1d, op("SAR", G_VERYLOW, 2, 1, binary(sar)));
  set(0x20, op("KECCAK256", G_KECCAK, 2, 1, opKeccak));
  set(0x30, op("ADDRESS", G_BASE, 0, 1, opAddress));
  set(0x31, op("BALANCE", G_ZERO, 1, 1, opBalance));
  set(0x32, op("ORIGIN", G_BASE, 0, 1, opOrigin));
  set(0x33, op("CALLER", G_BASE, 0, 1, opCaller));
  set(0x34, op("CALLVALUE", G_BASE, 0, 1, opCallvalue));
  set(0x35, op("CALLDATALOAD", G_VERYLOW, 1, 1, opCalldataload));
  set(0x36, op("CALLDATASIZE", G_BASE, 0, 1, opCalldatasize));
  set(0x37, op("CALLDATACOPY", G_VERYLOW, 3, 0, opCalldatacopy));
  set(0x38, op("CODESIZE", G_BASE, 0, 1, opCodesize));
  set(0x39, op("CODECOPY", G_VERYLOW, 3, 0, opCodecopy));
  set(0x3a, op("GASPRICE", G_BASE, 0, 1, opGasprice));
  set(0x3b, op("EXTCODESIZE", G_ZERO, 1, 1, opExtcodesize));
  set(0x3c, op("EXTCODECOPY", G_ZERO, 4, 0, opExtcodecopy));
  set(0x3d, op("RETURNDATASIZE", G_BASE, 0, 1, opReturndatasize));
  set(0x3e, op("RETURNDATACOPY", G_VERYLOW, 3, 0, opReturndatacopy));
  set(0x3f, op("EXTCODEHASH", G_ZERO, 1, 1, opExtcodehash));
  set(0x40, op("BLOCKHASH", G_BLOCKHASH, 1, 1, opBlockhash));
  set(0x41, op("COINBASE", G_BASE, 0, 1, opCoinbase));
  set(0x42, op("TIMESTAMP", G_BASE, 0, 1, opTimestamp));
  set(0x43, op("NUMBER", G_BASE, 0, 1, opNumber));
  set(0x44, op("PREVRANDAO", G_BASE, 0, 1, opPrevrandao));
  set(0x45, op("GASLIMIT", G_BASE, 0, 1, opGaslimit));
  set(0x46, op("CHAINID", G_BASE, 0, 1, opChainid));
  set(0x47, op("SELFBALANCE", G_LOW, 0, 1, opSelfbalance));
  set(0x48, op("BASEFEE", G_BASE, 0, 1, opBasefee));
  set(0x49, op("BLOBHASH", G_VERYLOW, 1, 1, opBlobhash));
  set(0x4a, op("BLOBBASEFEE", G_BASE, 0, 1, opBlobbasefee));
  set(0x50, op("POP", G_BASE, 1, 0, opPop));
  set(0x51, op("MLOAD", G_VERYLOW, 1, 1, opMload));
  set(0x52, op("MSTORE", G_VERYLOW, 2, 0, opMstore));
  set(0x53, op("MSTORE8", G_VERYLOW, 2, 0, opMstore8));
  set(0x54, op("SLOAD", G_ZERO, 1, 1, opSload));
  set(0x55, op("SSTORE", G_ZERO, 2, 0, opSstore));
  set(0x56, op("JUMP", G_MID, 1, 0, opJump));
  set(0x57, op("JUMPI", G_HIGH, 2, 0, opJumpi));
  set(0x58, op("PC", G_BASE, 0, 1, opPc));
  set(0x59, op("MSIZE", G_BASE, 0, 1, opMsize));
  set(0x5a, op("GAS", G_BASE, 0, 1, opGas));
  set(0x5b, op("JUMPDEST", G_JUMPDEST, 0, 0, opJumpdest));
  set(0x5c, op("TLOAD", G_TRANSIENT, 1, 1, opTload));
  set(0x5d, op("TSTORE", G_TRANSIENT, 2, 0, opTstore));
  set(0x5e, op("MCOPY", G_VERYLOW, 3, 0, opMcopy));
  set(0x5f, op("PUSH0", G_BASE, 0, 1, opPush0));
  for (let n = 1; n <= 32; n++) {
    set(0x5f + n, op(`PUSH${n}`, G_VERYLOW, 0, 1, makePush(n)));
  }
  for (let n = 1; n <= 16; n++) {
    set(0x7f + n, op(`DUP${n}`, G_VERYLOW, n, n + 1, makeDup(n)));
    set(0x8f + n, op(`SWAP${n}`, G_VERYLOW, n + 1, n + 1, makeSwap(n)));
  }
  for (let n = 0; n <= 4; n++) {
    set(0xa0 + n, op(`LOG${n}`, G_LOG + n * G_LOG_TOPIC, n + 2, 0, makeLog(n)));
  }
  set(0xf0, op("CREATE", 0, 3, 1, opCreate));
  set(0xf1, op("CALL", 0, 7, 1, opCall));
  set(0xf2, op("CALLCODE", 0, 7, 1, opCallcode));
  set(0xf3, op("RETURN", G_ZERO, 2, 0, opReturn));
  set(0xf4, op("DELEGATECALL", 0, 6, 1, opDelegatecall));
  set(0xf5, op("CREATE2", 0, 4, 1, opCreate2));
  set(0xfa, op("STATICCALL", 0, 6, 1, opStaticcall));
  set(0xfd, op("REVERT", G_ZERO, 2, 0, opRevert));
  set(0xfe, op("INVALID", G_ZERO, 0, 0, opInvalid));
  set(0xff, op("SELFDESTRUCT", G_SELFDESTRUCT, 1, 0, opSelfdestruct));
  return t;
}

/** The opcode table (Cancun and Prague). */
export const OPCODES: readonly OpInfo[] = buildTable();

/** Flat copies of the table for the interpreter loop. */
export const OP_GAS: Int32Array = Int32Array.from(OPCODES, (o) => o.gas);
export const OP_MIN_STACK: Int32Array = Int32Array.from(OPCODES, (o) => o.pops);
/** The largest stack height at which the opcode may run without overflowing. */
export const OP_MAX_STACK: Int32Array = Int32Array.from(OPCODES, (o) => STACK_LIMIT - (o.pushes - o.pops));
export const OP_HANDLERS: readonly Handler[] = OPCODES.map((o) => o.handler);
