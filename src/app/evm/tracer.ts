import type { EVM, EVMResult, InterpreterStep, Message } from "@ethereumjs/evm";
import { vmErrorText } from "./executor.js";

/**
 * Tracing hooks for debug_traceTransaction / debug_traceCall: a tracer subscribes to the ethereumjs
 * EVM's events (step, beforeMessage, afterMessage) while one tx runs, then builds its result.
 * Built-ins: geth's struct logger and callTracer here, prestateTracer in prestateTracer.ts, in
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

/** The tx about to run, while the state is still the one before it (tracers may read it then). */
export interface TraceTxStart {
  from: Uint8Array;
  /** Undefined for a contract creation. */
  to: Uint8Array | undefined;
  coinbase: Uint8Array;
}

export interface EvmTracer<T> {
  attach(evm: EVM, start: TraceTxStart): void | Promise<void>;
  /** Right after the tx ran, while the state is the one after it. */
  detach(evm: EVM): void | Promise<void>;
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
  /** Slots touched so far in this contract (SLOAD/SSTORE), geth-style. */
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

/** geth's default tracer (logger.StructLogger). */
export function createStructLogger(opts: StructLoggerOptions = {}): EvmTracer<StructLoggerResult> {
  const logs: StructLog[] = [];
  const storageByDepth: Map<string, Uint8Array>[] = [];
  const onStep = (s: InterpreterStep) => {
    if (opts.limit !== undefined && opts.limit > 0 && logs.length >= opts.limit) return;
    const depth = s.depth + 1;
    const entry: StructLog = {
      pc: s.pc,
      op: s.opcode.name,
      gas: s.gasLeft,
      gasCost: BigInt(s.opcode.fee) + (s.opcode.dynamicFee ?? 0n),
      depth,
      refund: s.gasRefund,
    };
    if (opts.disableStack !== true) entry.stack = [...s.stack];
    if (opts.enableMemory === true) {
      const words: Uint8Array[] = [];
      for (let i = 0; i < s.memory.length; i += 32) words.push(s.memory.slice(i, i + 32));
      entry.memory = words;
    }
    if (opts.disableStorage !== true && (s.opcode.name === "SLOAD" || s.opcode.name === "SSTORE")) {
      storageByDepth.length = depth;
      let st = storageByDepth[depth - 1];
      if (st === undefined) {
        st = new Map();
        storageByDepth[depth - 1] = st;
      }
      const stack = s.stack;
      const slot = stack[stack.length - 1];
      if (slot !== undefined) {
        const key = Buffer.from(word(slot)).toString("hex");
        if (s.opcode.name === "SSTORE") {
          const value = stack[stack.length - 2] ?? 0n;
          st.set(key, word(value));
        } else if (!st.has(key)) {
          st.set(key, new Uint8Array(32));
        }
      }
      entry.storage = new Map(st);
    }
    logs.push(entry);
  };
  return {
    attach: (evm) => {
      evm.events.on("step", onStep);
    },
    detach: (evm) => {
      evm.events.off("step", onStep);
    },
    result: (tx) => ({ gas: tx.gasUsed, failed: tx.failed, returnValue: tx.returnData, structLogs: logs }),
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
  calls: CallFrame[];
  logs?: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
}

export interface CallTracerOptions {
  onlyTopCall?: boolean;
  withLog?: boolean;
}

const CALL_OPS: Record<string, CallFrame["type"]> = {
  CALL: "CALL",
  CALLCODE: "CALLCODE",
  DELEGATECALL: "DELEGATECALL",
  STATICCALL: "STATICCALL",
  CREATE: "CREATE",
  CREATE2: "CREATE2",
};

/**
 * The EVM's message events with the type of each frame entered, as geth's OnEnter names it: the
 * tx's own frame is CALL or CREATE, a nested one is the opcode that opened it (the last step seen).
 */
function frameEvents(on: {
  enter(m: Message, type: CallFrame["type"]): void;
  exit(r: EVMResult): void;
}): Pick<EvmTracer<unknown>, "attach" | "detach"> {
  let lastOp = "";
  let depth = 0;
  const onStep = (s: InterpreterStep) => {
    lastOp = s.opcode.name;
  };
  const onBefore = (m: Message) => {
    const type = depth === 0 ? (m.to === undefined ? "CREATE" : "CALL") : (CALL_OPS[lastOp] ?? "CALL");
    depth++;
    on.enter(m, type);
  };
  const onAfter = (r: EVMResult) => {
    depth--;
    on.exit(r);
  };
  return {
    attach: (evm) => {
      evm.events.on("step", onStep);
      evm.events.on("beforeMessage", onBefore);
      evm.events.on("afterMessage", onAfter);
    },
    detach: (evm) => {
      evm.events.off("step", onStep);
      evm.events.off("beforeMessage", onBefore);
      evm.events.off("afterMessage", onAfter);
    },
  };
}

/** geth's callTracer: the tree of message calls. */
export function createCallTracer(opts: CallTracerOptions = {}): EvmTracer<CallFrame | undefined> {
  const stack: CallFrame[] = [];
  let root: CallFrame | undefined;
  const onBefore = (m: Message, type: CallFrame["type"]) => {
    const frame: CallFrame = {
      type,
      from: m.caller.bytes,
      to: m.to?.bytes,
      value: type === "DELEGATECALL" || type === "STATICCALL" ? undefined : m.value,
      gas: m.gasLimit,
      gasUsed: 0n,
      input: m.data,
      output: new Uint8Array(0),
      calls: [],
    };
    stack.push(frame);
  };
  const onAfter = (r: EVMResult) => {
    const frame = stack.pop();
    if (frame === undefined) return;
    frame.gasUsed = r.execResult.executionGasUsed;
    frame.output = r.execResult.returnValue;
    if (r.createdAddress !== undefined && (frame.type === "CREATE" || frame.type === "CREATE2")) {
      frame.to = r.createdAddress.bytes;
    }
    if (r.execResult.exceptionError !== undefined) frame.error = vmErrorText(r.execResult.exceptionError.error);
    if (opts.withLog === true && r.execResult.exceptionError === undefined) {
      frame.logs = (r.execResult.logs ?? []).map(([address, topics, data]) => ({ address, topics, data }));
    }
    const parent = stack[stack.length - 1];
    if (parent === undefined) root = frame;
    else if (opts.onlyTopCall !== true) parent.calls.push(frame);
  };
  return {
    ...frameEvents({ enter: onBefore, exit: onAfter }),
    result: (tx) => {
      if (root !== undefined) {
        root.gasUsed = tx.gasUsed;
        if (tx.failed && root.error === undefined) root.error = tx.vmError;
      }
      return root;
    },
  };
}

/**
 * geth's 4byteTracer (eth/tracers/native/4byte.go): how often each `selector-calldata size` was
 * called — every CALL, CALLCODE, DELEGATECALL and STATICCALL frame, the tx's own call included, with
 * at least 4 bytes of input and a target that is not a precompile. Keys: `0x<selector>-<size - 4>`.
 */
export function createFourByteTracer(): EvmTracer<Map<string, number>> {
  const counts = new Map<string, number>();
  let evmRef: EVM | undefined;
  const events = frameEvents({
    enter: (m, type) => {
      if (type !== "CALL" && type !== "CALLCODE" && type !== "DELEGATECALL" && type !== "STATICCALL") return;
      if (m.data.length < 4 || m.to === undefined) return;
      // The code that runs: a DELEGATECALL's or CALLCODE's target, not the storage context.
      if (evmRef?.getPrecompile(m.codeAddress) !== undefined) return;
      const key = `0x${Buffer.from(m.data.subarray(0, 4)).toString("hex")}-${m.data.length - 4}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    },
    exit: () => undefined,
  });
  return {
    attach: (evm, start) => {
      evmRef = evm;
      return events.attach(evm, start);
    },
    detach: events.detach,
    result: () => counts,
  };
}

/** geth's noopTracer: runs the tx and answers `{}`. */
export function createNoopTracer(): EvmTracer<Record<string, never>> {
  return {
    attach: () => undefined,
    detach: () => undefined,
    result: () => ({}),
  };
}
