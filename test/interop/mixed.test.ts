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
  type MixedNetwork,
  type MixedNode,
  makeMixedNetwork,
  rpcPost,
  waitForTx,
} from "./mixedNetwork.js";

const missing = cometbftMissing();
const suiteName = missing === undefined ? "mixed Go/cometh networks" : `mixed Go/cometh networks (skipped: ${missing})`;

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

const SHAPES = [
  { go: 2, cometh: 2, heights: 200 },
  { go: 3, cometh: 1, heights: 200 },
  { go: 1, cometh: 3, heights: 200 },
];

describe.skipIf(missing !== undefined)(suiteName, () => {
  describe.each(SHAPES)("$go Go + $cometh cometh validators", ({ go, cometh, heights }) => {
    let net: MixedNetwork | undefined;

    beforeAll(async () => {
      net = await makeMixedNetwork({ goValidators: go, comethValidators: cometh, timeoutCommit: "100ms" });
      await net.startAll();
    }, 120_000);

    afterAll(async () => {
      await net?.close();
    });

    it(`behavior: one chain over ${heights} heights, proposed by both kinds, each tx mined once`, async () => {
      const { nodes } = net as MixedNetwork;
      await Promise.all(nodes.map((n) => n.waitForHeight(2, 60_000)));

      // `k=v` txs to every node's RPC. (Not `k:v`: upstream's PrepareProposal rewrites it to `k=v`, so
      // the mempools keep the original, which stays valid, and it is proposed again at every height;
      // cometh's kvstore does the same now, see src/app/kvstore.)
      const tag = `${go}g${cometh}c`;
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
      // ...each `k=v` tx is at the same place on every node, and found once by tx_search...
      for (const t of sent) {
        const places = await Promise.all(nodes.map((n) => waitForTx(n, t.hash)));
        for (const p of places) expect(p).toEqual(places[0]);
        for (const n of nodes) expect(await txSearchCount(n, t.hash)).toBe(1);
      }
      // ...and every node's app state holds every value.
      for (const n of nodes) {
        for (const t of sent) expect(await queryValue(n, t.key)).toBe(t.value);
      }
    }, 300_000);
  });
});
