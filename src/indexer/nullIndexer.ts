import type { Indexer } from "./indexer.js";

/**
 * `[tx_index] indexer = "null"`: indexes nothing. tx, tx_search and block_search see both flags
 * off and answer "… indexing is disabled" before asking it anything.
 */
export function createNullIndexer(): Indexer {
  return {
    txIndexEnabled: false,
    blockIndexEnabled: false,
    indexBlock: () => Promise.resolve(),
    lastIndexedHeight: () => 0,
    rollbackTo: () => Promise.resolve(),
    getTx: () => undefined,
    searchTxs: () => [],
    searchBlocks: () => [],
    close: () => Promise.resolve(),
  };
}
