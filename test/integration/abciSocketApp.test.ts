import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Request, Response } from "cosmjs-types/tendermint/abci/types";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FakeAbciServer } from "../../src/app/socket/testing.js";
import { type InProcessNode, startInProcessNode } from "./inProcessNode.js";
import { rpcGet, waitForHeight } from "./testNode.js";

/**
 * A node driving an external application over the ABCI socket protocol, without Go: the app is a
 * small counter served by an in-process socket server that behaves as Go's (answers on Flush). The
 * same paths against Go's own `abci-cli kvstore` are in test/interop/abciSocket.test.ts.
 */

/** The app: counts the txs it has executed; its app hash is that count as 8 big-endian bytes. */
class CounterApp {
  height = 0n;
  count = 0;
  #pending = 0;

  hash(count: number): Uint8Array {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigUint64(0, BigInt(count));
    return out;
  }

  answer(req: Request, kind: string): Response | undefined {
    switch (kind) {
      case "info":
        return {
          info: {
            data: "counter",
            version: "1.0",
            appVersion: 1n,
            lastBlockHeight: this.height,
            lastBlockAppHash: this.height === 0n ? new Uint8Array(0) : this.hash(this.count),
          },
        };
      case "initChain":
        return { initChain: { validators: [], appHash: new Uint8Array(0) } };
      case "checkTx": {
        const bad = Buffer.from(req.checkTx?.tx ?? []).toString() === "bad";
        return {
          checkTx: {
            code: bad ? 7 : 0,
            data: new Uint8Array(0),
            log: bad ? "refused" : "",
            info: "",
            gasWanted: 1n,
            gasUsed: 0n,
            events: [],
            codespace: bad ? "counter" : "",
          },
        };
      }
      case "prepareProposal":
        return { prepareProposal: { txs: req.prepareProposal?.txs ?? [] } };
      case "processProposal":
        return { processProposal: { status: 1 } };
      case "finalizeBlock": {
        const txs = req.finalizeBlock?.txs ?? [];
        this.#pending = this.count + txs.length;
        this.height = req.finalizeBlock?.height ?? 0n;
        return {
          finalizeBlock: {
            events: [],
            txResults: txs.map((tx) => ({
              code: 0,
              data: tx,
              log: "counted",
              info: "",
              gasWanted: 1n,
              gasUsed: 1n,
              events: [
                { type: "counter", attributes: [{ key: "tx", value: Buffer.from(tx).toString(), index: true }] },
              ],
              codespace: "",
            })),
            validatorUpdates: [],
            appHash: this.hash(this.#pending),
          },
        };
      }
      case "commit":
        this.count = this.#pending;
        return { commit: { retainHeight: 0n } };
      case "query":
        return {
          query: {
            code: 0,
            log: "",
            info: "",
            index: 0n,
            key: req.query?.data ?? new Uint8Array(0),
            value: Buffer.from(String(this.count)),
            height: this.height,
            codespace: "",
          },
        };
      default:
        return undefined;
    }
  }
}

let dir: string;
let fake: FakeAbciServer;
let app: CounterApp;
let node: InProcessNode;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cometh-abci-it-"));
  const path = join(dir, "app.sock");
  app = new CounterApp();
  fake = new FakeAbciServer();
  fake.answer = (req, kind) => app.answer(req, kind);
  await fake.listen(path);
  node = await startInProcessNode({ "--proxy_app": `unix://${path}` });
});

afterAll(async () => {
  await node?.close();
  await fake?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a node on an external ABCI application (socket protocol)", () => {
  test("default: the app's results and hashes, on the four connections CometBFT opens", async () => {
    await waitForHeight(node.rpcUrl, 2);
    const res = await rpcGet<{
      check_tx: { code: number };
      tx_result: { code: number; data: string; log: string; events: unknown[] };
      height: string;
    }>(node.rpcUrl, "broadcast_tx_commit", { tx: '"one"' });
    expect(res.check_tx.code).toBe(0);
    expect(res.tx_result).toMatchObject({ code: 0, data: Buffer.from("one").toString("base64"), log: "counted" });
    expect(res.tx_result.events).toEqual([{ type: "counter", attributes: [{ key: "tx", value: "one", index: true }] }]);
    const bad = await rpcGet<{ code: number; log: string; codespace: string }>(node.rpcUrl, "broadcast_tx_sync", {
      tx: '"bad"',
    });
    expect(bad).toMatchObject({ code: 7, log: "refused", codespace: "counter" });

    // FinalizeBlock's app hash is in the next header.
    const h = Number(res.height);
    await waitForHeight(node.rpcUrl, h + 1);
    const header = await rpcGet<{ header: { app_hash: string } }>(node.rpcUrl, "header", { height: String(h + 1) });
    expect(header.header.app_hash).toBe("0000000000000001");
    const q = await rpcGet<{ response: { value: string } }>(node.rpcUrl, "abci_query", { data: '"n"' });
    expect(Buffer.from(q.response.value, "base64").toString()).toBe("1");
    const info = await rpcGet<{ response: { data: string } }>(node.rpcUrl, "abci_info");
    expect(info.response.data).toBe("counter");

    // query, snapshot, mempool, consensus: in the order accepted.
    expect(fake.received).toHaveLength(4);
    expect(new Set(fake.received[0])).toEqual(new Set(["info", "flush", "query"]));
    expect(fake.received[1]).toEqual([]);
    expect(new Set(fake.received[2])).toEqual(new Set(["checkTx", "flush"]));
    expect(new Set(fake.received[3])).toEqual(
      new Set(["initChain", "prepareProposal", "processProposal", "finalizeBlock", "commit", "flush"]),
    );
  });

  test("error: losing the application stops the node", async () => {
    for (const s of fake.sockets) s.destroy();
    const err = await node.node.failed;
    expect(err.message).toMatch(/^ABCI (query|snapshot|mempool|consensus) connection: /);
    await expect(rpcGet(node.rpcUrl, "status")).rejects.toThrow();
  });
});
