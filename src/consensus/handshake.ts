import {
  addressFromPubKey,
  type ChainState,
  type CommitResponse,
  type FinalizeBlockResponse,
  type GenesisDoc,
  updateConsensusParams,
  type Validator,
  ValidatorSet,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper } from "../util/bytes.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { BlockExecutor, EMPTY_EVIDENCE_POOL } from "./blockExecutor.js";
import type { BlockStoreAccess, ConsensusApp, EventPublisher, FailPointHook, StateStoreAccess } from "./deps.js";
import {
  AppBlockHeightTooHighError,
  AppBlockHeightTooLowError,
  AppHashMismatchError,
  HandshakeError,
} from "./errors.js";
import { appStateBytes, emptyResultsHash } from "./genesisState.js";

export interface HandshakeDeps {
  app: ConsensusApp;
  blockStore: BlockStoreAccess;
  stateStore: StateStoreAccess;
  genesis: GenesisDoc;
  events?: EventPublisher;
  clock: Clock;
  log: Logger;
  failPoint?: FailPointHook;
}

export interface HandshakeResult {
  state: ChainState;
  /** Blocks executed against the app (or the mock app) during the handshake. */
  blocksReplayed: number;
  appHash: Uint8Array;
}

/**
 * The ABCI handshake (consensus/replay.go Handshaker): compares the app's height (Info) with the
 * block store and the state, calls InitChain on a fresh app, and replays what the app or the state
 * is missing so all three agree before consensus starts.
 */
export async function handshake(deps: HandshakeDeps, initialState: ChainState): Promise<HandshakeResult> {
  const info = await deps.app.info();
  const appHeight = info.lastBlockHeight;
  if (appHeight < 0) throw new HandshakeError(`got a negative last block height (${appHeight}) from the app`);
  deps.log.info(
    {
      height: appHeight,
      hash: bytesToHexUpper(info.lastBlockAppHash),
      version: info.version,
      appVersion: info.appVersion.toString(),
    },
    "ABCI Handshake App Info",
  );
  let state = initialState;
  if (state.lastBlockHeight === 0) state = { ...state, appVersion: info.appVersion };
  const replayer = new Replayer(deps);
  const appHash = await replayer.replayBlocks(state, info.lastBlockAppHash, appHeight);
  deps.log.info(
    { appHeight, appHash: bytesToHexUpper(appHash) },
    "Completed ABCI Handshake - CometBFT and App are synced",
  );
  return { state: replayer.state ?? state, blocksReplayed: replayer.nBlocks, appHash };
}

class Replayer {
  nBlocks = 0;
  /** The state after the handshake when it changed it. */
  state: ChainState | undefined;
  readonly #deps: HandshakeDeps;
  constructor(deps: HandshakeDeps) {
    this.#deps = deps;
  }

  async replayBlocks(initial: ChainState, appHashIn: Uint8Array, appHeight: number): Promise<Uint8Array> {
    const { blockStore, genesis, log } = this.#deps;
    let state = initial;
    let appHash = appHashIn;
    const storeBase = blockStore.base();
    const storeHeight = blockStore.height();
    const stateHeight = state.lastBlockHeight;
    log.info({ appHeight, storeHeight, stateHeight }, "ABCI Replay Blocks");

    if (appHeight === 0) {
      const genVals: Validator[] = genesis.validators.map((v) => ({
        address: v.address.length > 0 ? v.address : addressFromPubKey(v.pubKey),
        pubKey: v.pubKey,
        votingPower: v.power,
        proposerPriority: 0n,
      }));
      const genSet = genVals.length > 0 ? ValidatorSet.create(genVals) : ValidatorSet.empty();
      const res = await this.#deps.app.initChain({
        time: genesis.genesisTime,
        chainId: genesis.chainId,
        consensusParams: genesis.consensusParams,
        validators: genSet.validators.map((v) => ({ pubKey: v.pubKey, power: v.votingPower })),
        appStateBytes: appStateBytes(genesis.appState),
        initialHeight: genesis.initialHeight,
      });
      appHash = res.appHash;
      if (stateHeight === 0) {
        state = { ...state };
        if (res.appHash.length > 0) state.appHash = res.appHash;
        if (res.validators.length > 0) {
          const vals = ValidatorSet.create(
            res.validators.map((u) => ({
              address: addressFromPubKey(u.pubKey),
              pubKey: u.pubKey,
              votingPower: u.power,
              proposerPriority: 0n,
            })),
          );
          state.validators = vals;
          state.nextValidators = vals.copyIncrementProposerPriority(1);
        } else if (genesis.validators.length === 0) {
          throw new HandshakeError(
            "validator set is nil in genesis and still empty after InitChain. Add validators to genesis or return them from InitChain",
          );
        }
        if (res.consensusParams !== undefined) {
          state.consensusParams = updateConsensusParams(state.consensusParams, res.consensusParams);
          state.appVersion = res.consensusParams.version.app;
        }
        state.lastResultsHash = emptyResultsHash();
        await this.#deps.stateStore.save(state);
        this.state = state;
      }
    }

    if (storeHeight === 0) {
      assertAppHashEqualsState(appHash, state);
      this.state = state;
      return appHash;
    }
    if (appHeight === 0 && state.initialHeight < storeBase) throw new AppBlockHeightTooLowError(appHeight, storeBase);
    if (appHeight > 0 && appHeight < storeBase - 1) throw new AppBlockHeightTooLowError(appHeight, storeBase);
    if (storeHeight < appHeight) throw new AppBlockHeightTooHighError(appHeight, storeHeight);
    if (storeHeight < stateHeight) {
      throw new HandshakeError(
        `StateBlockHeight (${stateHeight}) > StoreBlockHeight (${storeHeight}). The state store is ahead of the block store`,
      );
    }
    if (storeHeight > stateHeight + 1) {
      throw new HandshakeError(
        `StoreBlockHeight (${storeHeight}) > StateBlockHeight + 1 (${stateHeight + 1}). The state store is behind`,
      );
    }

    if (storeHeight === stateHeight) {
      if (appHeight < storeHeight) return this.#replayRange(state, appHash, appHeight, storeHeight, false);
      assertAppHashEqualsState(appHash, state);
      this.state = state;
      return appHash;
    }
    // storeHeight === stateHeight + 1: the last block was saved but the state was not.
    if (appHeight < stateHeight) return this.#replayRange(state, appHash, appHeight, storeHeight, true);
    if (appHeight === stateHeight) {
      log.info("Replay last block using real app");
      state = await this.#replayBlock(state, storeHeight, this.#deps.app);
      return state.appHash;
    }
    // appHeight === storeHeight: the app committed it; re-apply with its saved FinalizeBlock response.
    const saved = this.#deps.stateStore.loadFinalizeBlockResponse(storeHeight);
    if (saved === undefined) {
      throw new HandshakeError(
        `could not find results for height #${storeHeight}. The state store lost the FinalizeBlock response`,
      );
    }
    const resp: FinalizeBlockResponse = saved.appHash.length === 0 ? { ...saved, appHash } : saved;
    log.info("Replay last block using mock app");
    state = await this.#replayBlock(state, storeHeight, mockApp(this.#deps.app, resp));
    return state.appHash;
  }

  /** Runs blocks appHeight+1..storeHeight (−1 when mutateState) on the app only; then maybe a full apply. */
  async #replayRange(
    initial: ChainState,
    appHashIn: Uint8Array,
    appHeight: number,
    storeHeight: number,
    mutateState: boolean,
  ): Promise<Uint8Array> {
    let state = initial;
    let appHash = appHashIn;
    const finalBlock = mutateState ? storeHeight - 1 : storeHeight;
    let first = appHeight + 1;
    if (first === 1) first = state.initialHeight;
    const exec = this.#executor(this.#deps.app);
    for (let h = first; h <= finalBlock; h++) {
      this.#deps.log.info({ height: h }, "Applying block");
      const block = this.#deps.blockStore.loadBlock(h);
      if (block === undefined) throw new HandshakeError(`could not find block #${h}. The block store is incomplete`);
      if (appHash.length > 0 && !bytesEqual(appHash, block.header.appHash)) {
        throw new AppHashMismatchError(
          `block.AppHash does not match AppHash after replay. Got ${bytesToHexUpper(appHash)}, expected ${bytesToHexUpper(block.header.appHash)} (height ${h})`,
        );
      }
      appHash = await exec.execCommitBlock(block, this.#deps.genesis.initialHeight);
      this.nBlocks++;
    }
    if (mutateState) {
      state = await this.#replayBlock(state, storeHeight, this.#deps.app);
      appHash = state.appHash;
    }
    assertAppHashEqualsState(appHash, state);
    this.state = state;
    return appHash;
  }

  async #replayBlock(state: ChainState, height: number, app: ConsensusApp): Promise<ChainState> {
    const block = this.#deps.blockStore.loadBlock(height);
    const meta = this.#deps.blockStore.loadBlockMeta(height);
    if (block === undefined || meta === undefined) {
      throw new HandshakeError(`could not find block #${height}. The block store is incomplete`);
    }
    const { state: next } = await this.#executor(app).applyBlock(state, meta.blockId, block, { validate: true });
    this.nBlocks++;
    this.state = next;
    return next;
  }

  #executor(app: ConsensusApp): BlockExecutor {
    const { blockStore, stateStore, events, clock, log, failPoint } = this.#deps;
    return new BlockExecutor({
      app,
      blockStore,
      stateStore,
      evidence: EMPTY_EVIDENCE_POOL, // sm.EmptyEvidencePool: replayed blocks were checked when decided
      ...(events === undefined ? {} : { events }),
      clock,
      log,
      ...(failPoint === undefined ? {} : { failPoint }),
    });
  }
}

/** newMockProxyApp: answers FinalizeBlock with the saved response and commits nothing. */
function mockApp(real: ConsensusApp, resp: FinalizeBlockResponse): ConsensusApp {
  return {
    info: () => real.info(),
    initChain: (req) => real.initChain(req),
    prepareProposal: (req) => real.prepareProposal(req),
    processProposal: (req) => real.processProposal(req),
    finalizeBlock: async () => resp,
    commit: async (): Promise<CommitResponse> => ({ retainHeight: 0 }),
  };
}

function assertAppHashEqualsState(appHash: Uint8Array, state: ChainState): void {
  if (!bytesEqual(appHash, state.appHash)) {
    throw new AppHashMismatchError(
      `state.AppHash does not match AppHash after replay. Got ${bytesToHexUpper(appHash)}, expected ${bytesToHexUpper(state.appHash)}. Did you reset CometBFT without resetting your application's data?`,
    );
  }
}
