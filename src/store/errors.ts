import { ComethError } from "../util/errors.js";

/** Errors raised by the key-value layer and the block/state stores. */

export class StoreError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** A put/remove was called outside `KvStore.transaction`. */
export class KvTransactionRequiredError extends StoreError {
  constructor(op: string) {
    super(`${op} outside a transaction. Wrap writes in kv.transaction(() => { ... })`);
  }
}

/** The store was used after close(). */
export class KvStoreClosedError extends StoreError {
  constructor() {
    super("the key-value store is closed. Open it again with openKvStore(dir)");
  }
}

/** A write on a store opened for reads only (openKvSnapshotStore). */
export class KvReadOnlyError extends StoreError {
  constructor() {
    super(
      "this key-value store was opened for reads only (openKvSnapshotStore). Write through the store the writer opened",
    );
  }
}

/** A transaction callback returned a promise; callbacks must be synchronous so the commit stays atomic. */
export class KvAsyncTransactionError extends StoreError {
  constructor() {
    super("a transaction callback returned a promise. Read what you need first, then write synchronously inside it");
  }
}

/** Stored bytes could not be decoded: the database was written by an incompatible version or is damaged. */
export class StoreCorruptionError extends StoreError {
  constructor(what: string, opts: { detail?: string; cause?: unknown } = {}) {
    const detail = opts.detail === undefined ? "" : ` (${opts.detail})`;
    super(
      `cannot decode ${what} from the database${detail}. The data directory may be damaged or from another version`,
      opts.cause === undefined ? {} : { cause: opts.cause },
    );
  }
}

/**
 * An LMDB data file that cannot be opened (`damaged`: truncated, header overwritten, not LMDB at all,
 * found before LMDB maps the file, which is left untouched: LMDB trusts its pages and would crash the
 * process with SIGSEGV/SIGBUS or write new meta pages over what is there). The message names the file.
 */
export class StoreFileError extends StoreError {
  readonly file: string;
  constructor(file: string, problem: string, opts: { cause?: unknown; damaged?: boolean } = {}) {
    const advice =
      opts.damaged === false ? "" : ". cometh did not open it and wrote nothing to it; restore it from a backup";
    super(`the database file ${file} ${problem}${advice}`, opts.cause === undefined ? {} : { cause: opts.cause });
    this.file = file;
  }
}

/** CometBFT panics with the same text: blocks are saved one height after another. */
export class NonContiguousBlockError extends StoreError {
  readonly wanted: number;
  readonly got: number;
  constructor(wanted: number, got: number) {
    super(`BlockStore can only save contiguous blocks. Wanted ${wanted}, got ${got}`);
    this.wanted = wanted;
    this.got = got;
  }
}

export class IncompletePartSetError extends StoreError {
  constructor(height: number) {
    super(`BlockStore can only save complete block part sets (height ${height}). Collect every part before saving`);
  }
}

export class PruneHeightError extends StoreError {}
