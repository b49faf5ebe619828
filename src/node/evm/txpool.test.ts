import { describe, expect, test } from "vitest";
import { type EvmReader, txKey } from "../../app/evm/index.js";
import type { Mempool } from "../../mempool/index.js";
import type { EvmFeed } from "./feed.js";
import { EvmTxPoolAdapter } from "./txpool.js";

/** The adapter over fakes: what reached the mempool, the feed and the app's sender hints, in order. */
function adapter() {
  const seen: string[] = [];
  const mempool = {
    checkTx: async (raw: Uint8Array) => {
      seen.push(`checkTx ${txKey(raw)}`);
      return { code: 0, log: "" };
    },
  } as unknown as Mempool;
  const feed = { pendingTransaction: () => seen.push("pending") } as unknown as EvmFeed;
  const hint = (key: string, sender: Uint8Array) => seen.push(`hint ${key} ${Buffer.from(sender).toString("hex")}`);
  return { pool: new EvmTxPoolAdapter(mempool, {} as EvmReader, feed, hint), seen };
}

describe("EvmTxPoolAdapter", () => {
  test("behavior: a tx the node signed itself hands its signer to the app before CheckTx; other txs do not", async () => {
    const { pool, seen } = adapter();
    const raw = Uint8Array.from([2, 0xc0, 1, 2, 3]);
    const signer = new Uint8Array(20).fill(0xab);
    expect((await pool.submit(raw, signer)).accepted).toBe(true);
    expect(seen).toEqual([`hint ${txKey(raw)} ${"ab".repeat(20)}`, `checkTx ${txKey(raw)}`, "pending"]);
    seen.length = 0;
    await pool.submit(raw);
    expect(seen).toEqual([`checkTx ${txKey(raw)}`, "pending"]);
  });
});
