import { ComethError } from "../util/errors.js";

/** Errors of the tx and block indexers. Texts match CometBFT's where RPC clients see them. */

export class IndexerError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/**
 * An app event uses a composite key the indexer writes itself (state/txindex/kv, state/indexer/block/kv):
 * `tx.hash`/`tx.height` in tx results, `block.height` in FinalizeBlock events.
 */
export class ReservedEventKeyError extends IndexerError {
  readonly compositeKey: string;
  constructor(compositeKey: string, opts: { blockEvents: boolean }) {
    const text = `event type and attribute key "${compositeKey}" is reserved; please use a different key`;
    super(opts.blockEvents ? `failed to index FinalizeBlock events: ${text}` : text);
    this.compositeKey = compositeKey;
  }
}

/** A `tx.hash` query argument that is not hex (Go's encoding/hex texts). */
export class TxHashQueryError extends IndexerError {
  constructor(problem: string) {
    super(`error during searching for a hash in the query: encoding/hex: ${problem}`);
  }
}

/** txindex.ErrorEmptyHash: a lookup by an empty hash (`tx.hash EXISTS` ends up here too). */
export class EmptyTxHashError extends IndexerError {
  constructor(opts: { inSearch: boolean }) {
    const text = "transaction hash cannot be empty";
    super(opts.inSearch ? `error while retrieving the result: ${text}` : text);
  }
}

/** The indexer was used after close(). */
export class IndexerClosedError extends IndexerError {
  constructor() {
    super("the indexer is closed. Create a new one to index or search again");
  }
}

/** A search got something other than a parsed events/ Query. */
export class UnsupportedQueryError extends IndexerError {
  constructor() {
    super("the indexer needs a parsed query with conditions. Pass the result of events/ parseQuery");
  }
}

/** Stored index bytes could not be decoded. */
export class IndexCorruptionError extends IndexerError {
  constructor(what: string, opts: { cause?: unknown } = {}) {
    super(`cannot decode ${what} from the index. The index may be damaged or from another version`, opts);
  }
}

/** A PostgreSQL statement of the psql indexer failed; `cause` is the driver's error. */
export class PsqlIndexerError extends IndexerError {
  constructor(what: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`${what}: ${detail}`, { cause });
  }
}

/** indexBlock got an inconsistent block (the caller's bug, not the app's). */
export class BlockInputError extends IndexerError {
  constructor(problem: string) {
    super(`cannot index the block: ${problem}. Pass txResults[i] for every txs[i]`);
  }
}
