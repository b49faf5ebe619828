import {
  addressFromPubKey,
  type ChainState,
  type GenesisDoc,
  hashFromByteSlices,
  type Validator,
  ValidatorSet,
  zeroBlockId,
} from "../types/index.js";
import { utf8ToBytes } from "../util/bytes.js";

/** sm.MakeGenesisState: the state before the first block (app version 0 until the handshake). */
export function makeGenesisState(genesis: GenesisDoc): ChainState {
  const vals: Validator[] = genesis.validators.map((v) => ({
    address: v.address.length > 0 ? v.address : addressFromPubKey(v.pubKey),
    pubKey: v.pubKey,
    votingPower: v.power,
    proposerPriority: 0n,
  }));
  const validators = vals.length > 0 ? ValidatorSet.create(vals) : ValidatorSet.empty();
  const nextValidators = vals.length > 0 ? validators.copyIncrementProposerPriority(1) : ValidatorSet.empty();
  return {
    chainId: genesis.chainId,
    initialHeight: genesis.initialHeight,
    lastBlockHeight: 0,
    lastBlockId: zeroBlockId(),
    lastBlockTime: genesis.genesisTime,
    nextValidators,
    validators,
    lastValidators: ValidatorSet.empty(),
    lastHeightValidatorsChanged: genesis.initialHeight,
    consensusParams: genesis.consensusParams,
    lastHeightConsensusParamsChanged: genesis.initialHeight,
    lastResultsHash: new Uint8Array(0),
    appHash: genesis.appHash,
    appVersion: 0n,
  };
}

/** The merkle root of no items (sha256 of ""), what InitChain leaves as LastResultsHash. */
export function emptyResultsHash(): Uint8Array {
  return hashFromByteSlices([]);
}

/** app_state as InitChain's app_state_bytes: the raw JSON text when given as text or bytes. */
export function appStateBytes(appState: unknown): Uint8Array {
  if (appState === undefined || appState === null) return new Uint8Array(0);
  if (appState instanceof Uint8Array) return appState;
  if (typeof appState === "string") return utf8ToBytes(appState);
  return utf8ToBytes(JSON.stringify(appState));
}
