import type { Fork, Precompile } from "./types.js";

/**
 * The precompiled contracts (0x01–0x11 and the app's P256 at 0x…0100 and Bech32 at 0x…0400) by
 * address and fork. In progress: filled in by the precompile work of docs/evm-engine.md.
 */

/** The precompile at `addr` under `fork`, or undefined. */
export function precompileAt(_addr: Uint8Array, _fork: Fork): Precompile | undefined {
  return undefined;
}

/** Every precompile address active under `fork` (EIP-2929: warm from the start of a transaction). */
export function activePrecompiles(_fork: Fork): Uint8Array[] {
  return [];
}
