// statesync/: state sync (CometBFT v0.38 statesync/, docs/state-sync.md): the reactor on channels
// 0x60/0x61 that serves the app's snapshots and, when the node starts empty with [statesync] enable,
// discovers snapshots, fetches their chunks from peers and restores one into the app; the snapshot
// pool, the chunk queue, the syncer, and the light client that verifies the snapshot height through
// rpc_servers and builds the state and commit there.
// Owns: the statesync protocol and light-client verification over RPC. Does not own: the snapshot
// format (app/snapshots/), storing the restored state (node/ bootstraps the stores), block sync.
export { ChunkQueue, ChunkTimeoutError } from "./chunkQueue.js";
export {
  ConflictingHeadersError,
  InvalidStatesyncMessageError,
  LightClientError,
  NoSnapshotsError,
  StatesyncAbortError,
  StatesyncError,
  StatesyncVerifyError,
} from "./errors.js";
export { LightClient, type TrustOptions } from "./lightClient.js";
export { HttpLightProvider, type LightBlock, type LightProvider, rpcBaseUrl } from "./lightProvider.js";
export { SnapshotPool } from "./snapshotPool.js";
export { LightClientStateProvider, type StateProvider } from "./stateProvider.js";
export { decodeStatesyncMessage, encodeStatesyncMessage, type StatesyncMessage } from "./statesyncCodec.js";
export { CHUNK_CHANNEL, SNAPSHOT_CHANNEL, StatesyncReactor } from "./statesyncReactor.js";
export { defaultSyncerOptions, type StatesyncApp, Syncer, type SyncerOptions } from "./syncer.js";
