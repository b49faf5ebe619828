import { createHash } from "node:crypto";
import type { Snapshot } from "../types/index.js";

/** A snapshot as peers offered it, with the app hash the light client verified for its height (set by the syncer). */
export interface PoolSnapshot extends Snapshot {
  /** sha256 over height, format, chunks, hash and metadata: one key per distinct snapshot (snapshot.Key). */
  readonly key: string;
}

export function poolSnapshot(s: Snapshot): PoolSnapshot {
  const h = createHash("sha256");
  const head = Buffer.alloc(16);
  head.writeBigUInt64BE(BigInt(s.height), 0);
  head.writeUInt32BE(s.format, 8);
  head.writeUInt32BE(s.chunks, 12);
  h.update(head).update(s.hash).update(s.metadata);
  return { ...s, key: h.digest("hex") };
}

/**
 * The snapshots peers have offered (CometBFT statesync/snapshots.go snapshotPool): who has which,
 * ranked best first by height, then format, then how many peers have it; snapshots, formats and
 * peers that failed are rejected and never offered again.
 */
export class SnapshotPool {
  readonly #snapshots = new Map<string, PoolSnapshot>();
  readonly #peers = new Map<string, Set<string>>();
  readonly #rejectedSnapshots = new Set<string>();
  readonly #rejectedFormats = new Set<number>();
  readonly #rejectedPeers = new Set<string>();
  readonly #random: () => number;

  constructor(random: () => number = Math.random) {
    this.#random = random;
  }

  /** Records that `peerId` has the snapshot; true when the snapshot is new to the pool. */
  add(peerId: string, s: Snapshot): boolean {
    const snap = poolSnapshot(s);
    if (this.#rejectedFormats.has(snap.format) || this.#rejectedPeers.has(peerId)) return false;
    if (this.#rejectedSnapshots.has(snap.key)) return false;
    let peers = this.#peers.get(snap.key);
    if (peers === undefined) {
      peers = new Set();
      this.#peers.set(snap.key, peers);
    }
    peers.add(peerId);
    if (this.#snapshots.has(snap.key)) return false;
    this.#snapshots.set(snap.key, snap);
    return true;
  }

  /** Best first: higher height, higher format, more peers. */
  ranked(): PoolSnapshot[] {
    return [...this.#snapshots.values()].sort(
      (a, b) =>
        b.height - a.height ||
        b.format - a.format ||
        (this.#peers.get(b.key)?.size ?? 0) - (this.#peers.get(a.key)?.size ?? 0),
    );
  }

  best(): PoolSnapshot | undefined {
    return this.ranked()[0];
  }

  /** The peers that have the snapshot, sorted by ID. */
  peersOf(s: PoolSnapshot): string[] {
    return [...(this.#peers.get(s.key) ?? [])].sort();
  }

  /** A random peer that has the snapshot (GetPeer), or undefined. */
  randomPeer(s: PoolSnapshot, except: ReadonlySet<string> = new Set()): string | undefined {
    const peers = this.peersOf(s).filter((p) => !except.has(p));
    if (peers.length === 0) return undefined;
    return peers[Math.floor(this.#random() * peers.length)];
  }

  reject(s: PoolSnapshot): void {
    this.#rejectedSnapshots.add(s.key);
    this.#remove(s.key);
  }

  rejectFormat(format: number): void {
    this.#rejectedFormats.add(format);
    for (const s of [...this.#snapshots.values()]) if (s.format === format) this.#remove(s.key);
  }

  rejectPeer(peerId: string): void {
    if (peerId === "") return;
    this.#rejectedPeers.add(peerId);
    this.removePeer(peerId);
  }

  /** The peer is gone: snapshots only it had leave the pool. */
  removePeer(peerId: string): void {
    for (const [key, peers] of this.#peers) {
      peers.delete(peerId);
      if (peers.size === 0) this.#remove(key);
    }
  }

  size(): number {
    return this.#snapshots.size;
  }

  #remove(key: string): void {
    this.#snapshots.delete(key);
    this.#peers.delete(key);
  }
}
