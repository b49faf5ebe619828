// indexer/: CometBFT v0.38's tx and block indexers ([tx_index] indexer = "kv" | "null" | "psql"):
// writing each committed block's txs (by hash, tx.height, indexed event attributes) and
// FinalizeBlock events (block.height, indexed attributes), and answering tx, tx_search and
// block_search with the kv indexer's query semantics (searchPlan.ts), over store/'s KvStore or
// PostgreSQL (CometBFT's psql sink schema).
// Does not own: when blocks are indexed (node/), the query parser and pubsub matching (events/),
// sorting, paging and wire shapes of the results (rpc/comet), the block and state stores (store/).
export {
  BlockInputError,
  EmptyTxHashError,
  IndexCorruptionError,
  IndexerClosedError,
  IndexerError,
  PsqlIndexerError,
  ReservedEventKeyError,
  TxHashQueryError,
  UnsupportedQueryError,
} from "./errors.js";
export type { BlockIndexInput, IndexedTx, Indexer, TxIndexReader } from "./indexer.js";
export type { KvIndexer } from "./kvIndexer.js";
export { createKvIndexer } from "./kvIndexer.js";
export { createNullIndexer } from "./nullIndexer.js";
export type { PsqlIndexerOptions } from "./psqlIndexer.js";
export { createPsqlIndexer } from "./psqlIndexer.js";
export type { WriteBehindOptions } from "./writeBehind.js";
export { writeBehind } from "./writeBehind.js";
