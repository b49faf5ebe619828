import type { Database, RootDatabase, Transaction } from "lmdb";
import {
  KvAsyncTransactionError,
  KvReadOnlyError,
  KvStoreClosedError,
  KvTransactionRequiredError,
  StoreFileError,
} from "./errors.js";
import { checkLmdbFile } from "./lmdbFile.js";

export interface KvEntry {
  key: Uint8Array;
  value: Uint8Array;
}

/**
 * Which keys a range visits, in byte order. `prefix` keeps keys starting with it; `gte`/`lt` bound the
 * keys (inclusive/exclusive) whatever the direction; `reverse` walks from the highest key down.
 */
export interface KvRange {
  prefix?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  reverse?: boolean;
  limit?: number;
}

/** One named sub-database: binary keys (non-empty, at most 1978 bytes) to binary values. */
export interface KvTable {
  get(key: Uint8Array): Uint8Array | undefined;
  range(range?: KvRange): Iterable<KvEntry>;
  /** Only inside `KvStore.transaction`; throws KvTransactionRequiredError elsewhere. */
  put(key: Uint8Array, value: Uint8Array): void;
  /** Only inside `KvStore.transaction`; a missing key is not an error. */
  remove(key: Uint8Array): void;
}

/**
 * An ordered binary key-value store with named tables and atomic, durable transactions. The store
 * itself is also a table (named "default") for callers that need only one.
 */
export interface KvStore extends KvTable {
  table(name: string): KvTable;
  /**
   * Runs `fn` synchronously inside one write transaction: every put/remove in it commits together, or
   * none does when it throws. Resolves with fn's result once the commit is flushed to disk. Called inside
   * another transaction, fn simply joins the outer one.
   */
  transaction<T>(fn: () => T): Promise<T>;
  close(): Promise<void>;
}

/**
 * A read-only handle on an environment that another thread of this process writes (a read worker,
 * app/evm/readPool.ts). Reads between `pin()` and `release()` all come from one LMDB read transaction:
 * the state committed when pin() was called, whatever commits meanwhile. Writes throw KvReadOnlyError.
 */
export interface KvSnapshotStore extends KvStore {
  /** Starts a snapshot of the latest committed state (ending the previous one); every read uses it until release(). */
  pin(): void;
  /** Ends the snapshot, so LMDB may reuse the pages it kept alive; reads then see the latest state each time. */
  release(): void;
}

export const DEFAULT_TABLE = "default";

/** Bounds for a range after merging prefix with gte/lt; undefined means unbounded. */
export function rangeBounds(range: KvRange): { gte: Uint8Array | undefined; lt: Uint8Array | undefined } {
  let gte = range.gte;
  let lt = range.lt;
  if (range.prefix !== undefined) {
    if (gte === undefined || Buffer.compare(range.prefix, gte) > 0) gte = range.prefix;
    const end = prefixEnd(range.prefix);
    if (end !== undefined && (lt === undefined || Buffer.compare(end, lt) < 0)) lt = end;
  }
  return { gte, lt };
}

/** The smallest key greater than every key starting with `prefix` (undefined when there is none). */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const b = prefix[i] as number;
    if (b !== 0xff) {
      // A copy, never a view: Buffer's slice shares memory, and the caller's key (often a Buffer
      // from Node's shared pool) must not change.
      const end = Uint8Array.prototype.slice.call(prefix, 0, i + 1);
      end[i] = b + 1;
      return end;
    }
  }
  return undefined;
}

function toBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * A key as lmdb takes it. With `keyEncoding: "binary"` lmdb copies the key into its own key buffer
 * (`target.set(key)`), which takes any Uint8Array; wrapping it in a Buffer first reads its `.buffer`,
 * which moves a fresh array of up to 64 bytes (every storage and height key) out of V8's heap: ~1 µs
 * per get, more than the B-tree search.
 */
function asKey(b: Uint8Array): Buffer {
  return b as Buffer;
}

/**
 * lmdb hands out fresh Buffers; callers get plain Uint8Arrays of them. A value of up to 64 bytes (an
 * account, a slot, a height) is copied: lmdb's Buffer of that size lives in V8's heap, and a view of it
 * would read its `.buffer`, which moves it out to a backing store of its own (~1 µs, several times the
 * copy). Longer ones are already outside and are viewed, not copied.
 */
function toPlain(b: Buffer): Uint8Array {
  return b.length <= 64 ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

function isThenable(v: unknown): boolean {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}

/**
 * The address space reserved for an environment's map up front. lmdb starts with a 128 KiB map and
 * doubles it as the file grows, mapping the file again each time while the older maps stay: every
 * page read through several of them counts several times in the process's RSS (the tx index of
 * 4000 txs, a 24 MB file, held 54 MiB of RSS over 8 maps). A large initial map is only reserved
 * address space on 64-bit Linux and macOS (the file grows as pages are written), so one map serves
 * until it fills, after which lmdb grows it as before. Windows preallocates the file to the map
 * size, and 32-bit has no room: there lmdb keeps its default.
 */
const INITIAL_MAP_SIZE = 2 ** 34; // 16 GiB

function mapSizeOption(): { mapSize?: number } {
  return process.platform !== "win32" && process.arch.endsWith("64") ? { mapSize: INITIAL_MAP_SIZE } : {};
}

/**
 * Opens (creating when missing) an LMDB environment in `dir`. Commits use LMDB's default synced mode,
 * so a transaction whose promise resolved survives a crash or `kill -9`. `noSync` (dev chains) skips
 * the flush to disk: a committed transaction still survives the process being killed (the OS has it),
 * not a power loss or OS crash. Such an environment is also written through its memory map (LMDB's
 * WRITEMAP): a commit changes the mapped pages in place instead of copying each dirty page out with a
 * write call, about half the CPU of a small commit (measured: 53 → 26 µs for 6 puts). The file's size
 * is then the map's (sparse: only written pages take disk space), and a full disk stops the process
 * (SIGBUS on the mapped page) rather than failing the commit (docs/dev-chain.md "What survives a crash").
 */
export async function openKvStore(dir: string, opts: { noSync?: boolean } = {}): Promise<KvStore> {
  return new LmdbKvStore(await openRoot(dir, opts), opts.noSync === true);
}

/**
 * Opens `dir` again for reads only, in another thread of the process that writes it: lmdb shares one
 * environment per file between threads, so the options are the writer's (`noSync` as it passed).
 * Reads go through pinned snapshots (KvSnapshotStore).
 */
export async function openKvSnapshotStore(dir: string, opts: { noSync?: boolean } = {}): Promise<KvSnapshotStore> {
  return new LmdbKvStore(await openRoot(dir, opts), false, true);
}

async function openRoot(dir: string, opts: { noSync?: boolean }): Promise<RootDatabase> {
  // LMDB would crash the process on a damaged file, or write over its header: look first (lmdbFile.ts).
  checkLmdbFile(dir);
  // Loaded on first use: a node whose stores are all in memory (db_backend = "memdb", a dev chain on a
  // temporary home) never loads lmdb's module and native addon (~35 ms of start-up here).
  const { open } = await import("lmdb");
  try {
    return open({
      path: dir,
      maxDbs: 64,
      compression: false,
      ...mapSizeOption(),
      ...(opts.noSync === true ? { noSync: true, useWritemap: true } : {}),
    });
  } catch (err) {
    throw new StoreFileError(dir, `cannot be opened by LMDB: ${(err as Error).message}`, {
      cause: err,
      damaged: false,
    });
  }
}

class LmdbKvStore implements KvSnapshotStore {
  readonly #root: RootDatabase;
  readonly #readOnly: boolean;
  /** The pinned read transaction (snapshot stores), as lmdb's read options; undefined when not pinned. */
  readOpts: { transaction: Transaction } | undefined;
  readonly #tables = new Map<string, LmdbTable>();
  readonly #default: LmdbTable;
  #depth = 0;
  #closed = false;
  /**
   * Without flushes to disk (noSync), a commit is a copy into the map: it is made on this thread
   * (lmdb's transactionSync) instead of queued for lmdb's write thread, saving the thread hops.
   */
  readonly #commitHere: boolean;

  constructor(root: RootDatabase, commitHere = false, readOnly = false) {
    this.#root = root;
    this.#commitHere = commitHere;
    this.#readOnly = readOnly;
    this.#default = this.table(DEFAULT_TABLE);
  }

  table(name: string): LmdbTable {
    this.assertOpen();
    let t = this.#tables.get(name);
    if (t === undefined) {
      const db = this.#root.openDB<Buffer, Buffer>(name, { encoding: "binary", keyEncoding: "binary" });
      t = new LmdbTable(db, this);
      this.#tables.set(name, t);
    }
    return t;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    return this.#default.get(key);
  }

  range(range: KvRange = {}): Iterable<KvEntry> {
    return this.#default.range(range);
  }

  put(key: Uint8Array, value: Uint8Array): void {
    this.#default.put(key, value);
  }

  remove(key: Uint8Array): void {
    this.#default.remove(key);
  }

  pin(): void {
    this.assertOpen();
    this.release();
    // lmdb's shared read transaction of this thread may be older than the last commit (it is reset
    // on a timer): reset it, then take it renewed, and keep it until release().
    this.#root.resetReadTxn();
    this.readOpts = { transaction: this.#root.useReadTransaction() };
  }

  release(): void {
    const o = this.readOpts;
    if (o === undefined) return;
    this.readOpts = undefined;
    o.transaction.done();
  }

  async transaction<T>(fn: () => T): Promise<T> {
    this.assertOpen();
    if (this.#readOnly) throw new KvReadOnlyError();
    if (this.#depth > 0) return fn();
    const body = () => {
      this.#depth++;
      try {
        const r = fn();
        if (isThenable(r)) throw new KvAsyncTransactionError();
        return r;
      } finally {
        this.#depth--;
      }
    };
    // transactionSync aborts the writes of a callback that throws.
    if (this.#commitHere) return this.#root.transactionSync(body);
    // childTransaction (unlike transaction) aborts the writes of a callback that throws, even when
    // lmdb batches it with other queued work.
    const result = await this.#root.childTransaction(body);
    // With overlappingSync (lmdb's default off Windows) the commit resolves before the fsync.
    await this.#root.flushed;
    return result;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.release();
    this.#closed = true;
    await this.#root.close();
  }

  inTransaction(): boolean {
    return this.#depth > 0;
  }

  assertOpen(): void {
    if (this.#closed) throw new KvStoreClosedError();
  }
}

class LmdbTable implements KvTable {
  readonly #db: Database<Buffer, Buffer>;
  readonly #store: LmdbKvStore;

  constructor(db: Database<Buffer, Buffer>, store: LmdbKvStore) {
    this.#db = db;
    this.#store = store;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    this.#store.assertOpen();
    const v = this.#db.get(asKey(key), this.#store.readOpts);
    return v === undefined ? undefined : toPlain(v);
  }

  *range(range: KvRange = {}): Iterable<KvEntry> {
    this.#store.assertOpen();
    const { gte, lt } = rangeBounds(range);
    if (gte !== undefined && lt !== undefined && Buffer.compare(gte, lt) >= 0) return;
    const limit = range.limit ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return;
    let n = 0;
    if (range.reverse === true) {
      // lmdb's reverse `start` is inclusive and `end` exclusive; walk from lt and stop below gte ourselves.
      const txn = this.#store.readOpts;
      const it = this.#db.getRange(
        lt === undefined ? { reverse: true, ...txn } : { start: toBuffer(lt), reverse: true, ...txn },
      );
      for (const { key, value } of it) {
        if (lt !== undefined && Buffer.compare(key, lt) >= 0) continue;
        if (gte !== undefined && Buffer.compare(key, gte) < 0) return;
        yield { key: toPlain(key), value: toPlain(value) };
        if (++n >= limit) return;
      }
      return;
    }
    const opts: { start?: Buffer; end?: Buffer; transaction?: Transaction } = {};
    if (gte !== undefined) opts.start = toBuffer(gte);
    if (lt !== undefined) opts.end = toBuffer(lt);
    const txn = this.#store.readOpts;
    if (txn !== undefined) opts.transaction = txn.transaction;
    for (const { key, value } of this.#db.getRange(opts)) {
      yield { key: toPlain(key), value: toPlain(value) };
      if (++n >= limit) return;
    }
  }

  put(key: Uint8Array, value: Uint8Array): void {
    if (!this.#store.inTransaction()) throw new KvTransactionRequiredError("put");
    // The key is copied into lmdb's key buffer as it is (asKey); the value is read through its buffer.
    this.#db.putSync(asKey(key), toBuffer(value));
  }

  remove(key: Uint8Array): void {
    if (!this.#store.inTransaction()) throw new KvTransactionRequiredError("remove");
    this.#db.removeSync(asKey(key));
  }
}
