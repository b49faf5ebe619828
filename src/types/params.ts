/** CometBFT v0.38 ConsensusParams (durations in nanoseconds). */
export interface ConsensusParams {
  block: { maxBytes: bigint; maxGas: bigint };
  evidence: { maxAgeNumBlocks: bigint; maxAgeDurationNs: bigint; maxBytes: bigint };
  validator: { pubKeyTypes: string[] };
  version: { app: bigint };
  abci: { voteExtensionsEnableHeight: bigint };
}
