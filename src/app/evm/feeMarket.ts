import type { FeeMarketParams, FeeMarketState } from "./records.js";

/**
 * The EIP-1559 base fee as Cosmos EVM v0.5's x/feemarket computes it (keeper/eip1559.go,
 * types/utils.go CalcGasBaseFee, keeper/abci.go EndBlock). Values are sdk LegacyDec: 18-decimal
 * fixed point, here bigint scaled by 1e18, with the same truncating divisions, so the base fee of
 * every height matches a Cosmos EVM chain with the same params and gas usage (18-decimal EVM coin).
 *
 * Differences from Ethereum: the parent's "gas used" is max(gasWanted·min_gas_multiplier, gasUsed)
 * of the whole block; the target is block.max_gas / elasticity (max_gas -1 → 2^64-1); a block at
 * `enable_height` gets the initial base fee; the fee never drops below `min_gas_price`; and at
 * height 1 (enable_height 0) the base fee already moves from the initial value.
 */

export const DEC_ONE = 10n ** 18n;

/** x/feemarket DefaultParams. */
export function defaultFeeMarketParams(): FeeMarketParams {
  return {
    noBaseFee: false,
    baseFeeChangeDenominator: 8n,
    elasticityMultiplier: 2n,
    baseFee: 1_000_000_000n * DEC_ONE,
    enableHeight: 0,
    minGasPrice: 0n,
    minGasMultiplier: DEC_ONE / 2n,
  };
}

const MAX_UINT64 = (1n << 64n) - 1n;

/** CalcGasBaseFee on Decs (minUnitGas = 1 wei for an 18-decimal coin). */
export function calcGasBaseFee(
  gasUsed: bigint,
  gasTarget: bigint,
  denominator: bigint,
  baseFee: bigint,
  minGasPrice: bigint,
): bigint {
  if (gasUsed === gasTarget) return baseFee;
  if (gasTarget === 0n) return 0n;
  const delta = gasUsed > gasTarget ? gasUsed - gasTarget : gasTarget - gasUsed;
  // Dec(delta)·baseFee is exact; QuoInt truncates, twice.
  const num = (delta * baseFee) / gasTarget / denominator;
  if (gasUsed > gasTarget) return baseFee + (num > DEC_ONE ? num : DEC_ONE);
  const lowered = baseFee - num;
  return lowered > minGasPrice ? lowered : minGasPrice;
}

/**
 * The base fee (Dec) for block `height`, from the state the previous block left; undefined when the
 * fee market is off at this height (no_base_fee, or below enable_height).
 */
export function baseFeeForHeight(
  height: number,
  params: FeeMarketParams,
  state: FeeMarketState,
  maxGas: bigint,
): bigint | undefined {
  if (params.noBaseFee || height < params.enableHeight) return undefined;
  if (height === params.enableHeight) return params.baseFee;
  const gasLimit = maxGas > -1n ? maxGas : MAX_UINT64;
  const target = gasLimit / params.elasticityMultiplier;
  if (target > MAX_UINT64) return undefined;
  return calcGasBaseFee(
    state.blockGasWanted,
    target,
    params.baseFeeChangeDenominator,
    state.baseFee,
    params.minGasPrice,
  );
}

/**
 * The base fee (Dec) of the block after the committed one: a dev chain's setNextBaseFee entry
 * (`nextBaseFee`, wei) when one is pending, else the fee market's. CheckTx, PrepareProposal,
 * FinalizeBlock and the reader's eth_baseFee must agree on it, or a tx priced for the set fee is
 * refused before the block that would take it.
 */
export function nextBlockBaseFee(
  height: number,
  params: FeeMarketParams,
  state: FeeMarketState,
  maxGas: bigint,
  nextBaseFee: bigint | undefined,
): bigint | undefined {
  if (nextBaseFee !== undefined) return nextBaseFee * DEC_ONE;
  return baseFeeForHeight(height, params, state, maxGas);
}

/** The EVM-facing base fee in wei: the Dec truncated (0 when the fee market is off). */
export function baseFeeWei(dec: bigint | undefined): bigint {
  return dec === undefined ? 0n : dec / DEC_ONE;
}

/**
 * EndBlock: the gas figure the next block's base fee reads, max(gasWanted·min_gas_multiplier, gasUsed)
 * truncated, and the base fee of this block stored as the next "parent" base fee.
 */
export function nextFeeMarketState(
  params: FeeMarketParams,
  prev: FeeMarketState,
  blockBaseFee: bigint | undefined,
  gasWanted: bigint,
  gasUsed: bigint,
): FeeMarketState {
  const limited = gasWanted * params.minGasMultiplier;
  const used = gasUsed * DEC_ONE;
  const blockGasWanted = (limited > used ? limited : used) / DEC_ONE;
  return { baseFee: blockBaseFee ?? prev.baseFee, blockGasWanted };
}

/** sdk LegacyDec.String(): integer part, a dot, 18 decimals. */
export function formatDec(dec: bigint): string {
  const neg = dec < 0n;
  const abs = neg ? -dec : dec;
  const int = abs / DEC_ONE;
  const frac = (abs % DEC_ONE).toString().padStart(18, "0");
  return `${neg ? "-" : ""}${int}.${frac}`;
}

/** Parses a LegacyDec string ("0.5", "1000000000", "1.000000000000000000") into the scaled bigint. */
export function parseDec(text: string): bigint | undefined {
  const m = /^(\d+)(?:\.(\d{0,18}))?$/.exec(text.trim());
  if (m === null) return undefined;
  const frac = (m[2] ?? "").padEnd(18, "0");
  return BigInt(m[1] as string) * DEC_ONE + BigInt(frac === "" ? "0" : frac);
}
