import { TestSetupError } from "../../consensus/testing/harness.js";
import type { ConnectionStatus, NetAddress, NodeInfo, Peer, Reactor, ReactorSwitch } from "../../p2p/reactor.js";
import { fixtureNodeInfo, idleConnectionStatus } from "../../p2p/testing/peerFixtures.js";

/** Test support: an in-memory network of switches, one reactor each, delivering asynchronously. */

/** Rewrites (or drops, by returning undefined) a message in flight. */
export type Tamper = (from: string, to: string, channelId: number, msg: Uint8Array) => Uint8Array | undefined;

export interface StoppedPeer {
  by: string;
  peer: string;
  reason: unknown;
}

class MemoryPeer implements Peer {
  readonly id: string;
  readonly nodeInfo: NodeInfo;
  readonly isOutbound = true;
  readonly isPersistent = false;
  readonly remoteHost = "127.0.0.1";
  readonly remotePort = 26656;
  readonly socketAddr: NetAddress;
  readonly #net: MemoryNet;
  readonly #localId: string;
  readonly #data = new Map<string, unknown>();
  running = true;

  constructor(net: MemoryNet, localId: string, remoteId: string) {
    this.#net = net;
    this.#localId = localId;
    this.id = remoteId;
    this.socketAddr = { id: remoteId, host: "127.0.0.1", port: 26656 };
    this.nodeInfo = fixtureNodeInfo(remoteId, [0x40]);
  }

  send(channelId: number, msg: Uint8Array): Promise<boolean> {
    return Promise.resolve(this.trySend(channelId, msg));
  }

  trySend(channelId: number, msg: Uint8Array): boolean {
    if (!this.running) return false;
    this.#net.deliver(this.#localId, this.id, channelId, msg);
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

export class MemorySwitch implements ReactorSwitch {
  readonly id: string;
  readonly reactor: Reactor;
  readonly peerMap = new Map<string, MemoryPeer>();
  readonly #net: MemoryNet;

  constructor(net: MemoryNet, id: string, reactor: Reactor) {
    this.#net = net;
    this.id = id;
    this.reactor = reactor;
  }

  peers(): readonly Peer[] {
    return [...this.peerMap.values()];
  }

  peer(id: string): Peer | undefined {
    return this.peerMap.get(id);
  }

  broadcast(channelId: number, msg: Uint8Array): void {
    for (const p of this.peerMap.values()) p.trySend(channelId, msg);
  }

  stopPeerForError(peer: Peer, reason: unknown): void {
    this.#net.stops.push({ by: this.id, peer: peer.id, reason });
    this.#net.disconnect(this.id, peer.id, reason);
  }

  nodeId(): string {
    return this.id;
  }
}

export class MemoryNet {
  readonly switches = new Map<string, MemorySwitch>();
  readonly stops: StoppedPeer[] = [];
  /** Every message delivered: from, to, bytes. */
  readonly delivered: { from: string; to: string; msg: Uint8Array }[] = [];
  tamper: Tamper | undefined;
  #inFlight = 0;

  /** Registers a node and starts its reactor. */
  async add(id: string, reactor: Reactor): Promise<MemorySwitch> {
    const sw = new MemorySwitch(this, id, reactor);
    this.switches.set(id, sw);
    await reactor.start?.(sw);
    return sw;
  }

  connect(a: string, b: string): void {
    const sa = this.#must(a);
    const sb = this.#must(b);
    if (sa.peerMap.has(b)) return;
    const pb = new MemoryPeer(this, a, b);
    const pa = new MemoryPeer(this, b, a);
    sa.peerMap.set(b, pb);
    sb.peerMap.set(a, pa);
    sa.reactor.addPeer(pb);
    sb.reactor.addPeer(pa);
  }

  disconnect(a: string, b: string, reason: unknown = undefined): void {
    const sa = this.#must(a);
    const sb = this.#must(b);
    const pb = sa.peerMap.get(b);
    const pa = sb.peerMap.get(a);
    if (pb !== undefined) {
      pb.running = false;
      sa.peerMap.delete(b);
      sa.reactor.removePeer(pb, reason);
    }
    if (pa !== undefined) {
      pa.running = false;
      sb.peerMap.delete(a);
      sb.reactor.removePeer(pa, reason);
    }
  }

  deliver(from: string, to: string, channelId: number, msg: Uint8Array): void {
    const bytes = this.tamper === undefined ? msg : this.tamper(from, to, channelId, msg);
    if (bytes === undefined) return;
    this.#inFlight++;
    setImmediate(() => {
      this.#inFlight--;
      const target = this.switches.get(to);
      const peer = target?.peerMap.get(from);
      if (target === undefined || peer === undefined) return;
      this.delivered.push({ from, to, msg: bytes });
      try {
        target.reactor.receive(channelId, peer, bytes);
      } catch (err) {
        target.stopPeerForError(peer, err);
      }
    });
  }

  isQuiet(): boolean {
    return this.#inFlight === 0;
  }

  #must(id: string): MemorySwitch {
    const sw = this.switches.get(id);
    if (sw === undefined) throw new TestSetupError(`no switch ${id} in the memory network`);
    return sw;
  }
}
