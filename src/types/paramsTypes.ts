/**
 * ConsensusParams' plain shapes. Declarations only: protoCodec.ts and the hashing and validation in
 * params.ts import them, never the other way.
 */

/** CometBFT v0.38 ConsensusParams (durations in nanoseconds). */
export interface ConsensusParams {
  block: { maxBytes: bigint; maxGas: bigint };
  evidence: { maxAgeNumBlocks: bigint; maxAgeDurationNs: bigint; maxBytes: bigint };
  validator: { pubKeyTypes: string[] };
  version: { app: bigint };
  abci: { voteExtensionsEnableHeight: bigint };
}

/** An app's consensus param update: each present section replaces the current one (ConsensusParams.Update). */
export type ConsensusParamsUpdate = Partial<ConsensusParams>;
