// app/: the Application interface (ABCI 2.0 shaped) and the apps behind it: the built-in ones, in
// process, and an external one over the ABCI socket protocol (socket/).
// Owns: application logic and its state. Does not own: blocks, consensus, mempool, RPC.
export type { Application } from "./application.js";
export {
  createEvmApp,
  type DevAccount,
  type DevCheat,
  type DevEntry,
  decodeAnvilStateHex,
  decodeAnvilStateJson,
  EvmApplication,
  type EvmAppOptions,
  type EvmReader,
  EvmReadPool,
  encodeAnvilStateHex,
  encodeAnvilStateJson,
  encodeDevEntry,
  ForkSource,
  formatDevAccounts,
  type StateDump,
  StateDumpError,
} from "./evm/index.js";
export type { KvStoreAppOptions } from "./kvstore/index.js";
export { createKvStoreApp, KvStoreApplication } from "./kvstore/index.js";
// Types only: node/ imports ./socket/index.js itself, and only for an external app (its ABCI codecs and
// node:http2 are start-up time a built-in app never needs).
export type { AbciConnectionError, AbciConnectionName, SocketAppOptions } from "./socket/index.js";
