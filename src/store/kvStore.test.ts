import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { KvAsyncTransactionError, KvReadOnlyError, KvStoreClosedError, KvTransactionRequiredError } from "./errors.js";
import { openKvSnapshotStore, openKvStore, prefixEnd } from "./kvStore.js";
import { openMemoryKvStore } from "./memoryKvStore.js";

const b = (...xs: number[]) => Uint8Array.from(xs);
const keys = (it: Iterable<{ key: Uint8Array }>) => [...it].map((e) => [...e.key]);

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "cometh-kv-"));
  dirs.push(d);
  return d;
}

const backends = {
  lmdb: async () => openKvStore(await tempDir()),
  // A dev chain's stores: commits without flushes, made on the calling thread.
  "lmdb noSync": async () => openKvStore(await tempDir(), { noSync: true }),
  memory: async () => openMemoryKvStore(),
} as const;

describe.each(Object.keys(backends) as (keyof typeof backends)[])("KvStore (%s)", (name) => {
  const open = backends[name];

  test("default: put/get/remove in a transaction, tables are separate", async () => {
    const kv = await open();
    const a = kv.table("a");
    const c = kv.table("c");
    await kv.transaction(() => {
      a.put(b(1), b(10));
      c.put(b(1), b(20));
      kv.put(b(1), b(30));
    });
    expect(a.get(b(1))).toEqual(b(10));
    expect([...(c.get(b(1)) ?? [])]).toEqual([20]);
    expect([...(kv.get(b(1)) ?? [])]).toEqual([30]);
    expect(a.get(b(2))).toBeUndefined();
    await kv.transaction(() => {
      a.remove(b(1));
      a.remove(b(99));
    });
    expect(a.get(b(1))).toBeUndefined();
    await kv.close();
  });

  test("args: keys and values may be views into larger arrays, Buffers or fresh small arrays", async () => {
    const kv = await open();
    const t = kv.table("views");
    const backing = Uint8Array.from([9, 9, 1, 2, 3, 9, 7, 8, 9]);
    await kv.transaction(() => {
      t.put(backing.subarray(2, 5), backing.subarray(6, 8));
      t.put(Buffer.from([4, 5]), b(6));
      t.put(b(1, 2, 4), Buffer.from([0]));
    });
    backing.fill(0);
    expect(keys(t.range())).toEqual([
      [1, 2, 3],
      [1, 2, 4],
      [4, 5],
    ]);
    expect([...(t.get(b(1, 2, 3)) ?? [])]).toEqual([7, 8]);
    expect([...(t.get(b(4, 5)) ?? [])]).toEqual([6]);
    expect([...(t.get(b(1, 2, 4)) ?? [])]).toEqual([0]);
  });

  test("args: keys and values of every byte value and of lengths around 64 come back byte for byte", async () => {
    const kv = await open();
    const t = kv.table("bytes");
    const pattern = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 97 + seed) % 256);
    const lengths = [1, 2, 31, 63, 64, 65, 66, 255, 256, 300, 5000];
    await kv.transaction(() => {
      for (const n of lengths) t.put(pattern(Math.min(n, 500), n), pattern(n, n + 1));
    });
    for (const n of lengths) expect(t.get(pattern(Math.min(n, 500), n))).toEqual(pattern(n, n + 1));
    const ranged = [...t.range({})];
    expect(ranged).toHaveLength(lengths.length);
    for (const e of ranged) {
      const n = e.value.length;
      expect(e.key).toEqual(pattern(Math.min(n, 500), n));
      expect(e.value).toEqual(pattern(n, n + 1));
    }
    await kv.close();
  });

  test("behavior: a transaction reads its own writes and returns its result", async () => {
    const kv = await open();
    const t = kv.table("t");
    const r = await kv.transaction(() => {
      t.put(b(5), b(6));
      return [...(t.get(b(5)) ?? [])];
    });
    expect(r).toEqual([6]);
    await kv.close();
  });

  test("behavior: a throwing transaction writes nothing", async () => {
    const kv = await open();
    const t = kv.table("t");
    await kv.transaction(() => t.put(b(1), b(1)));
    await expect(
      kv.transaction(() => {
        t.put(b(2), b(2));
        t.remove(b(1));
        throw new RangeError("boom");
      }),
    ).rejects.toThrow("boom");
    expect(t.get(b(2))).toBeUndefined();
    expect([...(t.get(b(1)) ?? [])]).toEqual([1]);
    await kv.close();
  });

  test("error: writes outside a transaction, async callbacks, use after close", async () => {
    const kv = await open();
    const t = kv.table("t");
    expect(() => t.put(b(1), b(1))).toThrow(KvTransactionRequiredError);
    expect(() => t.remove(b(1))).toThrow(KvTransactionRequiredError);
    await expect(kv.transaction(async () => 1)).rejects.toThrow(KvAsyncTransactionError);
    await kv.close();
    expect(() => t.get(b(1))).toThrow(KvStoreClosedError);
  });

  test("behavior: ranges by prefix and bounds, forward and reverse, with limit", async () => {
    const kv = await open();
    const t = kv.table("r");
    const all = [b(1), b(1, 0), b(1, 1), b(1, 255), b(2), b(2, 0), b(255), b(255, 255)];
    await kv.transaction(() => {
      for (const k of all) t.put(k, k);
    });
    expect(keys(t.range())).toEqual(all.map((k) => [...k]));
    expect(keys(t.range({ prefix: b(1) }))).toEqual([[1], [1, 0], [1, 1], [1, 255]]);
    expect(keys(t.range({ prefix: b(1), reverse: true }))).toEqual([[1, 255], [1, 1], [1, 0], [1]]);
    expect(keys(t.range({ prefix: b(255) }))).toEqual([[255], [255, 255]]);
    expect(keys(t.range({ gte: b(1, 1), lt: b(2, 0) }))).toEqual([[1, 1], [1, 255], [2]]);
    expect(keys(t.range({ gte: b(1, 1), lt: b(2, 0), reverse: true }))).toEqual([[2], [1, 255], [1, 1]]);
    expect(keys(t.range({ prefix: b(1), lt: b(1, 2), reverse: true, limit: 1 }))).toEqual([[1, 1]]);
    expect(keys(t.range({ prefix: b(1), gte: b(1, 2), limit: 5 }))).toEqual([[1, 255]]);
    expect(keys(t.range({ gte: b(3), lt: b(3) }))).toEqual([]);
    const values = [...t.range({ prefix: b(2) })].map((e) => [...e.value]);
    expect(values).toEqual([[2], [2, 0]]);
    await kv.close();
  });

  test("behavior: ranges over hundreds of keys agree with a sorted model, through writes, rollbacks and writes made while a range is read", async () => {
    const kv = await open();
    const t = kv.table("many");
    const model = new Map<string, number>();
    const hex = (k: Uint8Array) => Buffer.from(k).toString("hex");
    // A fixed pseudo-random sequence: keys of 1-3 bytes, so prefixes and lengths mix. The first byte
    // is never 0: lmdb does not keep the one-byte key 0x00 (no store key is one).
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const randomKey = () => Uint8Array.from({ length: 1 + rnd(3) }, (_, i) => (i === 0 ? 1 + rnd(255) : rnd(256)));
    await kv.transaction(() => {
      for (let i = 0; i < 600; i++) {
        const k = randomKey();
        t.put(k, b(i % 256));
        model.set(hex(k), i % 256);
      }
    });
    const expected = (r: { gte?: Uint8Array; lt?: Uint8Array; reverse?: boolean; limit?: number }) => {
      let ks = [...model.keys()].sort((x, y) => Buffer.compare(Buffer.from(x, "hex"), Buffer.from(y, "hex")));
      if (r.gte !== undefined)
        ks = ks.filter((k) => Buffer.compare(Buffer.from(k, "hex"), Buffer.from(r.gte as Uint8Array)) >= 0);
      if (r.lt !== undefined)
        ks = ks.filter((k) => Buffer.compare(Buffer.from(k, "hex"), Buffer.from(r.lt as Uint8Array)) < 0);
      if (r.reverse === true) ks.reverse();
      return ks.slice(0, r.limit ?? ks.length);
    };
    const read = (r: { gte?: Uint8Array; lt?: Uint8Array; reverse?: boolean; limit?: number }) =>
      [...t.range(r)].map((e) => hex(e.key));
    const cases = [
      {},
      { reverse: true },
      { gte: b(0x40), lt: b(0xc0) },
      { gte: b(0x40), lt: b(0xc0), reverse: true },
      { gte: b(0x10, 0x20), limit: 100 },
      { lt: b(0x90, 0), reverse: true, limit: 130 },
      { limit: 1 },
      { reverse: true, limit: 1 },
    ];
    for (const r of cases) expect(read(r)).toEqual(expected(r));
    // Writes after the order exists, and a rolled-back transaction that added and removed keys.
    await kv.transaction(() => {
      for (let i = 0; i < 200; i++) {
        const k = randomKey();
        if (i % 3 === 0) {
          t.remove(k);
          model.delete(hex(k));
        } else {
          t.put(k, b(1));
          model.set(hex(k), 1);
        }
      }
    });
    await expect(
      kv.transaction(() => {
        for (let i = 0; i < 50; i++) t.put(randomKey(), b(2));
        for (const k of [...model.keys()].slice(0, 40)) t.remove(Buffer.from(k, "hex"));
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    for (const r of cases) expect(read(r)).toEqual(expected(r));
    // A range read while the same transaction removes the keys it has passed: nothing is skipped.
    await kv.transaction(() => {
      const seen: string[] = [];
      for (const e of t.range({})) {
        seen.push(hex(e.key));
        t.remove(e.key);
      }
      expect(seen).toEqual(expected({}));
    });
    expect(read({})).toEqual([]);
    await kv.close();
  });

  test("behavior: concurrent transactions all commit", async () => {
    const kv = await open();
    const t = kv.table("c");
    await Promise.all(Array.from({ length: 50 }, (_, i) => kv.transaction(() => t.put(b(i + 1), b(i)))));
    expect([...t.range()].length).toBe(50);
    await kv.close();
  });
});

describe("openKvStore", () => {
  test("behavior: data survives close and reopen", async () => {
    const dir = await tempDir();
    const kv = await openKvStore(dir);
    await kv.transaction(() => kv.table("x").put(b(1, 2, 3), b(4, 5, 6)));
    await kv.close();
    const again = await openKvStore(dir);
    expect([...(again.table("x").get(b(1, 2, 3)) ?? [])]).toEqual([4, 5, 6]);
    await again.close();
  });

  test("behavior: a noSync store's commits survive close and reopen too", async () => {
    const dir = await tempDir();
    const kv = await openKvStore(dir, { noSync: true });
    for (let i = 0; i < 50; i++) await kv.transaction(() => kv.table("x").put(b(i), b(i, i)));
    await kv.close();
    const again = await openKvStore(dir);
    expect([...(again.table("x").get(b(49)) ?? [])]).toEqual([49, 49]);
    expect([...again.table("x").range()]).toHaveLength(50);
    await again.close();
  });
});

describe("openKvSnapshotStore", () => {
  test("behavior: pinned reads see one snapshot whatever commits meanwhile; a new pin sees the latest", async () => {
    const dir = await tempDir();
    const kv = await openKvStore(dir);
    const t = kv.table("x");
    await kv.transaction(() => {
      t.put(b(1), b(10));
      t.put(b(2), b(20));
    });
    const snap = await openKvSnapshotStore(dir);
    const s = snap.table("x");
    snap.pin();
    expect([...(s.get(b(1)) ?? [])]).toEqual([10]);
    await kv.transaction(() => {
      t.put(b(1), b(11));
      t.put(b(3), b(30));
    });
    // Still the pinned snapshot, for gets and ranges, across event-loop turns.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect([...(s.get(b(1)) ?? [])]).toEqual([10]);
    expect([...s.range()].map((e) => [...e.key])).toEqual([[1], [2]]);
    expect([...s.range({ reverse: true, limit: 1 })].map((e) => [...e.value])).toEqual([[20]]);
    snap.pin();
    expect([...(s.get(b(1)) ?? [])]).toEqual([11]);
    expect([...s.range()].map((e) => [...e.key])).toEqual([[1], [2], [3]]);
    snap.release();
    // Unpinned reads use lmdb's shared read transaction, renewed on its own schedule; a new pin is
    // what guarantees the latest.
    await kv.transaction(() => t.put(b(1), b(12)));
    snap.pin();
    expect([...(s.get(b(1)) ?? [])]).toEqual([12]);
    snap.release();
    await expect(snap.transaction(() => s.put(b(9), b(9)))).rejects.toBeInstanceOf(KvReadOnlyError);
    await snap.close();
    // The writer's environment stays open.
    expect([...(t.get(b(1)) ?? [])]).toEqual([12]);
    await kv.close();
  });
});

describe("openKvStore's map", () => {
  test.skipIf(process.platform !== "linux")(
    "behavior: a growing file stays in one map (pages are not counted in RSS once per remap)",
    async () => {
      const dir = await tempDir();
      const kv = await openKvStore(dir);
      const value = new Uint8Array(4096).fill(7);
      for (let batch = 0; batch < 6; batch++) {
        await kv.transaction(() => {
          for (let i = 0; i < 256; i++) kv.table("x").put(b(batch, i >> 8, i & 0xff), value);
        });
      }
      let read = 0;
      for (const e of kv.table("x").range({})) read += e.value.length;
      expect(read).toBe(6 * 256 * 4096);
      const maps = readFileSync("/proc/self/maps", "utf8")
        .split("\n")
        .filter((line) => line.endsWith(join(dir, "data.mdb")));
      expect(maps).toHaveLength(1);
      await kv.close();
    },
  );
});

describe("prefixEnd", () => {
  test("args: increments the last byte below 0xff", () => {
    expect([...(prefixEnd(b(1, 2)) ?? [])]).toEqual([1, 3]);
    expect([...(prefixEnd(b(1, 255)) ?? [])]).toEqual([2]);
    expect(prefixEnd(b(255, 255))).toBeUndefined();
  });

  test("args: a Buffer prefix is copied, not changed (Buffer's slice is a view)", () => {
    // A pooled Buffer, as Buffer.from(hex) gives for an RPC address: changing it in place changed
    // the caller's address (eth_call's state override moved to another address).
    const prefix = Buffer.from("00c0ffee01", "hex");
    const end = prefixEnd(prefix);
    expect([...(end ?? [])]).toEqual([0x00, 0xc0, 0xff, 0xee, 0x02]);
    expect(prefix.toString("hex")).toBe("00c0ffee01");
    const tail = Buffer.from("01ffff", "hex");
    expect([...(prefixEnd(tail) ?? [])]).toEqual([0x02]);
    expect(tail.toString("hex")).toBe("01ffff");
  });
});
