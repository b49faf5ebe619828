import type { CallArgs, CallOptions, CallResult } from "./readerTypes.js";

/** Results kept at most (the oldest goes first). */
const ENTRIES = 4096;
/** Slots of the doorkeeper (a power of two). */
const DOORKEEPER_SLOTS = 8192;

/**
 * eth_call results by height and arguments (instant finality: a committed height's answer never
 * changes). A result is kept only when its call comes a second time at that height: a doorkeeper (a
 * table of 32-bit hashes of calls seen once, as TinyLFU's) answers "seen before?" without building the
 * key. A stream of calls that all differ (a new holder's balanceOf each time) builds no key and keeps
 * nothing: keeping each result (a Map entry that outlives the young generation, then its eviction) cost
 * more than the call itself (distinct balanceOf, in process: ~45 µs a call with every result kept,
 * ~17 µs without; 2026-11-30). A call asked again is kept from its second asking and answered from the
 * memo from its third.
 */
export class CallMemo {
  readonly #results = new Map<string, CallResult>();
  readonly #seen = new Int32Array(DOORKEEPER_SLOTS);

  /** The kept result of this call, if any; marks nothing. */
  peek(args: CallArgs, opts: CallOptions, height: number): CallResult | undefined {
    if (this.#results.size === 0 || !this.#wasSeen(callHash(args, height))) return undefined;
    const key = callMemoKey(args, opts, height);
    return key === undefined ? undefined : this.#results.get(key);
  }

  /**
   * The key to keep this call's result under once it has run, or undefined: a call seen for the first
   * time at this height (now marked as seen), or one that is never kept (overrides, block overrides,
   * access or authorization lists).
   */
  admit(args: CallArgs, opts: CallOptions, height: number): string | undefined {
    const h = callHash(args, height);
    const slot = h & (DOORKEEPER_SLOTS - 1);
    if (this.#seen[slot] !== h) {
      this.#seen[slot] = h;
      return undefined;
    }
    return callMemoKey(args, opts, height);
  }

  get(key: string): CallResult | undefined {
    return this.#results.get(key);
  }

  set(key: string, result: CallResult): void {
    if (this.#results.has(key)) return;
    this.#results.set(key, result);
    if (this.#results.size > ENTRIES) {
      const oldest = this.#results.keys().next().value as string;
      this.#results.delete(oldest);
    }
  }

  /** Forgets every result and every call seen (a dev chain rolled back: heights are reused). */
  clear(): void {
    this.#results.clear();
    this.#seen.fill(0);
  }

  #wasSeen(h: number): boolean {
    return this.#seen[h & (DOORKEEPER_SLOTS - 1)] === h;
  }
}

/**
 * A 32-bit FNV-1a hash of what usually tells calls apart (height, to, data, from, gas, value). Fields
 * left out only make two calls share a doorkeeper slot; the memo's key has every field.
 */
function callHash(args: CallArgs, height: number): number {
  let h = Math.imul(0x811c9dc5 ^ height, 0x01000193);
  h = hashBytes(h, args.to);
  h = hashBytes(h, args.data);
  h = hashBytes(h, args.from);
  if (args.gas !== undefined) h = Math.imul(h ^ Number(BigInt.asUintN(32, args.gas)), 0x01000193);
  if (args.value !== undefined) h = Math.imul(h ^ Number(BigInt.asUintN(32, args.value)), 0x01000193);
  return h | 0;
}

function hashBytes(h: number, b: Uint8Array | undefined): number {
  if (b === undefined) return Math.imul(h ^ 0xff, 0x01000193);
  let x = Math.imul(h ^ b.length, 0x01000193);
  for (let i = 0; i < b.length; i++) x = Math.imul(x ^ (b[i] as number), 0x01000193);
  return x;
}

function hexOrDash(b: Uint8Array | undefined): string {
  return b === undefined ? "-" : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/**
 * The memo key of a call, or undefined when it is not memoized. A committed height's state and block
 * context never change (CometBFT finality, no reorgs), so a call without state overrides, access or
 * authorization lists gives the same result at that height every time: dApps that poll the same view
 * (balanceOf, allowance, getReserves) per block pay for one execution per block (from its second
 * asking). Thrown errors (insufficient funds, timeouts) are not kept; results (success, revert, VM
 * failure) are.
 */
function callMemoKey(args: CallArgs, opts: CallOptions, height: number): string | undefined {
  if (opts.overrides !== undefined && opts.overrides.length > 0) return undefined;
  if (opts.block !== undefined) return undefined;
  if (args.accessList !== undefined || args.authorizationList !== undefined) return undefined;
  return `${height}|${opts.gasCap ?? "d"}|${hexOrDash(args.from)}|${hexOrDash(args.to)}|${args.gas ?? "-"}|${args.gasPrice ?? "-"}|${args.maxFeePerGas ?? "-"}|${args.maxPriorityFeePerGas ?? "-"}|${args.value ?? "-"}|${hexOrDash(args.data)}`;
}
