import { Worker } from "node:worker_threads";

/**
 * Sender recovery on a worker thread. CheckTx spends most of its time recovering the signer of a tx
 * (the signing hash, libsecp256k1's public key recovery, the key's hash: ~110 µs of ~160 µs per
 * transfer on this machine), and the main thread also runs consensus, block execution and both RPC
 * servers. Requests made in one turn of the event loop go to the worker as one message; answers come
 * back in the same order, so txs are admitted in the order they arrived.
 *
 * The worker's answer is an optimisation only: `undefined` (the worker could not recover the tx, or
 * is gone) means "decode it yourself", and the caller's own decoding words any error. When the
 * worker cannot start, every request answers undefined.
 */

export interface RecoveredSender {
  /** keccak256 of the raw signed tx (the Ethereum tx hash). */
  readonly hash: Uint8Array;
  /** The 20-byte signer address. */
  readonly from: Uint8Array;
}

type Answer = { hash: Uint8Array; from: Uint8Array } | { error: string };

interface Batch {
  readonly resolvers: ((r: RecoveredSender | undefined) => void)[];
}

export class SenderRecovery {
  #worker: Worker | undefined;
  readonly #inFlight = new Map<number, Batch>();
  #nextId = 1;
  #queued: Uint8Array[] = [];
  #queuedResolvers: ((r: RecoveredSender | undefined) => void)[] = [];
  #flushScheduled = false;
  #closed = false;

  constructor() {
    try {
      const worker = new Worker(new URL("./senderWorker.mjs", import.meta.url));
      worker.unref();
      worker.on("message", (msg: { id: number; results: Answer[] }) => this.#answered(msg));
      worker.on("error", () => this.#gone());
      worker.on("exit", () => this.#gone());
      this.#worker = worker;
    } catch {
      this.#worker = undefined;
    }
  }

  /** Whether requests go to a worker (false once it failed or was closed). */
  get available(): boolean {
    return this.#worker !== undefined;
  }

  /** The tx's hash and sender, or undefined when the caller must recover it itself. */
  recover(raw: Uint8Array): Promise<RecoveredSender | undefined> {
    if (this.#worker === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#queued.push(raw);
      this.#queuedResolvers.push(resolve);
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        queueMicrotask(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushScheduled = false;
    const raws = this.#queued;
    const resolvers = this.#queuedResolvers;
    this.#queued = [];
    this.#queuedResolvers = [];
    if (raws.length === 0) return;
    const worker = this.#worker;
    if (worker === undefined) {
      for (const r of resolvers) r(undefined);
      return;
    }
    const id = this.#nextId++;
    this.#inFlight.set(id, { resolvers });
    if (this.#inFlight.size === 1) worker.ref();
    worker.postMessage({ id, raws });
  }

  #answered(msg: { id: number; results: Answer[] }): void {
    const batch = this.#inFlight.get(msg.id);
    if (batch === undefined) return;
    this.#inFlight.delete(msg.id);
    if (this.#inFlight.size === 0) this.#worker?.unref();
    batch.resolvers.forEach((resolve, i) => {
      const a = msg.results[i];
      resolve(a === undefined || "error" in a ? undefined : { hash: a.hash, from: a.from });
    });
  }

  /** The worker failed or exited: whatever it still owed is recovered by the callers themselves. */
  #gone(): void {
    this.#worker = undefined;
    for (const batch of this.#inFlight.values()) for (const r of batch.resolvers) r(undefined);
    this.#inFlight.clear();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const worker = this.#worker;
    this.#gone();
    if (worker !== undefined) await worker.terminate();
  }
}
