// Test support for state sync: real kvstore apps (a source that takes a snapshot, empty targets that
// restore one) in temp directories, and a state provider that answers what the light client would
// verify (the source app's hash).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KvStoreApplication } from "../app/kvstore/index.js";
import { TestSetupError } from "../consensus/testing/harness.js";
import { openMemoryKvStore } from "../store/index.js";
import { type ChainState, type Commit, defaultConsensusParams, type Snapshot } from "../types/index.js";
import { utf8ToBytes } from "../util/bytes.js";
import { silentLogger } from "../util/logger.js";
import type { StateProvider } from "./stateProvider.js";

const log = silentLogger();

/** kvstore apps whose snapshot directories are removed by `cleanup` (call it in afterEach). */
export class SnapshotTestApps {
  readonly #dirs: string[] = [];

  async kvApp(snapshots?: { interval: number; keepRecent: number; chunkBytes: number }): Promise<KvStoreApplication> {
    const dir = await mkdtemp(join(tmpdir(), "cometh-syncer-"));
    this.#dirs.push(dir);
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
  async sourceWithSnapshot(): Promise<{ app: KvStoreApplication; snapshot: Snapshot; appHash: Uint8Array }> {
    const app = await this.kvApp({ interval: 4, keepRecent: 1, chunkBytes: 64 });
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
    if (snapshot === undefined) throw new TestSetupError("the source app took no snapshot at height 4");
    return { app, snapshot, appHash: (await app.info()).lastBlockAppHash };
  }

  async cleanup(): Promise<void> {
    for (const d of this.#dirs.splice(0)) await rm(d, { recursive: true, force: true });
  }
}

/** A state provider for the source's snapshot at height 4: its app hash and app version. */
export function fixedStateProvider(appHash: Uint8Array, appVersion = 1n): StateProvider {
  return {
    appHash: async () => appHash,
    commit: async () => ({ height: 4 }) as Commit,
    state: async (height) => ({ lastBlockHeight: height, appHash, appVersion }) as ChainState,
  };
}
