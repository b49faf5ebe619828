/**
 * cometh's own EVM (docs/evm-engine.md), a standalone engine: a synchronous interpreter for Cancun and
 * Prague that imports nothing of the app (only src/util/ and npm packages). This file is its one port.
 *
 * The host (what a chain gives the engine) is `EngineState` (accounts, storage, code, the journal) with
 * `BlockEnv` (the block), `EngineHooks` (tracers, watched addresses) and `ExecOptions` (deadlines, the
 * chain's own precompiles as `PrecompileExtensions`, precompile overrides); results come back as
 * `TxResult` (logs, gas, output). Owns opcodes, gas, frames, words, code analysis, the precompiles of
 * Ethereum's forks and the transaction state transition; does not own any state store, the chain's
 * admission rules or fee market (app/evm/ implements the host and runs the engine).
 *
 * Test-only code (the state-test runner, random programs, the reference executor on @ethereumjs/evm)
 * lives in test/evm/, beside the tests.
 */

export { recoverAuthorization, type SignedAuthorization } from "./authorization.js";
export { blockCompileThreshold, setBlockCompileThreshold } from "./blockCompiler.js";
export { bigintToBytes, equalBytes, KECCAK256_NULL } from "./bytes.js";
export {
  checksumAddress,
  compressedPublicKeyOf,
  ecrecover,
  ecrecoverBackend,
  ecrecoverNative,
  ecrecoverNoble,
  keccak256,
  keccakBackend,
  publicKeyOf,
  publicKeyToAddress,
  recoverPublicKey,
} from "./crypto.js";
export { addressKey } from "./frames.js";
export { floorDataGas, intrinsicGas } from "./gas.js";
export { create2Address, createAddress, delegationTarget, Evm, runFrame } from "./interpreter.js";
export { OPCODES, type OpInfo } from "./opcodes.js";
export { failure, outOfGas, success } from "./precompiles/result.js";
export { activePrecompiles, type PrecompileExtensions, precompileAt } from "./precompiles.js";
export { type CallMessage, type ExecOptions, effectivePrice, executeCall, executeTx } from "./transaction.js";
export * from "./types.js";
export {
  bytesToBigint,
  bytesToWord,
  SAFE_LIMIT,
  toBig,
  toWord,
  type Word,
  wordToBytes,
  wordToMinimalBytes,
} from "./words.js";
