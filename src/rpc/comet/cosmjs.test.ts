import { Comet38Client } from "@cosmjs/tendermint-rpc";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  CHAIN_ID,
  NODE_POWER,
  OTHER_POWER,
  PAIR_TXS,
  type RealChain,
  SINGLE_TX,
  sha256,
  startRealChain,
} from "./testing/realChain.js";
import { arg } from "./testing/rpcTestClient.js";
import { type FakeRpc, startFakeRpc } from "./testing/startFakeRpc.js";

/** Wire compatibility: CosmJS's Comet38Client decodes what a real node (testing/realChain.ts) sends. */

let chain: RealChain;

beforeAll(async () => {
  chain = await startRealChain();
});
afterAll(() => chain?.close());
beforeEach(() => chain.settle());

describe.each(["http", "ws"] as const)("Comet38Client over %s", (kind) => {
  let client: Comet38Client;

  beforeAll(async () => {
    client = await Comet38Client.connect(kind === "http" ? chain.base : chain.base.replace(/^http/, "ws"));
  });
  afterAll(() => {
    client.disconnect();
  });

  test("default: status", async () => {
    const latest = chain.latestHeight();
    const s = await client.status();
    expect(s.nodeInfo.network).toBe(CHAIN_ID);
    expect(s.nodeInfo.version).toBe("0.38.25");
    expect(s.nodeInfo.protocolVersion).toEqual({ p2p: 8, block: 11, app: 1 });
    expect(s.syncInfo.latestBlockHeight).toBe(latest);
    expect(s.syncInfo.latestBlockHash).toEqual(chain.meta(latest).blockId.hash);
    expect(s.syncInfo.earliestBlockHeight).toBe(1);
    expect(s.syncInfo.catchingUp).toBe(false);
    expect(s.validatorInfo.votingPower).toBe(NODE_POWER);
    expect(s.validatorInfo.pubkey?.algorithm).toBe("ed25519");
  });

  test("default: block", async () => {
    const latest = await client.block();
    expect(latest.block.header.height).toBe(chain.latestHeight());
    const h = chain.heights.pairTxs;
    const b = await client.block(h);
    expect(b.blockId.hash).toEqual(chain.meta(h).blockId.hash);
    expect(b.block.txs.map((t) => Buffer.from(t).toString())).toEqual(PAIR_TXS.map((t) => t.toString()));
    expect(b.block.header.chainId).toBe(CHAIN_ID);
    const time = chain.block(h).header.time;
    expect(b.block.header.time.getTime()).toBe(Number(time / 1_000_000n));
    expect(b.block.header.time.nanoseconds).toBe(Number(time % 1_000_000n));
    expect(b.block.lastCommit?.signatures).toHaveLength(3);
    const b1 = await client.block(1);
    expect(b1.block.header.lastBlockId).toBeNull();
    expect(b1.block.lastCommit).toBeNull();
  });

  test("default: blockchain", async () => {
    const { singleTx } = chain.heights;
    const r = await client.blockchain(singleTx - 2, singleTx);
    expect(r.lastHeight).toBe(chain.latestHeight());
    expect(r.blockMetas.map((m) => m.header.height)).toEqual([singleTx, singleTx - 1, singleTx - 2]);
    expect(r.blockMetas[0]?.numTxs).toBe(1);
    expect(r.blockMetas[0]?.blockId.hash).toEqual(chain.meta(singleTx).blockId.hash);
  });

  test("default: commit", async () => {
    // A commit of the three-member set: this node signs, the two others are absent.
    const h = chain.heights.pairTxs;
    const c = await client.commit(h);
    expect(c.canonical).toBe(true);
    expect(c.header.height).toBe(h);
    expect(c.commit.height).toBe(h);
    expect(c.commit.signatures[0]?.blockIdFlag).toBe(2);
    expect(c.commit.signatures[2]?.blockIdFlag).toBe(1);
    const latest = await client.commit();
    expect(latest.canonical).toBe(false);
  });

  test("default: validators", async () => {
    const h = chain.heights.validatorTxs + 2;
    const v = await client.validators({ height: h });
    expect(v.blockHeight).toBe(h);
    expect(v.total).toBe(3);
    expect(v.validators[0]?.address).toEqual(chain.nodeAddress);
    expect(v.validators[0]?.votingPower).toBe(NODE_POWER);
    expect(v.validators.slice(1).map((x) => x.votingPower)).toEqual([OTHER_POWER, OTHER_POWER]);
    const wire = await chain.client.call("http", "validators", { height: arg.int(h) });
    expect(v.validators.map((x) => x.proposerPriority)).toEqual(
      wire.body.result.validators.map((x: { proposer_priority: string }) => Number(x.proposer_priority)),
    );
    const all = await client.validatorsAll(h);
    expect(all.validators).toHaveLength(3);
  });

  test("default: genesis", async () => {
    const g = await client.genesis();
    const genesis = chain.n.node.genesis;
    expect(g.chainId).toBe(CHAIN_ID);
    expect(g.genesisTime.getTime()).toBe(Number(genesis.genesisTime / 1_000_000n));
    expect(g.consensusParams.block?.maxBytes).toBe(22020096);
    expect(g.validators).toHaveLength(1);
    expect(g.appHash).toEqual(new Uint8Array(0));
  });

  test("default: abciInfo and abciQuery", async () => {
    const latest = chain.latestHeight();
    const app = await chain.n.node.app.info();
    const info = await client.abciInfo();
    expect(info).toEqual({
      data: app.data,
      lastBlockHeight: latest,
      lastBlockAppHash: app.lastBlockAppHash,
    });
    const q = await client.abciQuery({ path: "/store", data: Buffer.from("name"), prove: true });
    expect(q.value).toEqual(new Uint8Array(Buffer.from("satoshi")));
    expect(q.key).toEqual(new Uint8Array(Buffer.from("name")));
    expect(q.height).toBe(latest);
    // The kvstore app answers without proof ops.
    expect(q.proof).toBeUndefined();
  });

  test("default: blockResults, tx and txSearch", async () => {
    const r = await client.blockResults(chain.heights.validatorTxs);
    expect(r.validatorUpdates.map((u) => u.votingPower)).toEqual([NODE_POWER, OTHER_POWER, OTHER_POWER]);
    expect(r.finalizeBlockEvents).toEqual([]);
    expect(r.results.map((x) => x.events.map((e) => e.type))).toEqual([
      ["app", "app"],
      ["app", "app"],
      ["app", "app"],
    ]);
    const tx = PAIR_TXS[0];
    const found = await client.tx({ hash: sha256(tx), prove: true });
    expect(found.height).toBe(chain.heights.pairTxs);
    expect(found.proof?.proof.total).toBe(2);
    const search = await client.txSearch({ query: `tx.height=${chain.heights.pairTxs}` });
    expect(search.totalCount).toBe(2);
    const single = await client.txSearch({ query: `tx.hash='${Buffer.from(sha256(SINGLE_TX)).toString("hex")}'` });
    expect(single.txs[0]?.height).toBe(chain.heights.singleTx);
  });

  test("default: broadcastTxSync", async () => {
    const r = await client.broadcastTxSync({ tx: Buffer.from(`cosmjs-${kind}=1`) });
    expect(r.code).toBe(0);
    expect(r.hash).toEqual(sha256(`cosmjs-${kind}=1`));
  });

  test("default: subscriptions decode (WebSocket only)", async () => {
    if (kind !== "ws") return;
    /** Waits until the node holds `n` subscriptions (CosmJS gives no acknowledgement). */
    const subscribed = async (n: number): Promise<void> => {
      while ((await chain.rpcSubscriptions()) !== n) await new Promise((r) => setTimeout(r, 5));
    };
    const blocks = client.subscribeNewBlock();
    const received = new Promise<{ height: number; hash: Uint8Array }>((resolve, reject) => {
      const sub = blocks.subscribe({
        next: (b) => {
          // The block holding this test's tx (an earlier test's tx may still be committing).
          if (!b.txs.some((t) => Buffer.from(t).toString() === "evt-block=1")) return;
          sub.unsubscribe();
          resolve({ height: b.header.height, hash: b.header.appHash });
        },
        error: reject,
        complete: () => undefined,
      });
    });
    await subscribed(1);
    const blockHeight = await chain.commitTxs([Buffer.from("evt-block=1")]);
    const block = await received;
    expect(block.height).toBe(blockHeight);
    expect(block.hash).toEqual(chain.block(blockHeight).header.appHash);

    await subscribed(0); // the block subscription is gone before the tx one counts
    const txs = client.subscribeTx();
    const gotTx = new Promise<{ height: number; tx: Uint8Array }>((resolve, reject) => {
      const sub = txs.subscribe({
        next: (t) => {
          if (Buffer.from(t.tx).toString() !== "evt=1") return;
          sub.unsubscribe();
          resolve({ height: t.height, tx: t.tx });
        },
        error: reject,
        complete: () => undefined,
      });
    });
    await subscribed(1);
    const txHeight = await chain.commitTxs([Buffer.from("evt=1")]);
    const got = await gotTx;
    expect(got.height).toBe(txHeight);
    expect(Buffer.from(got.tx).toString()).toBe("evt=1");
  });
});

/**
 * What the kvstore app never sends (block events, proof ops), from the small fake (testing/fakeServices.ts):
 * CosmJS must decode our encoding of them too.
 */
describe("Comet38Client decodes block events and proof ops", () => {
  let fake: FakeRpc;
  let client: Comet38Client;

  beforeAll(async () => {
    fake = await startFakeRpc(
      {},
      {
        customize: (node) => {
          const app = node.services.app;
          const query = app.query.bind(app);
          app.query = async (req) => ({
            ...(await query(req)),
            value: Buffer.from("value"),
            proofOps: [{ type: "ics23:iavl", key: req.data, data: Uint8Array.from([9, 9]) }],
          });
        },
      },
    );
    client = await Comet38Client.connect(fake.base);
  });
  afterAll(async () => {
    client?.disconnect();
    await fake?.close();
  });

  test("default: abciQuery with proof ops, blockResults with finalize_block_events", async () => {
    const q = await client.abciQuery({ path: "/store", data: Uint8Array.from([1, 2]), prove: true });
    expect(q.value).toEqual(new Uint8Array(Buffer.from("value")));
    expect(q.proof?.ops).toEqual([{ type: "ics23:iavl", key: Uint8Array.from([1, 2]), data: Uint8Array.from([9, 9]) }]);
    const r = await client.blockResults(3);
    expect(r.finalizeBlockEvents.map((e) => e.type)).toEqual(["begin_event", "end_event"]);
    expect(r.finalizeBlockEvents[0]?.attributes).toEqual([{ key: "foo", value: "100" }]);
  });
});
