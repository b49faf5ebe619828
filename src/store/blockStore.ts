import type { Block, BlockMeta, Commit, Part, PartSet } from "../types/index.js";
import {
  blockId as blockIdOf,
  decodeBlock,
  decodeCommit,
  decodePart,
  encodeCommit,
  encodePart,
} from "../types/index.js";
import type { Timestamp } from "../util/time.js";
import {
  IncompletePartSetError,
  NonContiguousBlockError,
  PruneHeightError,
  StoreCorruptionError,
  StoreError,
} from "./errors.js";
import {
  BLOCK_KEY_PREFIX,
  blockHashKey,
  encodeU64,
  heightKey,
  partKey,
  prefixKey,
  readU64,
  TABLES,
  writeU64,
} from "./keys.js";
import type { KvStore, KvTable } from "./kvStore.js";
import { LruCache } from "./lruCache.js";
import { decodeBlockMeta, encodeBlockMeta } from "./records.js";

const BLOCK_CACHE_SIZE = 32;
const META_CACHE_SIZE = 256;

function decodeOrThrow<T>(what: string, bytes: Uint8Array, decode: (b: Uint8Array) => T): T {
  try {
    return decode(bytes);
  } catch (err) {
    if (err instanceof StoreCorruptionError) throw err;
    throw new StoreCorruptionError(what, { cause: err });
  }
}

/**
 * Committed blocks by height (CometBFT store.BlockStore): meta, parts, the canonical commit (from the
 * next block's LastCommit) and the commit this node saw. Blocks, parts and commits are kept as their
 * protobuf bytes. Returned objects are shared with a small cache: treat them as read-only.
 */
export class BlockStore {
  readonly #kv: KvStore;
  readonly #table: KvTable;
  #base = 0;
  #height = 0;
  /**
   * Lowest height whose meta (header) and canonical commit are kept: pruning keeps them below base
   * while evidence from that height could still be submitted (CometBFT store.PruneBlocks).
   */
  #headerBase = 0;
  /** Saves and prunes run one after another in call order. */
  #writes: Promise<void> = Promise.resolve();
  #pruneError: unknown;
  readonly #blocks = new LruCache<number, Block>(BLOCK_CACHE_SIZE);
  readonly #metas = new LruCache<number, BlockMeta>(META_CACHE_SIZE);

  constructor(db: KvStore) {
    this.#kv = db;
    this.#table = db.table(TABLES.blocks);
    const state = this.#table.get(prefixKey(BLOCK_KEY_PREFIX.storeState));
    if (state !== undefined) {
      // 16 bytes: base, height (written before headers were kept below base); 24: and the header base.
      if (state.length !== 16 && state.length !== 24) throw new StoreCorruptionError("block store state");
      this.#base = readU64(state, 0);
      this.#height = readU64(state, 8);
      this.#headerBase = state.length === 24 ? readU64(state, 16) : this.#base;
    }
  }

  /** Lowest stored height; 0 when empty. */
  base(): number {
    return this.#base;
  }

  /** Highest stored height; 0 when empty. */
  height(): number {
    return this.#height;
  }

  /** Lowest height whose header and canonical commit are still kept (≤ base); 0 when empty. */
  headerBase(): number {
    return this.#headerBase;
  }

  size(): number {
    return this.#height === 0 ? 0 : this.#height - this.#base + 1;
  }

  /**
   * Saves a block with its complete part set and the commit this node saw for it, in one transaction
   * that is durable when the promise resolves. Heights must follow the stored height.
   */
  saveBlock(block: Block, parts: PartSet, seenCommit: Commit): Promise<void> {
    const height = block.header.height;
    if (!parts.isComplete()) return Promise.reject(new IncompletePartSetError(height));
    const encodedParts: Uint8Array[] = [];
    let blockSize = 0;
    for (let i = 0; i < parts.total; i++) {
      const part = parts.getPart(i);
      if (part === undefined) return Promise.reject(new IncompletePartSetError(height));
      encodedParts.push(encodePart(part));
      blockSize += part.bytes.length;
    }
    const meta: BlockMeta = {
      blockId: blockIdOf(block, parts),
      blockSize,
      header: block.header,
      numTxs: block.data.txs.length,
    };
    const metaBytes = encodeBlockMeta(meta);
    // Block 1's LastCommit is the empty commit for height 0: nothing to keep.
    const lastCommitBytes = height > 1 ? encodeCommit(block.lastCommit) : undefined;
    const seenCommitBytes = encodeCommit(seenCommit);

    const run = this.#writes.then(async () => {
      if (this.#pruneError !== undefined) {
        const cause = this.#pruneError;
        this.#pruneError = undefined;
        throw new StoreError("an earlier pruneBlocks failed to write. Check the data directory's disk", { cause });
      }
      if (this.#base > 0 && height !== this.#height + 1) throw new NonContiguousBlockError(this.#height + 1, height);
      const base = this.#base > 0 ? this.#base : height;
      const headerBase = this.#headerBase > 0 ? this.#headerBase : base;
      await this.#kv.transaction(() => {
        const t = this.#table;
        t.put(heightKey(BLOCK_KEY_PREFIX.meta, height), metaBytes);
        t.put(blockHashKey(meta.blockId.hash), encodeU64(height));
        for (let i = 0; i < encodedParts.length; i++) t.put(partKey(height, i), encodedParts[i] as Uint8Array);
        if (lastCommitBytes !== undefined) t.put(heightKey(BLOCK_KEY_PREFIX.commit, height - 1), lastCommitBytes);
        t.put(heightKey(BLOCK_KEY_PREFIX.seenCommit, height), seenCommitBytes);
        t.put(prefixKey(BLOCK_KEY_PREFIX.storeState), encodeStoreState(base, height, headerBase));
      });
      this.#base = base;
      this.#headerBase = headerBase;
      this.#height = height;
    });
    this.#writes = run.catch(() => undefined);
    return run;
  }

  #has(height: number): boolean {
    return this.#base > 0 && height >= this.#base && height <= this.#height;
  }

  #hasHeader(height: number): boolean {
    return this.#headerBase > 0 && height >= this.#headerBase && height <= this.#height;
  }

  /** The block's meta; below base too while its header is kept for evidence (headerBase). */
  loadBlockMeta(height: number): BlockMeta | undefined {
    if (!this.#hasHeader(height)) return undefined;
    const cached = this.#metas.get(height);
    if (cached !== undefined) return cached;
    const bytes = this.#table.get(heightKey(BLOCK_KEY_PREFIX.meta, height));
    if (bytes === undefined) return undefined;
    const meta = decodeBlockMeta(bytes);
    this.#metas.set(height, meta);
    return meta;
  }

  loadBlockMetaByHash(hash: Uint8Array): BlockMeta | undefined {
    const h = this.heightByHash(hash);
    return h === undefined ? undefined : this.loadBlockMeta(h);
  }

  loadBlock(height: number): Block | undefined {
    if (!this.#has(height)) return undefined;
    const cached = this.#blocks.get(height);
    if (cached !== undefined) return cached;
    const meta = this.loadBlockMeta(height);
    if (meta === undefined) return undefined;
    const total = meta.blockId.partSetHeader.total;
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < total; i++) {
      const part = this.loadBlockPart(height, i);
      if (part === undefined)
        throw new StoreCorruptionError(`block ${height}`, { detail: `part ${i} of ${total} is missing` });
      chunks.push(part.bytes);
    }
    const bytes = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
    const block = decodeOrThrow(`block ${height}`, bytes, decodeBlock);
    this.#blocks.set(height, block);
    return block;
  }

  loadBlockByHash(hash: Uint8Array): Block | undefined {
    const h = this.heightByHash(hash);
    return h === undefined ? undefined : this.loadBlock(h);
  }

  loadBlockPart(height: number, index: number): Part | undefined {
    if (!this.#has(height)) return undefined;
    const bytes = this.#table.get(partKey(height, index));
    return bytes === undefined ? undefined : decodeOrThrow(`block part ${height}/${index}`, bytes, decodePart);
  }

  /** The canonical commit for block `height`, taken from block height+1's LastCommit. */
  loadBlockCommit(height: number): Commit | undefined {
    if (!this.#hasHeader(height)) return undefined;
    const bytes = this.#table.get(heightKey(BLOCK_KEY_PREFIX.commit, height));
    return bytes === undefined ? undefined : decodeOrThrow(`commit ${height}`, bytes, decodeCommit);
  }

  /**
   * Stores the commit of a block this store does not hold (state sync's snapshot height, CometBFT
   * SaveSeenCommit): consensus builds the next block's LastCommit from it. Durable on resolve.
   */
  saveSeenCommit(height: number, commit: Commit): Promise<void> {
    const bytes = encodeCommit(commit);
    const run = this.#writes.then(() =>
      this.#kv.transaction(() => this.#table.put(heightKey(BLOCK_KEY_PREFIX.seenCommit, height), bytes)),
    );
    this.#writes = run.catch(() => undefined);
    return run;
  }

  /** The commit this node collected for `height` (the only one there is for the latest block). */
  loadSeenCommit(height: number): Commit | undefined {
    // An empty store after state sync holds the snapshot height's commit alone (saveSeenCommit).
    if (!this.#has(height) && !(this.#height === 0 && height > 0)) return undefined;
    const bytes = this.#table.get(heightKey(BLOCK_KEY_PREFIX.seenCommit, height));
    return bytes === undefined ? undefined : decodeOrThrow(`seen commit ${height}`, bytes, decodeCommit);
  }

  heightByHash(hash: Uint8Array): number | undefined {
    if (hash.length === 0) return undefined;
    const bytes = this.#table.get(blockHashKey(hash));
    if (bytes === undefined) return undefined;
    if (bytes.length !== 8) throw new StoreCorruptionError("block hash index");
    const h = readU64(bytes, 0);
    return this.#has(h) ? h : undefined;
  }

  /**
   * Removes blocks below `retainHeight` and returns how many there were (CometBFT store.PruneBlocks).
   * Blocks, parts, seen commits and hash index entries go; a height's meta (header) and canonical
   * commit stay while `keepHeader(height, time)` says evidence from it could still be submitted
   * (the first height it holds for and every later one: age only grows downwards), and go at a later
   * prune once it no longer does. The new base is visible at once; the deletion is written in the
   * background, ordered before the next save (await flush() to wait for it). Throws
   * PruneHeightError for a height ≤ 0 or above the latest height.
   */
  pruneBlocks(retainHeight: number, keepHeader?: (height: number, time: Timestamp) => boolean): number {
    if (retainHeight <= 0) throw new PruneHeightError("height must be greater than 0");
    if (retainHeight > this.#height) {
      throw new PruneHeightError(`cannot prune beyond the latest height ${this.#height}`);
    }
    if (retainHeight <= this.#base) return 0;
    const pruned = retainHeight - this.#base;
    let headerBase = retainHeight;
    if (keepHeader !== undefined) {
      for (let h = this.#headerBase; h < retainHeight; h++) {
        const meta = this.loadBlockMeta(h);
        if (meta !== undefined && keepHeader(h, meta.header.time)) {
          headerBase = h;
          break;
        }
      }
    }
    const from = { base: this.#base, headerBase: this.#headerBase };
    this.#base = retainHeight;
    this.#headerBase = headerBase;
    this.#blocks.retain((h) => h >= retainHeight);
    this.#metas.retain((h) => h >= headerBase);
    this.#writes = this.#writes
      .then(() => this.#kv.transaction(() => this.#deleteBelow(from, retainHeight, headerBase)))
      .catch((err: unknown) => {
        this.#pruneError = err;
      });
    return pruned;
  }

  #deleteBelow(from: { base: number; headerBase: number }, retainHeight: number, headerBase: number): void {
    const t = this.#table;
    const doomed: Uint8Array[] = [];
    // Blocks below the old base already lost their parts, seen commits and hash entries.
    for (let h = from.base; h < retainHeight; h++) {
      const value = t.get(heightKey(BLOCK_KEY_PREFIX.meta, h));
      if (value === undefined) continue;
      try {
        doomed.push(blockHashKey(decodeBlockMeta(value).blockId.hash));
      } catch {
        // An unreadable meta's hash index entry then points below base and is ignored.
      }
    }
    const partRange = { gte: partKey(from.base, 0), lt: partKey(retainHeight, 0) };
    for (const { key } of t.range(partRange)) doomed.push(key);
    const seenRange = {
      gte: heightKey(BLOCK_KEY_PREFIX.seenCommit, from.base),
      lt: heightKey(BLOCK_KEY_PREFIX.seenCommit, retainHeight),
    };
    for (const { key } of t.range(seenRange)) doomed.push(key);
    for (const prefix of [BLOCK_KEY_PREFIX.meta, BLOCK_KEY_PREFIX.commit]) {
      const range = { gte: heightKey(prefix, from.headerBase), lt: heightKey(prefix, headerBase) };
      for (const { key } of t.range(range)) doomed.push(key);
    }
    for (const key of doomed) t.remove(key);
    t.put(prefixKey(BLOCK_KEY_PREFIX.storeState), encodeStoreState(this.#base, this.#height, this.#headerBase));
  }

  /**
   * Dev chains (evm_revert, hardhat_reset): deletes every block above `height` with its parts, hash
   * index entry, seen commit and the canonical commit of `height` itself (the next block's LastCommit
   * will be made again). Durable when the promise resolves; 0 empties the store.
   */
  rollbackTo(height: number): Promise<void> {
    const run = this.#writes.then(async () => {
      if (height >= this.#height) return;
      const t = this.#table;
      await this.#kv.transaction(() => {
        const doomed: Uint8Array[] = [];
        const from = height + 1;
        for (const { key, value } of t.range({
          prefix: prefixKey(BLOCK_KEY_PREFIX.meta),
          gte: heightKey(BLOCK_KEY_PREFIX.meta, from),
        })) {
          doomed.push(key);
          doomed.push(blockHashKey(decodeBlockMeta(value).blockId.hash));
        }
        for (const { key } of t.range({ prefix: prefixKey(BLOCK_KEY_PREFIX.part), gte: partKey(from, 0) })) {
          doomed.push(key);
        }
        for (const { key } of t.range({
          prefix: prefixKey(BLOCK_KEY_PREFIX.seenCommit),
          gte: heightKey(BLOCK_KEY_PREFIX.seenCommit, from),
        })) {
          doomed.push(key);
        }
        for (const { key } of t.range({
          prefix: prefixKey(BLOCK_KEY_PREFIX.commit),
          gte: heightKey(BLOCK_KEY_PREFIX.commit, height),
        })) {
          doomed.push(key);
        }
        for (const key of doomed) t.remove(key);
        const base = height === 0 ? 0 : this.#base;
        const headerBase = height === 0 ? 0 : this.#headerBase;
        t.put(prefixKey(BLOCK_KEY_PREFIX.storeState), encodeStoreState(base, height, headerBase));
      });
      if (height === 0) {
        this.#base = 0;
        this.#headerBase = 0;
      }
      this.#height = height;
      this.#blocks.retain((h) => h <= height);
      this.#metas.retain((h) => h <= height);
    });
    this.#writes = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every save and prune issued so far has been written. */
  async flush(): Promise<void> {
    await this.#writes;
    if (this.#pruneError !== undefined) {
      const cause = this.#pruneError;
      this.#pruneError = undefined;
      throw new StoreError("pruneBlocks failed to write. Check the data directory's disk", { cause });
    }
  }
}

function encodeStoreState(base: number, height: number, headerBase: number): Uint8Array {
  const b = new Uint8Array(24);
  writeU64(b, 0, base);
  writeU64(b, 8, height);
  writeU64(b, 16, headerBase);
  return b;
}
