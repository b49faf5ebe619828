import { createServer, type Server, Socket } from "node:net";
import type { Logger } from "../util/logger.js";
import { shuffle } from "../util/shuffle.js";
import {
  DEFAULT_MCONNECTION_CONFIG,
  type MConnectionConfig,
  type PeerConnection,
  PeerIdMismatchError,
  SecretConnectionError,
  SelfConnectionError,
  UnknownChannelError,
  upgradeConnection,
} from "./conn/index.js";
import {
  ChannelConflictError,
  CurrentlyDialingOrExistingAddressError,
  DialError,
  SwitchAuthenticationFailureError,
  SwitchConnectToSelfError,
  SwitchDuplicatePeerIdError,
  SwitchDuplicatePeerIpError,
  SwitchNotRunningError,
  TooManyPeersError,
} from "./errors.js";
import {
  formatDialString,
  formatNetAddress,
  netAddressFromNodeInfo,
  normalizeHost,
  parseHostPort,
  parseNetAddresses,
  stripProtocol,
  validateNodeId,
} from "./netAddress.js";
import { type PeerOrigin, SwitchPeer } from "./peer.js";
import type { ChannelDescriptor, NetAddress, NodeInfo, Peer, Reactor, ReactorSwitch } from "./reactor.js";
import type { PeerTraffic } from "./traffic.js";

/** What the switch asks of the address book (p2p.AddrBook); pex AddrBook satisfies it. */
export interface SwitchAddrBook {
  addAddress(addr: NetAddress, src: NetAddress): void;
  addOurAddress(addr: NetAddress): void;
  removeAddress(addr: NetAddress): void;
  markGood(id: string): void;
  addPrivateIds(ids: readonly string[]): void;
  save(): Promise<void>;
}

/**
 * Redial schedule for a lost persistent peer, CometBFT v0.38's (Switch.reconnectToPeer): the first
 * redial at once, then `intervalAttempts - 1` more every `intervalMs` plus a random [0, jitterMs)
 * (5-8 s, so a peer that comes back is found within 8 s for the first ~2 minutes), then
 * `backoffAttempts` more after backoffBase^j seconds (j from 0) plus the jitter, each capped by
 * persistent_peers_max_dial_period when that is > 0; then it gives up.
 */
export interface ReconnectBackoff {
  intervalMs: number;
  intervalAttempts: number;
  backoffBase: number;
  backoffAttempts: number;
  jitterMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: ReconnectBackoff = {
  intervalMs: 5000,
  intervalAttempts: 20,
  backoffBase: 3,
  backoffAttempts: 10,
  jitterMs: 3000,
};

export interface SwitchOptions {
  nodeKey: { readonly id: string; readonly privKey: Uint8Array };
  /** Our NodeInfo; `channels` is ignored (filled from the reactors), a port 0 in listenAddr becomes the real one. */
  nodeInfo: Omit<NodeInfo, "channels"> & { readonly channels?: Uint8Array };
  /** `tcp://host:port`; port 0 picks a free port (see listenAddress()). */
  laddr: string;
  externalAddress?: string;
  maxNumInboundPeers: number;
  maxNumOutboundPeers: number;
  unconditionalPeerIds?: readonly string[];
  privatePeerIds?: readonly string[];
  persistentPeersMaxDialPeriodMs?: number;
  allowDuplicateIp?: boolean;
  handshakeTimeoutMs: number;
  dialTimeoutMs: number;
  mconfig: MConnectionConfig;
  log: Logger;
  addrBook?: SwitchAddrBook;
  reconnectBackoff?: Partial<ReconnectBackoff>;
  /** Each dialPeersAsync dial waits a random [0, this) first, so nodes started together don't collide (3000). */
  dialRandomizerMs?: number;
  /** Told of every message sent to or received from a peer (p2p metrics); absent: nothing is counted. */
  traffic?: PeerTraffic;
}

/** p2p.MConnConfig: the [p2p] settings that tune a connection, over the conn defaults (ping, pong). */
export function mconnConfigFromP2P(p2p: {
  readonly flushThrottleTimeoutMs: number;
  readonly sendRate: number;
  readonly recvRate: number;
  readonly maxPacketMsgPayloadSize: number;
}): MConnectionConfig {
  return {
    ...DEFAULT_MCONNECTION_CONFIG,
    flushThrottleMs: p2p.flushThrottleTimeoutMs,
    sendRateBytesPerSec: p2p.sendRate,
    recvRateBytesPerSec: p2p.recvRate,
    maxPacketMsgPayloadSize: p2p.maxPacketMsgPayloadSize,
  };
}

export interface DialPeersOptions {
  /** Redial when lost (dial_peers persistent=true). */
  persistent?: boolean;
}

/**
 * Accepts and dials peers, upgrades their connections, and routes each channel's messages to
 * the reactor that registered it (p2p/switch.go + the parts of p2p/transport.go that filter peers).
 */
export class Switch implements ReactorSwitch {
  readonly #opts: SwitchOptions;
  readonly #log: Logger;
  readonly #backoff: ReconnectBackoff;
  readonly #reactors: Reactor[] = [];
  readonly #reactorsByCh = new Map<number, Reactor>();
  readonly #chDescs: ChannelDescriptor[] = [];
  readonly #peers = new Map<string, SwitchPeer>();
  readonly #dialing = new Map<string, NetAddress>();
  readonly #reconnecting = new Set<string>();
  readonly #unconditional = new Set<string>();
  readonly #privateIds = new Set<string>();
  readonly #sockets = new Set<Socket>();
  readonly #sleeps = new Set<{ timer: NodeJS.Timeout; resolve: (ok: boolean) => void }>();
  #persistentAddrs: NetAddress[] = [];
  #addrBook: SwitchAddrBook | undefined;
  #nodeInfo: NodeInfo;
  #server: Server | undefined;
  #listenHost: string;
  #listenPort: number;
  #running = false;
  #ready: Promise<void> = Promise.resolve();

  constructor(opts: SwitchOptions) {
    validateNodeId(opts.nodeKey.id);
    this.#opts = opts;
    this.#log = opts.log;
    this.#backoff = { ...DEFAULT_RECONNECT_BACKOFF, ...opts.reconnectBackoff };
    this.#addrBook = opts.addrBook;
    const { host, port } = parseHostPort(stripProtocol(opts.laddr));
    this.#listenHost = host;
    this.#listenPort = port;
    this.#nodeInfo = { ...opts.nodeInfo, id: opts.nodeKey.id, channels: new Uint8Array() };
    if (opts.unconditionalPeerIds) this.addUnconditionalPeerIds(opts.unconditionalPeerIds);
    if (opts.privatePeerIds) this.addPrivatePeerIds(opts.privatePeerIds);
  }

  // ---- setup

  /** Registers a reactor; throws ChannelConflictError when one of its channels is taken. */
  addReactor(reactor: Reactor): Reactor {
    const descs = reactor.channels();
    for (const d of descs) {
      const existing = this.#reactorsByCh.get(d.id);
      if (existing) throw new ChannelConflictError(d.id, existing.name, reactor.name);
    }
    for (const d of descs) {
      this.#reactorsByCh.set(d.id, reactor);
      this.#chDescs.push(d);
    }
    this.#reactors.push(reactor);
    this.#nodeInfo = { ...this.#nodeInfo, channels: Uint8Array.from(this.#chDescs.map((d) => d.id)) };
    return reactor;
  }

  reactors(): readonly Reactor[] {
    return this.#reactors;
  }

  setAddrBook(book: SwitchAddrBook): void {
    this.#addrBook = book;
  }

  /** Our NodeInfo as sent in handshakes: channels from the reactors, the real listen port. */
  nodeInfo(): NodeInfo {
    return this.#nodeInfo;
  }

  nodeId(): string {
    return this.#opts.nodeKey.id;
  }

  // ---- lifecycle

  /** Listens on laddr, then starts every reactor; inbound peers are added only after that. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    let markReady!: () => void;
    this.#ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    try {
      await this.#listen();
      for (const r of this.#reactors) await r.start?.(this);
    } catch (err) {
      this.#running = false;
      this.#server?.close();
      this.#server = undefined;
      markReady();
      throw err;
    }
    const book = this.#addrBook;
    if (book) {
      book.addOurAddress(this.listenAddress());
      const ext = this.#externalAddress();
      if (ext) book.addOurAddress(ext);
    }
    markReady();
    this.#log.info({ listenAddr: this.#nodeInfo.listenAddr, id: this.nodeId() }, "P2P switch started");
  }

  /** max_num_inbound_peers plus the unconditional IDs, counting connections still in their handshake. */
  #limitInbound(): void {
    if (this.#server !== undefined)
      this.#server.maxConnections = this.#opts.maxNumInboundPeers + this.#unconditional.size;
  }

  async #listen(): Promise<void> {
    // Like CometBFT's LimitListener: sockets beyond the inbound limit are refused before the handshake.
    const server = createServer({ noDelay: true }, (socket) => {
      void this.#acceptPeer(socket);
    });
    this.#server = server;
    this.#limitInbound();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#listenPort, this.#listenHost, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on("error", (err) => this.#log.error({ err }, "P2P listener error"));
    const bound = server.address();
    if (bound && typeof bound === "object") this.#listenPort = bound.port;
    this.#nodeInfo = { ...this.#nodeInfo, listenAddr: this.#ourListenAddr() };
  }

  /** p2p.external_address, else laddr (node.makeNodeInfo), with port 0 replaced by the bound port. */
  #ourListenAddr(): string {
    const given = this.#opts.nodeInfo.listenAddr || this.#opts.externalAddress || this.#opts.laddr;
    const hasProtocol = given.includes("://");
    const { host, port } = parseHostPort(stripProtocol(given));
    if (port !== 0) return given;
    const fixed = formatDialString({ host, port: this.#listenPort });
    return hasProtocol ? `${given.slice(0, given.indexOf("://") + 3)}${fixed}` : fixed;
  }

  #externalAddress(): NetAddress | undefined {
    const ext = this.#opts.externalAddress;
    if (!ext) return undefined;
    try {
      return { id: this.nodeId(), ...parseHostPort(stripProtocol(ext)) };
    } catch {
      return undefined;
    }
  }

  /** Stops accepting, disconnects every peer, stops the reactors; resolves once the listener is closed. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    for (const s of this.#sleeps) {
      clearTimeout(s.timer);
      s.resolve(false);
    }
    this.#sleeps.clear();
    const server = this.#server;
    this.#server = undefined;
    const closed = server
      ? new Promise<void>((resolve) => {
          server.close(() => resolve());
        })
      : Promise.resolve();
    for (const p of [...this.#peers.values()]) this.#stopAndRemovePeer(p, undefined);
    for (const r of this.#reactors) {
      try {
        await r.stop?.();
      } catch (err) {
        this.#log.error({ err, reactor: r.name }, "error while stopping reactor");
      }
    }
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    await closed;
    this.#log.info("P2P switch stopped");
  }

  isRunning(): boolean {
    return this.#running;
  }

  isListening(): boolean {
    return this.#server?.listening ?? false;
  }

  /** The bound listen address (real port once started) with our node ID. */
  listenAddress(): NetAddress {
    return { id: this.nodeId(), host: this.#listenHost, port: this.#listenPort };
  }

  /** net_info `listeners`: CometBFT prints `Listener(@<p2p.external_address>)`. */
  listeners(): string[] {
    return [`Listener(@${this.#opts.externalAddress ?? ""})`];
  }

  // ---- peers

  peers(): readonly Peer[] {
    return [...this.#peers.values()];
  }

  peer(id: string): Peer | undefined {
    return this.#peers.get(id);
  }

  /** Outbound and inbound peers (unconditional ones not counted) and dials in flight (Switch.NumPeers). */
  numPeers(): { outbound: number; inbound: number; dialing: number } {
    let outbound = 0;
    let inbound = 0;
    for (const p of this.#peers.values()) {
      if (this.#unconditional.has(p.id)) continue;
      if (p.isOutbound) outbound++;
      else inbound++;
    }
    return { outbound, inbound, dialing: this.#dialing.size };
  }

  maxNumOutboundPeers(): number {
    return this.#opts.maxNumOutboundPeers;
  }

  broadcast(channelId: number, msg: Uint8Array): void {
    for (const p of this.#peers.values()) p.trySend(channelId, msg);
  }

  /** Disconnects a peer after an error; persistent peers are redialed (Switch.StopPeerForError). */
  stopPeerForError(peer: Peer, reason: unknown): void {
    const p = this.#peers.get(peer.id);
    if (p === undefined || p !== peer || !p.isRunning()) return;
    this.#log.error({ peer: p.id, err: reason }, "Stopping peer for error");
    this.#stopAndRemovePeer(p, reason);
    if (p.isPersistent && this.#running) void this.#reconnectToPeer(p.socketAddr);
  }

  /** Disconnects a peer without redialing it (Switch.StopPeerGracefully). */
  stopPeerGracefully(peer: Peer): void {
    const p = this.#peers.get(peer.id);
    if (p === undefined || p !== peer) return;
    this.#log.info({ peer: p.id }, "Stopping peer gracefully");
    this.#stopAndRemovePeer(p, undefined);
  }

  /** The peer did something useful (a vote, a block part): promote it in the address book. */
  markPeerAsGood(peer: Peer): void {
    this.#addrBook?.markGood(peer.id);
  }

  #stopAndRemovePeer(peer: SwitchPeer, reason: unknown): void {
    peer.stop();
    for (const r of this.#reactors) {
      try {
        r.removePeer(peer, reason);
      } catch (err) {
        this.#log.error({ err, reactor: r.name, peer: peer.id }, "reactor failed to remove peer");
      }
    }
    // Removed last so a reconnecting peer is not added before every reactor forgot the old one.
    if (this.#peers.get(peer.id) === peer) this.#peers.delete(peer.id);
  }

  // ---- peer lists

  /** Sets the persistent peers (`id@host:port`); throws the first malformed address. */
  addPersistentPeers(addrs: readonly string[]): void {
    this.#log.info({ addrs }, "Adding persistent peers");
    const parsed = parseNetAddresses(addrs);
    for (const a of parsed) {
      if (!this.#persistentAddrs.some((p) => p.id === a.id)) this.#persistentAddrs.push(a);
    }
  }

  addUnconditionalPeerIds(ids: readonly string[]): void {
    for (const id of ids) validateNodeId(id);
    for (const id of ids) this.#unconditional.add(id.toLowerCase());
    this.#limitInbound();
  }

  addPrivatePeerIds(ids: readonly string[]): void {
    for (const id of ids) validateNodeId(id);
    const lower = ids.map((id) => id.toLowerCase());
    for (const id of lower) this.#privateIds.add(id);
    this.#addrBook?.addPrivateIds(lower);
  }

  isPeerUnconditional(id: string): boolean {
    return this.#unconditional.has(id);
  }

  isPrivatePeerId(id: string): boolean {
    return this.#privateIds.has(id);
  }

  /**
   * Whether the address belongs to a persistent peer. CometBFT compares the whole address; the ID
   * is enough here because it is proven by the handshake and host names are not resolved.
   */
  isPeerPersistent(addr: NetAddress): boolean {
    return this.#persistentAddrs.some((p) => p.id === addr.id);
  }

  /** Dialing it now, connected to it, or (without allow_duplicate_ip) connected to its IP. */
  isDialingOrExistingAddress(addr: NetAddress): boolean {
    if (this.#dialing.has(addr.id) || this.#peers.has(addr.id)) return true;
    if (this.#opts.allowDuplicateIp) return false;
    const host = normalizeHost(addr.host);
    for (const p of this.#peers.values()) if (p.remoteHost === host) return true;
    return false;
  }

  // ---- dialing

  /**
   * Dials `id@host:port` addresses in random order without waiting (Switch.DialPeersAsync). Throws
   * the first malformed address before dialing any. The addresses go into the address book too.
   */
  dialPeersAsync(addrs: readonly string[], opts: DialPeersOptions = {}): void {
    const parsed = parseNetAddresses(addrs);
    if (opts.persistent) this.addPersistentPeers(addrs);
    const ours = this.listenAddress();
    const book = this.#addrBook;
    if (book) {
      for (const a of parsed) {
        if (a.id === ours.id) continue;
        try {
          book.addAddress(a, ours);
        } catch (err) {
          this.#log.debug({ err, addr: formatNetAddress(a) }, "Won't add peer's address to addrbook");
        }
      }
      book.save().catch((err: unknown) => this.#log.error({ err }, "failed to save the address book"));
    }
    const shuffled = shuffle([...parsed]);
    const randomizerMs = this.#opts.dialRandomizerMs ?? 3000;
    for (const addr of shuffled) {
      if (addr.id === ours.id) {
        this.#log.debug({ addr: formatNetAddress(addr) }, "Ignore attempt to connect to ourselves");
        continue;
      }
      void (async () => {
        if (!(await this.#sleep(Math.random() * randomizerMs))) return;
        try {
          await this.dialPeerWithAddress(addr);
        } catch (err) {
          const quiet =
            err instanceof SwitchConnectToSelfError ||
            err instanceof SwitchDuplicatePeerIdError ||
            err instanceof CurrentlyDialingOrExistingAddressError ||
            err instanceof SwitchNotRunningError;
          if (quiet) this.#log.debug({ err }, "Error dialing peer");
          else this.#log.error({ err, addr: formatNetAddress(addr) }, "Error dialing peer");
        }
      })();
    }
  }

  /** Dials seed addresses (unsafe RPC dial_seeds): like dialPeersAsync, never persistent. */
  dialSeeds(addrs: readonly string[]): void {
    this.dialPeersAsync(addrs, { persistent: false });
  }

  /**
   * Dials one address, upgrades the connection and adds the peer (Switch.DialPeerWithAddress).
   * A failed dial of a persistent peer starts its redial loop.
   */
  async dialPeerWithAddress(addr: NetAddress): Promise<Peer> {
    if (!this.#running) throw new SwitchNotRunningError("dial a peer");
    const text = formatNetAddress(addr);
    if (addr.id === this.nodeId()) throw new SwitchConnectToSelfError(text);
    if (this.isDialingOrExistingAddress(addr)) throw new CurrentlyDialingOrExistingAddressError(text);
    this.#dialing.set(addr.id, addr);
    try {
      return await this.#addOutboundPeer(addr);
    } finally {
      this.#dialing.delete(addr.id);
    }
  }

  async #addOutboundPeer(addr: NetAddress): Promise<Peer> {
    const text = formatNetAddress(addr);
    const persistent = this.isPeerPersistent(addr);
    this.#log.debug({ addr: text }, "Dialing peer");
    let conn: PeerConnection;
    try {
      const socket = await this.#connect(addr);
      try {
        conn = await upgradeConnection(socket, this.#upgradeOptions(addr.id));
      } catch (err) {
        socket.destroy();
        throw err;
      }
    } catch (err) {
      if (err instanceof SelfConnectionError) {
        // Our own address: never dial it again (transport ErrRejected isSelf).
        this.#addrBook?.removeAddress(addr);
        this.#addrBook?.addOurAddress(addr);
        throw new SwitchConnectToSelfError(text);
      }
      if (persistent && this.#running) void this.#reconnectToPeer(addr);
      const authFailure = err instanceof SecretConnectionError || err instanceof PeerIdMismatchError;
      throw authFailure ? new SwitchAuthenticationFailureError(text, err) : err;
    }
    try {
      return this.#addPeer(conn, { isOutbound: true, isPersistent: persistent, socketAddr: addr });
    } catch (err) {
      conn.close();
      throw err;
    }
  }

  #connect(addr: NetAddress): Promise<Socket> {
    const text = formatNetAddress(addr);
    return new Promise<Socket>((resolve, reject) => {
      const socket = new Socket();
      this.#track(socket);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new DialError(text, `i/o timeout after ${this.#opts.dialTimeoutMs} ms`));
      }, this.#opts.dialTimeoutMs);
      const onError = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(new DialError(text, err));
      };
      socket.once("error", onError);
      socket.connect({ host: addr.host, port: addr.port, noDelay: true }, () => {
        clearTimeout(timer);
        socket.off("error", onError);
        if (!this.#running) {
          socket.destroy();
          reject(new SwitchNotRunningError("dial a peer"));
          return;
        }
        resolve(socket);
      });
    });
  }

  #upgradeOptions(expectedId?: string): Parameters<typeof upgradeConnection>[1] {
    const base = {
      privKey: this.#opts.nodeKey.privKey,
      nodeInfo: this.#nodeInfo,
      channels: this.#chDescs,
      handshakeTimeoutMs: this.#opts.handshakeTimeoutMs,
      config: this.#opts.mconfig,
    };
    return expectedId === undefined ? base : { ...base, expectedId };
  }

  #track(socket: Socket): void {
    // Failures surface through the upgrade or the connection; without a listener they would crash the process.
    socket.on("error", () => {});
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
  }

  /** Redials a lost persistent peer with backoff until it is back, we stop, or attempts run out. */
  async #reconnectToPeer(addr: NetAddress): Promise<void> {
    if (this.#reconnecting.has(addr.id)) return;
    this.#reconnecting.add(addr.id);
    const text = formatNetAddress(addr);
    const started = Date.now();
    this.#log.info({ addr: text }, "Reconnecting to peer");
    try {
      const attempts = this.#backoff.intervalAttempts + this.#backoff.backoffAttempts;
      for (let i = 0; i < attempts; i++) {
        if (!(await this.#sleep(this.reconnectDelayMs(i)))) return;
        try {
          await this.dialPeerWithAddress(addr);
          return;
        } catch (err) {
          if (err instanceof CurrentlyDialingOrExistingAddressError || err instanceof SwitchNotRunningError) return;
          this.#log.info({ tries: i, err, addr: text }, "Error reconnecting to peer. Trying again");
        }
      }
      this.#log.error({ addr: text, elapsedMs: Date.now() - started }, "Failed to reconnect to peer. Giving up");
    } finally {
      this.#reconnecting.delete(addr.id);
    }
  }

  /** The wait before redial attempt `attempt` (0-based); see ReconnectBackoff. */
  reconnectDelayMs(attempt: number): number {
    const { intervalMs, intervalAttempts, backoffBase, jitterMs } = this.#backoff;
    if (attempt === 0) return 0;
    const jitter = Math.random() * jitterMs;
    if (attempt < intervalAttempts) return intervalMs + jitter;
    const backoff = backoffBase ** (attempt - intervalAttempts) * 1000;
    const maxDial = this.#opts.persistentPeersMaxDialPeriodMs ?? 0;
    return (maxDial > 0 ? Math.min(backoff, maxDial) : backoff) + jitter;
  }

  /** Resolves true after `ms`, or false at once when the switch stops. */
  #sleep(ms: number): Promise<boolean> {
    if (!this.#running) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.#sleeps.delete(entry);
          resolve(this.#running);
        }, ms),
        resolve,
      };
      this.#sleeps.add(entry);
    });
  }

  // ---- accepting and adding

  async #acceptPeer(socket: Socket): Promise<void> {
    this.#track(socket);
    await this.#ready;
    const remote = `${socket.remoteAddress ?? "?"}:${socket.remotePort ?? 0}`;
    if (!this.#running) {
      socket.destroy();
      return;
    }
    const remoteHost = normalizeHost(socket.remoteAddress ?? "");
    if (!this.#opts.allowDuplicateIp && [...this.#peers.values()].some((p) => p.remoteHost === remoteHost)) {
      this.#log.info({ remote }, "Inbound Peer rejected: duplicate IP");
      socket.destroy();
      return;
    }
    let conn: PeerConnection;
    try {
      conn = await upgradeConnection(socket, this.#upgradeOptions());
    } catch (err) {
      socket.destroy();
      this.#log.info({ remote, err }, "Inbound Peer rejected");
      return;
    }
    try {
      let socketAddr: NetAddress;
      try {
        socketAddr = netAddressFromNodeInfo(conn.remoteNodeInfo, conn.remoteHost);
      } catch {
        socketAddr = { id: conn.remoteNodeInfo.id, host: normalizeHost(conn.remoteHost), port: conn.remotePort };
      }
      this.#addPeer(conn, { isOutbound: false, isPersistent: this.isPeerPersistent(socketAddr), socketAddr });
    } catch (err) {
      conn.close();
      socket.destroy();
      this.#log.info({ remote, err }, "Ignoring inbound connection: error while adding peer");
    }
  }

  /** Filters, starts and registers a peer, then tells every reactor (Switch.addPeer + transport filters). */
  #addPeer(conn: PeerConnection, origin: PeerOrigin): SwitchPeer {
    const info = conn.remoteNodeInfo;
    const id = info.id;
    if (!this.#running) throw new SwitchNotRunningError("add a peer");
    if (id === this.nodeId()) {
      // Our own address: never dial it again (transport ErrRejected isSelf).
      this.#addrBook?.removeAddress(origin.socketAddr);
      this.#addrBook?.addOurAddress(origin.socketAddr);
      throw new SwitchConnectToSelfError(formatNetAddress(origin.socketAddr));
    }
    // upgradeConnection already validated its NodeInfo and checked it is compatible with ours.
    const existing = this.#peers.get(id);
    if (existing !== undefined) {
      // Two nodes that dial each other at once would each refuse the other's connection and end
      // with none. Both sides keep the connection dialed by the lower node ID instead.
      const keeperIsOutbound = this.nodeId() < id;
      if (existing.isOutbound === origin.isOutbound || origin.isOutbound !== keeperIsOutbound) {
        throw new SwitchDuplicatePeerIdError(id);
      }
      this.#log.info(
        { peer: id, kept: origin.isOutbound ? "outbound" : "inbound" },
        "Replacing a duplicate connection: both sides keep the one dialed by the lower node ID",
      );
      this.#stopAndRemovePeer(existing, new SwitchDuplicatePeerIdError(id));
    }
    const remoteHost = normalizeHost(conn.remoteHost);
    if (!this.#opts.allowDuplicateIp && [...this.#peers.values()].some((p) => p.remoteHost === remoteHost)) {
      throw new SwitchDuplicatePeerIpError(remoteHost);
    }
    if (!this.#unconditional.has(id)) {
      const n = this.numPeers();
      if (!origin.isOutbound && n.inbound >= this.#opts.maxNumInboundPeers) {
        throw new TooManyPeersError("inbound", n.inbound, this.#opts.maxNumInboundPeers);
      }
      if (origin.isOutbound && !origin.isPersistent && n.outbound >= this.#opts.maxNumOutboundPeers) {
        throw new TooManyPeersError("outbound", n.outbound, this.#opts.maxNumOutboundPeers);
      }
    }

    const peer = new SwitchPeer(conn, origin, this.#opts.traffic);
    this.#peers.set(id, peer);
    // Messages that arrive before every reactor has seen addPeer wait, so receive never precedes it.
    let held: [number, Uint8Array][] | undefined = [];
    conn.start(
      (channelId, msg) => {
        if (held) held.push([channelId, msg]);
        else this.#onReceive(peer, channelId, msg);
      },
      (err) => this.stopPeerForError(peer, err),
    );
    for (const r of this.#reactors) {
      try {
        r.addPeer(peer);
      } catch (err) {
        held = undefined;
        this.stopPeerForError(peer, err);
        return peer;
      }
    }
    const pending = held;
    held = undefined;
    for (const [channelId, msg] of pending) this.#onReceive(peer, channelId, msg);
    this.#log.info({ peer: id, addr: formatNetAddress(origin.socketAddr), outbound: origin.isOutbound }, "Added peer");
    return peer;
  }

  #onReceive(peer: SwitchPeer, channelId: number, msg: Uint8Array): void {
    if (!peer.isRunning()) return;
    const reactor = this.#reactorsByCh.get(channelId);
    if (reactor === undefined) {
      this.stopPeerForError(peer, new UnknownChannelError(channelId));
      return;
    }
    this.#opts.traffic?.received(peer.id, channelId, msg);
    try {
      reactor.receive(channelId, peer, msg);
    } catch (err) {
      this.stopPeerForError(peer, err);
    }
  }
}
