// mempool/: CometBFT's flood mempool. Owns tx admission (limits, seen-tx cache, the app's CheckTx),
// arrival order, reaping for proposals, removal and recheck after commit, and the lock consensus holds
// while committing. Does not own: tx validity (the app), gossip (p2p/), broadcast RPC shapes (rpc/).
export {
  MempoolError,
  MempoolFullError,
  MempoolUpdateError,
  TxInCacheError,
  TxTooLargeError,
} from "./errors.js";
export type { CheckTxOptions, MempoolDeps, MempoolMetricsHooks, MempoolOptions, TxAddedInfo } from "./mempool.js";
export { Mempool, txProtoSize } from "./mempool.js";
