import type { ChainState, ConsensusParams, FinalizeBlockResponse, ValidatorSet } from "../types/index.js";
import { bytesEqual } from "../util/bytes.js";
import { StoreError } from "./errors.js";
import { heightFromKey, heightKey, prefixKey, STATE_KEY_PREFIX, TABLES } from "./keys.js";
import type { KvStore, KvTable } from "./kvStore.js";
import {
  decodeChainState,
  decodeConsensusParams,
  decodeFinalizeBlockResponse,
  decodeValidatorSetRecord,
  encodeChainState,
  encodeConsensusParams,
  encodeFinalizeBlockResponse,
  encodeValidatorSetRecord,
} from "./records.js";

/**
 * A full validator set is also stored every this many heights, so a lookup never replays more than
 * this many proposer-priority increments (CometBFT's valSetCheckpointInterval, smaller).
 */
export const VALIDATOR_SET_CHECKPOINT_INTERVAL = 1000;

/**
 * The chain state after each block (CometBFT state.Store): the latest ChainState, validator sets and
 * consensus params by height, and FinalizeBlock responses by height. Validator sets are stored in full
 * only where they change (and at checkpoints); other heights replay proposer priorities from there.
 */
export class StateStore {
  readonly #kv: KvStore;
  readonly #table: KvTable;
  /** Highest height loadConsensusParams answers for (the next block); 0 before any save. */
  #nextHeight = 0;
  /** Dev chains: every saved state is also kept by height, for rollbackTo. */
  readonly #keepHistory: boolean;
  /**
   * What save() wrote last, so the next save need not look it up again: the consensus params entry in
   * force (its height and bytes) and the highest validator set entry. Each block's save then only
   * compares bytes. Cleared (looked up again) by whatever else removes or writes entries: bootstrap,
   * rollbackTo, pruneStates.
   */
  #lastParams: { height: number; value: Uint8Array } | undefined;
  #validatorsStoredAt: number | undefined;
  /** The params object last encoded and its bytes (a chain's params rarely change between blocks). */
  #paramsEncoded: { params: ConsensusParams; bytes: Uint8Array } | undefined;

  constructor(db: KvStore, opts: { keepHistory?: boolean } = {}) {
    this.#kv = db;
    this.#keepHistory = opts.keepHistory === true;
    this.#table = db.table(TABLES.state);
    const s = this.load();
    if (s !== undefined) this.#nextHeight = nextHeightOf(s);
  }

  load(): ChainState | undefined {
    const bytes = this.#table.get(prefixKey(STATE_KEY_PREFIX.state));
    return bytes === undefined ? undefined : decodeChainState(bytes);
  }

  /** Saves the state after a block (and its validators/params by height) atomically; durable on resolve. */
  async save(s: ChainState): Promise<void> {
    const next = nextHeightOf(s);
    const stateBytes = encodeChainState(s);
    const validatorsBytes = s.lastBlockHeight === 0 ? encodeValidatorSetRecord(s.validators) : undefined;
    const paramsBytes = this.#encodeParams(s.consensusParams);
    const valHeight = next + 1;
    // The next set is stored where it changes, at checkpoints, and when no entry answers for its height.
    const storeNextValidators =
      s.lastHeightValidatorsChanged === valHeight ||
      valHeight % VALIDATOR_SET_CHECKPOINT_INTERVAL === 0 ||
      (validatorsBytes === undefined && !this.#validatorsAnswerFor(valHeight));
    const nextValidatorsBytes = storeNextValidators ? encodeValidatorSetRecord(s.nextValidators) : undefined;
    const params = this.#lastParams ?? this.#lastAtOrBelow(STATE_KEY_PREFIX.consensusParams, next);
    const newParams = params === undefined || params.height > next || !bytesEqual(params.value, paramsBytes);
    await this.#kv.transaction(() => {
      const t = this.#table;
      // At genesis the set of the first block is stored too (CometBFT store.save).
      if (validatorsBytes !== undefined) t.put(heightKey(STATE_KEY_PREFIX.validators, next), validatorsBytes);
      if (nextValidatorsBytes !== undefined) {
        t.put(heightKey(STATE_KEY_PREFIX.validators, valHeight), nextValidatorsBytes);
      }
      if (newParams) t.put(heightKey(STATE_KEY_PREFIX.consensusParams, next), paramsBytes);
      t.put(prefixKey(STATE_KEY_PREFIX.state), stateBytes);
      if (this.#keepHistory) t.put(heightKey(STATE_KEY_PREFIX.stateAt, s.lastBlockHeight), stateBytes);
    });
    this.#nextHeight = next;
    this.#lastParams = newParams ? { height: next, value: paramsBytes } : params;
    if (validatorsBytes !== undefined) this.#validatorsStoredAt = Math.max(this.#validatorsStoredAt ?? 0, next);
    if (nextValidatorsBytes !== undefined) this.#validatorsStoredAt = valHeight;
  }

  /** Whether a validator set entry at or below `height` exists (remembered once known). */
  #validatorsAnswerFor(height: number): boolean {
    if (this.#validatorsStoredAt !== undefined && this.#validatorsStoredAt <= height) return true;
    const entry = this.#lastAtOrBelow(STATE_KEY_PREFIX.validators, height);
    if (entry === undefined) return false;
    this.#validatorsStoredAt = entry.height;
    return true;
  }

  #encodeParams(params: ConsensusParams): Uint8Array {
    const known = this.#paramsEncoded;
    if (known !== undefined && known.params === params) return known.bytes;
    const bytes = encodeConsensusParams(params);
    this.#paramsEncoded = { params, bytes };
    return bytes;
  }

  /** Forgets what save() remembered of the stored entries (they were changed another way). */
  #forgetStored(): void {
    this.#lastParams = undefined;
    this.#validatorsStoredAt = undefined;
  }

  /**
   * Stores a state that did not come from replaying blocks (genesis or state sync): the validator sets
   * of the last, current and next heights and the current params, then the state (CometBFT Bootstrap).
   */
  async bootstrap(s: ChainState): Promise<void> {
    const height = nextHeightOf(s);
    const lastValidatorsBytes =
      height > 1 && !s.lastValidators.isEmpty() ? encodeValidatorSetRecord(s.lastValidators) : undefined;
    const validatorsBytes = encodeValidatorSetRecord(s.validators);
    const nextValidatorsBytes = encodeValidatorSetRecord(s.nextValidators);
    const paramsBytes = encodeConsensusParams(s.consensusParams);
    const stateBytes = encodeChainState(s);
    this.#forgetStored();
    await this.#kv.transaction(() => {
      const t = this.#table;
      if (lastValidatorsBytes !== undefined) {
        t.put(heightKey(STATE_KEY_PREFIX.validators, height - 1), lastValidatorsBytes);
      }
      t.put(heightKey(STATE_KEY_PREFIX.validators, height), validatorsBytes);
      t.put(heightKey(STATE_KEY_PREFIX.validators, height + 1), nextValidatorsBytes);
      t.put(heightKey(STATE_KEY_PREFIX.consensusParams, height), paramsBytes);
      t.put(prefixKey(STATE_KEY_PREFIX.state), stateBytes);
      if (this.#keepHistory) t.put(heightKey(STATE_KEY_PREFIX.stateAt, s.lastBlockHeight), stateBytes);
    });
    this.#nextHeight = height;
  }

  /**
   * Dev chains (evm_revert, hardhat_reset): makes the state kept after `height` the latest again and
   * deletes what later heights stored (validator sets, params, FinalizeBlock responses, kept states).
   * Returns the restored state; throws StoreError when no state was kept for `height`.
   */
  async rollbackTo(height: number): Promise<ChainState> {
    const bytes = this.#table.get(heightKey(STATE_KEY_PREFIX.stateAt, height));
    if (bytes === undefined) {
      throw new StoreError(`no chain state is kept for height ${height}: only a dev chain can be rolled back`);
    }
    const s = decodeChainState(bytes);
    const next = nextHeightOf(s);
    this.#forgetStored();
    await this.#kv.transaction(() => {
      const t = this.#table;
      const doomed: Uint8Array[] = [];
      const above = (prefix: number, h: number) => {
        for (const { key } of t.range({ prefix: prefixKey(prefix), gte: heightKey(prefix, h + 1) })) doomed.push(key);
      };
      // What save(s) wrote stays: validators up to next + 1, params up to next.
      above(STATE_KEY_PREFIX.validators, next + 1);
      above(STATE_KEY_PREFIX.consensusParams, next);
      above(STATE_KEY_PREFIX.finalizeBlock, height);
      above(STATE_KEY_PREFIX.stateAt, height);
      for (const key of doomed) t.remove(key);
      t.put(prefixKey(STATE_KEY_PREFIX.state), bytes);
    });
    this.#nextHeight = next;
    return s;
  }

  /**
   * Deletes what heights below `retainHeight` stored that no retained height needs (CometBFT
   * PruneStates): FinalizeBlock responses below it; consensus params entries older than the one in
   * force at `retainHeight`; validator set entries older than the one that gives the set of
   * min(retainHeight, evidenceHeight), so sets stay loadable from the lowest height evidence can still
   * come from (`evidenceHeight`, the block store's header base). Entries are whole sets and params
   * (never deltas), so one kept entry answers every later height. Durable when the promise resolves.
   */
  async pruneStates(retainHeight: number, evidenceHeight: number = retainHeight): Promise<void> {
    if (retainHeight <= 0) throw new StoreError(`cannot prune states below height ${retainHeight}: it must be > 0`);
    const valsFrom = this.#lastAtOrBelow(STATE_KEY_PREFIX.validators, Math.min(retainHeight, evidenceHeight));
    const paramsFrom = this.#lastAtOrBelow(STATE_KEY_PREFIX.consensusParams, retainHeight);
    this.#forgetStored();
    await this.#kv.transaction(() => {
      const t = this.#table;
      const doomed: Uint8Array[] = [];
      const below = (prefix: number, h: number) => {
        for (const { key } of t.range({ prefix: prefixKey(prefix), lt: heightKey(prefix, h) })) doomed.push(key);
      };
      if (valsFrom !== undefined) below(STATE_KEY_PREFIX.validators, valsFrom.height);
      if (paramsFrom !== undefined) below(STATE_KEY_PREFIX.consensusParams, paramsFrom.height);
      below(STATE_KEY_PREFIX.finalizeBlock, retainHeight);
      for (const key of doomed) t.remove(key);
    });
  }

  /**
   * The validator set of block `height`, with its exact proposer priorities; undefined above the next
   * block's next height or below the first stored height.
   */
  loadValidators(height: number): ValidatorSet | undefined {
    if (this.#nextHeight === 0 || height < 1 || height > this.#nextHeight + 1) return undefined;
    const entry = this.#lastAtOrBelow(STATE_KEY_PREFIX.validators, height);
    if (entry === undefined) return undefined;
    const vs = decodeValidatorSetRecord(entry.value);
    const steps = height - entry.height;
    return steps === 0 ? vs : vs.copyIncrementProposerPriority(steps);
  }

  /** The consensus params in force at block `height` (up to the next block). */
  loadConsensusParams(height: number): ConsensusParams | undefined {
    if (this.#nextHeight === 0 || height < 1 || height > this.#nextHeight) return undefined;
    const entry = this.#lastAtOrBelow(STATE_KEY_PREFIX.consensusParams, height);
    return entry === undefined ? undefined : decodeConsensusParams(entry.value);
  }

  async saveFinalizeBlockResponse(height: number, r: FinalizeBlockResponse): Promise<void> {
    const bytes = encodeFinalizeBlockResponse(r);
    await this.#kv.transaction(() => this.#table.put(heightKey(STATE_KEY_PREFIX.finalizeBlock, height), bytes));
  }

  loadFinalizeBlockResponse(height: number): FinalizeBlockResponse | undefined {
    const bytes = this.#table.get(heightKey(STATE_KEY_PREFIX.finalizeBlock, height));
    return bytes === undefined ? undefined : decodeFinalizeBlockResponse(bytes);
  }

  #lastAtOrBelow(prefix: number, height: number): { height: number; value: Uint8Array } | undefined {
    for (const { key, value } of this.#table.range({
      prefix: prefixKey(prefix),
      lt: heightKey(prefix, height + 1),
      reverse: true,
      limit: 1,
    })) {
      return { height: heightFromKey(key), value };
    }
    return undefined;
  }
}

/** The height of the block after `s` (InitialHeight before the first block). */
function nextHeightOf(s: ChainState): number {
  return s.lastBlockHeight === 0 ? s.initialHeight : s.lastBlockHeight + 1;
}
