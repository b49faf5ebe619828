import type { WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext } from "../context.js";
import { toQuantity } from "../encode/hex.js";
import { serverError } from "../errors.js";
import type { BlockSpec } from "../params.js";
import type { EvmBlock, EvmServices } from "../services.js";
import { specHeight } from "./resolve.js";

/**
 * eth_feeHistory (geth gasprice.FeeHistory): base fees (n+1, the last being the next block's),
 * gas-used ratios, and for each block the effective tips at the requested percentiles, weighted
 * by each tx's gas. blockCount above feehistory-cap is capped, not refused (docs/ethereum-rpc.md "Namespaces": the
 * standard says "clients will return less than the requested range").
 */

const MAX_PERCENTILES = 100;
/** No blobs on this chain: the blob base fee is the EIP-4844 minimum (1 wei), usage 0. */
const MIN_BLOB_BASE_FEE = 1n;

function checkPercentiles(percentiles: readonly number[]): void {
  if (percentiles.length > MAX_PERCENTILES) {
    throw serverError(`too many percentiles: ${percentiles.length} (max ${MAX_PERCENTILES})`);
  }
  percentiles.forEach((p, i) => {
    if (!Number.isFinite(p) || p < 0 || p > 100) throw serverError(`invalid reward percentile: ${goFloat(p)}`);
    const prev = percentiles[i - 1];
    if (prev !== undefined && p <= prev) {
      throw serverError(`invalid reward percentile: #${i - 1}:${goFloat(prev)} >= #${i}:${goFloat(p)}`);
    }
  });
}

async function blockRewards(block: EvmBlock, percentiles: readonly number[], s: EvmServices): Promise<string[]> {
  const receipts = (await s.chain.blockReceipts(block.number)) ?? [];
  if (receipts.length === 0 || block.gasUsed === 0n) return percentiles.map(() => "0x0");
  const base = block.baseFeePerGas ?? 0n;
  const sorted = receipts
    .map((r) => ({ gas: r.gasUsed, tip: r.effectiveGasPrice > base ? r.effectiveGasPrice - base : 0n }))
    .sort((a, b) => (a.tip < b.tip ? -1 : a.tip > b.tip ? 1 : 0));
  const out: string[] = [];
  let txIndex = 0;
  let sumGas = sorted[0]?.gas ?? 0n;
  for (const p of percentiles) {
    // Threshold in gas units; scaled by 1e6 to keep fractional percentiles exact enough.
    const threshold = (block.gasUsed * BigInt(Math.round(p * 1_000_000))) / 100_000_000n;
    while (sumGas < threshold && txIndex < sorted.length - 1) {
      txIndex++;
      sumGas += sorted[txIndex]?.gas ?? 0n;
    }
    out.push(toQuantity(sorted[txIndex]?.tip ?? 0n));
  }
  return out;
}

export async function feeHistory(
  blockCount: bigint,
  newest: BlockSpec,
  percentiles: readonly number[],
  s: EvmServices,
  ctx: EvmCallContext,
): Promise<WireValue> {
  checkPercentiles(percentiles);
  const head = s.chain.latestHeight();
  const last = specHeight(newest, s);
  if (last > head) throw serverError(`request beyond head block: requested ${last}, head ${head}`);
  const cap = BigInt(Math.max(1, ctx.runtime.settings.feeHistoryCap));
  let count = blockCount > cap ? cap : blockCount;
  if (count > BigInt(last + 1)) count = BigInt(last + 1);
  // geth: no blocks asked, no arrays (`omitempty`, except gasUsedRatio, which shows null).
  if (count === 0n) return { oldestBlock: "0x0", gasUsedRatio: null };

  const blocks: EvmBlock[] = [];
  for (let n = last; n > last - Number(count); n--) {
    const b = await s.chain.blockByNumber(n);
    if (b === undefined) break; // pruned or genesis not served: answer the newer part of the range.
    blocks.unshift(b);
  }
  if (blocks.length === 0) throw serverError(`block ${last} is not available`);
  const oldest = (blocks[0] as EvmBlock).number;
  const next = last === head ? await s.fees.nextBaseFee() : (await s.chain.blockByNumber(last + 1))?.baseFeePerGas;

  const baseFees = blocks.map((b) => toQuantity(b.baseFeePerGas ?? 0n));
  baseFees.push(toQuantity(next ?? 0n));
  const ratios = blocks.map((b) => (b.gasLimit === 0n ? 0 : Number(b.gasUsed) / Number(b.gasLimit)));
  const result: { [k: string]: WireValue | undefined } = {
    oldestBlock: toQuantity(oldest),
    reward:
      percentiles.length === 0 ? undefined : await Promise.all(blocks.map((b) => blockRewards(b, percentiles, s))),
    baseFeePerGas: baseFees,
    gasUsedRatio: ratios,
    baseFeePerBlobGas: baseFees.map(() => toQuantity(MIN_BLOB_BASE_FEE)),
    blobGasUsedRatio: blocks.map(() => 0),
  };
  return result;
}

/** Go's %f (six decimals), as geth's percentile errors print the numbers. */
function goFloat(v: number): string {
  return v.toFixed(6);
}
