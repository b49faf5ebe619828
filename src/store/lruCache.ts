/** A small least-recently-used map: get refreshes an entry, set evicts the oldest beyond capacity. */
export class LruCache<K, V> {
  readonly #map = new Map<K, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }

  set(key: K, value: V): void {
    if (this.#capacity <= 0) return;
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  /** Drops every entry whose key fails `keep`. */
  retain(keep: (key: K) => boolean): void {
    for (const k of [...this.#map.keys()]) if (!keep(k)) this.#map.delete(k);
  }

  get size(): number {
    return this.#map.size;
  }
}
