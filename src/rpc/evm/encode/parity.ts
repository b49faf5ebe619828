import type { WireValue } from "../../jsonrpc/index.js";
import type { CallFrame, PrestateAccount, VmTrace } from "../services.js";
import { padBytes, toAddress, toData, toQuantity, ZERO_ADDRESS } from "./hex.js";

/**
 * The trace namespace's answers (OpenEthereum's, as Erigon serves them for Otterscan) built from the
 * callTracer's frame tree and the prestateTracer's diff: flat traces with their trace addresses, and
 * the state diff (docs/ethereum-rpc.md "Otterscan on dev chains").
 */

/** Where a trace sits in the block, for trace_transaction / trace_block (absent in trace_replay*). */
export interface TraceLocation {
  readonly blockHash: Uint8Array;
  readonly blockNumber: number;
  readonly transactionHash: Uint8Array;
  readonly transactionPosition: number;
}

const CALL_TYPES: Readonly<Record<string, string>> = {
  CALL: "call",
  STATICCALL: "staticcall",
  DELEGATECALL: "delegatecall",
  CALLCODE: "callcode",
};

/** OpenEthereum's error names for the failures geth's texts describe; other texts as they are. */
function parityError(gethError: string): string {
  if (gethError === "execution reverted") return "Reverted";
  if (gethError === "out of gas") return "Out of gas";
  if (gethError.startsWith("invalid opcode")) return "Bad instruction";
  if (gethError === "invalid jump destination") return "Bad jump destination";
  if (gethError.startsWith("stack underflow")) return "Stack underflow";
  return gethError;
}

function actionOf(f: CallFrame): { type: string; action: WireValue; result: WireValue } {
  if (f.type === "SELFDESTRUCT") {
    return {
      type: "suicide",
      action: {
        address: toAddress(f.from),
        refundAddress: toAddress(f.to ?? ZERO_ADDRESS),
        balance: toQuantity(f.value ?? 0n),
      },
      result: null,
    };
  }
  if (f.type === "CREATE" || f.type === "CREATE2") {
    return {
      type: "create",
      action: {
        from: toAddress(f.from),
        gas: toQuantity(f.gas),
        init: toData(f.input),
        value: toQuantity(f.value ?? 0n),
        creationMethod: f.type === "CREATE" ? "create" : "create2",
      },
      result:
        f.error === undefined
          ? {
              address: toAddress(f.to ?? ZERO_ADDRESS),
              code: toData(f.output ?? new Uint8Array(0)),
              gasUsed: toQuantity(f.gasUsed),
            }
          : null,
    };
  }
  return {
    type: "call",
    action: {
      from: toAddress(f.from),
      callType: CALL_TYPES[f.type] ?? f.type.toLowerCase(),
      gas: toQuantity(f.gas),
      input: toData(f.input),
      to: toAddress(f.to ?? ZERO_ADDRESS),
      value: toQuantity(f.value ?? 0n),
    },
    result:
      f.error === undefined ? { gasUsed: toQuantity(f.gasUsed), output: toData(f.output ?? new Uint8Array(0)) } : null,
  };
}

/** The frame tree as OpenEthereum's flat traces, depth first, each with its trace address. */
export function encodeParityTraces(root: CallFrame, at: TraceLocation | undefined): WireValue[] {
  const out: WireValue[] = [];
  const walk = (f: CallFrame, address: number[]): void => {
    const { type, action, result } = actionOf(f);
    const calls = f.calls ?? [];
    const entry: { [key: string]: WireValue } = { action };
    if (at !== undefined) {
      entry.blockHash = toData(at.blockHash);
      entry.blockNumber = at.blockNumber;
    }
    if (f.error !== undefined) entry.error = parityError(f.error);
    entry.result = result;
    entry.subtraces = calls.length;
    entry.traceAddress = address;
    if (at !== undefined) {
      entry.transactionHash = toData(at.transactionHash);
      entry.transactionPosition = at.transactionPosition;
    }
    entry.type = type;
    out.push(entry);
    for (const [i, c] of calls.entries()) walk(c, [...address, i]);
  };
  walk(root, []);
  return out;
}

const ZERO_WORD = new Uint8Array(32);

function change(before: string | undefined, after: string | undefined): WireValue {
  if (before === after) return "=";
  if (before === undefined) return { "+": after ?? null };
  if (after === undefined) return { "-": before };
  return { "*": { from: before, to: after } };
}

function word(v: Uint8Array | undefined): string {
  return toData(padBytes(v ?? ZERO_WORD, 32));
}

/**
 * OpenEthereum's stateDiff from a prestateTracer diff: per changed account `balance`, `code`, `nonce`
 * as `"="`, `{"+": new}` (the account did not exist), `{"-": old}` (it was deleted) or
 * `{"*": {from, to}}`, and `storage` per changed slot.
 */
export function encodeStateDiff(
  pre: ReadonlyMap<string, PrestateAccount>,
  post: ReadonlyMap<string, PrestateAccount>,
): WireValue {
  const out: { [address: string]: WireValue } = {};
  const keys = [...new Set([...pre.keys(), ...post.keys()])].sort();
  for (const key of keys) {
    const before = pre.get(key);
    const after = post.get(key);
    const storage: { [slot: string]: WireValue } = {};
    if (before === undefined) {
      // Created: every field is new. An account touched but still empty (a transfer in a frame that
      // reverted) was not created.
      const a = after as PrestateAccount;
      if ((a.balance ?? 0n) === 0n && (a.nonce ?? 0n) === 0n && (a.code?.length ?? 0) === 0 && a.storage.size === 0) {
        continue;
      }
      for (const [slot, v] of a.storage) storage[`0x${slot}`] = { "+": word(v) };
      out[`0x${key}`] = {
        balance: { "+": toQuantity(a.balance ?? 0n) },
        code: { "+": toData(a.code ?? new Uint8Array(0)) },
        nonce: { "+": toQuantity(a.nonce ?? 0n) },
        storage,
      };
      continue;
    }
    if (after === undefined) {
      // Deleted (self-destructed): every field is gone.
      for (const [slot, v] of before.storage) storage[`0x${slot}`] = { "-": word(v) };
      out[`0x${key}`] = {
        balance: { "-": toQuantity(before.balance ?? 0n) },
        code: { "-": toData(before.code ?? new Uint8Array(0)) },
        nonce: { "-": toQuantity(before.nonce ?? 0n) },
        storage,
      };
      continue;
    }
    const balance = toQuantity(before.balance ?? 0n);
    const nonce = toQuantity(before.nonce ?? 0n);
    const code = toData(before.code ?? new Uint8Array(0));
    const slots = [...new Set([...before.storage.keys(), ...after.storage.keys()])].sort();
    for (const slot of slots)
      storage[`0x${slot}`] = change(word(before.storage.get(slot)), word(after.storage.get(slot)));
    out[`0x${key}`] = {
      balance: after.balance === undefined ? "=" : change(balance, toQuantity(after.balance)),
      code:
        after.code === undefined && after.codeHash === undefined
          ? "="
          : change(code, toData(after.code ?? new Uint8Array(0))),
      nonce: after.nonce === undefined ? "=" : change(nonce, toQuantity(after.nonce)),
      storage,
    };
  }
  return out;
}

/**
 * OpenEthereum's vmTrace as Erigon writes it: `{code, ops}`, each op `{cost, ex, pc, sub, op}` with
 * `ex` `{mem, push, store, used}` (null when the opcode failed before it ran) and `sub` the frame the
 * opcode opened (null when none).
 */
export function encodeVmTrace(t: VmTrace): WireValue {
  return {
    code: toData(t.code),
    ops: t.ops.map((o) => ({
      cost: Number(o.cost),
      ex:
        o.ex === undefined
          ? null
          : {
              mem: o.ex.mem === undefined ? null : { data: toData(o.ex.mem.data), off: o.ex.mem.off },
              push: o.ex.push.map(toQuantity),
              store:
                o.ex.store === undefined ? null : { key: toQuantity(o.ex.store.key), val: toQuantity(o.ex.store.val) },
              used: Number(o.ex.used),
            },
      pc: o.pc,
      sub: o.sub === undefined ? null : encodeVmTrace(o.sub),
      op: o.op,
    })),
  };
}
