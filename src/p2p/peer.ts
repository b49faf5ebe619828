import type { PeerConnection } from "./conn/index.js";
import { normalizeHost } from "./netAddress.js";
import type { ConnectionStatus, NetAddress, NodeInfo, Peer } from "./reactor.js";
import type { PeerTraffic } from "./traffic.js";

/** How the switch came to know the peer. */
export interface PeerOrigin {
  readonly isOutbound: boolean;
  readonly isPersistent: boolean;
  /** The dialed address (outbound) or the peer's self-reported listen address (inbound). */
  readonly socketAddr: NetAddress;
}

/** A connected peer over an upgraded (secret, multiplexed) connection (p2p/peer.go). */
export class SwitchPeer implements Peer {
  readonly id: string;
  readonly nodeInfo: NodeInfo;
  readonly isOutbound: boolean;
  readonly isPersistent: boolean;
  readonly remoteHost: string;
  readonly remotePort: number;
  readonly socketAddr: NetAddress;
  readonly #conn: PeerConnection;
  readonly #data = new Map<string, unknown>();
  readonly #traffic: PeerTraffic | undefined;
  #running = true;

  constructor(conn: PeerConnection, origin: PeerOrigin, traffic?: PeerTraffic) {
    this.#conn = conn;
    this.#traffic = traffic;
    this.nodeInfo = conn.remoteNodeInfo;
    this.id = conn.remoteNodeInfo.id;
    this.remoteHost = normalizeHost(conn.remoteHost);
    this.remotePort = conn.remotePort;
    this.isOutbound = origin.isOutbound;
    this.isPersistent = origin.isPersistent;
    this.socketAddr = origin.socketAddr;
  }

  /** False when stopped or when the peer did not announce the channel (it would drop us for it). */
  send(channelId: number, msg: Uint8Array): Promise<boolean> {
    if (!this.#running || !this.hasChannel(channelId)) return Promise.resolve(false);
    const traffic = this.#traffic;
    if (traffic === undefined) return this.#conn.send(channelId, msg);
    return this.#conn.send(channelId, msg).then((ok) => {
      if (ok) traffic.sent(this.id, channelId, msg);
      return ok;
    });
  }

  trySend(channelId: number, msg: Uint8Array): boolean {
    if (!this.#running || !this.hasChannel(channelId)) return false;
    const ok = this.#conn.trySend(channelId, msg);
    if (ok) this.#traffic?.sent(this.id, channelId, msg);
    return ok;
  }

  /** Whether the peer's NodeInfo lists the channel (peer.hasChannel). */
  hasChannel(channelId: number): boolean {
    return this.nodeInfo.channels.includes(channelId);
  }

  isRunning(): boolean {
    return this.#running;
  }

  status(): ConnectionStatus {
    return this.#conn.status();
  }

  get(key: string): unknown {
    return this.#data.get(key);
  }

  set(key: string, value: unknown): void {
    this.#data.set(key, value);
  }

  /** Closes the connection; idempotent. Returns false when it was already stopped. */
  stop(): boolean {
    if (!this.#running) return false;
    this.#running = false;
    this.#conn.close();
    return true;
  }

  toString(): string {
    return `Peer{${this.id}@${this.remoteHost}:${this.remotePort} ${this.isOutbound ? "out" : "in"}}`;
  }
}
