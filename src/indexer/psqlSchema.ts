/**
 * CometBFT v0.38's psql sink schema (state/indexer/sink/psql/schema.sql): the same tables, columns,
 * constraints and views, created only where absent so a database prepared by an operator (or by
 * CometBFT itself) is used as it is. The `cometh_` indexes are ours: they serve the searches this
 * sink answers and CometBFT's does not (hash indexes, so long values never hit btree row limits).
 */
export const PSQL_SCHEMA_STATEMENTS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS blocks (
    rowid      BIGSERIAL PRIMARY KEY,
    height     BIGINT NOT NULL,
    chain_id   VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (height, chain_id)
  )`,
  "CREATE INDEX IF NOT EXISTS idx_blocks_height_chain ON blocks(height, chain_id)",
  `CREATE TABLE IF NOT EXISTS tx_results (
    rowid      BIGSERIAL PRIMARY KEY,
    block_id   BIGINT NOT NULL REFERENCES blocks(rowid),
    index      INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    tx_hash    VARCHAR NOT NULL,
    tx_result  BYTEA NOT NULL,
    UNIQUE (block_id, index)
  )`,
  `CREATE TABLE IF NOT EXISTS events (
    rowid    BIGSERIAL PRIMARY KEY,
    block_id BIGINT NOT NULL REFERENCES blocks(rowid),
    tx_id    BIGINT NULL REFERENCES tx_results(rowid),
    type     VARCHAR NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS attributes (
    event_id      BIGINT NOT NULL REFERENCES events(rowid),
    key           VARCHAR NOT NULL,
    composite_key VARCHAR NOT NULL,
    value         VARCHAR NULL,
    UNIQUE (event_id, key)
  )`,
  "CREATE INDEX IF NOT EXISTS cometh_idx_tx_results_hash ON tx_results USING hash (tx_hash)",
  "CREATE INDEX IF NOT EXISTS cometh_idx_events_tx ON events(tx_id)",
  "CREATE INDEX IF NOT EXISTS cometh_idx_events_block ON events(block_id)",
  "CREATE INDEX IF NOT EXISTS cometh_idx_attributes_composite_key ON attributes USING hash (composite_key)",
];

/** Views, each created when no relation of its name exists (Postgres has no CREATE VIEW IF NOT EXISTS). */
export const PSQL_SCHEMA_VIEWS: readonly { name: string; sql: string }[] = [
  {
    name: "event_attributes",
    sql: `CREATE VIEW event_attributes AS
      SELECT block_id, tx_id, type, key, composite_key, value
      FROM events LEFT JOIN attributes ON (events.rowid = attributes.event_id)`,
  },
  {
    name: "block_events",
    sql: `CREATE VIEW block_events AS
      SELECT blocks.rowid as block_id, height, chain_id, type, key, composite_key, value
      FROM blocks JOIN event_attributes ON (blocks.rowid = event_attributes.block_id)
      WHERE event_attributes.tx_id IS NULL`,
  },
  {
    name: "tx_events",
    sql: `CREATE VIEW tx_events AS
      SELECT height, index, chain_id, type, key, composite_key, value, tx_results.created_at
      FROM blocks JOIN tx_results ON (blocks.rowid = tx_results.block_id)
      JOIN event_attributes ON (tx_results.rowid = event_attributes.tx_id)
      WHERE event_attributes.tx_id IS NOT NULL`,
  },
];
