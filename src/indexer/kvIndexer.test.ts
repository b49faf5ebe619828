import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { parseQuery, type Query } from "../events/index.js";
import { openKvStore, openMemoryKvStore } from "../store/index.js";
import { txHash } from "../types/index.js";
import { BlockInputError, IndexerClosedError, ReservedEventKeyError, UnsupportedQueryError } from "./errors.js";
import type { Indexer } from "./indexer.js";
import { createKvIndexer } from "./kvIndexer.js";
import { createNullIndexer } from "./nullIndexer.js";
import { block, describeIndexerBehaviour, ev, FIXTURE, names, txResult } from "./testing/indexerSuite.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "cometh-indexer-"));
  dirs.push(d);
  return d;
}

describeIndexerBehaviour("kv (memory)", async () => createKvIndexer(openMemoryKvStore()));
describeIndexerBehaviour("kv (lmdb)", async () => createKvIndexer(await openKvStore(await tempDir())));

const q = (text: string) => parseQuery(text);

function rollback(idx: Indexer, height: number): Promise<void> {
  if (idx.rollbackTo === undefined) throw new TypeError("the kv indexer has rollbackTo");
  return idx.rollbackTo(height);
}

describe("kv indexer", () => {
  test("default: the index survives closing and reopening the LMDB store", async () => {
    const dir = await tempDir();
    const first = createKvIndexer(await openKvStore(dir));
    for (const b of FIXTURE) await first.indexBlock(b);
    await first.close();
    const again = createKvIndexer(await openKvStore(dir));
    expect(names(again.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["a=1", "c=3", "e=5"]);
    expect(again.searchBlocks(q("reward.amount > 5")).sort()).toEqual([1, 2, 4]);
    expect(again.getTx(txHash(new TextEncoder().encode("b=2")))?.height).toBe(1);
    await again.close();
  });

  test("behavior: pruneBelow removes every row of the pruned heights and nothing else", async () => {
    const kv = openMemoryKvStore();
    const idx = createKvIndexer(kv);
    for (const b of FIXTURE) await idx.indexBlock(b);
    const rows = () =>
      Object.fromEntries(
        ["txindex/results", "txindex/heights", "txindex/events", "blockindex/heights", "blockindex/events"].map((t) => [
          t,
          [...kv.table(t).range()].length,
        ]),
      );
    const before = rows();
    expect(await idx.pruneBelow(3)).toBe(2);
    expect(names(idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["e=5"]);
    expect(names(idx.searchTxs(q("tx.height >= 1")))).toEqual(["e=5"]);
    expect(idx.getTx(txHash(new TextEncoder().encode("a=1")))).toBeUndefined();
    expect(idx.searchBlocks(q("reward.amount > 5")).sort()).toEqual([4]);
    expect(idx.searchBlocks(q("block.height = 2"))).toEqual([]);
    expect(idx.getTx(txHash(new TextEncoder().encode("e=5")))?.height).toBe(3);
    // What is left is exactly what heights 3 and 4 wrote: indexing them alone gives the same rows.
    const alone = openMemoryKvStore();
    const other = createKvIndexer(alone);
    for (const b of FIXTURE.filter((b) => b.height >= 3)) await other.indexBlock(b);
    const expected = Object.fromEntries(Object.keys(before).map((t) => [t, [...alone.table(t).range()].length]));
    expect(rows()).toEqual(expected);
    expect(await idx.pruneBelow(3)).toBe(0);
    await idx.close();
    await other.close();
  });

  test("behavior: pruneBelow keeps a tx result indexed again at a retained height", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    await idx.indexBlock(block(1, [], [["same", txResult([ev("transfer", { sender: "alice" })])]]));
    await idx.indexBlock(block(2, [], [["same", txResult([ev("transfer", { sender: "bob" })])]]));
    await idx.pruneBelow(2);
    expect(idx.getTx(txHash(new TextEncoder().encode("same")))?.height).toBe(2);
    expect(names(idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual([]);
    expect(names(idx.searchTxs(q("transfer.sender = 'bob'")))).toEqual(["same"]);
    await idx.close();
  });

  test("behavior: rollbackTo removes every row of the later heights and nothing else", async () => {
    const kv = openMemoryKvStore();
    const idx = createKvIndexer(kv);
    for (const b of FIXTURE) await idx.indexBlock(b);
    const tables = ["txindex/results", "txindex/heights", "txindex/events", "blockindex/heights", "blockindex/events"];
    const rows = (store: typeof kv) => Object.fromEntries(tables.map((t) => [t, [...store.table(t).range()].length]));
    await rollback(idx, 2);
    expect(names(idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["a=1", "c=3"]);
    expect(idx.getTx(txHash(new TextEncoder().encode("e=5")))).toBeUndefined();
    expect(idx.searchBlocks(q("block.height > 2"))).toEqual([]);
    expect(idx.lastIndexedHeight()).toBe(2);
    // What is left is exactly what heights 1 and 2 wrote: indexing them alone gives the same rows.
    const alone = openMemoryKvStore();
    const other = createKvIndexer(alone);
    for (const b of FIXTURE.filter((b) => b.height <= 2)) await other.indexBlock(b);
    expect(rows(kv)).toEqual(rows(alone));
    // The reused heights index again as on a fresh chain.
    for (const b of FIXTURE.filter((b) => b.height > 2)) await idx.indexBlock(b);
    expect(names(idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["a=1", "c=3", "e=5"]);
    await idx.close();
    await other.close();
  });

  test("behavior: rollbackTo keeps a tx result of a kept height that a later failed inclusion did not replace", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    await idx.indexBlock(block(1, [], [["same", txResult([ev("transfer", { sender: "alice" })])]]));
    await idx.indexBlock(block(2, [], [["same", txResult([ev("transfer", { sender: "bob" })], 5)]]));
    await rollback(idx, 1);
    expect(idx.getTx(txHash(new TextEncoder().encode("same")))?.height).toBe(1);
    expect(names(idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["same"]);
    await idx.close();
  });

  test("error: a tx event using tx.height or tx.hash drops the block's txs, not its events", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    const input = block(
      1,
      [ev("reward", { amount: "1" })],
      [
        ["ok", txResult([ev("transfer", { sender: "a" })])],
        ["bad", txResult([ev("tx", { height: "9" }, ["height"])])],
      ],
    );
    await expect(idx.indexBlock(input)).rejects.toThrow(ReservedEventKeyError);
    await expect(idx.indexBlock(input)).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ReservedEventKeyError: event type and attribute key "tx.height" is reserved; please use a different key]`,
    );
    expect(idx.searchTxs(q("tx.height = 1"))).toEqual([]);
    expect(idx.searchBlocks(q("reward.amount = 1"))).toEqual([1]);
    await idx.close();
  });

  test("error: a block event using block.height drops the block's events, not its txs", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    const input = block(1, [ev("block", { height: "1" })], [["ok", txResult([])]]);
    await expect(idx.indexBlock(input)).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ReservedEventKeyError: failed to index FinalizeBlock events: event type and attribute key "block.height" is reserved; please use a different key]`,
    );
    expect(idx.searchBlocks(q("block.height = 1"))).toEqual([]);
    expect(names(idx.searchTxs(q("tx.height = 1")))).toEqual(["ok"]);
    await idx.close();
  });

  test("behavior: tags and values longer than an LMDB key are searchable", async () => {
    const idx = createKvIndexer(await openKvStore(await tempDir()));
    const longType = "t".repeat(700);
    const longValue = `${"v".repeat(2000)}needle${"w".repeat(500)}`;
    const other = `${"v".repeat(2000)}other`;
    await idx.indexBlock(
      block(
        1,
        [ev(longType, { k: longValue })],
        [
          ["x", txResult([ev(longType, { k: longValue, n: "5" })])],
          ["y", txResult([ev("s", { k: other })])],
          ["z", txResult([ev("s", { k: `${"1".repeat(600)}` })])],
        ],
      ),
    );
    expect(names(idx.searchTxs(q(`${longType}.k = '${longValue}'`)))).toEqual(["x"]);
    expect(names(idx.searchTxs(q(`${longType}.k CONTAINS 'needle' AND ${longType}.n = 5`)))).toEqual(["x"]);
    expect(names(idx.searchTxs(q(`s.k = '${other}'`)))).toEqual(["y"]);
    expect(names(idx.searchTxs(q(`s.k = '${"v".repeat(2000)}'`)))).toEqual([]);
    expect(names(idx.searchTxs(q("s.k > 1")))).toEqual(["z"]);
    expect(idx.searchBlocks(q(`${longType}.k CONTAINS 'needle'`))).toEqual([1]);
    await idx.close();
  });

  test("behavior: NUL bytes, separators and repeated keys in one event", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    const event = {
      type: "m",
      attributes: [
        { key: "k", value: "a\u0000b/c", index: true },
        { key: "k", value: "second", index: true },
      ],
    };
    await idx.indexBlock(block(1, [], [["x", txResult([event])]]));
    expect(names(idx.searchTxs(q("m.k = 'a\u0000b/c'")))).toEqual(["x"]);
    expect(names(idx.searchTxs(q("m.k = 'a\u0000b'")))).toEqual([]);
    expect(names(idx.searchTxs(q("m.k = 'a\u0000b/c' AND m.k = 'second'")))).toEqual(["x"]);
    await idx.close();
  });

  test("error: inconsistent block input", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    const input = { height: 1, finalizeBlockEvents: [], txs: [new Uint8Array(1)], txResults: [] };
    await expect(idx.indexBlock(input)).rejects.toThrow(BlockInputError);
    await expect(idx.indexBlock(input)).rejects.toThrowErrorMatchingInlineSnapshot(
      `[BlockInputError: cannot index the block: block 1 has 1 txs but 0 tx results. Pass txResults[i] for every txs[i]]`,
    );
    await idx.close();
  });

  test("error: a query that is not a parsed events/ Query", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    expect(() => idx.searchTxs({ text: "x" } as unknown as Query)).toThrow(UnsupportedQueryError);
    await idx.close();
  });

  test("error: use after close", async () => {
    const idx = createKvIndexer(openMemoryKvStore());
    await idx.close();
    await idx.close();
    expect(() => idx.searchBlocks(q("block.height = 1"))).toThrow(IndexerClosedError);
    await expect(idx.indexBlock(FIXTURE[0] ?? block(1, [], []))).rejects.toThrow(IndexerClosedError);
  });
});

describe("null indexer", () => {
  test("default: indexes nothing and reports both indexes off", async () => {
    const idx = createNullIndexer();
    expect([idx.txIndexEnabled, idx.blockIndexEnabled]).toEqual([false, false]);
    for (const b of FIXTURE) await idx.indexBlock(b);
    expect(await idx.getTx(new Uint8Array(32))).toBeUndefined();
    expect(await idx.searchTxs(q("tx.height = 1"))).toEqual([]);
    expect(await idx.searchBlocks(q("block.height = 1"))).toEqual([]);
    await idx.close();
  });
});

describe("lazy TxResult decoding", () => {
  test("behavior: height and index come from the record head; tx and result decode on use", async () => {
    const { decodeTxResult, decodeTxResultLazily, encodeTxResult } = await import("./txResultCodec.js");
    const cases = [
      { height: 0, index: 0 },
      { height: 1, index: 0 },
      { height: 300, index: 7 },
      { height: 2 ** 40, index: 65_000 },
    ];
    for (const c of cases) {
      const record = {
        ...c,
        tx: new Uint8Array([1, 2, 3]),
        result: {
          code: 0,
          data: new Uint8Array([9]),
          log: "ok",
          info: "",
          gasWanted: 5n,
          gasUsed: 4n,
          events: [{ type: "e", attributes: [{ key: "k", value: "v", index: true }] }],
          codespace: "",
        },
      };
      const bytes = encodeTxResult(record);
      const lazy = decodeTxResultLazily(bytes);
      const eager = decodeTxResult(bytes);
      expect([lazy.height, lazy.index]).toEqual([c.height, c.index]);
      expect({ height: lazy.height, index: lazy.index, tx: lazy.tx, result: lazy.result }).toEqual(eager);
    }
  });
});
