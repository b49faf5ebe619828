import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseQuery } from "../events/index.js";
import { txHash } from "../types/index.js";
import { bytesToHexUpper } from "../util/bytes.js";
import { PsqlIndexerError } from "./errors.js";
import type { Indexer } from "./indexer.js";
import { createPsqlIndexer } from "./psqlIndexer.js";
import { block, describeIndexerBehaviour, ev, FIXTURE, names, txResult } from "./testing/indexerSuite.js";
import { decodeTxResult } from "./txResultCodec.js";

/**
 * Needs a PostgreSQL server: `eval "$(.ci/postgres.sh)"` sets COMETH_TEST_PG_URL. Each run works in
 * a fresh schema (search_path), dropped afterwards; each indexer gets its own chain id.
 */
const PG_URL = process.env.COMETH_TEST_PG_URL;

describe.skipIf(PG_URL === undefined || PG_URL === "")("psql indexer", () => {
  const schema = `cometh_test_${randomBytes(6).toString("hex")}`;
  const url = (() => {
    const base = PG_URL ?? "";
    const sep = base.includes("?") ? "&" : "?";
    return `${base}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  })();
  let admin: pg.Client;
  const opened: Indexer[] = [];

  const open = async (chainId = `chain-${randomBytes(4).toString("hex")}`) => {
    const idx = await createPsqlIndexer({ connectionString: url, chainId });
    opened.push(idx);
    return idx;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
  });

  afterAll(async () => {
    for (const idx of opened) await idx.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });

  describeIndexerBehaviour("psql", () => open());

  test("default: creates CometBFT's tables and views, and reuses them", async () => {
    await open();
    await open();
    const r = await admin.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [schema],
    );
    expect(r.rows.map((x) => x.table_name)).toEqual([
      "attributes",
      "block_events",
      "blocks",
      "event_attributes",
      "events",
      "tx_events",
      "tx_results",
    ]);
  });

  test("default: rows as CometBFT's psql sink writes them", async () => {
    const chainId = `rows-${randomBytes(4).toString("hex")}`;
    const idx = await open(chainId);
    await idx.indexBlock(FIXTURE[0] ?? block(1, [], []));
    const hash = bytesToHexUpper(txHash(new TextEncoder().encode("a=1")));

    const blockRows = await admin.query(
      `SELECT type, key, composite_key, value FROM ${schema}.block_events WHERE chain_id = $1 ORDER BY type, key, value`,
      [chainId],
    );
    expect(blockRows.rows).toEqual([
      { type: "block", key: "height", composite_key: "block.height", value: "1" },
      // note.text is not indexed: the event is stored without attributes.
      { type: "note", key: null, composite_key: null, value: null },
      { type: "reward", key: "amount", composite_key: "reward.amount", value: "10" },
      { type: "reward", key: "amount", composite_key: "reward.amount", value: "3" },
      { type: "reward", key: "validator", composite_key: "reward.validator", value: "v1" },
      { type: "reward", key: "validator", composite_key: "reward.validator", value: "v2" },
    ]);

    const txRows = await admin.query(
      `SELECT composite_key, value FROM ${schema}.tx_events WHERE chain_id = $1 AND height = 1 AND index = 0
       ORDER BY composite_key, value`,
      [chainId],
    );
    expect(txRows.rows).toEqual([
      { composite_key: "message.action", value: "send" },
      { composite_key: "transfer.amount", value: "10" },
      { composite_key: "transfer.amount", value: "3" },
      { composite_key: "transfer.recipient", value: "bob" },
      { composite_key: "transfer.recipient", value: "dave" },
      { composite_key: "transfer.sender", value: "alice" },
      { composite_key: "transfer.sender", value: "carol" },
      { composite_key: "tx.hash", value: hash },
      { composite_key: "tx.height", value: "1" },
    ]);

    const stored = await admin.query<{ tx_hash: string; tx_result: Buffer }>(
      `SELECT t.tx_hash, t.tx_result FROM ${schema}.tx_results t JOIN ${schema}.blocks b ON b.rowid = t.block_id
       WHERE b.chain_id = $1 ORDER BY t.index`,
      [chainId],
    );
    expect(stored.rows.map((r) => r.tx_hash)).toEqual([hash, bytesToHexUpper(txHash(new TextEncoder().encode("b=2")))]);
    expect(decodeTxResult(stored.rows[0]?.tx_result ?? Buffer.alloc(0))).toMatchObject({ height: 1, index: 0 });
  });

  test("behavior: each chain id sees only its own rows", async () => {
    const a = await open();
    const b = await open();
    await a.indexBlock(FIXTURE[0] ?? block(1, [], []));
    expect(await b.searchBlocks(parseQuery("block.height = 1"))).toEqual([]);
    expect(await b.searchTxs(parseQuery("tx.height = 1"))).toEqual([]);
    expect(names(await a.searchTxs(parseQuery("tx.height = 1")))).toEqual(["a=1", "b=2"]);
  });

  test("error: a failing write leaves nothing of the block", async () => {
    const idx = await open();
    // attributes has UNIQUE (event_id, key), as in CometBFT: an event cannot index one key twice.
    const dup = {
      type: "m",
      attributes: [
        { key: "k", value: "1", index: true },
        { key: "k", value: "2", index: true },
      ],
    };
    const input = block(1, [ev("reward", { amount: "1" })], [["x", txResult([dup])]]);
    await expect(idx.indexBlock(input)).rejects.toThrow(PsqlIndexerError);
    expect(await idx.searchBlocks(parseQuery("block.height = 1"))).toEqual([]);
    expect(await idx.searchBlocks(parseQuery("reward.amount = 1"))).toEqual([]);
  });

  test("error: an unreachable database", async () => {
    await expect(
      createPsqlIndexer({ connectionString: "postgres://nobody@127.0.0.1:1/none", chainId: "c" }),
    ).rejects.toThrow(PsqlIndexerError);
  });
});
