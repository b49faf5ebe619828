// app/kvstore/: the built-in `kvstore` application (CometBFT v0.38's persistent kvstore example):
// key=value txs, validator updates through `val=`/`val:` txs, its own LMDB database.
// Does not own: consensus, the mempool, or the node's block and state stores.
export { InvalidKvTxError, KvStoreAppStateError } from "./errors.js";
export type { KvStoreAppOptions } from "./kvStoreApplication.js";
export { createKvStoreApp, KvStoreApplication, kvStoreAppHash, MAX_KV_KEY_BYTES } from "./kvStoreApplication.js";
export type { KvTx } from "./txFormat.js";
export { isValidatorTx, KVSTORE_CODES, parseKvTx, parseValidatorTx } from "./txFormat.js";
export { decodeValidatorRecord, encodeValidatorRecord } from "./validatorRecord.js";
