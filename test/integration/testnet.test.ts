import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseNetAddress } from "../../src/p2p/index.js";
import { createTestSwitch, RecordingReactor, testNodeInfo, testNodeKey } from "../../src/p2p/testing/testSwitches.js";
import { loadPrivValidatorKey } from "../../src/privval/index.js";
import { encodeConsensusMessage } from "../../src/reactors/index.js";
import { SIGNED_MSG_TYPE, signBytes, type Vote, voteSignBytes } from "../../src/types/index.js";
import { bytesToHexUpper } from "../../src/util/bytes.js";
import { rpcGet } from "./testNode.js";
import { makeTestnet, type Testnet, type TestnetProcess } from "./testnetHarness.js";

// Four validators as four processes on loopback (kvstore app, timeout_commit 50 ms). The tests run in
// order on one network: each leaves every node running again.

interface DumpPeer {
  node_address: string;
  peer_state: { round_state: { height: string; round: string; step: number } };
}

async function maxHeight(nodes: readonly TestnetProcess[]): Promise<number> {
  return Math.max(...(await Promise.all(nodes.filter((n) => n.running).map((n) => n.height()))));
}

/** The block hashes a node has from `from` to `to` (`blockchain`: its 20 block metas a call). */
async function blockHashes(n: TestnetProcess, from: number, to: number): Promise<Map<number, string>> {
  const r = await rpcGet<{ block_metas: { header: { height: string }; block_id: { hash: string } }[] }>(
    n.rpcUrl,
    "blockchain",
    { minHeight: String(from), maxHeight: String(to) },
  );
  return new Map(r.block_metas.map((m) => [Number(m.header.height), m.block_id.hash]));
}

/**
 * Every running node has the same block hash at every height from 1 to `to`, read 20 heights a call
 * (a call per height and node made the late checks, to height ~300, a few seconds each).
 */
async function expectSameChain(nodes: readonly TestnetProcess[], to: number): Promise<void> {
  for (let from = 1; from <= to; from += 20) {
    const upTo = Math.min(to, from + 19);
    const byNode = await Promise.all(nodes.map((n) => blockHashes(n, from, upTo)));
    for (let h = from; h <= upTo; h++) {
      const hashes = byNode.map((m) => m.get(h) ?? "none");
      expect(hashes, `height ${h}`).not.toContain("none");
      expect(new Set(hashes).size, `height ${h}: ${hashes.join(" ")}`).toBe(1);
    }
  }
}

/** Polls the node's output for `pattern` (bounded): block sync logs its hand-over to consensus at its next check. */
async function waitForOutput(n: TestnetProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = pattern.exec(n.output());
    if (m !== null) return m;
    if (Date.now() > deadline)
      throw new Error(`${n.node.name}: no ${pattern} in ${timeoutMs} ms\n${n.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * How long node3 stays offline in the catch-up test. 40, not 100: the catch-up takes the same path
 * (status requests, blocks asked of the three peers, applied two at a time, the hand-over to
 * consensus); the 60 further blocks cost ~10 s of `npm test` for no other check. The pool's request
 * window (20 per peer, refilled as blocks arrive) has its own tests (src/blocksync/blockPool.test.ts).
 */
const OFFLINE_BLOCKS = 40;

/** CometBFT's RoundStepPrevote and RoundStepPrecommit (`height/round/step` in consensus_state). */
const PREVOTE_STEP = 4;
const PRECOMMIT_STEP = 6;

interface RoundStateNow {
  height: number;
  round: number;
  step: number;
  /** Voting power that prevoted / precommitted in the current round. */
  prevotes: number;
  precommits: number;
}

async function roundState(n: TestnetProcess): Promise<RoundStateNow> {
  const cs = await rpcGet<{
    round_state: {
      "height/round/step": string;
      height_vote_set: { round: number; prevotes_bit_array: string; precommits_bit_array: string }[];
    };
  }>(n.rpcUrl, "consensus_state");
  const [height, round, step] = cs.round_state["height/round/step"].split("/").map(Number) as [number, number, number];
  const votes = cs.round_state.height_vote_set.find((v) => Number(v.round) === round);
  // `BA{4:xx__} 2/4 = 0.50`: the power that voted.
  const power = (bits: string | undefined) => Number(/ (\d+)\/\d+ = /.exec(bits ?? "")?.[1] ?? 0);
  return {
    height,
    round,
    step,
    prevotes: power(votes?.prevotes_bit_array),
    precommits: power(votes?.precommits_bit_array),
  };
}

/**
 * Polls until every node of `nodes` is at one height, in the prevote step of its round with the
 * prevotes of exactly `nodes.length` of the four validators (power 1 each): what a network without
 * two thirds of its power comes to. Or, when a killed validator's prevote of the round had arrived
 * (a polka of three), in the precommit step with exactly `nodes.length` precommits: no two thirds
 * of any precommit, so no precommit timeout either. Bounded.
 */
async function untilStuck(nodes: readonly TestnetProcess[], timeoutMs = 30_000): Promise<RoundStateNow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(nodes.map(roundState));
    const first = states[0] as RoundStateNow;
    const stuck = states.every(
      (s) =>
        s.height === first.height &&
        ((s.step === PREVOTE_STEP && s.prevotes === nodes.length) ||
          (s.step === PRECOMMIT_STEP && s.precommits === nodes.length)),
    );
    if (stuck) return first;
    if (Date.now() > deadline) throw new Error(`not stuck in ${timeoutMs} ms: ${JSON.stringify(states)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a four-validator network on loopback", () => {
  let net: Testnet;

  beforeAll(async () => {
    net = await makeTestnet(4, { "consensus.timeout_commit": "50ms" });
    await Promise.all(net.nodes.map((n) => n.start()));
  }, 60_000);
  afterAll(async () => {
    await net?.close();
  });

  test("behavior: four validators commit 20 blocks with the same hash at every height on every node", async () => {
    await Promise.all(net.nodes.map((n) => n.waitForHeight(20, 90_000)));
    await expectSameChain(net.nodes, 20);
    // Every validator signed some of the last commits (they are all really participating).
    const commit = await rpcGet<{ signed_header: { commit: { signatures: { block_id_flag: number }[] } } }>(
      net.nodes[0]?.rpcUrl ?? "",
      "commit",
      { height: "20" },
    );
    expect(commit.signed_header.commit.signatures).toHaveLength(4);
  }, 120_000);

  test("behavior: net_info and dump_consensus_state list the three other nodes with advancing round states", async () => {
    const before = new Map<string, number>();
    for (const n of net.nodes) {
      const info = await rpcGet<{ n_peers: string; peers: { node_info: { id: string } }[]; listening: boolean }>(
        n.rpcUrl,
        "net_info",
      );
      expect(info.listening).toBe(true);
      expect(info.n_peers).toBe("3");
      expect(info.peers.map((p) => p.node_info.id).sort()).toEqual(
        net.nodes
          .filter((o) => o !== n)
          .map((o) => o.node.nodeId)
          .sort(),
      );
      const dump = await rpcGet<{ peers: DumpPeer[] }>(n.rpcUrl, "dump_consensus_state");
      expect(dump.peers).toHaveLength(3);
      for (const p of dump.peers) {
        const id = p.node_address.split("@")[0] ?? "";
        expect(net.nodes.filter((o) => o !== n).map((o) => o.node.nodeId)).toContain(id);
        before.set(`${n.node.name}/${id}`, Number(p.peer_state.round_state.height));
      }
    }
    const target = (await maxHeight(net.nodes)) + 3;
    await Promise.all(net.nodes.map((n) => n.waitForHeight(target)));
    for (const n of net.nodes) {
      const dump = await rpcGet<{ peers: DumpPeer[] }>(n.rpcUrl, "dump_consensus_state");
      for (const p of dump.peers) {
        const id = p.node_address.split("@")[0] ?? "";
        expect(Number(p.peer_state.round_state.height)).toBeGreaterThan(before.get(`${n.node.name}/${id}`) ?? 0);
      }
    }
  }, 60_000);

  test("behavior: with one of four killed the others keep committing; restarted, it catches up", async () => {
    const [a, b, c, d] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    await d.kill();
    const h = await maxHeight([a, b, c]);
    await Promise.all([a, b, c].map((n) => n.waitForHeight(h + 5)));
    await d.start();
    const target = (await maxHeight([a, b, c])) + 2;
    await d.waitForHeight(target, 60_000);
    await expectSameChain([a, d], target);
    const synced = await waitForOutput(d, /caught up: switching to consensus.*blocksSynced[^0-9]*(\d+)/);
    expect(Number(synced[1]), "caught up by block sync").toBeGreaterThan(0);
  }, 120_000);

  test("behavior: with two of four killed commits stop; restarted, they resume with no fork", async () => {
    const [a, b, c, d] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    const before = await maxHeight([a, b]);
    await Promise.all([c.kill(), d.kill()]);
    // A block already decided may still land; after that nothing can be committed without 2/3: both
    // live validators come to one height, prevote there and wait in the prevote step for votes that
    // cannot come (2 of 4: no polka, so no precommit and no later round).
    const stalled = await untilStuck([a, b]);
    expect(stalled.height).toBeLessThanOrEqual(before + 2);
    for (const n of [a, b]) {
      expect(await n.height()).toBe(stalled.height - 1);
      const again = await roundState(n);
      expect(again.height).toBe(stalled.height);
      expect(again.step).toBe(stalled.step);
      expect(again.precommits).toBe(stalled.step === PREVOTE_STEP ? 0 : stalled.precommits);
    }
    await Promise.all([c.start(), d.start()]);
    const target = (await maxHeight([a, b])) + 3;
    await Promise.all(net.nodes.map((n) => n.waitForHeight(target, 90_000)));
    await expectSameChain(net.nodes, target);
  }, 150_000);

  test("behavior: a validator that double-signs produces evidence that lands in a block", async () => {
    const [a, , , d] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    const key = loadPrivValidatorKey(join(d.node.home, "config", "priv_validator_key.json"));
    // The double-signing harness: a p2p peer that speaks only the consensus channels and sends votes
    // signed with a real validator's key (read from its home) for two different blocks.
    const nodeKey = testNodeKey();
    const signer = new RecordingReactor("double-signer", [0x20, 0x21, 0x22, 0x23]);
    const sw = createTestSwitch({ nodeKey, nodeInfo: { ...testNodeInfo(nodeKey.id), network: net.chainId } });
    sw.addReactor(signer);
    await sw.start();
    try {
      const peer = await sw.dialPeerWithAddress(parseNetAddress(`${a.node.nodeId}@127.0.0.1:${a.node.p2pPort}`));
      const startHeight = await a.height();
      // The set does not change before the evidence: the index is read once, so that the votes go out
      // right after the height is read (with 50 ms blocks the height moves on quickly, and prevotes
      // for a height already decided are dropped without evidence).
      const set = await rpcGet<{ validators: { address: string }[] }>(a.rpcUrl, "validators", {
        height: String(startHeight),
      });
      const index = set.validators.findIndex((v) => v.address === bytesToHexUpper(key.address));
      let found: { height: number; evidence: unknown[] } | undefined;
      /** The blocks up to this height have been read and carry no evidence. */
      let checked = startHeight - 1;
      for (let attempt = 0; attempt < 20 && found === undefined; attempt++) {
        // Prevotes for the height and round node0 is deciding now, for two different blocks.
        const cs = await rpcGet<{ round_state: { "height/round/step": string } }>(a.rpcUrl, "consensus_state");
        const [h, r] = cs.round_state["height/round/step"].split("/").map(Number) as [number, number];
        for (const _ of [0, 1]) {
          const vote: Vote = {
            type: SIGNED_MSG_TYPE.prevote,
            height: h,
            round: r,
            blockId: { hash: randomBytes(32), partSetHeader: { total: 1, hash: randomBytes(32) } },
            timestamp: BigInt(Date.now()) * 1_000_000n,
            validatorAddress: key.address,
            validatorIndex: index,
            signature: new Uint8Array(0),
            extension: new Uint8Array(0),
            extensionSignature: new Uint8Array(0),
          };
          vote.signature = signBytes(key.privKey, voteSignBytes(net.chainId, vote));
          await peer.send(0x22, encodeConsensusMessage({ kind: "vote", vote }));
        }
        // The evidence enters node0's pool when height h commits and is proposed in a following
        // block (node0 proposes at least once in four heights, the others have it by gossip). No
        // evidence by h + 5: the votes came after h was decided, so vote again (a second evidence
        // against the same validator changes nothing: the app sets its power to 1 − 1 again).
        const deadline = Date.now() + 30_000;
        while (found === undefined && Date.now() < deadline) {
          const top = await a.height();
          while (checked < top && found === undefined) {
            checked++;
            const b = await rpcGet<{ block: { evidence: { evidence: unknown[] } } }>(a.rpcUrl, "block", {
              height: String(checked),
            });
            if (b.block.evidence.evidence.length > 0) found = { height: checked, evidence: b.block.evidence.evidence };
          }
          if (found !== undefined || top >= h + 5) break;
          await new Promise((res) => setTimeout(res, 100));
        }
      }
      expect(found, "no block carried the evidence").toBeDefined();
      const ev = (found as { evidence: { type: string; value: { vote_a: { validator_address: string } } }[] })
        .evidence[0];
      expect(ev?.type).toBe("tendermint/DuplicateVoteEvidence");
      expect(ev?.value.vote_a.validator_address).toBe(bytesToHexUpper(key.address));
      // Every node committed the same block with it.
      const height = (found as { height: number }).height;
      await Promise.all(net.nodes.map((n) => n.waitForHeight(height + 2)));
      await expectSameChain(net.nodes, height);
      // The app saw the misbehavior: the kvstore app lowers the validator's power by one (1 → 0: removed at H+2).
      const vals = await rpcGet<{ validators: { address: string }[] }>(a.rpcUrl, "validators", {
        height: String(height + 2),
      });
      expect(vals.validators.map((v) => v.address)).not.toContain(bytesToHexUpper(key.address));
    } finally {
      await sw.stop();
    }
  }, 120_000);

  test("behavior: a kvstore val= tx changes a validator's power at H+2 on every node", async () => {
    // node1: node3 lost its power to the double-sign test (the kvstore app lowers a misbehaving validator's power).
    const [a, b] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    const key = loadPrivValidatorKey(join(b.node.home, "config", "priv_validator_key.json"));
    const tx = `val=ed25519!${Buffer.from(key.pubKey.bytes).toString("base64")}!3`;
    const res = await rpcGet<{ height: string; tx_result: { code: number } }>(a.rpcUrl, "broadcast_tx_commit", {
      tx: JSON.stringify(tx),
    });
    expect(res.tx_result.code).toBe(0);
    const h = Number(res.height);
    const results = await rpcGet<{ validator_updates: { power: string }[] | null }>(a.rpcUrl, "block_results", {
      height: String(h),
    });
    expect(results.validator_updates?.map((u) => u.power)).toEqual(["3"]);
    await Promise.all(net.nodes.map((n) => n.waitForHeight(h + 2)));
    const address = bytesToHexUpper(key.address);
    for (const n of net.nodes) {
      const powerAt = async (height: number) => {
        const v = await rpcGet<{ validators: { address: string; voting_power: string }[] }>(n.rpcUrl, "validators", {
          height: String(height),
        });
        return v.validators.find((x) => x.address === address)?.voting_power;
      };
      expect(await powerAt(h + 1)).toBe("1");
      expect(await powerAt(h + 2)).toBe("3");
    }
    // The network keeps committing with the new set.
    await Promise.all(net.nodes.map((n) => n.waitForHeight(h + 5)));
    await expectSameChain(net.nodes, h + 5);
  }, 60_000);

  test(`behavior: a node offline for ${OFFLINE_BLOCKS} blocks catches up by block sync`, async () => {
    // Last: node3 is no longer a validator (the double-sign test took its power), so the three
    // validators commit the blocks at full pace (no height waits out a dead proposer's
    // timeout_propose); a validator catching up by block sync is the one-of-four test's.
    const [a, b, c, d] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    await d.stop();
    const from = await maxHeight([a, b, c]);
    await Promise.all([a, b, c].map((n) => n.waitForHeight(from + OFFLINE_BLOCKS, 120_000)));
    await d.start();
    const target = await maxHeight([a, b, c]);
    await d.waitForHeight(target, 90_000);
    await expectSameChain([a, d], target);
    // Block sync hands over to consensus at its next check (each second, as CometBFT's
    // switchToConsensusTicker) after it has the peers' height: catching_up turns false then.
    const deadline = Date.now() + 30_000;
    let catchingUp = true;
    while (catchingUp && Date.now() < deadline) {
      const status = await rpcGet<{ sync_info: { catching_up: boolean } }>(d.rpcUrl, "status");
      catchingUp = status.sync_info.catching_up;
      if (catchingUp) await new Promise((r) => setTimeout(r, 50));
    }
    expect(catchingUp, "catching_up after 30 s").toBe(false);
    // It was block sync (not consensus catch-up) that brought it back.
    // Its log line reaches our pipe on its own schedule (the RPC can answer first): wait for it.
    const logged = /caught up: switching to consensus.*blocksSynced[^0-9]*(\d+)/;
    const logDeadline = Date.now() + 10_000;
    while (!logged.test(d.output()) && Date.now() < logDeadline) await new Promise((r) => setTimeout(r, 50));
    const synced = logged.exec(d.output());
    expect(synced, d.output().slice(-3000)).not.toBeNull();
    expect(Number(synced?.[1])).toBeGreaterThanOrEqual(OFFLINE_BLOCKS - 10);
  }, 300_000);
});
