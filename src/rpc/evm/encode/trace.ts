import type { WireValue } from "../../jsonrpc/index.js";
import type { CallFrame, PrestateAccount, StructLog, TraceResult } from "../services.js";
import { toAddress, toData, toQuantity } from "./hex.js";
import { encodeVmTrace } from "./parity.js";

/**
 * Trace results: the struct (opcode) logger as in execution-apis OpcodeTransactionTrace (gas
 * numbers are JSON integers), geth's callTracer frames (hex quantities) and prestateTracer maps.
 */

function encodeStructLog(l: StructLog): WireValue {
  let storage: WireValue | undefined;
  if (l.storage !== undefined) {
    const m = new Map<string, WireValue>();
    // geth's toLegacyJSON: both as 0x-prefixed 32-byte hex.
    for (const [k, v] of l.storage) m.set(k.startsWith("0x") ? k : `0x${k}`, toData(v));
    storage = m;
  }
  return {
    pc: l.pc,
    op: l.op,
    gas: l.gas,
    gasCost: l.gasCost,
    depth: l.depth,
    error: l.error === undefined || l.error === "" ? undefined : l.error,
    // geth: `refund,omitempty`.
    refund: l.refund === 0n ? undefined : l.refund,
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
    // geth: `output,omitempty` (no output, or an empty one, is left out).
    output: f.output === undefined || f.output.length === 0 ? undefined : toData(f.output),
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
            index: toQuantity(l.index),
            position: toQuantity(l.position),
          })),
    value: f.value === undefined ? undefined : toQuantity(f.value),
  };
}

/** geth's prestate account: nonce as a JSON number, empty fields left out. */
function encodePrestateAccount(a: PrestateAccount): WireValue {
  const storage = new Map<string, WireValue>();
  for (const [slot, value] of a.storage) storage.set(`0x${slot}`, toData(value));
  return {
    balance: a.balance === undefined ? undefined : toQuantity(a.balance),
    code: a.code === undefined || a.code.length === 0 ? undefined : toData(a.code),
    codeHash: a.codeHash === undefined ? undefined : toData(a.codeHash),
    nonce: a.nonce === undefined || a.nonce === 0n ? undefined : Number(a.nonce),
    storage: storage.size === 0 ? undefined : storage,
  };
}

function encodePrestateMap(m: ReadonlyMap<string, PrestateAccount>): WireValue {
  const out = new Map<string, WireValue>();
  for (const [address, a] of m) out.set(`0x${address}`, encodePrestateAccount(a));
  return out;
}

export function encodeTraceResult(r: TraceResult): WireValue {
  if (r.kind === "call") return encodeCallFrame(r.frame);
  if (r.kind === "noop") return {};
  if (r.kind === "fourByte") return new Map<string, WireValue>(r.counts);
  if (r.kind === "vm") return r.trace === undefined ? null : encodeVmTrace(r.trace);
  if (r.kind === "prestate") {
    return r.diffMode ? { post: encodePrestateMap(r.post), pre: encodePrestateMap(r.pre) } : encodePrestateMap(r.pre);
  }
  return {
    gas: r.gas,
    failed: r.failed,
    returnValue: toData(r.returnValue),
    structLogs: r.structLogs.map(encodeStructLog),
  };
}
