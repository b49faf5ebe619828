import type {
  ApplySnapshotChunkRequest,
  ApplySnapshotChunkResponse,
  ChainState,
  Commit,
  InfoResponse,
  OfferSnapshotRequest,
  OfferSnapshotResult,
  Snapshot,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import { type Chunk, ChunkQueue, ChunkTimeoutError } from "./chunkQueue.js";
import {
  LightClientError,
  NoSnapshotsError,
  StatesyncAbortError,
  StatesyncError,
  StatesyncVerifyError,
} from "./errors.js";
import { type PoolSnapshot, SnapshotPool } from "./snapshotPool.js";
import type { StateProvider } from "./stateProvider.js";

/** What state sync asks of the application (its snapshot connection and Info). */
export interface StatesyncApp {
  info(): Promise<InfoResponse>;
  listSnapshots?(): Promise<Snapshot[]>;
  loadSnapshotChunk?(req: { height: number; format: number; chunk: number }): Promise<Uint8Array>;
  offerSnapshot?(req: OfferSnapshotRequest): Promise<OfferSnapshotResult>;
  applySnapshotChunk?(req: ApplySnapshotChunkRequest): Promise<ApplySnapshotChunkResponse>;
}

export interface SyncerOptions {
  /** `[statesync] temp_dir` ("" = the OS temp dir). */
  tempDir: string;
  /** `[statesync] chunk_fetchers`. */
  chunkFetchers: number;
  /** `[statesync] chunk_request_timeout`: ask another peer when a chunk has not come by then. */
  chunkRequestTimeoutMs: number;
  /** How long the restore waits for the next chunk before rejecting the snapshot (CometBFT chunkTimeout: 2 min). */
  chunkTimeoutMs: number;
  /**
   * Discovery rounds that found no snapshot at all before giving up (cometh: CometBFT retries
   * forever; the node then falls back to block sync, docs/state-sync.md). 0 = retry forever.
   */
  maxEmptyDiscoveries: number;
  /** How long the light client may take for the app hash, the state and the commit (CometBFT: 30 s). */
  lightClientTimeoutMs: number;
}

export function defaultSyncerOptions(): SyncerOptions {
  return {
    tempDir: "",
    chunkFetchers: 4,
    chunkRequestTimeoutMs: 10_000,
    chunkTimeoutMs: 120_000,
    maxEmptyDiscoveries: 3,
    lightClientTimeoutMs: 30_000,
  };
}

/** How a restore attempt of one snapshot ended, other than success (statesync/syncer.go's errors). */
class RetrySnapshot extends StatesyncError {}
class RejectSnapshot extends StatesyncError {}
class RejectFormat extends StatesyncError {}
class RejectSender extends StatesyncError {}

/**
 * The state sync syncer (CometBFT statesync/syncer.go): picks the best snapshot in the pool,
 * verifies its app hash with the light client, offers it to the app, fetches its chunks with
 * `chunk_fetchers` fetchers (each chunk asked of a random peer that has the snapshot, again of
 * another after chunk_request_timeout), applies them in order as the app says (refetch, reject
 * senders, retry, retry or reject the snapshot, abort), then checks the app's height, app hash and
 * app version against the verified ones and returns the state and commit at the snapshot height.
 */
export class Syncer {
  readonly pool = new SnapshotPool();
  readonly #app: StatesyncApp;
  readonly #provider: StateProvider;
  readonly #opts: SyncerOptions;
  readonly #log: Logger;
  readonly #requestChunk: (peerId: string, s: Snapshot, index: number) => void;
  #queue: ChunkQueue | undefined;
  #stopped = false;
  readonly #stopWaiters: (() => void)[] = [];

  constructor(deps: {
    app: StatesyncApp;
    provider: StateProvider;
    log: Logger;
    requestChunk: (peerId: string, s: Snapshot, index: number) => void;
    options?: Partial<SyncerOptions>;
  }) {
    this.#app = deps.app;
    this.#provider = deps.provider;
    this.#log = deps.log;
    this.#requestChunk = deps.requestChunk;
    this.#opts = { ...defaultSyncerOptions(), ...deps.options };
  }

  addSnapshot(peerId: string, s: Snapshot): boolean {
    const added = this.pool.add(peerId, s);
    if (added) {
      this.#log.info(
        { height: s.height, format: s.format, hash: bytesToHexUpper(s.hash), peer: peerId },
        "Discovered new snapshot",
      );
    }
    return added;
  }

  addChunk(c: Chunk): boolean {
    const added = this.#queue?.add(c) ?? false;
    if (added) this.#log.debug({ height: c.height, index: c.index, peer: c.sender }, "Added chunk to queue");
    else
      this.#log.debug({ height: c.height, index: c.index, peer: c.sender }, "Ignoring duplicate or unexpected chunk");
    return added;
  }

  removePeer(peerId: string): void {
    this.pool.removePeer(peerId);
  }

  /** Ends syncAny's waits (the node is stopping). */
  stop(): void {
    this.#stopped = true;
    this.#queue?.close();
    for (const w of this.#stopWaiters.splice(0)) w();
  }

  /**
   * SyncAny: waits `discoveryTimeMs`, then restores the best snapshot, trying the next one when a
   * snapshot fails; asks peers again (`rediscover`) when the pool is empty. Throws NoSnapshotsError
   * after maxEmptyDiscoveries rounds without any snapshot (at once with discovery time 0), and
   * StatesyncAbortError when the app or the light client aborts.
   */
  async syncAny(discoveryTimeMs: number, rediscover: () => void): Promise<{ state: ChainState; commit: Commit }> {
    if (discoveryTimeMs > 0) {
      this.#log.info({ discoveryTimeMs }, "Discovering snapshots");
      await this.#sleep(discoveryTimeMs);
    }
    let emptyRounds = 0;
    let snapshot: PoolSnapshot | undefined;
    let queue: ChunkQueue | undefined;
    try {
      for (;;) {
        if (this.#stopped) throw new StatesyncAbortError("state sync stopped");
        if (snapshot === undefined) {
          snapshot = this.pool.best();
          queue?.close();
          queue = undefined;
        }
        if (snapshot === undefined) {
          emptyRounds++;
          if (
            discoveryTimeMs === 0 ||
            (this.#opts.maxEmptyDiscoveries > 0 && emptyRounds >= this.#opts.maxEmptyDiscoveries)
          ) {
            throw new NoSnapshotsError(
              `no peer offered a snapshot the app accepts after ${emptyRounds} discovery round(s) of ${discoveryTimeMs} ms`,
            );
          }
          this.#log.info(
            { discoveryTimeMs, round: emptyRounds },
            "No snapshots found yet; discovering snapshots again",
          );
          rediscover();
          await this.#sleep(discoveryTimeMs);
          continue;
        }
        queue ??= new ChunkQueue(snapshot, this.#opts.tempDir);
        try {
          return await this.#sync(snapshot, queue);
        } catch (err) {
          if (err instanceof RetrySnapshot) {
            queue.retryAll();
            this.#log.info({ height: snapshot.height, format: snapshot.format }, "Retrying snapshot");
            continue;
          }
          if (err instanceof ChunkTimeoutError) {
            this.pool.reject(snapshot);
            this.#log.error(
              { height: snapshot.height, err: err.message },
              "Timed out waiting for snapshot chunks, rejected snapshot",
            );
          } else if (err instanceof RejectSnapshot) {
            this.pool.reject(snapshot);
            this.#log.info({ height: snapshot.height, reason: err.message }, "Snapshot rejected");
          } else if (err instanceof RejectFormat) {
            this.pool.rejectFormat(snapshot.format);
            this.#log.info({ format: snapshot.format }, "Snapshot format rejected");
          } else if (err instanceof RejectSender) {
            for (const peer of this.pool.peersOf(snapshot)) this.pool.rejectPeer(peer);
            this.#log.info({ height: snapshot.height }, "Snapshot senders rejected");
          } else {
            throw err;
          }
          queue.close();
          queue = undefined;
          snapshot = undefined;
        }
      }
    } finally {
      queue?.close();
    }
  }

  /** Sync: restores one snapshot. */
  async #sync(snapshot: PoolSnapshot, queue: ChunkQueue): Promise<{ state: ChainState; commit: Commit }> {
    this.#queue = queue;
    const fetching = new AbortController();
    try {
      const appHash = await this.#verified(
        () => this.#provider.appHash(snapshot.height),
        "fetch and verify the app hash",
      );
      await this.#offer(snapshot, appHash);
      for (let i = 0; i < this.#opts.chunkFetchers; i++) void this.#fetchChunks(snapshot, queue, fetching.signal);
      // Build the state first, so a light client failure shows before the restore, not after.
      const state = await this.#verified(() => this.#provider.state(snapshot.height), "build the state");
      const commit = await this.#verified(() => this.#provider.commit(snapshot.height), "fetch the commit");
      await this.#applyChunks(queue);
      await this.#verifyApp(snapshot, appHash, state.appVersion);
      this.#log.info(
        { height: snapshot.height, format: snapshot.format, hash: bytesToHexUpper(snapshot.hash) },
        "Snapshot restored",
      );
      return { state, commit };
    } finally {
      fetching.abort();
      this.#queue = undefined;
    }
  }

  async #verified<T>(run: () => Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        run(),
        new Promise<T>((_, reject) => {
          timer = setTimeout(
            () => reject(new LightClientError(`timed out after ${this.#opts.lightClientTimeoutMs} ms`)),
            this.#opts.lightClientTimeoutMs,
          );
        }),
      ]);
    } catch (err) {
      this.#log.info({ err: (err as Error).message }, `failed to ${what}`);
      if (err instanceof LightClientError && /no witnesses/.test(err.message)) {
        throw new StatesyncAbortError(`light client: ${err.message}`, { cause: err });
      }
      throw new RejectSnapshot(`light client could not ${what}: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  async #offer(s: PoolSnapshot, appHash: Uint8Array): Promise<void> {
    if (this.#app.offerSnapshot === undefined) {
      throw new StatesyncAbortError("the application does not implement OfferSnapshot: it cannot be state synced");
    }
    this.#log.info(
      { height: s.height, format: s.format, hash: bytesToHexUpper(s.hash) },
      "Offering snapshot to ABCI app",
    );
    const snapshot: Snapshot = {
      height: s.height,
      format: s.format,
      chunks: s.chunks,
      hash: s.hash,
      metadata: s.metadata,
    };
    const result = await this.#app.offerSnapshot({ snapshot, appHash });
    switch (result) {
      case "accept":
        this.#log.info({ height: s.height, format: s.format }, "Snapshot accepted, restoring");
        return;
      case "abort":
        throw new StatesyncAbortError("the application aborted state sync (OfferSnapshot ABORT)");
      case "reject":
        throw new RejectSnapshot("the application rejected the snapshot");
      case "rejectFormat":
        throw new RejectFormat(`the application rejected format ${s.format}`);
      case "rejectSender":
        throw new RejectSender("the application rejected the snapshot's senders");
    }
  }

  async #applyChunks(queue: ChunkQueue): Promise<void> {
    const apply = this.#app.applySnapshotChunk;
    if (apply === undefined) throw new StatesyncAbortError("the application does not implement ApplySnapshotChunk");
    for (;;) {
      const chunk = await queue.next(this.#opts.chunkTimeoutMs);
      if (chunk === undefined) {
        if (this.#stopped) throw new StatesyncAbortError("state sync stopped");
        return;
      }
      const res = await apply.call(this.#app, { index: chunk.index, chunk: chunk.chunk, sender: chunk.sender });
      this.#log.info(
        { height: chunk.height, index: chunk.index, result: res.result },
        "Applied snapshot chunk to ABCI app",
      );
      for (const index of res.refetchChunks) queue.discard(index);
      for (const sender of res.rejectSenders) {
        if (sender === "") continue;
        this.pool.rejectPeer(sender);
        queue.discardSender(sender);
        this.#log.info({ peer: sender }, "Rejected snapshot chunk sender");
      }
      switch (res.result) {
        case "accept":
          break;
        case "abort":
          throw new StatesyncAbortError("the application aborted state sync (ApplySnapshotChunk ABORT)");
        case "retry":
          queue.retry(chunk.index);
          break;
        case "retrySnapshot":
          throw new RetrySnapshot("the application asked to retry the snapshot");
        case "rejectSnapshot":
          throw new RejectSnapshot("the application rejected the snapshot while applying chunks");
      }
    }
  }

  /** fetchChunks: one fetcher; a chunk not in by chunk_request_timeout is asked for again (of a random peer). */
  async #fetchChunks(s: PoolSnapshot, queue: ChunkQueue, signal: AbortSignal): Promise<void> {
    let index: number | undefined;
    let next = true;
    while (!signal.aborted && !queue.isClosed()) {
      if (next) {
        index = queue.allocate();
        if (index === undefined) {
          // Every chunk is allocated: keep looking until the restore ends, in case some are refetched.
          await this.#wait(1000, signal).done;
          continue;
        }
      }
      if (index === undefined) continue;
      const peer = this.pool.randomPeer(s);
      if (peer === undefined) {
        this.#log.error({ height: s.height }, "No valid peers found for snapshot");
      } else {
        this.#log.debug({ height: s.height, index, peer }, "Fetching snapshot chunk");
        this.#requestChunk(peer, s, index);
      }
      const timeout = this.#wait(this.#opts.chunkRequestTimeoutMs, signal);
      const arrived = await Promise.race([queue.waitFor(index).then(() => true), timeout.done.then(() => false)]);
      timeout.cancel();
      next = arrived && queue.has(index);
    }
  }

  async #verifyApp(s: PoolSnapshot, appHash: Uint8Array, appVersion: bigint): Promise<void> {
    const info = await this.#app.info();
    if (info.appVersion !== appVersion) {
      throw new StatesyncVerifyError(`app version mismatch. Expected: ${appVersion}, got: ${info.appVersion}`);
    }
    if (!bytesEqual(info.lastBlockAppHash, appHash)) {
      throw new StatesyncVerifyError(
        `app hash mismatch after restore: expected ${bytesToHexUpper(appHash)}, got ${bytesToHexUpper(info.lastBlockAppHash)}`,
      );
    }
    if (info.lastBlockHeight !== s.height) {
      throw new StatesyncVerifyError(
        `app height mismatch after restore: expected ${s.height}, got ${info.lastBlockHeight}`,
      );
    }
    this.#log.info({ height: s.height, appHash: bytesToHexUpper(appHash) }, "Verified ABCI app");
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#stopWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Resolves `done` after `ms`, on abort, or on cancel() (which also drops the timer and the listener). */
  #wait(ms: number, signal: AbortSignal): { done: Promise<void>; cancel: () => void } {
    let cancel = () => {};
    const done = new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      signal.addEventListener("abort", finish);
      cancel = finish;
    });
    return { done, cancel };
  }
}
