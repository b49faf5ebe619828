import type { EVM, InterpreterStep } from "@ethereumjs/evm";
import { Address, createContractAddress, createContractAddress2 } from "@ethereumjs/util";
import { bytesToHex } from "../../util/bytes.js";
import { equalBytes, setLengthLeft, stripZeros } from "./records.js";
import { type EvmTracer, type TraceTxStart, word } from "./tracer.js";

/** One account in a prestate trace. Storage: 0x-less hex slot (64 chars) → 32-byte value. */
export interface PrestateAccount {
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  storage: Map<string, Uint8Array>;
}

/** geth's prestateTracer result: `pre` alone, or `pre` and `post` in diff mode. Keys: 0x-less hex addresses. */
export interface PrestateResult {
  diffMode: boolean;
  pre: Map<string, PrestateAccount>;
  post: Map<string, PrestateAccount>;
}

export interface PrestateTracerOptions {
  diffMode?: boolean;
  disableCode?: boolean;
  disableStorage?: boolean;
}

interface Seen {
  balance: bigint;
  nonce: bigint;
  code: Uint8Array;
  storage: Map<string, Uint8Array>;
  /** The account did not exist before the tx. */
  empty: boolean;
}

const ACCOUNT_AT_TOP = new Set(["EXTCODECOPY", "EXTCODEHASH", "EXTCODESIZE", "BALANCE", "SELFDESTRUCT"]);
const CALL_TARGET_SECOND = new Set(["CALL", "CALLCODE", "DELEGATECALL", "STATICCALL"]);

function addressOf(v: bigint): Uint8Array {
  return word(v).subarray(12);
}

function isZero(b: Uint8Array): boolean {
  return stripZeros(b).length === 0;
}

/**
 * geth's prestateTracer (eth/tracers/native/prestate.go): the state before the tx of every account
 * and storage slot the tx touches — the sender, the recipient (or created contract), the coinbase,
 * and whatever SLOAD/SSTORE, BALANCE, EXTCODE*, CALL*, CREATE* and SELFDESTRUCT reach. Each is read
 * from the EVM's state at first touch, which is before the tx changed it (the sender, recipient and
 * coinbase before gas is bought). Contracts the tx creates that did not exist are left out. Diff
 * mode gives `pre` and `post` of what changed only (unchanged accounts and slots are dropped, a
 * slot set to zero is absent from `post`).
 */
export function createPrestateTracer(opts: PrestateTracerOptions = {}): EvmTracer<PrestateResult> {
  const seen = new Map<string, Seen>();
  const created = new Set<string>();
  let evmRef: EVM | undefined;
  let outcome: PrestateResult | undefined;
  /** A state read that failed during a step: the trace is incomplete, so detach reports it. */
  let stepError: unknown;

  const state = () => {
    if (evmRef === undefined) throw new Error("the prestate tracer is not attached");
    return evmRef.stateManager;
  };

  const lookupAccount = async (addr: Uint8Array): Promise<Seen> => {
    const key = bytesToHex(addr);
    const known = seen.get(key);
    if (known !== undefined) return known;
    const a = new Address(addr.slice());
    const account = await state().getAccount(a);
    const entry: Seen = {
      balance: account?.balance ?? 0n,
      nonce: account?.nonce ?? 0n,
      code: account === undefined ? new Uint8Array(0) : await state().getCode(a),
      storage: new Map(),
      empty: account === undefined,
    };
    seen.set(key, entry);
    return entry;
  };

  const lookupStorage = async (addr: Uint8Array, slot: bigint): Promise<void> => {
    const entry = await lookupAccount(addr);
    const key = bytesToHex(word(slot));
    if (entry.storage.has(key)) return;
    entry.storage.set(key, setLengthLeft(await state().getStorage(new Address(addr.slice()), word(slot)), 32));
  };

  const onStepAsync = async (s: InterpreterStep): Promise<void> => {
    const op = s.opcode.name;
    const stack = s.stack;
    const top = stack[stack.length - 1];
    if (top === undefined) return;
    if (op === "SLOAD" || op === "SSTORE") {
      await lookupStorage(s.address.bytes, top);
    } else if (ACCOUNT_AT_TOP.has(op)) {
      await lookupAccount(addressOf(top));
    } else if (CALL_TARGET_SECOND.has(op)) {
      const target = stack[stack.length - 2];
      if (target !== undefined) await lookupAccount(addressOf(target));
    } else if (op === "CREATE") {
      // The creator's nonce as CREATE sees it (the current one, not the prestate).
      const nonce = (await state().getAccount(s.address))?.nonce ?? 0n;
      const addr = createContractAddress(s.address, nonce).bytes;
      created.add(bytesToHex(addr));
      await lookupAccount(addr);
    } else if (op === "CREATE2") {
      const offset = Number(stack[stack.length - 2] ?? 0n);
      const size = Number(stack[stack.length - 3] ?? 0n);
      const salt = word(stack[stack.length - 4] ?? 0n);
      // Memory past its current end reads as zeros (CREATE2 has not expanded it yet).
      const init = new Uint8Array(size);
      init.set(s.memory.subarray(offset, offset + size));
      const addr = createContractAddress2(s.address, salt, init).bytes;
      created.add(bytesToHex(addr));
      await lookupAccount(addr);
    }
  };

  const onStep = (s: InterpreterStep, resolve?: () => void): void => {
    onStepAsync(s).then(
      () => resolve?.(),
      (err: unknown) => {
        stepError ??= err;
        resolve?.();
      },
    );
  };

  const render = (a: Seen, withStorage: Map<string, Uint8Array>): PrestateAccount => {
    const out: PrestateAccount = { balance: a.balance, storage: new Map() };
    if (a.nonce !== 0n) out.nonce = a.nonce;
    if (opts.disableCode !== true && a.code.length > 0) out.code = a.code;
    if (opts.disableStorage !== true) out.storage = withStorage;
    return out;
  };

  return {
    attach: async (evm: EVM, start: TraceTxStart) => {
      evmRef = evm;
      const sender = await lookupAccount(start.from);
      if (start.to !== undefined) await lookupAccount(start.to);
      else {
        const addr = createContractAddress(new Address(start.from.slice()), sender.nonce).bytes;
        created.add(bytesToHex(addr));
        await lookupAccount(addr);
      }
      await lookupAccount(start.coinbase);
      evm.events.on("step", onStep);
    },
    detach: async (evm) => {
      evm.events.off("step", onStep);
      if (stepError !== undefined) throw stepError;
      outcome = await collect();
    },
    result: () => {
      if (outcome === undefined) throw new Error("the prestate tracer was not detached");
      return outcome;
    },
  };

  async function collect(): Promise<PrestateResult> {
    const pre = new Map<string, PrestateAccount>();
    const post = new Map<string, PrestateAccount>();
    for (const [key, a] of seen) {
      if (opts.diffMode !== true) {
        if (created.has(key) && a.empty) continue;
        pre.set(key, render(a, a.storage));
        continue;
      }
      const addr = new Address(Buffer.from(key, "hex"));
      const now = await state().getAccount(addr);
      if (now === undefined && !a.empty) {
        // Deleted by the tx: kept in pre, absent from post.
        pre.set(key, render(a, a.storage));
        continue;
      }
      const after: PrestateAccount = { storage: new Map() };
      let modified = false;
      const balance = now?.balance ?? 0n;
      const nonce = now?.nonce ?? 0n;
      const code = now === undefined ? new Uint8Array(0) : await state().getCode(addr);
      if (balance !== a.balance) {
        modified = true;
        after.balance = balance;
      }
      if (nonce !== a.nonce) {
        modified = true;
        after.nonce = nonce;
      }
      if (opts.disableCode !== true && !equalBytes(code, a.code)) {
        modified = true;
        after.code = code;
      }
      const preStorage = new Map<string, Uint8Array>();
      for (const [slot, before] of a.storage) {
        const value = setLengthLeft(await state().getStorage(addr, Buffer.from(slot, "hex")), 32);
        if (equalBytes(value, before)) continue;
        modified = true;
        if (!isZero(before)) preStorage.set(slot, before);
        if (!isZero(value)) after.storage.set(slot, value);
      }
      if (!modified) continue;
      if (!(created.has(key) && a.empty)) pre.set(key, render(a, preStorage));
      if (opts.disableStorage === true) after.storage = new Map();
      post.set(key, after);
    }
    return { diffMode: opts.diffMode === true, pre, post };
  }
}
