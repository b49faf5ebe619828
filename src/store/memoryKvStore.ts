import * as sortedBtree from "sorted-btree";
import { KvAsyncTransactionError, KvStoreClosedError, KvTransactionRequiredError } from "./errors.js";
import { DEFAULT_TABLE, type KvEntry, type KvRange, type KvStore, type KvTable, rangeBounds } from "./kvStore.js";

type KeyOrder = sortedBtree.default<string, undefined>;
type KeyOrderClass = new (
  entries?: [string, undefined][],
  compare?: (a: string, b: string) => number,
  maxNodeSize?: number,
) => KeyOrder;

// sorted-btree is CommonJS with `exports.default = BTree`: Node's ES module loader hands that exports
// object as the default import, esbuild's bundle the class itself.
const ns = sortedBtree as unknown as { default: KeyOrderClass | { default: KeyOrderClass } };
const BTree: KeyOrderClass = typeof ns.default === "function" ? ns.default : ns.default.default;
/** `<` and `>` on strings: UTF-16 unit order, which is byte order for Latin-1 strings. */
const { simpleComparator } = sortedBtree;

/**
 * The Latin-1 string of a key or value: each byte one UTF-16 unit, so string order equals byte order.
 * A short array is turned into a string directly: wrapping it in a Buffer reads its `.buffer`, which
 * moves an array V8 keeps inside its heap (up to 64 bytes) out to a backing store of its own (0.2
 * against 0.6 µs).
 */
function toLatin1(b: Uint8Array): string {
  if (b.length <= 64) return String.fromCharCode.apply(null, b as unknown as number[]);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");
}

/** A fresh array of toLatin1's bytes. */
function fromLatin1(s: string): Uint8Array {
  if (s.length > 64) return new Uint8Array(Buffer.from(s, "latin1"));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Keys a range reads from the ordered index at a time: writes between two batches are seen, none is missed. */
const RANGE_BATCH = 64;

type UndoEntry = { table: MemoryTable; key: string; previous: string | undefined };

/**
 * A KvStore kept in memory: `db_backend = "memdb"` (a dev chain on a temporary home uses it, as Anvil
 * keeps its state in memory) and tests of code that needs a store but not a disk. Same semantics as
 * openKvStore except durability: writes only in transactions, atomic (rolled back when the callback
 * throws), and gone when the process ends.
 *
 * Each table is a Map (gets and puts) plus, from its first range on, a B+ tree of its keys in byte
 * order (sorted-btree), kept up to date by every later put and remove. Tables that are only read by
 * key (the EVM's accounts and slots) never pay for the order. Keys and values are kept as Latin-1
 * strings: a dev chain mining empty blocks grew by ~8.5 KB a block so, ~13.6 KB with a Uint8Array per
 * value (docs/dev-chain.md "Memory stores").
 */
export function openMemoryKvStore(): KvStore {
  return new MemoryKvStore();
}

class MemoryKvStore implements KvStore {
  readonly #tables = new Map<string, MemoryTable>();
  readonly #default: MemoryTable;
  #undo: UndoEntry[] | undefined;
  #closed = false;

  constructor() {
    this.#default = this.table(DEFAULT_TABLE);
  }

  table(name: string): MemoryTable {
    this.assertOpen();
    let t = this.#tables.get(name);
    if (t === undefined) {
      t = new MemoryTable(this);
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

  async transaction<T>(fn: () => T): Promise<T> {
    this.assertOpen();
    if (this.#undo !== undefined) return fn();
    const undo: UndoEntry[] = [];
    this.#undo = undo;
    try {
      const r = fn();
      if (typeof r === "object" && r !== null && typeof (r as { then?: unknown }).then === "function") {
        throw new KvAsyncTransactionError();
      }
      return r;
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) {
        const u = undo[i] as UndoEntry;
        u.table.restore(u.key, u.previous);
      }
      throw err;
    } finally {
      this.#undo = undefined;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  undoLog(op: string): UndoEntry[] {
    this.assertOpen();
    if (this.#undo === undefined) throw new KvTransactionRequiredError(op);
    return this.#undo;
  }

  assertOpen(): void {
    if (this.#closed) throw new KvStoreClosedError();
  }
}

class MemoryTable implements KvTable {
  /** Keys and values as Latin-1 strings: a string costs its bytes and a small header, a Uint8Array ~200 bytes more. */
  readonly #data = new Map<string, string>();
  /** Built by the first range, then kept in step with #data. */
  #order: KeyOrder | undefined;
  readonly #store: MemoryKvStore;

  constructor(store: MemoryKvStore) {
    this.#store = store;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    this.#store.assertOpen();
    const v = this.#data.get(toLatin1(key));
    return v === undefined ? undefined : fromLatin1(v);
  }

  *range(range: KvRange = {}): Iterable<KvEntry> {
    this.#store.assertOpen();
    const { gte, lt } = rangeBounds(range);
    const lo = gte === undefined ? undefined : toLatin1(gte);
    const hi = lt === undefined ? undefined : toLatin1(lt);
    const reverse = range.reverse === true;
    let left = range.limit ?? Number.POSITIVE_INFINITY;
    const order = this.#keyOrder();
    // Batches, each a fresh walk from the last key yielded: the caller may write between two entries.
    let from: string | undefined = reverse ? hi : lo;
    let first = true;
    while (left > 0) {
      const batch: string[] = [];
      const want = Math.min(left, RANGE_BATCH);
      const it = reverse ? order.entriesReversed(from, undefined, from !== undefined) : order.entries(from);
      for (const [k] of it) {
        if (!first && !reverse && k === from) continue;
        if (reverse ? lo !== undefined && k < lo : hi !== undefined && k >= hi) break;
        batch.push(k);
        if (batch.length >= want) break;
      }
      first = false;
      for (const k of batch) {
        const v = this.#data.get(k);
        if (v === undefined) continue;
        left--;
        yield { key: fromLatin1(k), value: fromLatin1(v) };
      }
      if (batch.length < want) return;
      from = batch[batch.length - 1];
    }
  }

  put(key: Uint8Array, value: Uint8Array): void {
    const undo = this.#store.undoLog("put");
    const k = toLatin1(key);
    const previous = this.#data.get(k);
    undo.push({ table: this, key: k, previous });
    this.#data.set(k, toLatin1(value));
    if (previous === undefined) this.#order?.set(k, undefined);
  }

  remove(key: Uint8Array): void {
    const undo = this.#store.undoLog("remove");
    const k = toLatin1(key);
    const previous = this.#data.get(k);
    if (previous === undefined) return;
    undo.push({ table: this, key: k, previous });
    this.#data.delete(k);
    this.#order?.delete(k);
  }

  /** A rolled-back write: the key's value before it (undefined: it had none). */
  restore(key: string, previous: string | undefined): void {
    if (previous === undefined) {
      this.#data.delete(key);
      this.#order?.delete(key);
    } else {
      if (!this.#data.has(key)) this.#order?.set(key, undefined);
      this.#data.set(key, previous);
    }
  }

  #keyOrder(): KeyOrder {
    if (this.#order === undefined) {
      // Sorted first, so the tree is filled from its right end, without splitting inner nodes.
      const keys = [...this.#data.keys()].sort();
      this.#order = new BTree(
        keys.map((k): [string, undefined] => [k, undefined]),
        simpleComparator,
      );
    }
    return this.#order;
  }
}
