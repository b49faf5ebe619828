import { ComethError } from "../util/errors.js";
import type { CodeAnalysis } from "./analysis.js";
import { hexOfBytes } from "./bytes.js";
import { G_MEMORY, G_QUAD_DIVISOR, MAX_FRAME_GAS, MAX_MEMORY_BYTES } from "./gas.js";
import type { Memory } from "./memory.js";
import type { BlockEnv, EngineState, Fork } from "./types.js";
import { bytesToWord, type Word } from "./words.js";

/**
 * A call frame (the code running at one depth) and the host it runs in: what opcodes.ts's handlers
 * see. The host (interpreter.ts's Evm) owns everything that outlives a frame: the state journal, the
 * access sets, transient storage, logs, refunds, and sub-calls.
 */

export const EMPTY = new Uint8Array(0);
export const ADDRESS_MASK = (1n << 160n) - 1n;
export const STACK_LIMIT = 1024;
const MAX_FRAME_GAS_BIG = BigInt(MAX_FRAME_GAS);

/** geth's texts for exceptional halts (core/vm/errors.go). */
export const ERR = {
  outOfGas: "out of gas",
  codeStoreOutOfGas: "contract creation code storage out of gas",
  depth: "max call depth exceeded",
  insufficientBalance: "insufficient balance for transfer",
  collision: "contract address collision",
  reverted: "execution reverted",
  maxCodeSize: "max code size exceeded",
  maxInitCodeSize: "max initcode size exceeded",
  invalidJump: "invalid jump destination",
  writeProtection: "write protection",
  returnDataOutOfBounds: "return data out of bounds",
  gasUintOverflow: "gas uint64 overflow",
  invalidCode: "invalid code: must not begin with 0xef",
  nonceOverflow: "nonce uint64 overflow",
} as const;

/** An exceptional halt of a frame: all its gas is consumed and its writes undone. */
export class VmError extends ComethError {}

/** What a finished frame hands back to its caller. */
export interface FrameResult {
  success: boolean;
  gasLeft: number;
  output: Uint8Array;
  /** geth's text ("" on success). */
  error: string;
}

/** What the frames of one transaction share (interpreter.ts implements it). */
export interface Host {
  readonly state: EngineState;
  readonly fork: Fork;
  readonly block: BlockEnv;
  readonly origin: Uint8Array;
  readonly gasPrice: bigint;
  readonly blobHashes: readonly Uint8Array[];
  /** Checked every 4096 jumps (loops must jump): throws to stop the run. */
  readonly interrupt: (() => void) | undefined;
  ticks: number;
  /** The address in a stack word's low 160 bits, as hex key and bytes (the same objects per word). */
  addressOf(word: Word): AddressRef;
  /** EIP-2929: warms the address (hex key); true when it was cold. */
  warmAddress(key: string): boolean;
  /** EIP-2929: warms the slot; true when it was cold. */
  warmSlot(addrKey: string, slot: Word): boolean;
  tload(addrKey: string, slot: Word): Word;
  tstore(addrKey: string, slot: Word, value: Word): void;
  addRefund(delta: number): void;
  /** LOG0-4: the topics as the stack held them (first topic first). */
  log(address: Uint8Array, topics: Word[], data: Uint8Array): void;
  /** SELFDESTRUCT after gas: moves the balance, marks the account per EIP-6780. */
  selfdestruct(frame: Frame, beneficiary: Uint8Array): void;
  /** The CALL family opcodes (0xf1, 0xf2, 0xf4, 0xfa): gas, sub-frame, results on the frame. */
  opCall(frame: Frame, op: number): void;
  /** CREATE (0xf0) and CREATE2 (0xf5). */
  opCreate(frame: Frame, op: number): void;
}

/** An address as the host hands it out: its lowercase hex (no 0x) and its 20 bytes (not to be changed). */
export interface AddressRef {
  readonly key: string;
  readonly bytes: Uint8Array;
}

/** The undo marks of a frame's checkpoint (the state journal and the host's own undo logs). */
export interface Snapshot {
  mark: number;
  warm: number;
  warmSlots: number;
  transient: number;
  logs: number;
  touched: number;
  destructs: number;
  refund: number;
}

/** One running frame. Fields are public for the handlers' speed; only the interpreter creates frames. */
export class Frame {
  readonly host: Host;
  readonly code: Uint8Array;
  /** The code's blocks, JUMPDESTs and PUSH values (analysis.ts). */
  readonly analysis: CodeAnalysis;
  /** Bit per byte of code: 1 at a JUMPDEST that is not PUSH data. */
  readonly jumpdests: Uint8Array;
  readonly address: Uint8Array;
  readonly addressKey: string;
  readonly caller: Uint8Array;
  readonly value: bigint;
  readonly input: Uint8Array;
  readonly isStatic: boolean;
  readonly depth: number;
  readonly stack: Word[];
  readonly memory: Memory;
  gas: number;
  /**
   * Gas beyond `gas`, which is a number of at most 2^53 − 1: only a transaction whose gas limit is
   * above that has any (ethereum/tests has a few). The frame's gas is gas + reserve; charges come out
   * of `gas`, which the reserve refills, and calls and creations split the total exactly.
   */
  reserve = 0n;
  pc = 0;
  sp = 0;
  /** RETURNDATA: the output of the last sub-call. */
  returnData: Uint8Array = EMPTY;
  /** RETURN/REVERT data. */
  output: Uint8Array = EMPTY;
  stopped = false;
  reverted = false;
  // The interpreter runs frames without recursion (a 1024-deep call chain would overflow the JS
  // stack): a CALL or CREATE suspends this frame with `child` set; the child carries how to resume.
  /** The frame to run next, set by CALL/CREATE (this frame is suspended until it returns). */
  child: Frame | undefined = undefined;
  parent: Frame | undefined = undefined;
  /** The checkpoint this frame's writes are kept or undone against. */
  snap: Snapshot | undefined = undefined;
  /** The opcode that started this frame (0xf1 CALL, 0xf0 CREATE, ...; 0 for a transaction). */
  kind = 0;
  /** Where the caller wants the output (CALL family). */
  retAt = 0;
  retSize = 0;
  /** The address a creation deploys to. */
  createAddress: Uint8Array | undefined = undefined;
  /** The values of the code's PUSH instructions by the pc after the opcode. */
  readonly pushValues: Word[];
  /** CALLER and ADDRESS as words, made on first use. */
  #callerWord: Word | undefined = undefined;
  #addressWord: Word | undefined = undefined;

  constructor(
    host: Host,
    code: Uint8Array,
    analysis: CodeAnalysis,
    address: Uint8Array,
    addressKey: string,
    caller: Uint8Array,
    value: bigint,
    input: Uint8Array,
    gas: number,
    isStatic: boolean,
    depth: number,
    stack: Word[],
    memory: Memory,
  ) {
    this.host = host;
    this.code = code;
    this.analysis = analysis;
    this.jumpdests = analysis.jumpdests;
    this.pushValues = analysis.pushValues;
    this.address = address;
    this.addressKey = addressKey;
    this.caller = caller;
    this.value = value;
    this.input = input;
    this.gas = gas;
    this.isStatic = isStatic;
    this.depth = depth;
    this.stack = stack;
    this.memory = memory;
  }

  callerWord(): Word {
    if (this.#callerWord === undefined) this.#callerWord = bytesToWord(this.caller);
    return this.#callerWord;
  }

  addressWord(): Word {
    if (this.#addressWord === undefined) this.#addressWord = bytesToWord(this.address);
    return this.#addressWord;
  }

  useGas(amount: number): void {
    if (amount > this.gas) {
      if (this.reserve !== 0n && BigInt(amount) <= this.totalGas()) {
        this.setTotalGas(this.totalGas() - BigInt(amount));
        return;
      }
      this.gas = 0;
      this.reserve = 0n;
      throw new VmError(ERR.outOfGas);
    }
    this.gas -= amount;
  }

  /** gas + reserve. */
  totalGas(): bigint {
    return BigInt(this.gas) + this.reserve;
  }

  /** Sets the frame's gas to `total`, the part above 2^53 − 1 in the reserve. */
  setTotalGas(total: bigint): void {
    if (total > MAX_FRAME_GAS_BIG) {
      this.gas = MAX_FRAME_GAS;
      this.reserve = total - MAX_FRAME_GAS_BIG;
    } else {
      this.gas = Number(total);
      this.reserve = 0n;
    }
  }

  /**
   * Charges memory expansion to cover [offset, offset+size) and returns the offset as a number
   * (0 when size is 0: nothing is touched then, whatever the offset).
   */
  expand(offset: Word, size: Word): number {
    if (size === 0) return 0;
    // A bigint is at least 2^53, far past the largest memory gas can pay for.
    if (typeof offset !== "number" || typeof size !== "number") throw new VmError(ERR.outOfGas);
    const endN = offset + size;
    if (endN > MAX_MEMORY_BYTES) throw new VmError(ERR.outOfGas);
    const mem = this.memory;
    if (endN > mem.size) {
      const newWords = Math.ceil(endN / 32);
      const oldWords = mem.size / 32;
      const cost =
        G_MEMORY * (newWords - oldWords) +
        Math.floor((newWords * newWords) / G_QUAD_DIVISOR) -
        Math.floor((oldWords * oldWords) / G_QUAD_DIVISOR);
      this.useGas(cost);
      mem.grow(newWords * 32);
    }
    return offset;
  }
}

/** Counts a jump of the host's run, and calls its interrupt hook every 4096th (Host.interrupt). */
export function countJump(host: Host): void {
  if ((++host.ticks & 4095) === 0) interruptNow(host);
}

/**
 * Calls the host's interrupt hook, if it has one: every jump site (the loop, the handlers, compiled
 * blocks) and every frame entry calls the hook through this one function.
 *
 * Why one function: the hook is a new closure for every eth_call (it closes over that call's deadline).
 * Where V8 optimises a call site that has only ever seen one closure, it inlines that closure and
 * throws the optimised code away when another one comes: each compiled block, and the loop itself
 * (~0.1 s of compiler time to optimise again), was thrown away at the first interrupt of each of the
 * next few calls. Here the call is made in one place, and the module's start has already shown that
 * place five closures on five object shapes (more than V8's limit of four for a polymorphic site), so V8
 * compiles a generic property load and call from the start, and nothing that inlines this function is
 * thrown away for a new hook.
 */
export function interruptNow(host: Host): void {
  const hook = host.interrupt;
  if (hook !== undefined) hook();
}

for (const make of [
  (hook: () => void) => ({ interrupt: hook }),
  (hook: () => void) => ({ ticks: 0, interrupt: hook }),
  (hook: () => void) => ({ interrupt: hook, a: 0 }),
  (hook: () => void) => ({ interrupt: hook, b: 0 }),
  (hook: () => void) => ({ interrupt: hook, c: 0 }),
]) {
  interruptNow(make(() => {}) as unknown as Host);
}

/** A number of at most 2^53 − 1 from a stack word, or `over` when it is larger. */
export function smallOr(x: Word, over: number): number {
  return typeof x === "number" ? x : over;
}

/** The 40-char hex key of a word's low 160 bits (an address on the stack). */
export function addressHexOfWord(x: Word): string {
  return (typeof x === "number" ? x : x & ADDRESS_MASK).toString(16).padStart(40, "0");
}

export function hexToAddress(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

export function addressKey(addr: Uint8Array): string {
  return hexOfBytes(addr);
}
