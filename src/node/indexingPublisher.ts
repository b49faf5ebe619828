import type { ConsensusEventMap, EventPublisher } from "../consensus/index.js";
import type { EventBus } from "../events/index.js";
import type { Indexer } from "../indexer/index.js";
import type { Logger } from "../util/logger.js";

/**
 * Sits between consensus and the event bus. A NewBlock is indexed before it, and every event
 * published after it, reaches subscribers: a client woken by a `Tx` event can call `tx` or
 * `tx_search` at once and find it (CometBFT indexes asynchronously, so there it can miss).
 * Events keep their order; consensus never waits (publish stays synchronous).
 *
 * With `retainFrom` (the block store's base), the index follows block pruning: after each block,
 * what was indexed below the base is removed (kv indexer; a sink without pruneBelow keeps it).
 */
export class IndexingPublisher implements EventPublisher {
  readonly #bus: EventBus;
  readonly #indexer: Indexer;
  readonly #log: Logger;
  readonly #onIndexed: (block: ConsensusEventMap["NewBlock"]) => void;
  /** The chain of index writes and the events waiting behind them, in publication order. */
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;
  readonly #retainFrom: (() => number) | undefined;
  /** The index holds nothing below this height. */
  #prunedBelow = 0;

  constructor(
    bus: EventBus,
    indexer: Indexer,
    log: Logger,
    onIndexed: (block: ConsensusEventMap["NewBlock"]) => void,
    retainFrom?: () => number,
  ) {
    this.#bus = bus;
    this.#indexer = indexer;
    this.#log = log;
    this.#onIndexed = onIndexed;
    this.#retainFrom = retainFrom;
  }

  publish<K extends keyof ConsensusEventMap>(type: K, data: ConsensusEventMap[K]): void {
    if (type === "NewBlock") {
      const nb = data as ConsensusEventMap["NewBlock"];
      const height = nb.block.header.height;
      this.#enqueue(async () => {
        try {
          await this.#indexer.indexBlock({
            height,
            finalizeBlockEvents: nb.resultFinalizeBlock.events,
            txs: nb.block.data.txs,
            txResults: nb.resultFinalizeBlock.txResults,
          });
        } catch (err) {
          this.#log.error({ err, height }, "failed to index block");
        }
        await this.#prune();
        this.#onIndexed(nb);
      });
    }
    if (this.#pending === 0) {
      this.#forward(type, data);
      return;
    }
    this.#enqueue(() => {
      this.#forward(type, data);
      return Promise.resolve();
    });
  }

  async #prune(): Promise<void> {
    const retain = this.#retainFrom?.() ?? 0;
    if (this.#indexer.pruneBelow === undefined || retain <= this.#prunedBelow) return;
    try {
      const heights = await this.#indexer.pruneBelow(retain);
      this.#prunedBelow = retain;
      this.#log.debug({ heights, retainHeight: retain }, "pruned the tx and block index");
    } catch (err) {
      this.#log.error({ err, retainHeight: retain }, "failed to prune the tx and block index");
    }
  }

  /** Resolves once everything published so far has been indexed and delivered. */
  flush(): Promise<void> {
    return this.#tail;
  }

  #forward<K extends keyof ConsensusEventMap>(type: K, data: ConsensusEventMap[K]): void {
    // The bus's EventMap and consensus's ConsensusEventMap name the same payloads.
    this.#bus.publish(type as never, data as never);
  }

  #enqueue(step: () => Promise<void>): void {
    this.#pending++;
    this.#tail = this.#tail
      .then(step)
      .catch((err: unknown) => this.#log.error({ err }, "event delivery failed"))
      .finally(() => {
        this.#pending--;
      });
  }
}
