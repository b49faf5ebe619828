import { join } from "node:path";
import type {
  ApplySnapshotChunkRequest,
  ApplySnapshotChunkResponse,
  LoadSnapshotChunkRequest,
  OfferSnapshotRequest,
  OfferSnapshotResult,
  Snapshot,
} from "../../types/index.js";
import { EMPTY_BYTES } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import { SnapshotRestorer, SnapshotStore } from "../snapshots/index.js";
import type { AppMeta } from "./records.js";
import type { EvmStateDb } from "./stateDb.js";

/**
 * The EVM app's state sync snapshots (docs/state-sync.md): every snapshot-interval heights the
 * committed state (EvmStateDb.snapshotEntries: pointer, settings, accounts, storage, code, the last
 * 256 block records) is cut into chunks under `<dbDir>/snapshots`; a restore empties the database,
 * writes the chunks as they come and reloads the app from the restored pointer.
 *
 * The app hash chains each height's state diff (stateDb.ts), so it does not commit to the state as
 * a whole: what is checked is each chunk against the metadata's hash list, and the metadata against
 * the light-client-verified app hash (docs/compatibility.md, "state sync").
 */
export class EvmSnapshots {
  readonly #db: EvmStateDb;
  readonly #store: SnapshotStore | undefined;
  readonly #restorer: SnapshotRestorer;
  readonly #log: Logger;

  constructor(
    db: EvmStateDb,
    opts: { dbDir: string; log: Logger; snapshots?: { interval: number; keepRecent: number; chunkBytes?: number } },
    reload: () => void,
  ) {
    this.#db = db;
    this.#log = opts.log;
    this.#store =
      opts.snapshots === undefined
        ? undefined
        : new SnapshotStore({ ...opts.snapshots, dir: join(opts.dbDir, "snapshots"), log: opts.log });
    this.#restorer = new SnapshotRestorer(
      {
        clear: () => db.kv.transaction(() => db.clearForRestore()),
        write: (entries) => db.kv.transaction(() => db.restoreEntries(entries)),
        finish: async () => {
          const meta = await db.finishRestore();
          reload();
          return { height: meta?.height ?? 0, appHash: meta?.appHash ?? EMPTY_BYTES };
        },
      },
      opts.log,
    );
  }

  /** After each commit: a snapshot when the height is a multiple of snapshot-interval. */
  afterCommit(meta: AppMeta): void {
    if (this.#store === undefined || !this.#store.due(meta.height)) return;
    try {
      this.#store.take(meta.height, meta.appHash, this.#db.snapshotEntries());
    } catch (err) {
      // A snapshot that cannot be written (disk full) must not stop the chain: the next one may work.
      this.#log.error({ height: meta.height, err: (err as Error).message }, "failed to take a state sync snapshot");
    }
  }

  async list(): Promise<Snapshot[]> {
    return this.#store?.list() ?? [];
  }

  async loadChunk(req: LoadSnapshotChunkRequest): Promise<Uint8Array> {
    return this.#store?.loadChunk(req.height, req.format, req.chunk) ?? EMPTY_BYTES;
  }

  offer(req: OfferSnapshotRequest): Promise<OfferSnapshotResult> {
    return this.#restorer.offer(req);
  }

  apply(req: ApplySnapshotChunkRequest): Promise<ApplySnapshotChunkResponse> {
    return this.#restorer.apply(req);
  }
}
