import type { ChannelDescriptor, Peer, Reactor, ReactorSwitch } from "../p2p/index.js";
import type { ChainState, Commit, Snapshot } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import type { StateProvider } from "./stateProvider.js";
import { decodeStatesyncMessage, encodeStatesyncMessage, type StatesyncMessage } from "./statesyncCodec.js";
import { type StatesyncApp, Syncer, type SyncerOptions } from "./syncer.js";

/** statesync.SnapshotChannel and ChunkChannel. */
export const SNAPSHOT_CHANNEL = 0x60;
export const CHUNK_CHANNEL = 0x61;
/** recentSnapshots: how many snapshots a peer is told about. */
const RECENT_SNAPSHOTS = 10;
/** snapshotMsgSize and chunkMsgSize. */
const SNAPSHOT_MSG_BYTES = 4_000_000;
const CHUNK_MSG_BYTES = 16_000_000;

/**
 * The state sync reactor (CometBFT statesync/reactor.go) on channels 0x60 (snapshots) and 0x61
 * (chunks): always serves the app's recent snapshots and their chunks to peers; while `sync` runs,
 * asks every peer for its snapshots and hands what comes back to the syncer.
 */
export class StatesyncReactor implements Reactor {
  readonly name = "STATESYNC";
  readonly #app: StatesyncApp;
  readonly #log: Logger;
  #sw: ReactorSwitch | undefined;
  #syncer: Syncer | undefined;

  constructor(app: StatesyncApp, log: Logger) {
    this.#app = app;
    this.#log = log;
  }

  channels(): readonly ChannelDescriptor[] {
    return [
      {
        id: SNAPSHOT_CHANNEL,
        priority: 6,
        sendQueueCapacity: 10,
        recvMessageCapacity: SNAPSHOT_MSG_BYTES,
        name: "snapshot",
      },
      { id: CHUNK_CHANNEL, priority: 3, sendQueueCapacity: 4, recvMessageCapacity: CHUNK_MSG_BYTES, name: "chunk" },
    ];
  }

  start(sw: ReactorSwitch): void {
    this.#sw = sw;
  }

  stop(): void {
    this.#syncer?.stop();
  }

  /** True while a sync runs (RPC status catching_up). */
  isSyncing(): boolean {
    return this.#syncer !== undefined;
  }

  addPeer(peer: Peer): void {
    if (this.#syncer !== undefined) this.#send(peer, SNAPSHOT_CHANNEL, { kind: "snapshotsRequest" });
  }

  removePeer(peer: Peer, _reason: unknown): void {
    this.#syncer?.removePeer(peer.id);
  }

  receive(channelId: number, peer: Peer, bytes: Uint8Array): void {
    if (channelId !== SNAPSHOT_CHANNEL && channelId !== CHUNK_CHANNEL) return;
    // Throws InvalidStatesyncMessageError: the switch stops the peer (validateMsg failure).
    const msg = decodeStatesyncMessage(bytes);
    switch (msg.kind) {
      case "snapshotsRequest":
        void this.#serveSnapshots(peer);
        return;
      case "snapshotsResponse":
        if (this.#syncer === undefined) {
          this.#log.debug({ peer: peer.id }, "Received unexpected snapshot, no state sync in progress");
          return;
        }
        this.#syncer.addSnapshot(peer.id, {
          height: msg.height,
          format: msg.format,
          chunks: msg.chunks,
          hash: msg.hash,
          metadata: msg.metadata,
        });
        return;
      case "chunkRequest":
        void this.#serveChunk(peer, msg.height, msg.format, msg.index);
        return;
      case "chunkResponse":
        if (this.#syncer === undefined) {
          this.#log.debug({ peer: peer.id }, "Received unexpected chunk, no state sync in progress");
          return;
        }
        // A peer without the chunk says so: the fetcher asks another one after chunk_request_timeout.
        if (msg.missing) return;
        this.#syncer.addChunk({
          height: msg.height,
          format: msg.format,
          index: msg.index,
          chunk: msg.chunk,
          sender: peer.id,
        });
        return;
    }
  }

  /**
   * Runs state sync to the end (Reactor.Sync): snapshots are asked of every peer now and again each
   * discovery round. Resolves with the verified state and commit at the restored height; rejects
   * with NoSnapshotsError, StatesyncAbortError or a verification error.
   */
  async sync(
    provider: StateProvider,
    discoveryTimeMs: number,
    options: Partial<SyncerOptions> = {},
  ): Promise<{ state: ChainState; commit: Commit }> {
    const syncer = new Syncer({
      app: this.#app,
      provider,
      log: this.#log,
      options,
      requestChunk: (peerId, s, index) => {
        const peer = this.#sw?.peer(peerId);
        if (peer !== undefined)
          this.#send(peer, CHUNK_CHANNEL, { kind: "chunkRequest", height: s.height, format: s.format, index });
      },
    });
    this.#syncer = syncer;
    const requestSnapshots = () => {
      this.#log.debug("Requesting snapshots from known peers");
      this.#sw?.broadcast(SNAPSHOT_CHANNEL, encodeStatesyncMessage({ kind: "snapshotsRequest" }));
    };
    requestSnapshots();
    try {
      return await syncer.syncAny(discoveryTimeMs, requestSnapshots);
    } finally {
      this.#syncer = undefined;
    }
  }

  async #serveSnapshots(peer: Peer): Promise<void> {
    let snapshots: Snapshot[];
    try {
      snapshots = (await this.#app.listSnapshots?.()) ?? [];
    } catch (err) {
      this.#log.error({ err: (err as Error).message }, "Failed to fetch snapshots");
      return;
    }
    const recent = [...snapshots].sort((a, b) => b.height - a.height || b.format - a.format).slice(0, RECENT_SNAPSHOTS);
    for (const s of recent) {
      this.#log.debug({ height: s.height, format: s.format, peer: peer.id }, "Advertising snapshot");
      this.#send(peer, SNAPSHOT_CHANNEL, { kind: "snapshotsResponse", ...s });
    }
  }

  async #serveChunk(peer: Peer, height: number, format: number, index: number): Promise<void> {
    let chunk: Uint8Array;
    try {
      chunk = (await this.#app.loadSnapshotChunk?.({ height, format, chunk: index })) ?? new Uint8Array(0);
    } catch (err) {
      this.#log.error({ height, format, index, err: (err as Error).message }, "Failed to load chunk");
      return;
    }
    this.#log.debug({ height, format, index, peer: peer.id }, "Sending snapshot chunk");
    this.#send(peer, CHUNK_CHANNEL, {
      kind: "chunkResponse",
      height,
      format,
      index,
      chunk,
      missing: chunk.length === 0,
    });
  }

  #send(peer: Peer, channel: number, msg: StatesyncMessage): void {
    peer.send(channel, encodeStatesyncMessage(msg)).catch((err: unknown) => {
      this.#log.debug({ peer: peer.id, err: (err as Error).message }, "failed to send a statesync message");
    });
  }
}
