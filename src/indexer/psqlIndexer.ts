import type pg from "pg";
import type { Query } from "../events/index.js";
import { type AbciEvent, type ExecTxResult, txHash } from "../types/index.js";
import { bytesToHexUpper } from "../util/bytes.js";
import { checkBlockInput } from "./blockInput.js";
import { EmptyTxHashError, IndexerClosedError, PsqlIndexerError } from "./errors.js";
import type { BlockIndexInput, IndexedTx, Indexer } from "./indexer.js";
import { PSQL_SCHEMA_STATEMENTS, PSQL_SCHEMA_VIEWS } from "./psqlSchema.js";
import {
  BLOCK_HEIGHT_KEY,
  collectTargets,
  type IndexRow,
  planSearch,
  type SearchStep,
  TX_HASH_KEY,
  TX_HEIGHT_KEY,
} from "./searchPlan.js";
import { decodeTxResult, encodeTxResult } from "./txResultCodec.js";

/**
 * The psql indexer (`[tx_index] indexer = "psql"`, `psql-conn`): CometBFT v0.38's event sink
 * (state/indexer/sink/psql/psql.go) over its schema (psqlSchema.ts), rows attributed to `chainId`.
 *
 * Writes as psql.go does: a blocks row (a block already there is skipped quietly), the meta-event
 * `block.height`, then every FinalizeBlock event with a type (attributes only when `index: true`);
 * per tx a tx_results row (tx_hash in uppercase hex, tx_result the protobuf abci.TxResult; a
 * (block, index) already there is skipped), the meta-events `tx.hash` and `tx.height`, then its
 * events. Unlike psql.go, which commits the block and each tx separately, one indexBlock is one SQL
 * transaction, so it is durable and all-or-nothing when it resolves.
 *
 * Unlike CometBFT, whose sink answers every Get/Search with "… is not supported", this one answers
 * tx, tx_search and block_search with the kv indexer's semantics (searchPlan.ts): SQL fetches the
 * candidate rows of each condition (by composite key, narrowed by value, substring and height where
 * the plan allows) and the shared plan decides, so both indexers give the same answers. Mapping:
 * a row is an attribute with a non-empty key (kv skips empty keys); its event is events.rowid; the
 * height rows are tx_results and blocks themselves rather than the meta-events. A hash shared by
 * several tx_results rows resolves like kv: the latest successful one, else the latest.
 */

export interface PsqlIndexerOptions {
  /** `postgresql://user:pass@host:port/db?opts`. */
  connectionString: string;
  /** Written to blocks.chain_id; searches only see this chain's rows. */
  chainId: string;
}

const SCHEMA_LOCK_ID = 0x636f6d65; // "come": serializes concurrent schema creation

type Client = pg.PoolClient;

interface TxRow {
  tx_result: Buffer;
  tx_hash: string;
}

/** The latest successful result, else the latest (rows in indexing order). */
function pickResult(rows: readonly TxRow[]): IndexedTx | undefined {
  let latest: IndexedTx | undefined;
  let latestOk: IndexedTx | undefined;
  for (const row of rows) {
    const tx = decodeTxResult(row.tx_result);
    latest = tx;
    if (tx.result.code === 0) latestOk = tx;
  }
  return latestOk ?? latest;
}

/** makeIndexedEvent: `type.name` → an event `type` with one indexed attribute. */
function metaEvent(compositeKey: string, value: string): AbciEvent {
  const dot = compositeKey.indexOf(".");
  return {
    type: compositeKey.slice(0, dot),
    attributes: [{ key: compositeKey.slice(dot + 1), value, index: true }],
  };
}

interface PendingEvent {
  txId: string | null;
  event: AbciEvent;
}

/**
 * insertEvents for many events in three statements: reserve their rowids from the events sequence
 * (in order, so rowids follow psql.go's insertion order), then insert the events and their
 * `index: true` attributes. Events without a type are skipped, as in psql.go.
 */
async function insertEvents(client: Client, blockId: string, pending: readonly PendingEvent[]): Promise<void> {
  const typed = pending.filter((p) => p.event.type !== "");
  if (typed.length === 0) return;
  const ids = await client.query<{ id: string }>(
    `SELECT nextval(pg_get_serial_sequence('events', 'rowid'))::text AS id
     FROM generate_series(1, $1::int)`,
    [typed.length],
  );
  const eventIds = ids.rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  await client.query(
    `INSERT INTO events (rowid, block_id, tx_id, type)
     SELECT id, $1, tx, type FROM unnest($2::bigint[], $3::bigint[], $4::varchar[]) AS e(id, tx, type)`,
    [blockId, eventIds, typed.map((p) => p.txId), typed.map((p) => p.event.type)],
  );
  const attr = { eventId: [] as string[], key: [] as string[], compositeKey: [] as string[], value: [] as string[] };
  typed.forEach((p, i) => {
    for (const a of p.event.attributes) {
      if (!a.index) continue;
      attr.eventId.push(eventIds[i] as string);
      attr.key.push(a.key);
      attr.compositeKey.push(`${p.event.type}.${a.key}`);
      attr.value.push(a.value);
    }
  });
  if (attr.eventId.length === 0) return;
  await client.query(
    `INSERT INTO attributes (event_id, key, composite_key, value)
     SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::varchar[], $4::varchar[])`,
    [attr.eventId, attr.key, attr.compositeKey, attr.value],
  );
}

class PsqlIndexer implements Indexer {
  readonly txIndexEnabled = true;
  readonly blockIndexEnabled = true;
  readonly #pool: pg.Pool;
  readonly #chainId: string;
  #closed = false;

  constructor(pool: pg.Pool, chainId: string) {
    this.#pool = pool;
    this.#chainId = chainId;
  }

  async indexBlock(input: BlockIndexInput): Promise<void> {
    this.#assertOpen();
    checkBlockInput(input);
    await this.#inTransaction("indexing block", async (client) => {
      const { height } = input;
      const createdAt = new Date();
      const inserted = await client.query<{ rowid: string }>(
        `INSERT INTO blocks (height, chain_id, created_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING rowid`,
        [height, this.#chainId, createdAt],
      );
      const pending: PendingEvent[] = [];
      let blockId = inserted.rows[0]?.rowid;
      if (blockId === undefined) {
        // Already indexed: psql.go leaves the block's events alone; its txs are skipped below.
        const found = await client.query<{ rowid: string }>(
          "SELECT rowid FROM blocks WHERE height = $1 AND chain_id = $2",
          [height, this.#chainId],
        );
        blockId = found.rows[0]?.rowid as string;
      } else {
        pending.push({ txId: null, event: metaEvent(BLOCK_HEIGHT_KEY, String(height)) });
        for (const event of input.finalizeBlockEvents) pending.push({ txId: null, event });
      }
      if (input.txs.length > 0) {
        const hashes = input.txs.map((tx) => bytesToHexUpper(txHash(tx)));
        const records = input.txs.map((tx, index) =>
          Buffer.from(encodeTxResult({ height, index, tx, result: input.txResults[index] as ExecTxResult })),
        );
        // A (block, index) already there is skipped, as psql.go does.
        const txRows = await client.query<{ rowid: string; index: number }>(
          `INSERT INTO tx_results (block_id, index, created_at, tx_hash, tx_result)
           SELECT $1, index, $2, tx_hash, tx_result
           FROM unnest($3::int[], $4::varchar[], $5::bytea[]) AS t(index, tx_hash, tx_result)
           ON CONFLICT DO NOTHING RETURNING rowid, index`,
          [blockId, createdAt, hashes.map((_, i) => i), hashes, records],
        );
        for (const row of [...txRows.rows].sort((a, b) => a.index - b.index)) {
          const result = input.txResults[row.index] as ExecTxResult;
          pending.push({ txId: row.rowid, event: metaEvent(TX_HASH_KEY, hashes[row.index] as string) });
          pending.push({ txId: row.rowid, event: metaEvent(TX_HEIGHT_KEY, String(height)) });
          for (const event of result.events) pending.push({ txId: row.rowid, event });
        }
      }
      await insertEvents(client, blockId, pending);
    });
  }

  async getTx(hash: Uint8Array): Promise<IndexedTx | undefined> {
    this.#assertOpen();
    if (hash.length === 0) throw new EmptyTxHashError({ inSearch: false });
    const rows = await this.#txRowsByHash([bytesToHexUpper(hash)]);
    return pickResult(rows);
  }

  async searchTxs(query: Query): Promise<IndexedTx[]> {
    this.#assertOpen();
    const plan = planSearch(query, "tx");
    if (plan.type === "hash") {
      if (plan.hash.length === 0) throw new EmptyTxHashError({ inSearch: true });
      const tx = await this.getTx(plan.hash);
      return tx === undefined ? [] : [tx];
    }
    if (plan.type !== "steps") return [];
    const hashes = await this.#collect(plan.steps, (step) => this.#txStepRows(step));
    if (hashes.size === 0) return [];
    const byHash = new Map<string, TxRow[]>();
    for (const row of await this.#txRowsByHash([...hashes])) {
      const list = byHash.get(row.tx_hash) ?? [];
      list.push(row);
      byHash.set(row.tx_hash, list);
    }
    const out: IndexedTx[] = [];
    for (const rows of byHash.values()) {
      const tx = pickResult(rows);
      if (tx !== undefined) out.push(tx);
    }
    return out;
  }

  async searchBlocks(query: Query): Promise<number[]> {
    this.#assertOpen();
    const plan = planSearch(query, "block");
    if (plan.type === "height") {
      if (plan.height === undefined) return [];
      const r = await this.#query("searching blocks", "SELECT 1 FROM blocks WHERE chain_id = $1 AND height = $2", [
        this.#chainId,
        plan.height,
      ]);
      return r.rows.length > 0 ? [plan.height] : [];
    }
    if (plan.type !== "steps") return [];
    const targets = await this.#collect(plan.steps, (step) => this.#blockStepRows(step));
    return [...targets].map(Number);
  }

  async lastIndexedHeight(): Promise<number> {
    this.#assertOpen();
    const r = await this.#query(
      "reading the last indexed height",
      "SELECT MAX(height) AS h FROM blocks WHERE chain_id = $1",
      [this.#chainId],
    );
    const h = (r.rows[0] as { h: string | number | null } | undefined)?.h;
    return h === null || h === undefined ? 0 : Number(h);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  /** Fetches each step's rows in turn, stopping once a step matches nothing (AND). */
  async #collect(steps: readonly SearchStep[], fetch: (step: SearchStep) => Promise<IndexRow[]>): Promise<Set<string>> {
    const rowsByStep: IndexRow[][] = [];
    for (const step of steps) {
      const rows = await fetch(step);
      if (!rows.some((r) => step.test(r))) return new Set();
      rowsByStep.push(rows);
    }
    return collectTargets(steps, (_, i) => rowsByStep[i] ?? []);
  }

  async #txRowsByHash(hashes: string[]): Promise<TxRow[]> {
    const r = await this.#query<TxRow>(
      "searching txs",
      `SELECT t.tx_result, t.tx_hash FROM tx_results t JOIN blocks b ON b.rowid = t.block_id
       WHERE t.tx_hash = ANY($1::varchar[]) AND b.chain_id = $2
       ORDER BY b.height, t.index`,
      [hashes, this.#chainId],
    );
    return r.rows;
  }

  async #txStepRows(step: SearchStep): Promise<IndexRow[]> {
    if (step.minHeight > step.maxHeight) return [];
    if (step.heightRows) {
      const r = await this.#query<{ height: string; tx_hash: string }>(
        "searching txs",
        `SELECT b.height, t.tx_hash FROM tx_results t JOIN blocks b ON b.rowid = t.block_id
         WHERE b.chain_id = $1 AND b.height BETWEEN $2 AND $3`,
        [this.#chainId, step.minHeight, step.maxHeight],
      );
      return r.rows.map((row) => ({ value: row.height, height: Number(row.height), event: "0", target: row.tx_hash }));
    }
    const { where, params } = this.#attributeFilter(step);
    const r = await this.#query<{ value: string | null; height: string; event_id: string; tx_hash: string }>(
      "searching txs",
      `SELECT a.value, b.height, e.rowid AS event_id, t.tx_hash
       FROM attributes a JOIN events e ON e.rowid = a.event_id
       JOIN tx_results t ON t.rowid = e.tx_id JOIN blocks b ON b.rowid = t.block_id
       WHERE ${where}`,
      params,
    );
    return r.rows.map((row) => ({
      value: row.value ?? "",
      height: Number(row.height),
      event: `e${row.event_id}`,
      target: row.tx_hash,
    }));
  }

  async #blockStepRows(step: SearchStep): Promise<IndexRow[]> {
    if (step.minHeight > step.maxHeight) return [];
    if (step.heightRows) {
      const r = await this.#query<{ height: string }>(
        "searching blocks",
        "SELECT height FROM blocks WHERE chain_id = $1 AND height BETWEEN $2 AND $3",
        [this.#chainId, step.minHeight, step.maxHeight],
      );
      return r.rows.map((row) => ({ value: row.height, height: Number(row.height), event: "0", target: row.height }));
    }
    const { where, params } = this.#attributeFilter(step);
    const r = await this.#query<{ value: string | null; height: string; event_id: string }>(
      "searching blocks",
      `SELECT a.value, b.height, e.rowid AS event_id
       FROM attributes a JOIN events e ON e.rowid = a.event_id JOIN blocks b ON b.rowid = e.block_id
       WHERE e.tx_id IS NULL AND ${where}`,
      params,
    );
    return r.rows.map((row) => ({
      value: row.value ?? "",
      height: Number(row.height),
      event: `e${row.event_id}`,
      target: row.height,
    }));
  }

  /** The WHERE clause selecting a step's candidate attribute rows (aliases a, b). */
  #attributeFilter(step: SearchStep): { where: string; params: unknown[] } {
    const params: unknown[] = [this.#chainId, step.tag, step.minHeight, step.maxHeight];
    let where = "b.chain_id = $1 AND a.composite_key = $2 AND a.key <> '' AND b.height BETWEEN $3 AND $4";
    if (step.valueEquals !== undefined) {
      params.push(step.valueEquals);
      where += ` AND a.value = $${params.length}`;
    }
    if (step.valueContains !== undefined && step.valueContains !== "") {
      params.push(step.valueContains);
      where += ` AND strpos(a.value, $${params.length}) > 0`;
    }
    return { where, params };
  }

  async #query<R extends pg.QueryResultRow>(what: string, sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(sql, params);
    } catch (err) {
      throw new PsqlIndexerError(what, err);
    }
  }

  async #inTransaction(what: string, body: (client: Client) => Promise<void>): Promise<void> {
    let client: Client;
    try {
      client = await this.#pool.connect();
    } catch (err) {
      throw new PsqlIndexerError(what, err);
    }
    try {
      await client.query("BEGIN");
      await body(client);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err instanceof PsqlIndexerError ? err : new PsqlIndexerError(what, err);
    } finally {
      client.release();
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new IndexerClosedError();
  }
}

async function ensureSchema(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [SCHEMA_LOCK_ID]);
    for (const sql of PSQL_SCHEMA_STATEMENTS) await client.query(sql);
    for (const view of PSQL_SCHEMA_VIEWS) {
      const r = await client.query<{ rel: string | null }>("SELECT to_regclass($1) AS rel", [view.name]);
      if (r.rows[0]?.rel === null) await client.query(view.sql);
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Connects to PostgreSQL and creates CometBFT's schema where absent. Rejects with PsqlIndexerError
 * when the database cannot be reached or prepared.
 */
export async function createPsqlIndexer(opts: PsqlIndexerOptions): Promise<Indexer> {
  // Loaded here, not at start-up: the driver is ~30 modules that only the psql sink needs.
  const { default: driver } = await import("pg");
  const pool = new driver.Pool({ connectionString: opts.connectionString, max: 4 });
  // An idle client's connection error must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  try {
    await ensureSchema(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new PsqlIndexerError(
      "preparing the psql indexer database (check [tx_index] psql-conn and that the database exists)",
      err,
    );
  }
  return new PsqlIndexer(pool, opts.chainId);
}
