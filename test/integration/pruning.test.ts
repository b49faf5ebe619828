import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { open } from "lmdb";
import { afterAll, describe, expect, test } from "vitest";
import { createTestnet } from "../../src/config/index.js";
import { keyFromPrivate, signTx } from "../../src/rpc/evm/testing/signing.js";
import { bytesToHex, hexToBytes } from "../../src/util/bytes.js";
import { makeTempHome, rpcGet } from "./testNode.js";
import { freePorts, TestnetProcess } from "./testnetHarness.js";

/**
 * Pruning by min-retain-blocks (docs/operations.md, "Pruning") on real processes: an EVM validator
 * keeping 10 blocks, with a full node beside it. Blocks are made only for txs
 * (create_empty_blocks = false), so the test decides every height.
 */

const RETAIN = 10;
/** Hardhat's first dev account, funded by the EVM genesis `cometh init` writes. */
const DEV = keyFromPrivate(
  hexToBytes("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80") as Uint8Array,
);
const TO = hexToBytes("0x00000000000000000000000000000000000000aa") as Uint8Array;

interface RpcError {
  code: number;
  message: string;
  data?: string;
}

async function cometCall(url: string, method: string, params: Record<string, unknown>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as { result?: Record<string, unknown>; error?: RpcError };
}

async function ethCall(url: string, method: string, params: unknown[]) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: RpcError };
}

/** The last page LMDB has used in each of the node's databases (read after the node stopped). */
async function lastPages(home: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of ["node.lmdb", "evm.db/data.mdb", "tx_index.lmdb"]) {
    const env = open({ path: join(home, "data", name), maxDbs: 64 });
    out[name] = (env.getStats() as { lastPageNumber: number }).lastPageNumber;
    await env.close();
  }
  return out;
}

describe("pruning: min-retain-blocks on a validator with a full node", () => {
  let close: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await close?.();
  });

  test("behavior: base moves, pruned heights answer like CometBFT and Cosmos EVM, disk stays bounded, restart and block sync work", async () => {
    const { home: dir, cleanup } = await makeTempHome("cometh-pruning-");
    const ports = await freePorts(8);
    const { nodes } = await createTestnet({
      outputDir: dir,
      validators: 1,
      nonValidators: 1,
      chainId: "cometh-pruning",
      proxyApp: "evm",
      ports: (i) => ({
        p2p: ports[i * 4] as number,
        rpc: ports[i * 4 + 1] as number,
        jsonRpc: ports[i * 4 + 2] as number,
        jsonRpcWs: ports[i * 4 + 3] as number,
      }),
      config: {
        log_level: "info",
        "consensus.timeout_propose": "600ms",
        "consensus.timeout_commit": "50ms",
        "consensus.create_empty_blocks": false,
      },
    });
    const [vNode, fullNode] = nodes;
    if (vNode === undefined || fullNode === undefined) throw new Error("createTestnet made fewer than 2 nodes");
    const [v, full] = [new TestnetProcess(vNode, true), new TestnetProcess(fullNode, true)];
    close = async () => {
      await Promise.all([v.kill(), full.kill()]);
      await cleanup();
    };
    // Evidence expires after 5 blocks and 1 ns: the SDK rule then gives commit height − 10.
    for (const n of nodes) {
      const file = join(n.home, "config", "genesis.json");
      const g = JSON.parse(readFileSync(file, "utf8"));
      g.consensus_params.evidence.max_age_num_blocks = "5";
      g.consensus_params.evidence.max_age_duration = "1";
      writeFileSync(file, JSON.stringify(g, null, 2));
    }
    const appToml = join(v.node.home, "config", "app.toml");
    writeFileSync(
      appToml,
      readFileSync(appToml, "utf8").replace(/^min-retain-blocks = 0$/m, `min-retain-blocks = ${RETAIN}`),
    );
    expect(readFileSync(appToml, "utf8")).toContain(`min-retain-blocks = ${RETAIN}`);

    await Promise.all([v.start(), full.start()]);
    let nonce = 0n;
    /** One transfer through broadcast_tx_commit: its tx hashes and height. */
    const send = async () => {
      const { raw, tx } = signTx(
        {
          type: 2,
          nonce: nonce++,
          to: TO,
          value: 1n,
          gasLimit: 21_000n,
          maxFeePerGas: 10n ** 12n,
          maxPriorityFeePerGas: 1n,
          chainId: 262144n,
        },
        DEV,
      );
      const r = await cometCall(v.rpcUrl, "broadcast_tx_commit", { tx: Buffer.from(raw).toString("base64") });
      const res = r.result as { hash: string; height: string; tx_result: { code: number } } | undefined;
      expect(res?.tx_result.code, JSON.stringify(r)).toBe(0);
      return { cometHash: res?.hash ?? "", ethHash: `0x${bytesToHex(tx.hash())}`, height: Number(res?.height) };
    };
    /**
     * Sends until the validator reaches `height`, then waits out the proof block: the chain is then idle.
     * With the full node running, each send waits until it has the block too: a follower that falls
     * more than the retained window behind can never get the pruned blocks again (as with CometBFT), and
     * on an idle machine the validator makes blocks faster than a consensus follower catches up.
     */
    const sendUntil = async (height: number, follower?: TestnetProcess) => {
      let last = await send();
      await follower?.waitForHeight(last.height);
      while ((await v.height()) < height) {
        last = await send();
        await follower?.waitForHeight(last.height);
      }
      const idle = await v.waitForHeight(last.height + 1);
      // The latest block is stored before its Commit prunes: wait for the base that height gives.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const s = await rpcGet<{ sync_info: Record<string, string> }>(v.rpcUrl, "status");
        if (Number(s.sync_info.earliest_block_height) === idle - RETAIN) return idle;
        if (Date.now() > deadline) throw new Error(`base not at ${idle - RETAIN}: ${JSON.stringify(s.sync_info)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const first = await send();
    // 35 heights: the base (top − 10) is well above the first tx's height, and 20 pruned heights have
    // freed pages for the disk check below to see reused.
    const top = await sendUntil(35, full);

    // Node RPC: the base moved to top − 10 and pruned heights are refused with CometBFT's text.
    const status = await rpcGet<{ sync_info: Record<string, string> }>(v.rpcUrl, "status");
    const base = Number(status.sync_info.earliest_block_height);
    expect(base).toBe(top - RETAIN);
    expect(status.sync_info.earliest_block_hash).not.toBe("");
    const pruned = first.height;
    for (const route of ["block", "block_results", "commit", "header", "validators"]) {
      const r = await cometCall(v.rpcUrl, route, { height: String(pruned) });
      expect(r.error, route).toEqual({
        code: -32603,
        message: "Internal error",
        data: `height ${pruned} is not available, lowest height is ${base}`,
      });
      const ok = await cometCall(v.rpcUrl, route, { height: String(base) });
      expect(ok.error, route).toBeUndefined();
    }
    const chain = await cometCall(v.rpcUrl, "blockchain", { minHeight: "1", maxHeight: String(base + 1) });
    const metas = ((chain.result?.block_metas ?? []) as { header: { height: string } }[]).map((m) =>
      Number(m.header.height),
    );
    expect(metas).toEqual([base + 1, base]);
    // Indexer: the pruned heights' txs are gone, retained ones stay.
    const tx = await cometCall(v.rpcUrl, "tx", { hash: Buffer.from(first.cometHash, "hex").toString("base64") });
    expect(tx.error?.data).toBe(`tx (${first.cometHash}) not found`);
    const search = await cometCall(v.rpcUrl, "tx_search", { query: `tx.height=${pruned}` });
    expect(search.result?.total_count).toBe("0");
    const kept = await cometCall(v.rpcUrl, "tx_search", { query: `tx.height>=${base}` });
    expect(Number(kept.result?.total_count)).toBeGreaterThan(0);
    const blocks = await cometCall(v.rpcUrl, "block_search", { query: `block.height<${base}` });
    expect(blocks.result?.total_count).toBe("0");

    // Ethereum JSON-RPC: pruned blocks, txs and receipts are unknown (null); state there is refused.
    const hex = (n: number) => `0x${n.toString(16)}`;
    expect((await ethCall(v.evmUrl, "eth_getBlockByNumber", [hex(pruned), false])).result).toBeNull();
    expect((await ethCall(v.evmUrl, "eth_getTransactionByHash", [first.ethHash])).result).toBeNull();
    expect((await ethCall(v.evmUrl, "eth_getTransactionReceipt", [first.ethHash])).result).toBeNull();
    const balance = await ethCall(v.evmUrl, "eth_getBalance", [`0x${bytesToHex(DEV.address)}`, hex(pruned)]);
    expect(balance.error?.code).toBe(-32000);
    expect(balance.error?.message).toMatch(
      new RegExp(
        `^failed to load state at height ${pruned}; version does not exist \\(earliest: ${base - 1}, latest height: ${top}\\)`,
      ),
    );
    const logs = await ethCall(v.evmUrl, "eth_getLogs", [{ fromBlock: hex(pruned), toBlock: "latest" }]);
    expect(logs.error).toEqual({
      code: -32000,
      message: `failed to fetch block result from CometBFT: height ${pruned} is not available, lowest height is ${base}`,
    });
    expect((await ethCall(v.evmUrl, "eth_getLogs", [{ fromBlock: "earliest", toBlock: "latest" }])).result).toEqual([]);
    expect((await ethCall(v.evmUrl, "eth_getBlockByNumber", [hex(base), false])).result).not.toBeNull();
    expect(
      (await ethCall(v.evmUrl, "eth_getBalance", [`0x${bytesToHex(DEV.address)}`, hex(base)])).error,
    ).toBeUndefined();

    // The full node followed by consensus; it stops, and rejoins below once the validator moved on.
    const atStop = await full.waitForHeight(top);
    await full.stop();

    // Restart after pruning: the same base, and it goes on.
    await v.stop();
    const pagesAtTop = await lastPages(v.node.home);
    await v.start();
    const restarted = await rpcGet<{ sync_info: Record<string, string> }>(v.rpcUrl, "status");
    expect(Number(restarted.sync_info.earliest_block_height)).toBe(base);
    await sendUntil(atStop + 8);

    // Block sync from the pruned validator: the full node's next height is still kept there.
    const vBase = Number(
      (await rpcGet<{ sync_info: Record<string, string> }>(v.rpcUrl, "status")).sync_info.earliest_block_height,
    );
    expect(vBase).toBeGreaterThan(1);
    expect(vBase).toBeLessThanOrEqual(atStop + 1);
    await full.start();
    const synced = await v.height();
    await full.waitForHeight(synced);
    for (const h of [atStop + 1, synced]) expect(await full.blockHash(h)).toBe(await v.blockHash(h));

    // Disk: 70 more heights with the same window; the pruned pages are used again (unpruned, the databases grow several kB per height).
    await sendUntil(top + 70, full);
    await full.waitForHeight(await v.height());
    await v.stop();
    const pagesAtEnd = await lastPages(v.node.home);
    for (const name of Object.keys(pagesAtTop)) {
      expect(pagesAtEnd[name], `${name}: ${JSON.stringify({ pagesAtTop, pagesAtEnd })}`).toBeLessThanOrEqual(
        (pagesAtTop[name] as number) + 32,
      );
    }
  }, 300_000);
});
