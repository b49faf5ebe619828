import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseQuery } from "../../events/index.js";
import { type AbciEvent, type ExecTxResult, txHash } from "../../types/index.js";
import { bytesToHex, bytesToHexUpper } from "../../util/bytes.js";
import { EmptyTxHashError, TxHashQueryError } from "../errors.js";
import type { BlockIndexInput, IndexedTx, Indexer } from "../indexer.js";

/**
 * One behaviour suite for every indexer backend (kv over memory and LMDB, psql): they must answer
 * alike. Expectations follow CometBFT v0.38's kv indexers (see searchPlan.ts).
 */

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** An event; attributes listed in `hidden` get `index: false`. */
export function ev(type: string, attrs: Record<string, string>, hidden: readonly string[] = []): AbciEvent {
  return {
    type,
    attributes: Object.entries(attrs).map(([key, value]) => ({ key, value, index: !hidden.includes(key) })),
  };
}

export function txResult(events: AbciEvent[], code = 0): ExecTxResult {
  return {
    code,
    data: Uint8Array.of(1, 2),
    log: code === 0 ? "" : "failed",
    info: "",
    gasWanted: 10n,
    gasUsed: 7n,
    events,
    codespace: code === 0 ? "" : "app",
  };
}

export function block(
  height: number,
  finalizeBlockEvents: AbciEvent[],
  txs: [string, ExecTxResult][],
): BlockIndexInput {
  return {
    height,
    finalizeBlockEvents,
    txs: txs.map(([t]) => utf8.encode(t)),
    txResults: txs.map(([, r]) => r),
  };
}

export const FIXTURE: BlockIndexInput[] = [
  block(
    1,
    [
      ev("reward", { validator: "v1", amount: "10" }),
      ev("reward", { validator: "v2", amount: "3" }),
      ev("note", { text: "hello" }, ["text"]),
    ],
    [
      [
        "a=1",
        txResult([
          ev("transfer", { sender: "alice", recipient: "bob", amount: "10" }),
          ev("transfer", { sender: "carol", recipient: "dave", amount: "3" }),
          ev("message", { action: "send", secret: "x" }, ["secret"]),
        ]),
      ],
      ["b=2", txResult([ev("transfer", { sender: "bob", amount: "100" })])],
    ],
  ),
  block(
    2,
    [ev("reward", { validator: "v1", amount: "25" })],
    [
      ["c=3", txResult([ev("transfer", { sender: "alice", amount: "2.5" })])],
      [
        "d=4",
        txResult([
          ev("transfer", { sender: "erin", amount: "-3" }),
          ev("ts", { at: "2024-01-02T03:04:05Z", day: "2024-01-02" }),
        ]),
      ],
    ],
  ),
  block(
    3,
    [],
    [
      [
        "e=5",
        txResult([
          ev("transfer", { sender: "alice", amount: " 7 " }),
          ev("big", { n: "123456789012345678901234567890", f: "1e3", s: "8stake" }),
        ]),
      ],
    ],
  ),
  block(4, [ev("reward", { validator: "v3", amount: "7" })], []),
];

export function names(txs: readonly IndexedTx[]): string[] {
  return txs.map((t) => fromUtf8.decode(t.tx)).sort();
}

const hashOf = (text: string) => txHash(utf8.encode(text));

/** Defines the suite; `open` builds an empty indexer (each call a separate index). */
export function describeIndexerBehaviour(name: string, open: () => Promise<Indexer>): void {
  describe(`${name}: indexer behaviour`, () => {
    let idx: Indexer;
    const opened: Indexer[] = [];
    const fresh = async () => {
      const i = await open();
      opened.push(i);
      return i;
    };
    const txs = async (q: string) => names(await idx.searchTxs(parseQuery(q)));
    const blocks = async (q: string) => [...(await idx.searchBlocks(parseQuery(q)))].sort((a, b) => a - b);

    beforeAll(async () => {
      idx = await fresh();
      for (const b of FIXTURE) await idx.indexBlock(b);
    });
    afterAll(async () => {
      for (const i of opened) await i.close();
    });

    test("default: both indexes are on", () => {
      expect(idx.txIndexEnabled).toBe(true);
      expect(idx.blockIndexEnabled).toBe(true);
    });

    test("default: lastIndexedHeight is the highest indexed block, 0 when empty", async () => {
      expect(await idx.lastIndexedHeight()).toBe(Math.max(...FIXTURE.map((b) => b.height)));
      expect(await (await fresh()).lastIndexedHeight()).toBe(0);
    });

    test("default: getTx returns the stored TxResult", async () => {
      const got = await idx.getTx(hashOf("d=4"));
      expect(got).toEqual({
        height: 2,
        index: 1,
        tx: utf8.encode("d=4"),
        result: FIXTURE[1]?.txResults[1],
      });
    });

    test("default: getTx of an unknown hash is undefined", async () => {
      expect(await idx.getTx(new Uint8Array(32))).toBeUndefined();
      expect(await idx.getTx(new Uint8Array(3000).fill(1))).toBeUndefined();
      expect(await txs(`tx.hash = '${"ab".repeat(1500)}'`)).toEqual([]);
    });

    test("error: getTx of an empty hash", async () => {
      await expect(async () => idx.getTx(new Uint8Array(0))).rejects.toThrow(EmptyTxHashError);
      await expect(async () => idx.getTx(new Uint8Array(0))).rejects.toThrowErrorMatchingInlineSnapshot(
        `[EmptyTxHashError: transaction hash cannot be empty]`,
      );
    });

    test("args: tx.hash looks the tx up, hex in either case, whatever else the query says", async () => {
      const hex = bytesToHexUpper(hashOf("c=3"));
      expect(await txs(`tx.hash = '${hex}'`)).toEqual(["c=3"]);
      expect(await txs(`tx.hash = '${hex.toLowerCase()}'`)).toEqual(["c=3"]);
      expect(await txs(`transfer.sender = 'nobody' AND tx.hash = '${hex}'`)).toEqual(["c=3"]);
      expect(await txs(`tx.hash = '${"00".repeat(32)}'`)).toEqual([]);
    });

    test("error: tx.hash that is not hex", async () => {
      await expect(async () => txs("tx.hash = 'XYZW'")).rejects.toThrow(TxHashQueryError);
      await expect(async () => txs("tx.hash = 'XYZW'")).rejects.toThrowErrorMatchingInlineSnapshot(
        `[TxHashQueryError: error during searching for a hash in the query: encoding/hex: invalid byte: U+0058 'X']`,
      );
      await expect(async () => txs("tx.hash = 'ABC'")).rejects.toThrowErrorMatchingInlineSnapshot(
        `[TxHashQueryError: error during searching for a hash in the query: encoding/hex: odd length hex string]`,
      );
      await expect(async () => txs("tx.hash EXISTS")).rejects.toThrowErrorMatchingInlineSnapshot(
        `[EmptyTxHashError: error while retrieving the result: transaction hash cannot be empty]`,
      );
    });

    test("args: = on an attribute", async () => {
      expect(await txs("transfer.sender = 'alice'")).toEqual(["a=1", "c=3", "e=5"]);
      expect(await txs("message.action = 'send'")).toEqual(["a=1"]);
      expect(await txs("transfer.sender = 'zed'")).toEqual([]);
    });

    test("behavior: = compares the text as written, numbers included", async () => {
      expect(await txs("transfer.amount = 10")).toEqual(["a=1"]);
      expect(await txs("transfer.amount = 10.0")).toEqual([]);
      expect(await txs("transfer.amount = 7")).toEqual([]); // stored as " 7 "
      expect(await txs("ts.at = TIME 2024-01-02T03:04:05Z")).toEqual(["d=4"]);
    });

    test("behavior: index=false attributes are not searchable", async () => {
      expect(await txs("message.secret = 'x'")).toEqual([]);
      expect(await txs("message.secret EXISTS")).toEqual([]);
      expect(await blocks("note.text = 'hello'")).toEqual([]);
      expect(await blocks("note.text EXISTS")).toEqual([]);
    });

    test("behavior: AND needs every condition in the same event", async () => {
      expect(await txs("transfer.sender = 'alice' AND transfer.recipient = 'bob'")).toEqual(["a=1"]);
      expect(await txs("transfer.sender = 'alice' AND transfer.recipient = 'dave'")).toEqual([]);
      expect(await txs("transfer.sender = 'carol' AND transfer.amount = 3")).toEqual(["a=1"]);
      expect(await txs("transfer.sender = 'alice' AND message.action = 'send'")).toEqual([]);
      expect(await txs("transfer.sender = 'alice' AND transfer.amount > 5")).toEqual(["a=1", "e=5"]);
    });

    test("args: < <= > >= on numbers (whole value parsed as a Go big.Int/big.Float, trimmed)", async () => {
      expect(await txs("transfer.amount > 5")).toEqual(["a=1", "b=2", "e=5"]);
      expect(await txs("transfer.amount >= 10")).toEqual(["a=1", "b=2"]);
      expect(await txs("transfer.amount < 3")).toEqual(["c=3", "d=4"]);
      expect(await txs("transfer.amount <= 3")).toEqual(["a=1", "c=3", "d=4"]);
      expect(await txs("transfer.amount > 2.5")).toEqual(["a=1", "b=2", "e=5"]);
      expect(await txs("transfer.amount >= 2.5")).toEqual(["a=1", "b=2", "c=3", "e=5"]);
      expect(await txs("big.f > 999")).toEqual(["e=5"]);
      expect(await txs("big.s > 1")).toEqual([]);
    });

    test("args: big integers compare exactly", async () => {
      expect(await txs("big.n > 123456789012345678901234567889")).toEqual(["e=5"]);
      expect(await txs("big.n > 123456789012345678901234567890")).toEqual([]);
      expect(await txs("big.n >= 123456789012345678901234567890")).toEqual(["e=5"]);
      expect(await txs("big.n < 123456789012345678901234567890.5")).toEqual(["e=5"]);
    });

    test("behavior: bounds on one key merge into one range a single value must satisfy", async () => {
      expect(await txs("transfer.amount > 5 AND transfer.amount < 50")).toEqual(["a=1", "e=5"]);
      expect(await txs("transfer.amount > 50 AND transfer.amount < 5")).toEqual([]);
      // query_range.go: a later bound replaces an earlier one; the inclusive flag stays.
      expect(await txs("transfer.amount > 50 AND transfer.amount >= 3")).toEqual(["a=1", "b=2", "e=5"]);
    });

    test("args: CONTAINS", async () => {
      expect(await txs("transfer.sender CONTAINS 'ali'")).toEqual(["a=1", "c=3", "e=5"]);
      expect(await txs("transfer.sender CONTAINS 'o'")).toEqual(["a=1", "b=2"]);
      expect(await txs("transfer.sender CONTAINS ''")).toEqual(["a=1", "b=2", "c=3", "d=4", "e=5"]);
      expect(await blocks("reward.validator CONTAINS 'v'")).toEqual([1, 2, 4]);
    });

    test("args: EXISTS needs the composite key", async () => {
      expect(await txs("transfer.sender EXISTS")).toEqual(["a=1", "b=2", "c=3", "d=4", "e=5"]);
      expect(await txs("ts.day EXISTS")).toEqual(["d=4"]);
      expect(await txs("transfer EXISTS")).toEqual([]);
      expect(await blocks("reward.amount EXISTS")).toEqual([1, 2, 4]);
      expect(await blocks("reward EXISTS")).toEqual([]);
    });

    test("args: TIME and DATE ranges", async () => {
      expect(await txs("ts.at > TIME 2024-01-01T00:00:00Z")).toEqual(["d=4"]);
      expect(await txs("ts.at < TIME 2024-01-01T00:00:00Z")).toEqual([]);
      expect(await txs("ts.at >= TIME 2024-01-02T03:04:05Z AND ts.at <= TIME 2024-01-02T03:04:05Z")).toEqual(["d=4"]);
      expect(await txs("ts.day >= DATE 2024-01-02")).toEqual(["d=4"]);
      expect(await txs("ts.day > DATE 2024-01-02")).toEqual([]);
    });

    test("args: tx.height = and ranges", async () => {
      expect(await txs("tx.height = 2")).toEqual(["c=3", "d=4"]);
      expect(await txs("tx.height = 9")).toEqual([]);
      expect(await txs("tx.height > 1")).toEqual(["c=3", "d=4", "e=5"]);
      expect(await txs("tx.height >= 2 AND tx.height < 3")).toEqual(["c=3", "d=4"]);
      expect(await txs("tx.height <= 1")).toEqual(["a=1", "b=2"]);
      expect(await txs("tx.height EXISTS")).toEqual(["a=1", "b=2", "c=3", "d=4", "e=5"]);
    });

    test("behavior: tx.height filters the other conditions", async () => {
      expect(await txs("tx.height = 1 AND transfer.sender = 'alice'")).toEqual(["a=1"]);
      expect(await txs("transfer.sender = 'alice' AND tx.height > 1")).toEqual(["c=3", "e=5"]);
      expect(await txs("tx.height >= 2 AND tx.height <= 2 AND transfer.amount < 3")).toEqual(["c=3", "d=4"]);
      // dedupHeight: the first `=` wins; a range on tx.height drops every `=`.
      expect(await txs("tx.height = 1 AND tx.height = 2")).toEqual(["a=1", "b=2"]);
      expect(await txs("tx.height = 1 AND tx.height > 2")).toEqual(["e=5"]);
    });

    test("behavior: tm.event is not indexed for txs", async () => {
      expect(await txs("tm.event = 'Tx'")).toEqual([]);
    });

    test("args: block.height = and ranges", async () => {
      expect(await blocks("block.height = 2")).toEqual([2]);
      expect(await blocks("block.height = 9")).toEqual([]);
      expect(await blocks("block.height > 1")).toEqual([2, 3, 4]);
      expect(await blocks("block.height >= 2 AND block.height <= 3")).toEqual([2, 3]);
      expect(await blocks("block.height < 2")).toEqual([1]);
      expect(await blocks("block.height EXISTS")).toEqual([]);
    });

    test("args: fractional, huge and zero height bounds", async () => {
      expect(await blocks("block.height > 1.5")).toEqual([2, 3, 4]);
      expect(await blocks("block.height <= 2.9")).toEqual([1, 2]);
      expect(await blocks("block.height > 99999999999999999999")).toEqual([]);
      expect(await blocks("block.height < 99999999999999999999")).toEqual([1, 2, 3, 4]);
      expect(await txs("tx.height < 1.5")).toEqual(["a=1", "b=2"]);
      expect(await txs("transfer.sender = 'alice' AND tx.height > 2.5")).toEqual(["e=5"]);
      // Arg.Number().Int64() truncates; a zero height filters nothing.
      expect(await blocks("block.height = 2.7")).toEqual([2]);
      expect(await blocks("block.height = 0 AND reward.validator = 'v1'")).toEqual([1, 2]);
      expect(await txs("tx.height = 0 AND transfer.sender = 'bob'")).toEqual(["b=2"]);
    });

    test("args: block events", async () => {
      expect(await blocks("reward.validator = 'v1'")).toEqual([1, 2]);
      expect(await blocks("reward.amount > 5")).toEqual([1, 2, 4]);
      expect(await blocks("reward.amount > 5 AND block.height > 1")).toEqual([2, 4]);
      expect(await blocks("block.height = 2 AND reward.validator = 'v1'")).toEqual([2]);
      expect(await blocks("block.height = 1 AND reward.amount < 5")).toEqual([1]);
      expect(await blocks("tx.height = 1")).toEqual([]);
    });

    test("behavior: block conditions must hold in the same event", async () => {
      expect(await blocks("reward.validator = 'v1' AND reward.amount = 3")).toEqual([]);
      expect(await blocks("reward.validator = 'v2' AND reward.amount = 3")).toEqual([1]);
      expect(await blocks("reward.validator = 'v1' AND reward.amount >= 10")).toEqual([1, 2]);
    });

    test("behavior: indexing a block again changes nothing", async () => {
      const i = await fresh();
      await i.indexBlock(FIXTURE[0] as BlockIndexInput);
      await i.indexBlock(FIXTURE[0] as BlockIndexInput);
      expect(names(await i.searchTxs(parseQuery("transfer.sender EXISTS")))).toEqual(["a=1", "b=2"]);
      expect(await i.searchBlocks(parseQuery("reward.validator EXISTS"))).toEqual([1]);
    });

    test("behavior: a failed result does not replace a successful one", async () => {
      const i = await fresh();
      await i.indexBlock(block(1, [], [["x", txResult([ev("m", { k: "ok" })])]]));
      await i.indexBlock(block(2, [], [["x", txResult([ev("m", { k: "failed" })], 5)]]));
      expect(await i.getTx(hashOf("x"))).toMatchObject({ height: 1, result: { code: 0 } });
      await i.indexBlock(block(3, [], [["y", txResult([], 5)]]));
      await i.indexBlock(block(4, [], [["y", txResult([])]]));
      expect(await i.getTx(hashOf("y"))).toMatchObject({ height: 4, result: { code: 0 } });
    });

    test("behavior: tx.hash ignores every other condition", async () => {
      expect(await txs(`tx.hash = '${bytesToHex(hashOf("a=1"))}' AND tx.height = 99`)).toEqual(["a=1"]);
    });
  });
}
