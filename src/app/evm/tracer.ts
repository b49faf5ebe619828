import type { EngineHooks, EngineState, FrameEnter, FrameExit, OpcodeStep } from "../../evm/index.js";
import { OPCODES, toBig, type Word } from "../../evm/index.js";
import { setLengthLeft } from "./records.js";

/**
 * Tracers for debug_traceTransaction / debug_traceCall, on cometh's EVM (engine/): a tracer gives the
 * engine hooks (EngineHooks: frames entered and left, each opcode and its cost, logs) for one tx, is
 * told when the tx ended, then builds its result. Built-ins, after geth's eth/tracers: the struct
 * logger and callTracer, 4byteTracer and noopTracer here, prestateTracer in prestateTracer.ts, in
 * domain form (bigints, bytes); the RPC encodes.
 */

/** What the tracer learns about the whole tx once it ran. */
export interface TraceTxInfo {
  /** Gas charged for the tx (receipt gasUsed). */
  gasUsed: bigint;
  failed: boolean;
  returnData: Uint8Array;
  vmError: string;
}

/** The tx about to run, while the state is still the one before it (geth's OnTxStart). */
export interface TraceTxStart {
  from: Uint8Array;
  /** Undefined for a contract creation. */
  to: Uint8Array | undefined;
  coinbase: Uint8Array;
  /** The tx's gas limit (the call's gas for traceCall): callTracer's top frame gas. */
  gasLimit: bigint;
  /** The block-wide index the tx's first log gets (the logs of the txs before it; 0 for a call). */
  logIndex?: number;
  /**
   * The state the tx runs on, still before it (no gas bought, nonce unchanged). Tracers may read it
   * now and from their hooks while the tx runs.
   */
  state: EngineState;
}

/**
 * One tracer, for one tx: `hooks` once before the tx runs, `afterTx` (when present) right after it ran
 * and the app's own charges were made (the state is then the one after it), `result` last.
 */
export interface EvmTracer<T> {
  hooks(start: TraceTxStart): EngineHooks;
  afterTx?(state: EngineState): void;
  result(tx: TraceTxInfo): T;
}

export interface StructLog {
  pc: number;
  op: string;
  gas: bigint;
  gasCost: bigint;
  /** 1-based, as geth. */
  depth: number;
  refund: bigint;
  stack?: bigint[];
  /** Memory as 32-byte words. */
  memory?: Uint8Array[];
  /** RETURNDATA before the opcode (enableReturnData; left out when empty). */
  returnData?: Uint8Array;
  /** Slots this contract read or wrote so far in the tx (SLOAD/SSTORE), geth-style. */
  storage?: Map<string, Uint8Array>;
  error?: string;
}

export interface StructLoggerResult {
  gas: bigint;
  failed: boolean;
  returnValue: Uint8Array;
  structLogs: StructLog[];
}

export interface StructLoggerOptions {
  disableStack?: boolean;
  disableStorage?: boolean;
  enableMemory?: boolean;
  enableReturnData?: boolean;
  /** Max entries (0 = no limit). */
  limit?: number;
}

/** A stack value as a 32-byte big-endian word. */
export function word(v: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let x = v;
  for (let i = 31; i >= 0 && x > 0n; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

const SLOAD = 0x54;
const SSTORE = 0x55;
const EMPTY = new Uint8Array(0);

function hexOf(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/** geth's name of an opcode (vm.OpCode.String()), or its text for an undefined opcode: 0x44 keeps its pre-merge name there. */
export function opName(op: number): string {
  if (op === 0x44) return "DIFFICULTY";
  const name = OPCODES[op]?.name ?? "";
  return name === "" || name.startsWith("0x") ? `opcode 0x${op.toString(16)} not defined` : name;
}

/**
 * geth's default tracer (eth/tracers/logger StructLogger): one entry per opcode with the state before
 * it (pc, gas left, stack, memory, refund counter, and for SLOAD/SSTORE the slots the contract has
 * touched: SLOAD records the value it reads, SSTORE the value it writes), the opcode's full cost, and
 * the error when it failed before executing.
 */
export function createStructLogger(opts: StructLoggerOptions = {}): EvmTracer<StructLoggerResult> {
  const logs: StructLog[] = [];
  /** By contract (hex address): slot → value, as geth's per-address storage. */
  const storage = new Map<string, Map<string, Uint8Array>>();
  const limit = opts.limit ?? 0;
  /** The entry of the opcode running (its cost comes with onOpcodeEnd). */
  let open: StructLog | undefined;
  let state: EngineState | undefined;

  const storageOf = (s: OpcodeStep): Map<string, Uint8Array> | undefined => {
    const top = s.stackSize - 1;
    if (s.op === SLOAD ? top < 0 : top < 1) return undefined;
    const addr = hexOf(s.address);
    let st = storage.get(addr);
    if (st === undefined) {
      st = new Map();
      storage.set(addr, st);
    }
    const slot = word(toBig(s.stack[top] as Word));
    if (s.op === SSTORE) st.set(hexOf(slot), word(toBig(s.stack[top - 1] as Word)));
    else st.set(hexOf(slot), setLengthLeft((state as EngineState).storage(s.address, slot), 32));
    return new Map(st);
  };

  const onOpcode = (s: OpcodeStep): void => {
    open = undefined;
    if (limit > 0 && logs.length >= limit) return;
    const entry: StructLog = {
      pc: s.pc,
      op: opName(s.op),
      gas: BigInt(s.gas),
      gasCost: 0n,
      depth: s.depth,
      refund: BigInt(s.refund),
    };
    if (opts.disableStack !== true) entry.stack = s.stack.slice(0, s.stackSize).map(toBig);
    if (opts.enableMemory === true && s.memory.length > 0) {
      const words: Uint8Array[] = [];
      for (let i = 0; i < s.memory.length; i += 32) words.push(s.memory.slice(i, i + 32));
      entry.memory = words;
    }
    if (opts.enableReturnData === true && s.returnData.length > 0) entry.returnData = s.returnData.slice();
    if (opts.disableStorage !== true && (s.op === SLOAD || s.op === SSTORE)) {
      const st = storageOf(s);
      if (st !== undefined) entry.storage = st;
    }
    logs.push(entry);
    open = entry;
  };

  const onOpcodeEnd = (cost: number, error: string): void => {
    if (open === undefined) return;
    open.gasCost = BigInt(cost);
    if (error !== "") open.error = error;
    open = undefined;
  };

  return {
    hooks: (start) => {
      state = start.state;
      return { onOpcode, onOpcodeEnd };
    },
    result: (tx) => ({
      gas: tx.gasUsed,
      failed: tx.failed,
      // geth: the output when it succeeded, the revert data when it reverted, else nothing.
      returnValue: tx.failed && tx.vmError !== "execution reverted" ? EMPTY : tx.returnData,
      structLogs: logs,
    }),
  };
}

export interface CallFrame {
  type: "CALL" | "CALLCODE" | "DELEGATECALL" | "STATICCALL" | "CREATE" | "CREATE2" | "SELFDESTRUCT";
  from: Uint8Array;
  to: Uint8Array | undefined;
  value: bigint | undefined;
  gas: bigint;
  gasUsed: bigint;
  input: Uint8Array;
  output: Uint8Array;
  error?: string;
  /** A reverted frame's Error(string) text or Panic(uint256) meaning. */
  revertReason?: string;
  calls: CallFrame[];
  /** withLog: the frame's own logs; `position`: how many sub-calls it had made before each. */
  logs?: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array; index?: number; position?: number }[];
}

export interface CallTracerOptions {
  onlyTopCall?: boolean;
  withLog?: boolean;
  /**
   * The top frame's own gas and gas used, as OpenEthereum's traces give them (the gas limit less the
   * intrinsic gas; what the execution used, before refunds), instead of geth's tx gas limit and
   * receipt gas used.
   */
  frameGasAtTop?: boolean;
}

const ERROR_SELECTOR = 0x08c379a0;
const PANIC_SELECTOR = 0x4e487b71;
const PANIC_REASONS = new Map<number, string>([
  [0x00, "generic panic"],
  [0x01, "assert(false)"],
  [0x11, "arithmetic underflow or overflow"],
  [0x12, "division or modulo by zero"],
  [0x21, "enum overflow"],
  [0x22, "invalid encoded storage byte array accessed"],
  [0x31, "out-of-bounds array access; popping on an empty array"],
  [0x32, "out-of-bounds access of an array or bytesN"],
  [0x41, "out of memory"],
  [0x51, "uninitialized function"],
]);

function wordAt(data: Uint8Array, at: number): bigint | undefined {
  if (at + 32 > data.length) return undefined;
  return BigInt(`0x${hexOf(data.subarray(at, at + 32))}`);
}

/** geth's abi.UnpackRevert: the text of Error(string) or the meaning of Panic(uint256) revert data. */
export function revertReason(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  const selector = new DataView(data.buffer, data.byteOffset, 4).getUint32(0);
  const args = data.subarray(4);
  if (selector === PANIC_SELECTOR) {
    const code = wordAt(args, 0);
    if (code === undefined) return undefined;
    const known = code <= 0xffn ? PANIC_REASONS.get(Number(code)) : undefined;
    return known ?? `unknown panic code: 0x${code.toString(16)}`;
  }
  if (selector !== ERROR_SELECTOR) return undefined;
  const offset = wordAt(args, 0);
  if (offset === undefined || offset > BigInt(args.length)) return undefined;
  const length = wordAt(args, Number(offset));
  if (length === undefined) return undefined;
  const start = Number(offset) + 32;
  if (BigInt(start) + length > BigInt(args.length)) return undefined;
  return Buffer.from(args.subarray(start, start + Number(length))).toString("utf8");
}

/** Whether a frame failed with its state undone (geth's callFrame.failed; every failure here). */
function failedFrame(f: CallFrame): boolean {
  return f.error !== undefined;
}

/** geth's clearFailedLogs: a failed frame's logs, and its descendants', were not emitted. */
function clearFailedLogs(f: CallFrame, parentFailed: boolean): void {
  const failed = parentFailed || failedFrame(f);
  if (failed) delete f.logs;
  for (const c of f.calls) clearFailedLogs(c, failed);
}

/** geth's callFrame.processOutput. */
function processOutput(f: CallFrame, x: FrameExit): void {
  if (x.error === "") {
    f.output = x.output.slice();
    return;
  }
  f.error = x.error;
  if (f.type === "CREATE" || f.type === "CREATE2") f.to = undefined;
  if (x.error !== "execution reverted" || x.output.length === 0) return;
  f.output = x.output.slice();
  const reason = revertReason(x.output);
  if (reason !== undefined) f.revertReason = reason;
}

/**
 * geth's callTracer (eth/tracers/native/call.go): the tree of frames, each with its type, from, to
 * (geth's: the code's account for DELEGATECALL/CALLCODE, unset for a failed creation), value (none
 * for STATICCALL; DELEGATECALL's is the value it inherits), gas, gas used, input, output, error and
 * revert reason; the top frame's gas is the tx's gas limit and its gas used the receipt's.
 * `onlyTopCall` keeps the top frame alone; `withLog` adds each frame's logs, dropped from frames that
 * failed or sit under one that failed.
 */
export function createCallTracer(opts: CallTracerOptions = {}): EvmTracer<CallFrame | undefined> {
  const stack: CallFrame[] = [];
  let gasLimit = 0n;
  /** The depth of the frame running (geth's t.depth). */
  let depth = 0;
  /** geth's log.Index: the block-wide index of the next log (a failed frame's logs give theirs back). */
  let logIndex = 0;
  /** The next log index when each running frame was entered. */
  const logIndexAtEnter: number[] = [];

  const onEnter = (e: FrameEnter): void => {
    depth = e.depth;
    logIndexAtEnter.push(logIndex);
    if (opts.onlyTopCall === true && e.depth > 0) return;
    stack.push({
      type: e.type,
      from: e.from,
      to: e.codeAddress,
      value: e.type === "STATICCALL" ? undefined : e.value,
      gas: e.depth === 0 && opts.frameGasAtTop !== true ? gasLimit : e.gas,
      gasUsed: 0n,
      input: e.input.slice(),
      output: EMPTY,
      calls: [],
    });
  };

  const onExit = (x: FrameExit): void => {
    const entered = logIndexAtEnter.pop();
    // geth's StateDB journal takes a reverted frame's logs back, and their indexes with them.
    if (x.reverted && entered !== undefined) logIndex = entered;
    if (x.depth === 0) {
      if (stack.length === 1) {
        processOutput(stack[0] as CallFrame, x);
        if (opts.frameGasAtTop === true) (stack[0] as CallFrame).gasUsed = x.gasUsed;
      }
      return;
    }
    depth = x.depth - 1;
    if (opts.onlyTopCall === true || stack.length <= 1) return;
    const frame = stack.pop() as CallFrame;
    frame.gasUsed = x.gasUsed;
    processOutput(frame, x);
    (stack[stack.length - 1] as CallFrame).calls.push(frame);
  };

  const hooks: EngineHooks = { onEnter, onExit };
  if (opts.withLog === true) {
    hooks.onLog = (log) => {
      const index = logIndex++;
      if (opts.onlyTopCall === true && depth > 0) return;
      const frame = stack[stack.length - 1];
      if (frame === undefined) return;
      frame.logs ??= [];
      frame.logs.push({
        address: log.address,
        topics: log.topics.slice(),
        data: log.data.slice(),
        index,
        position: frame.calls.length,
      });
    };
  }

  return {
    hooks: (start) => {
      gasLimit = start.gasLimit;
      logIndex = start.logIndex ?? 0;
      return hooks;
    },
    result: (tx) => {
      if (stack.length !== 1) return undefined;
      const root = stack[0] as CallFrame;
      if (opts.frameGasAtTop !== true) root.gasUsed = tx.gasUsed;
      if (tx.failed && root.error === undefined) root.error = tx.vmError;
      if (opts.withLog === true) clearFailedLogs(root, false);
      return root;
    },
  };
}

/**
 * geth's 4byteTracer (eth/tracers/native/4byte.go): how often each `selector-calldata size` was
 * called — every CALL, CALLCODE, DELEGATECALL and STATICCALL frame, the tx's own call included, with
 * at least 4 bytes of input and code that is not a precompile. Keys: `0x<selector>-<size - 4>`.
 */
export function createFourByteTracer(): EvmTracer<Map<string, number>> {
  const counts = new Map<string, number>();
  const hooks: EngineHooks = {
    onEnter: (e) => {
      if (e.type !== "CALL" && e.type !== "CALLCODE" && e.type !== "DELEGATECALL" && e.type !== "STATICCALL") return;
      if (e.input.length < 4 || e.precompile) return;
      const key = `0x${hexOf(e.input.subarray(0, 4))}-${e.input.length - 4}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    },
  };
  return {
    hooks: () => hooks,
    result: () => counts,
  };
}

/** geth's noopTracer: runs the tx and answers `{}`. */
export function createNoopTracer(): EvmTracer<Record<string, never>> {
  return {
    hooks: () => ({}),
    result: () => ({}),
  };
}
