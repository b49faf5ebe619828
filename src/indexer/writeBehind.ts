import type { Query } from "../events/index.js";
import type { BlockIndexInput, IndexedTx, Indexer } from "./indexer.js";

export interface WriteBehindOptions {
  /** Blocks kept waiting at most: the one after them writes them all first (default 64). */
  maxPending?: number;
  /** A block the indexer refused when it was written (it is skipped, as live indexing skips it). */
  onError(err: unknown, height: number): void;
}

const DEFAULT_MAX_PENDING = 64;

/**
 * An indexer that writes each block when something needs it, not when it is committed: before any
 * read (tx, tx_search, block_search, lastIndexedHeight), before pruning or closing, and once
 * `maxPending` blocks wait. A rollback (evm_revert, hardhat_reset) drops the waiting blocks above its
 * height without writing them, and asks `inner` to forget only what was written.
 *
 * For memory stores (`db_backend = "memdb"`, dev chains), which keep nothing across a restart, so
 * waiting loses no durability. A test suite's fixture cycle (snapshot, a few txs, revert) then neither
 * writes its blocks' rows nor removes them. Readers see what they would see at once: every read
 * writes the waiting blocks first, in height order.
 */
export function writeBehind(inner: Indexer, options: WriteBehindOptions): Indexer {
  return new WriteBehindIndexer(inner, options);
}

class WriteBehindIndexer implements Indexer {
  readonly #inner: Indexer;
  readonly #onError: (err: unknown, height: number) => void;
  readonly #maxPending: number;
  /** Committed blocks not yet handed to `inner`, in the order they came. */
  #pending: BlockIndexInput[] = [];
  /** The writes and rollbacks handed to `inner`, one after another. */
  #tail: Promise<void> = Promise.resolve();
  /** The highest height `inner` may hold (unknown at first: anything). */
  #innerTop = Number.MAX_SAFE_INTEGER;
  readonly rollbackTo?: (height: number) => Promise<void>;
  readonly pruneBelow?: (retainHeight: number) => Promise<number>;

  constructor(inner: Indexer, options: WriteBehindOptions) {
    this.#inner = inner;
    this.#onError = options.onError;
    this.#maxPending = Math.max(1, options.maxPending ?? DEFAULT_MAX_PENDING);
    const { rollbackTo, pruneBelow } = inner;
    if (rollbackTo !== undefined) this.rollbackTo = (height) => this.#rollbackTo(height, rollbackTo.bind(inner));
    if (pruneBelow !== undefined) {
      this.pruneBelow = async (retainHeight) => {
        await this.#flush();
        return pruneBelow.call(inner, retainHeight);
      };
    }
  }

  get txIndexEnabled(): boolean {
    return this.#inner.txIndexEnabled;
  }

  get blockIndexEnabled(): boolean {
    return this.#inner.blockIndexEnabled;
  }

  indexBlock(input: BlockIndexInput): Promise<void> {
    this.#pending.push(input);
    return this.#pending.length >= this.#maxPending ? this.#flush() : Promise.resolve();
  }

  async lastIndexedHeight(): Promise<number> {
    const last = this.#pending[this.#pending.length - 1];
    if (last !== undefined) return last.height;
    await this.#tail;
    return this.#inner.lastIndexedHeight();
  }

  async getTx(hash: Uint8Array): Promise<IndexedTx | undefined> {
    await this.#flush();
    return this.#inner.getTx(hash);
  }

  async searchTxs(query: Query): Promise<IndexedTx[]> {
    await this.#flush();
    return this.#inner.searchTxs(query);
  }

  async searchBlocks(query: Query): Promise<number[]> {
    await this.#flush();
    return this.#inner.searchBlocks(query);
  }

  async close(): Promise<void> {
    await this.#flush();
    await this.#inner.close();
  }

  /** Hands every waiting block to `inner`; resolves once they and every earlier step are written. */
  #flush(): Promise<void> {
    if (this.#pending.length === 0) return this.#tail;
    const blocks = this.#pending;
    this.#pending = [];
    return this.#then(async () => {
      for (const input of blocks) {
        try {
          await this.#inner.indexBlock(input);
        } catch (err) {
          this.#onError(err, input.height);
        }
        if (this.#innerTop < input.height) this.#innerTop = input.height;
      }
    });
  }

  #rollbackTo(height: number, innerRollback: (height: number) => Promise<void>): Promise<void> {
    this.#pending = this.#pending.filter((b) => b.height <= height);
    return this.#then(async () => {
      if (this.#innerTop <= height) return;
      await innerRollback(height);
      this.#innerTop = height;
    });
  }

  /** Runs `step` after every step before it; a failed step fails its own caller only. */
  #then(step: () => Promise<void>): Promise<void> {
    const run = this.#tail.then(step);
    this.#tail = run.catch(() => {});
    return run;
  }
}
