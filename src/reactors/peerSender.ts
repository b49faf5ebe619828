import type { Peer } from "../p2p/reactor.js";
import type { Logger } from "../util/logger.js";

/**
 * Ordered, non-blocking delivery to peers for reactors whose messages must not be lost. CometBFT's
 * gossip routines block in peer.Send until the channel's queue has room; reactors here cannot block
 * (receive and Gossip calls are synchronous), so a message that does not fit waits in a per-peer,
 * per-channel line and is handed to peer.send() in order. While a line exists, later messages join
 * it instead of overtaking it with trySend. A line is bounded: past `maxPending` messages new ones
 * are dropped (and logged), which only happens when a peer stops reading.
 */
export class PeerSender {
  readonly #log: Logger;
  readonly #maxPending: number;
  /**
   * Per peer connection (the object, so a reconnected peer with the same ID starts clean) and channel:
   * the messages waiting for peer.send, oldest first.
   */
  readonly #lines = new Map<Peer, Map<number, Uint8Array[]>>();

  constructor(log: Logger, opts: { maxPending?: number } = {}) {
    this.#log = log;
    this.#maxPending = opts.maxPending ?? 10_000;
  }

  /** Queues `msg`; false when it was dropped (peer stopped or its line is full). */
  send(peer: Peer, channelId: number, msg: Uint8Array): boolean {
    const line = this.#lines.get(peer)?.get(channelId);
    if (line !== undefined) {
      if (line.length >= this.#maxPending) {
        this.#log.debug({ peer: peer.id, channel: channelId }, "peer send line full; dropping message");
        return false;
      }
      line.push(msg);
      return true;
    }
    if (peer.trySend(channelId, msg)) return true;
    if (!peer.isRunning()) return false;
    const fresh = [msg];
    let byChannel = this.#lines.get(peer);
    if (byChannel === undefined) {
      byChannel = new Map();
      this.#lines.set(peer, byChannel);
    }
    byChannel.set(channelId, fresh);
    void this.#drain(peer, channelId, fresh);
    return true;
  }

  /** Messages waiting for `peer` on `channelId` (tests, metrics). */
  pending(peer: Peer, channelId: number): number {
    return this.#lines.get(peer)?.get(channelId)?.length ?? 0;
  }

  /** Drops everything waiting for a peer that left. */
  removePeer(peer: Peer): void {
    for (const line of this.#lines.get(peer)?.values() ?? []) line.length = 0;
    this.#lines.delete(peer);
  }

  /** Drops everything waiting (reactor stop). */
  clear(): void {
    for (const peer of [...this.#lines.keys()]) this.removePeer(peer);
  }

  async #drain(peer: Peer, channelId: number, line: Uint8Array[]): Promise<void> {
    try {
      while (line.length > 0) {
        const ok = await peer.send(channelId, line[0] as Uint8Array);
        // false: the peer stopped or does not serve the channel; nothing more will get through.
        if (!ok) break;
        line.shift();
      }
    } catch (err) {
      this.#log.error({ err, peer: peer.id, channel: channelId }, "peer send failed");
    } finally {
      const byChannel = this.#lines.get(peer);
      if (byChannel?.get(channelId) === line) {
        byChannel.delete(channelId);
        if (byChannel.size === 0) this.#lines.delete(peer);
      }
      line.length = 0;
    }
  }
}
