import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { loadGenesis } from "../../src/config/index.js";
import { BlockStore, openKvStore, StateStore } from "../../src/store/index.js";
import {
  type BlockId,
  blockIdEquals,
  commitHash,
  headerHash,
  isZeroBlockId,
  ValidatorSet,
} from "../../src/types/index.js";
import { bytesEqual } from "../../src/util/bytes.js";
import { makeTempHome, rpcGet, runCli, spawnNode, startNodeProcess, waitForHeight } from "./testNode.js";

const FAST = ["--consensus.timeout_commit", "50ms", "--consensus.timeout_propose", "1s"];

describe("node: kill -9 and restart", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await cleanup?.();
  });

  test("behavior: SIGKILL mid-height loses no block, restarts, keeps chaining, never signs twice", async () => {
    const tmp = await makeTempHome();
    cleanup = tmp.cleanup;

    const first = await startNodeProcess(tmp.home, FAST);
    await waitForHeight(first.rpcUrl, 5);
    const before = Number(
      (await rpcGet<{ sync_info: { latest_block_height: string } }>(first.rpcUrl, "status")).sync_info
        .latest_block_height,
    );
    await first.kill();

    const second = await startNodeProcess(tmp.home, FAST);
    const reached = await waitForHeight(second.rpcUrl, before + 5);
    expect(reached).toBeGreaterThanOrEqual(before + 5);
    // A second kill right after restart exercises WAL replay of a height in progress.
    await second.kill();
    const third = await startNodeProcess(tmp.home, FAST);
    await waitForHeight(third.rpcUrl, reached + 3);
    expect(await third.stop()).toBe(0);

    const genesis = loadGenesis(join(tmp.home, "config", "genesis.json"));
    const db = await openKvStore(join(tmp.home, "data", "node.lmdb"));
    try {
      const blocks = new BlockStore(db);
      const states = new StateStore(db);
      const height = blocks.height();
      expect(height).toBeGreaterThanOrEqual(reached + 3);
      expect(blocks.base()).toBe(genesis.initialHeight);
      let prevId: BlockId | undefined;
      for (let h = blocks.base(); h <= height; h++) {
        const block = blocks.loadBlock(h);
        const meta = blocks.loadBlockMeta(h);
        expect(block, `block ${h}`).toBeDefined();
        expect(meta, `meta ${h}`).toBeDefined();
        if (!block || !meta) return;
        expect(block.header.height).toBe(h);
        const hash = headerHash(block.header);
        expect(hash && bytesEqual(hash, meta.blockId.hash)).toBe(true);
        if (h === genesis.initialHeight) {
          expect(isZeroBlockId(block.header.lastBlockId)).toBe(true);
        } else {
          expect(prevId && blockIdEquals(block.header.lastBlockId, prevId)).toBe(true);
          expect(bytesEqual(block.header.lastCommitHash, commitHash(block.lastCommit))).toBe(true);
        }
        // The commit for h (from block h+1, or the seen commit for the tip) verifies against h's validators.
        const commit = h < height ? blocks.loadBlockCommit(h) : blocks.loadSeenCommit(h);
        expect(commit, `commit ${h}`).toBeDefined();
        const vals = states.loadValidators(h) ?? ValidatorSet.empty();
        expect(() => commit && vals.verifyCommit(genesis.chainId, meta.blockId, h, commit)).not.toThrow();
        prevId = meta.blockId;
      }
    } finally {
      await db.close();
    }

    // The signer's last state is at the tip: it never went backwards.
    const pv = JSON.parse(await readFile(join(tmp.home, "data", "priv_validator_state.json"), "utf8")) as {
      height: string;
    };
    expect(Number(pv.height)).toBeGreaterThanOrEqual(reached + 3);
  });

  test("behavior: a second node (or unsafe-reset-all) on a home in use stops at once with the holder's PID; the first runs on and stops cleanly", async () => {
    const tmp = await makeTempHome();
    const first = await startNodeProcess(tmp.home, FAST);
    try {
      await waitForHeight(first.rpcUrl, 2);
      const second = spawnNode([
        "start",
        "--home",
        tmp.home,
        "--rpc.laddr",
        "tcp://127.0.0.1:0",
        "--json-rpc.enable=false",
        "--p2p.laddr",
        "tcp://127.0.0.1:0",
      ]);
      await expect(second.ready).rejects.toThrow(/exited with 1/);
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(
        `ERROR: the data directory ${join(tmp.home, "data")} is in use by another cometh node (process ${first.child.pid}). Stop that node first`,
      );
      // A user error: its message, no stack trace.
      expect(second.output()).not.toContain("    at ");
      // unsafe-reset-all would delete the stores under the running node: refused, nothing removed.
      const reset = await runCli(["unsafe-reset-all", "--home", tmp.home]);
      expect(reset.code).toBe(1);
      expect(reset.stderr).toContain(`is in use by another cometh node (process ${first.child.pid})`);
      expect(reset.stdout).not.toContain("Removed");
      const at = await waitForHeight(first.rpcUrl, 2);
      await waitForHeight(first.rpcUrl, at + 2);
      expect(await first.stop()).toBe(0);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) await first.kill();
      await tmp.cleanup();
    }
  });
});
