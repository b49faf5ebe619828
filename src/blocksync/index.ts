// blocksync/: catching up by fetching blocks from peers (CometBFT v0.38 blocksync/): the
// tendermint.blocksync wire messages on channel 0x40, the block pool (which height to ask of which
// peer, timeouts, bans) and the reactor that serves blocks from the block store to peers and, at
// start, verifies (H with H+1's LastCommit), saves and applies missing blocks until caught up, then
// hands over to consensus through onCaughtUp.
// Does not own: transport and peer lifecycle (p2p; reactors talk to it through p2p/reactor.ts),
// block execution and validation rules (consensus BlockExecutor), storage (store), state sync.
export { BlockPool, type BlockPoolDeps, type BlockPoolOptions, defaultBlockPoolOptions } from "./blockPool.js";
export { type BlocksyncMessage, decodeBlocksyncMessage, encodeBlocksyncMessage } from "./blocksyncCodec.js";
export {
  BLOCKSYNC_CHANNEL,
  BLOCKSYNC_MAX_MSG_BYTES,
  type BlocksyncBlockExecutor,
  type BlocksyncBlockStore,
  type BlocksyncOptions,
  BlocksyncReactor,
  type BlocksyncReactorDeps,
  defaultBlocksyncOptions,
} from "./blocksyncReactor.js";
export {
  BlocksyncApplyError,
  BlocksyncError,
  BlocksyncPeerError,
  InvalidBlocksyncMessageError,
  StoreStateMismatchError,
} from "./errors.js";
