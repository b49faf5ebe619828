import type { CustomPrecompile } from "@ethereumjs/evm";
import { BECH32_PRECOMPILE } from "./bech32Precompile.js";
import { P256_PRECOMPILE } from "./p256Precompile.js";

/**
 * The precompiles this app adds to the EVM's Prague set: those of Cosmos EVM's evmd defaults that need
 * no Cosmos SDK module (P256 at 0x…0100, Bech32 at 0x…0400).
 */
export const CUSTOM_PRECOMPILES: CustomPrecompile[] = [P256_PRECOMPILE, BECH32_PRECOMPILE];
