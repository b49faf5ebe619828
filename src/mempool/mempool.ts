import type { Application } from "../app/index.js";
import type { CheckTxResponse, ExecTxResult } from "../types/index.js";
import { CHECK_TX_TYPE, txHashHex } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import { MempoolFullError, MempoolUpdateError, TxInCacheError, TxTooLargeError } from "./errors.js";
import { RwLock } from "./rwLock.js";
import { TxCache } from "./txCache.js";

/** The [mempool] settings the flood mempool uses (config/ maps the toml keys onto these). */
export interface MempoolOptions {
  /** Max number of txs (`size`). */
  size: number;
  /** Max total bytes of all txs (`max_txs_bytes`). */
  maxTxsBytes: number;
  /** Max bytes of one tx (`max_tx_bytes`). */
  maxTxBytes: number;
  /** Seen-tx cache entries (`cache_size`); 0 disables the cache. */
  cacheSize: number;
  keepInvalidTxsInCache: boolean;
  /** Re-run CheckTx on the remaining txs after each block (`recheck`). */
  recheck: boolean;
}

/** Where a tx comes from (CometBFT TxInfo). */
export interface CheckTxOptions {
  /** The p2p node ID of the peer that sent it; absent for local submissions (RPC). */
  sender?: string;
}

/** What onTxAdded listeners learn besides the tx. */
export interface TxAddedInfo {
  /** The peer that sent the tx, if it came from one (its reactor does not echo the tx back). */
  sender?: string;
}

/**
 * What the mempool reports for CometBFT's mempool metrics (mempool/metrics.go) and the CheckTx
 * rejection reasons; node/ implements it when `[instrumentation] prometheus` is on.
 */
export interface MempoolMetricsHooks {
  /** A tx entered the mempool (TxSizeBytes). */
  added(sizeBytes: number): void;
  /** CheckTx (type new) refused the tx (FailedTxs); `code` is the app's code. */
  failed(code: number, codespace: string): void;
  /** Refused before or after CheckTx for a limit or a duplicate (RejectedTxs for "full" and "duplicate"). */
  rejected(reason: "full" | "too_large" | "in_cache" | "duplicate"): void;
  /** A rechecked tx is no longer valid and was removed (EvictedTxs). */
  evicted(): void;
  /** One tx was rechecked (RecheckTimes). */
  rechecked(): void;
}

export interface MempoolDeps {
  app: Pick<Application, "checkTx">;
  log: Logger;
  /** CometBFT's mempool metrics; absent: nothing is recorded. */
  metrics?: MempoolMetricsHooks;
}

interface Entry {
  readonly tx: Uint8Array;
  readonly key: string;
  readonly gasWanted: bigint;
  /** Height of the last update when the tx was admitted. */
  readonly height: number;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/** Bytes a tx adds to a block's Data: field tag, length varint, tx (CometBFT ComputeProtoSizeForTxs). */
export function txProtoSize(txLength: number): number {
  let varint = 1;
  for (let n = txLength; n >= 0x80; n = Math.floor(n / 0x80)) varint++;
  return 1 + varint + txLength;
}

/**
 * CometBFT's flood (clist) mempool: txs admitted through the app's CheckTx, kept in arrival order,
 * reaped for proposals, removed after commit and rechecked against the new state.
 */
export class Mempool {
  readonly #opts: MempoolOptions;
  readonly #app: Pick<Application, "checkTx">;
  readonly #log: Logger;
  readonly #metrics: MempoolMetricsHooks | undefined;
  readonly #entries = new Map<string, Entry>();
  #head: Entry | undefined;
  #tail: Entry | undefined;
  #bytes = 0;
  /** Slots held by admissions waiting on the app, so concurrent checkTx calls cannot overshoot limits. */
  #reservedCount = 0;
  #reservedBytes = 0;
  readonly #cache: TxCache;
  readonly #lock = new RwLock();
  #height = 0;
  #notified = false;
  readonly #listeners = new Set<() => void>();
  readonly #addedListeners = new Set<(tx: Uint8Array, info: TxAddedInfo) => void>();

  constructor(opts: MempoolOptions, deps: MempoolDeps) {
    this.#opts = {
      size: opts.size,
      maxTxsBytes: opts.maxTxsBytes,
      maxTxBytes: opts.maxTxBytes,
      cacheSize: opts.cacheSize,
      keepInvalidTxsInCache: opts.keepInvalidTxsInCache,
      recheck: opts.recheck,
    };
    this.#app = deps.app;
    this.#log = deps.log;
    this.#metrics = deps.metrics;
    this.#cache = new TxCache(opts.cacheSize);
  }

  /**
   * Admits a tx: limits, seen-tx cache, then the app's CheckTx (type new). Resolves with the app's
   * response, also when it rejects the tx (code ≠ 0, not added). Throws MempoolFullError,
   * TxTooLargeError or TxInCacheError, checked in CometBFT's order. Waits while lock() is held.
   * `opts.sender` names the peer it came from (passed on to onTxAdded listeners).
   */
  async checkTx(tx: Uint8Array, opts: CheckTxOptions = {}): Promise<CheckTxResponse> {
    if (!this.#lock.tryRead()) await this.#lock.read();
    try {
      return await this.#admit(tx, opts.sender);
    } finally {
      this.#lock.releaseRead();
    }
  }

  async #admit(tx: Uint8Array, sender: string | undefined): Promise<CheckTxResponse> {
    const size = tx.length;
    const count = this.#entries.size + this.#reservedCount;
    const bytes = this.#bytes + this.#reservedBytes;
    if (count >= this.#opts.size || size + bytes > this.#opts.maxTxsBytes) {
      this.#metrics?.rejected("full");
      throw new MempoolFullError(count, this.#opts.size, bytes, this.#opts.maxTxsBytes);
    }
    if (size > this.#opts.maxTxBytes) {
      this.#metrics?.rejected("too_large");
      throw new TxTooLargeError(this.#opts.maxTxBytes, size);
    }
    const key = txHashHex(tx);
    if (!this.#cache.push(key)) {
      this.#metrics?.rejected("in_cache");
      throw new TxInCacheError();
    }

    this.#reservedCount++;
    this.#reservedBytes += size;
    let res: CheckTxResponse;
    try {
      res = await this.#app.checkTx({ tx, type: CHECK_TX_TYPE.new });
    } catch (err) {
      // The app failed, not the tx: let it be submitted again.
      this.#cache.remove(key);
      throw err;
    } finally {
      this.#reservedCount--;
      this.#reservedBytes -= size;
    }

    if (res.code !== 0) {
      if (!this.#opts.keepInvalidTxsInCache) this.#cache.remove(key);
      this.#metrics?.failed(res.code, res.codespace);
      this.#log.debug({ tx: key, code: res.code, log: res.log }, "rejected invalid transaction");
      return res;
    }
    if (this.#entries.has(key)) {
      this.#metrics?.rejected("duplicate");
      return res;
    }
    this.#append({ tx, key, gasWanted: res.gasWanted, height: this.#height, prev: undefined, next: undefined });
    this.#metrics?.added(size);
    this.#log.debug({ tx: key, height: this.#height, total: this.#entries.size }, "added valid transaction");
    this.#notifyTxsAvailable();
    this.#notifyTxAdded(tx, sender);
    return res;
  }

  #append(e: Entry): void {
    e.prev = this.#tail;
    if (this.#tail === undefined) this.#head = e;
    else this.#tail.next = e;
    this.#tail = e;
    this.#entries.set(e.key, e);
    this.#bytes += e.tx.length;
  }

  #remove(key: string): boolean {
    const e = this.#entries.get(key);
    if (e === undefined) return false;
    if (e.prev === undefined) this.#head = e.next;
    else e.prev.next = e.next;
    if (e.next === undefined) this.#tail = e.prev;
    else e.next.prev = e.prev;
    this.#entries.delete(key);
    this.#bytes -= e.tx.length;
    return true;
  }

  /**
   * Txs in arrival order that fit `maxBytes` of block data (each counted with its protobuf framing)
   * and `maxGas` of summed gasWanted; -1 means no limit. Stops at the first tx that does not fit.
   */
  reapMaxBytesMaxGas(maxBytes: number, maxGas: bigint): Uint8Array[] {
    const out: Uint8Array[] = [];
    let runningSize = 0;
    let totalGas = 0n;
    for (let e = this.#head; e !== undefined; e = e.next) {
      const dataSize = txProtoSize(e.tx.length);
      if (maxBytes > -1 && runningSize + dataSize > maxBytes) break;
      runningSize += dataSize;
      const newTotalGas = totalGas + e.gasWanted;
      if (maxGas > -1n && newTotalGas > maxGas) break;
      totalGas = newTotalGas;
      out.push(e.tx);
    }
    return out;
  }

  /** Up to `max` txs in arrival order; a negative max means all. */
  reapMaxTxs(max: number): Uint8Array[] {
    const limit = max < 0 ? this.#entries.size : max;
    const out: Uint8Array[] = [];
    for (let e = this.#head; e !== undefined && out.length < limit; e = e.next) out.push(e.tx);
    return out;
  }

  /** Txs in arrival order (all, or the first `limit`), for unconfirmed_txs. */
  txs(limit?: number): Uint8Array[] {
    return this.reapMaxTxs(limit ?? -1);
  }

  /**
   * After block `height` is committed: drops its txs from the mempool (keeping valid ones in the cache,
   * forgetting invalid ones unless keepInvalidTxsInCache), then rechecks the rest in order (type
   * recheck) and drops those that now fail. Call with lock() held, as consensus does.
   */
  async update(height: number, txs: Uint8Array[], results: ExecTxResult[]): Promise<void> {
    if (txs.length !== results.length) {
      throw new MempoolUpdateError(
        `update got ${txs.length} txs but ${results.length} results. Pass FinalizeBlock's txResults for the block's txs`,
      );
    }
    this.#height = height;
    this.#notified = false;
    for (let i = 0; i < txs.length; i++) {
      const key = txHashHex(txs[i] as Uint8Array);
      if ((results[i] as ExecTxResult).code === 0) this.#cache.push(key);
      else if (!this.#opts.keepInvalidTxsInCache) this.#cache.remove(key);
      this.#remove(key);
    }
    if (this.#opts.recheck && this.#entries.size > 0) await this.#recheck();
    if (this.#entries.size > 0) this.#notifyTxsAvailable();
  }

  async #recheck(): Promise<void> {
    const pending: Entry[] = [];
    for (let e = this.#head; e !== undefined; e = e.next) pending.push(e);
    this.#log.debug({ height: this.#height, numTxs: pending.length }, "recheck txs");
    for (const e of pending) {
      if (this.#entries.get(e.key) !== e) continue;
      let res: CheckTxResponse;
      try {
        res = await this.#app.checkTx({ tx: e.tx, type: CHECK_TX_TYPE.recheck });
      } catch (err) {
        this.#log.error({ err, tx: e.key }, "recheck failed in the app; keeping the tx");
        continue;
      }
      this.#metrics?.rechecked();
      if (res.code !== 0) {
        this.#log.debug({ tx: e.key, code: res.code, log: res.log }, "tx is no longer valid");
        this.#metrics?.evicted();
        this.#remove(e.key);
        if (!this.#opts.keepInvalidTxsInCache) this.#cache.remove(e.key);
      }
    }
  }

  /**
   * Takes the mempool exclusively: waits for admissions in flight, and holds new checkTx calls until
   * the returned release function is called. Consensus holds it across FinalizeBlock, Commit and update.
   */
  async lock(): Promise<() => void> {
    await this.#lock.write();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#lock.releaseWrite();
    };
  }

  size(): number {
    return this.#entries.size;
  }

  /** Whether the tx with this CometBFT key (sha256 hex) waits in the mempool. */
  has(key: string): boolean {
    return this.#entries.has(key);
  }

  sizeBytes(): number {
    return this.#bytes;
  }

  /**
   * Removes txs by their CometBFT keys (sha256 hex) and forgets them in the cache, then lets the app
   * see the rest again (a recheck, after `beforeRecheck`: the app drops its view of pending txs), as
   * CometBFT's RemoveTxByKey followed by an update. Dev chains' anvil_dropTransaction. Returns how
   * many were removed. Takes the mempool lock.
   */
  async removeTxs(keys: readonly string[], beforeRecheck?: () => void): Promise<number> {
    const release = await this.lock();
    try {
      let removed = 0;
      for (const key of keys) {
        if (this.#remove(key)) removed++;
        this.#cache.remove(key);
      }
      beforeRecheck?.();
      if (this.#entries.size > 0) await this.#recheck();
      return removed;
    } finally {
      release();
    }
  }

  /** Empties the mempool and the seen-tx cache (unsafe_flush_mempool). */
  flush(): void {
    this.#entries.clear();
    this.#head = undefined;
    this.#tail = undefined;
    this.#bytes = 0;
    this.#cache.reset();
  }

  /**
   * Calls `cb` at most once per height: when a tx is added, or when txs remain after update(). Returns
   * a function that unsubscribes.
   */
  onTxsAvailable(cb: () => void): () => void {
    this.#listeners.add(cb);
    return () => {
      this.#listeners.delete(cb);
    };
  }

  /**
   * Calls `cb` after each tx is admitted (from RPC or a peer), with the peer that sent it; the mempool
   * reactor relays txs this way. Returns a function that unsubscribes.
   */
  onTxAdded(cb: (tx: Uint8Array, info: TxAddedInfo) => void): () => void {
    this.#addedListeners.add(cb);
    return () => {
      this.#addedListeners.delete(cb);
    };
  }

  #notifyTxAdded(tx: Uint8Array, sender: string | undefined): void {
    if (this.#addedListeners.size === 0) return;
    const info: TxAddedInfo = sender === undefined ? {} : { sender };
    for (const cb of [...this.#addedListeners]) {
      try {
        cb(tx, info);
      } catch (err) {
        this.#log.error({ err }, "onTxAdded listener failed");
      }
    }
  }

  #notifyTxsAvailable(): void {
    if (this.#notified || this.#listeners.size === 0 || this.#entries.size === 0) return;
    this.#notified = true;
    for (const cb of [...this.#listeners]) {
      try {
        cb();
      } catch (err) {
        this.#log.error({ err }, "onTxsAvailable listener failed");
      }
    }
  }
}
