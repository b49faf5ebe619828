/**
 * Deadlines of many in-flight requests on one interval timer: a `setTimeout` plus its cleanup per
 * request costs more than a fast answer. The timer runs only while something is watched and never
 * keeps the process alive; an expiry fires at most one period late.
 */
export class DeadlineSweeper<K> {
  readonly #watched = new Map<K, { readonly deadline: number; readonly expire: () => void }>();
  readonly #everyMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(everyMs: number) {
    this.#everyMs = everyMs;
  }

  /** Calls `expire` once `deadline` (ms since epoch) has passed, unless `unwatch(key)` came first. */
  watch(key: K, deadline: number, expire: () => void): void {
    this.#watched.set(key, { deadline, expire });
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#sweep(), this.#everyMs);
      this.#timer.unref();
    }
  }

  unwatch(key: K): void {
    this.#watched.delete(key);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [key, w] of this.#watched) {
      if (w.deadline > now) continue;
      this.#watched.delete(key);
      w.expire();
    }
    if (this.#watched.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
