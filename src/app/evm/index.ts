// app/evm/: the EVM application (Cosmos EVM v0.5 compatible): signed Ethereum txs in CometBFT blocks,
// executed by cometh's own EVM (engine/, Prague) over state in the app's own LMDB database; receipts, logs, fee
// market, dev accounts, abci_query paths, and the read API (`EvmReader`) the Ethereum JSON-RPC server
// uses. Does not own: consensus, the mempool, blocks (CometBFT's block store), any wire format.
// See README.md for the design, the query paths and the EvmReader contract.
export { type ChainRulesView, chainRules } from "./chainRules.js";
export { ecrecoverBackend, ecrecoverNative, ecrecoverNoble, keccak256, keccakBackend } from "./crypto.js";
export type { DevAccount } from "./devAccounts.js";
export {
  DEV_ACCOUNT_BALANCE_WEI,
  DEV_ACCOUNT_COUNT,
  DEV_MNEMONIC,
  deriveDevAccounts,
  formatDevAccounts,
  toChecksumAddress,
} from "./devAccounts.js";
export { type DevCheat, type DevEntry, decodeDevEntry, encodeDevEntry, isDevEntry } from "./devEntries.js";
export {
  CHECK_TX_CODES,
  CHECK_TX_CODESPACE,
  EvmAppError,
  EvmAppSequenceError,
  EvmCallError,
  EvmCallTimeoutError,
  EvmConfigError,
  EvmNotSupportedError,
  EvmStateCorruptionError,
  GasEstimationError,
  InvalidEthTxError,
  SimulationError,
  type SimulationFailure,
  StateUnavailableError,
} from "./errors.js";
export type { EvmAppOptions } from "./evmApplication.js";
export {
  createEvmApp,
  DEFAULT_EVM_CHAIN_ID,
  DEFAULT_MAX_NONCE_GAP,
  DEFAULT_PRUNING_KEEP_RECENT,
  EvmApplication,
} from "./evmApplication.js";
export {
  baseFeeForHeight,
  baseFeeWei,
  calcGasBaseFee,
  defaultFeeMarketParams,
  formatDec,
  parseDec,
} from "./feeMarket.js";
export {
  defaultForkCacheRoot,
  ForkConfigError,
  type ForkOptions,
  type ForkPoint,
  ForkSource,
  ForkSourceError,
} from "./fork/index.js";
export { CONSOLE_ADDRESS, formatConsoleLog } from "./hardhatConsole.js";
export { createPrestateTracer, type PrestateAccount, type PrestateResult } from "./prestateTracer.js";
export type {
  AccessListEntry,
  AuthorizationView,
  CallArgs,
  CallBlockOverrides,
  CallOptions,
  CallResult,
  EvmAccountView,
  EvmLogView,
  EvmReader,
  EvmTx,
  EvmTxView,
  LogFilter,
  StateOverride,
} from "./readerTypes.js";
export {
  EvmReadPool,
  type EvmReadPoolOptions,
  type EvmReadPoolStats,
  EvmReadWorkerError,
  MAX_READ_WORKERS,
} from "./readPool.js";
export { createTracer, type ReadWorkerSetup, type TracerSpec } from "./readWire.js";
export type { EvmBlock, EvmLog, EvmLogRecord, EvmReceipt, FeeMarketParams } from "./records.js";
export { EMPTY_TRIE_ROOT, KECCAK256_NULL } from "./records.js";
export type {
  SimulateAccountOverride,
  SimulateBlockOverrides,
  SimulateBlockSpec,
  SimulateCall,
  SimulatedBlock,
  SimulatedCall,
  SimulatedLog,
  SimulateRequest,
  SimulateWithdrawal,
} from "./simulate.js";
export { openSnapshotReader, type SnapshotReader } from "./snapshotReader.js";
export {
  decodeAnvilStateHex,
  decodeAnvilStateJson,
  encodeAnvilStateHex,
  encodeAnvilStateJson,
  type StateDump,
  StateDumpError,
} from "./stateDump.js";
export type {
  CallFrame,
  CallTracerOptions,
  EvmTracer,
  StructLog,
  StructLoggerOptions,
  StructLoggerResult,
  TraceTxInfo,
} from "./tracer.js";
export { createCallTracer, createFourByteTracer, createNoopTracer, createStructLogger } from "./tracer.js";
export { txKey } from "./txDecode.js";
export { createVmTracer, type VmTrace, type VmTraceOp } from "./vmTracer.js";
