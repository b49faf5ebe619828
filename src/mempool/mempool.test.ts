import { describe, expect, test } from "vitest";
import type { CheckTxRequest, CheckTxResponse, ExecTxResult } from "../types/index.js";
import { silentLogger } from "../util/logger.js";
import { TxInCacheError } from "./errors.js";
import { Mempool, type MempoolOptions, txProtoSize } from "./mempool.js";

const OPTS: MempoolOptions = {
  size: 5000,
  maxTxsBytes: 1073741824,
  maxTxBytes: 1048576,
  cacheSize: 10000,
  keepInvalidTxsInCache: false,
  recheck: true,
};

function response(code: number, gasWanted = 1n): CheckTxResponse {
  return { code, data: new Uint8Array(), log: "", info: "", gasWanted, gasUsed: 0n, events: [], codespace: "" };
}

function result(code: number): ExecTxResult {
  return { code, data: new Uint8Array(), log: "", info: "", gasWanted: 0n, gasUsed: 0n, events: [], codespace: "" };
}

function tx(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function text(b: Uint8Array): string {
  return new TextDecoder().decode(b);
}

/** An app that accepts every tx except those listed in `invalid`, and records calls. */
function fakeApp(opts: { gas?: (tx: string) => bigint } = {}) {
  const invalid = new Set<string>();
  const calls: { tx: string; type: number }[] = [];
  return {
    invalid,
    calls,
    async checkTx(req: CheckTxRequest): Promise<CheckTxResponse> {
      const t = text(req.tx);
      calls.push({ tx: t, type: req.type });
      return response(invalid.has(t) ? 1 : 0, opts.gas?.(t) ?? 1n);
    },
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function newMempool(opts: Partial<MempoolOptions> = {}, app = fakeApp()) {
  return { app, mp: new Mempool({ ...OPTS, ...opts }, { app, log: silentLogger() }) };
}

describe("Mempool", () => {
  test("default: admits through CheckTx (type new), keeps arrival order and counts bytes", async () => {
    const { app, mp } = newMempool();
    for (const t of ["a", "bb", "ccc"]) expect((await mp.checkTx(tx(t))).code).toBe(0);
    expect(app.calls).toEqual([
      { tx: "a", type: 0 },
      { tx: "bb", type: 0 },
      { tx: "ccc", type: 0 },
    ]);
    expect(mp.size()).toBe(3);
    expect(mp.sizeBytes()).toBe(6);
    expect(mp.txs().map(text)).toEqual(["a", "bb", "ccc"]);
    expect(mp.txs(2).map(text)).toEqual(["a", "bb"]);
  });

  test("error: tx too large", async () => {
    const { mp } = newMempool({ maxTxBytes: 10 });
    await expect(mp.checkTx(new Uint8Array(11))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[TxTooLargeError: Tx too large. Max size is 10, but got 11]`,
    );
    await expect(mp.checkTx(new Uint8Array(10))).resolves.toMatchObject({ code: 0 });
  });

  test("error: mempool full by count", async () => {
    const { mp } = newMempool({ size: 2 });
    await mp.checkTx(tx("aaa"));
    await mp.checkTx(tx("bbb"));
    await expect(mp.checkTx(tx("ccc"))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[MempoolFullError: mempool is full: number of txs 2 (max: 2), total txs bytes 6 (max: 1073741824)]`,
    );
  });

  test("error: mempool full by bytes", async () => {
    const { mp } = newMempool({ maxTxsBytes: 10 });
    await mp.checkTx(tx("123456"));
    await expect(mp.checkTx(tx("12345"))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[MempoolFullError: mempool is full: number of txs 1 (max: 5000), total txs bytes 6 (max: 10)]`,
    );
    await expect(mp.checkTx(tx("1234"))).resolves.toMatchObject({ code: 0 });
  });

  test("behavior: fullness is checked before size, as CometBFT does", async () => {
    const { mp } = newMempool({ size: 1, maxTxBytes: 4 });
    await mp.checkTx(tx("a"));
    await expect(mp.checkTx(tx("too large"))).rejects.toThrow(/^mempool is full/);
  });

  test("error: a tx seen before is in the cache", async () => {
    const { app, mp } = newMempool();
    await mp.checkTx(tx("a"));
    await expect(mp.checkTx(tx("a"))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[TxInCacheError: tx already exists in cache]`,
    );
    expect(app.calls.length).toBe(1);
  });

  test("behavior: an invalid tx is not added and leaves the cache, unless keepInvalidTxsInCache", async () => {
    const { app, mp } = newMempool();
    app.invalid.add("bad");
    expect((await mp.checkTx(tx("bad"))).code).toBe(1);
    expect(mp.size()).toBe(0);
    expect((await mp.checkTx(tx("bad"))).code).toBe(1);
    expect(app.calls.length).toBe(2);

    const keep = newMempool({ keepInvalidTxsInCache: true });
    keep.app.invalid.add("bad");
    expect((await keep.mp.checkTx(tx("bad"))).code).toBe(1);
    await expect(keep.mp.checkTx(tx("bad"))).rejects.toThrow("tx already exists in cache");
  });

  test("behavior: the cache is an LRU of cacheSize; an evicted tx still in the mempool is not added twice", async () => {
    const { app, mp } = newMempool({ cacheSize: 2 });
    await mp.checkTx(tx("a"));
    await mp.checkTx(tx("b"));
    await mp.checkTx(tx("c")); // evicts "a"
    await expect(mp.checkTx(tx("c"))).rejects.toThrow("tx already exists in cache");
    expect((await mp.checkTx(tx("a"))).code).toBe(0);
    expect(app.calls.filter((c) => c.tx === "a").length).toBe(2);
    expect(mp.txs().map(text)).toEqual(["a", "b", "c"]);
  });

  test("behavior: cacheSize 0 disables the cache", async () => {
    const { mp } = newMempool({ cacheSize: 0 });
    await mp.checkTx(tx("a"));
    await expect(mp.checkTx(tx("a"))).resolves.toMatchObject({ code: 0 });
    expect(mp.size()).toBe(1);
  });

  test("error: an app failure propagates and lets the tx be resubmitted", async () => {
    let fail = true;
    const app = {
      async checkTx(): Promise<CheckTxResponse> {
        if (fail) throw new TypeError("app down");
        return response(0);
      },
    };
    const mp = new Mempool(OPTS, { app, log: silentLogger() });
    await expect(mp.checkTx(tx("a"))).rejects.toThrow("app down");
    fail = false;
    await expect(mp.checkTx(tx("a"))).resolves.toMatchObject({ code: 0 });
  });

  test("behavior: update removes committed txs; valid stay in the cache, invalid leave it", async () => {
    const { mp } = newMempool({ recheck: false });
    for (const t of ["a", "b", "c"]) await mp.checkTx(tx(t));
    await mp.update(1, [tx("a"), tx("b")], [result(0), result(5)]);
    expect(mp.txs().map(text)).toEqual(["c"]);
    expect(mp.sizeBytes()).toBe(1);
    await expect(mp.checkTx(tx("a"))).rejects.toThrow("tx already exists in cache");
    await expect(mp.checkTx(tx("b"))).resolves.toMatchObject({ code: 0 });
    // A committed tx that never was in this mempool is remembered too.
    await mp.update(2, [tx("z")], [result(0)]);
    await expect(mp.checkTx(tx("z"))).rejects.toThrow("tx already exists in cache");
  });

  test("behavior: update rechecks the remaining txs (type recheck) and drops those that now fail", async () => {
    const { app, mp } = newMempool();
    for (const t of ["a", "b", "c", "d"]) await mp.checkTx(tx(t));
    app.calls.length = 0;
    app.invalid.add("c");
    await mp.update(1, [tx("a")], [result(0)]);
    expect(app.calls).toEqual([
      { tx: "b", type: 1 },
      { tx: "c", type: 1 },
      { tx: "d", type: 1 },
    ]);
    expect(mp.txs().map(text)).toEqual(["b", "d"]);
    expect(mp.sizeBytes()).toBe(2);
    // Dropped by recheck: forgotten by the cache, so it may come back once valid.
    app.invalid.delete("c");
    await expect(mp.checkTx(tx("c"))).resolves.toMatchObject({ code: 0 });
    expect(mp.txs().map(text)).toEqual(["b", "d", "c"]);
  });

  test("behavior: recheck=false leaves the remaining txs alone", async () => {
    const { app, mp } = newMempool({ recheck: false });
    for (const t of ["a", "b"]) await mp.checkTx(tx(t));
    app.invalid.add("b");
    app.calls.length = 0;
    await mp.update(1, [], []);
    expect(app.calls).toEqual([]);
    expect(mp.size()).toBe(2);
  });

  test("error: update with mismatched results", async () => {
    const { mp } = newMempool();
    await expect(mp.update(1, [tx("a")], [])).rejects.toThrowErrorMatchingInlineSnapshot(
      `[MempoolUpdateError: update got 1 txs but 0 results. Pass FinalizeBlock's txResults for the block's txs]`,
    );
  });

  test("behavior: reapMaxBytesMaxGas counts protobuf framing and stops at the first tx that does not fit", async () => {
    const gas: Record<string, bigint> = { a: 5n, b: 5n, c: 1n, d: 1n };
    const { mp } = newMempool({}, fakeApp({ gas: (t) => gas[t[0] as string] ?? 1n }));
    for (const t of ["a".repeat(10), "b".repeat(10), "c".repeat(200), "d"]) await mp.checkTx(tx(t));
    expect(txProtoSize(10)).toBe(12);
    expect(txProtoSize(200)).toBe(203);
    expect(mp.reapMaxBytesMaxGas(-1, -1n).length).toBe(4);
    expect(mp.reapMaxBytesMaxGas(23, -1n).length).toBe(1);
    expect(mp.reapMaxBytesMaxGas(24, -1n).length).toBe(2);
    // "c" needs 203 more bytes; "d" would fit but reaping keeps order and stops.
    expect(mp.reapMaxBytesMaxGas(100, -1n).length).toBe(2);
    expect(mp.reapMaxBytesMaxGas(227, -1n).length).toBe(3);
    expect(mp.reapMaxBytesMaxGas(-1, 9n).length).toBe(1);
    expect(mp.reapMaxBytesMaxGas(-1, 10n).length).toBe(2);
    expect(mp.reapMaxBytesMaxGas(-1, 12n).length).toBe(4);
    expect(mp.reapMaxBytesMaxGas(0, -1n)).toEqual([]);
    expect(mp.size()).toBe(4);
  });

  test("behavior: reapMaxTxs returns at most max, all when negative", async () => {
    const { mp } = newMempool();
    for (const t of ["a", "b", "c"]) await mp.checkTx(tx(t));
    expect(mp.reapMaxTxs(2).map(text)).toEqual(["a", "b"]);
    expect(mp.reapMaxTxs(0)).toEqual([]);
    expect(mp.reapMaxTxs(-1).length).toBe(3);
    expect(mp.reapMaxTxs(10).length).toBe(3);
  });

  test("behavior: onTxsAvailable fires once per height", async () => {
    const { mp } = newMempool();
    let fired = 0;
    const off = mp.onTxsAvailable(() => fired++);
    await mp.checkTx(tx("a"));
    await mp.checkTx(tx("b"));
    expect(fired).toBe(1);
    // Txs left after the block: fires again for the new height, once.
    await mp.update(1, [tx("a")], [result(0)]);
    expect(fired).toBe(2);
    await mp.checkTx(tx("c"));
    expect(fired).toBe(2);
    // Empty after the block: nothing until a tx arrives.
    await mp.update(2, [tx("b"), tx("c")], [result(0), result(0)]);
    expect(fired).toBe(2);
    await mp.checkTx(tx("d"));
    expect(fired).toBe(3);
    off();
    await mp.update(3, [], []);
    expect(fired).toBe(3);
  });

  test("behavior: onTxAdded reports each admitted tx with its sender, not rejected or duplicate ones", async () => {
    const { app, mp } = newMempool();
    app.invalid.add("bad");
    const added: [string, string | undefined][] = [];
    const off = mp.onTxAdded((t, info) => added.push([text(t), info.sender]));
    await mp.checkTx(tx("a"));
    await mp.checkTx(tx("b"), { sender: "peer1" });
    await mp.checkTx(tx("bad"), { sender: "peer2" });
    await expect(mp.checkTx(tx("a"), { sender: "peer3" })).rejects.toThrow(TxInCacheError);
    off();
    await mp.checkTx(tx("c"));
    expect(added).toEqual([
      ["a", undefined],
      ["b", "peer1"],
    ]);
  });

  test("behavior: lock() holds new admissions until released", async () => {
    const { app, mp } = newMempool();
    const release = await mp.lock();
    let done = false;
    const p = mp.checkTx(tx("a")).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    expect(app.calls).toEqual([]);
    await mp.update(1, [], []);
    release();
    release(); // idempotent
    await expect(p).resolves.toMatchObject({ code: 0 });
    expect(mp.size()).toBe(1);
  });

  test("behavior: lock() waits for admissions already in the app", async () => {
    const gate = deferred<CheckTxResponse>();
    const order: string[] = [];
    const app = {
      checkTx: async () => {
        order.push("app");
        return gate.promise;
      },
    };
    const mp = new Mempool(OPTS, { app, log: silentLogger() });
    const admitted = mp.checkTx(tx("a")).then(() => order.push("admitted"));
    await new Promise((r) => setTimeout(r, 0));
    const locked = mp.lock().then((release) => {
      order.push("locked");
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(["app"]);
    gate.resolve(response(0));
    const release = await locked;
    await admitted;
    expect(order).toEqual(["app", "admitted", "locked"]);
    expect(mp.size()).toBe(1);
    release();
  });

  test("behavior: a waiting lock() holds admissions that arrive after it", async () => {
    const gate = deferred<CheckTxResponse>();
    const calls: string[] = [];
    const app = {
      checkTx: async (req: CheckTxRequest): Promise<CheckTxResponse> => {
        calls.push(text(req.tx));
        return text(req.tx) === "a" ? gate.promise : response(0);
      },
    };
    const mp = new Mempool(OPTS, { app, log: silentLogger() });
    const first = mp.checkTx(tx("a"));
    await new Promise((r) => setTimeout(r, 0));
    const locked = mp.lock();
    const second = mp.checkTx(tx("b"));
    await new Promise((r) => setTimeout(r, 10));
    expect(calls).toEqual(["a"]);
    gate.resolve(response(0));
    const release = await locked;
    await first;
    expect(calls).toEqual(["a"]);
    release();
    await second;
    expect(calls).toEqual(["a", "b"]);
  });

  test("behavior: concurrent admissions never exceed size or maxTxsBytes", async () => {
    const app = {
      checkTx: async (): Promise<CheckTxResponse> => {
        await new Promise((r) => setTimeout(r, 5));
        return response(0);
      },
    };
    const mp = new Mempool({ ...OPTS, size: 3 }, { app, log: silentLogger() });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => mp.checkTx(tx(`tx${i}`))));
    expect(results.filter((r) => r.status === "fulfilled").length).toBe(3);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(rejected.length).toBe(7);
    expect(String(rejected[0]?.reason)).toContain("mempool is full: number of txs 3 (max: 3)");
    expect(mp.size()).toBe(3);

    const byBytes = new Mempool({ ...OPTS, maxTxsBytes: 10 }, { app, log: silentLogger() });
    await Promise.allSettled(Array.from({ length: 10 }, (_, i) => byBytes.checkTx(tx(`tx${i}`))));
    expect(byBytes.size()).toBe(3);
    expect(byBytes.sizeBytes()).toBe(9);
  });

  test("behavior: flush empties the mempool and the cache", async () => {
    const { mp } = newMempool();
    await mp.checkTx(tx("a"));
    mp.flush();
    expect(mp.size()).toBe(0);
    expect(mp.sizeBytes()).toBe(0);
    expect(mp.txs()).toEqual([]);
    await expect(mp.checkTx(tx("a"))).resolves.toMatchObject({ code: 0 });
    expect(mp.size()).toBe(1);
  });

  test("behavior: removal from the middle keeps order (O(1) linked list)", async () => {
    const { mp } = newMempool({ recheck: false });
    const n = 2000;
    for (let i = 0; i < n; i++) await mp.checkTx(tx(`t${i}`));
    const odd = Array.from({ length: n / 2 }, (_, i) => tx(`t${2 * i + 1}`));
    await mp.update(
      1,
      odd,
      odd.map(() => result(0)),
    );
    const left = mp.txs().map(text);
    expect(left.length).toBe(n / 2);
    expect(left.slice(0, 3)).toEqual(["t0", "t2", "t4"]);
    expect(left.at(-1)).toBe(`t${n - 2}`);
  });
});
