import type { ChainState } from "../types/index.js";
import type { Timestamp } from "../util/time.js";
import type { BlockProductionPolicy, ProductionControl, Round0Decision } from "./blockProduction.js";
import type { MempoolAccess } from "./deps.js";

/** How a dev chain makes blocks; changed at run time by setMining. */
export interface DevMiningOptions {
  /** A block as soon as a tx waits. */
  automine: boolean;
  /** An empty-or-not block every this many ms (0 = off). */
  intervalMs: number;
}

/** A request for `remaining` more blocks (evm_mine, hardhat_mine, a cheat's own block). */
interface MineRequest {
  remaining: number;
  heights: number[];
  resolve: (heights: number[]) => void;
  reject: (err: Error) => void;
}

/**
 * A dev chain's block production (`cometh dev`, docs/dev-chain.md): blocks on demand (automine,
 * interval mining, mine requests) instead of create_empty_blocks; no proof block follows an
 * app-hash change (the next block commits the app hash; an idle dev chain makes none, not even its
 * first, as Anvil and Hardhat start at block 0); the proposer picks block times (`proposerTime`);
 * the WAL is not fsynced; the chain may be rewound; a sole validator without peers or WAL signs only
 * its precommit (sole rounds).
 */
export class MiningPolicy implements BlockProductionPolicy {
  readonly waitsForTxs = true;
  readonly proofBlocks = false;
  readonly durableWal = false;
  readonly rewindable = true;
  readonly soleRounds = true;
  readonly proposerTime: (height: number, state: ChainState) => Timestamp;
  readonly #mempool: MempoolAccess;
  #mining: DevMiningOptions;
  #requests: MineRequest[] = [];
  #control: ProductionControl | undefined;
  /**
   * A tx arrived since the last block that carried none. Automine makes blocks only then, so a tx
   * that cannot run yet (a nonce gap) does not make empty blocks forever.
   */
  #txArrived = false;
  /** Txs admitted so far, and how many had been when the last proposal reaped the mempool. */
  #txCount = 0;
  #txCountAtProposal = 0;
  #stoppedBy: Error | undefined;

  constructor(
    mempool: MempoolAccess,
    mining: DevMiningOptions,
    proposerTime: (height: number, state: ChainState) => Timestamp,
  ) {
    this.#mempool = mempool;
    this.#mining = { ...mining };
    this.proposerTime = proposerTime;
  }

  start(control: ProductionControl): () => void {
    this.#control = control;
    this.#txArrived = this.#mempool.size() > 0;
    const offAvailable = this.#mempool.onTxsAvailable(() => control.txsAvailable());
    const offAdded = this.#mempool.onTxAdded?.(() => {
      this.#txArrived = true;
      this.#txCount++;
      control.txsAvailable();
    });
    if (this.#requests.length > 0) control.wake();
    return () => {
      offAvailable();
      offAdded?.();
    };
  }

  /** How blocks are made now. */
  mining(): DevMiningOptions {
    return { ...this.#mining };
  }

  /** Changes how blocks are made (evm_setAutomine, evm_setIntervalMining). */
  setMining(mining: DevMiningOptions): void {
    const changed = this.#mining.intervalMs !== mining.intervalMs;
    this.#mining = { ...mining };
    if (mining.automine) this.#txArrived = this.#mempool.size() > 0;
    // A new interval starts counting now; automine takes what already waits.
    if (changed || (mining.automine && this.#mempool.size() > 0)) this.#control?.wake();
  }

  /**
   * Commits `count` more blocks back to back (with whatever txs wait, per the app's
   * PrepareProposal) and resolves with their heights. Blocks made for any reason count.
   */
  mineBlocks(count: number): Promise<number[]> {
    if (this.#stoppedBy !== undefined) return Promise.reject(this.#stoppedBy);
    if (count <= 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.#requests.push({ remaining: count, heights: [], resolve, reject });
      // Before consensus starts, start() wakes it for the requests waiting.
      this.#control?.wake();
    });
  }

  wantsBlock(): boolean {
    return this.#requests.length > 0 || (this.#mining.automine && this.#txArrived && this.#mempool.size() > 0);
  }

  atNewRound(): Round0Decision {
    if (this.wantsBlock()) return { propose: true, recheckMs: 0 };
    return { propose: false, recheckMs: this.#mining.intervalMs };
  }

  reaping(): void {
    this.#txCountAtProposal = this.#txCount;
  }

  committed(height: number, txs: number): void {
    // An empty block when nothing arrived since its proposal: what waits cannot run yet.
    if (txs === 0 && this.#txCount === this.#txCountAtProposal) this.#txArrived = false;
    const r = this.#requests[0];
    if (r === undefined) return;
    r.heights.push(height);
    if (--r.remaining <= 0) {
      this.#requests.shift();
      r.resolve(r.heights);
    }
  }

  abandon(err: Error, final = true): void {
    if (final) this.#stoppedBy = err;
    for (const r of this.#requests.splice(0)) r.reject(err);
  }
}
