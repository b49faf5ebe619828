import type { ChainState } from "../types/index.js";
import type { Timestamp } from "../util/time.js";
import type { MempoolAccess } from "./deps.js";

/**
 * The block-production policy port: when a node makes a block at round 0 of a height. Consensus
 * asks its policy and never branches on the kind of chain. CometBFT's rule (create_empty_blocks, its
 * interval, proof blocks after an app-hash change) is `TimeoutPolicy`, the default; a dev chain's
 * automine, interval mining and mining on demand is `MiningPolicy` (miningPolicy.ts).
 */
export interface BlockProductionPolicy {
  /** Round 0 of a height waits for a reason to propose (txs, a request) instead of proposing at once. */
  readonly waitsForTxs: boolean;
  /** A proof block (no txs needed) follows an app-hash change and starts the chain (CometBFT's rule). */
  readonly proofBlocks: boolean;
  /** The WAL is fsynced. */
  readonly durableWal: boolean;
  /** Consensus.rewind may roll the chain back between inputs (a dev chain's evm_revert). */
  readonly rewindable: boolean;
  /**
   * A sole validator with no peer and no WAL decides round 0 in one pass and signs only its
   * precommit: its proposal and prevote would reach no one and be replayed by nothing
   * (consensusState.ts #decideAlone).
   */
  readonly soleRounds: boolean;
  /**
   * The proposer picks each block's time (CometBFT v1's proposer-based timestamps), instead of the
   * median of the last commit's vote times; undefined: BFT time.
   */
  readonly proposerTime: ((height: number, state: ChainState) => Timestamp) | undefined;
  /** Consensus started: subscribe to what makes a block wanted. Returns the unsubscribe function. */
  start(control: ProductionControl): () => void;
  /** On a TxsAvailable input: whether it should lead to a proposal. */
  wantsBlock(): boolean;
  /** At round 0's NewRound step of a height that waits: propose now, and/or look again after `recheckMs` (0: never). */
  atNewRound(): Round0Decision;
  /** A proposal is about to reap the mempool. */
  reaping(): void;
  /** Block `height` with `txs` txs was committed and applied. */
  committed(height: number, txs: number): void;
  /**
   * Whatever waits for blocks fails with `err`: consensus halted or stopped (`final`: later requests
   * fail too), or the chain was rewound.
   */
  abandon(err: Error, final: boolean): void;
}

/** What a policy asks of consensus; each call is queued and handled between inputs. */
export interface ProductionControl {
  /** Decide again at round 0's NewRound step (a mine request, a changed setting). */
  wake(): void;
  /** CometBFT's TxsAvailable input. */
  txsAvailable(): void;
}

export interface Round0Decision {
  propose: boolean;
  recheckMs: number;
}

/**
 * CometBFT's own rule (consensus/state.go enterNewRound, handleTxsAvailable): with
 * create_empty_blocks = true and no interval, round 0 proposes at once; otherwise it waits for the
 * mempool's TxsAvailable, or for the interval to pass.
 */
export class TimeoutPolicy implements BlockProductionPolicy {
  readonly #mempool: MempoolAccess;
  readonly #intervalMs: number;
  readonly waitsForTxs: boolean;
  readonly proofBlocks = true;
  readonly durableWal = true;
  readonly rewindable = false;
  readonly soleRounds = false;
  readonly proposerTime = undefined;

  constructor(mempool: MempoolAccess, opts: { createEmptyBlocks: boolean; createEmptyBlocksIntervalMs: number }) {
    this.#mempool = mempool;
    this.#intervalMs = opts.createEmptyBlocksIntervalMs;
    this.waitsForTxs = !opts.createEmptyBlocks || opts.createEmptyBlocksIntervalMs > 0;
  }

  start(control: ProductionControl): () => void {
    if (!this.waitsForTxs) return noop;
    return this.#mempool.onTxsAvailable(() => control.txsAvailable());
  }

  wantsBlock(): boolean {
    return true;
  }

  atNewRound(): Round0Decision {
    // With txs already waiting, the notifier fired before this height; look at the mempool now.
    return { propose: this.#mempool.size() > 0, recheckMs: this.#intervalMs };
  }

  reaping(): void {}

  committed(): void {}

  abandon(): void {}
}

function noop(): void {}
