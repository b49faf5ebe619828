import { Comet38Client } from "@cosmjs/tendermint-rpc";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { blockAt, blockIdAt, CHAIN_ID, finalizeAt, LATEST_HEIGHT, sha256, VALIDATORS } from "./testing/fakeServices.js";
import { type FakeRpc, startFakeRpc } from "./testing/startFakeRpc.js";

/** Wire compatibility: CosmJS's Comet38Client decodes what the fake-backed server sends. */

describe.each(["http", "ws"] as const)("Comet38Client over %s", (kind) => {
  let f: FakeRpc;
  let client: Comet38Client;

  beforeAll(async () => {
    f = await startFakeRpc();
    client = await Comet38Client.connect(kind === "http" ? f.base : f.base.replace(/^http/, "ws"));
  });
  afterAll(async () => {
    client.disconnect();
    await f.close();
  });

  test("default: status", async () => {
    const s = await client.status();
    expect(s.nodeInfo.network).toBe(CHAIN_ID);
    expect(s.nodeInfo.version).toBe("0.38.25");
    expect(s.nodeInfo.protocolVersion).toEqual({ p2p: 8, block: 11, app: 1 });
    expect(s.syncInfo.latestBlockHeight).toBe(LATEST_HEIGHT);
    expect(s.syncInfo.latestBlockHash).toEqual(blockIdAt(LATEST_HEIGHT).hash);
    expect(s.syncInfo.earliestBlockHeight).toBe(1);
    expect(s.syncInfo.catchingUp).toBe(false);
    expect(s.validatorInfo.votingPower).toBe(10n);
    expect(s.validatorInfo.pubkey?.algorithm).toBe("ed25519");
  });

  test("default: block", async () => {
    const latest = await client.block();
    expect(latest.block.header.height).toBe(LATEST_HEIGHT);
    const b2 = await client.block(2);
    expect(b2.blockId.hash).toEqual(blockIdAt(2).hash);
    expect(b2.block.txs.map((t) => Buffer.from(t).toString())).toEqual(["name=satoshi", "creator=Cosmoshi"]);
    expect(b2.block.header.chainId).toBe(CHAIN_ID);
    expect(b2.block.header.time.toISOString()).toBe("2024-01-01T00:00:02.100Z");
    expect(b2.block.lastCommit?.signatures).toHaveLength(3);
    const b1 = await client.block(1);
    expect(b1.block.header.lastBlockId).toBeNull();
    expect(b1.block.lastCommit).toBeNull();
  });

  test("default: blockchain", async () => {
    const r = await client.blockchain(2, 4);
    expect(r.lastHeight).toBe(LATEST_HEIGHT);
    expect(r.blockMetas.map((m) => m.header.height)).toEqual([4, 3, 2]);
    expect(r.blockMetas[0]?.numTxs).toBe(1);
    expect(r.blockMetas[0]?.blockId.hash).toEqual(blockIdAt(4).hash);
  });

  test("default: commit", async () => {
    const c = await client.commit(5);
    expect(c.canonical).toBe(true);
    expect(c.header.height).toBe(5);
    expect(c.commit.height).toBe(5);
    expect(c.commit.signatures[0]?.blockIdFlag).toBe(2);
    expect(c.commit.signatures[2]?.blockIdFlag).toBe(1);
    const latest = await client.commit();
    expect(latest.canonical).toBe(false);
  });

  test("default: validators", async () => {
    const v = await client.validators({ height: 3 });
    expect(v.blockHeight).toBe(3);
    expect(v.total).toBe(3);
    expect(v.validators[0]?.address).toEqual(VALIDATORS[0]?.address);
    expect(v.validators[0]?.votingPower).toBe(10n);
    expect(v.validators[0]?.proposerPriority).toBe(-5);
    const all = await client.validatorsAll();
    expect(all.validators).toHaveLength(3);
  });

  test("default: genesis", async () => {
    const g = await client.genesis();
    expect(g.chainId).toBe(CHAIN_ID);
    expect(g.genesisTime.toISOString()).toBe("2024-01-01T00:00:00.000Z");
    expect(g.consensusParams.block?.maxBytes).toBe(22020096);
    expect(g.validators).toHaveLength(3);
    expect(g.appHash).toEqual(new Uint8Array(0));
  });

  test("default: abciInfo and abciQuery", async () => {
    const info = await client.abciInfo();
    expect(info).toEqual({
      data: "fake-app",
      lastBlockHeight: LATEST_HEIGHT,
      lastBlockAppHash: sha256(`app:${LATEST_HEIGHT}`),
    });
    const q = await client.abciQuery({ path: "/store", data: Uint8Array.from([1, 2]), prove: true });
    expect(q.value).toEqual(new Uint8Array(Buffer.from("value")));
    expect(q.key).toEqual(Uint8Array.from([1, 2]));
    expect(q.height).toBe(LATEST_HEIGHT);
    expect(q.proof?.ops[0]?.type).toBe("ics23");
  });

  test("default: blockResults, tx and txSearch", async () => {
    const r = await client.blockResults(3);
    expect(r.validatorUpdates[0]?.votingPower).toBe(7n);
    expect(r.finalizeBlockEvents.map((e) => e.type)).toEqual(["begin_event", "end_event"]);
    const tx = Buffer.from("name=satoshi");
    const found = await client.tx({ hash: sha256(tx), prove: true });
    expect(found.height).toBe(2);
    expect(found.proof?.proof.total).toBe(2);
    const search = await client.txSearch({ query: "tx.height=2" });
    expect(search.totalCount).toBe(2);
  });

  test("default: broadcastTxSync", async () => {
    const r = await client.broadcastTxSync({ tx: Buffer.from(`cosmjs-${kind}`) });
    expect(r.code).toBe(0);
    expect(r.hash).toEqual(sha256(`cosmjs-${kind}`));
  });

  test("default: subscriptions decode (WebSocket only)", async () => {
    if (kind !== "ws") return;
    const blocks = client.subscribeNewBlock();
    const received = new Promise<number>((resolve, reject) => {
      const sub = blocks.subscribe({
        next: (b) => {
          sub.unsubscribe();
          resolve(b.header.height);
        },
        error: reject,
        complete: () => undefined,
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    f.node.bus.publish("NewBlock", { block: blockAt(4), blockId: blockIdAt(4), resultFinalizeBlock: finalizeAt(4) });
    expect(await received).toBe(4);

    const txs = client.subscribeTx();
    const gotTx = new Promise<number>((resolve, reject) => {
      const sub = txs.subscribe({
        next: (t) => {
          sub.unsubscribe();
          resolve(t.height);
        },
        error: reject,
        complete: () => undefined,
      });
    });
    await new Promise((r) => setTimeout(r, 100));
    f.node.includeTx(Buffer.from("evt=1"), 11);
    expect(await gotTx).toBe(11);
  });
});
