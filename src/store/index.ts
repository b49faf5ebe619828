// store/: persistence. Owns the key-value layer (LMDB, plus an in-memory twin: db_backend "memdb" and tests), the block store
// (blocks, parts, commits by height/hash), the state store (ChainState, validators/params by height,
// FinalizeBlock responses) and their key layouts and record formats.
// Does not own: what is stored (types/ encodes blocks and commits), when it is saved (consensus/), tx
// indexing policy or any wire format (rpc/).

export { type KvBackend, openKvBackend } from "./backend.js";
export { BlockStore } from "./blockStore.js";
export {
  IncompletePartSetError,
  KvAsyncTransactionError,
  KvReadOnlyError,
  KvStoreClosedError,
  KvTransactionRequiredError,
  NonContiguousBlockError,
  PruneHeightError,
  StoreCorruptionError,
  StoreError,
  StoreFileError,
} from "./errors.js";
export type { KvEntry, KvRange, KvSnapshotStore, KvStore, KvTable } from "./kvStore.js";
export { openKvSnapshotStore, openKvStore, prefixEnd } from "./kvStore.js";
export { checkLmdbFile } from "./lmdbFile.js";
export { openMemoryKvStore } from "./memoryKvStore.js";
export { StateStore, VALIDATOR_SET_CHECKPOINT_INTERVAL } from "./stateStore.js";
