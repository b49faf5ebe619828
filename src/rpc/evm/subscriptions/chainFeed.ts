import type { Logger } from "../../../util/logger.js";
import type { EvmBlock, EvmLog, EvmServices } from "../services.js";

/**
 * One subscription to the node's block and pending-tx notifications, fanned out to polling
 * filters and WebSocket subscriptions. Blocks are delivered strictly in height order; a missed
 * height (the node reported a later one first) is filled in from the chain.
 */

export interface BlockEvent {
  readonly block: EvmBlock;
  /** The block's logs in order; loaded only when some listener asked for them. */
  readonly logs: readonly EvmLog[];
}

interface BlockListener {
  readonly withLogs: boolean | (() => boolean);
  readonly fn: (e: BlockEvent) => void;
}

/** How many missed heights are filled in at most (older ones are skipped). */
const MAX_CATCH_UP = 1024;

export class ChainFeed {
  readonly #services: EvmServices;
  readonly #log: Logger;
  readonly #blockListeners = new Set<BlockListener>();
  readonly #pendingListeners = new Set<(hash: Uint8Array) => void>();
  #lastHeight: number | undefined;
  #queue: Promise<void> = Promise.resolve();
  #unsubscribers: (() => void)[] = [];
  #closed = false;

  constructor(services: EvmServices, log: Logger) {
    this.#services = services;
    this.#log = log;
  }

  start(): void {
    this.#lastHeight = this.#services.chain.latestHeight();
    const rollback = this.#services.events.onRollback?.((height) => {
      // Heights above `height` come again: deliver them again, after what is queued.
      this.#queue = this.#queue.then(() => {
        this.#lastHeight = height;
      });
    });
    if (rollback !== undefined) this.#unsubscribers.push(rollback);
    this.#unsubscribers.push(
      this.#services.events.onNewBlock((height) => this.#enqueue(height)),
      this.#services.events.onPendingTransaction((hash) => {
        for (const fn of [...this.#pendingListeners]) this.#safely(() => fn(hash));
      }),
    );
  }

  /** Listens for committed blocks; returns the unsubscribe function. */
  onBlock(fn: (e: BlockEvent) => void, opts: { withLogs: boolean | (() => boolean) }): () => void {
    const l: BlockListener = { fn, withLogs: opts.withLogs };
    this.#blockListeners.add(l);
    return () => {
      this.#blockListeners.delete(l);
    };
  }

  onPendingTransaction(fn: (hash: Uint8Array) => void): () => void {
    this.#pendingListeners.add(fn);
    return () => {
      this.#pendingListeners.delete(fn);
    };
  }

  /** Live listeners (block and pending), for tests and metrics. */
  listenerCount(): number {
    return this.#blockListeners.size + this.#pendingListeners.size;
  }

  /** Resolves once every block notified so far has been delivered. */
  idle(): Promise<void> {
    return this.#queue;
  }

  close(): void {
    this.#closed = true;
    for (const u of this.#unsubscribers.splice(0)) u();
    this.#blockListeners.clear();
    this.#pendingListeners.clear();
  }

  #enqueue(height: number): void {
    this.#queue = this.#queue.then(() => this.#deliver(height));
  }

  #safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.warn({ err }, "EVM RPC event listener failed");
    }
  }

  async #deliver(height: number): Promise<void> {
    const last = this.#lastHeight ?? height - 1;
    if (height <= last) return;
    const from = Math.max(last + 1, height - MAX_CATCH_UP + 1);
    for (let n = from; n <= height && !this.#closed; n++) {
      this.#lastHeight = n;
      if (this.#blockListeners.size === 0) continue;
      try {
        const block = await this.#services.chain.blockByNumber(n);
        if (block === undefined) continue;
        const wantLogs = [...this.#blockListeners].some((l) =>
          typeof l.withLogs === "function" ? l.withLogs() : l.withLogs,
        );
        const logs = wantLogs
          ? await this.#services.chain.logs({
              fromBlock: n,
              toBlock: n,
              addresses: [],
              topics: [],
              limit: Number.MAX_SAFE_INTEGER,
            })
          : [];
        const event: BlockEvent = { block, logs };
        for (const l of [...this.#blockListeners]) this.#safely(() => l.fn(event));
      } catch (err) {
        this.#log.warn({ err, height: n }, "EVM RPC could not load a new block for filters and subscriptions");
      }
    }
  }
}
