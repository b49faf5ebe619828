import { activePrecompiles } from "../../evm/index.js";
import { COSMOS_PRECOMPILES } from "./cosmosPrecompiles.js";
import { HISTORY_STORAGE_ADDRESS } from "./genesis.js";

/**
 * The chain's EVM rules as eth_config (EIP-7910) describes them: the precompiles and system contracts
 * of the one fork the chain runs (Prague, from genesis), under the names geth gives them, and the blob
 * fee schedule the EVM computes BLOBBASEFEE with (Prague's, EIP-7691), although the chain takes no blob
 * transactions.
 */

/** geth's names (each precompile's Name()); P256 and Bech32 are Cosmos EVM's. */
const PRECOMPILE_NAMES = new Map<number, string>([
  [0x01, "ECREC"],
  [0x02, "SHA256"],
  [0x03, "RIPEMD160"],
  [0x04, "ID"],
  [0x05, "MODEXP"],
  [0x06, "BN254_ADD"],
  [0x07, "BN254_MUL"],
  [0x08, "BN254_PAIRING"],
  [0x09, "BLAKE2F"],
  [0x0a, "KZG_POINT_EVALUATION"],
  [0x0b, "BLS12_G1ADD"],
  [0x0c, "BLS12_G1MSM"],
  [0x0d, "BLS12_G2ADD"],
  [0x0e, "BLS12_G2MSM"],
  [0x0f, "BLS12_PAIRING_CHECK"],
  [0x10, "BLS12_MAP_FP_TO_G1"],
  [0x11, "BLS12_MAP_FP2_TO_G2"],
  [0x0100, "P256VERIFY"],
  [0x0400, "BECH32"],
]);

export interface ChainRulesView {
  readonly precompiles: readonly { name: string; address: Uint8Array }[];
  /** Cosmos EVM runs only EIP-2935's history contract (no beacon roots, deposits or EL requests). */
  readonly systemContracts: readonly { name: string; address: Uint8Array }[];
  readonly blobSchedule: { readonly target: number; readonly max: number; readonly baseFeeUpdateFraction: bigint };
}

/** The rules of the chain's fork: the engine's precompile table with the chain's own (Cosmos EVM's P256 and Bech32). */
export function chainRules(): ChainRulesView {
  const precompiles = activePrecompiles("prague", COSMOS_PRECOMPILES).map((address) => {
    const key = ((address[18] as number) << 8) | (address[19] as number);
    return { name: PRECOMPILE_NAMES.get(key) ?? `0x${Buffer.from(address).toString("hex")}`, address };
  });
  return {
    precompiles,
    systemContracts: [{ name: "HISTORY_STORAGE_ADDRESS", address: HISTORY_STORAGE_ADDRESS }],
    blobSchedule: { target: 6, max: 9, baseFeeUpdateFraction: 5007716n },
  };
}
