/**
 * Plain declarations that the filters and the call context both use: kept apart from context.ts
 * (which names the filter manager) so that imports point one way.
 */

/** The `[json-rpc]` settings the handlers read (caps: 0 = unlimited). */
export interface EvmRpcSettings {
  /** gas-cap for eth_call/estimateGas/traceCall; 0 = no cap. */
  readonly gasCap: bigint;
  readonly evmTimeoutMs: number;
  /** txfee-cap in wei; 0 = no cap. */
  readonly txFeeCapWei: bigint;
  readonly filterCap: number;
  readonly feeHistoryCap: number;
  readonly logsCap: number;
  readonly blockRangeCap: number;
  readonly allowUnprotectedTxs: boolean;
  readonly allowInsecureUnlock: boolean;
  readonly enableProfiling: boolean;
  /** http-timeout: how long a request may take before the server answers for it (0 = no limit). */
  readonly requestTimeoutMs: number;
  /** Enabled namespaces (rpc is always on). */
  readonly namespaces: ReadonlySet<string>;
}
