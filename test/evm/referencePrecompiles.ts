import { type CustomPrecompile, EVMError, type ExecResult, type PrecompileInput } from "@ethereumjs/evm";
import { BECH32_BASE_GAS, BECH32_PRECOMPILE_ADDRESS, runBech32 } from "../../src/app/evm/bech32Precompile.js";
import { P256_PRECOMPILE_ADDRESS, P256_VERIFY_GAS, verifyP256 } from "../../src/app/evm/p256Precompile.js";

/**
 * The app's own precompiles (P256 at 0x…0100, Bech32 at 0x…0400) as @ethereumjs/evm custom precompiles,
 * for the reference EVM of the differential tests only: the node runs them through engine/precompiles.
 */

/** A call that fails as geth's RunPrecompiledContract ends one: no output, all the gas it was given. */
function precompileFailure(gasLimit: bigint, error: string = EVMError.errorMessages.OUT_OF_GAS): ExecResult {
  return {
    returnValue: new Uint8Array(0),
    executionGasUsed: gasLimit,
    exceptionError: new EVMError(error as ConstructorParameters<typeof EVMError>[0]),
  };
}

const VALID = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0));

export const P256_PRECOMPILE: CustomPrecompile = {
  address: P256_PRECOMPILE_ADDRESS,
  function: (opts: PrecompileInput): ExecResult => {
    if (opts.gasLimit < P256_VERIFY_GAS) return precompileFailure(opts.gasLimit);
    return { executionGasUsed: P256_VERIFY_GAS, returnValue: verifyP256(opts.data) ? VALID : new Uint8Array(0) };
  },
};

export const BECH32_PRECOMPILE: CustomPrecompile = {
  address: BECH32_PRECOMPILE_ADDRESS,
  function: (opts: PrecompileInput): ExecResult => {
    if (opts.gasLimit < BECH32_BASE_GAS) return precompileFailure(opts.gasLimit);
    const r = runBech32(opts.data);
    if ("revert" in r) {
      return {
        returnValue: new Uint8Array(0),
        executionGasUsed: BECH32_BASE_GAS,
        exceptionError: new EVMError(EVMError.errorMessages.REVERT),
      };
    }
    if ("error" in r) return precompileFailure(opts.gasLimit, r.error);
    return { returnValue: r.output, executionGasUsed: BECH32_BASE_GAS };
  },
};
