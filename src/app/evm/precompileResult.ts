import { EVMError, type ExecResult } from "@ethereumjs/evm";

/**
 * A precompile call that fails as geth's RunPrecompiledContract ends one: no output and all the gas
 * the call was given (out of gas by default; otherwise the precompile's error text, which becomes
 * the call's VM error — ethereumjs keeps any text there).
 */
export function precompileFailure(gasLimit: bigint, error: string = EVMError.errorMessages.OUT_OF_GAS): ExecResult {
  return {
    returnValue: new Uint8Array(0),
    executionGasUsed: gasLimit,
    exceptionError: new EVMError(error as ConstructorParameters<typeof EVMError>[0]),
  };
}
