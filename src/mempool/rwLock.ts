/**
 * An async readers-writer lock with writer preference: admissions share it, consensus takes it alone.
 * A waiting writer blocks new readers so a stream of checkTx calls cannot starve a commit.
 */
export class RwLock {
  #readers = 0;
  #writer = false;
  readonly #waitingWriters: (() => void)[] = [];
  #waitingReaders: (() => void)[] = [];

  /** Takes a read share at once when possible; false means call readLock() and wait. */
  tryRead(): boolean {
    if (this.#writer || this.#waitingWriters.length > 0) return false;
    this.#readers++;
    return true;
  }

  read(): Promise<void> {
    if (this.tryRead()) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waitingReaders.push(() => {
        this.#readers++;
        resolve();
      });
    });
  }

  releaseRead(): void {
    this.#readers--;
    if (this.#readers === 0) this.#wakeWriter();
  }

  write(): Promise<void> {
    if (!this.#writer && this.#readers === 0) {
      this.#writer = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#waitingWriters.push(() => {
        this.#writer = true;
        resolve();
      });
    });
  }

  releaseWrite(): void {
    this.#writer = false;
    // Readers that queued behind this writer go first, then the next writer.
    if (this.#waitingReaders.length > 0) {
      const readers = this.#waitingReaders;
      this.#waitingReaders = [];
      for (const wake of readers) wake();
      return;
    }
    this.#wakeWriter();
  }

  #wakeWriter(): void {
    if (this.#writer || this.#readers > 0) return;
    const next = this.#waitingWriters.shift();
    if (next !== undefined) next();
  }

  isWriteLocked(): boolean {
    return this.#writer;
  }
}
