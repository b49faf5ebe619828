/**
 * The seen-tx cache (CometBFT LRUTxCache): tx keys in recency order, oldest evicted past capacity.
 * A capacity of 0 disables it (every push succeeds), like CometBFT's NopTxCache.
 */
export class TxCache {
  readonly #keys = new Set<string>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Adds `key`; false (and refreshed) when it was already there. */
  push(key: string): boolean {
    if (this.#capacity <= 0) return true;
    if (this.#keys.has(key)) {
      this.#keys.delete(key);
      this.#keys.add(key);
      return false;
    }
    if (this.#keys.size >= this.#capacity) {
      const oldest = this.#keys.values().next();
      if (oldest.done !== true) this.#keys.delete(oldest.value);
    }
    this.#keys.add(key);
    return true;
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }

  remove(key: string): void {
    this.#keys.delete(key);
  }

  reset(): void {
    this.#keys.clear();
  }

  get size(): number {
    return this.#keys.size;
  }
}
