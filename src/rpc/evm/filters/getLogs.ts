import { EncodedJson } from "../../jsonrpc/index.js";
import { encodeLog } from "../encode/receipt.js";
import { invalidParams, serverError } from "../errors.js";
import type { BlockSpec, FilterCriteria } from "../params.js";
import type { EvmLog, EvmServices } from "../services.js";
import type { EvmRpcSettings } from "../settings.js";
import { type LogsMemo, logsMemoKey } from "./logsMemo.js";

/**
 * eth_getLogs and eth_getFilterLogs: resolve the range (blockHash form or from/to with tags,
 * default latest), check it against the head and block-range-cap, then ask the node with
 * logs-cap + 1 so that an oversized answer is detected without reading further.
 */

export const PENDING_LOGS_UNSUPPORTED = "pending logs are not supported";

function rangeEnd(spec: BlockSpec | undefined, head: number): number {
  if (spec === undefined) return head;
  if (spec.kind === "number") return spec.number;
  if (spec.tag === "pending") throw serverError(PENDING_LOGS_UNSUPPORTED);
  return head;
}

/** The [from, to] heights of a criteria (not yet checked against the caps). */
export async function resolveLogRange(
  criteria: FilterCriteria,
  services: EvmServices,
): Promise<{ from: number; to: number }> {
  if (criteria.blockHash !== undefined) {
    const block = await services.chain.blockByHash(criteria.blockHash);
    if (block === undefined) throw serverError("unknown block");
    return { from: block.number, to: block.number };
  }
  const head = services.chain.latestHeight();
  let from = rangeEnd(criteria.fromBlock, head);
  const to = rangeEnd(criteria.toBlock, head);
  if (from > to) throw invalidParams("invalid block range params");
  if (to > head) throw invalidParams("block range extends beyond current head block");
  // Pruned blocks (min-retain-blocks): Cosmos EVM's filter fails on the first height CometBFT no
  // longer has. `earliest` (block 0, the genesis, which has no logs) starts at the lowest kept height,
  // as Cosmos EVM resolves it (docs/ethereum-rpc.md, "Pruned heights").
  const lowest = services.chain.earliestHeight?.() ?? 0;
  if (lowest > 1 && from < lowest) {
    if (from === 0) {
      from = Math.min(lowest, to);
    } else {
      throw serverError(
        `failed to fetch block result from CometBFT: height ${from} is not available, lowest height is ${lowest}`,
      );
    }
  }
  return { from, to };
}

export async function getLogs(
  criteria: FilterCriteria,
  services: EvmServices,
  settings: EvmRpcSettings,
): Promise<readonly EvmLog[]> {
  const { from, to } = await resolveLogRange(criteria, services);
  return logsInRange(from, to, criteria, services, settings);
}

/**
 * eth_getLogs's answer as JSON text: a range asked before (same resolved heights, addresses and
 * topics) is answered from `memo` (see LogsMemo).
 */
export async function getLogsJson(
  criteria: FilterCriteria,
  services: EvmServices,
  settings: EvmRpcSettings,
  memo: LogsMemo,
): Promise<EncodedJson> {
  const { from, to } = await resolveLogRange(criteria, services);
  checkRange(from, to, settings);
  const key = logsMemoKey(from, to, criteria, settings.logsCap);
  const kept = memo.get(key);
  if (kept !== undefined) return kept;
  const logs = await logsInRange(from, to, criteria, services, settings);
  let text = "[";
  for (let i = 0; i < logs.length; i++) text += (i === 0 ? "" : ",") + encodeLog(logs[i] as EvmLog).text;
  const json = new EncodedJson(`${text}]`);
  memo.set(key, json);
  return json;
}

function checkRange(from: number, to: number, settings: EvmRpcSettings): void {
  if (settings.blockRangeCap > 0 && to - from > settings.blockRangeCap) {
    throw serverError(`maximum [from, to] blocks distance: ${settings.blockRangeCap}`);
  }
}

async function logsInRange(
  from: number,
  to: number,
  criteria: FilterCriteria,
  services: EvmServices,
  settings: EvmRpcSettings,
): Promise<readonly EvmLog[]> {
  checkRange(from, to, settings);
  const limit = settings.logsCap > 0 ? settings.logsCap + 1 : Number.MAX_SAFE_INTEGER;
  const logs = await services.chain.logs({
    fromBlock: from,
    toBlock: to,
    addresses: criteria.addresses,
    topics: criteria.topics,
    limit,
  });
  if (settings.logsCap > 0 && logs.length > settings.logsCap) {
    throw serverError(`query returned more than ${settings.logsCap} results`);
  }
  return logs;
}
