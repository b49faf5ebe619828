import type { Timestamp } from "../util/time.js";
import type { BlockId } from "./blockId.js";

export const SIGNED_MSG_TYPE = { prevote: 1, precommit: 2, proposal: 32 } as const;
export type VoteType = typeof SIGNED_MSG_TYPE.prevote | typeof SIGNED_MSG_TYPE.precommit;

export interface Vote {
  type: VoteType;
  height: number;
  round: number;
  /** Zero BlockId (empty hash, total 0) for a nil vote. */
  blockId: BlockId;
  timestamp: Timestamp;
  validatorAddress: Uint8Array;
  validatorIndex: number;
  signature: Uint8Array;
  extension: Uint8Array;
  extensionSignature: Uint8Array;
}
