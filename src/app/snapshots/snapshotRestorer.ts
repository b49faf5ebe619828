import type {
  ApplySnapshotChunkRequest,
  ApplySnapshotChunkResponse,
  OfferSnapshotRequest,
  OfferSnapshotResult,
  Snapshot,
} from "../../types/index.js";
import { bytesEqual, bytesToHex } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import { decodeChunk, decodeSnapshotMetadata, SNAPSHOT_FORMAT, type SnapshotEntry, sha256 } from "./snapshotStore.js";

/** What an app does while a snapshot is restored into it. */
export interface RestoreTarget {
  /** Empties the app's state (before the first chunk, and after a restore that failed its check). */
  clear(): Promise<void>;
  /** Writes one chunk's entries; durable when the promise resolves. */
  write(entries: readonly SnapshotEntry[]): Promise<void>;
  /** After the last chunk: reloads the app from what was written; its height and app hash now. */
  finish(): Promise<{ height: number; appHash: Uint8Array }>;
}

interface Restore {
  snapshot: Snapshot;
  appHash: Uint8Array;
  chunkHashes: readonly Uint8Array[];
  next: number;
}

const accept = (): ApplySnapshotChunkResponse => ({ result: "accept", refetchChunks: [], rejectSenders: [] });

/**
 * The app's side of OfferSnapshot and ApplySnapshotChunk for format-1 snapshots: the offer is
 * accepted when its metadata hashes to the snapshot's hash and claims the light-client-verified app
 * hash; each chunk must hash to its entry in the metadata (else it is fetched again, from another
 * peer: its sender is rejected); after the last one the app's own height and app hash must be the
 * snapshot's, or the snapshot is rejected.
 */
export class SnapshotRestorer {
  readonly #target: RestoreTarget;
  readonly #log: Logger;
  #restore: Restore | undefined;

  constructor(target: RestoreTarget, log: Logger) {
    this.#target = target;
    this.#log = log;
  }

  async offer(req: OfferSnapshotRequest): Promise<OfferSnapshotResult> {
    const s = req.snapshot;
    this.#restore = undefined;
    if (s.format !== SNAPSHOT_FORMAT) return "rejectFormat";
    let meta: ReturnType<typeof decodeSnapshotMetadata>;
    try {
      meta = decodeSnapshotMetadata(s.metadata);
    } catch (err) {
      this.#log.info({ height: s.height, err: (err as Error).message }, "refusing a snapshot with bad metadata");
      return "reject";
    }
    const problem = !bytesEqual(sha256(s.metadata), s.hash)
      ? "its hash is not the sha256 of its metadata"
      : meta.chunkHashes.length !== s.chunks
        ? `it has ${s.chunks} chunks but its metadata lists ${meta.chunkHashes.length}`
        : !bytesEqual(meta.appHash, req.appHash)
          ? `its app hash ${bytesToHex(meta.appHash)} is not the verified ${bytesToHex(req.appHash)}`
          : undefined;
    if (problem !== undefined) {
      this.#log.info({ height: s.height }, `refusing a snapshot: ${problem}`);
      return "reject";
    }
    await this.#target.clear();
    this.#restore = { snapshot: s, appHash: req.appHash, chunkHashes: meta.chunkHashes, next: 0 };
    return "accept";
  }

  async apply(req: ApplySnapshotChunkRequest): Promise<ApplySnapshotChunkResponse> {
    const r = this.#restore;
    if (r === undefined) {
      this.#log.error({ index: req.index }, "a snapshot chunk arrived with no snapshot being restored");
      return { result: "abort", refetchChunks: [], rejectSenders: [] };
    }
    if (req.index !== r.next) {
      // The node applies chunks in order; another index means it restarted the snapshot.
      return { result: "retrySnapshot", refetchChunks: [], rejectSenders: [] };
    }
    const expected = r.chunkHashes[req.index] as Uint8Array;
    let entries: SnapshotEntry[] | undefined;
    if (bytesEqual(sha256(req.chunk), expected)) {
      try {
        entries = decodeChunk(req.chunk);
      } catch {
        entries = undefined;
      }
    }
    if (entries === undefined) {
      this.#log.info(
        { height: r.snapshot.height, index: req.index, sender: req.sender },
        "snapshot chunk does not match its hash in the metadata: fetching it again from another peer",
      );
      return { result: "retry", refetchChunks: [req.index], rejectSenders: req.sender === "" ? [] : [req.sender] };
    }
    await this.#target.write(entries);
    r.next++;
    if (r.next < r.chunkHashes.length) return accept();
    this.#restore = undefined;
    const got = await this.#target.finish();
    if (got.height !== r.snapshot.height || !bytesEqual(got.appHash, r.appHash)) {
      this.#log.error(
        { height: got.height, appHash: bytesToHex(got.appHash), want: bytesToHex(r.appHash) },
        "restored state does not match the snapshot: rejecting it",
      );
      await this.#target.clear();
      await this.#target.finish();
      return { result: "rejectSnapshot", refetchChunks: [], rejectSenders: [] };
    }
    this.#log.info({ height: got.height, appHash: bytesToHex(got.appHash) }, "snapshot restored");
    return accept();
  }
}
