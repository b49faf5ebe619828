import type { PubKey } from "./keys.js";

export interface Validator {
  address: Uint8Array;
  pubKey: PubKey;
  votingPower: bigint;
  proposerPriority: bigint;
}
