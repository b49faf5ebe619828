import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Snapshot } from "../../types/index.js";
import { bytesToHex, hexToBytes, utf8ToBytes } from "../../util/bytes.js";
import type { Logger } from "../../util/logger.js";
import { SnapshotFormatError } from "./errors.js";

/**
 * The built-in apps' state sync snapshots (docs/state-sync.md, "snapshot format"): the app's
 * key-value entries at one height, cut into chunks of about `chunkBytes`, each chunk's sha256
 * listed in the snapshot's metadata, the snapshot's hash the sha256 of that metadata. Kept as files,
 * one directory per height under the app's `snapshots/` directory, as the Cosmos SDK keeps them
 * under `data/snapshots`.
 */

/** sha256, the hash of chunks and of the metadata. */
export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

/** The only format these apps write and restore. */
export const SNAPSHOT_FORMAT = 1;
/** Default chunk size: well under the chunk channel's 16 MB message limit. */
export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;

/** One key-value entry of an app's state. */
export interface SnapshotEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** The metadata of a format-1 snapshot: the app hash it claims and its chunks' hashes. */
export interface SnapshotMetadata {
  readonly appHash: Uint8Array;
  readonly chunkHashes: readonly Uint8Array[];
}

export function encodeSnapshotMetadata(m: SnapshotMetadata): Uint8Array {
  return utf8ToBytes(
    JSON.stringify({
      format: SNAPSHOT_FORMAT,
      app_hash: bytesToHex(m.appHash),
      chunk_hashes: m.chunkHashes.map((h) => bytesToHex(h)),
    }),
  );
}

/** Throws SnapshotFormatError when the bytes are not format-1 metadata. */
export function decodeSnapshotMetadata(bytes: Uint8Array): SnapshotMetadata {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch (err) {
    throw new SnapshotFormatError("metadata is not JSON", { cause: err });
  }
  const m = parsed as { format?: unknown; app_hash?: unknown; chunk_hashes?: unknown };
  const isHex = (x: unknown): x is string => typeof x === "string" && /^([0-9a-f]{2})*$/.test(x);
  if (m.format !== SNAPSHOT_FORMAT || !isHex(m.app_hash) || !Array.isArray(m.chunk_hashes)) {
    throw new SnapshotFormatError("metadata lacks format 1, app_hash or chunk_hashes");
  }
  const chunkHashes = m.chunk_hashes.map((h) => {
    if (!isHex(h) || h.length !== 64) throw new SnapshotFormatError("a chunk hash is not 32 bytes of hex");
    return hexToBytes(h) as Uint8Array;
  });
  return { appHash: hexToBytes(m.app_hash) as Uint8Array, chunkHashes };
}

/** Entries → chunk bytes: each entry is u32be key length, key, u32be value length, value. */
export function encodeChunk(entries: readonly SnapshotEntry[]): Uint8Array {
  let size = 0;
  for (const e of entries) size += 8 + e.key.length + e.value.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const e of entries) {
    view.setUint32(at, e.key.length);
    out.set(e.key, at + 4);
    at += 4 + e.key.length;
    view.setUint32(at, e.value.length);
    out.set(e.value, at + 4);
    at += 4 + e.value.length;
  }
  return out;
}

/** Chunk bytes → entries; throws SnapshotFormatError on a truncated chunk. */
export function decodeChunk(chunk: Uint8Array): SnapshotEntry[] {
  const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const out: SnapshotEntry[] = [];
  let at = 0;
  const take = (): Uint8Array => {
    if (at + 4 > chunk.length) throw new SnapshotFormatError(`chunk truncated at byte ${at}`);
    const len = view.getUint32(at);
    if (at + 4 + len > chunk.length) throw new SnapshotFormatError(`chunk truncated at byte ${at}`);
    const b = chunk.subarray(at + 4, at + 4 + len);
    at += 4 + len;
    return b;
  };
  while (at < chunk.length) {
    const key = take();
    const value = take();
    out.push({ key, value });
  }
  return out;
}

export interface SnapshotStoreOptions {
  /** Where snapshots live (created when missing). */
  dir: string;
  /** Take a snapshot every this many heights (app.toml [state-sync] snapshot-interval; 0 = never, but those on disk are served). */
  interval: number;
  /** Snapshots kept (snapshot-keep-recent; 0 = all). */
  keepRecent: number;
  chunkBytes?: number;
  log: Logger;
}

/** An app's snapshots on disk: taking, listing, serving chunks, pruning old ones. */
export class SnapshotStore {
  readonly #opts: SnapshotStoreOptions;
  readonly #chunkBytes: number;
  #cached: Snapshot[] | undefined;

  constructor(opts: SnapshotStoreOptions) {
    this.#opts = opts;
    this.#chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  }

  /** True when `height` is one the app takes a snapshot at. */
  due(height: number): boolean {
    return this.#opts.interval > 0 && height > 0 && height % this.#opts.interval === 0;
  }

  /**
   * Writes the snapshot of `entries` (read synchronously, so from one consistent view of the
   * store) at `height`, then removes all but the newest keep-recent snapshots.
   */
  take(height: number, appHash: Uint8Array, entries: Iterable<SnapshotEntry>): Snapshot {
    const final = join(this.#opts.dir, String(height));
    const tmp = `${final}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const chunkHashes: Uint8Array[] = [];
    let batch: SnapshotEntry[] = [];
    let batchBytes = 0;
    const flush = () => {
      const chunk = encodeChunk(batch);
      writeFileSync(join(tmp, `chunk-${chunkHashes.length}`), chunk);
      chunkHashes.push(sha256(chunk));
      batch = [];
      batchBytes = 0;
    };
    for (const e of entries) {
      // Copy: LMDB hands out views that the next read may reuse.
      batch.push({ key: Uint8Array.from(e.key), value: Uint8Array.from(e.value) });
      batchBytes += 8 + e.key.length + e.value.length;
      if (batchBytes >= this.#chunkBytes) flush();
    }
    if (batch.length > 0 || chunkHashes.length === 0) flush();
    const metadata = encodeSnapshotMetadata({ appHash, chunkHashes });
    writeFileSync(join(tmp, "metadata.json"), metadata);
    rmSync(final, { recursive: true, force: true });
    renameSync(tmp, final);
    this.#cached = undefined;
    const snapshot: Snapshot = {
      height,
      format: SNAPSHOT_FORMAT,
      chunks: chunkHashes.length,
      hash: sha256(metadata),
      metadata,
    };
    this.#opts.log.info(
      { height, chunks: snapshot.chunks, hash: bytesToHex(snapshot.hash) },
      "state sync snapshot taken",
    );
    this.#prune();
    return snapshot;
  }

  /** The snapshots on disk, newest first. */
  list(): Snapshot[] {
    if (this.#cached !== undefined) return this.#cached;
    const out: Snapshot[] = [];
    for (const height of this.#heights()) {
      try {
        const metadata = new Uint8Array(readFileSync(join(this.#opts.dir, String(height), "metadata.json")));
        const m = decodeSnapshotMetadata(metadata);
        out.push({ height, format: SNAPSHOT_FORMAT, chunks: m.chunkHashes.length, hash: sha256(metadata), metadata });
      } catch (err) {
        this.#opts.log.error({ height, err: (err as Error).message }, "skipping an unreadable snapshot");
      }
    }
    this.#cached = out;
    return out;
  }

  /** A chunk's bytes, or undefined when this store does not have it. */
  loadChunk(height: number, format: number, index: number): Uint8Array | undefined {
    if (format !== SNAPSHOT_FORMAT || !Number.isSafeInteger(height) || !Number.isSafeInteger(index)) return undefined;
    const snapshot = this.list().find((s) => s.height === height);
    if (snapshot === undefined || index < 0 || index >= snapshot.chunks) return undefined;
    try {
      return new Uint8Array(readFileSync(join(this.#opts.dir, String(height), `chunk-${index}`)));
    } catch {
      return undefined;
    }
  }

  #heights(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.#opts.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => b - a);
  }

  #prune(): void {
    if (this.#opts.keepRecent <= 0) return;
    for (const height of this.#heights().slice(this.#opts.keepRecent)) {
      rmSync(join(this.#opts.dir, String(height)), { recursive: true, force: true });
      this.#opts.log.debug({ height }, "pruned state sync snapshot");
    }
    this.#cached = undefined;
  }
}
