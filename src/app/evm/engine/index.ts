/**
 * cometh's own EVM (docs/evm-engine.md): a synchronous interpreter for Cancun and Prague over an
 * EngineState. Owns opcodes, gas, frames and the transaction state transition; does not own the
 * state store (stateManager.ts), precompile implementations (precompiles.ts is their table) or the
 * app's ante checks (executor.ts).
 */

export { recoverAuthorization, type SignedAuthorization } from "./authorization.js";
export { floorDataGas, intrinsicGas } from "./gas.js";
export { create2Address, createAddress, delegationTarget, Evm, runFrame } from "./interpreter.js";
export { OPCODES, type OpInfo } from "./opcodes.js";
export { activePrecompiles, precompileAt } from "./precompiles.js";
export { type CallMessage, type ExecOptions, effectivePrice, executeCall, executeTx } from "./transaction.js";
export * from "./types.js";
