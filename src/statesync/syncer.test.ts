import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { KvStoreApplication } from "../app/kvstore/index.js";
import { openMemoryKvStore } from "../store/index.js";
import { type ChainState, type Commit, defaultConsensusParams, type Snapshot } from "../types/index.js";
import { utf8ToBytes } from "../util/bytes.js";
import { silentLogger } from "../util/logger.js";
import { NoSnapshotsError, StatesyncVerifyError } from "./errors.js";
import type { StateProvider } from "./stateProvider.js";
import { Syncer } from "./syncer.js";

// The syncer against real kvstore apps (one takes the snapshot, an empty one restores it) and a
// state provider that answers the source app's hash: what the light client would verify.

const log = silentLogger();
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function kvApp(snapshots?: { interval: number; keepRecent: number; chunkBytes: number }) {
  const dir = await mkdtemp(join(tmpdir(), "cometh-syncer-"));
  dirs.push(dir);
  const app = KvStoreApplication.open(openMemoryKvStore(), {
    log,
    ...(snapshots === undefined ? {} : { snapshots }),
    snapshotDir: join(dir, "snapshots"),
  });
  await app.initChain({
    time: 0n,
    chainId: "test-chain",
    consensusParams: defaultConsensusParams(),
    validators: [{ pubKey: { type: "ed25519", bytes: new Uint8Array(32).fill(1) }, power: 10n }],
    appStateBytes: new Uint8Array(),
    initialHeight: 1,
  });
  return app;
}

/** A source app at height 4 with a snapshot there, in several chunks. */
async function sourceWithSnapshot(): Promise<{ app: KvStoreApplication; snapshot: Snapshot; appHash: Uint8Array }> {
  const app = await kvApp({ interval: 4, keepRecent: 1, chunkBytes: 64 });
  for (let h = 1; h <= 4; h++) {
    const txs = Array.from({ length: 5 }, (_, i) => utf8ToBytes(`key${h}-${i}=value${h}-${i}`));
    await app.finalizeBlock({
      txs,
      decidedLastCommit: { round: 0, votes: [] },
      misbehavior: [],
      hash: new Uint8Array(32),
      height: h,
      time: 0n,
      nextValidatorsHash: new Uint8Array(32),
      proposerAddress: new Uint8Array(20),
    } as unknown as Parameters<KvStoreApplication["finalizeBlock"]>[0]);
    await app.commit();
  }
  const [snapshot] = await app.listSnapshots();
  if (snapshot === undefined) throw new Error("no snapshot");
  return { app, snapshot, appHash: (await app.info()).lastBlockAppHash };
}

function provider(appHash: Uint8Array, appVersion = 1n): StateProvider {
  return {
    appHash: async () => appHash,
    commit: async () => ({ height: 4 }) as Commit,
    state: async (height) => ({ lastBlockHeight: height, appHash, appVersion }) as ChainState,
  };
}

describe("syncer", () => {
  test("behavior: a corrupt chunk is refused, its sender rejected, and the chunk fetched from the other peer", async () => {
    const { app: source, snapshot, appHash } = await sourceWithSnapshot();
    expect(snapshot.chunks).toBeGreaterThan(2);
    const target = await kvApp();
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
    const target = await kvApp();
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
    const { app: source, snapshot, appHash } = await sourceWithSnapshot();
    const target = await kvApp();
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
