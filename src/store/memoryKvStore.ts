import { KvAsyncTransactionError, KvStoreClosedError, KvTransactionRequiredError } from "./errors.js";
import { DEFAULT_TABLE, type KvEntry, type KvRange, type KvStore, type KvTable, rangeBounds } from "./kvStore.js";

/** Latin-1 maps each byte to one UTF-16 unit, so string order equals byte order. */
function keyString(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");
}

function keyBytes(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, "latin1"));
}

type UndoEntry = { table: Map<string, Uint8Array>; key: string; previous: Uint8Array | undefined };

/**
 * A KvStore kept in memory, for tests of code that needs a store but not a disk. Same semantics as
 * openKvStore: writes only in transactions, atomic (rolled back when the callback throws).
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
        if (u.previous === undefined) u.table.delete(u.key);
        else u.table.set(u.key, u.previous);
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
  readonly #data = new Map<string, Uint8Array>();
  readonly #store: MemoryKvStore;

  constructor(store: MemoryKvStore) {
    this.#store = store;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    this.#store.assertOpen();
    const v = this.#data.get(keyString(key));
    return v === undefined ? undefined : v.slice();
  }

  *range(range: KvRange = {}): Iterable<KvEntry> {
    this.#store.assertOpen();
    const { gte, lt } = rangeBounds(range);
    const lo = gte === undefined ? undefined : keyString(gte);
    const hi = lt === undefined ? undefined : keyString(lt);
    const keys = [...this.#data.keys()].filter((k) => (lo === undefined || k >= lo) && (hi === undefined || k < hi));
    keys.sort();
    if (range.reverse === true) keys.reverse();
    const limit = Math.min(range.limit ?? keys.length, keys.length);
    for (let i = 0; i < limit; i++) {
      const k = keys[i] as string;
      const v = this.#data.get(k);
      if (v !== undefined) yield { key: keyBytes(k), value: v.slice() };
    }
  }

  put(key: Uint8Array, value: Uint8Array): void {
    const undo = this.#store.undoLog("put");
    const k = keyString(key);
    undo.push({ table: this.#data, key: k, previous: this.#data.get(k) });
    this.#data.set(k, value.slice());
  }

  remove(key: Uint8Array): void {
    const undo = this.#store.undoLog("remove");
    const k = keyString(key);
    const previous = this.#data.get(k);
    if (previous === undefined) return;
    undo.push({ table: this.#data, key: k, previous });
    this.#data.delete(k);
  }
}
