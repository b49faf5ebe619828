import type { Timestamp } from "../util/time.js";
import type { BlockId } from "./blockId.js";

export interface Proposal {
  type: 32;
  height: number;
  round: number;
  /** -1 when there is no proof-of-lock round. */
  polRound: number;
  blockId: BlockId;
  timestamp: Timestamp;
  signature: Uint8Array;
}
