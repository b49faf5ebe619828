import {
  addressFromPubKey,
  BLOCK_PROTOCOL,
  type Block,
  type BlockId,
  blockIdEquals,
  type ChainState,
  type Commit,
  type CommitInfo,
  commitHash,
  dataHash,
  type Evidence,
  evidenceHash,
  type FinalizeBlockResponse,
  hashConsensusParams,
  headerHash,
  type MisbehaviorInfo,
  blockId as makeBlockId,
  makePartSet,
  medianTime,
  type PartSet,
  resultsHash,
  updateConsensusParams,
  type Validator,
  type ValidatorSet,
  type ValidatorUpdate,
  validateBlockBasic,
  validateConsensusParams,
  validateConsensusParamsUpdate,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper } from "../util/bytes.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { formatRfc3339Nano, type Timestamp } from "../util/time.js";
import type {
  BlockStoreAccess,
  ConsensusApp,
  EventPublisher,
  EvidencePoolAccess,
  FailPointHook,
  MempoolAccess,
  StateStoreAccess,
} from "./deps.js";
import { BlockExecutionError, InvalidBlockError } from "./errors.js";

// types/block.go size bounds used to leave room for header, commit and evidence in a block.
const MAX_HEADER_BYTES = 626;
const MAX_OVERHEAD_FOR_BLOCK = 11;
const MAX_COMMIT_OVERHEAD_BYTES = 94;
const MAX_COMMIT_SIG_BYTES = 109;
/** types.MaxBlockSizeBytes (100 MiB), used when block.max_bytes is -1. */
export const MAX_BLOCK_SIZE_BYTES = 104_857_600;

/** types.MaxCommitBytes: commit overhead plus one CommitSig (and its 2-byte repeated-field tag) per validator. */
export function maxCommitBytes(valCount: number): number {
  return MAX_COMMIT_OVERHEAD_BYTES + (MAX_COMMIT_SIG_BYTES + 2) * valCount;
}

/** types.MaxDataBytes: what is left of max_bytes for txs. */
export function maxDataBytes(maxBytes: number, evidenceBytes: number, valCount: number): number {
  const n = maxBytes - MAX_OVERHEAD_FOR_BLOCK - MAX_HEADER_BYTES - maxCommitBytes(valCount) - evidenceBytes;
  if (n < 0) {
    throw new BlockExecutionError(
      `negative MaxDataBytes. Block.MaxBytes=${maxBytes} is too small to accommodate header&lastCommit&evidence=${-(n - maxBytes)}. Raise consensus_params.block.max_bytes`,
    );
  }
  return n;
}

function varintSize(n: number): number {
  let size = 1;
  let v = n;
  while (v >= 128) {
    v = Math.floor(v / 128);
    size++;
  }
  return size;
}

/** ComputeProtoSizeForTxs of one tx: field tag + length varint + bytes. */
function txProtoSize(tx: Uint8Array): number {
  return 1 + varintSize(tx.length) + tx.length;
}

/** ABCI CommitInfo for a block's LastCommit (state.BuildLastCommitInfo); empty at the initial height. */
export function buildLastCommitInfo(
  block: Block,
  lastValSet: ValidatorSet | undefined,
  initialHeight: number,
): CommitInfo {
  if (block.header.height === initialHeight) return { round: 0, votes: [] };
  return commitInfoFor(block.lastCommit, lastValSet, block.header.height);
}

function commitInfoFor(commit: Commit, valSet: ValidatorSet | undefined, height: number): CommitInfo {
  if (valSet === undefined) {
    throw new BlockExecutionError(
      `could not find validator set for height #${height - 1}. The state store is incomplete`,
    );
  }
  if (commit.signatures.length !== valSet.size()) {
    throw new BlockExecutionError(
      `commit size (${commit.signatures.length}) doesn't match validator set length (${valSet.size()}) at height ${height}`,
    );
  }
  return {
    round: commit.round,
    votes: valSet.validators.map((val, i) => ({
      validatorAddress: val.address,
      power: val.votingPower,
      // biome-ignore lint/style/noNonNullAssertion: lengths checked above
      blockIdFlag: commit.signatures[i]!.blockIdFlag,
    })),
  };
}

/** EvidenceList.ToABCI: one DUPLICATE_VOTE misbehavior per piece of evidence, for the app. */
export function misbehaviorOf(evidence: readonly Evidence[]): MisbehaviorInfo[] {
  return evidence.map((ev) => ({
    type: "duplicateVote",
    validatorAddress: ev.voteA.validatorAddress,
    validatorPower: ev.validatorPower,
    height: ev.voteA.height,
    time: ev.timestamp,
    totalVotingPower: ev.totalVotingPower,
  }));
}

/**
 * sm.EmptyEvidencePool: proposes nothing and accepts every block's evidence. For replaying blocks
 * this node already committed (handshake), whose evidence was checked when they were decided.
 */
export const EMPTY_EVIDENCE_POOL: EvidencePoolAccess = {
  pendingEvidence: () => ({ evidence: [], bytes: 0 }),
  checkEvidence: () => {},
  update: () => Promise.resolve(),
};

/** Hash of a block's header, cached per block object. */
const hashCache = new WeakMap<Block, Uint8Array>();
export function blockHash(block: Block): Uint8Array {
  let h = hashCache.get(block);
  if (h === undefined) {
    h = headerHash(block.header) ?? new Uint8Array(0);
    hashCache.set(block, h);
  }
  return h;
}

/** Block.HashesTo: a nil block or an empty hash never matches. */
export function blockHashesTo(block: Block | undefined, hash: Uint8Array): boolean {
  if (block === undefined || hash.length === 0) return false;
  return bytesEqual(blockHash(block), hash);
}

export interface BlockExecutorDeps {
  app: ConsensusApp;
  blockStore: BlockStoreAccess;
  stateStore: StateStoreAccess;
  /** Absent during handshake replay (emptyMempool). */
  mempool?: MempoolAccess;
  /** Without a pool, proposals carry no evidence and blocks carrying some are refused. */
  evidence?: EvidencePoolAccess;
  events?: EventPublisher;
  clock: Clock;
  log: Logger;
  failPoint?: FailPointHook;
}

export interface BlockExecutorOptions {
  /** v0.38.22 block_time_tolerance: reject blocks this far in the future (0 = off). */
  blockTimeToleranceMs: number;
  /**
   * Dev chains: the proposer picks block times (CometBFT v1's proposer-based timestamps) instead of
   * BFT time; a block's time must then only be later than the last block's.
   */
  proposerTime?: (height: number, state: ChainState) => Timestamp;
}

/**
 * Builds, validates and applies blocks (CometBFT state/execution.go + validation.go). applyBlock is
 * the only path that moves ChainState forward.
 */
export class BlockExecutor {
  readonly #deps: BlockExecutorDeps;
  readonly #opts: BlockExecutorOptions;
  /** Per block object, what it last passed validateBlock with (validatedRefs). */
  readonly #validated = new WeakMap<Block, unknown[]>();

  constructor(deps: BlockExecutorDeps, opts: BlockExecutorOptions = { blockTimeToleranceMs: 60_000 }) {
    this.#deps = deps;
    this.#opts = opts;
  }

  /**
   * Takes pending evidence (within evidence.max_bytes), reaps the mempool for the rest of the block,
   * asks the app (PrepareProposal) and builds the block for `height`.
   */
  async createProposalBlock(
    height: number,
    state: ChainState,
    lastCommit: Commit,
    proposerAddress: Uint8Array,
  ): Promise<{ block: Block; parts: PartSet }> {
    const paramMaxBytes = Number(state.consensusParams.block.maxBytes);
    const unlimited = paramMaxBytes === -1;
    const maxBytes = unlimited ? MAX_BLOCK_SIZE_BYTES : paramMaxBytes;
    const maxGas = state.consensusParams.block.maxGas;
    const { evidence, bytes: evidenceBytes } = this.#deps.evidence?.pendingEvidence(
      Number(state.consensusParams.evidence.maxBytes),
    ) ?? { evidence: [], bytes: 0 };
    const dataBytes = maxDataBytes(maxBytes, evidenceBytes, state.validators.size());
    const reaped = this.#deps.mempool?.reapMaxBytesMaxGas(unlimited ? -1 : dataBytes, maxGas) ?? [];
    const draft = this.makeBlock(height, state, reaped, lastCommit, proposerAddress, evidence);
    const localLastCommit =
      height === state.initialHeight
        ? { round: 0, votes: [] }
        : commitInfoFor(lastCommit, state.lastValidators, height);
    const res = await this.#deps.app.prepareProposal({
      maxTxBytes: dataBytes,
      txs: reaped,
      localLastCommit,
      misbehavior: misbehaviorOf(evidence),
      height,
      time: draft.header.time,
      nextValidatorsHash: draft.header.nextValidatorsHash,
      proposerAddress,
    });
    let size = 0;
    for (const tx of res.txs) {
      size += txProtoSize(tx);
      if (size > dataBytes) {
        throw new BlockExecutionError(
          `transaction data size exceeds maximum ${dataBytes}. PrepareProposal must respect max_tx_bytes`,
        );
      }
    }
    const block = this.makeBlock(height, state, res.txs, lastCommit, proposerAddress, evidence);
    return { block, parts: makePartSet(block) };
  }

  /** state.MakeBlock: header from state, BFT time (genesis time at the initial height). */
  makeBlock(
    height: number,
    state: ChainState,
    txs: Uint8Array[],
    lastCommit: Commit,
    proposer: Uint8Array,
    evidence: Evidence[] = [],
  ): Block {
    const time =
      this.#opts.proposerTime !== undefined
        ? this.#opts.proposerTime(height, state)
        : height === state.initialHeight
          ? state.lastBlockTime
          : medianTime(lastCommit, state.lastValidators);
    return {
      header: {
        version: { block: BLOCK_PROTOCOL, app: state.appVersion },
        chainId: state.chainId,
        height,
        time,
        lastBlockId: state.lastBlockId,
        lastCommitHash: commitHash(lastCommit),
        dataHash: dataHash(txs),
        validatorsHash: state.validators.hash(),
        nextValidatorsHash: state.nextValidators.hash(),
        consensusHash: hashConsensusParams(state.consensusParams),
        appHash: state.appHash,
        lastResultsHash: state.lastResultsHash,
        evidenceHash: evidenceHash(evidence),
        proposerAddress: proposer,
      },
      data: { txs },
      evidence,
      lastCommit,
    };
  }

  /** ABCI ProcessProposal: true when the app accepts the block. */
  async processProposal(block: Block, state: ChainState): Promise<boolean> {
    const res = await this.#deps.app.processProposal({
      txs: block.data.txs,
      proposedLastCommit: buildLastCommitInfo(block, state.lastValidators, state.initialHeight),
      misbehavior: misbehaviorOf(block.evidence),
      hash: blockHash(block),
      height: block.header.height,
      time: block.header.time,
      nextValidatorsHash: block.header.nextValidatorsHash,
      proposerAddress: block.header.proposerAddress,
    });
    return res === "accept";
  }

  /**
   * Every check of state/validation.go validateBlock; throws InvalidBlockError naming the rule.
   * Consensus validates one proposal block against one state up to three times (prevote, precommit,
   * commit); a block object that passed every check against this state object passes again (the
   * clock only moves forward, so the future-time bound still holds), and is not checked twice. A block
   * with evidence is always checked again: the pool's view of it may change in between.
   */
  validateBlock(state: ChainState, block: Block, opts: { skipLastCommit?: boolean } = {}): void {
    const remember = opts.skipLastCommit !== true && block.evidence.length === 0;
    const refs = remember ? validatedRefs(state, block) : undefined;
    const memo = this.#validated.get(block);
    if (refs !== undefined && memo !== undefined && memo.length === refs.length && memo.every((r, i) => r === refs[i]))
      return;
    this.#validateBlock(state, block, opts);
    if (refs !== undefined) this.#validated.set(block, refs);
  }

  #validateBlock(state: ChainState, block: Block, opts: { skipLastCommit?: boolean }): void {
    try {
      validateBlockBasic(block);
    } catch (err) {
      throw new InvalidBlockError(`invalid block: ${(err as Error).message}`, { cause: err });
    }
    const h = block.header;
    if (h.version.app !== state.appVersion || h.version.block !== BLOCK_PROTOCOL) {
      throw new InvalidBlockError(
        `wrong Block.Header.Version. Expected {${BLOCK_PROTOCOL} ${state.appVersion}}, got {${h.version.block} ${h.version.app}}`,
      );
    }
    if (h.chainId !== state.chainId) {
      throw new InvalidBlockError(`wrong Block.Header.ChainID. Expected ${state.chainId}, got ${h.chainId}`);
    }
    if (state.lastBlockHeight === 0 && h.height !== state.initialHeight) {
      throw new InvalidBlockError(
        `wrong Block.Header.Height. Expected ${state.initialHeight} for initial block, got ${h.height}`,
      );
    }
    if (state.lastBlockHeight > 0 && h.height !== state.lastBlockHeight + 1) {
      throw new InvalidBlockError(`wrong Block.Header.Height. Expected ${state.lastBlockHeight + 1}, got ${h.height}`);
    }
    if (!blockIdEquals(h.lastBlockId, state.lastBlockId)) {
      throw new InvalidBlockError(
        `wrong Block.Header.LastBlockID. Expected ${fmtBlockId(state.lastBlockId)}, got ${fmtBlockId(h.lastBlockId)}`,
      );
    }
    const expectHash = (name: string, want: Uint8Array, got: Uint8Array) => {
      if (!bytesEqual(want, got)) {
        throw new InvalidBlockError(
          `wrong Block.Header.${name}. Expected ${bytesToHexUpper(want)}, got ${bytesToHexUpper(got)}`,
        );
      }
    };
    expectHash("AppHash", state.appHash, h.appHash);
    expectHash("ConsensusHash", hashConsensusParams(state.consensusParams), h.consensusHash);
    expectHash("LastResultsHash", state.lastResultsHash, h.lastResultsHash);
    expectHash("ValidatorsHash", state.validators.hash(), h.validatorsHash);
    expectHash("NextValidatorsHash", state.nextValidators.hash(), h.nextValidatorsHash);

    if (h.height === state.initialHeight) {
      if (block.lastCommit.signatures.length !== 0) {
        throw new InvalidBlockError("initial block can't have LastCommit signatures");
      }
    } else if (!opts.skipLastCommit) {
      try {
        state.lastValidators.verifyCommit(state.chainId, state.lastBlockId, h.height - 1, block.lastCommit);
      } catch (err) {
        throw new InvalidBlockError(`invalid LastCommit: ${(err as Error).message}`, { cause: err });
      }
    }
    if (h.proposerAddress.length !== 20) {
      throw new InvalidBlockError(`expected ProposerAddress size 20, got ${h.proposerAddress.length}`);
    }
    if (state.validators.getByAddress(h.proposerAddress) === undefined) {
      throw new InvalidBlockError(
        `block.Header.ProposerAddress ${bytesToHexUpper(h.proposerAddress)} is not a validator`,
      );
    }
    const tol = this.#opts.blockTimeToleranceMs;
    if (tol > 0) {
      const now = this.#deps.clock.nowNs();
      if (h.time >= now + BigInt(tol) * 1_000_000n) {
        throw new InvalidBlockError(
          `block time ${formatRfc3339Nano(h.time)} is too far in the future (wall clock ${formatRfc3339Nano(now)} + tolerance ${tol}ms)`,
        );
      }
    }
    if (h.height > state.initialHeight) {
      if (h.time <= state.lastBlockTime) {
        throw new InvalidBlockError(
          `block time ${formatRfc3339Nano(h.time)} not greater than last block time ${formatRfc3339Nano(state.lastBlockTime)}`,
        );
      }
      const median =
        this.#opts.proposerTime === undefined ? medianTime(block.lastCommit, state.lastValidators) : h.time;
      if (h.time !== median) {
        throw new InvalidBlockError(
          `invalid block time. Expected ${formatRfc3339Nano(median)}, got ${formatRfc3339Nano(h.time)}`,
        );
      }
    } else if (h.height === state.initialHeight) {
      // Proposer-based times (dev chains): the first block may be later than the genesis time.
      if (this.#opts.proposerTime !== undefined ? h.time < state.lastBlockTime : h.time !== state.lastBlockTime) {
        throw new InvalidBlockError(
          `block time ${formatRfc3339Nano(h.time)} is not equal to genesis time ${formatRfc3339Nano(state.lastBlockTime)}`,
        );
      }
    } else {
      throw new InvalidBlockError(`block height ${h.height} lower than initial height ${state.initialHeight}`);
    }
    // validateBlockBasic has checked Header.EvidenceHash against the list; the pool checks each piece.
    if (block.evidence.length > 0) {
      const pool = this.#deps.evidence;
      if (pool === undefined) {
        throw new InvalidBlockError(
          "block carries evidence, which this node cannot verify (no evidence pool). Configure an evidence pool",
        );
      }
      try {
        pool.checkEvidence(block.evidence, state);
      } catch (err) {
        throw new InvalidBlockError((err as Error).message, { cause: err });
      }
    }
  }

  /**
   * Executes a decided block (applyBlock): FinalizeBlock → save the response → validator and param
   * updates → app Commit under the mempool lock → mempool update → save state → events. Returns
   * the new state.
   */
  async applyBlock(
    state: ChainState,
    id: BlockId,
    block: Block,
    opts: { validate?: boolean } = {},
  ): Promise<{ state: ChainState; response: FinalizeBlockResponse }> {
    if (opts.validate) this.validateBlock(state, block);
    const fail = this.#deps.failPoint ?? (() => {});
    const h = block.header;
    const resp = await this.#deps.app.finalizeBlock({
      txs: block.data.txs,
      decidedLastCommit: buildLastCommitInfo(block, state.lastValidators, state.initialHeight),
      misbehavior: misbehaviorOf(block.evidence),
      hash: blockHash(block),
      height: h.height,
      time: h.time,
      nextValidatorsHash: h.nextValidatorsHash,
      proposerAddress: h.proposerAddress,
      block,
    });
    fail("afterFinalizeBlock");
    if (resp.txResults.length !== block.data.txs.length) {
      throw new BlockExecutionError(
        `expected tx results length to match size of transactions in block. Expected ${block.data.txs.length}, got ${resp.txResults.length}`,
      );
    }
    if (this.#deps.log.isLevelEnabled("info")) {
      this.#deps.log.info(
        { height: h.height, numTxs: block.data.txs.length, appHash: bytesToHexUpper(resp.appHash) },
        "finalized block",
      );
    }
    await this.#deps.stateStore.saveFinalizeBlockResponse(h.height, resp);
    fail("afterSaveFinalizeResponse");

    validateValidatorUpdates(resp.validatorUpdates, state.consensusParams.validator.pubKeyTypes);
    const next = updateState(state, id, block, resp);

    const retainHeight = await this.#commit(block, resp);
    // state/execution.go: the pool learns the new state (and the committed evidence) right after Commit.
    await this.#deps.evidence?.update(next, block.evidence);
    fail("afterAppCommit");

    next.appHash = resp.appHash;
    await this.#deps.stateStore.save(next);
    fail("afterStateSave");

    if (retainHeight > 0) await this.#pruneBlocks(retainHeight, next);
    this.#fireEvents(block, id, resp);
    return { state: next, response: resp };
  }

  /** App Commit while the mempool is locked, then mempool update (BlockExecutor.Commit). */
  async #commit(block: Block, resp: FinalizeBlockResponse): Promise<number> {
    const mempool = this.#deps.mempool;
    if (mempool === undefined) {
      const res = await this.#deps.app.commit();
      return res.retainHeight;
    }
    const unlock = await mempool.lock();
    try {
      const res = await this.#deps.app.commit();
      await mempool.update(block.header.height, block.data.txs, resp.txResults);
      return res.retainHeight;
    } finally {
      unlock();
    }
  }

  /**
   * state/execution.go pruneBlocks: the block store below the app's retain height, then the state
   * store (PruneStates) from the same base, keeping what evidence of a retained header still needs.
   */
  async #pruneBlocks(retainHeight: number, state: ChainState): Promise<void> {
    const store = this.#deps.blockStore;
    if (store.pruneBlocks === undefined || retainHeight <= store.base()) return;
    const retain = retainHeight;
    // A retain height above the latest is the app's mistake: like CometBFT, log the store's error and go on.
    try {
      const { maxAgeNumBlocks, maxAgeDurationNs } = state.consensusParams.evidence;
      // evidence/verify.go IsEvidenceExpired: expired only when too old in both blocks and time.
      const keepHeader = (height: number, time: Timestamp) =>
        !(BigInt(state.lastBlockHeight - height) > maxAgeNumBlocks && state.lastBlockTime - time > maxAgeDurationNs);
      const pruned = await store.pruneBlocks(retain, keepHeader);
      const evidenceHeight = store.headerBase?.() ?? retain;
      await this.#deps.stateStore.pruneStates?.(retain, evidenceHeight);
      this.#deps.log.debug({ pruned, retainHeight: retain, evidenceHeight }, "pruned blocks");
    } catch (err) {
      this.#deps.log.error({ err, retainHeight: retain }, "failed to prune blocks");
    }
  }

  /**
   * state/execution.go fireEvents order: NewBlock, NewBlockHeader, NewBlockEvents, NewEvidence…, Tx…,
   * ValidatorSetUpdates.
   */
  #fireEvents(block: Block, id: BlockId, resp: FinalizeBlockResponse): void {
    const events = this.#deps.events;
    if (events === undefined) return;
    const height = block.header.height;
    try {
      events.publish("NewBlock", { block, blockId: id, resultFinalizeBlock: resp });
      events.publish("NewBlockHeader", { header: block.header });
      events.publish("NewBlockEvents", { height, events: resp.events, numTxs: block.data.txs.length });
      for (const evidence of block.evidence) events.publish("NewEvidence", { height, evidence });
      block.data.txs.forEach((tx, index) => {
        // biome-ignore lint/style/noNonNullAssertion: lengths checked in applyBlock
        events.publish("Tx", { height, index, tx, result: resp.txResults[index]! });
      });
      if (resp.validatorUpdates.length > 0) {
        events.publish("ValidatorSetUpdates", { validatorUpdates: resp.validatorUpdates.map(updateToValidator) });
      }
    } catch (err) {
      this.#deps.log.error({ err, height }, "failed publishing block events");
    }
  }

  /** ExecCommitBlock: FinalizeBlock + Commit on the app only (handshake replay); returns the app hash. */
  async execCommitBlock(block: Block, initialHeight: number): Promise<Uint8Array> {
    const h = block.header;
    const lastVals = h.height === initialHeight ? undefined : this.#deps.stateStore.loadValidators(h.height - 1);
    const resp = await this.#deps.app.finalizeBlock({
      txs: block.data.txs,
      decidedLastCommit:
        h.height === initialHeight ? { round: 0, votes: [] } : commitInfoFor(block.lastCommit, lastVals, h.height),
      misbehavior: misbehaviorOf(block.evidence),
      hash: blockHash(block),
      height: h.height,
      time: h.time,
      nextValidatorsHash: h.nextValidatorsHash,
      proposerAddress: h.proposerAddress,
      block,
    });
    if (resp.txResults.length !== block.data.txs.length) {
      throw new BlockExecutionError(
        `expected tx results length to match size of transactions in block. Expected ${block.data.txs.length}, got ${resp.txResults.length}`,
      );
    }
    await this.#deps.app.commit();
    return resp.appHash;
  }
}

function fmtBlockId(id: BlockId): string {
  return `${bytesToHexUpper(id.hash)}:${id.partSetHeader.total}:${bytesToHexUpper(id.partSetHeader.hash)}`;
}

function updateToValidator(u: ValidatorUpdate): Validator {
  return { address: addressFromPubKey(u.pubKey), pubKey: u.pubKey, votingPower: u.power, proposerPriority: 0n };
}

/** state/execution.go validateValidatorUpdates. */
export function validateValidatorUpdates(updates: ValidatorUpdate[], pubKeyTypes: string[]): void {
  for (const u of updates) {
    if (u.power < 0n) {
      throw new BlockExecutionError(`error in validator updates: voting power can't be negative ${u.power}`);
    }
    if (u.power === 0n) continue;
    if (!pubKeyTypes.includes(u.pubKey.type)) {
      throw new BlockExecutionError(
        `error in validator updates: validator ${bytesToHexUpper(addressFromPubKey(u.pubKey))} is using pubkey ${u.pubKey.type}, which is unsupported for consensus (allowed: ${pubKeyTypes.join(", ")})`,
      );
    }
  }
}

/** state/execution.go updateState: the state after `block`, before the app hash is known. */
export function updateState(state: ChainState, id: BlockId, block: Block, resp: FinalizeBlockResponse): ChainState {
  const height = block.header.height;
  const nextVals = state.nextValidators.copy();
  let lastHeightValidatorsChanged = state.lastHeightValidatorsChanged;
  if (resp.validatorUpdates.length > 0) {
    try {
      nextVals.updateWithChangeSet(resp.validatorUpdates.map((u) => ({ pubKey: u.pubKey, power: u.power })));
    } catch (err) {
      throw new BlockExecutionError(`changing validator set: ${(err as Error).message}`, { cause: err });
    }
    // App updates returned at H take effect at H+2.
    lastHeightValidatorsChanged = height + 2;
  }
  nextVals.incrementProposerPriority(1);

  let params = state.consensusParams;
  let lastHeightConsensusParamsChanged = state.lastHeightConsensusParamsChanged;
  let appVersion = state.appVersion;
  if (resp.consensusParamUpdates !== undefined) {
    params = updateConsensusParams(state.consensusParams, resp.consensusParamUpdates);
    try {
      validateConsensusParams(params);
    } catch (err) {
      throw new BlockExecutionError(`validating new consensus params: ${(err as Error).message}`, { cause: err });
    }
    try {
      validateConsensusParamsUpdate(state.consensusParams, resp.consensusParamUpdates, height);
    } catch (err) {
      throw new BlockExecutionError(`updating consensus params: ${(err as Error).message}`, { cause: err });
    }
    appVersion = params.version.app;
    lastHeightConsensusParamsChanged = height + 1;
  }
  return {
    chainId: state.chainId,
    initialHeight: state.initialHeight,
    lastBlockHeight: height,
    lastBlockId: id,
    lastBlockTime: block.header.time,
    nextValidators: nextVals,
    validators: state.nextValidators.copy(),
    lastValidators: state.validators.copy(),
    lastHeightValidatorsChanged,
    consensusParams: params,
    lastHeightConsensusParamsChanged,
    lastResultsHash: resultsHash(resp.txResults),
    appHash: new Uint8Array(0),
    appVersion,
  };
}

/** The BlockId of a block and its parts. */
export function blockIdOf(block: Block, parts: PartSet): BlockId {
  return makeBlockId(block, parts);
}

/**
 * What a validation's outcome depends on, by identity: the state object, and the block's parts and
 * header values (a field assigned or a part replaced afterwards makes the block new to the memo; bytes
 * written in place are not detected, and blocks are never written to once made or received).
 */
function validatedRefs(state: ChainState, block: Block): unknown[] {
  return [
    state,
    block.header,
    block.data,
    block.data.txs,
    block.data.txs.length,
    block.lastCommit,
    block.lastCommit.signatures,
    ...Object.values(block.header),
  ];
}
