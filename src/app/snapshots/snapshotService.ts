import type * as abci from "../../types/index.js";
import { EMPTY_BYTES } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import { type RestoreTarget, SnapshotRestorer } from "./snapshotRestorer.js";
import { type SnapshotEntry, SnapshotStore } from "./snapshotStore.js";

/** What a built-in app gives the snapshot service: its state's entries, and how to restore into it. */
export interface SnapshotSource extends RestoreTarget {
  /** Every entry of the committed state, read in one consistent view right after Commit. */
  entries(): Iterable<SnapshotEntry>;
}

/** app.toml [state-sync] snapshot-interval and snapshot-keep-recent; chunkBytes for tests. */
export interface SnapshotSettings {
  interval: number;
  keepRecent: number;
  chunkBytes?: number;
}

/**
 * The state sync side of a built-in app (the kvstore and EVM apps): takes a snapshot after each
 * Commit whose height is a multiple of snapshot-interval, keeps snapshot-keep-recent of them in
 * `dir`, and answers the four snapshot ABCI methods (ListSnapshots, LoadSnapshotChunk, OfferSnapshot,
 * ApplySnapshotChunk). Without settings (or a directory) it takes and serves none, and still restores.
 */
export class SnapshotService {
  readonly #source: SnapshotSource;
  readonly #store: SnapshotStore | undefined;
  readonly #restorer: SnapshotRestorer;
  readonly #log: Logger;

  constructor(source: SnapshotSource, opts: { dir: string | undefined; log: Logger; settings?: SnapshotSettings }) {
    this.#source = source;
    this.#log = opts.log;
    this.#store =
      opts.settings === undefined || opts.dir === undefined
        ? undefined
        : new SnapshotStore({ ...opts.settings, dir: opts.dir, log: opts.log });
    this.#restorer = new SnapshotRestorer(source, opts.log);
  }

  /** After a Commit at `height`: a snapshot when the height is due. */
  afterCommit(height: number, appHash: Uint8Array): void {
    if (this.#store === undefined || !this.#store.due(height)) return;
    try {
      this.#store.take(height, appHash, this.#source.entries());
    } catch (err) {
      // A snapshot that cannot be written (disk full) must not stop the chain: the next one may work.
      this.#log.error({ height, err: (err as Error).message }, "failed to take a state sync snapshot");
    }
  }

  async listSnapshots(): Promise<abci.Snapshot[]> {
    return this.#store?.list() ?? [];
  }

  async loadSnapshotChunk(req: abci.LoadSnapshotChunkRequest): Promise<Uint8Array> {
    return this.#store?.loadChunk(req.height, req.format, req.chunk) ?? EMPTY_BYTES;
  }

  offerSnapshot(req: abci.OfferSnapshotRequest): Promise<abci.OfferSnapshotResult> {
    return this.#restorer.offer(req);
  }

  applySnapshotChunk(req: abci.ApplySnapshotChunkRequest): Promise<abci.ApplySnapshotChunkResponse> {
    return this.#restorer.apply(req);
  }
}
