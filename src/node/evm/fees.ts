import { baseFeeWei, type EvmReader } from "../../app/evm/index.js";
import type { EvmApplication } from "../../app/index.js";
import type { FeeOracle } from "../../rpc/evm/index.js";

/** The RPC's `fees`: base fees, the priority fee suggestion and the minimum gas price of the Cosmos EVM fee market. */
export class EvmFeeAdapter implements FeeOracle {
  readonly #app: EvmApplication;
  readonly #reader: EvmReader;

  constructor(app: EvmApplication) {
    this.#app = app;
    this.#reader = app.reader;
  }

  nextBaseFee(): bigint {
    return this.#reader.nextBaseFee();
  }

  headBaseFee(): bigint | undefined {
    return this.#app.feeMarketParams().noBaseFee ? undefined : this.#latestBaseFee();
  }

  /**
   * Cosmos EVM's SuggestGasTipCap(head.BaseFee): the most the base fee can rise in one block,
   * baseFee × (elasticity − 1) / change denominator.
   */
  suggestTipCap(): bigint {
    const fm = this.#app.feeMarketParams();
    if (fm.noBaseFee || fm.baseFeeChangeDenominator === 0n) return 0n;
    return (this.#latestBaseFee() * (fm.elasticityMultiplier - 1n)) / fm.baseFeeChangeDenominator;
  }

  /** x/feemarket min_gas_price (a Dec) in wei. */
  minGasPrice(): bigint {
    return baseFeeWei(this.#app.feeMarketParams().minGasPrice);
  }

  /** The latest block's base fee; before the first block, the first block's. */
  #latestBaseFee(): bigint {
    const reader = this.#reader;
    return reader.baseFee(reader.latestHeight()) ?? reader.nextBaseFee();
  }
}
