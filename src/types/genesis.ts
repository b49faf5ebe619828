import type { Timestamp } from "../util/time.js";
import type { PubKey } from "./keys.js";
import type { ConsensusParams } from "./paramsTypes.js";

export interface GenesisValidator {
  address: Uint8Array;
  pubKey: PubKey;
  power: bigint;
  name: string;
}

/** genesis.json in domain form; config/ reads and writes the JSON. */
export interface GenesisDoc {
  genesisTime: Timestamp;
  chainId: string;
  initialHeight: number;
  consensusParams: ConsensusParams;
  validators: GenesisValidator[];
  appHash: Uint8Array;
  /** Raw JSON text of app_state (may be empty). */
  appState: unknown;
}
