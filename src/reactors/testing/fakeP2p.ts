import type {
  ChannelDescriptor,
  ConnectionStatus,
  NetAddress,
  NodeInfo,
  Peer,
  Reactor,
  ReactorSwitch,
} from "../../p2p/reactor.js";
import { fixtureNodeInfo, idleConnectionStatus } from "../../p2p/testing/peerFixtures.js";

/** Test support: peers and switches that live in memory (no sockets). */

/** A message a fake peer accepted. */
export interface Sent {
  channel: number;
  bytes: Uint8Array;
  /** "try": accepted by trySend; "send": by the waiting send(). */
  via: "try" | "send";
}

/**
 * A peer that records what is sent to it. While `full` is set, trySend refuses and send() waits
 * until `full` is cleared with setFull(false).
 */
export class FakePeer implements Peer {
  readonly id: string;
  readonly nodeInfo: NodeInfo;
  readonly isOutbound = true;
  readonly isPersistent = false;
  readonly remoteHost: string;
  readonly remotePort: number;
  readonly socketAddr: NetAddress;
  readonly sent: Sent[] = [];
  #full = false;
  #running = true;
  #waiters: (() => void)[] = [];
  readonly #data = new Map<string, unknown>();

  constructor(id: string, opts: { host?: string; port?: number } = {}) {
    this.id = id;
    this.remoteHost = opts.host ?? "127.0.0.1";
    this.remotePort = opts.port ?? 40_001;
    this.socketAddr = { id, host: this.remoteHost, port: 26656 };
    this.nodeInfo = fixtureNodeInfo(id, [0x20, 0x21, 0x22, 0x23, 0x30]);
  }

  setFull(full: boolean): void {
    this.#full = full;
    if (!full) for (const w of this.#waiters.splice(0)) w();
  }

  stop(): void {
    this.#running = false;
    for (const w of this.#waiters.splice(0)) w();
  }

  async send(channel: number, bytes: Uint8Array): Promise<boolean> {
    while (this.#full && this.#running) await new Promise<void>((r) => this.#waiters.push(r));
    if (!this.#running) return false;
    this.sent.push({ channel, bytes, via: "send" });
    return true;
  }

  trySend(channel: number, bytes: Uint8Array): boolean {
    if (this.#full || !this.#running) return false;
    this.sent.push({ channel, bytes, via: "try" });
    return true;
  }

  isRunning(): boolean {
    return this.#running;
  }

  status(): ConnectionStatus {
    return idleConnectionStatus();
  }

  get(key: string): unknown {
    return this.#data.get(key);
  }

  set(key: string, value: unknown): void {
    this.#data.set(key, value);
  }
}

/** A switch over a fixed list of fake peers; records stopPeerForError calls. */
export class FakeSwitch implements ReactorSwitch {
  readonly peerList: Peer[] = [];
  readonly stopped: { peer: string; reason: unknown }[] = [];
  readonly broadcasts: { channel: number; bytes: Uint8Array }[] = [];

  peers(): readonly Peer[] {
    return this.peerList;
  }

  peer(id: string): Peer | undefined {
    return this.peerList.find((p) => p.id === id);
  }

  broadcast(channel: number, bytes: Uint8Array): void {
    this.broadcasts.push({ channel, bytes });
    for (const p of this.peerList) p.trySend(channel, bytes);
  }

  stopPeerForError(peer: Peer, reason: unknown): void {
    this.stopped.push({ peer: peer.id, reason });
  }

  nodeId(): string {
    return "self";
  }
}

/**
 * One end of an in-memory connection: what this node sees of the remote peer. Sending hands the bytes
 * to the remote node's reactor for the channel in a microtask (so a send never re-enters the sender),
 * in order; a reactor that throws stops the connection as the real switch would.
 */
class WirePeer implements Peer {
  readonly id: string;
  readonly nodeInfo: NodeInfo;
  readonly isOutbound: boolean;
  readonly isPersistent = false;
  readonly remoteHost = "127.0.0.1";
  readonly remotePort: number;
  readonly socketAddr: NetAddress;
  /** Set once both ends exist. */
  deliver: (channel: number, bytes: Uint8Array) => void = () => {};
  running = true;
  readonly #data = new Map<string, unknown>();

  constructor(id: string, outbound: boolean, port: number) {
    this.id = id;
    this.isOutbound = outbound;
    this.remotePort = port;
    this.socketAddr = { id, host: "127.0.0.1", port };
    this.nodeInfo = fixtureNodeInfo(id, [0x20, 0x21, 0x22, 0x23, 0x30]);
  }

  async send(channel: number, bytes: Uint8Array): Promise<boolean> {
    return this.trySend(channel, bytes);
  }

  trySend(channel: number, bytes: Uint8Array): boolean {
    if (!this.running) return false;
    this.deliver(channel, bytes);
    return true;
  }

  isRunning(): boolean {
    return this.running;
  }

  status(): ConnectionStatus {
    return idleConnectionStatus();
  }

  get(key: string): unknown {
    return this.#data.get(key);
  }

  set(key: string, value: unknown): void {
    this.#data.set(key, value);
  }
}

/** A node's side of an in-memory network: its reactors by channel, and its connected peers. */
export class MemorySwitch implements ReactorSwitch {
  readonly id: string;
  readonly reactors: Reactor[];
  readonly #byChannel = new Map<number, Reactor>();
  readonly #peers = new Map<string, WirePeer>();
  /** Errors reactors threw on receive (each stopped a connection). */
  readonly errors: unknown[] = [];
  /** Messages received, by channel. */
  readonly received = new Map<number, number>();

  constructor(id: string, reactors: Reactor[]) {
    this.id = id;
    this.reactors = reactors;
    for (const r of reactors) for (const ch of r.channels()) this.#byChannel.set(ch.id, r);
  }

  async start(): Promise<void> {
    for (const r of this.reactors) await r.start?.(this);
  }

  channels(): ChannelDescriptor[] {
    return this.reactors.flatMap((r) => [...r.channels()]);
  }

  peers(): readonly Peer[] {
    return [...this.#peers.values()];
  }

  peer(id: string): Peer | undefined {
    return this.#peers.get(id);
  }

  broadcast(channel: number, bytes: Uint8Array): void {
    for (const p of this.#peers.values()) p.trySend(channel, bytes);
  }

  stopPeerForError(peer: Peer, reason: unknown): void {
    this.errors.push(reason);
    const p = this.#peers.get(peer.id);
    if (p === undefined) return;
    p.running = false;
    this.#peers.delete(peer.id);
    for (const r of this.reactors) r.removePeer(p, reason);
  }

  nodeId(): string {
    return this.id;
  }

  /** Receives bytes from `from` (called by the remote end's WirePeer). */
  #receive(from: WirePeer, channel: number, bytes: Uint8Array): void {
    if (!from.running) return;
    const r = this.#byChannel.get(channel);
    if (r === undefined) return;
    this.received.set(channel, (this.received.get(channel) ?? 0) + 1);
    try {
      r.receive(channel, from, bytes);
    } catch (err) {
      this.stopPeerForError(from, err);
    }
  }

  /** Connects two switches (a dials b) and tells every reactor on both sides. */
  static connect(a: MemorySwitch, b: MemorySwitch, ports: { a: number; b: number } = { a: 40_001, b: 26656 }): void {
    const bAtA = new WirePeer(b.id, true, ports.b);
    const aAtB = new WirePeer(a.id, false, ports.a);
    // Copy: the receiver may keep the bytes; the sender may reuse its buffer.
    bAtA.deliver = (ch, bytes) => {
      const copy = bytes.slice();
      queueMicrotask(() => b.#receive(aAtB, ch, copy));
    };
    aAtB.deliver = (ch, bytes) => {
      const copy = bytes.slice();
      queueMicrotask(() => a.#receive(bAtA, ch, copy));
    };
    a.#peers.set(b.id, bAtA);
    b.#peers.set(a.id, aAtB);
    for (const r of a.reactors) r.addPeer(bAtA);
    for (const r of b.reactors) r.addPeer(aAtB);
  }
}
