import type { Timestamp } from "../util/time.js";
import type { BlockId } from "./blockId.js";
import type { ConsensusParams } from "./paramsTypes.js";
import type { ValidatorSet } from "./validatorSet.js";

/**
 * The chain state after the last committed block (CometBFT state.State): what the next block must
 * be built and validated against.
 */
export interface ChainState {
  chainId: string;
  initialHeight: number;
  /** 0 before the first block. */
  lastBlockHeight: number;
  lastBlockId: BlockId;
  lastBlockTime: Timestamp;
  /** Validators of block lastBlockHeight + 2 (app updates take effect at H+2). */
  nextValidators: ValidatorSet;
  /** Validators of block lastBlockHeight + 1. */
  validators: ValidatorSet;
  /** Validators of block lastBlockHeight (empty set at genesis). */
  lastValidators: ValidatorSet;
  lastHeightValidatorsChanged: number;
  consensusParams: ConsensusParams;
  lastHeightConsensusParamsChanged: number;
  /** Merkle root of the last block's deterministic tx results (empty at genesis). */
  lastResultsHash: Uint8Array;
  appHash: Uint8Array;
  appVersion: bigint;
}
