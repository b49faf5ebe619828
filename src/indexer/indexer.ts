import type { Query } from "../events/index.js";
import type { AbciEvent, ExecTxResult } from "../types/index.js";

/** One indexed tx (CometBFT's abci.TxResult). */
export interface IndexedTx {
  readonly height: number;
  readonly index: number;
  readonly tx: Uint8Array;
  readonly result: ExecTxResult;
}

/**
 * What tx, tx_search and block_search read (structurally rpc/comet's TxIndexReader). Queries are
 * events/ `Query` values from `parseQuery`.
 */
export interface TxIndexReader {
  /** False for the null indexer: tx and tx_search answer "transaction indexing is disabled". */
  readonly txIndexEnabled: boolean;
  /** False for the null indexer: block_search answers "block indexing is disabled". */
  readonly blockIndexEnabled: boolean;
  /** The tx with this sha256 hash; undefined when it was never indexed. */
  getTx(hash: Uint8Array): IndexedTx | undefined | Promise<IndexedTx | undefined>;
  /** Every match, in any order (the route sorts and pages). */
  searchTxs(query: Query): IndexedTx[] | Promise<IndexedTx[]>;
  /** Heights of every matching block, in any order. */
  searchBlocks(query: Query): number[] | Promise<number[]>;
}

/** What one committed block contributes to the indexes (NewBlockEvents plus its Tx events). */
export interface BlockIndexInput {
  height: number;
  finalizeBlockEvents: AbciEvent[];
  /** The block's txs; `txResults[i]` is the result of `txs[i]`. */
  txs: Uint8Array[];
  txResults: ExecTxResult[];
}

/** A tx and block indexer: `[tx_index] indexer = "kv" | "null" | "psql"`. */
export interface Indexer extends TxIndexReader {
  /** Indexes the block and its txs; the writes are durable once this resolves. Re-indexing a block is harmless. */
  indexBlock(input: BlockIndexInput): Promise<void>;
  /** The highest height indexed so far (0 when none): the node re-indexes what a crash left behind. */
  lastIndexedHeight(): number | Promise<number>;
  /**
   * Dev chains (evm_revert, hardhat_reset): forgets every block and tx above `height`. Absent when the
   * sink cannot (PostgreSQL rows are kept as history; a dev chain uses kv or null).
   */
  rollbackTo?(height: number): Promise<void>;
  /**
   * Forgets every block and tx below `retainHeight` once the block store has pruned them; returns how
   * many heights went. Absent when the sink keeps everything (PostgreSQL, as CometBFT's psql sink does).
   */
  pruneBelow?(retainHeight: number): Promise<number>;
  close(): Promise<void>;
}
