import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Snapshot } from "../types/index.js";
import { StatesyncError } from "./errors.js";

/** One chunk as a peer sent it. */
export interface Chunk {
  readonly height: number;
  readonly format: number;
  readonly index: number;
  readonly chunk: Uint8Array;
  readonly sender: string;
}

/** No chunk came for `chunkTimeoutMs` while the restore waited for it (CometBFT errTimeout). */
export class ChunkTimeoutError extends StatesyncError {}

/**
 * The chunks of the snapshot being restored (CometBFT statesync/chunks.go chunkQueue): kept as files
 * in a temporary directory under `temp_dir` until applied; fetchers allocate indexes to fetch, the
 * restore takes them in order with next(). A discarded chunk can be allocated and fetched again; a
 * retried one is applied again without fetching.
 */
export class ChunkQueue {
  readonly #snapshot: Snapshot;
  readonly #dir: string;
  readonly #files = new Map<number, string>();
  readonly #senders = new Map<number, string>();
  readonly #allocated = new Set<number>();
  readonly #returned = new Set<number>();
  readonly #waiters = new Map<number, (() => void)[]>();
  #closed = false;

  constructor(snapshot: Snapshot, tempDir: string) {
    this.#snapshot = snapshot;
    this.#dir = mkdtempSync(join(tempDir === "" ? tmpdir() : tempDir, "tm-statesync"));
  }

  /** Adds a chunk; false when it is not for this snapshot, already held, or the queue is closed. */
  add(c: Chunk): boolean {
    const s = this.#snapshot;
    if (this.#closed || c.height !== s.height || c.format !== s.format || c.index < 0 || c.index >= s.chunks) {
      return false;
    }
    if (this.#files.has(c.index)) return false;
    const file = join(this.#dir, String(c.index));
    writeFileSync(file, c.chunk);
    this.#files.set(c.index, file);
    this.#senders.set(c.index, c.sender);
    const waiters = this.#waiters.get(c.index) ?? [];
    this.#waiters.delete(c.index);
    for (const w of waiters) w();
    return true;
  }

  /** The next index no fetcher has, or undefined when every chunk is allocated. */
  allocate(): number | undefined {
    for (let i = 0; i < this.#snapshot.chunks; i++) {
      if (!this.#allocated.has(i)) {
        this.#allocated.add(i);
        return i;
      }
    }
    return undefined;
  }

  has(index: number): boolean {
    return this.#files.has(index);
  }

  /** Resolves when chunk `index` is in the queue (or the queue closes). */
  waitFor(index: number): Promise<void> {
    if (this.#closed || this.#files.has(index)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.#waiters.get(index) ?? [];
      list.push(resolve);
      this.#waiters.set(index, list);
    });
  }

  /**
   * The next chunk to apply, in index order; undefined when all have been returned. Waits up to
   * `timeoutMs` for it, then throws ChunkTimeoutError.
   */
  async next(timeoutMs: number): Promise<Chunk | undefined> {
    let index = -1;
    for (let i = 0; i < this.#snapshot.chunks; i++) {
      if (!this.#returned.has(i)) {
        index = i;
        break;
      }
    }
    if (index < 0 || this.#closed) return undefined;
    if (!this.#files.has(index)) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        this.waitFor(index).then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (this.#closed) return undefined;
      if (timedOut || !this.#files.has(index)) {
        throw new ChunkTimeoutError(`timed out after ${timeoutMs} ms waiting for snapshot chunk ${index}`);
      }
    }
    this.#returned.add(index);
    const file = this.#files.get(index) as string;
    return {
      height: this.#snapshot.height,
      format: this.#snapshot.format,
      index,
      chunk: new Uint8Array(readFileSync(file)),
      sender: this.#senders.get(index) ?? "",
    };
  }

  /** Drops a chunk so that it is allocated and fetched again (nothing when it is not held). */
  discard(index: number): void {
    const file = this.#files.get(index);
    if (file === undefined) return;
    rmSync(file, { force: true });
    this.#files.delete(index);
    this.#senders.delete(index);
    this.#allocated.delete(index);
    this.#returned.delete(index);
  }

  /** Discards the chunks from `sender` that were not applied yet. */
  discardSender(sender: string): void {
    for (const [index, s] of [...this.#senders]) {
      if (s === sender && !this.#returned.has(index)) this.discard(index);
    }
  }

  /** Applies the chunk again at the next next(), without fetching it. */
  retry(index: number): void {
    this.#returned.delete(index);
  }

  retryAll(): void {
    this.#returned.clear();
  }

  /** The sender of a held chunk. */
  sender(index: number): string | undefined {
    return this.#senders.get(index);
  }

  isClosed(): boolean {
    return this.#closed;
  }

  /** Removes the temporary directory; waiters are released. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    rmSync(this.#dir, { recursive: true, force: true });
    for (const list of this.#waiters.values()) for (const w of list) w();
    this.#waiters.clear();
  }
}
