/** Time source and timers, injected so consensus round changes are testable without sleeps. */
export interface Clock {
  /** Wall-clock now in Unix nanoseconds. */
  nowNs(): bigint;
  /** Runs `fn` after `ms` milliseconds; returns a cancel function. */
  schedule(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  nowNs: () => BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n),
  schedule(ms, fn) {
    // setTimeout waits at least 1 ms; a timeout that is already due (timeout_commit = 0, a dev
    // chain's back-to-back blocks) runs on the next turn of the event loop instead.
    if (ms <= 0) {
      const i = setImmediate(fn);
      return () => clearImmediate(i);
    }
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** A manual clock for tests: time moves only through `advance`. */
export class ManualClock implements Clock {
  #now: bigint;
  #timers: { at: bigint; fn: () => void; id: number }[] = [];
  #nextId = 0;

  constructor(startNs = 1_700_000_000_000_000_000n) {
    this.#now = startNs;
  }

  nowNs(): bigint {
    return this.#now;
  }

  schedule(ms: number, fn: () => void): () => void {
    const id = this.#nextId++;
    this.#timers.push({ at: this.#now + BigInt(Math.max(0, Math.round(ms))) * 1_000_000n, fn, id });
    return () => {
      this.#timers = this.#timers.filter((t) => t.id !== id);
    };
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const target = this.#now + BigInt(Math.round(ms)) * 1_000_000n;
    for (;;) {
      const due = this.#timers
        .filter((t) => t.at <= target)
        .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id));
      const next = due[0];
      if (!next) break;
      this.#timers = this.#timers.filter((t) => t.id !== next.id);
      this.#now = next.at;
      next.fn();
    }
    this.#now = target;
  }

  pendingTimers(): number {
    return this.#timers.length;
  }
}
