import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { KvStoreApplication } from "../app/kvstore/index.js";
import { openMemoryKvStore } from "../store/index.js";
import { blockIdEquals, SIGNED_MSG_TYPE } from "../types/index.js";
import { bytesEqual, utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { silentLogger } from "../util/logger.js";
import { BlockExecutor } from "./blockExecutor.js";
import type { FailPoint, FailPointDetail } from "./deps.js";
import { AppBlockHeightTooHighError, WalRepairError } from "./errors.js";
import {
  capturingLogger,
  closeDisk,
  createTestNode,
  heightOf,
  makeDisk,
  makeTestChain,
  type NodeDisk,
  openLmdbDisk,
  runUntil,
  SignLog,
  SimulatedCrash,
  type TestChain,
  type TestNode,
  TestSetupError,
  tempDir,
} from "./testing/harness.js";
import { scanWalFile, Wal } from "./wal.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function setup() {
  const clock = new ManualClock();
  const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  return { clock, chain, disk: makeDisk(dir, chain.privKeys[0]) };
}

/** Blocks 1..n exist, are chained, and their commits verify. */
function expectChain(node: TestNode, chain: TestChain, n: number): void {
  for (let h = 1; h <= n; h++) {
    const block = node.blockStore.loadBlock(h);
    expect(block, `block ${h}`).toBeDefined();
    if (h === 1 || block === undefined) continue;
    const prev = node.blockStore.loadBlockMeta(h - 1);
    expect(prev && blockIdEquals(block.header.lastBlockId, prev.blockId)).toBe(true);
    if (prev)
      node.stateStore.loadValidators(h - 1)?.verifyCommit(chain.genesis.chainId, prev.blockId, h - 1, block.lastCommit);
  }
}

async function crashAndRecover(
  point: FailPoint,
  match: (d: FailPointDetail | undefined) => boolean,
  crashHeight = 3,
): Promise<{ before: TestNode; after: TestNode; signs: SignLog }> {
  const { clock, chain, disk } = setup();
  const signs = new SignLog();
  let crashed = false;
  const before = await createTestNode({
    disk,
    genesis: chain.genesis,
    clock,
    signLog: signs,
    failPoint: (p, d) => {
      if (
        !crashed &&
        p === point &&
        (d?.height ?? before.consensus.roundStateView().height) === crashHeight &&
        match(d)
      ) {
        crashed = true;
        throw new SimulatedCrash(p);
      }
    },
  });
  await before.consensus.start();
  await before.mempool.checkTx(utf8ToBytes("k1=v1"));
  await runUntil([before.consensus], clock, () => before.consensus.haltError() !== undefined, { maxMs: 30_000 });
  expect(before.consensus.haltError()).toBeInstanceOf(SimulatedCrash);
  // kill -9: the process objects are dropped; only the disk (stores, app db, WAL, privval files) stays.
  const after = await createTestNode({ disk, genesis: chain.genesis, clock, signLog: signs });
  await after.consensus.start();
  await after.mempool.checkTx(utf8ToBytes("k2=v2"));
  await runUntil([after.consensus], clock, () => heightOf(after) >= crashHeight + 3);
  expect(after.consensus.haltError()).toBeUndefined();
  expect(signs.conflicts()).toEqual([]);
  expectChain(after, chain, crashHeight + 3);
  const info = await after.app.info();
  expect(info.lastBlockHeight).toBe(heightOf(after));
  expect(bytesEqual(info.lastBlockAppHash, after.consensus.chainState().appHash)).toBe(true);
  return { before, after, signs };
}

const isOwnPrevote = (d: FailPointDetail | undefined) =>
  d?.msg?.kind === "vote" && d.msg.voteType === SIGNED_MSG_TYPE.prevote;
const isOwnPrecommit = (d: FailPointDetail | undefined) =>
  d?.msg?.kind === "vote" && d.msg.voteType === SIGNED_MSG_TYPE.precommit;

describe("crash recovery (WAL replay + handshake)", () => {
  test("behavior: crash after the own prevote is in the WAL", async () => {
    await crashAndRecover("afterOwnMessageWal", isOwnPrevote);
  });

  test("behavior: crash after the own precommit is in the WAL", async () => {
    await crashAndRecover("afterOwnMessageWal", isOwnPrecommit);
  });

  test("behavior: crash after the own proposal is in the WAL (parts not yet)", async () => {
    await crashAndRecover("afterOwnMessageWal", (d) => d?.msg?.kind === "proposal");
  });

  test("behavior: crash after the block is saved, before EndHeight", async () => {
    await crashAndRecover("afterSaveBlock", () => true);
  });

  test("behavior: crash after EndHeight, before ApplyBlock", async () => {
    const { after } = await crashAndRecover("afterEndHeight", () => true);
    expect(after.blockStore.loadBlock(3)).toBeDefined();
  });

  test("behavior: crash after FinalizeBlock, before its response is saved", async () => {
    await crashAndRecover("afterFinalizeBlock", () => true);
  });

  test("behavior: crash after the app commit, before the state is saved", async () => {
    await crashAndRecover("afterAppCommit", () => true);
  });

  test("behavior: crash right after the state is saved", async () => {
    await crashAndRecover("afterStateSave", () => true);
  });
});

/** A kvstore app on its own database that has executed blocks 1..upTo of `source`. */
async function laggingApp(source: TestNode, chain: TestChain, clock: ManualClock, upTo: number) {
  const appDb = openMemoryKvStore();
  const log = silentLogger();
  const app = KvStoreApplication.open(appDb, { log });
  const genesisVals = source.stateStore.loadValidators(1);
  await app.initChain({
    time: chain.genesis.genesisTime,
    chainId: chain.genesis.chainId,
    consensusParams: chain.genesis.consensusParams,
    validators: (genesisVals?.validators ?? []).map((v) => ({ pubKey: v.pubKey, power: v.votingPower })),
    appStateBytes: new Uint8Array(0),
    initialHeight: 1,
  });
  const exec = new BlockExecutor({ app, blockStore: source.blockStore, stateStore: source.stateStore, clock, log });
  for (let h = 1; h <= upTo; h++) {
    const block = source.blockStore.loadBlock(h);
    if (block === undefined) throw new TestSetupError(`missing block ${h}`);
    await exec.execCommitBlock(block, 1);
  }
  return appDb;
}

describe("catch-up replay", () => {
  test("error: the WAL already has EndHeight for the height being decided", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 2);
    await node.consensus.stop();
    const deciding = heightOf(node) + 1;
    const wal = await Wal.open(join(disk.dir, "cs.wal", "wal"), { log: silentLogger() });
    await wal.writeSync({ kind: "endHeight", height: deciding }, clock.nowNs());
    await wal.close();
    const { log, lines } = capturingLogger();
    const restarted = await createTestNode({ disk, genesis: chain.genesis, clock, log });
    await restarted.consensus.start();
    expect(lines).toContain(
      `error on catchup replay; proceeding to start state anyway wal should not contain #ENDHEIGHT ${deciding}`,
    );
    await runUntil([restarted.consensus], clock, () => heightOf(restarted) >= deciding);
    await restarted.consensus.stop();
  });
  /** A chain stopped at height >= 2, and the offset of the first record after the last EndHeight in its WAL. */
  async function stoppedWithRecordsAfterMarker() {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 2);
    await node.consensus.stop();
    const path = join(disk.dir, "cs.wal", "wal");
    const records = scanWalFile(readFileSync(path)).records;
    const lastMarker = records.findLastIndex((r) => r.message.msg.kind === "endHeight");
    const next = records[lastMarker + 1];
    if (next === undefined) throw new TestSetupError("no WAL record after the last EndHeight");
    return { clock, chain, disk, node, path, offset: next.offset };
  }

  test("behavior: a record damaged after the last EndHeight is repaired as CometBFT repairs it, and consensus goes on", async () => {
    const { clock, chain, disk, node, path, offset } = await stoppedWithRecordsAfterMarker();
    const bytes = readFileSync(path);
    bytes[offset] = (bytes[offset] ?? 0) ^ 0xff; // its checksum
    writeFileSync(path, bytes);
    const { log, lines } = capturingLogger();
    const restarted = await createTestNode({ disk, genesis: chain.genesis, clock, log });
    await restarted.consensus.start();
    expect(
      lines.some((l) => l.startsWith("the WAL file is corrupted; attempting repair data has been corrupted")),
    ).toBe(true);
    const repaired = lines.find((l) => l.startsWith(`repaired the consensus WAL ${path}: dropped `));
    expect(repaired).toContain(
      `from offset ${offset} on (record at offset ${offset} fails its checksum); the file as it was is kept in ${path}.CORRUPTED`,
    );
    expect(readFileSync(`${path}.CORRUPTED`)).toEqual(bytes);
    const stoppedAt = heightOf(node);
    await runUntil([restarted.consensus], clock, () => heightOf(restarted) >= stoppedAt + 2);
    expect(restarted.consensus.haltError()).toBeUndefined();
    await restarted.consensus.stop();
  });

  test("error: damage after the last EndHeight in a rotated file survives the repair and stops the start", async () => {
    const { clock, chain, disk, path, offset } = await stoppedWithRecordsAfterMarker();
    const bytes = readFileSync(path);
    bytes[offset] = (bytes[offset] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    // The head rotated after that record: the damage now sits in wal.000, which repair does not touch.
    renameSync(path, `${path}.000`);
    writeFileSync(path, new Uint8Array(0));
    const restarted = await createTestNode({ disk, genesis: chain.genesis, clock, log: silentLogger() });
    const started = restarted.consensus.start();
    await expect(started).rejects.toBeInstanceOf(WalRepairError);
    await expect(started).rejects.toThrow(`the consensus WAL ${path}.000 is corrupted in the records of height`);
    expect(existsSync(`${path}.CORRUPTED`)).toBe(false);
  });
});

describe("restart on real LMDB stores", () => {
  test("behavior: stop, reopen the databases, continue from the stored height", async () => {
    const clock = new ManualClock();
    const chain = makeTestChain(1, clock.nowNs() - 1_000_000_000n);
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const disk1 = await openLmdbDisk(dir, chain.privKeys[0]);
    const first = await createTestNode({ disk: disk1, genesis: chain.genesis, clock });
    await first.consensus.start();
    await first.mempool.checkTx(utf8ToBytes("persist=yes"));
    await runUntil([first.consensus], clock, () => heightOf(first) >= 4);
    await first.consensus.stop();
    const stoppedAt = heightOf(first);
    await closeDisk(disk1);

    const disk2 = await openLmdbDisk(dir, chain.privKeys[0]);
    const second = await createTestNode({ disk: disk2, genesis: chain.genesis, clock });
    expect(heightOf(second)).toBe(stoppedAt);
    await second.consensus.start();
    await runUntil([second.consensus], clock, () => heightOf(second) >= stoppedAt + 3);
    expectChain(second, chain, stoppedAt + 3);
    await second.consensus.stop();
    await closeDisk(disk2);
  });
});

describe("ABCI handshake", () => {
  async function chainAt(height: number) {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await node.mempool.checkTx(utf8ToBytes("a=1"));
    await runUntil([node.consensus], clock, () => heightOf(node) >= height);
    await node.consensus.stop();
    return { clock, chain, disk, node };
  }

  async function restartWithApp(disk: NodeDisk, appDb: NodeDisk["appDb"], chain: TestChain, clock: ManualClock) {
    return createTestNode({ disk: { ...disk, appDb }, genesis: chain.genesis, clock });
  }

  test("behavior: app behind by one block is replayed (app only)", async () => {
    const { clock, chain, disk, node } = await chainAt(4);
    const storeHeight = node.blockStore.height();
    const appDb = await laggingApp(node, chain, clock, storeHeight - 1);
    const restarted = await restartWithApp(disk, appDb, chain, clock);
    const info = await restarted.app.info();
    expect(info.lastBlockHeight).toBe(storeHeight);
    expect(bytesEqual(info.lastBlockAppHash, restarted.consensus.chainState().appHash)).toBe(true);
    await restarted.consensus.start();
    await runUntil([restarted.consensus], clock, () => heightOf(restarted) >= storeHeight + 2);
    await restarted.consensus.stop();
  });

  test("behavior: app behind by several blocks is replayed (app only)", async () => {
    const { clock, chain, disk, node } = await chainAt(6);
    const storeHeight = node.blockStore.height();
    const appDb = await laggingApp(node, chain, clock, 2);
    const restarted = await restartWithApp(disk, appDb, chain, clock);
    expect((await restarted.app.info()).lastBlockHeight).toBe(storeHeight);
    await restarted.consensus.start();
    await runUntil([restarted.consensus], clock, () => heightOf(restarted) >= storeHeight + 1);
    await restarted.consensus.stop();
  });

  test("behavior: a fresh app gets InitChain and every block", async () => {
    const { clock, chain, disk, node } = await chainAt(3);
    const storeHeight = node.blockStore.height();
    const restarted = await restartWithApp(disk, openMemoryKvStore(), chain, clock);
    expect((await restarted.app.info()).lastBlockHeight).toBe(storeHeight);
  });

  test("error: app ahead of the block store", async () => {
    const { clock, chain, disk, node } = await chainAt(3);
    const storeHeight = node.blockStore.height();
    const err = await createTestNode({
      disk,
      genesis: chain.genesis,
      clock,
      wrapApp: (app) => ({
        info: async () => ({ ...(await app.info()), lastBlockHeight: storeHeight + 2 }),
        initChain: (r) => app.initChain(r),
        prepareProposal: (r) => app.prepareProposal(r),
        processProposal: (r) => app.processProposal(r),
        finalizeBlock: (r) => app.finalizeBlock(r),
        commit: () => app.commit(),
      }),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppBlockHeightTooHighError);
    expect((err as Error).message).toBe(`app block height (${storeHeight + 2}) is higher than core (${storeHeight})`);
  });
});
