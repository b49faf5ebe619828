import type { ExecTxResult } from "../types/index.js";
import { txHashHex } from "../types/index.js";
import type { ChainEpoch } from "./chainEpoch.js";
import {
  TxNotIncludedError,
  type TxWaitError,
  TxWaitRewoundError,
  TxWaitStoppedError,
  TxWaitTimeoutError,
} from "./errors.js";

/** Where a committed block put a tx, and what executing it returned. */
export interface TxIncluded {
  height: number;
  index: number;
  result: ExecTxResult;
}

export interface TxWaitOptions {
  /** Rejects with TxWaitTimeoutError after this long (absent: no deadline of its own). */
  timeoutMs?: number;
  /** Rejects with TxNotIncludedError("blocks") once this many blocks were committed without the tx. */
  maxBlocks?: number;
  /**
   * Asked after each committed block that did not include the tx: false rejects with
   * TxNotIncludedError("dropped") (the mempool let the tx go, so no block will carry it).
   */
  stillPending?: () => boolean;
  /** Who waits (the node RPC's subscriber id), for per-client counts and limits. */
  owner?: string;
  /**
   * A block committed before the wait started counts (among the last `recent` inclusions kept): for
   * callers that start waiting after the tx was admitted. Off by default: a wait started before
   * CheckTx wants the block after it, and the same bytes may be admitted and included again (a
   * kvstore tx once the mempool cache forgot it).
   */
  acceptRecent?: boolean;
}

/** One wait: `promise` settles once; `cancel()` drops the wait, and its promise then never settles. */
export interface TxWait {
  readonly promise: Promise<TxIncluded>;
  cancel(): void;
}

/**
 * A wait's end as a value (the RPC servers' shape, rpc/comet and rpc/evm services.ts): "cancelled"
 * when the node stopped or the chain was rolled back, "notIncluded" for maxBlocks and stillPending.
 */
export type TxWaitOutcome =
  | ({ kind: "included" } & TxIncluded)
  | { kind: "timeout" }
  | { kind: "cancelled"; reason: string }
  | { kind: "notIncluded"; reason: string };

interface Waiter {
  key: string;
  owner: string | undefined;
  resolve: (v: TxIncluded) => void;
  reject: (err: TxWaitError) => void;
  timer: NodeJS.Timeout | undefined;
  maxBlocks: number;
  stillPending: (() => boolean) | undefined;
  blocks: number;
}

/** How many recent inclusions are kept for waits that start after their tx's block. */
export const DEFAULT_RECENT_INCLUSIONS = 256;

/**
 * "Wait until my tx is in a block", the one place the node does it: `broadcast_tx_commit`, a dev
 * chain's automined sends (eth_sendTransaction / eth_sendRawTransaction answered after the block),
 * eth_sendRawTransactionSync and the dev cheats that mine all wait here. The node feeds it every
 * committed block once the block is indexed and readable (`blockCommitted`), every rewind of the
 * chain epoch (`rewound`) and its stop (`stop`): one feed for all waiters, however many there are.
 *
 * A tx is named by its bytes (CometBFT's tx hash, sha256). A wait with `acceptRecent` started after
 * the tx's block resolves at once while the inclusion is among the last `recent` ones kept.
 */
export class TxInclusion {
  /** tx hash hex → its waiters, in the order they started. */
  readonly #waiters = new Map<string, Set<Waiter>>();
  #count = 0;
  /** owner → how many of its waits are open. */
  readonly #owners = new Map<string, number>();
  /** The last inclusions seen, oldest first (a Map keeps insertion order). */
  readonly #recent = new Map<string, TxIncluded>();
  readonly #recentMax: number;
  #stopped: string | undefined;

  /** With `epoch`, its rewinds call `rewound` (the node passes its chain epoch). */
  constructor(opts: { recent?: number; epoch?: ChainEpoch } = {}) {
    this.#recentMax = opts.recent ?? DEFAULT_RECENT_INCLUSIONS;
    opts.epoch?.onRewind((height) => this.rewound(height));
  }

  /** Waits for the block that includes `tx` (the tx's bytes). */
  wait(tx: Uint8Array, opts: TxWaitOptions = {}): TxWait {
    const key = txHashHex(tx);
    if (this.#stopped !== undefined) return settledWait(Promise.reject(new TxWaitStoppedError(this.#stopped)));
    const seen = opts.acceptRecent === true ? this.#recent.get(key) : undefined;
    if (seen !== undefined) return settledWait(Promise.resolve(seen));
    let waiter: Waiter | undefined;
    const promise = new Promise<TxIncluded>((resolve, reject) => {
      waiter = {
        key,
        owner: opts.owner,
        resolve,
        reject,
        timer: undefined,
        maxBlocks: opts.maxBlocks ?? Number.POSITIVE_INFINITY,
        stillPending: opts.stillPending,
        blocks: 0,
      };
    });
    const w = waiter as Waiter;
    if (opts.timeoutMs !== undefined) {
      const ms = opts.timeoutMs;
      w.timer = setTimeout(() => this.#settle(w, undefined, new TxWaitTimeoutError(ms)), ms);
    }
    let set = this.#waiters.get(key);
    if (set === undefined) {
      set = new Set();
      this.#waiters.set(key, set);
    }
    set.add(w);
    this.#count++;
    // The caller may await other things first (CheckTx): a rejection meanwhile is not unhandled.
    promise.catch(noop);
    if (w.owner !== undefined) this.#owners.set(w.owner, (this.#owners.get(w.owner) ?? 0) + 1);
    return { promise, cancel: () => this.#remove(w) };
  }

  /** wait(), its end given as a TxWaitOutcome rather than a rejection. */
  waitOutcome(tx: Uint8Array, opts: TxWaitOptions = {}): { outcome: Promise<TxWaitOutcome>; cancel(): void } {
    const w = this.wait(tx, opts);
    return { outcome: w.promise.then(includedOutcome, failedOutcome), cancel: w.cancel };
  }

  /** Open waits (all owners'). */
  size(): number {
    return this.#count;
  }

  /** Open waits of `owner`. */
  ownerWaits(owner: string): number {
    return this.#owners.get(owner) ?? 0;
  }

  /** The owners with at least one open wait. */
  owners(): IterableIterator<string> {
    return this.#owners.keys();
  }

  /** Open waits that have an owner. */
  ownedWaits(): number {
    let n = 0;
    for (const c of this.#owners.values()) n += c;
    return n;
  }

  /** True when `owner` already waits for `tx`. */
  isWaiting(owner: string, tx: Uint8Array): boolean {
    const set = this.#waiters.get(txHashHex(tx));
    if (set === undefined) return false;
    for (const w of set) if (w.owner === owner) return true;
    return false;
  }

  /**
   * A block was committed (and is readable): its txs' waiters resolve; every other waiter has seen
   * one more block. `results[i]` is txs[i]'s.
   */
  blockCommitted(height: number, txs: readonly Uint8Array[], results: readonly ExecTxResult[]): void {
    if (this.#stopped !== undefined) return;
    if (this.#count === 0 && this.#recentMax === 0) return;
    for (let index = 0; index < txs.length; index++) {
      const key = txHashHex(txs[index] as Uint8Array);
      const inc: TxIncluded = { height, index, result: results[index] as ExecTxResult };
      this.#remember(key, inc);
      const set = this.#waiters.get(key);
      if (set !== undefined) for (const w of [...set]) this.#settle(w, inc, undefined);
    }
    if (this.#count === 0) return;
    for (const set of [...this.#waiters.values()]) {
      for (const w of [...set]) {
        w.blocks++;
        if (w.blocks >= w.maxBlocks) this.#settle(w, undefined, new TxNotIncludedError("blocks", w.blocks));
        else if (w.stillPending !== undefined && !w.stillPending()) {
          this.#settle(w, undefined, new TxNotIncludedError("dropped", w.blocks));
        }
      }
    }
  }

  /** The chain went back to `height`: inclusions above it are forgotten and every open wait is rejected. */
  rewound(height: number): void {
    for (const [key, inc] of [...this.#recent]) if (inc.height > height) this.#recent.delete(key);
    this.#rejectAll(new TxWaitRewoundError(height));
  }

  /** The node is stopping: every open wait, and every later one, is rejected with `reason`. */
  stop(reason: string): void {
    this.#stopped = reason;
    this.#recent.clear();
    this.#rejectAll(new TxWaitStoppedError(reason));
  }

  #rejectAll(err: TxWaitError): void {
    for (const set of [...this.#waiters.values()]) for (const w of [...set]) this.#settle(w, undefined, err);
  }

  #remember(key: string, inc: TxIncluded): void {
    if (this.#recentMax === 0) return;
    this.#recent.delete(key);
    this.#recent.set(key, inc);
    if (this.#recent.size > this.#recentMax) {
      const oldest = this.#recent.keys().next().value as string;
      this.#recent.delete(oldest);
    }
  }

  #settle(w: Waiter, inc: TxIncluded | undefined, err: TxWaitError | undefined): void {
    if (!this.#remove(w)) return;
    if (inc !== undefined) w.resolve(inc);
    else w.reject(err as TxWaitError);
  }

  /** False when the waiter was already gone. */
  #remove(w: Waiter): boolean {
    const set = this.#waiters.get(w.key);
    if (set === undefined || !set.delete(w)) return false;
    if (set.size === 0) this.#waiters.delete(w.key);
    this.#count--;
    if (w.timer !== undefined) clearTimeout(w.timer);
    if (w.owner !== undefined) {
      const n = (this.#owners.get(w.owner) ?? 1) - 1;
      if (n === 0) this.#owners.delete(w.owner);
      else this.#owners.set(w.owner, n);
    }
    return true;
  }
}

function includedOutcome(inc: TxIncluded): TxWaitOutcome {
  return { kind: "included", height: inc.height, index: inc.index, result: inc.result };
}

function failedOutcome(err: unknown): TxWaitOutcome {
  if (err instanceof TxWaitTimeoutError) return { kind: "timeout" };
  if (err instanceof TxWaitStoppedError) return { kind: "cancelled", reason: err.reason };
  if (err instanceof TxWaitRewoundError) return { kind: "cancelled", reason: err.message };
  if (err instanceof TxNotIncludedError) return { kind: "notIncluded", reason: err.message };
  throw err;
}

function settledWait(promise: Promise<TxIncluded>): TxWait {
  // A caller that cancels instead of awaiting must not leave an unhandled rejection behind.
  promise.catch(() => undefined);
  return { promise, cancel: noop };
}

function noop(): void {}
