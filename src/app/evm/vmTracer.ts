import type { EngineState, FrameEnter, FrameExit, OpcodeStep } from "../../evm/index.js";
import { OPCODES, toBig, type Word } from "../../evm/index.js";
import { type EvmTracer, opName } from "./tracer.js";

/**
 * OpenEthereum's vmTrace (trace_replayTransaction "vmTrace", as Erigon serves it): per frame its code
 * and every opcode run, with its cost and, once it ran, the gas left, the stack items it pushed, the
 * memory it wrote and the slot it stored; the frame a CALL or CREATE opened hangs under that opcode
 * as `sub`. Otterscan reads it to show where a revert happened.
 */

export interface VmTraceOp {
  pc: number;
  op: string;
  cost: bigint;
  /** Absent when the opcode failed before it ran (OpenEthereum's `ex: null`). */
  ex?: {
    /** Gas left after the opcode (after the frame it opened handed its gas back). */
    used: bigint;
    push: bigint[];
    mem?: { off: number; data: Uint8Array };
    store?: { key: bigint; val: bigint };
  };
  sub?: VmTrace;
}

export interface VmTrace {
  code: Uint8Array;
  ops: VmTraceOp[];
}

/** Where an opcode writes memory: [offset, size] read from the stack before it runs. */
function memoryWrite(s: OpcodeStep): [number, number] | undefined {
  const top = s.stackSize - 1;
  const at = (i: number): number | undefined => {
    const w = s.stack[top - i];
    if (w === undefined || top - i < 0) return undefined;
    const v = toBig(w as Word);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : Number(v);
  };
  const range = (off: number, size: number): [number, number] | undefined => {
    const o = at(off);
    const n = at(size);
    return o === undefined || n === undefined || n === 0 ? undefined : [o, n];
  };
  switch (s.op) {
    case 0x52: // MSTORE
      return at(0) === undefined ? undefined : [at(0) as number, 32];
    case 0x53: // MSTORE8
      return at(0) === undefined ? undefined : [at(0) as number, 1];
    case 0x37: // CALLDATACOPY
    case 0x39: // CODECOPY
    case 0x3e: // RETURNDATACOPY
    case 0x5e: // MCOPY
      return range(0, 2);
    case 0x3c: // EXTCODECOPY
      return range(1, 3);
    case 0xf1: // CALL
    case 0xf2: // CALLCODE
      return range(5, 6);
    case 0xf4: // DELEGATECALL
    case 0xfa: // STATICCALL
      return range(4, 5);
    default:
      return undefined;
  }
}

interface Frame {
  trace: VmTrace;
  /** The gas the frame started with (the gas left after its last opcode is this less its gas used). */
  gas: bigint;
  /** The opcode that ran last, finished by the next step of this frame (or the frame's end). */
  open: VmTraceOp | undefined;
  openPushes: number;
  openMem: [number, number] | undefined;
}

const SSTORE = 0x55;

export function createVmTracer(): EvmTracer<VmTrace | undefined> {
  let state: EngineState | undefined;
  let root: VmTrace | undefined;
  const frames: Frame[] = [];

  /** Finishes the frame's open opcode with what the state after it shows. */
  const close = (
    f: Frame,
    gasLeft: bigint,
    stack: readonly Word[] | undefined,
    stackSize: number,
    memory: Uint8Array | undefined,
  ) => {
    const op = f.open;
    if (op?.ex === undefined) return;
    op.ex.used = gasLeft;
    if (stack !== undefined) {
      for (let i = 0; i < f.openPushes && i < stackSize; i++) {
        op.ex.push.unshift(toBig(stack[stackSize - 1 - i] as Word));
      }
    }
    if (f.openMem !== undefined && memory !== undefined) {
      const [off, size] = f.openMem;
      const data = new Uint8Array(size);
      data.set(memory.subarray(off, Math.min(memory.length, off + size)));
      op.ex.mem = { off, data };
    }
    f.open = undefined;
  };

  const onEnter = (e: FrameEnter): void => {
    if (e.type === "SELFDESTRUCT") return;
    const code =
      e.type === "CREATE" || e.type === "CREATE2" ? e.input.slice() : (state as EngineState).code(e.codeAddress);
    const trace: VmTrace = { code: e.precompile ? new Uint8Array(0) : code.slice(), ops: [] };
    const parent = frames[frames.length - 1];
    if (parent === undefined) root = trace;
    else if (parent.open !== undefined) parent.open.sub = trace;
    frames.push({ trace, gas: e.gas, open: undefined, openPushes: 0, openMem: undefined });
  };

  const onExit = (x: FrameExit): void => {
    // A SELFDESTRUCT frame has no entry of its own.
    const f = frames[frames.length - 1];
    if (f === undefined || frames.length !== x.depth + 1) return;
    close(f, f.gas - x.gasUsed, undefined, 0, undefined);
    frames.pop();
  };

  const onOpcode = (s: OpcodeStep): void => {
    const f = frames[frames.length - 1];
    if (f === undefined) return;
    close(f, BigInt(s.gas), s.stack, s.stackSize, s.memory);
    const op: VmTraceOp = {
      pc: s.pc,
      op: opName(s.op),
      cost: 0n,
      ex: { used: 0n, push: [] },
    };
    if (s.op === SSTORE && s.stackSize >= 2) {
      const ex = op.ex as NonNullable<VmTraceOp["ex"]>;
      ex.store = { key: toBig(s.stack[s.stackSize - 1] as Word), val: toBig(s.stack[s.stackSize - 2] as Word) };
    }
    f.trace.ops.push(op);
    f.open = op;
    f.openPushes = OPCODES[s.op]?.pushes ?? 0;
    f.openMem = memoryWrite(s);
  };

  const onOpcodeEnd = (cost: number, error: string): void => {
    const op = frames[frames.length - 1]?.open;
    if (op === undefined) return;
    op.cost = BigInt(cost);
    // Failed before it ran: nothing was executed (OpenEthereum's `ex: null`).
    if (error !== "") delete op.ex;
  };

  return {
    hooks: (start) => {
      state = start.state;
      return { onEnter, onExit, onOpcode, onOpcodeEnd };
    },
    result: () => root,
  };
}
