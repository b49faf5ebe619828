import { bytesEqual } from "../../../util/bytes.js";
import type { EvmLog } from "../services.js";

/**
 * geth's filterLogs test: any listed address, then positional topic criteria (null = wildcard,
 * a list = OR). A log with fewer topics than criteria never matches.
 */
export function logMatches(
  log: EvmLog,
  addresses: readonly Uint8Array[],
  topics: readonly (readonly Uint8Array[] | null)[],
): boolean {
  if (addresses.length > 0 && !addresses.some((a) => bytesEqual(a, log.address))) return false;
  if (topics.length > log.topics.length) return false;
  for (let i = 0; i < topics.length; i++) {
    const wanted = topics[i];
    if (wanted === null || wanted === undefined || wanted.length === 0) continue;
    const have = log.topics[i] as Uint8Array;
    if (!wanted.some((t) => bytesEqual(t, have))) return false;
  }
  return true;
}
