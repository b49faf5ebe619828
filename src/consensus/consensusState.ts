import { dirname } from "node:path";
import {
  BLOCK_ID_FLAG,
  type Block,
  type BlockId,
  type ChainState,
  type Commit,
  decodeBlock,
  emptyCommit,
  isZeroBlockId,
  medianTime,
  type PartSet,
  PartSet as PartSetClass,
  type PartSetHeader,
  type Proposal,
  partSetHeaderEquals,
  SIGNED_MSG_TYPE,
  type ValidatorSet,
  type Vote,
  type VoteType,
  verifyProposal,
  zeroBlockId,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper, EMPTY_BYTES } from "../util/bytes.js";
import { GO_ZERO_TIME, type Timestamp } from "../util/time.js";
import { BlockExecutor, blockHash, blockHashesTo, MAX_BLOCK_SIZE_BYTES } from "./blockExecutor.js";
import { type BlockProductionPolicy, TimeoutPolicy } from "./blockProduction.js";
import type { ConsensusDeps, ConsensusEventMap, RoundStateEvent } from "./deps.js";
import {
  ConflictingVoteError,
  ConsensusError,
  ConsensusFailureError,
  DoubleSignRiskError,
  InvalidBlockPartError,
  InvalidProposalError,
  InvalidVoteError,
  NonDeterministicSignatureError,
  PeerFaultError,
  WalCorruptionError,
  WalRepairError,
  WalReplayError,
} from "./errors.js";
import { PeerGossip } from "./gossip.js";
import { HeightVoteSet } from "./heightVoteSet.js";
import type { BlockPartMessage, ConsensusMessage, StateMachineMessage } from "./messages.js";
import type { PeerStateView } from "./peerState.js";
import { ROUND_STEP, type RoundStep, roundStepName } from "./roundStep.js";
import { type TimeoutInfo, TimeoutTicker } from "./ticker.js";
import { type ConsensusStateView, partSetView, type RoundStateView, validatorSetSnapshot } from "./views.js";
import { VoteSet } from "./voteSet.js";
import { Wal } from "./wal.js";
import type { TimedWalMessage, WalMessage } from "./walCodec.js";

/** [consensus] settings, durations in milliseconds (keys and defaults: src/config/settingsTable.ts). */
export interface ConsensusOptions {
  timeoutProposeMs: number;
  timeoutProposeDeltaMs: number;
  timeoutPrevoteMs: number;
  timeoutPrevoteDeltaMs: number;
  timeoutPrecommitMs: number;
  timeoutPrecommitDeltaMs: number;
  /** start_time of the next height = commit_time + timeout_commit. */
  timeoutCommitMs: number;
  skipTimeoutCommit: boolean;
  createEmptyBlocks: boolean;
  createEmptyBlocksIntervalMs: number;
  /** Refuse to start when this validator signed one of the last N commits (0 = off). */
  doubleSignCheckHeight: number;
  /** The WAL head file, e.g. `<home>/data/cs.wal/wal`. */
  walPath: string;
  /** No WAL at all (db_backend "memdb": the stores start empty at every start, so nothing is replayed). */
  noWal?: boolean;
  /** block_time_tolerance (default 60 s; 0 = off). */
  blockTimeToleranceMs?: number;
  /** peer_gossip_sleep_duration (default 100 ms): how often peers are sent what they lack. */
  peerGossipSleepDurationMs?: number;
  /**
   * When blocks are made at round 0 (blockProduction.ts). Absent: CometBFT's rule from
   * createEmptyBlocks and createEmptyBlocksIntervalMs (TimeoutPolicy); a dev chain passes its
   * MiningPolicy.
   */
  production?: BlockProductionPolicy;
}

/** Consensus defaults of CometBFT's config.toml. */
export function defaultConsensusOptions(walPath: string): ConsensusOptions {
  return {
    timeoutProposeMs: 3000,
    timeoutProposeDeltaMs: 500,
    timeoutPrevoteMs: 1000,
    timeoutPrevoteDeltaMs: 500,
    timeoutPrecommitMs: 1000,
    timeoutPrecommitDeltaMs: 500,
    timeoutCommitMs: 1000,
    skipTimeoutCommit: false,
    createEmptyBlocks: true,
    createEmptyBlocksIntervalMs: 0,
    doubleSignCheckHeight: 0,
    walPath,
    blockTimeToleranceMs: 60_000,
    peerGossipSleepDurationMs: 100,
  };
}

type QueueItem =
  | { kind: "msg"; msg: StateMachineMessage; peerId: string }
  | { kind: "timeout"; timeout: TimeoutInfo }
  | { kind: "txsAvailable" }
  | { kind: "wake" }
  | { kind: "retrySign" }
  | { kind: "rewind"; run: () => Promise<ChainState>; done: (err?: unknown) => void };

/** A waitForHeight caller, resolved once the height is committed. */
interface HeightWaiter {
  height: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** The peer id own messages carry (CometBFT uses the empty id for internal messages). */
const OWN = "";
const MS = 1_000_000n;
/** A decision learned more than this after the quorum made it counts as late (catchUpCommitTime). */
const LATE_COMMIT_NS = 250n * MS;

/**
 * The Tendermint state machine (CometBFT consensus/state.go). Every input — peer messages, own
 * proposals/votes, timeouts, "txs available" — goes through one queue and is handled to completion
 * (awaits included) before the next one starts, so no two transitions interleave. Own messages
 * are written to the WAL and fsynced before they are handled.
 */
export class ConsensusState {
  // RoundState (consensus/types.RoundState).
  height = 0;
  round = 0;
  step: RoundStep = ROUND_STEP.newHeight;
  startTime: Timestamp = GO_ZERO_TIME;
  commitTime: Timestamp = GO_ZERO_TIME;
  validators!: ValidatorSet;
  proposal: Proposal | undefined;
  proposalBlock: Block | undefined;
  proposalBlockParts: PartSet | undefined;
  lockedRound = -1;
  lockedBlock: Block | undefined;
  lockedBlockParts: PartSet | undefined;
  validRound = -1;
  validBlock: Block | undefined;
  validBlockParts: PartSet | undefined;
  votes!: HeightVoteSet;
  commitRound = -1;
  lastCommit: VoteSet | undefined;
  lastValidators!: ValidatorSet;
  triggeredTimeoutPrecommit = false;

  /** The chain state after the last committed block. */
  state!: ChainState;

  readonly #opts: ConsensusOptions;
  readonly #deps: ConsensusDeps;
  readonly #blockExec: BlockExecutor;
  readonly #ticker: TimeoutTicker;
  #wal: Wal | undefined;
  readonly #internalQueue: QueueItem[] = [];
  readonly #peerQueue: QueueItem[] = [];
  #processing = false;
  /** The last vote whose signing failed (a remote signer unreachable), for retrySigning. */
  #unsignedVote:
    | { height: number; round: number; type: VoteType; hash?: Uint8Array; header?: PartSetHeader }
    | undefined;
  #replayMode = false;
  #started = false;
  /** Set once the WAL replay is done: only then does the queue run. */
  #running = false;
  #stopped = false;
  #halted: Error | undefined;
  #idleWaiters: (() => void)[] = [];
  #heightWaiters: HeightWaiter[] = [];
  /** Peer gossip (the consensus reactor's part): what each peer has, and sending it what it lacks. */
  readonly #gossip: PeerGossip;
  #unsubscribeTxs: (() => void) | undefined;
  #constructed = false;
  /** When blocks are made at round 0 (blockProduction.ts). */
  readonly #production: BlockProductionPolicy;
  /**
   * The block this node last proposed and the part set it was cut into. When those parts come back
   * complete (the proposer receives its own proposal like any other), the block is this object: equal
   * part-set headers mean equal bytes (the header's hash is the merkle root of the parts), so decoding
   * the bytes again and hashing the header again would only rebuild the same block.
   */
  #ownProposal: { block: Block; parts: PartSet } | undefined;

  constructor(opts: ConsensusOptions, deps: ConsensusDeps, state: ChainState) {
    this.#opts = opts;
    this.#deps = deps;
    const production = opts.production ?? new TimeoutPolicy(deps.mempool, opts);
    this.#production = production;
    this.#blockExec = new BlockExecutor(
      {
        app: deps.app,
        blockStore: deps.blockStore,
        stateStore: deps.stateStore,
        mempool: deps.mempool,
        ...(deps.evidencePool === undefined ? {} : { evidence: deps.evidencePool }),
        events: deps.events,
        clock: deps.clock,
        log: deps.log,
        ...(deps.failPoint === undefined ? {} : { failPoint: deps.failPoint }),
      },
      {
        blockTimeToleranceMs: opts.blockTimeToleranceMs ?? 60_000,
        ...(production.proposerTime === undefined ? {} : { proposerTime: production.proposerTime }),
      },
    );
    this.#ticker = new TimeoutTicker(deps.clock, (ti) => this.#enqueue({ kind: "timeout", timeout: ti }, false));
    this.#gossip = new PeerGossip(
      {
        transport: deps.gossip,
        blockStore: deps.blockStore,
        clock: deps.clock,
        log: deps.log,
        sleepMs: opts.peerGossipSleepDurationMs ?? 100,
      },
      this,
      {
        started: () => this.#started,
        stopped: () => this.#stopped,
        halted: () => this.#halted !== undefined,
        replaying: () => this.#replayMode,
        enqueue: (peerId, msg) => this.#enqueue({ kind: "msg", msg, peerId }, false),
      },
    );
    if (state.lastBlockHeight > 0) this.#reconstructLastCommit(state);
    this.#updateToState(state);
    this.#constructed = true;
    if (state.consensusParams.abci.voteExtensionsEnableHeight > 0n) {
      deps.log.warn(
        { enableHeight: state.consensusParams.abci.voteExtensionsEnableHeight.toString() },
        "vote extensions are not supported by this node; votes carry none and peers' extensions are refused",
      );
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Lifecycle

  /** Opens the WAL, replays the current height from it, then starts round 0 at start_time. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const synced = this.#adoptSyncedState();
    // A dev chain's WAL is not fsynced (docs/dev-chain.md: what survives a crash).
    if (this.#opts.noWal !== true) {
      this.#wal = await Wal.open(this.#opts.walPath, { log: this.#deps.log, sync: this.#production.durableWal });
    }
    // SwitchToConsensus(state, skipWAL): after block sync the WAL only holds older heights.
    if (!synced) await this.#catchupReplayWithRepair();
    this.#checkDoubleSigningRisk(this.height);
    this.#unsubscribeTxs = this.#production.start({
      wake: () => this.#enqueue({ kind: "wake" }, true),
      txsAvailable: () => this.#enqueue({ kind: "txsAvailable" }, false),
    });
    this.#running = true;
    this.#scheduleRound0();
    this.#gossip.start();
    // Peers added before start have not heard from us yet.
    this.#gossip.broadcastNewRoundStep();
    this.#kick();
  }

  /**
   * SwitchToConsensus: when block sync applied blocks after this object was built, the state store
   * is ahead of this.state; take it over (last commit from the block store, next height) before
   * starting. Returns true when it did.
   */
  #adoptSyncedState(): boolean {
    const stored = this.#deps.stateStore.load();
    if (stored === undefined || stored.lastBlockHeight <= this.state.lastBlockHeight) return false;
    this.#deps.log.info(
      { from: this.state.lastBlockHeight, to: stored.lastBlockHeight },
      "switching to consensus: adopting the state block sync reached",
    );
    this.#reconstructLastCommit(stored);
    this.#updateToState(stored);
    return true;
  }

  /** Stops after the input being handled; closes the WAL. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#ticker.stop();
    this.#gossip.stop();
    this.#unsubscribeTxs?.();
    await this.idle();
    await this.#wal?.close();
    this.#rejectWaiters(new ConsensusError("consensus stopped"));
  }

  // ---------------------------------------------------------------------------------------------
  // Rewinding (a policy that allows it: a dev chain's evm_revert, hardhat_reset)

  /**
   * Between two inputs of the queue, `run` rolls the stores back and returns the chain state to
   * continue from; the round state, the WAL and the policy's pending requests start over from it.
   * Resolves once done.
   */
  rewind(run: () => Promise<ChainState>): Promise<void> {
    if (!this.#production.rewindable) {
      return Promise.reject(new ConsensusError("this chain cannot be rolled back (only a dev chain can)"));
    }
    return new Promise((resolve, reject) => {
      this.#enqueue({ kind: "rewind", run, done: (err) => (err === undefined ? resolve() : reject(err)) }, true);
    });
  }

  async #handleRewind(run: () => Promise<ChainState>): Promise<void> {
    const state = await run();
    this.#production.abandon(new ConsensusError("the chain was reverted"), false);
    // Forget the height in progress and take the restored state as if it had just been loaded.
    (this as { state: ChainState | undefined }).state = undefined;
    this.commitRound = -1;
    this.commitTime = GO_ZERO_TIME;
    this.lastCommit = undefined;
    this.round = 0;
    if (state.lastBlockHeight > 0) this.#reconstructLastCommit(state);
    this.#updateToState(state);
    await this.#wal?.reset(state.lastBlockHeight, this.#deps.clock.nowNs());
    this.#ticker.reset();
    this.#scheduleRound0();
  }

  /** The policy asks again at round 0's NewRound step (a mine request, a changed setting). */
  async #handleWake(): Promise<void> {
    if (this.round !== 0 || this.step !== ROUND_STEP.newRound) return;
    await this.#round0Decision(this.height, 0);
  }

  /** Round 0 of a height that waits: what the policy decides (a later look, a proposal now). */
  async #round0Decision(height: number, round: number): Promise<void> {
    const d = this.#production.atNewRound();
    if (d.recheckMs > 0) this.#scheduleTimeout(d.recheckMs, height, round, ROUND_STEP.newRound);
    if (d.propose) await this.#enterPropose(height, round);
  }

  /** Resolves once nothing is queued or being handled. */
  /** See Consensus.retrySigning. Queued, so it runs between inputs like everything else. */
  retrySigning(): void {
    this.#enqueue({ kind: "retrySign" }, true);
  }

  /** Signs again the vote whose signing failed, while its height, round and step last. */
  async #handleRetrySign(): Promise<void> {
    const v = this.#unsignedVote;
    if (v === undefined || v.height !== this.height || v.round !== this.round) return;
    const inStep =
      v.type === SIGNED_MSG_TYPE.prevote
        ? this.step === ROUND_STEP.prevote || this.step === ROUND_STEP.prevoteWait
        : this.step === ROUND_STEP.precommit || this.step === ROUND_STEP.precommitWait;
    if (!inStep) return;
    this.#deps.log.info({ height: v.height, round: v.round, type: v.type }, "signer is back; signing the vote again");
    await this.#signAddVote(v.type, v.hash, v.header);
  }

  idle(): Promise<void> {
    if (!this.#processing) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** True when no input is queued or being handled. */
  isIdle(): boolean {
    return !this.#processing && this.#internalQueue.length === 0 && this.#peerQueue.length === 0;
  }

  /** Resolves once block `height` is committed and applied. */
  waitForHeight(height: number): Promise<void> {
    if (this.state.lastBlockHeight >= height) return Promise.resolve();
    if (this.#halted !== undefined) return Promise.reject(this.#halted);
    return new Promise((resolve, reject) => this.#heightWaiters.push({ height, resolve, reject }));
  }

  /** Why consensus halted, if it did. */
  haltError(): Error | undefined {
    return this.#halted;
  }

  #halt(err: unknown): void {
    const e = err instanceof Error ? err : new ConsensusFailureError(String(err));
    this.#halted = e;
    this.#deps.log.error({ err: e, height: this.height, round: this.round, step: this.step }, "CONSENSUS FAILURE!!!");
    this.#ticker.stop();
    this.#gossip.stop();
    this.#unsubscribeTxs?.();
    this.#internalQueue.length = 0;
    this.#peerQueue.length = 0;
    this.#rejectWaiters(e);
  }

  #rejectWaiters(err: Error): void {
    const waiters = this.#heightWaiters;
    this.#heightWaiters = [];
    for (const w of waiters) w.reject(err);
    this.#production.abandon(err, true);
  }

  // ---------------------------------------------------------------------------------------------
  // The input queue

  #enqueue(item: QueueItem, internal: boolean): void {
    if (this.#stopped || this.#halted !== undefined) return;
    (internal ? this.#internalQueue : this.#peerQueue).push(item);
    this.#kick();
  }

  #kick(): void {
    if (this.#processing || !this.#running || this.#stopped || this.#halted !== undefined) return;
    if (this.#internalQueue.length === 0 && this.#peerQueue.length === 0) return;
    this.#processing = true;
    queueMicrotask(() => {
      this.#drain().catch((err: unknown) => this.#halt(err));
    });
  }

  async #drain(): Promise<void> {
    try {
      while (!this.#stopped && this.#halted === undefined) {
        const item = this.#internalQueue.shift() ?? this.#peerQueue.shift();
        if (item === undefined) break;
        await this.#handleItem(item);
      }
    } catch (err) {
      this.#halt(err);
    } finally {
      this.#processing = false;
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  async #handleItem(item: QueueItem): Promise<void> {
    const now = this.#deps.clock.nowNs();
    switch (item.kind) {
      case "msg":
        if (item.peerId === OWN) {
          await this.#wal?.writeSync({ kind: "msgInfo", peerId: OWN, msg: item.msg }, now);
          this.#deps.failPoint?.("afterOwnMessageWal", {
            height: this.height,
            msg: {
              kind: item.msg.kind,
              round:
                item.msg.kind === "vote"
                  ? item.msg.vote.round
                  : item.msg.kind === "proposal"
                    ? item.msg.proposal.round
                    : item.msg.round,
              ...(item.msg.kind === "vote" ? { voteType: item.msg.vote.type } : {}),
            },
          });
          // Signed and in the WAL: peers can have it now, before handling (which may commit a block).
          this.#gossip.broadcastOwn(item.msg);
          await this.#handleMsg(item.msg, OWN);
        } else {
          this.#walWrite({ kind: "msgInfo", peerId: item.peerId, msg: item.msg });
          await this.#handleMsg(item.msg, item.peerId);
        }
        return;
      case "timeout":
        this.#walWrite({ kind: "timeout", timeout: item.timeout });
        await this.#handleTimeout(item.timeout);
        return;
      case "txsAvailable":
        await this.#handleTxsAvailable();
        return;
      case "wake":
        await this.#handleWake();
        return;
      case "retrySign":
        await this.#handleRetrySign();
        return;
      case "rewind":
        try {
          await this.#handleRewind(item.run);
        } catch (err) {
          item.done(err);
          throw err;
        }
        item.done();
        return;
    }
  }

  #sendInternal(msg: StateMachineMessage): void {
    this.#enqueue({ kind: "msg", msg, peerId: OWN }, true);
  }

  // ---------------------------------------------------------------------------------------------
  // WAL catch-up replay (consensus/replay.go catchupReplay)

  /**
   * State.OnStart's catch-up loop: a replay that meets corrupted data in the height being replayed
   * repairs the head file once (Wal.repair, CometBFT's repairWalFile) and replays again; corrupted
   * data still there stops the start (WalRepairError). Other replay errors are logged and the node
   * goes on from the stored state.
   */
  async #catchupReplayWithRepair(): Promise<void> {
    let repairAttempted = false;
    for (;;) {
      try {
        await this.#catchupReplay(this.height);
        return;
      } catch (err) {
        if (!(err instanceof WalCorruptionError)) {
          this.#deps.log.error(
            { err: (err as Error).message },
            "error on catchup replay; proceeding to start state anyway",
          );
          return;
        }
        const file = err.file ?? this.#opts.walPath;
        if (repairAttempted) {
          throw new WalRepairError(
            `the consensus WAL ${file} is corrupted in the records of height ${this.height} (${err.message}), ` +
              `and repairing ${this.#opts.walPath} did not remove it. Move the directory ${dirname(this.#opts.walPath)} ` +
              "away to start without replaying this height (priv_validator_state.json still prevents double signing)",
            file,
            { cause: err },
          );
        }
        repairAttempted = true;
        this.#deps.log.error({ err: err.message, file }, "the WAL file is corrupted; attempting repair");
        const done = await this.#wal?.repair();
        if (done === undefined) {
          this.#deps.log.error({ file: this.#opts.walPath }, "the WAL head file has no damaged record to cut");
        }
      }
    }
  }

  async #catchupReplay(csHeight: number): Promise<void> {
    const wal = this.#wal;
    if (wal === undefined) return;
    if (wal.searchForEndHeight(csHeight).found) {
      throw new WalReplayError(`wal should not contain #ENDHEIGHT ${csHeight}`);
    }
    const endHeight = csHeight === this.state.initialHeight ? 0 : csHeight - 1;
    const res = wal.searchForEndHeight(endHeight);
    if (!res.found) {
      throw new WalReplayError(`cannot replay height ${csHeight}. WAL does not contain #ENDHEIGHT for ${endHeight}`);
    }
    if (res.corruption !== undefined) {
      // CometBFT replays up to the damaged record, then fails and repairs; nothing is replayed twice here.
      const { file, offset, error } = res.corruption;
      const err = new WalCorruptionError(
        `data has been corrupted in last height of consensus WAL: ${file} at offset ${offset}: ${error.message}`,
        { cause: error },
      );
      err.file = file;
      throw err;
    }
    this.#deps.log.info({ height: csHeight, records: res.messages.length }, "Catchup by replaying consensus messages");
    this.#replayMode = true;
    try {
      for (const m of res.messages) await this.#readReplayMessage(m);
    } finally {
      this.#replayMode = false;
    }
    this.#deps.log.info("Replay: Done");
  }

  async #readReplayMessage(m: TimedWalMessage): Promise<void> {
    const msg = m.msg;
    switch (msg.kind) {
      case "endHeight":
      case "roundState":
        return;
      case "msgInfo":
        await this.#handleMsg(msg.msg, msg.peerId);
        return;
      case "timeout":
        await this.#handleTimeout(msg.timeout);
        return;
    }
  }

  /** double_sign_check_height: refuse to start when our signature is in one of the last N commits. */
  #checkDoubleSigningRisk(height: number): void {
    const signer = this.#deps.signer;
    const n = Math.min(this.#opts.doubleSignCheckHeight, height);
    if (signer === undefined || n <= 0) return;
    const addr = signer.address();
    for (let i = 1; i < n; i++) {
      const h = height - i;
      const commit =
        h === this.#deps.blockStore.height()
          ? this.#deps.blockStore.loadSeenCommit(h)
          : this.#deps.blockStore.loadBlockCommit(h);
      if (commit === undefined) continue;
      for (const sig of commit.signatures) {
        if (sig.blockIdFlag === BLOCK_ID_FLAG.commit && bytesEqual(sig.validatorAddress, addr)) {
          throw new DoubleSignRiskError(
            `found signature from the same key at height ${h}. Another node may be running this validator; set double_sign_check_height = 0 to skip the check`,
          );
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // State updates

  #reconstructLastCommit(state: ChainState): void {
    const h = state.lastBlockHeight;
    const commit = this.#deps.blockStore.loadSeenCommit(h) ?? this.#deps.blockStore.loadBlockCommit(h);
    if (commit === undefined) {
      throw new ConsensusFailureError(`failed to reconstruct last commit; commit for height ${h} not found`);
    }
    if (commit.height !== h) {
      throw new ConsensusFailureError(`failed to reconstruct last commit; heights don't match ${commit.height}!=${h}`);
    }
    const vs = VoteSet.fromCommit(state.chainId, commit, state.lastValidators);
    if (!vs.hasTwoThirdsMajority()) {
      throw new ConsensusFailureError("failed to reconstruct last commit; commit does not have +2/3 majority");
    }
    this.lastCommit = vs;
  }

  /** Moves to the height after `state` (updateToState): round 0, NewHeight, fresh vote sets. */
  #updateToState(state: ChainState): void {
    if (this.commitRound > -1 && this.height > 0 && this.height !== state.lastBlockHeight) {
      throw new ConsensusFailureError(
        `updateToState() expected state height of ${this.height} but found ${state.lastBlockHeight}`,
      );
    }
    if (this.state !== undefined && state.lastBlockHeight <= this.state.lastBlockHeight && this.height > 0) {
      this.#newStep();
      return;
    }
    if (state.lastBlockHeight === 0) {
      this.lastCommit = undefined;
    } else if (this.commitRound > -1 && this.votes !== undefined) {
      const precommits = this.votes.precommits(this.commitRound);
      if (precommits === undefined || !precommits.hasTwoThirdsMajority()) {
        throw new ConsensusFailureError(
          `wanted to form a commit, but precommits (H/R: ${state.lastBlockHeight}/${this.commitRound}) didn't have 2/3+`,
        );
      }
      this.lastCommit = precommits;
    } else if (this.lastCommit === undefined) {
      throw new ConsensusFailureError(
        `last commit cannot be empty after initial block (H:${state.lastBlockHeight + 1})`,
      );
    }

    const height = state.lastBlockHeight === 0 ? state.initialHeight : state.lastBlockHeight + 1;
    this.height = height;
    this.#updateRoundStep(0, ROUND_STEP.newHeight);
    const base = this.commitTime === GO_ZERO_TIME ? this.#deps.clock.nowNs() : this.commitTime;
    this.startTime = base + BigInt(this.#opts.timeoutCommitMs) * MS;
    this.validators = state.validators;
    this.proposal = undefined;
    this.proposalBlock = undefined;
    this.proposalBlockParts = undefined;
    this.lockedRound = -1;
    this.lockedBlock = undefined;
    this.lockedBlockParts = undefined;
    this.validRound = -1;
    this.validBlock = undefined;
    this.validBlockParts = undefined;
    this.votes = new HeightVoteSet(state.chainId, height, state.validators);
    this.commitRound = -1;
    this.lastValidators = state.lastValidators;
    this.triggeredTimeoutPrecommit = false;
    this.state = state;
    this.#newStep();
  }

  #updateRoundStep(round: number, step: RoundStep): void {
    if (!this.#replayMode) this.#deps.metrics?.roundStep(this.round, this.step, round, step, this.startTime);
    this.round = round;
    this.step = step;
  }

  #roundStateEvent(): RoundStateEvent {
    return { height: this.height, round: this.round, step: roundStepName(this.step) };
  }

  #publish<K extends keyof ConsensusEventMap>(type: K, data: ConsensusEventMap[K]): void {
    try {
      this.#deps.events.publish(type, data);
    } catch (err) {
      this.#deps.log.error({ err, type }, "failed publishing event");
    }
  }

  /** Records and announces a step change (WAL async, NewRoundStep event, gossip). */
  #newStep(): void {
    // NewState's first updateToState happens before the WAL and the event bus are attached.
    if (!this.#constructed) return;
    this.#walWrite({ kind: "roundState", height: this.height, round: this.round, step: this.step });
    this.#publish("NewRoundStep", this.#roundStateEvent());
    if (!this.#replayMode) this.#gossip.broadcastNewRoundStep();
  }

  /** Asynchronous WAL record: a failure is logged, as CometBFT does for non-synced writes. */
  #walWrite(msg: WalMessage): void {
    try {
      this.#wal?.write(msg, this.#deps.clock.nowNs());
    } catch (err) {
      this.#deps.log.error({ err }, "failed writing to WAL");
    }
  }

  #scheduleTimeout(durationMs: number, height: number, round: number, step: RoundStep): void {
    this.#ticker.schedule({ durationMs, height, round, step });
  }

  #scheduleRound0(): void {
    const sleepMs = Number((this.startTime - this.#deps.clock.nowNs()) / MS);
    this.#scheduleTimeout(Math.max(0, sleepMs), this.height, 0, ROUND_STEP.newHeight);
  }

  #timeoutPropose(round: number): number {
    return this.#opts.timeoutProposeMs + this.#opts.timeoutProposeDeltaMs * round;
  }
  #timeoutPrevote(round: number): number {
    return this.#opts.timeoutPrevoteMs + this.#opts.timeoutPrevoteDeltaMs * round;
  }
  #timeoutPrecommit(round: number): number {
    return this.#opts.timeoutPrecommitMs + this.#opts.timeoutPrecommitDeltaMs * round;
  }

  #ownAddress(): Uint8Array | undefined {
    return this.#deps.signer?.address();
  }

  // ---------------------------------------------------------------------------------------------
  // Inputs

  async #handleTimeout(ti: TimeoutInfo): Promise<void> {
    if (ti.height !== this.height || ti.round < this.round || (ti.round === this.round && ti.step < this.step)) return;
    switch (ti.step) {
      case ROUND_STEP.newHeight:
        await this.#enterNewRound(ti.height, 0);
        return;
      case ROUND_STEP.newRound:
        await this.#enterPropose(ti.height, ti.round);
        return;
      case ROUND_STEP.propose:
        this.#publish("TimeoutPropose", this.#roundStateEvent());
        await this.#enterPrevote(ti.height, ti.round);
        return;
      case ROUND_STEP.prevoteWait:
        this.#publish("TimeoutWait", this.#roundStateEvent());
        await this.#enterPrecommit(ti.height, ti.round);
        return;
      case ROUND_STEP.precommitWait:
        this.#publish("TimeoutWait", this.#roundStateEvent());
        this.#deps.metrics?.precommitWaitTimedOut(this.votes.precommits(ti.round)?.list() ?? [], this.validators);
        await this.#enterPrecommit(ti.height, ti.round);
        await this.#enterNewRound(ti.height, ti.round + 1);
        return;
      default:
        throw new ConsensusFailureError(`invalid timeout step: ${ti.step}`);
    }
  }

  async #handleTxsAvailable(): Promise<void> {
    if (this.round !== 0) return;
    if (!this.#production.wantsBlock()) return;
    if (this.step === ROUND_STEP.newHeight) {
      if (this.#needProofBlock(this.height)) return;
      // +1 ms so the NewRound timeout fires after the NewHeight one.
      const ms = Number((this.startTime - this.#deps.clock.nowNs()) / MS) + 1;
      this.#scheduleTimeout(Math.max(0, ms), this.height, 0, ROUND_STEP.newRound);
    } else if (this.step === ROUND_STEP.newRound) {
      await this.#enterPropose(this.height, 0);
    }
  }

  async #handleMsg(msg: StateMachineMessage, peerId: string): Promise<void> {
    let added = false;
    try {
      switch (msg.kind) {
        case "proposal":
          this.#setProposal(msg.proposal);
          break;
        case "blockPart": {
          const gathering = this.height === msg.height && this.proposalBlockParts !== undefined;
          try {
            added = this.#addProposalBlockPart(msg);
            this.#deps.metrics?.blockPartReceived(gathering, added);
          } catch (err) {
            this.#deps.metrics?.blockPartReceived(false, false);
            if (msg.round === this.round) throw err;
            this.#deps.log.debug(
              { height: this.height, round: this.round, blockRound: msg.round },
              "received block part from wrong round",
            );
          }
          if (added && this.proposalBlockParts?.isComplete()) await this.#handleCompleteProposal(msg.height);
          break;
        }
        case "vote":
          added = await this.#tryAddVote(msg.vote, peerId);
          break;
      }
    } catch (err) {
      // Caused by what a peer sent: logged, never fatal. Anything else halts consensus.
      if (!(err instanceof PeerFaultError)) throw err;
      this.#deps.log.info(
        { height: this.height, round: this.round, peer: peerId, msgType: msg.kind, err: (err as Error).message },
        "failed to process message",
      );
    }
    if (added && peerId !== OWN) this.#gossip.recordAdded(peerId, msg);
  }

  // ---------------------------------------------------------------------------------------------
  // Round steps (consensus/state.go)

  async #enterNewRound(height: number, round: number): Promise<void> {
    if (this.height !== height || round < this.round || (this.round === round && this.step !== ROUND_STEP.newHeight)) {
      return;
    }
    let validators = this.validators;
    if (this.round < round) {
      validators = validators.copy();
      validators.incrementProposerPriority(round - this.round);
    }
    this.#updateRoundStep(round, ROUND_STEP.newRound);
    this.validators = validators;
    if (round !== 0) {
      this.proposal = undefined;
      this.proposalBlock = undefined;
      this.proposalBlockParts = undefined;
    }
    this.votes.setRound(round + 1); // also track the next round, to allow round-skipping
    this.triggeredTimeoutPrecommit = false;
    const proposer = validators.getProposer();
    const index = proposer === undefined ? -1 : (validators.getByAddress(proposer.address)?.index ?? -1);
    this.#publish("NewRound", {
      height,
      round,
      step: roundStepName(this.step),
      proposer: { address: proposer?.address ?? EMPTY_BYTES, index },
    });
    if (this.#production.waitsForTxs && round === 0 && !this.#needProofBlock(height)) {
      await this.#round0Decision(height, round);
    } else {
      await this.#enterPropose(height, round);
    }
  }

  /** True at the initial height and when the last block changed the app hash (it must be signed). */
  #needProofBlock(height: number): boolean {
    // A dev chain is one validator serving its own clients: the next block it makes commits the
    // app hash; an idle dev chain makes none, not even its first (miningPolicy.ts).
    if (!this.#production.proofBlocks) return false;
    if (height === this.state.initialHeight) return true;
    const meta = this.#deps.blockStore.loadBlockMeta(height - 1);
    if (meta === undefined) return true;
    return !bytesEqual(this.state.appHash, meta.header.appHash);
  }

  async #enterPropose(height: number, round: number): Promise<void> {
    if (this.height !== height || round < this.round || (this.round === round && ROUND_STEP.propose <= this.step)) {
      return;
    }
    this.#scheduleTimeout(this.#timeoutPropose(round), height, round, ROUND_STEP.propose);
    const addr = this.#ownAddress();
    if (addr !== undefined && this.validators.getByAddress(addr) !== undefined) {
      const proposer = this.validators.getProposer();
      if (proposer !== undefined && bytesEqual(proposer.address, addr)) {
        if (this.#mayDecideAlone(round)) {
          await this.#decideAlone(height, round);
          return;
        }
        await this.#decideProposal(height, round);
      }
    }
    this.#updateRoundStep(round, ROUND_STEP.propose);
    this.#newStep();
    if (this.#isProposalComplete()) await this.#enterPrevote(height, this.round);
  }

  async #decideProposal(height: number, round: number): Promise<void> {
    const signer = this.#deps.signer;
    if (signer === undefined) return;
    let block: Block;
    let parts: PartSet;
    if (this.validBlock !== undefined && this.validBlockParts !== undefined) {
      block = this.validBlock;
      parts = this.validBlockParts;
    } else {
      const made = await this.#makeProposalBlock(height, signer.address());
      if (made === undefined) return;
      ({ block, parts } = made);
    }
    // Flush the WAL so a restart recomputes the same proposal (privval would refuse another).
    await this.#wal?.flushAndSync();
    const unsigned: Proposal = {
      type: SIGNED_MSG_TYPE.proposal,
      height,
      round,
      polRound: this.validRound,
      blockId: { hash: blockHash(block), partSetHeader: parts.header() },
      timestamp: this.#deps.clock.nowNs(),
      signature: EMPTY_BYTES,
    };
    let proposal: Proposal;
    try {
      proposal = await signer.signProposal(this.state.chainId, unsigned);
    } catch (err) {
      if (!this.#replayMode) this.#deps.log.error({ height, round, err }, "propose step; failed signing proposal");
      return;
    }
    this.#deps.metrics?.proposalCreated();
    this.#ownProposal = { block, parts };
    this.#sendInternal({ kind: "proposal", proposal });
    for (let i = 0; i < parts.total; i++) {
      const part = parts.getPart(i);
      if (part !== undefined) this.#sendInternal({ kind: "blockPart", height: this.height, round: this.round, part });
    }
    this.#deps.log.debug({ height, round }, "signed proposal");
  }

  /** A new block for `height` from the mempool (logged and undefined when none can be made). */
  async #makeProposalBlock(
    height: number,
    proposer: Uint8Array,
  ): Promise<{ block: Block; parts: PartSet } | undefined> {
    let lastCommit: Commit;
    if (height === this.state.initialHeight) lastCommit = emptyCommit();
    else if (this.lastCommit?.hasTwoThirdsMajority()) lastCommit = this.lastCommit.makeCommit();
    else {
      this.#deps.log.error("propose step; cannot propose anything without commit for the previous block");
      return undefined;
    }
    this.#production.reaping();
    try {
      return await this.#blockExec.createProposalBlock(height, this.state, lastCommit, proposer);
    } catch (err) {
      this.#deps.log.error({ err }, "unable to create proposal block");
      return undefined;
    }
  }

  /**
   * Whether round `round` may be decided in one pass (#decideAlone): the policy allows it (a dev
   * chain), this node is the only validator, no peer is connected (none would see a proposal or a
   * prevote), there is no WAL (nothing replays them), and nothing is locked or valid from an
   * earlier round.
   */
  #mayDecideAlone(round: number): boolean {
    return (
      this.#production.soleRounds &&
      round === 0 &&
      this.#wal === undefined &&
      !this.#replayMode &&
      this.validators.size() === 1 &&
      this.#gossip.peerCount() === 0 &&
      this.lockedBlock === undefined &&
      this.validBlock === undefined
    );
  }

  /**
   * Round 0 of a sole validator decided in one pass: the block is made, checked as a prevote checks
   * it (#blockIsValid), and locked as a polka would lock it; only the precommit is signed, and it
   * enters the input queue like any own vote, where it commits the block. The proposal and the
   * prevote are not signed: with no peer and no WAL nothing would read them, and the commit (the
   * precommit's signature) is the block's proof, as on any chain. A block the checks refuse gets a
   * nil prevote, signed, and the round goes on as CometBFT's does.
   */
  async #decideAlone(height: number, round: number): Promise<void> {
    this.#updateRoundStep(round, ROUND_STEP.propose);
    this.#newStep();
    const signer = this.#deps.signer;
    if (signer === undefined) return;
    const made = await this.#makeProposalBlock(height, signer.address());
    if (made === undefined) return; // the propose timeout moves the round on
    const { block, parts } = made;
    const blockId: BlockId = { hash: blockHash(block), partSetHeader: parts.header() };
    this.#deps.metrics?.proposalCreated();
    this.proposalBlock = block;
    this.proposalBlockParts = parts;
    this.#publish("CompleteProposal", { height, round, step: roundStepName(this.step), blockId });
    const valid = await this.#blockIsValid(height, round, block);
    this.#updateRoundStep(round, ROUND_STEP.prevote);
    this.#newStep();
    if (!valid) {
      await this.#signAddVote(SIGNED_MSG_TYPE.prevote);
      return;
    }
    this.lockedRound = round;
    this.lockedBlock = block;
    this.lockedBlockParts = parts;
    this.validRound = round;
    this.validBlock = block;
    this.validBlockParts = parts;
    await this.#signAddVote(SIGNED_MSG_TYPE.precommit, blockId.hash, blockId.partSetHeader);
    this.#updateRoundStep(round, ROUND_STEP.precommit);
    this.#newStep();
  }

  /** The proposal block is complete and, with a POL round, +2/3 prevotes from it are here. */
  #isProposalComplete(): boolean {
    if (this.proposal === undefined || this.proposalBlock === undefined) return false;
    if (this.proposal.polRound < 0) return true;
    return this.votes.prevotes(this.proposal.polRound)?.hasTwoThirdsMajority() ?? false;
  }

  async #enterPrevote(height: number, round: number): Promise<void> {
    if (this.height !== height || round < this.round || (this.round === round && ROUND_STEP.prevote <= this.step)) {
      return;
    }
    await this.#doPrevote(height, round);
    this.#updateRoundStep(round, ROUND_STEP.prevote);
    this.#newStep();
  }

  async #doPrevote(height: number, round: number): Promise<void> {
    if (this.lockedBlock !== undefined && this.lockedBlockParts !== undefined) {
      await this.#signAddVote(SIGNED_MSG_TYPE.prevote, blockHash(this.lockedBlock), this.lockedBlockParts.header());
      return;
    }
    if (this.proposalBlock === undefined || this.proposalBlockParts === undefined) {
      await this.#signAddVote(SIGNED_MSG_TYPE.prevote);
      return;
    }
    if (!(await this.#blockIsValid(height, round, this.proposalBlock))) {
      await this.#signAddVote(SIGNED_MSG_TYPE.prevote);
      return;
    }
    await this.#signAddVote(SIGNED_MSG_TYPE.prevote, blockHash(this.proposalBlock), this.proposalBlockParts.header());
  }

  /** A prevote's checks of a proposal block: consensus's rules, then the app's ProcessProposal (logged when refused). */
  async #blockIsValid(height: number, round: number, block: Block): Promise<boolean> {
    try {
      this.#blockExec.validateBlock(this.state, block);
    } catch (err) {
      this.#deps.log.error(
        { height, round, err: (err as Error).message },
        "prevote step: consensus deems this block invalid; prevoting nil",
      );
      return false;
    }
    const accepted = await this.#blockExec.processProposal(block, this.state);
    this.#deps.metrics?.proposalProcessed(accepted);
    if (!accepted) {
      this.#deps.log.error({ height, round }, "prevote step: state machine rejected a proposed block; prevoting nil");
    }
    return accepted;
  }

  async #enterPrevoteWait(height: number, round: number): Promise<void> {
    if (this.height !== height || round < this.round || (this.round === round && ROUND_STEP.prevoteWait <= this.step)) {
      return;
    }
    if (!this.votes.prevotes(round)?.hasTwoThirdsAny()) {
      throw new ConsensusFailureError(
        `entering prevote wait step (${height}/${round}), but prevotes does not have any +2/3 votes`,
      );
    }
    this.#scheduleTimeout(this.#timeoutPrevote(round), height, round, ROUND_STEP.prevoteWait);
    this.#updateRoundStep(round, ROUND_STEP.prevoteWait);
    this.#newStep();
  }

  async #enterPrecommit(height: number, round: number): Promise<void> {
    if (this.height !== height || round < this.round || (this.round === round && ROUND_STEP.precommit <= this.step)) {
      return;
    }
    await this.#doPrecommit(round);
    this.#updateRoundStep(round, ROUND_STEP.precommit);
    this.#newStep();
  }

  async #doPrecommit(round: number): Promise<void> {
    const blockId = this.votes.prevotes(round)?.twoThirdsMajority();
    if (blockId === undefined) {
      await this.#signAddVote(SIGNED_MSG_TYPE.precommit);
      return;
    }
    this.#publish("Polka", this.#roundStateEvent());
    const { polRound } = this.votes.polInfo();
    if (polRound < round) throw new ConsensusFailureError(`this POLRound should be ${round} but got ${polRound}`);

    if (blockId.hash.length === 0) {
      if (this.lockedBlock !== undefined) {
        this.lockedRound = -1;
        this.lockedBlock = undefined;
        this.lockedBlockParts = undefined;
        this.#publish("Unlock", this.#roundStateEvent());
      }
      await this.#signAddVote(SIGNED_MSG_TYPE.precommit);
      return;
    }
    if (blockHashesTo(this.lockedBlock, blockId.hash)) {
      this.lockedRound = round;
      this.#publish("Relock", this.#roundStateEvent());
      await this.#signAddVote(SIGNED_MSG_TYPE.precommit, blockId.hash, blockId.partSetHeader);
      return;
    }
    if (this.proposalBlock !== undefined && blockHashesTo(this.proposalBlock, blockId.hash)) {
      try {
        this.#blockExec.validateBlock(this.state, this.proposalBlock);
      } catch (err) {
        throw new ConsensusFailureError(
          `precommit step; +2/3 prevoted for an invalid block: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      }
      this.lockedRound = round;
      this.lockedBlock = this.proposalBlock;
      this.lockedBlockParts = this.proposalBlockParts;
      this.#publish("Lock", this.#roundStateEvent());
      await this.#signAddVote(SIGNED_MSG_TYPE.precommit, blockId.hash, blockId.partSetHeader);
      return;
    }
    // A polka for a block we do not have: unlock, fetch it, precommit nil.
    this.lockedRound = -1;
    this.lockedBlock = undefined;
    this.lockedBlockParts = undefined;
    if (this.proposalBlockParts === undefined || !this.proposalBlockParts.hasHeader(blockId.partSetHeader)) {
      this.proposalBlock = undefined;
      this.proposalBlockParts = PartSetClass.fromHeader(blockId.partSetHeader);
    }
    this.#publish("Unlock", this.#roundStateEvent());
    await this.#signAddVote(SIGNED_MSG_TYPE.precommit);
  }

  async #enterPrecommitWait(height: number, round: number): Promise<void> {
    if (this.height !== height || round < this.round || (this.round === round && this.triggeredTimeoutPrecommit)) {
      return;
    }
    if (!this.votes.precommits(round)?.hasTwoThirdsAny()) {
      throw new ConsensusFailureError(
        `entering precommit wait step (${height}/${round}), but precommits does not have any +2/3 votes`,
      );
    }
    this.#scheduleTimeout(this.#timeoutPrecommit(round), height, round, ROUND_STEP.precommitWait);
    this.triggeredTimeoutPrecommit = true;
    this.#newStep();
  }

  async #enterCommit(height: number, commitRound: number): Promise<void> {
    if (this.height !== height || ROUND_STEP.commit <= this.step) return;
    const blockId = this.votes.precommits(commitRound)?.twoThirdsMajority();
    if (blockId === undefined) throw new ConsensusFailureError("enterCommit() expects +2/3 precommits");
    if (blockHashesTo(this.lockedBlock, blockId.hash)) {
      this.proposalBlock = this.lockedBlock;
      this.proposalBlockParts = this.lockedBlockParts;
    }
    if (!blockHashesTo(this.proposalBlock, blockId.hash)) {
      if (this.proposalBlockParts === undefined || !this.proposalBlockParts.hasHeader(blockId.partSetHeader)) {
        this.#deps.log.info(
          { commit: bytesToHexUpper(blockId.hash) },
          "commit is for a block we do not know about; set ProposalBlock=nil",
        );
        this.proposalBlock = undefined;
        this.proposalBlockParts = PartSetClass.fromHeader(blockId.partSetHeader);
        this.#publish("ValidBlock", this.#roundStateEvent());
        this.#gossip.broadcastNewValidBlock(true);
      }
    }
    // Keep the round; commitRound points at the right precommits.
    this.#updateRoundStep(this.round, ROUND_STEP.commit);
    this.commitRound = commitRound;
    this.commitTime = this.#catchUpCommitTime(commitRound);
    this.#newStep();
    await this.#tryFinalizeCommit(height);
  }

  /**
   * The time the next height's timeout_commit counts from: now, as CometBFT, unless this node saw the
   * decision late. A node that was paused, cut off or restarting learns the +2/3 precommits well after
   * the others did (their BFT time, the weighted median of the precommits' timestamps); waiting a whole
   * timeout_commit from then makes it enter the next height that much later than the others, and when
   * it is that height's proposer, its proposal reaches them when their propose timeout fires and round
   * 0 fails. Such a node counts from the quorum's time instead, by at most timeout_commit (so it never
   * starts before now, and a node with a skewed clock is never moved by more than that).
   */
  #catchUpCommitTime(commitRound: number): Timestamp {
    const now = this.#deps.clock.nowNs();
    const precommits = this.votes.precommits(commitRound);
    if (precommits === undefined || this.#opts.timeoutCommitMs <= 0) return now;
    let quorumTime: Timestamp;
    try {
      quorumTime = medianTime(precommits.makeCommit(), this.validators);
    } catch {
      return now;
    }
    const lateNs = now - quorumTime;
    if (lateNs <= LATE_COMMIT_NS) return now;
    const timeoutNs = BigInt(this.#opts.timeoutCommitMs) * MS;
    return now - (lateNs < timeoutNs ? lateNs : timeoutNs);
  }

  async #tryFinalizeCommit(height: number): Promise<void> {
    if (this.height !== height) {
      throw new ConsensusFailureError(`tryFinalizeCommit() cs.Height: ${this.height} vs height: ${height}`);
    }
    const blockId = this.votes.precommits(this.commitRound)?.twoThirdsMajority();
    if (blockId === undefined || blockId.hash.length === 0) {
      this.#deps.log.error(
        { height },
        "failed attempt to finalize commit; there was no +2/3 majority or +2/3 was for nil",
      );
      return;
    }
    if (!blockHashesTo(this.proposalBlock, blockId.hash)) return; // still waiting for the block
    await this.#finalizeCommit(height);
  }

  async #finalizeCommit(height: number): Promise<void> {
    if (this.height !== height || this.step !== ROUND_STEP.commit) return;
    const fail = this.#deps.failPoint ?? (() => {});
    const precommits = this.votes.precommits(this.commitRound);
    const blockId = precommits?.twoThirdsMajority();
    const block = this.proposalBlock;
    const parts = this.proposalBlockParts;
    if (precommits === undefined || blockId === undefined) {
      throw new ConsensusFailureError("cannot finalize commit; commit does not have 2/3 majority");
    }
    if (block === undefined || parts === undefined || !parts.hasHeader(blockId.partSetHeader)) {
      throw new ConsensusFailureError("expected ProposalBlockParts header to be commit header");
    }
    if (!blockHashesTo(block, blockId.hash)) {
      throw new ConsensusFailureError("cannot finalize commit; proposal block does not hash to commit hash");
    }
    try {
      this.#blockExec.validateBlock(this.state, block);
    } catch (err) {
      throw new ConsensusFailureError(`+2/3 committed an invalid block: ${(err as Error).message}`, { cause: err });
    }
    this.#deps.metrics?.finalizing(
      this.proposal,
      this.votes.prevotes(this.round)?.list() ?? [],
      precommits.list(),
      this.validators,
    );
    // The fields are hex strings made for this line only: a dev chain mines blocks by the thousand, silently.
    if (this.#deps.log.isLevelEnabled("info")) {
      this.#deps.log.info(
        {
          height,
          hash: bytesToHexUpper(blockHash(block)),
          root: bytesToHexUpper(block.header.appHash),
          numTxs: block.data.txs.length,
        },
        "finalizing commit of block",
      );
    }
    fail("beforeSaveBlock");
    if (this.#deps.blockStore.height() < block.header.height) {
      // The seen commit justifies this block locally; the next block's LastCommit may differ.
      await this.#deps.blockStore.saveBlock(block, parts, precommits.makeCommit());
    } else {
      this.#deps.log.debug({ height }, "calling finalizeCommit on already stored block");
    }
    fail("afterSaveBlock");
    // EndHeight after the block is stored, before ApplyBlock: a crash from here on is recovered by
    // the handshake, and replay never re-runs a height whose block is stored.
    await this.#wal?.writeSync({ kind: "endHeight", height }, this.#deps.clock.nowNs());
    fail("afterEndHeight");
    const id: BlockId = { hash: blockHash(block), partSetHeader: parts.header() };
    const { state } = await this.#blockExec.applyBlock(this.state, id, block);
    this.#updateToState(state);
    this.#resolveHeightWaiters();
    this.#production.committed(height, block.data.txs.length);
    this.#scheduleRound0();
  }

  #resolveHeightWaiters(): void {
    const h = this.state.lastBlockHeight;
    const still: HeightWaiter[] = [];
    for (const w of this.#heightWaiters) {
      if (w.height <= h) w.resolve();
      else still.push(w);
    }
    this.#heightWaiters = still;
  }

  // ---------------------------------------------------------------------------------------------
  // Proposals, parts, votes

  #setProposal(proposal: Proposal): void {
    if (this.proposal !== undefined) return;
    if (proposal.height !== this.height || proposal.round !== this.round) return;
    if (proposal.polRound < -1 || (proposal.polRound >= 0 && proposal.polRound >= proposal.round)) {
      throw new InvalidProposalError("error invalid proposal POL round");
    }
    const proposer = this.validators.getProposer();
    if (proposer === undefined || !verifyProposal(this.state.chainId, proposal, proposer.pubKey)) {
      throw new InvalidProposalError("error invalid proposal signature");
    }
    const paramMax = Number(this.state.consensusParams.block.maxBytes);
    const maxBytes = paramMax === -1 ? MAX_BLOCK_SIZE_BYTES : paramMax;
    if (proposal.blockId.partSetHeader.total > Math.floor((maxBytes - 1) / 65536) + 1) {
      throw new InvalidProposalError("proposal block has too many parts");
    }
    this.proposal = proposal;
    // Kept when already set (Commit step, or a valid block of this round).
    this.proposalBlockParts ??= PartSetClass.fromHeader(proposal.blockId.partSetHeader);
    this.#deps.log.info(
      { height: proposal.height, round: proposal.round, proposer: bytesToHexUpper(proposer.address) },
      "received proposal",
    );
  }

  /** Adds a part of the proposal block; assembles the block once complete. */
  #addProposalBlockPart(msg: BlockPartMessage): boolean {
    if (this.height !== msg.height) return false;
    const parts = this.proposalBlockParts;
    if (parts === undefined) return false;
    let added: boolean;
    try {
      added = parts.addPart(msg.part);
    } catch (err) {
      throw new InvalidBlockPartError(`invalid block part ${msg.part.index}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const paramMax = Number(this.state.consensusParams.block.maxBytes);
    const maxBytes = paramMax === -1 ? MAX_BLOCK_SIZE_BYTES : paramMax;
    if (parts.byteSize() > maxBytes) {
      throw new InvalidBlockPartError(
        `total size of proposal block parts exceeds maximum block bytes (${parts.byteSize()} > ${maxBytes})`,
      );
    }
    if (added && parts.isComplete()) {
      let block: Block;
      const own = this.#ownProposal;
      this.#ownProposal = undefined;
      if (own !== undefined && partSetHeaderEquals(own.parts.header(), parts.header())) {
        block = own.block;
      } else {
        try {
          block = decodeBlock(parts.bytes());
        } catch (err) {
          throw new InvalidBlockPartError(`proposal block does not decode: ${(err as Error).message}`, { cause: err });
        }
      }
      this.proposalBlock = block;
      this.#deps.log.info(
        { height: block.header.height, hash: bytesToHexUpper(blockHash(block)) },
        "received complete proposal block",
      );
      this.#publish("CompleteProposal", {
        height: this.height,
        round: this.round,
        step: roundStepName(this.step),
        blockId: { hash: blockHash(block), partSetHeader: parts.header() },
      });
    }
    return added;
  }

  async #handleCompleteProposal(blockHeight: number): Promise<void> {
    const prevotes = this.votes.prevotes(this.round);
    const blockId = prevotes?.twoThirdsMajority();
    const hasTwoThirds = blockId !== undefined;
    if (blockId !== undefined && !isZeroBlockId(blockId) && this.validRound < this.round) {
      if (blockHashesTo(this.proposalBlock, blockId.hash)) {
        this.validRound = this.round;
        this.validBlock = this.proposalBlock;
        this.validBlockParts = this.proposalBlockParts;
      }
    }
    if (this.step <= ROUND_STEP.propose && this.#isProposalComplete()) {
      await this.#enterPrevote(blockHeight, this.round);
      if (hasTwoThirds) await this.#enterPrecommit(blockHeight, this.round);
    } else if (this.step === ROUND_STEP.commit) {
      await this.#tryFinalizeCommit(blockHeight);
    }
  }

  async #tryAddVote(vote: Vote, peerId: string): Promise<boolean> {
    try {
      return await this.#addVote(vote, peerId);
    } catch (err) {
      if (err instanceof ConflictingVoteError) {
        const own = this.#ownAddress();
        if (own !== undefined && bytesEqual(vote.validatorAddress, own)) {
          this.#deps.log.error(
            { height: vote.height, round: vote.round, type: vote.type },
            "found conflicting vote from ourselves; did you unsafe_reset a validator?",
          );
          return err.added;
        }
        if (this.#deps.evidence !== undefined) this.#deps.evidence.reportConflictingVotes(err.voteA, err.voteB);
        else
          this.#deps.log.info(
            { height: vote.height, validator: vote.validatorIndex },
            "conflicting votes detected (no evidence pool to report to)",
          );
        return err.added;
      }
      if (err instanceof NonDeterministicSignatureError) {
        this.#deps.log.debug({ err: err.message }, "vote has non-deterministic signature");
        return false;
      }
      throw err;
    }
  }

  async #addVote(vote: Vote, peerId: string): Promise<boolean> {
    if (vote.height < this.height || (vote.height === this.height && vote.round < this.round)) {
      this.#deps.metrics?.lateVote(vote.type);
    }
    // A precommit for the previous height: these arrive while waiting out timeout_commit.
    if (vote.height + 1 === this.height && vote.type === SIGNED_MSG_TYPE.precommit) {
      if (this.step !== ROUND_STEP.newHeight || this.lastCommit === undefined) return false;
      const added = this.lastCommit.addVote(vote);
      if (!added) {
        this.#deps.metrics?.duplicateVote();
        return false;
      }
      this.#onVoteAdded(vote);
      if (this.#opts.skipTimeoutCommit && this.lastCommit.hasAll()) await this.#enterNewRound(this.height, 0);
      return true;
    }
    if (vote.height !== this.height) return false;
    if (vote.extension.length > 0 || vote.extensionSignature.length > 0) {
      throw new InvalidVoteError(
        `received vote with vote extension for height ${vote.height} (extensions disabled) from peer ID ${peerId}`,
      );
    }
    const height = this.height;
    const added = this.votes.addVote(vote, peerId);
    if (!added) {
      this.#deps.metrics?.duplicateVote();
      return false;
    }
    this.#onVoteAdded(vote);
    this.#deps.metrics?.voteReceived(vote, this.validators);

    if (vote.type === SIGNED_MSG_TYPE.prevote) {
      // biome-ignore lint/style/noNonNullAssertion: the vote was just added to this set
      const prevotes = this.votes.prevotes(vote.round)!;
      const blockId = prevotes.twoThirdsMajority();
      if (blockId !== undefined) {
        // A polka. Unlock if it is newer than our lock and for another block.
        if (
          this.lockedBlock !== undefined &&
          this.lockedRound < vote.round &&
          vote.round <= this.round &&
          !blockHashesTo(this.lockedBlock, blockId.hash)
        ) {
          this.lockedRound = -1;
          this.lockedBlock = undefined;
          this.lockedBlockParts = undefined;
          this.#publish("Unlock", this.#roundStateEvent());
        }
        // Update the valid block when the polka is for this round.
        if (blockId.hash.length !== 0 && this.validRound < vote.round && vote.round === this.round) {
          if (blockHashesTo(this.proposalBlock, blockId.hash)) {
            this.validRound = vote.round;
            this.validBlock = this.proposalBlock;
            this.validBlockParts = this.proposalBlockParts;
          } else {
            this.proposalBlock = undefined;
          }
          if (this.proposalBlockParts === undefined || !this.proposalBlockParts.hasHeader(blockId.partSetHeader)) {
            this.proposalBlockParts = PartSetClass.fromHeader(blockId.partSetHeader);
          }
          this.#publish("ValidBlock", this.#roundStateEvent());
          this.#gossip.broadcastNewValidBlock(false);
        }
      }
      if (this.round < vote.round && prevotes.hasTwoThirdsAny()) {
        // Round-skip: +2/3 of the power is already ahead of us.
        await this.#enterNewRound(height, vote.round);
      } else if (this.round === vote.round && ROUND_STEP.prevote <= this.step) {
        const maj = prevotes.twoThirdsMajority();
        if (maj !== undefined && (this.#isProposalComplete() || maj.hash.length === 0)) {
          await this.#enterPrecommit(height, vote.round);
        } else if (prevotes.hasTwoThirdsAny()) {
          await this.#enterPrevoteWait(height, vote.round);
        }
      } else if (this.proposal !== undefined && this.proposal.polRound >= 0 && this.proposal.polRound === vote.round) {
        if (this.#isProposalComplete()) await this.#enterPrevote(height, this.round);
      }
      return true;
    }

    // biome-ignore lint/style/noNonNullAssertion: the vote was just added to this set
    const precommits = this.votes.precommits(vote.round)!;
    const blockId = precommits.twoThirdsMajority();
    if (blockId !== undefined) {
      // The majority may be from a higher round.
      await this.#enterNewRound(height, vote.round);
      await this.#enterPrecommit(height, vote.round);
      if (blockId.hash.length !== 0) {
        await this.#enterCommit(height, vote.round);
        if (this.#opts.skipTimeoutCommit && precommits.hasAll()) await this.#enterNewRound(this.height, 0);
      } else {
        await this.#enterPrecommitWait(height, vote.round);
      }
    } else if (this.round <= vote.round && precommits.hasTwoThirdsAny()) {
      await this.#enterNewRound(height, vote.round);
      await this.#enterPrecommitWait(height, vote.round);
    }
    return true;
  }

  #onVoteAdded(vote: Vote): void {
    this.#publish("Vote", { vote });
    if (!this.#replayMode) this.#gossip.broadcastHasVote(vote);
  }

  /** Signs a vote for the current height/round and queues it as an own message. */
  async #signAddVote(type: VoteType, hash?: Uint8Array, header?: PartSetHeader): Promise<void> {
    const signer = this.#deps.signer;
    if (signer === undefined) return;
    const addr = signer.address();
    const found = this.validators.getByAddress(addr);
    if (found === undefined) return;
    // Flush the WAL first so a restart recomputes the same vote.
    await this.#wal?.flushAndSync();
    const blockId: BlockId =
      hash === undefined || header === undefined ? zeroBlockId() : { hash, partSetHeader: header };
    const unsigned: Vote = {
      type,
      height: this.height,
      round: this.round,
      blockId,
      timestamp: this.#voteTime(),
      validatorAddress: addr,
      validatorIndex: found.index,
      signature: EMPTY_BYTES,
      extension: EMPTY_BYTES,
      extensionSignature: EMPTY_BYTES,
    };
    let vote: Vote;
    this.#unsignedVote = undefined;
    try {
      // Vote extensions are never enabled here: no extension signature to make.
      vote = await signer.signVote(this.state.chainId, unsigned, false);
    } catch (err) {
      this.#deps.log.error({ height: this.height, round: this.round, err }, "failed signing vote");
      // Tried again by retrySigning when the signer is back (the signer's guard makes a repeat safe).
      if (!this.#replayMode) {
        this.#unsignedVote = {
          height: this.height,
          round: this.round,
          type,
          ...(hash === undefined ? {} : { hash }),
          ...(header === undefined ? {} : { header }),
        };
      }
      return;
    }
    // Vote extensions are not enabled (vote_extensions_enable_height is not supported): drop the
    // extension signature the signer makes for non-nil precommits (SignAndCheckVote).
    this.#sendInternal({ kind: "vote", vote: { ...vote, extension: EMPTY_BYTES, extensionSignature: EMPTY_BYTES } });
  }

  /** BFT time: at least 1 ms after the block being voted for. */
  #voteTime(): Timestamp {
    const now = this.#deps.clock.nowNs();
    let min = now;
    if (this.lockedBlock !== undefined) min = this.lockedBlock.header.time + MS;
    else if (this.proposalBlock !== undefined) min = this.proposalBlock.header.time + MS;
    if (now > min) return now;
    return min;
  }

  // ---------------------------------------------------------------------------------------------
  // Peers (gossip.ts keeps them; the consensus reactor's role, p2p only moves the messages)

  /** A peer connected: it gets our round step right away. */
  addPeer(peerId: string, nodeAddress = ""): void {
    this.#gossip.addPeer(peerId, nodeAddress);
  }

  removePeer(peerId: string): void {
    this.#gossip.removePeer(peerId);
  }

  /** A message from a peer: peer-state bookkeeping now; proposals, parts and votes go to the queue. */
  receivePeerMessage(peerId: string, msg: ConsensusMessage): void {
    this.#gossip.receive(peerId, msg);
  }

  // ---------------------------------------------------------------------------------------------
  // Views

  roundStateView(): RoundStateView {
    return {
      height: this.height,
      round: this.round,
      step: this.step,
      startTime: this.startTime,
      commitTime: this.commitTime,
      validators: validatorSetSnapshot(this.validators),
      proposal: this.proposal,
      proposalBlock: this.proposalBlock,
      proposalBlockParts: partSetView(this.proposalBlockParts),
      lockedRound: this.lockedRound,
      lockedBlock: this.lockedBlock,
      lockedBlockParts: partSetView(this.lockedBlockParts),
      validRound: this.validRound,
      validBlock: this.validBlock,
      validBlockParts: partSetView(this.validBlockParts),
      votes: this.votes.view(),
      commitRound: this.commitRound,
      lastCommit: this.lastCommit?.view(),
      lastValidators: validatorSetSnapshot(this.lastValidators),
      triggeredTimeoutPrecommit: this.triggeredTimeoutPrecommit,
    };
  }

  consensusStateView(): ConsensusStateView {
    const proposer = this.validators.getProposer();
    const hashOf = (b: Block | undefined) => (b === undefined ? EMPTY_BYTES : blockHash(b));
    return {
      height: this.height,
      round: this.round,
      step: this.step,
      startTime: this.startTime,
      proposalBlockHash: hashOf(this.proposalBlock),
      lockedBlockHash: hashOf(this.lockedBlock),
      validBlockHash: hashOf(this.validBlock),
      heightVoteSet: this.votes.view(),
      proposer: {
        address: proposer?.address ?? EMPTY_BYTES,
        index: proposer === undefined ? -1 : (this.validators.getByAddress(proposer.address)?.index ?? -1),
      },
    };
  }

  peerStateViews(): PeerStateView[] {
    return this.#gossip.peerStateViews();
  }
}
