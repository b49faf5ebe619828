import { afterEach, describe, expect, test } from "vitest";
import { utf8ToBytes } from "../util/bytes.js";
import { silentLogger } from "../util/logger.js";
import { NoSnapshotsError, StatesyncVerifyError } from "./errors.js";
import { Syncer } from "./syncer.js";
import { fixedStateProvider as provider, SnapshotTestApps } from "./testing.js";

// The syncer against real kvstore apps (one takes the snapshot, an empty one restores it) and a
// state provider that answers the source app's hash: what the light client would verify.

const log = silentLogger();
const apps = new SnapshotTestApps();
afterEach(() => apps.cleanup());

describe("syncer", () => {
  test("behavior: a corrupt chunk is refused, its sender rejected, and the chunk fetched from the other peer", async () => {
    const { app: source, snapshot, appHash } = await apps.sourceWithSnapshot();
    expect(snapshot.chunks).toBeGreaterThan(2);
    const target = await apps.kvApp();
    const asked: { peer: string; index: number }[] = [];
    let corrupted = false;
    const syncer: Syncer = new Syncer({
      app: target,
      provider: provider(appHash),
      log,
      options: { chunkFetchers: 2, chunkRequestTimeoutMs: 60_000, maxEmptyDiscoveries: 1 },
      requestChunk: (peer, s, index) => {
        asked.push({ peer, index });
        void source.loadSnapshotChunk({ height: s.height, format: s.format, chunk: index }).then((chunk) => {
          // The first peer asked for chunk 1 serves it damaged.
          let bytes = chunk;
          if (index === 1 && !corrupted) {
            corrupted = true;
            bytes = Uint8Array.from(chunk);
            bytes[0] = (bytes[0] as number) ^ 0xff;
          }
          syncer.addChunk({ height: s.height, format: s.format, index, chunk: bytes, sender: peer });
        });
      },
    });
    syncer.addSnapshot("peer-a", snapshot);
    syncer.addSnapshot("peer-b", snapshot);
    const { state } = await syncer.syncAny(0, () => {});
    expect(state.lastBlockHeight).toBe(4);
    const forOne = asked.filter((a) => a.index === 1);
    expect(forOne).toHaveLength(2);
    expect(forOne[1]?.peer).not.toBe(forOne[0]?.peer);
    expect(syncer.pool.peersOf(syncer.pool.best() ?? ({ key: "" } as never))).not.toContain(forOne[0]?.peer);
    expect(await target.info()).toEqual(await source.info());
    expect((await target.query({ path: "/key", data: utf8ToBytes("key3-2"), height: 0, prove: false })).value).toEqual(
      utf8ToBytes("value3-2"),
    );
  });

  test("error: no snapshot offered ends with NoSnapshotsError", async () => {
    const target = await apps.kvApp();
    const syncer = new Syncer({
      app: target,
      provider: provider(new Uint8Array(8)),
      log,
      options: { maxEmptyDiscoveries: 2 },
      requestChunk: () => {},
    });
    let rediscovered = 0;
    await expect(syncer.syncAny(1, () => rediscovered++)).rejects.toThrow(NoSnapshotsError);
    expect(rediscovered).toBe(1);
  });

  test("error: an app version other than the verified one fails the restore", async () => {
    const { app: source, snapshot, appHash } = await apps.sourceWithSnapshot();
    const target = await apps.kvApp();
    const syncer: Syncer = new Syncer({
      app: target,
      provider: provider(appHash, 7n),
      log,
      options: { maxEmptyDiscoveries: 1 },
      requestChunk: (peer, s, index) => {
        void source
          .loadSnapshotChunk({ height: s.height, format: s.format, chunk: index })
          .then((chunk) => syncer.addChunk({ height: s.height, format: s.format, index, chunk, sender: peer }));
      },
    });
    syncer.addSnapshot("peer-a", snapshot);
    await expect(syncer.syncAny(0, () => {})).rejects.toThrow(
      new StatesyncVerifyError("app version mismatch. Expected: 7, got: 1"),
    );
  });
});
