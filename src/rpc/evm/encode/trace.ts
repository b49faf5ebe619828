import type { WireValue } from "../../jsonrpc/index.js";
import type { CallFrame, StructLog, TraceResult } from "../services.js";
import { toAddress, toData, toQuantity } from "./hex.js";

/**
 * Trace results: the struct (opcode) logger as in execution-apis OpcodeTransactionTrace (gas
 * numbers are JSON integers), and geth's callTracer frames (hex quantities).
 */

function encodeStructLog(l: StructLog): WireValue {
  let storage: WireValue | undefined;
  if (l.storage !== undefined) {
    const m = new Map<string, WireValue>();
    for (const [k, v] of l.storage) m.set(k, toData(v));
    storage = m;
  }
  return {
    pc: l.pc,
    op: l.op,
    gas: l.gas,
    gasCost: l.gasCost,
    depth: l.depth,
    error: l.error === undefined || l.error === "" ? undefined : l.error,
    refund: l.refund,
    stack: l.stack?.map(toQuantity),
    memory: l.memory?.map(toData),
    returnData: l.returnData === undefined ? undefined : toData(l.returnData),
    storage,
  };
}

function encodeCallFrame(f: CallFrame): WireValue {
  return {
    type: f.type,
    from: toAddress(f.from),
    gas: toQuantity(f.gas),
    gasUsed: toQuantity(f.gasUsed),
    to: f.to === undefined ? undefined : toAddress(f.to),
    input: toData(f.input),
    output: f.output === undefined ? undefined : toData(f.output),
    error: f.error,
    revertReason: f.revertReason,
    calls: f.calls === undefined || f.calls.length === 0 ? undefined : f.calls.map(encodeCallFrame),
    logs:
      f.logs === undefined || f.logs.length === 0
        ? undefined
        : f.logs.map((l) => ({
            address: toAddress(l.address),
            topics: l.topics.map(toData),
            data: toData(l.data),
            position: toQuantity(l.position),
          })),
    value: f.value === undefined ? undefined : toQuantity(f.value),
  };
}

export function encodeTraceResult(r: TraceResult): WireValue {
  if (r.kind === "call") return encodeCallFrame(r.frame);
  return {
    gas: r.gas,
    failed: r.failed,
    returnValue: toData(r.returnValue),
    structLogs: r.structLogs.map(encodeStructLog),
  };
}
