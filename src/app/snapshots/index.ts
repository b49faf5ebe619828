// app/snapshots/: the built-in apps' state sync snapshots (docs/state-sync.md, "snapshot format"):
// taking them every snapshot-interval heights as chunk files with a chunk hash list, serving their
// chunks, and restoring one chunk by chunk, each checked against the list and the trusted app hash;
// SnapshotService is all of it behind the four snapshot ABCI methods, which both apps use.
// Owns: the snapshot format and files. Does not own: which entries an app's state is (the apps
// pass them), the p2p protocol (statesync/).
export { SnapshotFormatError } from "./errors.js";
export { type RestoreTarget, SnapshotRestorer } from "./snapshotRestorer.js";
export { SnapshotService, type SnapshotSettings, type SnapshotSource } from "./snapshotService.js";
export {
  DEFAULT_CHUNK_BYTES,
  decodeChunk,
  decodeSnapshotMetadata,
  encodeChunk,
  encodeSnapshotMetadata,
  SNAPSHOT_FORMAT,
  type SnapshotEntry,
  type SnapshotMetadata,
  SnapshotStore,
  type SnapshotStoreOptions,
} from "./snapshotStore.js";
