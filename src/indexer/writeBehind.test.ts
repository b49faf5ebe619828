import { describe, expect, test } from "vitest";
import { parseQuery } from "../events/index.js";
import { openMemoryKvStore } from "../store/index.js";
import { txHash } from "../types/index.js";
import { ReservedEventKeyError } from "./errors.js";
import type { BlockIndexInput, Indexer } from "./indexer.js";
import { createKvIndexer } from "./kvIndexer.js";
import { block, describeIndexerBehaviour, ev, FIXTURE, names, txResult } from "./testing/indexerSuite.js";
import { writeBehind } from "./writeBehind.js";

const q = (text: string) => parseQuery(text);
const hashOf = (tx: string) => txHash(new TextEncoder().encode(tx));
const failOnError = (err: unknown) => {
  throw err;
};

describeIndexerBehaviour("kv (memory), written behind", async () =>
  writeBehind(createKvIndexer(openMemoryKvStore()), { onError: failOnError }),
);

/** A kv indexer over a memory store, and what reached it. */
function counted() {
  const kv = openMemoryKvStore();
  const inner = createKvIndexer(kv);
  const seen = { written: [] as number[], rollbacks: [] as number[] };
  const spy: Indexer = {
    txIndexEnabled: true,
    blockIndexEnabled: true,
    indexBlock: (input: BlockIndexInput) => {
      seen.written.push(input.height);
      return inner.indexBlock(input);
    },
    lastIndexedHeight: () => inner.lastIndexedHeight(),
    rollbackTo: (height: number) => {
      seen.rollbacks.push(height);
      return rollback(inner, height);
    },
    pruneBelow: (height: number) => inner.pruneBelow(height),
    getTx: (hash: Uint8Array) => inner.getTx(hash),
    searchTxs: (query) => inner.searchTxs(query),
    searchBlocks: (query) => inner.searchBlocks(query),
    close: () => inner.close(),
  };
  return { kv, inner, spy, seen };
}

function rollback(idx: Indexer, height: number): Promise<void> {
  if (idx.rollbackTo === undefined) throw new TypeError("written behind a kv indexer, it has rollbackTo");
  return idx.rollbackTo(height);
}

describe("write-behind indexer", () => {
  test("behavior: a block is written when it is read, not when it is committed", async () => {
    const { spy, seen } = counted();
    const idx = writeBehind(spy, { onError: failOnError });
    for (const b of FIXTURE) await idx.indexBlock(b);
    expect(seen.written).toEqual([]);
    expect(await idx.lastIndexedHeight()).toBe(4);
    expect((await idx.getTx(hashOf("e=5")))?.height).toBe(3);
    expect(seen.written).toEqual([1, 2, 3, 4]);
    // Written once: later reads find nothing waiting.
    expect(names(await idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["a=1", "c=3", "e=5"]);
    expect(await idx.searchBlocks(q("reward.validator = 'v3'"))).toEqual([4]);
    expect(seen.written).toEqual([1, 2, 3, 4]);
    await idx.close();
  });

  test("behavior: a revert drops the waiting blocks above its height unwritten", async () => {
    const { spy, seen } = counted();
    const idx = writeBehind(spy, { onError: failOnError });
    await idx.indexBlock(FIXTURE[0] as BlockIndexInput);
    expect(await idx.searchBlocks(q("block.height = 1"))).toEqual([1]);
    await rollback(idx, 1);
    for (const b of FIXTURE.slice(1)) await idx.indexBlock(b);
    await rollback(idx, 1);
    // Heights 2-4 never reached the store, and it held nothing above 1 to forget.
    expect(seen.written).toEqual([1]);
    expect(seen.rollbacks).toEqual([1]);
    expect(await idx.getTx(hashOf("c=3"))).toBeUndefined();
    expect(await idx.lastIndexedHeight()).toBe(1);
    // The reused heights index again.
    await idx.indexBlock(block(2, [], [["again", txResult([ev("transfer", { sender: "alice" })])]]));
    expect(names(await idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["a=1", "again"]);
    expect(seen.written).toEqual([1, 2]);
    await idx.close();
  });

  test("behavior: a revert below what was written removes it from the store", async () => {
    const { kv, spy, seen } = counted();
    const idx = writeBehind(spy, { onError: failOnError });
    for (const b of FIXTURE) await idx.indexBlock(b);
    await idx.searchBlocks(q("block.height > 0"));
    await idx.indexBlock(block(5, [], [["f=6", txResult([ev("transfer", { sender: "alice" })])]]));
    await rollback(idx, 2);
    expect(seen.rollbacks).toEqual([2]);
    expect(seen.written).toEqual([1, 2, 3, 4]);
    expect(names(await idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["a=1", "c=3"]);
    expect(await idx.searchBlocks(q("block.height > 2"))).toEqual([]);
    // The store holds exactly what heights 1 and 2 alone write.
    const aloneKv = openMemoryKvStore();
    const alone = createKvIndexer(aloneKv);
    for (const b of FIXTURE.slice(0, 2)) await alone.indexBlock(b);
    for (const t of [
      "txindex/results",
      "txindex/heights",
      "txindex/events",
      "blockindex/heights",
      "blockindex/events",
    ]) {
      expect([...kv.table(t).range()], t).toEqual([...aloneKv.table(t).range()]);
    }
    await alone.close();
    await idx.close();
  });

  test("behavior: the block after maxPending waiting ones writes them all", async () => {
    const { spy, seen } = counted();
    const idx = writeBehind(spy, { maxPending: 3, onError: failOnError });
    for (const b of FIXTURE.slice(0, 2)) await idx.indexBlock(b);
    expect(seen.written).toEqual([]);
    await idx.indexBlock(FIXTURE[2] as BlockIndexInput);
    expect(seen.written).toEqual([1, 2, 3]);
    await idx.indexBlock(FIXTURE[3] as BlockIndexInput);
    expect(seen.written).toEqual([1, 2, 3]);
    await idx.close();
    expect(seen.written).toEqual([1, 2, 3, 4]);
  });

  test("behavior: pruning writes the waiting blocks first", async () => {
    const { spy } = counted();
    const idx = writeBehind(spy, { onError: failOnError });
    for (const b of FIXTURE) await idx.indexBlock(b);
    expect(await idx.pruneBelow?.(3)).toBe(2);
    expect(names(await idx.searchTxs(q("transfer.sender = 'alice'")))).toEqual(["e=5"]);
    await idx.close();
  });

  test("error: a block the indexer refuses is reported with its height when written; the others are written", async () => {
    const { spy } = counted();
    const errors: { err: unknown; height: number }[] = [];
    const idx = writeBehind(spy, { onError: (err, height) => errors.push({ err, height }) });
    await idx.indexBlock(FIXTURE[0] as BlockIndexInput);
    await idx.indexBlock(block(2, [], [["bad", txResult([ev("tx", { height: "9" }, ["height"])])]]));
    await idx.indexBlock(FIXTURE[2] as BlockIndexInput);
    expect(errors).toEqual([]);
    expect((await idx.getTx(hashOf("e=5")))?.height).toBe(3);
    expect(errors.map((e) => e.height)).toEqual([2]);
    expect(errors[0]?.err).toBeInstanceOf(ReservedEventKeyError);
    expect(await idx.getTx(hashOf("bad"))).toBeUndefined();
    await idx.close();
  });

  test("edge: a sink without rollbackTo or pruneBelow gives neither", () => {
    const { spy } = counted();
    const { rollbackTo: _r, pruneBelow: _p, ...bare } = spy;
    const idx = writeBehind(bare, { onError: failOnError });
    expect(idx.rollbackTo).toBeUndefined();
    expect(idx.pruneBelow).toBeUndefined();
    expect(writeBehind(spy, { onError: failOnError }).rollbackTo).toBeTypeOf("function");
  });
});
