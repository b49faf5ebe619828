import {
  create2Address,
  createAddress,
  delegationTarget,
  type EngineState,
  type OpcodeStep,
  toBig,
  type Word,
} from "../../evm/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { keccak256 } from "./crypto.js";
import { equalBytes, KECCAK256_NULL, setLengthLeft, stripZeros } from "./records.js";
import { type EvmTracer, word } from "./tracer.js";

/** One account in a prestate trace. Storage: 0x-less hex slot (64 chars) → 32-byte value. */
export interface PrestateAccount {
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  /** keccak of the code, for accounts with code (geth shows it even with disableCode). */
  codeHash?: Uint8Array;
  storage: Map<string, Uint8Array>;
}

const ZERO_HASH = new Uint8Array(32);

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

/** An account as the tx first found it. */
interface Seen {
  balance: bigint;
  nonce: bigint;
  code: Uint8Array;
  /** Slots read or written (0x-less hex) → their value before the tx changed them. */
  storage: Map<string, Uint8Array>;
  /** geth's "empty": no nonce, code or balance before the tx (left out of the result). */
  empty: boolean;
}

const BALANCE = 0x31;
const EXTCODESIZE = 0x3b;
const EXTCODECOPY = 0x3c;
const EXTCODEHASH = 0x3f;
const SLOAD = 0x54;
const SSTORE = 0x55;
const CREATE = 0xf0;
const CALL = 0xf1;
const CALLCODE = 0xf2;
const DELEGATECALL = 0xf4;
const CREATE2 = 0xf5;
const STATICCALL = 0xfa;
const SELFDESTRUCT = 0xff;
const EMPTY = new Uint8Array(0);
/** CREATE2 init code past this size cannot have run (it would cost more gas than exists). */
const MAX_CREATE2_READ = 1n << 32n;

function addressOf(v: bigint): Uint8Array {
  return word(v).subarray(12);
}

function isZero(b: Uint8Array): boolean {
  return stripZeros(b).length === 0;
}

function byKey<V>(m: Map<string, V>): Map<string, V> {
  return new Map([...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * geth's prestateTracer (eth/tracers/native/prestate.go): the state before the tx of every account
 * and storage slot the tx touches — the sender, the recipient (or created contract) and its EIP-7702
 * delegate, the coinbase, and whatever SLOAD/SSTORE, BALANCE, EXTCODE*, CALL* (and the delegate of
 * its target), CREATE* and SELFDESTRUCT reach, unless the opcode failed before it executed. Each is
 * read at first touch, which is before the tx changed it (the sender, recipient and coinbase before
 * gas is bought). Accounts that were empty before the tx (no nonce, code or balance: contracts it
 * creates, among others) are left out. Diff mode gives `pre` and `post` of what changed only
 * (unchanged accounts and slots are dropped, a zero slot is absent from either side); an account the
 * tx created and self-destructed stays in `pre` only.
 */
export function createPrestateTracer(opts: PrestateTracerOptions = {}): EvmTracer<PrestateResult> {
  const seen = new Map<string, Seen>();
  const created = new Set<string>();
  const deleted = new Set<string>();
  let state: EngineState | undefined;
  /** Diff mode: pre and post, from afterTx. */
  let diffed: { pre: Map<string, PrestateAccount>; post: Map<string, PrestateAccount> } | undefined;
  // What the running opcode touches, read before it runs and kept once it is known not to have failed
  // before executing (geth's OnOpcode returns at once on such a fault).
  const pendingAccounts: [string, Seen][] = [];
  const pendingSlots: [string, string, Uint8Array][] = [];
  const pendingCreated: string[] = [];
  let pendingDeleted: string | undefined;

  const read = (addr: Uint8Array): Seen => {
    const st = state as EngineState;
    const a = st.account(addr);
    const code = a.exists ? st.code(addr) : EMPTY;
    return {
      balance: a.balance,
      nonce: a.nonce,
      code,
      storage: new Map(),
      empty: a.nonce === 0n && code.length === 0 && a.balance === 0n,
    };
  };

  const lookupAccount = (addr: Uint8Array): void => {
    const key = bytesToHex(addr);
    if (!seen.has(key)) seen.set(key, read(addr));
  };

  /** Queues an account read for the running opcode. */
  const touchAccount = (addr: Uint8Array): void => {
    const key = bytesToHex(addr);
    if (seen.has(key) || pendingAccounts.some(([k]) => k === key)) return;
    pendingAccounts.push([key, read(addr)]);
  };

  /** Queues a slot read (and its account's) for the running opcode. */
  const touchSlot = (addr: Uint8Array, slot: Uint8Array): void => {
    if (opts.disableStorage === true) return;
    touchAccount(addr);
    const key = bytesToHex(addr);
    const slotKey = bytesToHex(slot);
    if (seen.get(key)?.storage.has(slotKey) === true) return;
    pendingSlots.push([key, slotKey, setLengthLeft((state as EngineState).storage(addr, slot), 32)]);
  };

  /** The delegate of an EIP-7702 delegated account (geth looks it up on Prague). */
  const touchDelegate = (addr: Uint8Array, touch: (a: Uint8Array) => void): void => {
    const target = delegationTarget((state as EngineState).code(addr));
    if (target !== undefined) touch(target.slice());
  };

  const onOpcode = (s: OpcodeStep): void => {
    const op = s.op;
    const n = s.stackSize;
    const stack = s.stack;
    const top = toBig(stack[n - 1] as Word);
    if (n >= 1 && (op === SLOAD || op === SSTORE)) {
      touchSlot(s.address, word(top));
    } else if (
      n >= 1 &&
      (op === EXTCODECOPY || op === EXTCODEHASH || op === EXTCODESIZE || op === BALANCE || op === SELFDESTRUCT)
    ) {
      touchAccount(addressOf(top));
      if (op === SELFDESTRUCT && created.has(bytesToHex(s.address))) pendingDeleted = bytesToHex(s.address);
    } else if (n >= 5 && (op === CALL || op === CALLCODE || op === DELEGATECALL || op === STATICCALL)) {
      const target = addressOf(toBig(stack[n - 2] as Word));
      touchAccount(target);
      touchDelegate(target, touchAccount);
    } else if (op === CREATE) {
      const addr = createAddress(s.address, (state as EngineState).account(s.address).nonce);
      touchAccount(addr);
      pendingCreated.push(bytesToHex(addr));
    } else if (n >= 4 && op === CREATE2) {
      const offset = toBig(stack[n - 2] as Word);
      const size = toBig(stack[n - 3] as Word);
      if (offset > MAX_CREATE2_READ || size > MAX_CREATE2_READ) return;
      // Memory past its current end reads as zeros (CREATE2 has not expanded it yet).
      const init = new Uint8Array(Number(size));
      const from = Number(offset);
      if (from < s.memory.length) init.set(s.memory.subarray(from, Math.min(s.memory.length, from + init.length)));
      const addr = create2Address(s.address, word(toBig(stack[n - 4] as Word)), init);
      touchAccount(addr);
      pendingCreated.push(bytesToHex(addr));
    }
  };

  const onOpcodeEnd = (_cost: number, error: string): void => {
    if (error === "") {
      for (const [key, a] of pendingAccounts) if (!seen.has(key)) seen.set(key, a);
      for (const [key, slot, value] of pendingSlots) {
        const st = seen.get(key)?.storage;
        if (st !== undefined && !st.has(slot)) st.set(slot, value);
      }
      for (const key of pendingCreated) created.add(key);
      if (pendingDeleted !== undefined) deleted.add(pendingDeleted);
    }
    pendingAccounts.length = 0;
    pendingSlots.length = 0;
    pendingCreated.length = 0;
    pendingDeleted = undefined;
  };

  const render = (a: Seen, storage: Map<string, Uint8Array>): PrestateAccount => {
    const out: PrestateAccount = { balance: a.balance, storage: new Map() };
    if (a.nonce !== 0n) out.nonce = a.nonce;
    if (opts.disableCode !== true && a.code.length > 0) out.code = a.code;
    if (a.code.length > 0) out.codeHash = keccak256(a.code);
    if (opts.disableStorage !== true) out.storage = byKey(storage);
    return out;
  };

  /** geth's processDiffState: `post` of what changed, `pre` narrowed to it. */
  const diff = (after: EngineState): { pre: Map<string, PrestateAccount>; post: Map<string, PrestateAccount> } => {
    const pre = new Map<string, PrestateAccount>();
    const changed = new Map<string, PrestateAccount>();
    for (const [key, a] of seen) {
      if (deleted.has(key)) {
        if (!a.empty) pre.set(key, render(a, a.storage));
        continue;
      }
      const addr = Buffer.from(key, "hex");
      const now = after.account(addr);
      const code = now.exists ? after.code(addr) : EMPTY;
      const out: PrestateAccount = { storage: new Map() };
      let modified = false;
      if (now.balance !== a.balance) {
        modified = true;
        out.balance = now.balance;
      }
      if (now.nonce !== a.nonce) {
        modified = true;
        out.nonce = now.nonce;
      }
      // geth compares code hashes (GetCodeHash: zero for an account that does not exist, the empty
      // code's hash for one without code), and the code itself unless disableCode.
      const before = a.code.length > 0 ? keccak256(a.code) : KECCAK256_NULL;
      const codeHash = !now.exists ? ZERO_HASH : code.length > 0 ? keccak256(code) : KECCAK256_NULL;
      if (!equalBytes(codeHash, before)) {
        modified = true;
        out.codeHash = codeHash;
      }
      if (!equalBytes(code, a.code)) {
        modified = true;
        if (opts.disableCode !== true) out.code = code;
      }
      const kept = new Map<string, Uint8Array>();
      for (const [slot, before] of a.storage) {
        const value = setLengthLeft(after.storage(addr, Buffer.from(slot, "hex")), 32);
        if (equalBytes(value, before)) continue;
        modified = true;
        if (!isZero(before)) kept.set(slot, before);
        if (!isZero(value)) out.storage.set(slot, value);
      }
      if (!modified) continue;
      out.storage = byKey(out.storage);
      changed.set(key, out);
      if (!a.empty) pre.set(key, render(a, kept));
    }
    return { pre: byKey(pre), post: byKey(changed) };
  };

  return {
    hooks: (start) => {
      state = start.state;
      if (start.to === undefined) {
        const addr = createAddress(start.from, start.state.account(start.from).nonce);
        created.add(bytesToHex(addr));
        lookupAccount(start.from);
        lookupAccount(addr);
      } else {
        touchDelegate(start.to, lookupAccount);
        lookupAccount(start.from);
        lookupAccount(start.to);
      }
      lookupAccount(start.coinbase);
      return { onOpcode, onOpcodeEnd };
    },
    afterTx: (after) => {
      if (opts.diffMode === true) diffed = diff(after);
    },
    result: () => {
      if (opts.diffMode === true) {
        if (diffed === undefined) throw new Error("the prestate tracer did not see the end of the tx");
        return { diffMode: true, ...diffed };
      }
      const out = new Map<string, PrestateAccount>();
      for (const [key, a] of seen) if (!a.empty) out.set(key, render(a, a.storage));
      return { diffMode: false, pre: byKey(out), post: new Map() };
    },
  };
}
