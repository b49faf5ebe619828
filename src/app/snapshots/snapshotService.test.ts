import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { bytesToUtf8, utf8ToBytes } from "../../util/bytes.js";
import { silentLogger } from "../../util/logger.js";
import { SnapshotService, type SnapshotSource } from "./snapshotService.js";
import type { SnapshotEntry } from "./snapshotStore.js";

// The service both built-in apps use, on a map-backed app: snapshots at the interval, served and
// restored into another app through the four ABCI methods; a failed snapshot does not throw.

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** An app whose state is a map; its app hash is the text "h<height>". */
function mapApp(): SnapshotSource & { state: Map<string, string>; height: number; failEntries: boolean } {
  const app = {
    state: new Map<string, string>(),
    height: 0,
    failEntries: false,
    *entries(): Iterable<SnapshotEntry> {
      if (app.failEntries) throw new Error("disk full");
      for (const [k, v] of [...app.state].sort()) yield { key: utf8ToBytes(k), value: utf8ToBytes(v) };
    },
    clear: async () => {
      app.state.clear();
      app.height = 0;
    },
    write: async (entries: readonly SnapshotEntry[]) => {
      for (const e of entries) app.state.set(bytesToUtf8(e.key), bytesToUtf8(e.value));
    },
    finish: async () => {
      app.height = Number(app.state.get("height") ?? 0);
      return { height: app.height, appHash: utf8ToBytes(`h${app.height}`) };
    },
  };
  return app;
}

async function service(app: SnapshotSource, withSettings = true): Promise<SnapshotService> {
  const dir = await mkdtemp(join(tmpdir(), "cometh-snapsvc-"));
  dirs.push(dir);
  return new SnapshotService(app, {
    dir: join(dir, "snapshots"),
    log: silentLogger(),
    ...(withSettings ? { settings: { interval: 2, keepRecent: 1, chunkBytes: 32 } } : {}),
  });
}

function commit(app: ReturnType<typeof mapApp>, svc: SnapshotService, height: number): void {
  app.height = height;
  app.state.set("height", String(height));
  app.state.set(`key${height}`, `value${height}`.repeat(3));
  svc.afterCommit(height, utf8ToBytes(`h${height}`));
}

describe("SnapshotService", () => {
  test("behavior: snapshots at multiples of the interval, the latest kept, served and restored chunk by chunk", async () => {
    const source = mapApp();
    const svc = await service(source);
    for (let h = 1; h <= 5; h++) commit(source, svc, h);
    const snapshots = await svc.listSnapshots();
    expect(snapshots.map((s) => s.height)).toEqual([4]);
    const [s] = snapshots;
    if (s === undefined) throw new Error("no snapshot");
    expect(s.chunks).toBeGreaterThan(1);

    const target = mapApp();
    const restoring = await service(target, false);
    expect(await restoring.listSnapshots()).toEqual([]);
    expect(await restoring.offerSnapshot({ snapshot: s, appHash: utf8ToBytes("h4") })).toBe("accept");
    for (let index = 0; index < s.chunks; index++) {
      const chunk = await svc.loadSnapshotChunk({ height: s.height, format: s.format, chunk: index });
      expect((await restoring.applySnapshotChunk({ index, chunk, sender: "peer" })).result).toBe("accept");
    }
    expect(target.height).toBe(4);
    expect([...target.state].sort()).toEqual(
      [...source.state]
        .filter(([k]) => k !== "key5")
        .map(([k, v]) => (k === "height" ? [k, "4"] : [k, v]))
        .sort(),
    );
    // A chunk this node does not have is empty (the reactor answers missing = true).
    expect(await svc.loadSnapshotChunk({ height: 2, format: 1, chunk: 0 })).toHaveLength(0);
  });

  test("error: a snapshot that cannot be read is logged and skipped, the next one is taken", async () => {
    const source = mapApp();
    const svc = await service(source);
    source.failEntries = true;
    expect(() => commit(source, svc, 2)).not.toThrow();
    expect(await svc.listSnapshots()).toEqual([]);
    source.failEntries = false;
    commit(source, svc, 4);
    expect((await svc.listSnapshots()).map((s) => s.height)).toEqual([4]);
  });
});
