import { afterEach, describe, expect, test } from "vitest";
import { MemoryNet } from "../blocksync/testing/memorySwitch.js";
import { silentLogger } from "../util/logger.js";
import { NoSnapshotsError } from "./errors.js";
import { StatesyncReactor } from "./statesyncReactor.js";
import { fixedStateProvider, SnapshotTestApps } from "./testing.js";

// Two reactors on an in-memory network: the source serves its kvstore app's snapshot on 0x60/0x61,
// the target restores it. isSyncing (RPC catching_up and the statesync_syncing metric) is true from
// the start of sync to its end, whatever the outcome.

const log = silentLogger();
const apps = new SnapshotTestApps();
afterEach(() => apps.cleanup());

describe("StatesyncReactor", () => {
  test("behavior: isSyncing is true while a sync restores a peer's snapshot and false once it is done", async () => {
    const { app: source, appHash } = await apps.sourceWithSnapshot();
    const target = await apps.kvApp();
    const net = new MemoryNet();
    const serving = new StatesyncReactor(source, log);
    const syncing = new StatesyncReactor(target, log);
    await net.add("source", serving);
    await net.add("target", syncing);
    net.connect("source", "target");
    expect(syncing.isSyncing()).toBe(false);
    // Discovery rounds until the source's answer is in (delivery is asynchronous): at most 50.
    const done = syncing.sync(fixedStateProvider(appHash), 100, { maxEmptyDiscoveries: 50 });
    expect(syncing.isSyncing()).toBe(true);
    expect(serving.isSyncing()).toBe(false);
    const { state } = await done;
    expect(state.lastBlockHeight).toBe(4);
    expect(syncing.isSyncing()).toBe(false);
    expect(await target.info()).toEqual(await source.info());
  });

  test("error: no peer has a snapshot: sync rejects with NoSnapshotsError and isSyncing goes back to false", async () => {
    const reactor = new StatesyncReactor(await apps.kvApp(), log);
    await new MemoryNet().add("alone", reactor);
    const done = reactor.sync(fixedStateProvider(new Uint8Array(8)), 0);
    expect(reactor.isSyncing()).toBe(true);
    await expect(done).rejects.toThrow(NoSnapshotsError);
    expect(reactor.isSyncing()).toBe(false);
  });
});
