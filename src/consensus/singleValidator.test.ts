import { afterEach, describe, expect, test } from "vitest";
import { blockIdEquals, generateEd25519PrivKey, headerHash, pubKeyFromPrivKey } from "../types/index.js";
import { bytesToBase64, utf8ToBytes } from "../util/bytes.js";
import { ManualClock } from "../util/clock.js";
import { ROUND_STEP } from "./roundStep.js";
import {
  createTestNode,
  heightOf,
  makeDisk,
  makeTestChain,
  runUntil,
  settle,
  TestSetupError,
  tempDir,
} from "./testing/harness.js";

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

describe("single validator", () => {
  test("behavior: commits heights 1..10 with chained last_block_id and verifying commits", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 10);

    for (let h = 1; h <= 10; h++) {
      const block = node.blockStore.loadBlock(h);
      expect(block, `block ${h}`).toBeDefined();
      if (block === undefined) continue;
      expect(block.header.height).toBe(h);
      if (h > 1) {
        const prevMeta = node.blockStore.loadBlockMeta(h - 1);
        expect(prevMeta).toBeDefined();
        if (prevMeta === undefined) continue;
        expect(blockIdEquals(block.header.lastBlockId, prevMeta.blockId)).toBe(true);
        const vals = node.stateStore.loadValidators(h - 1);
        expect(vals).toBeDefined();
        vals?.verifyCommit(chain.genesis.chainId, prevMeta.blockId, h - 1, block.lastCommit);
        expect(block.header.time > prevMeta.header.time).toBe(true);
      } else {
        expect(block.header.time).toBe(chain.genesis.genesisTime);
      }
    }
    const state = node.consensus.chainState();
    expect(state.lastBlockHeight).toBeGreaterThanOrEqual(10);
    const meta = node.blockStore.loadBlockMeta(state.lastBlockHeight);
    expect(meta && headerHash(meta.header)).toEqual(state.lastBlockId.hash);
    await node.consensus.stop();
  });

  test("behavior: a vote whose signing failed is signed again when retrySigning says the signer is back", async () => {
    const { clock, chain, disk } = setup();
    let away = false;
    const node = await createTestNode({
      disk,
      genesis: chain.genesis,
      clock,
      // A remote signer that goes away: every request fails until it is back.
      wrapSigner: (s) => ({
        pubKey: () => s.pubKey(),
        address: () => s.address(),
        signVote: (c, v) => (away ? Promise.reject(new Error("no remote signer connected")) : s.signVote(c, v)),
        signProposal: (c, p) => (away ? Promise.reject(new Error("no remote signer connected")) : s.signProposal(c, p)),
      }),
    });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 2);
    away = true;
    const atLoss = heightOf(node);
    const stuck = () => runUntil([node.consensus], clock, () => false, { maxMs: 30_000 });
    await expect(stuck()).rejects.toThrow(TestSetupError);
    expect(heightOf(node)).toBeLessThanOrEqual(atLoss + 1);
    // Back, but nobody says so: a lone validator's round waits for a vote it never cast.
    away = false;
    const stalled = heightOf(node);
    await expect(stuck()).rejects.toThrow(TestSetupError);
    expect(heightOf(node)).toBe(stalled);
    node.consensus.retrySigning();
    await runUntil([node.consensus], clock, () => heightOf(node) >= stalled + 2);
    await node.consensus.stop();
  });

  test("behavior: events per committed block come in CometBFT's order", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 1);
    await node.mempool.checkTx(utf8ToBytes("a=1"));
    await node.mempool.checkTx(utf8ToBytes("b=2"));
    await runUntil([node.consensus], clock, () => heightOf(node) >= 3);
    const withTxs = node.blockStore.loadBlock(2)?.data.txs.length ? 2 : 3;
    const types = node.events.log
      .filter((e) => ["NewBlock", "NewBlockHeader", "NewBlockEvents", "Tx", "ValidatorSetUpdates"].includes(e.type))
      .filter(
        (e) =>
          (e.data as { height?: number; block?: { header: { height: number } }; header?: { height: number } })
            .height === withTxs ||
          (e.data as { block?: { header: { height: number } } }).block?.header.height === withTxs ||
          (e.data as { header?: { height: number } }).header?.height === withTxs,
      )
      .map((e) => e.type);
    expect(types).toEqual(["NewBlock", "NewBlockHeader", "NewBlockEvents", "Tx", "Tx"]);
    const steps = node.events
      .types()
      .filter((t) => t === "NewRound" || t === "CompleteProposal" || t === "Vote" || t === "Polka" || t === "Lock");
    expect(steps.slice(0, 6)).toEqual(["NewRound", "CompleteProposal", "Vote", "Polka", "Lock", "Vote"]);
    await node.consensus.stop();
  });

  test("behavior: the round state view at a new height", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 2);
    await settle([node.consensus]);
    const rs = node.consensus.roundStateView();
    expect(rs.height).toBe(3);
    expect(rs.step).toBe(ROUND_STEP.newHeight);
    expect(rs.votes.map((v) => v.round)).toEqual([0]);
    expect(rs.lastCommit?.votes.length).toBe(1);
    expect(rs.lastCommit?.sum).toBe(10n);
    expect(rs.lastValidators.validators.length).toBe(1);
    expect(rs.startTime - rs.commitTime).toBe(1_000_000_000n);
    await node.consensus.stop();
  });

  test("behavior: create_empty_blocks=false waits for a tx, then makes the proof block", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock, options: { createEmptyBlocks: false } });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 1);
    await runUntil([node.consensus], clock, () => false, { maxMs: 5000 }).catch(() => {});
    const stalled = heightOf(node);
    expect(stalled).toBeLessThanOrEqual(2);
    await runUntil([node.consensus], clock, () => false, { maxMs: 30_000 }).catch(() => {});
    expect(heightOf(node)).toBe(stalled);
    expect(node.consensus.roundStateView().step).toBe(ROUND_STEP.newRound);

    await node.mempool.checkTx(utf8ToBytes("k=v"));
    await runUntil([node.consensus], clock, () => heightOf(node) >= stalled + 2);
    expect(node.blockStore.loadBlock(stalled + 1)?.data.txs).toEqual([utf8ToBytes("k=v")]);
    // The app hash changed with that block: one empty block carries it, then the node waits again.
    expect(node.blockStore.loadBlock(stalled + 2)?.data.txs).toEqual([]);
    await runUntil([node.consensus], clock, () => false, { maxMs: 30_000 }).catch(() => {});
    expect(heightOf(node)).toBe(stalled + 2);
    await node.consensus.stop();
  });

  test("behavior: create_empty_blocks_interval makes an empty block after the interval", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({
      disk,
      genesis: chain.genesis,
      clock,
      options: { createEmptyBlocks: true, createEmptyBlocksIntervalMs: 10_000 },
    });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => false, { maxMs: 3000 }).catch(() => {});
    const h0 = heightOf(node);
    expect(h0).toBeGreaterThanOrEqual(1);
    await runUntil([node.consensus], clock, () => false, { maxMs: 8000 }).catch(() => {});
    expect(heightOf(node)).toBe(h0);
    await runUntil([node.consensus], clock, () => heightOf(node) > h0, { maxMs: 5000 });
    await node.consensus.stop();
  });

  test("behavior: skip_timeout_commit starts the next height without waiting", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock, options: { skipTimeoutCommit: true } });
    await node.consensus.start();
    clock.advance(1000);
    // No clock movement after the first round: each commit goes straight to the next height.
    await node.consensus.waitForHeight(3);
    await node.consensus.stop();
    expect(heightOf(node)).toBeGreaterThanOrEqual(3);
  });

  test("behavior: a validator update returned at H takes effect at H+2", async () => {
    const { clock, chain, disk } = setup();
    const node = await createTestNode({ disk, genesis: chain.genesis, clock });
    await node.consensus.start();
    await runUntil([node.consensus], clock, () => heightOf(node) >= 2);
    const newKey = pubKeyFromPrivKey(generateEd25519PrivKey(new Uint8Array(32).fill(99)));
    const res = await node.mempool.checkTx(utf8ToBytes(`val=ed25519!${bytesToBase64(newKey.bytes)}!1`));
    expect(res.code).toBe(0);
    await runUntil([node.consensus], clock, () => node.events.log.some((e) => e.type === "ValidatorSetUpdates"));
    const h = node.events.log.find(
      (e) => e.type === "NewBlock" && (e.data as { block: { data: { txs: unknown[] } } }).block.data.txs.length > 0,
    );
    if (h === undefined) throw new TestSetupError("no block with the update tx");
    const updateHeight = (h.data as { block: { header: { height: number } } }).block.header.height;
    await runUntil([node.consensus], clock, () => heightOf(node) >= updateHeight + 3);
    expect(node.stateStore.loadValidators(updateHeight + 1)?.size()).toBe(1);
    expect(node.stateStore.loadValidators(updateHeight + 2)?.size()).toBe(2);
    // Block H+3 carries the commit of H+2, signed by a 2-validator set where the new one is absent.
    const commit = node.blockStore.loadBlock(updateHeight + 3)?.lastCommit;
    expect(commit?.signatures.map((s) => s.blockIdFlag).sort()).toEqual([1, 2]);
    expect(node.consensus.roundStateView().validators.validators).toHaveLength(2);
    await node.consensus.stop();
  });
});
