import { RLP } from "@ethereumjs/rlp";
import { analysisOf, type CodeAnalysis, ENDS_BLOCK } from "./analysis.js";
import { type BlockFn, blockCompileThreshold, compileBlock } from "./blockCompiler.js";
import { bigintToBytes, equalBytes, KECCAK256_NULL } from "./bytes.js";
import { keccak256 } from "./crypto.js";
import {
  type AddressRef,
  addressHexOfWord,
  addressKey,
  countJump,
  EMPTY,
  ERR,
  Frame,
  type FrameResult,
  type Host,
  hexToAddress,
  interruptNow,
  type Snapshot,
  STACK_LIMIT,
  VmError,
} from "./frames.js";
import {
  allButOne64th,
  FORK_RULES,
  G_CALL_STIPEND,
  G_CALL_VALUE,
  G_CODE_DEPOSIT,
  G_COLD_ACCOUNT,
  G_CREATE,
  G_INITCODE_WORD,
  G_KECCAK_WORD,
  G_NEW_ACCOUNT,
  G_WARM_ACCESS,
  MAX_CODE_SIZE,
  MAX_FRAME_GAS,
  MAX_INITCODE_SIZE,
  words,
} from "./gas.js";
import { Memory } from "./memory.js";
import { OP_GAS, OP_HANDLERS, OP_MAX_STACK, OP_MIN_STACK, OPCODES } from "./opcodes.js";
import { type PrecompileExtensions, precompileAt } from "./precompiles.js";
import {
  accountWith,
  type BlockEnv,
  type CallInputs,
  type EngineHooks,
  type EngineLog,
  type EngineState,
  type Fork,
  type FrameEnter,
  type FrameExit,
  type FrameType,
  type OpcodeStep,
  type Precompile,
} from "./types.js";
import { add, and, div, mod, mul, not, or, sdiv, shl, shr, slt, sub, xor } from "./wordOps.js";
import {
  bytesToWord,
  loadWord,
  readWord,
  SAFE_LIMIT,
  toBig,
  toWord,
  type Word,
  wordToBytes,
  writeWord,
} from "./words.js";

/**
 * The synchronous interpreter: the loop that runs one frame over the opcode table, and Evm, the host
 * the frames of one transaction share (access sets, transient storage, logs, refunds, touched and
 * self-destructed accounts, each with an undo log so a failed frame leaves nothing behind) and that
 * runs message calls and creations (geth's core/vm/evm.go Call, CallCode, DelegateCall, StaticCall,
 * Create, Create2).
 */

export const MAX_CALL_DEPTH = 1024;
const MAX_NONCE = (1n << 64n) - 1n;
const CALL = 0xf1;
const CALLCODE = 0xf2;
const DELEGATECALL = 0xf4;
const STATICCALL = 0xfa;
const CREATE = 0xf0;
const CREATE2 = 0xf5;

// ---- addresses -------------------------------------------------------------------------------------

/** EIP-7702: the address a delegation designator (0xef0100 ‖ address) points to, else undefined. */
export function delegationTarget(code: Uint8Array): Uint8Array | undefined {
  if (code.length !== 23 || code[0] !== 0xef || code[1] !== 0x01 || code[2] !== 0x00) return undefined;
  return code.subarray(3);
}

/** CREATE's address: keccak256(rlp([sender, nonce]))[12:]. */
export function createAddress(sender: Uint8Array, nonce: bigint): Uint8Array {
  return keccak256(RLP.encode([sender, bigintToBytes(nonce)])).slice(12);
}

/** CREATE2's address: keccak256(0xff ‖ sender ‖ salt ‖ keccak256(initcode))[12:]. */
export function create2Address(sender: Uint8Array, salt: Uint8Array, initcode: Uint8Array): Uint8Array {
  const buf = new Uint8Array(85);
  buf[0] = 0xff;
  buf.set(sender, 1);
  buf.set(salt, 21);
  buf.set(keccak256(initcode), 53);
  return keccak256(buf).slice(12);
}

// ---- the loop ---------------------------------------------------------------------------------------

const TWO_32 = 2 ** 32;
const NONE_WARM: ReadonlySet<string> = new Set();
const MAX_FRAME_GAS_BIG = BigInt(MAX_FRAME_GAS);
const MAX_WORD = (1n << 256n) - 1n;

/** Compiles the block at `pc` of `a` into a.jit (made on the code's first compiled block); returns a.jit. */
function compileInto(a: CodeAnalysis, pc: number): (BlockFn | 0)[] {
  let jit = a.jit;
  if (jit === null) {
    jit = new Array<BlockFn | 0>(a.code.length).fill(0);
    a.jit = jit;
  }
  jit[pc] = compileBlock(a, pc) ?? 0;
  return jit;
}

/**
 * The compiled function that starts at `pc` of `a`, or 0; counts the entry and compiles it at the
 * threshold (for the loop's less frequent ways into compiled code: after a memory access that grew
 * memory). The three frequent ways in (a JUMPDEST, the block after a JUMPI not taken, the rest of a block
 * after an opcode the loop ran itself) keep the same lookup inline, reading the loop's local `jit`: a
 * call there was not measurably free (in-process A/B of the keccak workload, 2026-11-30, within the
 * host's noise but slower in 3 of 5 pairs), so the copies stay until a quieter A/B says otherwise.
 */
function compiledAt(a: CodeAnalysis, pc: number, jitAfter: number): BlockFn | 0 {
  const fn = a.jit === null ? 0 : (a.jit[pc] as BlockFn | 0);
  if (fn !== 0 || jitAfter === 0 || ++(a.blockHits[pc] as number) !== jitAfter) return fn;
  return compileInto(a, pc)[pc] as BlockFn | 0;
}

/**
 * Runs `f` until it ends (STOP/RETURN/REVERT/SELFDESTRUCT or an exceptional halt) or suspends for a
 * sub-call (`f.child` set; the result is then meaningless and Evm runs the child).
 *
 * The opcodes a contract runs most (PUSH, DUP, SWAP, POP, JUMP, JUMPI, JUMPDEST, the cheap arithmetic
 * and comparisons, MLOAD, MSTORE, CALLDATALOAD) are handled in the loop's switch with pc, sp and gas
 * in locals; every other opcode goes to its table handler with the frame's fields synced around the
 * call. Each inlined case does exactly what its handler in opcodes.ts does (the traced loop runs the
 * handlers, and the differential tests compare both loops on random programs).
 */
export function runFrame(f: Frame): FrameResult {
  const a = f.analysis;
  const code = a.code;
  const len = f.code.length;
  const blockGas = a.blockGas;
  const blockMin = a.blockMin;
  const blockMax = a.blockMax;
  const rest = a.rest;
  const s = f.stack;
  const jd = f.jumpdests;
  const host = f.host;
  const pushValues = f.pushValues;
  const blockHits = a.blockHits;
  const jitAfter = blockCompileThreshold();
  let jit = a.jit;
  let pc = f.pc;
  let sp = f.sp;
  let gas = f.gas;
  // A frame starts, or resumes after a call, at the start of a block (a JUMPDEST checks its own).
  if (code[pc] !== 0x5b) {
    if (gas < (blockGas[pc] as number) || sp < (blockMin[pc] as number) || sp > (blockMax[pc] as number)) {
      return runChecked(f);
    }
    gas -= blockGas[pc] as number;
  }
  try {
    for (;;) {
      const op = code[pc++] as number;
      switch (op) {
        case 0x01: {
          const a = s[--sp] as Word;
          const b = s[sp - 1] as Word;
          if (typeof a === "number" && typeof b === "number") {
            const r = a + b;
            if (r < SAFE_LIMIT) {
              s[sp - 1] = r;
              continue;
            }
          }
          s[sp - 1] = add(a, b);
          continue;
        }
        case 0x03: {
          const a = s[--sp] as Word;
          const b = s[sp - 1] as Word;
          if (typeof a === "number" && typeof b === "number") {
            const r = a - b;
            if (r >= 0) {
              s[sp - 1] = r;
              continue;
            }
          }
          s[sp - 1] = sub(a, b);
          continue;
        }
        case 0x02: {
          const a = s[--sp] as Word;
          s[sp - 1] = mul(a, s[sp - 1] as Word);
          continue;
        }
        case 0x04: {
          const a = s[--sp] as Word;
          s[sp - 1] = div(a, s[sp - 1] as Word);
          continue;
        }
        case 0x06: {
          const a = s[--sp] as Word;
          s[sp - 1] = mod(a, s[sp - 1] as Word);
          continue;
        }
        case 0x05: {
          const a = s[--sp] as Word;
          s[sp - 1] = sdiv(a, s[sp - 1] as Word);
          continue;
        }
        case 0x12: {
          const a = s[--sp] as Word;
          s[sp - 1] = slt(a, s[sp - 1] as Word) ? 1 : 0;
          continue;
        }
        case 0x13: {
          const a = s[--sp] as Word;
          s[sp - 1] = slt(s[sp - 1] as Word, a) ? 1 : 0;
          continue;
        }
        case 0x10:
          sp--;
          s[sp - 1] = (s[sp] as Word) < (s[sp - 1] as Word) ? 1 : 0;
          continue;
        case 0x11:
          sp--;
          s[sp - 1] = (s[sp] as Word) > (s[sp - 1] as Word) ? 1 : 0;
          continue;
        case 0x14:
          sp--;
          s[sp - 1] = s[sp] === s[sp - 1] ? 1 : 0;
          continue;
        case 0x15:
          s[sp - 1] = s[sp - 1] === 0 ? 1 : 0;
          continue;
        case 0x16: {
          const a = s[--sp] as Word;
          const b = s[sp - 1] as Word;
          s[sp - 1] =
            typeof a === "number" && typeof b === "number" && a < TWO_32 && b < TWO_32 ? (a & b) >>> 0 : and(a, b);
          continue;
        }
        case 0x17: {
          const a = s[--sp] as Word;
          const b = s[sp - 1] as Word;
          s[sp - 1] =
            typeof a === "number" && typeof b === "number" && a < TWO_32 && b < TWO_32 ? (a | b) >>> 0 : or(a, b);
          continue;
        }
        case 0x18: {
          const a = s[--sp] as Word;
          s[sp - 1] = xor(a, s[sp - 1] as Word);
          continue;
        }
        case 0x19:
          s[sp - 1] = not(s[sp - 1] as Word);
          continue;
        case 0x1b: {
          const a = s[--sp] as Word;
          s[sp - 1] = shl(a, s[sp - 1] as Word);
          continue;
        }
        case 0x1c: {
          const a = s[--sp] as Word;
          s[sp - 1] = shr(a, s[sp - 1] as Word);
          continue;
        }
        case 0x35: {
          const x = s[sp - 1] as Word;
          s[sp - 1] = typeof x === "number" ? loadWord(f.input, x) : 0;
          continue;
        }
        case 0x34:
          s[sp++] = toWord(f.value);
          continue;
        case 0x50:
          sp--;
          continue;
        case 0x51: {
          const x = s[sp - 1] as Word;
          if (typeof x === "number" && x + 32 <= f.memory.size) {
            s[sp - 1] = readWord(f.memory.dv, x);
            continue;
          }
          // Memory grows: the expansion is charged against the exact gas left.
          const r = rest[pc - 1] as number;
          f.gas = gas + r;
          const off = f.expand(x, 32);
          gas = f.gas - r;
          s[sp - 1] = readWord(f.memory.dv, off);
          if (gas < 0) {
            f.pc = pc;
            f.sp = sp;
            return runChecked(f);
          }
          // The rest of the block may be compiled (this loop ran the access because the block's start was not);
          // a JUMPDEST next starts a block of its own, which the loop charges.
          const fn = code[pc] === 0x5b ? 0 : compiledAt(a, pc, jitAfter);
          jit = a.jit;
          if (fn !== 0) {
            f.gas = gas;
            pc = fn(s, sp, f);
            sp = f.sp;
            gas = f.gas;
            if (pc < 0) return runChecked(f);
          }
          continue;
        }
        case 0x52: {
          sp -= 2;
          const x = s[sp + 1] as Word;
          if (typeof x === "number" && x + 32 <= f.memory.size) {
            writeWord(f.memory.dv, x, s[sp] as Word);
            continue;
          }
          const r = rest[pc - 1] as number;
          f.gas = gas + r;
          const off = f.expand(x, 32);
          gas = f.gas - r;
          writeWord(f.memory.dv, off, s[sp] as Word);
          if (gas < 0) {
            f.pc = pc;
            f.sp = sp;
            return runChecked(f);
          }
          // The rest of the block may be compiled (this loop ran the access because the block's start was not);
          // a JUMPDEST next starts a block of its own, which the loop charges.
          const fn = code[pc] === 0x5b ? 0 : compiledAt(a, pc, jitAfter);
          jit = a.jit;
          if (fn !== 0) {
            f.gas = gas;
            pc = fn(s, sp, f);
            sp = f.sp;
            gas = f.gas;
            if (pc < 0) return runChecked(f);
          }
          continue;
        }
        case 0x56: {
          countJump(host);
          const dest = s[--sp] as Word;
          if (typeof dest !== "number" || dest >= len || jd[dest] !== 1) throw new VmError(ERR.invalidJump);
          pc = dest;
          continue;
        }
        case 0x57: {
          sp -= 2;
          if (s[sp] !== 0) {
            countJump(host);
            const dest = s[sp + 1] as Word;
            if (typeof dest !== "number" || dest >= len || jd[dest] !== 1) throw new VmError(ERR.invalidJump);
            pc = dest;
          } else if (code[pc] !== 0x5b) {
            // Not taken: the next opcode starts a block.
            if (gas < (blockGas[pc] as number) || sp < (blockMin[pc] as number) || sp > (blockMax[pc] as number)) {
              f.pc = pc;
              f.sp = sp;
              f.gas = gas;
              return runChecked(f);
            }
            gas -= blockGas[pc] as number;
            // The block after a JUMPI not taken (a loop's body, the path past a check) may be compiled too.
            let fn = jit === null ? 0 : (jit[pc] as BlockFn | 0);
            if (fn === 0 && ++(blockHits[pc] as number) === jitAfter && jitAfter !== 0) {
              jit = compileInto(a, pc);
              fn = jit[pc] as BlockFn | 0;
            }
            if (fn !== 0) {
              f.gas = gas;
              pc = fn(s, sp, f);
              sp = f.sp;
              gas = f.gas;
              if (pc < 0) return runChecked(f);
            }
          }
          continue;
        }
        case 0x5b: {
          // The first opcode of its block: the whole block is checked and charged here.
          pc--;
          if (gas < (blockGas[pc] as number) || sp < (blockMin[pc] as number) || sp > (blockMax[pc] as number)) {
            f.pc = pc;
            f.sp = sp;
            f.gas = gas;
            return runChecked(f);
          }
          gas -= blockGas[pc] as number;
          // A block entered often runs as a function (blockCompiler.ts), up to the first opcode it leaves
          // to this loop or through its jump.
          {
            let fn = jit === null ? 0 : (jit[pc] as BlockFn | 0);
            if (fn === 0 && ++(blockHits[pc] as number) === jitAfter && jitAfter !== 0) {
              jit = compileInto(a, pc);
              fn = jit[pc] as BlockFn | 0;
            }
            if (fn !== 0) {
              f.gas = gas;
              pc = fn(s, sp, f);
              sp = f.sp;
              gas = f.gas;
              if (pc < 0) return runChecked(f);
              continue;
            }
          }
          pc++;
          continue;
        }
        case 0x5f:
          s[sp++] = 0;
          continue;
        case 0x60:
        case 0x61:
        case 0x62:
        case 0x63:
        case 0x64:
        case 0x65:
        case 0x66:
        case 0x67:
        case 0x68:
        case 0x69:
        case 0x6a:
        case 0x6b:
        case 0x6c:
        case 0x6d:
        case 0x6e:
        case 0x6f:
        case 0x70:
        case 0x71:
        case 0x72:
        case 0x73:
        case 0x74:
        case 0x75:
        case 0x76:
        case 0x77:
        case 0x78:
        case 0x79:
        case 0x7a:
        case 0x7b:
        case 0x7c:
        case 0x7d:
        case 0x7e:
        case 0x7f:
          s[sp++] = pushValues[pc] as Word;
          pc += op - 0x5f;
          continue;
        case 0x80:
        case 0x81:
        case 0x82:
        case 0x83:
        case 0x84:
        case 0x85:
        case 0x86:
        case 0x87:
        case 0x88:
        case 0x89:
        case 0x8a:
        case 0x8b:
        case 0x8c:
        case 0x8d:
        case 0x8e:
        case 0x8f:
          s[sp] = s[sp - (op - 0x7f)] as Word;
          sp++;
          continue;
        case 0x90:
        case 0x91:
        case 0x92:
        case 0x93:
        case 0x94:
        case 0x95:
        case 0x96:
        case 0x97:
        case 0x98:
        case 0x99:
        case 0x9a:
        case 0x9b:
        case 0x9c:
        case 0x9d:
        case 0x9e:
        case 0x9f: {
          const top = sp - 1;
          const other = top - (op - 0x8f);
          const t = s[top] as Word;
          s[top] = s[other] as Word;
          s[other] = t;
          continue;
        }
        default: {
          // The handler sees the exact gas left: the rest of the block is charged already.
          const r = rest[pc - 1] as number;
          f.pc = pc;
          f.sp = sp;
          f.gas = gas + r;
          (OP_HANDLERS[op] as (f: Frame) => void)(f);
          pc = f.pc;
          sp = f.sp;
          if (f.stopped) {
            gas = f.gas;
            break;
          }
          gas = f.gas - r;
          // Its dynamic gas left less than the rest of the block: go on opcode by opcode.
          if (gas < 0) return runChecked(f);
          // A call or creation that ended at once: the next opcode starts a block.
          if (ENDS_BLOCK[op] === 1 && code[pc] !== 0x5b) {
            if (gas < (blockGas[pc] as number) || sp < (blockMin[pc] as number) || sp > (blockMax[pc] as number)) {
              f.pc = pc;
              f.sp = sp;
              f.gas = gas;
              return runChecked(f);
            }
            gas -= blockGas[pc] as number;
          }
          // The rest of the block (or the next one) may be compiled too: a block's opcodes after one the
          // compiler leaves to the loop (SLOAD, KECCAK256, LOG, ...), already charged with their block.
          if (code[pc] !== 0x5b) {
            let fn = jit === null ? 0 : (jit[pc] as BlockFn | 0);
            if (fn === 0 && ++(blockHits[pc] as number) === jitAfter && jitAfter !== 0) {
              jit = compileInto(a, pc);
              fn = jit[pc] as BlockFn | 0;
            }
            if (fn !== 0) {
              f.gas = gas;
              pc = fn(s, sp, f);
              sp = f.sp;
              gas = f.gas;
              if (pc < 0) return runChecked(f);
              continue;
            }
          }
          continue;
        }
      }
      break;
    }
  } catch (err) {
    if (!(err instanceof VmError)) throw err;
    f.gas = 0;
    return { success: false, gasLeft: 0, output: EMPTY, error: err.message };
  }
  if (f.reverted) return { success: false, gasLeft: gas, output: f.output, error: ERR.reverted };
  return { success: true, gasLeft: gas, output: f.output, error: "" };
}

/**
 * runFrame's loop opcode by opcode, with the stack and the static gas checked before each, as the
 * yellow paper runs it: from a block whose check failed (or whose dynamic gas left less than the rest
 * of it needs) to the frame's end or its next call. A frame only comes here when it is about to fail,
 * so the error and the gas are exactly those of running every opcode with its own checks.
 */
function runChecked(f: Frame): FrameResult {
  const code = f.analysis.code;
  try {
    while (!f.stopped) {
      const op = code[f.pc] as number;
      const sp = f.sp;
      if (sp < (OP_MIN_STACK[op] as number)) {
        throw new VmError(`stack underflow (${sp} <=> ${OP_MIN_STACK[op]})`);
      }
      // geth's text: the stack length and the opcode's own limit (1024 + pops − pushes).
      if (sp > (OP_MAX_STACK[op] as number)) throw new VmError(`stack limit reached ${sp} (${OP_MAX_STACK[op]})`);
      // useGas: a frame with a reserve refills from it.
      f.useGas(OP_GAS[op] as number);
      f.pc++;
      (OP_HANDLERS[op] as (f: Frame) => void)(f);
    }
  } catch (err) {
    if (!(err instanceof VmError)) throw err;
    f.gas = 0;
    return { success: false, gasLeft: 0, output: EMPTY, error: err.message };
  }
  if (f.reverted) return { success: false, gasLeft: f.gas, output: f.output, error: ERR.reverted };
  return { success: true, gasLeft: f.gas, output: f.output, error: "" };
}

/** The name of an opcode (tracing, tests). */
export function opcodeName(op: number): string {
  return OPCODES[op]?.name ?? "";
}

// ---- tracing ------------------------------------------------------------------------------------

/**
 * geth's constant gas where it differs from the table's static gas (the engine charges these in the
 * handler): EIP-2929's warm cost of the account-reading opcodes and calls, CREATE's 32000. Only the
 * cost a trace reports for an opcode that fails before it runs (stack, gas) uses it.
 */
const GETH_CONSTANT_GAS: Int32Array = (() => {
  const t = Int32Array.from(OPCODES, (o) => o.gas);
  for (const op of [0x31, 0x3b, 0x3c, 0x3f, CALL, CALLCODE, DELEGATECALL, STATICCALL]) t[op] = G_WARM_ACCESS;
  t[CREATE] = G_CREATE;
  t[CREATE2] = G_CREATE;
  return t;
})();

/** Whether a fault is one geth finds before the opcode executes (its struct log then carries it). */
function faultsBeforeExecution(message: string): boolean {
  return (
    message.startsWith(ERR.outOfGas) ||
    message.startsWith("stack ") ||
    message === ERR.gasUintOverflow ||
    message === ERR.maxInitCodeSize
  );
}

function frameType(kind: number): FrameType {
  if (kind === CALLCODE) return "CALLCODE";
  if (kind === DELEGATECALL) return "DELEGATECALL";
  if (kind === STATICCALL) return "STATICCALL";
  if (kind === CREATE) return "CREATE";
  if (kind === CREATE2) return "CREATE2";
  return "CALL";
}

// ---- the host -------------------------------------------------------------------------------------

/** What a transaction's frames see of it. */
export interface TxEnv {
  fork: Fork;
  block: BlockEnv;
  origin: Uint8Array;
  gasPrice: bigint;
  blobHashes: readonly Uint8Array[];
  /** See ExecOptions.interrupt (transaction.ts). */
  interrupt?: (() => void) | undefined;
  /** Tracing and console.log hooks (undefined: none). */
  hooks?: EngineHooks | undefined;
  /** See ExecOptions.precompiles (transaction.ts); undefined: the fork's table. */
  precompiles?: ((addr: Uint8Array) => Precompile | undefined) | undefined;
  /** See ExecOptions.extensions. */
  extensions?: PrecompileExtensions | undefined;
}

function failed(gasLeft: number, error: string): FrameResult {
  return { success: false, gasLeft, output: EMPTY, error };
}

/** A creation's outcome: a frame result and the address it was for. */
export interface CreateResult extends FrameResult {
  address: Uint8Array;
}

/**
 * Stacks and memories a finished transaction handed back (Evm.release), by depth, for the next one: a
 * call allocates no 1024-slot stack or memory buffer of its own. Kept for the shallow depths only, and
 * memories only while small.
 */
const spareStacks: (Word[] | undefined)[] = [];
const spareMemories: (Memory | undefined)[] = [];
const SPARE_DEPTHS = 16;
const SPARE_MEMORY_BYTES = 1 << 16;

/**
 * A log as LOG0-4 record it: the topics stay the stack's words until something reads them (the bytes
 * are made once, then kept). A token loop logs thousands of times per call and most eth_call logs are
 * never read; three or four 32-byte arrays per log, each kept until the call ends, were a large part of
 * the garbage collector's work (bench:engine's LOG3 row).
 */
class LogRecord implements EngineLog {
  readonly address: Uint8Array;
  readonly data: Uint8Array;
  readonly #words: Word[];
  #topics: Uint8Array[] | undefined = undefined;

  constructor(address: Uint8Array, words: Word[], data: Uint8Array) {
    this.address = address;
    this.#words = words;
    this.data = data;
  }

  get topics(): Uint8Array[] {
    let topics = this.#topics;
    if (topics === undefined) {
      topics = this.#words.map(wordToBytes);
      this.#topics = topics;
    }
    return topics;
  }
}

/** The host of one transaction's frames. Create one per transaction (or call). */
export class Evm implements Host {
  readonly state: EngineState;
  readonly fork: Fork;
  readonly block: BlockEnv;
  readonly origin: Uint8Array;
  readonly gasPrice: bigint;
  readonly blobHashes: readonly Uint8Array[];
  readonly interrupt: (() => void) | undefined;
  readonly hooks: EngineHooks | undefined;
  readonly #precompiles: ((addr: Uint8Array) => Precompile | undefined) | undefined;
  readonly #extensions: PrecompileExtensions | undefined;
  ticks = 0;
  readonly logs: EngineLog[] = [];
  /** EIP-3529 refund counter. */
  refund = 0;
  /** Accounts touched (EIP-161: deleted at the end when empty). */
  readonly touched: Uint8Array[] = [];
  /** EIP-6780: accounts created in this transaction that self-destructed (deleted at the end). */
  readonly destructs: Uint8Array[] = [];
  /** EIP-6780: accounts created in this transaction (hex keys). */
  readonly created = new Set<string>();
  readonly #warm = new Set<string>();
  readonly #warmUndo: string[] = [];
  /** EIP-2929 warm slots by address hex; the undo log holds the set and the slot of each warming. */
  readonly #warmSlots = new Map<string, Set<Word>>();
  readonly #warmSlotUndo: (Set<Word> | Word)[] = [];
  /** EIP-1153 transient storage by address hex; undo entries are (map, slot, previous value) triples. */
  readonly #transient = new Map<string, Map<Word, Word>>();
  readonly #transientUndo: (Map<Word, Word> | Word | undefined)[] = [];
  readonly #stacks: Word[][] = [];
  readonly #memories: Memory[] = [];
  // Tracing (all undefined/false without hooks: the untraced paths test one field).
  /** onEnter or onExit is set. */
  readonly #framed: boolean;
  readonly #onEnter: ((frame: FrameEnter) => void) | undefined;
  readonly #watch: ReadonlyMap<string, (input: Uint8Array) => void> | undefined;
  readonly #onExit: ((frame: FrameExit) => void) | undefined;
  readonly #onOpcode: ((step: OpcodeStep) => void) | undefined;
  readonly #onOpcodeEnd: ((cost: number, error: string) => void) | undefined;
  readonly #onLog: ((log: EngineLog) => void) | undefined;
  /** The start gas of the running frame at each depth (onExit's gasUsed). */
  readonly #startGas: number[] = [];
  readonly #step: OpcodeStep | undefined;
  /** The traced loop's current opcode: its frame and gas before; open until onOpcodeEnd was called. */
  #stepOpen = false;
  #stepGas = 0;
  #stepFrame: Frame | undefined;

  constructor(state: EngineState, env: TxEnv) {
    this.state = state;
    this.fork = env.fork;
    this.block = env.block;
    this.origin = env.origin;
    this.gasPrice = env.gasPrice;
    this.blobHashes = env.blobHashes;
    this.interrupt = env.interrupt;
    this.#precompiles = env.precompiles;
    this.#extensions = env.extensions;
    const hooks = env.hooks;
    this.hooks = hooks;
    this.#onEnter = hooks?.onEnter?.bind(hooks);
    this.#watch = hooks?.watch !== undefined && hooks.watch.size > 0 ? hooks.watch : undefined;
    this.#onExit = hooks?.onExit?.bind(hooks);
    this.#framed = this.#onEnter !== undefined || this.#onExit !== undefined;
    this.#onOpcode = hooks?.onOpcode?.bind(hooks);
    this.#onOpcodeEnd = hooks?.onOpcodeEnd?.bind(hooks);
    this.#onLog = hooks?.onLog?.bind(hooks);
    this.#step =
      this.#onOpcode === undefined
        ? undefined
        : {
            pc: 0,
            op: 0,
            gas: 0,
            depth: 0,
            stack: [],
            stackSize: 0,
            memory: EMPTY,
            refund: 0,
            address: EMPTY,
            returnData: EMPTY,
          };
  }

  #precompileAt(addr: Uint8Array): Precompile | undefined {
    return this.#precompiles === undefined ? precompileAt(addr, this.fork, this.#extensions) : this.#precompiles(addr);
  }

  /** Hands this transaction's stacks and memories to the next one (call once it has ended). */
  release(): void {
    const n = Math.min(this.#stacks.length, SPARE_DEPTHS);
    for (let d = 0; d < n; d++) {
      const stack = this.#stacks[d];
      if (stack !== undefined) spareStacks[d] = stack;
      const memory = this.#memories[d];
      if (memory !== undefined && memory.buf.length <= SPARE_MEMORY_BYTES) {
        memory.reset();
        spareMemories[d] = memory;
      }
    }
    this.#stacks.length = 0;
    this.#memories.length = 0;
  }

  /** Gas above 2^53 − 1 for the frame being entered (Frame.reserve). */
  #childReserve = 0n;
  /** Gas above 2^53 − 1 that the last finished frame or immediate result hands back. */
  #returnedReserve = 0n;

  /** The reserve the transaction's own frame ended with (see Frame.reserve); read once after call/create. */
  takeReturnedReserve(): bigint {
    const r = this.#returnedReserve;
    this.#returnedReserve = 0n;
    return r;
  }

  /** Address words this transaction has turned into keys and bytes (CALL targets, BALANCE, ...). */
  readonly #addresses = new Map<Word, AddressRef>();
  /** The hex key of each address array addressOf handed out. */
  readonly #keys = new WeakMap<Uint8Array, string>();

  addressOf(word: Word): AddressRef {
    let a = this.#addresses.get(word);
    if (a === undefined) {
      const key = addressHexOfWord(word);
      a = { key, bytes: hexToAddress(key) };
      this.#addresses.set(word, a);
      this.#keys.set(a.bytes, key);
    }
    return a;
  }

  /** An address's hex key: remembered for the arrays addressOf made, computed for others. */
  #keyOf(addr: Uint8Array): string {
    return this.#keys.get(addr) ?? addressKey(addr);
  }

  // -- journaled tx-wide sets --

  /**
   * Addresses warm for the whole transaction (the active precompiles): one shared set per fork and
   * extension set, consulted before the journaled one, instead of ~18 insertions per transaction.
   */
  #alwaysWarm: ReadonlySet<string> = NONE_WARM;

  /** Makes `keys` warm from the start of the transaction to its end (never undone by a revert). */
  warmForTransaction(keys: ReadonlySet<string>): void {
    this.#alwaysWarm = keys;
  }

  /** Tells the transaction an address's hex key it already has (the sender, the recipient). */
  knowKey(addr: Uint8Array, key: string): void {
    this.#keys.set(addr, key);
  }

  warmAddress(key: string): boolean {
    if (this.#alwaysWarm.has(key) || this.#warm.has(key)) return false;
    this.#warm.add(key);
    this.#warmUndo.push(key);
    return true;
  }

  warmSlot(addrKey: string, slot: Word): boolean {
    let set = this.#warmSlots.get(addrKey);
    if (set === undefined) {
      set = new Set();
      this.#warmSlots.set(addrKey, set);
    } else if (set.has(slot)) return false;
    set.add(slot);
    this.#warmSlotUndo.push(set, slot);
    return true;
  }

  isWarm(key: string): boolean {
    return this.#alwaysWarm.has(key) || this.#warm.has(key);
  }

  tload(addrKey: string, slot: Word): Word {
    return this.#transient.get(addrKey)?.get(slot) ?? 0;
  }

  tstore(addrKey: string, slot: Word, value: Word): void {
    let map = this.#transient.get(addrKey);
    if (map === undefined) {
      map = new Map();
      this.#transient.set(addrKey, map);
    }
    this.#transientUndo.push(map, slot, map.get(slot));
    map.set(slot, value);
  }

  addRefund(delta: number): void {
    this.refund += delta;
  }

  log(address: Uint8Array, topics: Word[], data: Uint8Array): void {
    const entry = new LogRecord(address, topics, data);
    this.logs.push(entry);
    if (this.#onLog !== undefined) {
      if (this.#stepOpen) this.#closeStep();
      this.#onLog(entry);
    }
  }

  touch(addr: Uint8Array): void {
    this.touched.push(addr);
  }

  snapshot(): Snapshot {
    return {
      mark: this.state.mark(),
      warm: this.#warmUndo.length,
      warmSlots: this.#warmSlotUndo.length,
      transient: this.#transientUndo.length,
      logs: this.logs.length,
      touched: this.touched.length,
      destructs: this.destructs.length,
      refund: this.refund,
    };
  }

  commit(s: Snapshot): void {
    this.state.keep(s.mark);
  }

  rollback(s: Snapshot): void {
    this.state.revertTo(s.mark);
    const warm = this.#warmUndo;
    while (warm.length > s.warm) this.#warm.delete(warm.pop() as string);
    const wu = this.#warmSlotUndo;
    while (wu.length > s.warmSlots) {
      const slot = wu.pop() as Word;
      (wu.pop() as Set<Word>).delete(slot);
    }
    const tu = this.#transientUndo;
    while (tu.length > s.transient) {
      const prev = tu.pop() as Word | undefined;
      const slot = tu.pop() as Word;
      const map = tu.pop() as Map<Word, Word>;
      if (prev === undefined) map.delete(slot);
      else map.set(slot, prev);
    }
    this.logs.length = s.logs;
    this.touched.length = s.touched;
    this.destructs.length = s.destructs;
    this.refund = s.refund;
  }

  // -- balances --

  /** Credits `addr`, creating it when missing (even for 0), and touches it (EIP-161). */
  addBalance(addr: Uint8Array, amount: bigint, key?: string): void {
    this.touched.push(addr);
    const a = this.state.account(addr, key);
    if (amount === 0n && a.exists) return;
    this.state.setAccount(addr, accountWith(a, a.nonce, a.balance + amount, true), key);
  }

  subBalance(addr: Uint8Array, amount: bigint): void {
    if (amount === 0n) return;
    const a = this.state.account(addr);
    this.state.setAccount(addr, accountWith(a, a.nonce, a.balance - amount));
  }

  transfer(from: Uint8Array, to: Uint8Array, value: bigint, toKey?: string): void {
    this.subBalance(from, value);
    this.addBalance(to, value, toKey);
  }

  selfdestruct(f: Frame, beneficiary: Uint8Array): void {
    const self = f.address;
    const balance = this.state.account(self).balance;
    // EIP-6780: the balance always moves; the account goes only when created in this transaction.
    this.subBalance(self, balance);
    this.addBalance(beneficiary, balance);
    if (this.created.has(f.addressKey)) {
      // Its balance is gone at once (burnt when it names itself), the account at the end.
      const a = this.state.account(self);
      if (a.balance !== 0n) this.state.setAccount(self, accountWith(a, a.nonce, 0n));
      this.destructs.push(self);
    }
    if (this.#framed) this.#traceSelfdestruct(f, beneficiary, balance);
  }

  // -- frames --

  #newFrame(
    code: Uint8Array,
    address: Uint8Array,
    key: string,
    caller: Uint8Array,
    value: bigint,
    input: Uint8Array,
    gas: number,
    isStatic: boolean,
    depth: number,
  ): Frame {
    let stack = this.#stacks[depth];
    if (stack === undefined) {
      stack = spareStacks[depth] ?? new Array<Word>(STACK_LIMIT).fill(0);
      spareStacks[depth] = undefined;
      this.#stacks[depth] = stack;
    }
    let memory = this.#memories[depth];
    if (memory === undefined) {
      memory = spareMemories[depth] ?? new Memory();
      spareMemories[depth] = undefined;
      this.#memories[depth] = memory;
    }
    return new Frame(
      this,
      code,
      analysisOf(code),
      address,
      key,
      caller,
      value,
      input,
      gas,
      isStatic,
      depth,
      stack,
      memory,
    );
  }

  /**
   * A message call. `address` is the account whose context runs (storage, ADDRESS), `codeAddress`
   * the one whose code runs; CALL moves `value` from caller to address, CALLCODE only checks the
   * caller can pay it. geth's Call/CallCode/DelegateCall/StaticCall.
   */
  call(c: CallInputs, reserve = 0n): FrameResult {
    this.#childReserve = reserve;
    return this.#drive(this.#framed ? this.#enterCallTraced(c, c.caller) : this.#enterCall(c));
  }

  /** CREATE/CREATE2 (and creation transactions): geth's evm.create. The caller's nonce is bumped here. */
  create(
    caller: Uint8Array,
    value: bigint,
    initcode: Uint8Array,
    gas: number,
    depth: number,
    address: Uint8Array,
    reserve = 0n,
  ): CreateResult {
    this.#childReserve = reserve;
    const first = this.#framed
      ? this.#enterCreateTraced(CREATE, caller, value, initcode, gas, depth, address)
      : this.#enterCreate(caller, value, initcode, gas, depth, address);
    return { ...this.#drive(first), address };
  }

  /** Runs frames until `top` returns: sub-calls suspend their parent instead of recursing. */
  #drive(top: FrameResult | Frame): FrameResult {
    if (!(top instanceof Frame)) return top;
    let f = top;
    for (;;) {
      const r = this.#onOpcode === undefined ? runFrame(f) : this.#runFrameTraced(f);
      const child = f.child;
      if (child !== undefined) {
        f.child = undefined;
        f = child;
        continue;
      }
      const res = this.#exit(f, r);
      this.#returnedReserve = f.reserve !== 0n && (res.success || res.error === ERR.reverted) ? f.reserve : 0n;
      if (this.#framed) this.#traceExit(f.depth, this.#startGas[f.depth] as number, res);
      const parent = f.parent;
      if (parent === undefined) return res;
      if (f.createAddress !== undefined) this.#resumeCreate(parent, res, f.createAddress);
      else this.#resumeCall(parent, res, f.retAt, f.retSize);
      f = parent;
    }
  }

  /** The result when no code runs (failure before the frame, precompile, no code), else the frame. */
  /**
   * #enterCallBody with the gas above 2^53 − 1 that opCall or call() set aside for the new frame
   * (`#childReserve`): the frame gets it, or an immediate result hands it back (`#returnedReserve`).
   */
  #enterCall(c: CallInputs): FrameResult | Frame {
    const reserve = this.#childReserve;
    this.#childReserve = 0n;
    return this.#withReserve(this.#enterCallBody(c), reserve);
  }

  #enterCreate(
    caller: Uint8Array,
    value: bigint,
    initcode: Uint8Array,
    gas: number,
    depth: number,
    address: Uint8Array,
  ): FrameResult | Frame {
    const reserve = this.#childReserve;
    this.#childReserve = 0n;
    return this.#withReserve(this.#enterCreateBody(caller, value, initcode, gas, depth, address), reserve);
  }

  #withReserve(next: FrameResult | Frame, reserve: bigint): FrameResult | Frame {
    if (reserve === 0n) return next;
    if (next instanceof Frame) next.reserve = reserve;
    // An immediate result hands its gas back unless it failed exceptionally (then gasLeft is 0):
    // a call too deep or without the balance returns all of it.
    else this.#returnedReserve = next.success || next.gasLeft > 0 || next.error === ERR.reverted ? reserve : 0n;
    return next;
  }

  #enterCallBody(c: CallInputs): FrameResult | Frame {
    const { kind, caller, address, codeAddress, value, input, gas, isStatic, depth } = c;
    if (this.#watch !== undefined) this.#watch.get(this.#keyOf(codeAddress))?.(input);
    if (depth > MAX_CALL_DEPTH) return failed(gas, ERR.depth);
    const state = this.state;
    if ((kind === CALL || kind === CALLCODE) && value > 0n && state.account(caller).balance < value) {
      return failed(gas, ERR.insufficientBalance);
    }
    const snap = this.snapshot();
    const pre = this.#precompileAt(codeAddress);
    // A call to a missing account creates it, empty; EIP-161 removes it at the end of the transaction.
    // geth skips the creation for calls without value, ethereumjs does not: the account is gone either
    // way, but the overlay keeps ethereumjs' tombstone (incarnation + 1), and the app hash follows it.
    const key = this.#keyOf(address);
    if (kind === CALL || kind === STATICCALL) this.transfer(caller, address, value, key);
    if (pre !== undefined) {
      const r = pre(input.slice(), BigInt(gas), this.fork);
      if (r.ok === true && r.gasUsed <= BigInt(gas)) {
        this.commit(snap);
        return { success: true, gasLeft: gas - Number(r.gasUsed), output: r.output, error: "" };
      }
      this.rollback(snap);
      if (r.ok === "revert") {
        return { success: false, gasLeft: Math.max(0, gas - Number(r.gasUsed)), output: r.output, error: ERR.reverted };
      }
      return failed(0, r.ok === false ? r.error : ERR.outOfGas);
    }
    let code = state.code(codeAddress, this.#keyOf(codeAddress));
    if (FORK_RULES[this.fork].setCode) {
      const target = delegationTarget(code);
      if (target !== undefined) code = state.code(target);
    }
    if (code.length === 0) {
      this.commit(snap);
      return { success: true, gasLeft: gas, output: EMPTY, error: "" };
    }
    interruptNow(this);
    const f = this.#newFrame(code, address, key, caller, value, input, gas, isStatic, depth);
    f.snap = snap;
    f.kind = kind;
    return f;
  }

  #enterCreateBody(
    caller: Uint8Array,
    value: bigint,
    initcode: Uint8Array,
    gas: number,
    depth: number,
    address: Uint8Array,
  ): FrameResult | Frame {
    const state = this.state;
    if (depth > MAX_CALL_DEPTH) return failed(gas, ERR.depth);
    const from = state.account(caller);
    if (from.balance < value) return failed(gas, ERR.insufficientBalance);
    if (from.nonce >= MAX_NONCE) return failed(gas, ERR.nonceOverflow);
    state.setAccount(caller, accountWith(from, from.nonce + 1n, from.balance));
    const key = addressKey(address);
    this.warmAddress(key);
    const target = state.account(address);
    if (
      (target.exists && (target.nonce !== 0n || !equalBytes(target.codeHash, KECCAK256_NULL))) ||
      state.hasStorage(address)
    ) {
      return failed(0, ERR.collision);
    }
    const snap = this.snapshot();
    state.wipeStorage(address);
    const wiped = state.account(address);
    state.setAccount(address, {
      exists: true,
      nonce: 1n,
      balance: wiped.balance,
      codeHash: KECCAK256_NULL,
      incarnation: wiped.incarnation,
    });
    this.created.add(key);
    this.transfer(caller, address, value);
    if (initcode.length === 0) {
      this.commit(snap);
      return { success: true, gasLeft: gas, output: EMPTY, error: "" };
    }
    const f = this.#newFrame(initcode, address, key, caller, value, EMPTY, gas, false, depth);
    f.snap = snap;
    f.kind = CREATE;
    f.createAddress = address;
    return f;
  }

  /** Ends a frame: its checkpoint kept or undone; a creation's code checked, charged and deployed. */
  #exit(f: Frame, r: FrameResult): FrameResult {
    f.memory.reset();
    const snap = f.snap as Snapshot;
    if (!r.success) {
      this.rollback(snap);
      return r;
    }
    if (f.createAddress === undefined) {
      this.commit(snap);
      return r;
    }
    const code = r.output;
    let left = r.gasLeft - code.length * G_CODE_DEPOSIT;
    if (left < 0 && f.reserve !== 0n) {
      // A frame with a reserve pays the deposit from gas + reserve.
      const total = BigInt(r.gasLeft) + f.reserve - BigInt(code.length * G_CODE_DEPOSIT);
      if (total >= 0n) {
        f.setTotalGas(total);
        left = f.gas;
      }
    }
    let error = "";
    if (code.length > MAX_CODE_SIZE) error = ERR.maxCodeSize;
    else if (code.length > 0 && code[0] === 0xef) error = ERR.invalidCode;
    else if (left < 0) error = ERR.codeStoreOutOfGas;
    if (error !== "") {
      this.rollback(snap);
      return failed(0, error);
    }
    if (code.length > 0) this.state.setCode(f.address, code);
    this.commit(snap);
    return { success: true, gasLeft: left, output: code, error: "" };
  }

  /** A CALL-family result into its caller: success flag, output, gas back, RETURNDATA. */
  /** Returns a finished child's gas left (and its reserve, `#returnedReserve`) to `f`. */
  #giveBack(f: Frame, gasLeft: number): void {
    const back = this.#returnedReserve;
    if (back === 0n && f.reserve === 0n) {
      // Exact while it stays a safe integer; a frame that had a reserve before the call (now spent on
      // it) can get back more than 2^53 − 1.
      const sum = f.gas + gasLeft;
      if (sum <= MAX_FRAME_GAS) {
        f.gas = sum;
        return;
      }
    }
    this.#returnedReserve = 0n;
    f.setTotalGas(f.totalGas() + BigInt(gasLeft) + back);
  }

  #resumeCall(f: Frame, r: FrameResult, retAt: number, retSize: number): void {
    f.stack[f.sp++] = r.success ? 1 : 0;
    if (r.output.length > 0 && retSize > 0) {
      f.memory.buf.set(r.output.subarray(0, Math.min(retSize, r.output.length)), retAt);
    }
    this.#giveBack(f, r.gasLeft);
    f.returnData = r.output;
    f.stopped = false;
  }

  /** A creation's result into its creator: the address or 0, gas back, RETURNDATA (revert data only). */
  #resumeCreate(f: Frame, r: FrameResult, address: Uint8Array): void {
    f.stack[f.sp++] = r.success ? bytesToWord(address) : 0;
    this.#giveBack(f, r.gasLeft);
    f.returnData = r.success || r.error !== ERR.reverted ? EMPTY : r.output;
    f.stopped = false;
  }

  // -- the CALL and CREATE opcodes --

  /**
   * The 63/64 rule on a frame whose gas has a reserve: takes min(wanted, all but 1/64) from `f` and
   * returns the new frame's gas, the part above 2^53 − 1 (with `stipend`) set aside in #childReserve.
   */
  #splitOff(f: Frame, wanted: bigint, stipend: bigint): number {
    const total = f.totalGas();
    const cap = total - total / 64n;
    const take = wanted < cap ? wanted : cap;
    f.setTotalGas(total - take);
    const child = take + stipend;
    const gas = child > MAX_FRAME_GAS_BIG ? MAX_FRAME_GAS : Number(child);
    this.#childReserve = child - BigInt(gas);
    return gas;
  }

  opCall(f: Frame, op: number): void {
    const s = f.stack;
    const hasValue = op === CALL || op === CALLCODE;
    const n = hasValue ? 7 : 6;
    f.sp -= n;
    const sp = f.sp;
    // Stack, top first: gas, address, [value], inOffset, inSize, outOffset, outSize.
    const gasWord = s[sp + n - 1] as Word;
    const ref = this.addressOf(s[sp + n - 2] as Word);
    const toKey = ref.key;
    const value = hasValue ? toBig(s[sp + 4] as Word) : 0n;
    const inOff = s[sp + 3] as Word;
    const inSize = s[sp + 2] as Word;
    const outOff = s[sp + 1] as Word;
    const outSize = s[sp] as Word;
    if (op === CALL && f.isStatic && value !== 0n) throw new VmError(ERR.writeProtection);
    f.useGas(this.warmAddress(toKey) ? G_COLD_ACCOUNT : G_WARM_ACCESS);
    const to = ref.bytes;
    if (FORK_RULES[this.fork].setCode) {
      const target = delegationTarget(this.state.code(to, toKey));
      if (target !== undefined) f.useGas(this.warmAddress(addressKey(target)) ? G_COLD_ACCOUNT : G_WARM_ACCESS);
    }
    const inAt = f.expand(inOff, inSize);
    const outAt = f.expand(outOff, outSize);
    if (value !== 0n) {
      f.useGas(G_CALL_VALUE);
      if (op === CALL) {
        const a = this.state.account(to, toKey);
        if (!a.exists || (a.nonce === 0n && a.balance === 0n && equalBytes(a.codeHash, KECCAK256_NULL))) {
          f.useGas(G_NEW_ACCOUNT);
        }
      }
    }
    let gas: number;
    if (f.reserve === 0n) {
      const cap = allButOne64th(f.gas);
      const callGas = typeof gasWord === "number" && gasWord < cap ? gasWord : cap;
      f.useGas(callGas);
      gas = callGas;
      if (value !== 0n) {
        // The stipend can take a call of nearly 2^53 gas past it: the excess goes to the reserve.
        if (callGas > MAX_FRAME_GAS - G_CALL_STIPEND) {
          this.#childReserve = BigInt(callGas) + BigInt(G_CALL_STIPEND) - MAX_FRAME_GAS_BIG;
          gas = MAX_FRAME_GAS;
        } else gas = callGas + G_CALL_STIPEND;
      }
    } else gas = this.#splitOff(f, toBig(gasWord), value !== 0n ? BigInt(G_CALL_STIPEND) : 0n);
    // The callee reads its input while this frame waits, and this frame's memory cannot change until
    // it resumes: a view serves (copied for tracers, which keep it, and for precompiles, whose output can
    // be their input).
    const input = this.#framed ? f.memory.read(inAt, inSize as number) : f.memory.view(inAt, inSize as number);
    const depth = f.depth + 1;
    if (this.#stepOpen) this.#closeStep();
    // The CALL family's context: whose storage runs (address), as whom (caller), with what value.
    const isStatic = op === STATICCALL || f.isStatic;
    const c: CallInputs =
      op === CALL || op === STATICCALL
        ? { kind: op, caller: f.address, address: to, codeAddress: to, value, input, gas, isStatic, depth }
        : op === CALLCODE
          ? { kind: op, caller: f.address, address: f.address, codeAddress: to, value, input, gas, isStatic, depth }
          : {
              kind: op,
              caller: f.caller,
              address: f.address,
              codeAddress: to,
              value: f.value,
              input,
              gas,
              isStatic,
              depth,
            };
    const next = this.#framed ? this.#enterCallTraced(c, f.address) : this.#enterCall(c);
    const retSize = outSize as number;
    if (next instanceof Frame) {
      next.parent = f;
      next.retAt = outAt;
      next.retSize = retSize;
      f.child = next;
      f.stopped = true;
    } else this.#resumeCall(f, next, outAt, retSize);
  }

  opCreate(f: Frame, op: number): void {
    if (f.isStatic) throw new VmError(ERR.writeProtection);
    const s = f.stack;
    const n = op === CREATE2 ? 4 : 3;
    f.sp -= n;
    const sp = f.sp;
    const value = toBig(s[sp + n - 1] as Word);
    const off = s[sp + n - 2] as Word;
    const size = s[sp + n - 3] as Word;
    if (size > MAX_INITCODE_SIZE) throw new VmError(ERR.maxInitCodeSize);
    const at = f.expand(off, size);
    const len = size as number;
    f.useGas(G_CREATE + G_INITCODE_WORD * words(len) + (op === CREATE2 ? G_KECCAK_WORD * words(len) : 0));
    const initcode = f.memory.read(at, len);
    let address: Uint8Array;
    if (op === CREATE2) address = create2Address(f.address, wordToBytes(s[sp] as Word), initcode);
    else address = createAddress(f.address, this.state.account(f.address).nonce);
    // geth's CREATE cost leaves out the gas handed to the new frame (charged while it executes).
    if (this.#stepOpen) this.#closeStep();
    let gas: number;
    if (f.reserve === 0n) {
      gas = allButOne64th(f.gas);
      f.useGas(gas);
    } else gas = this.#splitOff(f, MAX_WORD, 0n);
    const next = this.#framed
      ? this.#enterCreateTraced(op, f.address, value, initcode, gas, f.depth + 1, address)
      : this.#enterCreate(f.address, value, initcode, gas, f.depth + 1, address);
    if (next instanceof Frame) {
      next.parent = f;
      f.child = next;
      f.stopped = true;
    } else this.#resumeCreate(f, next, address);
  }

  // -- tracing (only with hooks) --

  /** #enterCall with onEnter first (`from`: the frame that calls) and, for a frame that runs no code, onExit at once. */
  #enterCallTraced(c: CallInputs, from: Uint8Array): FrameResult | Frame {
    this.#onEnter?.({
      depth: c.depth,
      type: frameType(c.kind),
      from,
      to: c.address,
      codeAddress: c.codeAddress,
      precompile: this.#precompileAt(c.codeAddress) !== undefined,
      input: c.input,
      gas: BigInt(c.gas),
      value: c.value,
    });
    this.#startGas[c.depth] = c.gas;
    const next = this.#enterCall(c);
    if (!(next instanceof Frame)) this.#traceExit(c.depth, c.gas, next);
    return next;
  }

  #enterCreateTraced(
    kind: number,
    caller: Uint8Array,
    value: bigint,
    initcode: Uint8Array,
    gas: number,
    depth: number,
    address: Uint8Array,
  ): FrameResult | Frame {
    this.#onEnter?.({
      depth,
      type: frameType(kind),
      from: caller,
      to: address,
      codeAddress: address,
      precompile: false,
      input: initcode,
      gas: BigInt(gas),
      value,
    });
    this.#startGas[depth] = gas;
    const next = this.#enterCreate(caller, value, initcode, gas, depth, address);
    if (!(next instanceof Frame)) this.#traceExit(depth, gas, next);
    return next;
  }

  #traceExit(depth: number, startGas: number, r: FrameResult): void {
    this.#onExit?.({
      depth,
      output: r.output,
      gasUsed: BigInt(startGas - r.gasLeft),
      error: r.error,
      reverted: !r.success,
    });
  }

  /** geth reports SELFDESTRUCT as a frame of its own that opens and closes at once. */
  #traceSelfdestruct(f: Frame, beneficiary: Uint8Array, balance: bigint): void {
    if (this.#stepOpen) this.#closeStep();
    const depth = f.depth + 1;
    this.#onEnter?.({
      depth,
      type: "SELFDESTRUCT",
      from: f.address,
      to: beneficiary,
      codeAddress: beneficiary,
      precompile: this.#precompileAt(beneficiary) !== undefined,
      input: EMPTY,
      gas: 0n,
      value: balance,
    });
    this.#onExit?.({ depth, output: EMPTY, gasUsed: 0n, error: "", reverted: false });
  }

  /** Reports the open opcode's cost (everything charged so far): before it opens a frame or logs. */
  #closeStep(): void {
    this.#stepOpen = false;
    const f = this.#stepFrame as Frame;
    this.#onOpcodeEnd?.(this.#stepGas - f.gas, "");
  }

  /**
   * runFrame with the opcode hooks: onOpcode before each opcode, onOpcodeEnd once its cost is known.
   * Runs the same checks and handlers in the same order as runFrame (kept apart so that loop stays as
   * it is).
   */
  #runFrameTraced(f: Frame): FrameResult {
    const onOpcode = this.#onOpcode as (step: OpcodeStep) => void;
    const step = this.#step as OpcodeStep;
    const code = f.code;
    const len = code.length;
    const mem = f.memory;
    this.#stepFrame = f;
    let op = 0;
    let gasBefore = 0;
    /** 0: checking the stack, 1: charging the static gas, 2: in the handler. */
    let phase = 0;
    try {
      while (!f.stopped) {
        const pc = f.pc;
        op = pc < len ? (code[pc] as number) : 0;
        const sp = f.sp;
        gasBefore = f.gas;
        step.pc = pc;
        step.op = op;
        step.gas = gasBefore;
        step.depth = f.depth + 1;
        step.stack = f.stack;
        step.stackSize = sp;
        step.memory = mem.view(0, mem.size);
        step.refund = this.refund;
        step.address = f.address;
        step.returnData = f.returnData;
        onOpcode(step);
        this.#stepGas = gasBefore;
        this.#stepOpen = true;
        phase = 0;
        if (sp < (OP_MIN_STACK[op] as number)) {
          throw new VmError(`stack underflow (${sp} <=> ${OP_MIN_STACK[op]})`);
        }
        if (sp > (OP_MAX_STACK[op] as number)) throw new VmError(`stack limit reached ${sp} (${OP_MAX_STACK[op]})`);
        phase = 1;
        f.useGas(OP_GAS[op] as number);
        f.pc = pc + 1;
        phase = 2;
        (OP_HANDLERS[op] as (f: Frame) => void)(f);
        if (this.#stepOpen) {
          this.#stepOpen = false;
          this.#onOpcodeEnd?.(gasBefore - f.gas, "");
        }
      }
    } catch (err) {
      if (!(err instanceof VmError)) throw err;
      if (this.#stepOpen) {
        this.#stepOpen = false;
        const before = faultsBeforeExecution(err.message);
        let cost: number;
        if (phase === 0) cost = GETH_CONSTANT_GAS[op] as number;
        else if (phase === 1) cost = OP_GAS[op] as number;
        else {
          cost = gasBefore - f.gas;
          const constant = GETH_CONSTANT_GAS[op] as number;
          if (before && cost < constant) cost = constant;
        }
        this.#onOpcodeEnd?.(cost, before ? err.message : "");
      }
      return { success: false, gasLeft: 0, output: EMPTY, error: err.message };
    }
    if (f.reverted) return { success: false, gasLeft: f.gas, output: f.output, error: ERR.reverted };
    return { success: true, gasLeft: f.gas, output: f.output, error: "" };
  }
}
