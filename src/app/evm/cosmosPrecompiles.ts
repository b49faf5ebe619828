import { failure, outOfGas, type PrecompileExtensions, type PrecompileResult, success } from "../../evm/index.js";
import { BECH32_BASE_GAS, runBech32 } from "./bech32Precompile.js";
import { P256_VERIFY_GAS, verifyP256 } from "./p256Precompile.js";

/**
 * The app's precompiles from Cosmos EVM's evmd defaults, as p256Precompile.ts and bech32Precompile.ts
 * implement them: P256 at 0x…0100 (RIP-7212 at Cosmos EVM's 3450 gas) and Bech32 at 0x…0400 (6000
 * gas), given to the engine as its precompile extensions (COSMOS_PRECOMPILES) on every run of the chain.
 */

const P256_VALID = Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0));
const EMPTY = new Uint8Array(0);

/** 0x…0100: 32 bytes ending in 1 when the signature verifies, empty otherwise; 3450 gas in every case. */
export function p256Verify(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < P256_VERIFY_GAS) return outOfGas();
  return success(P256_VERIFY_GAS, verifyP256(input) ? P256_VALID.slice() : EMPTY);
}

/**
 * 0x…0400: hexToBech32(address,string) / bech32ToHex(string), bech32Precompile.ts's logic. Input
 * shorter than a selector reverts with the rest of the gas returned; an unknown selector or bad
 * arguments fail (all gas).
 */
export function bech32Precompile(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < BECH32_BASE_GAS) return outOfGas();
  const r = runBech32(input);
  if ("revert" in r) return { ok: "revert", gasUsed: BECH32_BASE_GAS, output: EMPTY };
  if ("error" in r) return failure(r.error);
  return success(BECH32_BASE_GAS, r.output);
}

/** Cosmos EVM's precompiles as the engine's extensions: every execution of the chain passes them. */
export const COSMOS_PRECOMPILES: PrecompileExtensions = new Map([
  [0x0100, p256Verify],
  [0x0400, bech32Precompile],
]);
