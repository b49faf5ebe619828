// rpc/evm/: the Ethereum JSON-RPC server (Cosmos EVM v0.5 namespaces with geth semantics).
// Owns: the method tables of eth, web3, net, txpool, debug, personal, admin, miner (and rpc_modules),
// strict param decoding, domain → wire encoders (blocks, txs, receipts, logs, traces), polling
// filters, eth_subscribe, geth's envelope and batch rules on the shared core (calls.ts), and the
// `[json-rpc]` settings that configure the shared HTTP and WebSocket transports (transports/server.ts).
// Does not own: chain data, state, execution, the mempool or keys. It reaches the node only
// through services.ts, which node/ satisfies with adapters over the EVM application and stores.
export { type EvmPayloads, evmPayloads, FORWARD } from "./calls.js";
export type { EvmCallContext, EvmRpcSettings, EvmRuntime } from "./context.js";
export { decodeRevertReason, EvmRpcConfigError, toEvmRpcError } from "./errors.js";
export { ForwardToMainError } from "./forward.js";
export { type Method, method, type Namespace, notImplemented } from "./method.js";
export { findMethod, NAMESPACE_NAMES, NAMESPACES, type NamespaceName } from "./namespaces/index.js";
export type * from "./services.js";
export { DevInputError, SimulateRejectedError, TX_TYPE } from "./services.js";
export {
  createEvmRuntime,
  DEFAULT_BODY_LIMIT,
  type EvmRpcConfig,
  evmFastHttp,
  failedAnswer,
  httpDeadline,
  jsonAnswer,
  type ReadProcessHooks,
  type RunningEvmRpc,
  type StartEvmRpcOptions,
  settingsFromConfig,
  startEvmRpc,
} from "./transports/server.js";
