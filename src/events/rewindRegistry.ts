import { RewindRefusedError } from "./errors.js";

/**
 * A store or cache that a dev chain's rollback must take back to an earlier height (the mempool,
 * the app, the tx indexer, the state and block stores, the validator's last-signed state, the
 * evidence pool, the block-time pin). `node/` registers each once, in the order they must go back.
 */
export interface Rewindable {
  /** Named in errors and logs ("block store"). */
  readonly name: string;
  /** Why this store cannot go back (a psql indexer), asked of every store before any is touched. */
  cannotRewind?(): string | undefined;
  /** Forgets everything above `height`; the next store is called once this one is done. */
  rewindTo(height: number): Promise<void> | void;
}

/**
 * The one list of what a rollback undoes (docs/dev-chain.md, "Snapshots, revert and reset"): a
 * rollback asks `check()`, then `rewindTo(height)` walks the stores in registration order. The chain
 * epoch (chainEpoch.ts) then tells the readers that keep answers by height.
 */
export class RewindRegistry {
  readonly #stores: Rewindable[] = [];

  /** Adds `store` after those already registered; a name is registered once. Returns its removal. */
  register(store: Rewindable): () => void {
    if (this.#stores.some((s) => s.name === store.name)) {
      throw new RewindRefusedError(store.name, `"${store.name}" is already registered as rewindable`);
    }
    this.#stores.push(store);
    return () => {
      const i = this.#stores.indexOf(store);
      if (i >= 0) this.#stores.splice(i, 1);
    };
  }

  /** The registered stores' names, in the order they go back. */
  names(): string[] {
    return this.#stores.map((s) => s.name);
  }

  /** Throws RewindRefusedError naming the first store that cannot go back. */
  check(): void {
    for (const s of this.#stores) {
      const reason = s.cannotRewind?.();
      if (reason !== undefined) throw new RewindRefusedError(s.name, reason);
    }
  }

  /** check(), then each store in order; a store that throws stops the walk (the caller's crash recovery takes over). */
  async rewindTo(height: number): Promise<void> {
    this.check();
    for (const s of this.#stores) await s.rewindTo(height);
  }
}
