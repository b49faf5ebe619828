import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { rpcGet } from "./testNode.js";
import { makeTestnet, type Testnet, type TestnetProcess } from "./testnetHarness.js";

// Four validators as four processes on loopback (kvstore app, timeout_commit 100 ms). The tests run in
// order on one network: each leaves every node running again.

interface DumpPeer {
  node_address: string;
  peer_state: { round_state: { height: string; round: string; step: number } };
}

async function maxHeight(nodes: readonly TestnetProcess[]): Promise<number> {
  return Math.max(...(await Promise.all(nodes.filter((n) => n.running).map((n) => n.height()))));
}

/** Every running node has the same block hash at every height from 1 to `to`. */
async function expectSameChain(nodes: readonly TestnetProcess[], to: number): Promise<void> {
  for (let h = 1; h <= to; h++) {
    const hashes = await Promise.all(nodes.map((n) => n.blockHash(h)));
    expect(new Set(hashes).size, `height ${h}: ${hashes.join(" ")}`).toBe(1);
  }
}

describe("a four-validator network on loopback", () => {
  let net: Testnet;

  beforeAll(async () => {
    net = await makeTestnet(4);
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
  }, 120_000);

  test("behavior: with two of four killed commits stop; restarted, they resume with no fork", async () => {
    const [a, b, c, d] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    await Promise.all([c.kill(), d.kill()]);
    // A block already decided may still land; after that nothing can be committed without 2/3.
    await new Promise((r) => setTimeout(r, 1500));
    const stalled = await maxHeight([a, b]);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await maxHeight([a, b])).toBeLessThanOrEqual(stalled + 1);
    await Promise.all([c.start(), d.start()]);
    const target = (await maxHeight([a, b])) + 3;
    await Promise.all(net.nodes.map((n) => n.waitForHeight(target, 90_000)));
    await expectSameChain(net.nodes, target);
  }, 150_000);

  test("behavior: a node offline for 100 blocks catches up by block sync", async () => {
    const [a, b, c, d] = net.nodes as [TestnetProcess, TestnetProcess, TestnetProcess, TestnetProcess];
    await d.stop();
    const from = await maxHeight([a, b, c]);
    await Promise.all([a, b, c].map((n) => n.waitForHeight(from + 100, 120_000)));
    await d.start();
    const target = await maxHeight([a, b, c]);
    await d.waitForHeight(target, 90_000);
    await expectSameChain([a, d], target);
    const status = await rpcGet<{ sync_info: { catching_up: boolean } }>(d.rpcUrl, "status");
    expect(status.sync_info.catching_up).toBe(false);
  }, 300_000);
});
