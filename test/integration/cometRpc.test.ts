import { createHash } from "node:crypto";
import { Comet38Client } from "@cosmjs/tendermint-rpc";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { arg, RpcTestClient, TRANSPORTS } from "../../src/rpc/comet/testing/rpcTestClient.js";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";

/**
 * The node RPC of a real node (consensus, LMDB stores, kvstore app, kv indexer): the same calls over
 * URI GET, JSON-RPC POST and WebSocket, then CosmJS's Comet38Client over HTTP and WebSocket.
 */

let n: InProcessNode;
let rpc: RpcTestClient;
/** A tx committed before the suites run, with its hash and height. */
let committed: { tx: Uint8Array; hash: string; height: number };

function sha256Hex(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex").toUpperCase();
}

beforeAll(async () => {
  n = await startInProcessNode();
  rpc = new RpcTestClient(n.rpcUrl);
  await n.node.consensus.waitForHeight(2);
  const tx = new TextEncoder().encode("integration=first");
  const r = await rpc.call("http", "broadcast_tx_commit", { tx: arg.bytes(tx) });
  expect(r.body.error).toBeUndefined();
  committed = { tx, hash: sha256Hex(tx), height: Number(r.body.result.height) };
});

afterAll(async () => {
  await rpc?.close();
  await n?.close();
});

describe.each(TRANSPORTS)("node RPC over %s", (transport) => {
  const call = async (method: string, params: Parameters<RpcTestClient["call"]>[2] = {}) => {
    const r = await rpc.call(transport, method, params);
    if (r.body?.error !== undefined) throw new Error(`${method}: ${JSON.stringify(r.body.error)}`);
    return r.body.result;
  };

  test("default: health and status", async () => {
    expect(await call("health")).toEqual({});
    const s = await call("status");
    expect(s.node_info.network).toBe("test-chain");
    expect(s.node_info.moniker).toBe("it-node");
    expect(Number(s.sync_info.latest_block_height)).toBeGreaterThanOrEqual(committed.height);
    expect(s.sync_info.latest_block_hash).toMatch(/^[0-9A-F]{64}$/);
    expect(s.sync_info.catching_up).toBe(false);
    expect(s.validator_info.voting_power).toBe("10");
  });

  test("default: block, header, commit and block_results agree on the committed tx", async () => {
    const h = arg.int(committed.height);
    const b = await call("block", { height: h });
    expect(b.block.header.height).toBe(String(committed.height));
    expect(b.block.data.txs).toEqual([Buffer.from(committed.tx).toString("base64")]);
    const byHash = await call("block_by_hash", { hash: arg.bytes(Buffer.from(b.block_id.hash, "hex")) });
    expect(byHash.block_id).toEqual(b.block_id);
    expect((await call("header", { height: h })).header).toEqual(b.block.header);
    const c = await call("commit", { height: h });
    expect(c.signed_header.commit.block_id).toEqual(b.block_id);
    const res = await call("block_results", { height: h });
    expect(res.txs_results).toHaveLength(1);
    expect(res.txs_results[0].code).toBe(0);
  });

  test("default: blockchain, validators, consensus_params, genesis", async () => {
    const bc = await call("blockchain", { minHeight: arg.int(1), maxHeight: arg.int(2) });
    expect(bc.block_metas.map((m: { header: { height: string } }) => m.header.height)).toEqual(["2", "1"]);
    const v = await call("validators", { height: arg.int(1) });
    expect(v.total).toBe("1");
    expect(v.validators[0].voting_power).toBe("10");
    const p = await call("consensus_params", { height: arg.int(1) });
    expect(p.consensus_params.block.max_bytes).toBe("22020096");
    const g = await call("genesis");
    expect(g.genesis.chain_id).toBe("test-chain");
  });

  test("default: abci_info and abci_query see the committed key", async () => {
    const info = await call("abci_info");
    expect(Number(info.response.last_block_height)).toBeGreaterThanOrEqual(committed.height);
    const q = await call("abci_query", { path: arg.str(""), data: arg.hex(new TextEncoder().encode("integration")) });
    expect(Buffer.from(q.response.value, "base64").toString()).toBe("first");
  });

  test("default: tx, tx_search and block_search find the committed tx", async () => {
    const t = await call("tx", { hash: arg.bytes(Buffer.from(committed.hash, "hex")), prove: arg.bool(true) });
    expect(t.hash).toBe(committed.hash);
    expect(t.height).toBe(String(committed.height));
    expect(t.proof.root_hash).toMatch(/^[0-9A-F]{64}$/);
    const s = await call("tx_search", { query: arg.str(`tx.height=${committed.height}`) });
    expect(s.total_count).toBe("1");
    expect(s.txs[0].hash).toBe(committed.hash);
    const byHash = await call("tx_search", { query: arg.str(`tx.hash='${committed.hash}'`) });
    expect(byHash.total_count).toBe("1");
    const blocks = await call("block_search", { query: arg.str(`block.height <= ${committed.height}`) });
    expect(Number(blocks.total_count)).toBe(committed.height);
  });

  test("default: dump_consensus_state and consensus_state render the live round", async () => {
    const d = await call("dump_consensus_state");
    expect(Number(d.round_state.height)).toBeGreaterThan(committed.height);
    expect(d.round_state.validators.validators).toHaveLength(1);
    expect(Array.isArray(d.round_state.votes)).toBe(true);
    expect(d.peers).toEqual([]);
    const c = await call("consensus_state");
    expect(c.round_state["height/round/step"]).toMatch(/^\d+\/\d+\/\d+$/);
  });

  test("default: mempool routes and check_tx", async () => {
    expect((await call("num_unconfirmed_txs")).n_txs).toMatch(/^\d+$/);
    expect(Array.isArray((await call("unconfirmed_txs")).txs)).toBe(true);
    const ct = await call("check_tx", { tx: arg.bytes(new TextEncoder().encode(`check-${transport}=1`)) });
    expect(ct.code).toBe(0);
  });

  test("invalid: a height above the chain answers an error naming it", async () => {
    const r = await rpc.call(transport, "block", { height: arg.int(10_000_000) });
    expect(r.body.error.data).toMatch(/must be less than or equal to the current blockchain height/);
    if (transport === "uri") expect(r.status).toBe(500);
    if (transport === "http") expect(r.status).toBe(200);
  });
});

describe("events over WebSocket from a real node", () => {
  test("behavior: subscribe to Tx pushes the tx committed after it", async () => {
    const ws = await rpc.wsClient();
    const sub = await ws.sendRaw(
      JSON.stringify({ jsonrpc: "2.0", id: "sub-tx", method: "subscribe", params: { query: "tm.event='Tx'" } }),
      JSON.stringify("sub-tx"),
    );
    expect((sub as { result: unknown }).result).toEqual({});
    const tx = new TextEncoder().encode("pushed=yes");
    await rpc.call("http", "broadcast_tx_sync", { tx: arg.bytes(tx) });
    const [push] = (await ws.waitPushes("sub-tx", 1, 20_000)) as {
      result: {
        query: string;
        data: { type: string; value: { TxResult: { tx: string } } };
        events: Record<string, string[]>;
      };
    }[];
    expect(push?.result.query).toBe("tm.event='Tx'");
    expect(push?.result.data.type).toBe("tendermint/event/Tx");
    expect(push?.result.data.value.TxResult.tx).toBe(Buffer.from(tx).toString("base64"));
    expect(push?.result.events["tx.hash"]).toEqual([sha256Hex(tx)]);
    // The block was indexed before the event went out.
    const found = await rpc.call("http", "tx", { hash: arg.bytes(Buffer.from(sha256Hex(tx), "hex")) });
    expect(found.body.result.hash).toBe(sha256Hex(tx));
  });
});

describe.each(["http", "ws"] as const)("Comet38Client over %s against a real node", (kind) => {
  let client: Comet38Client;
  beforeAll(async () => {
    client = await Comet38Client.connect(kind === "http" ? n.rpcUrl : n.rpcUrl.replace(/^http/, "ws"));
  });
  afterAll(() => {
    client.disconnect();
  });

  test("default: status, block, blockResults, blockchain, commit, validators, genesis", async () => {
    const s = await client.status();
    expect(s.nodeInfo.network).toBe("test-chain");
    const b = await client.block(committed.height);
    expect(b.block.txs).toHaveLength(1);
    const r = await client.blockResults(committed.height);
    expect(r.results[0]?.code).toBe(0);
    const bc = await client.blockchain(1, 2);
    expect(bc.blockMetas).toHaveLength(2);
    const c = await client.commit(committed.height);
    expect(c.header.height).toBe(committed.height);
    const v = await client.validators({ height: 1 });
    expect(v.total).toBe(1);
    const g = await client.genesis();
    expect(g.chainId).toBe("test-chain");
  });

  test("default: abciInfo, abciQuery, broadcastTxSync, broadcastTxCommit, tx, txSearch, blockSearch", async () => {
    const info = await client.abciInfo();
    expect(info.lastBlockHeight).toBeGreaterThan(0);
    const q = await client.abciQuery({ path: "/store", data: new TextEncoder().encode("integration") });
    expect(Buffer.from(q.value).toString()).toBe("first");
    const sync = await client.broadcastTxSync({ tx: new TextEncoder().encode(`cosmjs-sync-${kind}=1`) });
    expect(sync.code).toBe(0);
    const commit = await client.broadcastTxCommit({ tx: new TextEncoder().encode(`cosmjs-${kind}=1`) });
    expect(commit.txResult?.code).toBe(0);
    const t = await client.tx({ hash: commit.hash });
    expect(t.height).toBe(commit.height);
    const search = await client.txSearch({ query: `tx.height=${commit.height}` });
    expect(search.txs.some((x) => Buffer.from(x.hash).equals(Buffer.from(commit.hash)))).toBe(true);
    const bs = await client.blockSearch({ query: `block.height=${commit.height}` });
    expect(bs.totalCount).toBe(1);
  });

  if (kind === "ws") {
    test("default: subscribeNewBlock and subscribeTx", async () => {
      const block = await new Promise<number>((resolve, reject) => {
        const sub = client.subscribeNewBlock().subscribe({
          next: (e) => {
            sub.unsubscribe();
            resolve(e.header.height);
          },
          error: reject,
        });
      });
      expect(block).toBeGreaterThan(0);
      const tx = new TextEncoder().encode("cosmjs-event=1");
      const got = new Promise<Uint8Array>((resolve, reject) => {
        const sub = client.subscribeTx().subscribe({
          next: (e) => {
            sub.unsubscribe();
            resolve(e.tx);
          },
          error: reject,
        });
      });
      await client.broadcastTxSync({ tx });
      expect(Buffer.from(await got).toString()).toBe("cosmjs-event=1");
    });
  }
});
