/**
 * Mixed validator networks: Go CometBFT v0.38 nodes and cometh nodes in one validator set, one
 * genesis, all on the kvstore app. Skips (with the reason in the suite's name) when the Go binary is
 * absent (`COMETBFT_BIN`, default test/interop/bin/cometbft).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BlockMeta,
  blockMetas,
  broadcastTx,
  cometbftMissing,
  commitSigners,
  doubleSign,
  type MixedNetwork,
  type MixedNode,
  makeMixedNetwork,
  p2pAddress,
  peerIds,
  rpcPost,
  validatorPowers,
  waitForTx,
} from "./mixedNetwork.js";

const missing = cometbftMissing();
const suiteName = missing === undefined ? "mixed Go/cometh networks" : `mixed Go/cometh networks (skipped: ${missing})`;
if (missing !== undefined) console.warn(`test/interop/mixed.test.ts is skipped: ${missing}`);

/** Every node's metas of heights 1..to agree with the first node's; returns the first node's. */
async function expectOneChain(nodes: MixedNode[], to: number): Promise<BlockMeta[]> {
  const [first, ...rest] = await Promise.all(nodes.map((n) => blockMetas(n, 1, to)));
  expect(first?.length).toBe(to);
  const reference = first as BlockMeta[];
  for (const [i, metas] of rest.entries()) {
    for (const [h, m] of metas.entries()) {
      const want = reference[h] as BlockMeta;
      if (m.hash !== want.hash) {
        const n = nodes[i + 1] as MixedNode;
        throw new Error(
          `fork at height ${m.height}: ${nodes[0]?.name} has ${want.hash} (app hash ${want.appHash}), ` +
            `${n.name} (${n.kind}) has ${m.hash} (app hash ${m.appHash})`,
        );
      }
    }
    expect(metas.length).toBe(to);
  }
  return reference;
}

async function queryValue(node: MixedNode, key: string): Promise<string> {
  const r = await rpcPost<{ response: { value: string | null } }>(node, "abci_query", {
    path: "",
    data: Buffer.from(key).toString("hex"),
  });
  return Buffer.from(r.response.value ?? "", "base64").toString();
}

async function txSearchCount(node: MixedNode, hash: string): Promise<number> {
  const r = await rpcPost<{ total_count: string }>(node, "tx_search", { query: `tx.hash='${hash}'` });
  return Number(r.total_count);
}

/**
 * The checks every shape passes: `k=v` txs sent to every node's RPC, then the chain to `heights` on
 * every node: one block hash per height on all of them, proposers of both kinds, every tx in exactly
 * one block at the same place everywhere, every node's app state holding every value.
 */
async function expectSharedChain(nodes: MixedNode[], heights: number, tag: string): Promise<void> {
  await Promise.all(nodes.map((n) => n.waitForHeight(2, 60_000)));
  // (Not `k:v`: upstream's PrepareProposal rewrites it to `k=v`, so the mempools keep the original,
  // which stays valid, and it is proposed again at every height; cometh's kvstore does the same.)
  const sent: { hash: string; key: string; value: string }[] = [];
  for (const n of nodes) {
    for (let i = 0; i < 3; i++) {
      const key = `${tag}-${n.name}-${i}`;
      const value = `v${i}-${n.kind}`;
      sent.push({ hash: await broadcastTx(n, `${key}=${value}`), key, value });
    }
  }

  await Promise.all(nodes.map((n) => n.waitForHeight(heights, 240_000)));
  const chain = await expectOneChain(nodes, heights);

  const kindOf = new Map(nodes.map((n) => [n.validatorAddress, n.kind]));
  const proposed = { go: 0, cometh: 0 };
  for (const m of chain) {
    const kind = kindOf.get(m.proposer);
    if (kind === undefined) throw new Error(`height ${m.height}: proposer ${m.proposer} is no validator`);
    proposed[kind]++;
  }
  expect(proposed.go).toBeGreaterThan(0);
  expect(proposed.cometh).toBeGreaterThan(0);

  // Every tx in exactly one block: the chain holds as many txs as were sent...
  expect(chain.reduce((sum, m) => sum + m.numTxs, 0)).toBe(sent.length);
  // ...each tx is at the same place on every node, and found once by tx_search...
  for (const t of sent) {
    const places = await Promise.all(nodes.map((n) => waitForTx(n, t.hash)));
    for (const p of places) expect(p).toEqual(places[0]);
    for (const n of nodes) expect(await txSearchCount(n, t.hash)).toBe(1);
  }
  // ...and every node's app state holds every value.
  for (const n of nodes) {
    for (const t of sent) expect(await queryValue(n, t.key)).toBe(t.value);
  }
}

async function maxHeight(nodes: MixedNode[]): Promise<number> {
  return Math.max(...(await Promise.all(nodes.map((n) => n.height()))));
}

/** Waits for the node's log line saying it switched from block sync to consensus; returns its height. */
async function blocksyncSwitchHeight(node: MixedNode, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /Time to switch to consensus reactor!.*?\bheight=(\d+)/.exec(node.output(Number.MAX_SAFE_INTEGER));
    if (m?.[1] !== undefined) return Number(m[1]);
    if (Date.now() > deadline) {
      const lines = node
        .output(Number.MAX_SAFE_INTEGER)
        .split("\n")
        .filter((l) => /block ?sync|switch/i.test(l));
      throw new Error(`${node.name} (${node.kind}) never switched from block sync:\n${lines.slice(-20).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until a commit at or above `from` carries the validator's signature; returns that height. */
async function waitForSignature(observer: MixedNode, validator: MixedNode, from: number): Promise<number> {
  for (let h = from; h < from + 60; h++) {
    await observer.waitForHeight(h + 1, 60_000);
    if ((await commitSigners(observer, h)).includes(validator.validatorAddress)) return h;
  }
  throw new Error(`${validator.name} (${validator.kind}) signed no commit of heights ${from}..${from + 59}`);
}

describe.skipIf(missing !== undefined)(suiteName, () => {
  describe("2 Go + 2 cometh validators, and a full node of each kind", () => {
    let net: MixedNetwork | undefined;
    const nets = () => net as MixedNetwork;
    const running = () => nets().nodes.filter((n) => n.running);

    beforeAll(async () => {
      net = await makeMixedNetwork({
        goValidators: 2,
        comethValidators: 2,
        goFullNodes: 1,
        comethFullNodes: 1,
        timeoutCommit: "100ms",
        // No address exchange: each full node must get its blocks from the peers listed for it.
        config: { "p2p.pex": false },
        peers: (n, all) => {
          const validators = all.filter((o) => o.isValidator && o !== n);
          if (n.isValidator) return validators;
          // The Go full node syncs from cometh validators only, the cometh full node from Go validators.
          return validators.filter((o) => o.kind !== n.kind);
        },
      });
      await net.startValidators();
    }, 120_000);

    afterAll(async () => {
      await net?.close();
    });

    it("behavior: one chain over 200 heights, proposed by both kinds, each tx mined once", async () => {
      await expectSharedChain(nets().validators, 200, "2g2c");
    }, 300_000);

    it("behavior: a Go full node block-syncs from cometh validators, a cometh full node from Go validators", async () => {
      const full = nets().nodes.filter((n) => !n.isValidator);
      const start = await maxHeight(nets().validators);
      await Promise.all(full.map((n) => n.start()));
      await Promise.all(full.map((n) => n.waitForHeight(start + 5, 120_000)));
      for (const n of full) {
        // Caught up by block sync (not by consensus catch-up), from peers of the other kind only.
        expect(await blocksyncSwitchHeight(n)).toBeGreaterThanOrEqual(start - 5);
        const others = nets()
          .validators.filter((v) => v.kind !== n.kind)
          .map((v) => v.nodeId)
          .sort();
        expect(await peerIds(n)).toEqual(others);
      }
      await expectOneChain(running(), start + 5);
    }, 180_000);

    it("behavior: a killed validator of either kind restarts, rejoins and signs again", async () => {
      for (const kind of ["go", "cometh"] as const) {
        const victim = nets().validators.find((v) => v.kind === kind) as MixedNode;
        const others = nets().validators.filter((v) => v !== victim);
        await victim.kill();
        // Three of four equal validators still commit.
        const h = await maxHeight(others);
        await Promise.all(others.map((n) => n.waitForHeight(h + 5, 60_000)));
        await victim.start();
        const back = await maxHeight(others);
        await victim.waitForHeight(back, 60_000);
        const signed = await waitForSignature(others[0] as MixedNode, victim, back);
        expect(signed).toBeGreaterThanOrEqual(back);
      }
      const top = await maxHeight(running());
      await Promise.all(running().map((n) => n.waitForHeight(top, 60_000)));
      await expectOneChain(running(), top);
    }, 240_000);

    it("behavior: a kvstore val= tx sent to either kind changes a validator's power at H+2 on both kinds", async () => {
      const [go0, go1, cometh0, cometh1] = nets().validators as [MixedNode, MixedNode, MixedNode, MixedNode];
      const changes = [
        { via: cometh0, target: go1, power: "2" },
        { via: go0, target: cometh1, power: "3" },
      ];
      for (const c of changes) {
        const hash = await broadcastTx(c.via, `val=ed25519!${c.target.validatorPubKey}!${c.power}`);
        const { height } = await waitForTx(c.via, hash);
        await Promise.all(running().map((n) => n.waitForHeight(height + 2, 60_000)));
        for (const n of running()) {
          expect((await validatorPowers(n, height + 1)).get(c.target.validatorAddress), n.name).toBe("1");
          expect((await validatorPowers(n, height + 2)).get(c.target.validatorAddress), n.name).toBe(c.power);
        }
      }
      // The network keeps committing with the new set.
      const top = (await maxHeight(running())) + 5;
      await Promise.all(running().map((n) => n.waitForHeight(top, 60_000)));
      await expectOneChain(running(), top);
    }, 180_000);
  });

  describe.each([
    { go: 3, cometh: 1 },
    { go: 1, cometh: 3 },
  ])("$go Go + $cometh cometh validators", ({ go, cometh }) => {
    let net: MixedNetwork | undefined;

    // The majority kind's full node, started later, knows one peer: the lone validator of the other kind, as its seed.
    const fullKind = go === 3 ? "go" : "cometh";

    beforeAll(async () => {
      net = await makeMixedNetwork({
        goValidators: go,
        comethValidators: cometh,
        goFullNodes: fullKind === "go" ? 1 : 0,
        comethFullNodes: fullKind === "cometh" ? 1 : 0,
        timeoutCommit: "100ms",
        peers: (n, all) => (n.isValidator ? all.filter((o) => o.isValidator && o !== n) : []),
        nodeConfig: (n, all) => {
          if (n.isValidator) return {};
          const seed = all.find((o) => o.isValidator && o.kind !== n.kind) as MixedNode;
          return { "p2p.seeds": p2pAddress(seed) };
        },
      });
      await net.startValidators();
    }, 120_000);

    afterAll(async () => {
      await net?.close();
    });

    it("behavior: one chain over 200 heights, proposed by both kinds, each tx mined once", async () => {
      await expectSharedChain((net as MixedNetwork).validators, 200, `${go}g${cometh}c`);
    }, 300_000);

    it(`behavior: a ${fullKind} full node whose only seed is of the other kind finds the validators of its own kind by PEX`, async () => {
      const { nodes } = net as MixedNetwork;
      const full = nodes.find((n) => !n.isValidator) as MixedNode;
      const ownKind = nodes.filter((n) => n.isValidator && n.kind === full.kind).map((n) => n.nodeId);
      await full.start();
      // Its own kind's validators are in no file of its home: only the seed's PEX answer names them.
      const deadline = Date.now() + 60_000;
      let peers: string[] = [];
      while (!ownKind.every((id) => peers.includes(id))) {
        if (Date.now() > deadline) {
          throw new Error(
            `${full.name} has peers ${peers.join(",")}, not all of ${ownKind.join(",")}\n${full.output()}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
        peers = await peerIds(full);
      }
      const top = await maxHeight(nodes.filter((n) => n.isValidator));
      await full.waitForHeight(top, 60_000);
      await expectOneChain([...nodes.filter((n) => n.isValidator), full], top);
    }, 120_000);

    it("behavior: the lone validator of its kind double-signs towards the other kind; the evidence lands in a block and both kinds' apps punish it", async () => {
      const { chainId } = net as MixedNetwork;
      const nodes = (net as MixedNetwork).nodes.filter((n) => n.running);
      // 3 Go + 1 cometh: a cometh validator caught by Go nodes; 1 Go + 3 cometh: the other way round.
      const lone = nodes.find((n) => n.isValidator && n.kind === (go === 1 ? "go" : "cometh")) as MixedNode;
      const target = nodes.find((n) => n.kind !== lone.kind) as MixedNode;
      await Promise.all(nodes.map((n) => n.waitForHeight(3, 60_000)));
      const found = await doubleSign(target, lone, chainId);
      expect(found.evidence[0]?.type).toBe("tendermint/DuplicateVoteEvidence");
      expect(found.evidence[0]?.value.vote_a.validator_address).toBe(lone.validatorAddress);
      await Promise.all(nodes.map((n) => n.waitForHeight(found.height + 2, 60_000)));
      await expectOneChain(nodes, found.height + 2);
      // Both kvstores lower the validator's power by one (1 → 0: it leaves the set at H+2).
      for (const n of nodes) {
        expect((await validatorPowers(n, found.height + 1)).get(lone.validatorAddress), n.name).toBe("1");
        expect((await validatorPowers(n, found.height + 2)).has(lone.validatorAddress), n.name).toBe(false);
      }
      // The remaining three keep committing.
      const top = found.height + 5;
      await Promise.all(nodes.filter((n) => n !== lone).map((n) => n.waitForHeight(top, 60_000)));
    }, 180_000);
  });
});
