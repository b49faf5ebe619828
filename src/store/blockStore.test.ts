import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { encodeBlock, encodeCommit, PART_SIZE_BYTES } from "../types/index.js";
import { BlockStore } from "./blockStore.js";
import { NonContiguousBlockError, PruneHeightError } from "./errors.js";
import { type KvStore, openKvStore } from "./kvStore.js";
import { openMemoryKvStore } from "./memoryKvStore.js";
import { makeTestBlock, makeTestChain, type TestBlock } from "./testing/blockFixtures.js";

const dirs: string[] = [];
const stores: KvStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "cometh-blockstore-"));
  dirs.push(d);
  return d;
}

async function openStore(dir?: string): Promise<{ kv: KvStore; store: BlockStore; dir: string }> {
  const d = dir ?? (await tempDir());
  const kv = await openKvStore(d);
  stores.push(kv);
  return { kv, store: new BlockStore(kv), dir: d };
}

async function saveAll(store: BlockStore, chain: TestBlock[]): Promise<void> {
  for (const b of chain) await store.saveBlock(b.block, b.parts, b.seenCommit);
}

function at(chain: TestBlock[], i: number): TestBlock {
  const b = chain[i];
  if (b === undefined) throw new RangeError(`no block at index ${i}`);
  return b;
}

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString("hex"));

describe("BlockStore", () => {
  test("default: empty store", async () => {
    const { store } = await openStore();
    expect(store.base()).toBe(0);
    expect(store.height()).toBe(0);
    expect(store.loadBlock(1)).toBeUndefined();
    expect(store.loadBlockMeta(1)).toBeUndefined();
    expect(store.loadSeenCommit(1)).toBeUndefined();
  });

  test("behavior: save/load round trip by height, hash, part, commit and seen commit", async () => {
    const { store } = await openStore();
    const chain = makeTestChain(3);
    await saveAll(store, chain);
    expect(store.base()).toBe(1);
    expect(store.height()).toBe(3);
    for (const b of chain) {
      const h = b.block.header.height;
      const loaded = store.loadBlock(h);
      expect(loaded && hex(encodeBlock(loaded))).toBe(hex(encodeBlock(b.block)));
      expect(store.loadBlock(h)).toBe(loaded); // decoded once, then cached
      const byHash = store.loadBlockByHash(b.id.hash);
      expect(byHash && hex(encodeBlock(byHash))).toBe(hex(encodeBlock(b.block)));
      expect(store.heightByHash(b.id.hash)).toBe(h);
      const meta = store.loadBlockMeta(h);
      expect(meta?.blockId).toEqual(b.id);
      expect(meta?.numTxs).toBe(1);
      expect(meta?.blockSize).toBe(encodeBlock(b.block).length);
      expect(meta?.header).toEqual(b.block.header);
      expect(store.loadBlockMetaByHash(b.id.hash)).toEqual(meta);
      const part = store.loadBlockPart(h, 0);
      expect(part?.index).toBe(0);
      expect(hex(part?.bytes)).toBe(hex(b.parts.getPart(0)?.bytes));
      expect(store.loadBlockPart(h, 1)).toBeUndefined();
      const seen = store.loadSeenCommit(h);
      expect(seen && hex(encodeCommit(seen))).toBe(hex(encodeCommit(b.seenCommit)));
    }
    // The canonical commit of h comes from block h+1's LastCommit; none yet for the tip.
    const c1 = store.loadBlockCommit(1);
    expect(c1 && hex(encodeCommit(c1))).toBe(hex(encodeCommit(at(chain, 1).block.lastCommit)));
    expect(store.loadBlockCommit(2)).toBeDefined();
    expect(store.loadBlockCommit(3)).toBeUndefined();
    expect(store.loadBlock(4)).toBeUndefined();
    expect(store.loadBlockByHash(new Uint8Array(32))).toBeUndefined();
    expect(store.heightByHash(new Uint8Array())).toBeUndefined();
  });

  test("behavior: a block of several parts is reassembled", async () => {
    const { store } = await openStore();
    const big = new Uint8Array(PART_SIZE_BYTES * 2 + 100).map((_, i) => i % 251);
    const b = makeTestBlock(1, undefined, [big, new Uint8Array([1, 2, 3])]);
    expect(b.parts.total).toBe(3);
    await store.saveBlock(b.block, b.parts, b.seenCommit);
    for (let i = 0; i < 3; i++) expect(hex(store.loadBlockPart(1, i)?.bytes)).toBe(hex(b.parts.getPart(i)?.bytes));
    const loaded = store.loadBlock(1);
    expect(loaded?.data.txs.length).toBe(2);
    expect(loaded && hex(encodeBlock(loaded))).toBe(hex(encodeBlock(b.block)));
    expect(store.loadBlockMeta(1)?.blockSize).toBe(encodeBlock(b.block).length);
  });

  test("behavior: the first block may be above 1 (initial height)", async () => {
    const { store } = await openStore();
    const chain = makeTestChain(12, 10);
    await saveAll(store, chain);
    expect(store.base()).toBe(10);
    expect(store.height()).toBe(12);
    expect(store.loadBlockCommit(10)).toBeDefined();
    expect(store.loadBlock(9)).toBeUndefined();
  });

  test("error: blocks must be contiguous", async () => {
    const { store } = await openStore();
    const chain = makeTestChain(3);
    await store.saveBlock(at(chain, 0).block, at(chain, 0).parts, at(chain, 0).seenCommit);
    const third = at(chain, 2);
    await expect(
      store.saveBlock(third.block, third.parts, third.seenCommit),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[NonContiguousBlockError: BlockStore can only save contiguous blocks. Wanted 2, got 3]`,
    );
    await expect(store.saveBlock(third.block, third.parts, third.seenCommit)).rejects.toBeInstanceOf(
      NonContiguousBlockError,
    );
    expect(store.height()).toBe(1);
    // Saves issued together are applied in order.
    await Promise.all([at(chain, 1), at(chain, 2)].map((b) => store.saveBlock(b.block, b.parts, b.seenCommit)));
    expect(store.height()).toBe(3);
  });

  test("behavior: reopening keeps every block and the base/height", async () => {
    const { kv, store, dir } = await openStore();
    const chain = makeTestChain(5);
    await saveAll(store, chain);
    await kv.close();
    stores.splice(stores.indexOf(kv), 1);
    const again = await openStore(dir);
    expect(again.store.base()).toBe(1);
    expect(again.store.height()).toBe(5);
    for (const b of chain) {
      const loaded = again.store.loadBlock(b.block.header.height);
      expect(loaded && hex(encodeBlock(loaded))).toBe(hex(encodeBlock(b.block)));
    }
  });

  test("behavior: pruneBlocks removes blocks below the retain height", async () => {
    const { kv, store, dir } = await openStore();
    const chain = makeTestChain(10);
    await saveAll(store, chain);
    expect(store.loadBlock(2)).toBeDefined();
    expect(store.pruneBlocks(1)).toBe(0);
    expect(store.pruneBlocks(4)).toBe(3);
    // Visible at once, before the deletion is written.
    expect(store.base()).toBe(4);
    expect(store.loadBlock(2)).toBeUndefined();
    expect(store.loadBlockByHash(at(chain, 1).id.hash)).toBeUndefined();
    await store.flush();
    expect(store.pruneBlocks(4)).toBe(0);
    for (let h = 1; h < 4; h++) {
      expect(store.loadBlockMeta(h)).toBeUndefined();
      expect(store.loadBlockPart(h, 0)).toBeUndefined();
      expect(store.loadBlockCommit(h)).toBeUndefined();
      expect(store.loadSeenCommit(h)).toBeUndefined();
    }
    expect(store.loadBlock(4)?.header.height).toBe(4);
    expect(store.loadBlockCommit(4)).toBeDefined();
    // Saving continues on top; the pruned keys are gone from disk too.
    const next = makeTestBlock(11, chain[9]);
    await store.saveBlock(next.block, next.parts, next.seenCommit);
    await kv.close();
    stores.splice(stores.indexOf(kv), 1);
    const again = await openStore(dir);
    expect(again.store.base()).toBe(4);
    expect(again.store.height()).toBe(11);
    expect(again.store.size()).toBe(8);
    const raw = again.kv.table("blockstore");
    expect([...raw.range({ prefix: Uint8Array.of(0x02) })].length).toBe(8); // parts of 4..11
    expect([...raw.range({ prefix: Uint8Array.of(0x05) })].length).toBe(8); // hash index
  });

  test("behavior: pruneBlocks keeps headers and commits evidence may still need, then drops them", async () => {
    const { kv, store, dir } = await openStore();
    const chain = makeTestChain(12);
    await saveAll(store, chain);
    // Heights 3 and up are still within the evidence age: their meta and canonical commit stay.
    expect(store.pruneBlocks(6, (h) => h >= 3)).toBe(5);
    expect(store.base()).toBe(6);
    expect(store.headerBase()).toBe(3);
    await store.flush();
    for (let h = 1; h < 3; h++) expect(store.loadBlockMeta(h)).toBeUndefined();
    for (let h = 3; h < 6; h++) {
      expect(store.loadBlock(h)).toBeUndefined();
      expect(store.loadBlockPart(h, 0)).toBeUndefined();
      expect(store.loadSeenCommit(h)).toBeUndefined();
      expect(store.loadBlockByHash(at(chain, h - 1).id.hash)).toBeUndefined();
      expect(store.loadBlockMeta(h)?.header.height).toBe(h);
      expect(store.loadBlockCommit(h)?.height).toBe(h);
    }
    // Reopened, the header base is read back.
    await kv.close();
    stores.splice(stores.indexOf(kv), 1);
    const again = await openStore(dir);
    expect(again.store.headerBase()).toBe(3);
    // A later prune drops the kept headers that expired meanwhile (not only those of the new range).
    expect(again.store.pruneBlocks(9, (h) => h >= 8)).toBe(3);
    await again.store.flush();
    expect(again.store.headerBase()).toBe(8);
    for (let h = 3; h < 8; h++) expect(again.store.loadBlockMeta(h)).toBeUndefined();
    const raw = again.kv.table("blockstore");
    expect([...raw.range({ prefix: Uint8Array.of(0x01) })].length).toBe(5); // metas of 8..12
    expect([...raw.range({ prefix: Uint8Array.of(0x03) })].length).toBe(4); // commits of 8..11
    expect([...raw.range({ prefix: Uint8Array.of(0x04) })].length).toBe(4); // seen commits of 9..12
    expect([...raw.range({ prefix: Uint8Array.of(0x05) })].length).toBe(4); // hash index of 9..12
  });

  test("error: pruneBlocks outside the stored range", async () => {
    const { store } = await openStore();
    await saveAll(store, makeTestChain(3));
    expect(() => store.pruneBlocks(0)).toThrowErrorMatchingInlineSnapshot(
      `[PruneHeightError: height must be greater than 0]`,
    );
    expect(() => store.pruneBlocks(4)).toThrow(PruneHeightError);
    expect(() => store.pruneBlocks(4)).toThrowErrorMatchingInlineSnapshot(
      `[PruneHeightError: cannot prune beyond the latest height 3]`,
    );
  });

  test("behavior: works on the in-memory store too", async () => {
    const kv = openMemoryKvStore();
    const store = new BlockStore(kv);
    await saveAll(store, makeTestChain(4));
    expect(store.pruneBlocks(3)).toBe(2);
    await store.flush();
    expect(new BlockStore(kv).base()).toBe(3);
    expect(new BlockStore(kv).loadBlock(4)?.header.height).toBe(4);
  });

  test("behavior: kill -9 right after a save resolves loses no saved block", async () => {
    const dir = await tempDir();
    const here = dirname(fileURLToPath(import.meta.url));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(here, "testing", "saveBlocksChild.ts"), dir, "100000"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    let lastSaved = 0;
    const killAt = 40;
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_code, signal) => resolve(signal)),
    );
    let buffered = "";
    child.stdout.on("data", (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        const m = /^saved (\d+)$/.exec(line);
        if (m) lastSaved = Number(m[1]);
      }
      if (lastSaved >= killAt && child.exitCode === null && !child.killed) child.kill("SIGKILL");
    });
    const signal = await exited;
    expect(signal, stderr).toBe("SIGKILL");
    expect(lastSaved).toBeGreaterThanOrEqual(killAt);

    const { store } = await openStore(dir);
    expect(store.base()).toBe(1);
    expect(store.height()).toBeGreaterThanOrEqual(lastSaved);
    for (let h = 1; h <= store.height(); h++) {
      const block = store.loadBlock(h);
      expect(block?.header.height, `block ${h}`).toBe(h);
      expect(block?.data.txs[0]?.length).toBe(3000);
      expect(store.loadSeenCommit(h)?.height).toBe(h);
    }
  });
});
