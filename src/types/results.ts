import type { ExecTxResult } from "./abci.js";
import { hashFromByteSlices } from "./merkle.js";
import { encodeDeterministicExecTxResult } from "./protoCodec.js";

/**
 * last_results_hash: merkle over ExecTxResult{code, data, gas_wanted, gas_used} of each tx
 * (types.ABCIResults.Hash; log, info, events and codespace are not deterministic:
 * docs/cometbft-hashes.md "Hashes in the header").
 */
export function resultsHash(results: readonly ExecTxResult[]): Uint8Array {
  return hashFromByteSlices(results.map(encodeDeterministicExecTxResult));
}
