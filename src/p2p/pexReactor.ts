import { isIP } from "node:net";
import { SchemaMessage } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import { shuffle } from "../util/shuffle.js";
import { type AddrBook, MAX_GET_SELECTION } from "./addrBook.js";
import {
  CurrentlyDialingOrExistingAddressError,
  PexProtocolError,
  SwitchAuthenticationFailureError,
  SwitchNotRunningError,
  UnsupportedSwitchError,
} from "./errors.js";
import {
  formatDialString,
  formatNetAddress,
  netAddressEquals,
  netAddressFromNodeInfo,
  parseNetAddresses,
} from "./netAddress.js";
import type { ChannelDescriptor, NetAddress, Peer, Reactor, ReactorSwitch } from "./reactor.js";

/** PEX messages travel on channel 0x00 (pex.PexChannel). */
export const PEX_CHANNEL = 0x00;

// Over-estimate of one encoded NetAddress; a PexAddrs answer is at most this × MAX_GET_SELECTION (pex_reactor.go).
const MAX_ADDRESS_SIZE = 256;
const MAX_MSG_SIZE = MAX_ADDRESS_SIZE * MAX_GET_SELECTION;
const DEFAULT_ENSURE_PEERS_PERIOD_MS = 30_000;
const DEFAULT_CRAWL_PEER_PERIOD_MS = 30_000;
const MIN_TIME_BETWEEN_CRAWLS_MS = 2 * 60_000;
const MAX_ATTEMPTS_TO_DIAL = 16;
/** Seeds hand out mostly vetted addresses: 30% new, 70% old. */
const BIAS_TO_SELECT_NEW_PEERS = 30;
const DEFAULT_BAN_TIME_MS = 24 * 60 * 60 * 1000;
/** node/setup.go: seeds keep a peer this long before disconnecting it. */
const DEFAULT_SEED_DISCONNECT_WAIT_PERIOD_MS = 28 * 60 * 60 * 1000;

/** Seed mode waits at most this long for its answer to leave before disconnecting (Peer.FlushStop). */
const FLUSH_STOP_MAX_WAIT_MS = 1000;

// proto/tendermint/p2p/pex.proto and types.proto (v0.38): cosmjs-types has NetAddress but not pex.proto.
const SCHEMA = `
syntax = "proto3";
package tendermint.p2p;
message NetAddress { string id = 1; string ip = 2; uint32 port = 3; }
message PexRequest {}
message PexAddrs { repeated NetAddress addrs = 1; }
message Message {
  oneof sum {
    PexRequest pex_request = 1;
    PexAddrs pex_addrs = 2;
  }
}
`;
interface DecodedPex {
  pexRequest?: unknown;
  pexAddrs?: { addrs?: { id?: string; ip?: string; port?: number }[] } | null;
}

const PexMessageType = new SchemaMessage<DecodedPex>(SCHEMA, "tendermint.p2p.Message");

export type PexMessage =
  | { readonly type: "request" }
  | { readonly type: "addrs"; readonly addrs: readonly NetAddress[] };

/** tendermint.p2p.Message bytes. Addresses must have IP hosts (Go peers parse them with net.ParseIP). */
export function encodePexMessage(msg: PexMessage): Uint8Array {
  const obj =
    msg.type === "request"
      ? { pexRequest: {} }
      : { pexAddrs: { addrs: msg.addrs.map((a) => ({ id: a.id, ip: a.host, port: a.port })) } };
  return PexMessageType.encode(obj);
}

/** Parses a PEX message; throws PexProtocolError when it is malformed or holds a bad address (NetAddressFromProto). */
export function decodePexMessage(bytes: Uint8Array): PexMessage {
  const msg = PexMessageType.decode(bytes, (err) => new PexProtocolError("malformed PEX message", { cause: err }));
  if (msg.pexRequest != null) return { type: "request" };
  if (msg.pexAddrs != null) {
    const addrs = (msg.pexAddrs.addrs ?? []).map((a) => {
      const ip = a.ip ?? "";
      if (isIP(ip) === 0) throw new PexProtocolError(`invalid IP address ${ip} in PEX addresses`);
      const port = a.port ?? 0;
      if (port >= 1 << 16) throw new PexProtocolError(`invalid port number ${port} in PEX addresses`);
      return { id: a.id ?? "", host: ip, port };
    });
    return { type: "addrs", addrs };
  }
  throw new PexProtocolError("unknown PEX message type");
}

/** The switch features PEX needs beyond ReactorSwitch; the p2p Switch has them all. */
export interface PexSwitch extends ReactorSwitch {
  numPeers(): { outbound: number; inbound: number; dialing: number };
  maxNumOutboundPeers(): number;
  isDialingOrExistingAddress(addr: NetAddress): boolean;
  isPeerPersistent(addr: NetAddress): boolean;
  dialPeerWithAddress(addr: NetAddress): Promise<Peer>;
  stopPeerGracefully(peer: Peer): void;
}

function isPexSwitch(sw: ReactorSwitch): sw is PexSwitch {
  const s = sw as Partial<PexSwitch>;
  return (
    typeof s.numPeers === "function" &&
    typeof s.maxNumOutboundPeers === "function" &&
    typeof s.isDialingOrExistingAddress === "function" &&
    typeof s.isPeerPersistent === "function" &&
    typeof s.dialPeerWithAddress === "function" &&
    typeof s.stopPeerGracefully === "function"
  );
}

export interface PexReactorOptions {
  book: AddrBook;
  log: Logger;
  /** `[p2p] seeds` (`id@host:port`): dialed when the book has nothing to dial. */
  seeds?: readonly string[];
  /** `[p2p] seed_mode`: crawl the network, answer requests once, then disconnect. */
  seedMode?: boolean;
  /** How often the reactor tops up outbound peers (CometBFT: 30 s). Peers may request a third as often. */
  ensurePeersPeriodMs?: number;
  /** Seed mode: how often it crawls (30 s). */
  crawlPeerPeriodMs?: number;
  /** Seed mode: how long a peer stays before it is disconnected (28 h). */
  seedDisconnectWaitPeriodMs?: number;
  /** `[p2p] persistent_peers_max_dial_period`: caps the dial backoff for persistent peers when > 0. */
  persistentPeersMaxDialPeriodMs?: number;
  /** Unit of the per-address dial backoff: attempt n waits 2^n units plus up to one unit (1 s). */
  dialBackoffUnitMs?: number;
}

/**
 * Peer exchange (p2p/pex/pex_reactor.go): shares addresses from the book, learns new ones from
 * peers, and keeps dialing addresses until the switch has max_num_outbound_peers outbound peers.
 * Only accepts an address list it asked for, and at most one request per peer per
 * ensurePeersPeriod/3.
 */
export class PexReactor implements Reactor {
  readonly name = "PEX";
  readonly #book: AddrBook;
  readonly #log: Logger;
  readonly #seedMode: boolean;
  readonly #seedStrings: readonly string[];
  readonly #ensurePeriodMs: number;
  readonly #crawlPeriodMs: number;
  readonly #seedDisconnectWaitMs: number;
  readonly #maxDialPeriodMs: number;
  readonly #backoffUnitMs: number;
  readonly #requestsSent = new Set<string>();
  /** Last request time per peer; 0 = the free first request was used. */
  readonly #lastReceivedRequests = new Map<string, number>();
  readonly #attemptsToDial = new Map<string, { number: number; lastDialedMs: number }>();
  readonly #crawled = new Map<string, number>();
  #seedAddrs: NetAddress[] = [];
  #sw: PexSwitch | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;

  constructor(opts: PexReactorOptions) {
    this.#book = opts.book;
    this.#log = opts.log;
    this.#seedMode = opts.seedMode ?? false;
    this.#seedStrings = opts.seeds ?? [];
    this.#ensurePeriodMs = opts.ensurePeersPeriodMs ?? DEFAULT_ENSURE_PEERS_PERIOD_MS;
    this.#crawlPeriodMs = opts.crawlPeerPeriodMs ?? DEFAULT_CRAWL_PEER_PERIOD_MS;
    this.#seedDisconnectWaitMs = opts.seedDisconnectWaitPeriodMs ?? DEFAULT_SEED_DISCONNECT_WAIT_PERIOD_MS;
    this.#maxDialPeriodMs = opts.persistentPeersMaxDialPeriodMs ?? 0;
    this.#backoffUnitMs = opts.dialBackoffUnitMs ?? 1000;
  }

  channels(): readonly ChannelDescriptor[] {
    return [{ id: PEX_CHANNEL, priority: 1, sendQueueCapacity: 10, recvMessageCapacity: MAX_MSG_SIZE, name: "pex" }];
  }

  /** Loads the book, checks the seeds, then runs the ensure-peers (or, for seeds, crawl) loop. */
  async start(sw: ReactorSwitch): Promise<void> {
    if (!isPexSwitch(sw)) {
      throw new UnsupportedSwitchError(
        "numPeers, dialPeerWithAddress, isDialingOrExistingAddress or stopPeerGracefully",
      );
    }
    this.#sw = sw;
    this.#seedAddrs = parseNetAddresses(this.#seedStrings);
    this.#running = true;
    if (this.#seedMode) {
      this.#schedule(0, async () => {
        if (this.#seedAddrs.length > 0) await this.#dialSeeds();
        else await this.#crawlPeers(this.#book.getSelection());
      });
    } else {
      // Spread the first round when already connected (thundering herd); otherwise go at once.
      const { outbound, inbound, dialing } = sw.numPeers();
      const first = outbound + inbound + dialing > 0 ? Math.random() * this.#ensurePeriodMs : 0;
      this.#schedule(first, () => this.ensurePeers());
    }
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Runs `first` after `delayMs`, then the periodic routine, until stop(). */
  #schedule(delayMs: number, first: () => void | Promise<void>): void {
    const period = this.#seedMode ? this.#crawlPeriodMs : this.#ensurePeriodMs;
    const tick = async (fn: () => void | Promise<void>) => {
      if (!this.#running) return;
      try {
        await fn();
      } catch (err) {
        this.#log.error({ err }, "PEX routine failed");
      }
      if (!this.#running) return;
      this.#timer = setTimeout(() => void tick(() => this.#periodic()), period);
    };
    this.#timer = setTimeout(() => void tick(first), delayMs);
  }

  async #periodic(): Promise<void> {
    if (!this.#seedMode) {
      this.ensurePeers();
      return;
    }
    this.#attemptDisconnects();
    await this.#crawlPeers(this.#book.getSelection());
    const cutoff = Date.now() - 24 * 60 * 60 * 1000;
    for (const [id, at] of this.#crawled) if (at < cutoff) this.#crawled.delete(id);
  }

  // ---- peers

  addPeer(peer: Peer): void {
    if (peer.isOutbound) {
      // Its address is in the book already (dialPeersAsync or a PEX answer); ask it for more.
      if (this.#book.needMoreAddrs()) this.requestAddrs(peer);
      return;
    }
    // An inbound peer is its own source; it is not asked right away (trusted less than outbound).
    try {
      const addr = netAddressFromNodeInfo(peer.nodeInfo, peer.remoteHost);
      this.#book.addAddress(addr, addr);
    } catch (err) {
      this.#log.debug({ err, peer: peer.id }, "Failed to add new address");
    }
  }

  removePeer(peer: Peer): void {
    this.#requestsSent.delete(peer.id);
    this.#lastReceivedRequests.delete(peer.id);
  }

  receive(_channelId: number, peer: Peer, bytes: Uint8Array): void {
    const sw = this.#switch();
    let msg: PexMessage;
    try {
      msg = decodePexMessage(bytes);
    } catch (err) {
      sw.stopPeerForError(peer, err);
      this.#book.markBad(peer.socketAddr, DEFAULT_BAN_TIME_MS);
      return;
    }
    if (msg.type === "request") {
      this.#onRequest(sw, peer);
      return;
    }
    if (!this.#requestsSent.has(peer.id)) {
      sw.stopPeerForError(peer, new PexProtocolError(`peer ${peer.id} sent an unsolicited PEX address list`));
      this.#book.markBad(peer.socketAddr, DEFAULT_BAN_TIME_MS);
      return;
    }
    this.#requestsSent.delete(peer.id);
    this.#receiveAddrs(sw, peer, msg.addrs);
  }

  #onRequest(sw: PexSwitch, peer: Peer): void {
    // Requests can amplify: limit how often each peer may ask, and how much we answer.
    if (this.#seedMode && !peer.isOutbound) {
      if (this.#lastReceivedRequests.has(peer.id)) return;
      this.#lastReceivedRequests.set(peer.id, Date.now());
      void this.#sendAddrs(peer, this.#book.getSelectionWithBias(BIAS_TO_SELECT_NEW_PEERS))
        .then(() => waitForSendQueue(peer, PEX_CHANNEL, FLUSH_STOP_MAX_WAIT_MS))
        .then(() => sw.stopPeerGracefully(peer));
      return;
    }
    const last = this.#lastReceivedRequests.get(peer.id);
    const now = Date.now();
    if (last !== undefined && last !== 0 && now - last < this.#ensurePeriodMs / 3) {
      sw.stopPeerForError(
        peer,
        new PexProtocolError(
          `peer (${peer.id}) sent next PEX request too soon (${now - last} ms after the last, ` +
            `min ${Math.round(this.#ensurePeriodMs / 3)} ms). Disconnecting`,
        ),
      );
      this.#book.markBad(peer.socketAddr, DEFAULT_BAN_TIME_MS);
      return;
    }
    // The first request is free; the clock starts with the second (receiveRequest).
    this.#lastReceivedRequests.set(peer.id, last === undefined ? 0 : now);
    void this.#sendAddrs(peer, this.#book.getSelection());
  }

  #receiveAddrs(sw: PexSwitch, src: Peer, addrs: readonly NetAddress[]): void {
    let srcAddr: NetAddress;
    try {
      srcAddr = netAddressFromNodeInfo(src.nodeInfo, src.remoteHost);
    } catch (err) {
      sw.stopPeerForError(src, err);
      return;
    }
    const srcIsSeed = this.#seedAddrs.some((s) => netAddressEquals(s, srcAddr) || s.id === srcAddr.id);
    for (const addr of addrs) {
      if (addr.id === sw.nodeId()) continue;
      try {
        this.#book.addAddress(addr, srcAddr);
      } catch (err) {
        this.#log.debug({ err }, "Failed to add new address");
        continue;
      }
      // Addresses from a seed are dialed right away (#2093).
      if (srcIsSeed) void this.#dialPeer(addr);
    }
  }

  /** Sends a PexRequest unless one is already outstanding for this peer. */
  requestAddrs(peer: Peer): void {
    if (this.#requestsSent.has(peer.id)) return;
    this.#log.debug({ from: peer.id }, "Request addrs");
    this.#requestsSent.add(peer.id);
    void peer.send(PEX_CHANNEL, encodePexMessage({ type: "request" }));
  }

  /** Sends addresses; host names are left out because Go peers only accept IPs. */
  async #sendAddrs(peer: Peer, addrs: readonly NetAddress[]): Promise<boolean> {
    const ips = addrs.filter((a) => isIP(a.host) !== 0);
    return peer.send(PEX_CHANNEL, encodePexMessage({ type: "addrs", addrs: ips }));
  }

  // ---- dialing

  #switch(): PexSwitch {
    if (!this.#sw) throw new SwitchNotRunningError("use PEX before start");
    return this.#sw;
  }

  /** Dials book addresses until outbound + dialing reaches max_num_outbound_peers (once). */
  ensurePeers(): void {
    const sw = this.#switch();
    const { outbound, inbound, dialing } = sw.numPeers();
    const numToDial = sw.maxNumOutboundPeers() - (outbound + dialing);
    this.#log.info({ numOutPeers: outbound, numInPeers: inbound, numDialing: dialing, numToDial }, "Ensure peers");
    if (numToDial <= 0) return;

    // Prefer vetted (old) addresses while we have few connections: bias in [10, 90].
    const newBias = Math.min(outbound, 8) * 10 + 10;
    const toDial = new Map<string, NetAddress>();
    for (let i = 0; i < numToDial * 3 && toDial.size < numToDial; i++) {
      const addr = this.#book.pickAddress(newBias);
      if (!addr || toDial.has(addr.id) || addr.id === sw.nodeId()) continue;
      if (sw.isDialingOrExistingAddress(addr)) continue;
      toDial.set(addr.id, addr);
    }
    for (const addr of toDial.values()) void this.#dialPeer(addr);

    if (this.#book.needMoreAddrs()) this.#book.reinstateBadPeers();
    if (this.#book.needMoreAddrs()) {
      const peers = sw.peers();
      const peer = peers[Math.floor(Math.random() * peers.length)];
      if (peer) {
        this.#log.info({ peer: peer.id }, "We need more addresses. Sending pexRequest to random peer");
        this.requestAddrs(peer);
      }
      // Seeds too, for peers that do not take part in PEX.
      if (toDial.size === 0) {
        this.#log.info("No addresses to dial. Falling back to seeds");
        void this.#dialSeeds();
      }
    }
  }

  /** Number of failed dials of `addr` since its last success (Reactor.AttemptsToDial). */
  attemptsToDial(addr: NetAddress): number {
    return this.#attemptsToDial.get(formatDialString(addr))?.number ?? 0;
  }

  /** Dials with per-address exponential backoff; gives up (bans) after 16 failures of a non-persistent address. */
  async #dialPeer(addr: NetAddress): Promise<boolean> {
    const sw = this.#switch();
    const key = formatDialString(addr);
    const text = formatNetAddress(addr);
    const info = this.#attemptsToDial.get(key);
    const attempts = info?.number ?? 0;
    if (!sw.isPeerPersistent(addr) && attempts > MAX_ATTEMPTS_TO_DIAL) {
      this.#book.markBad(addr, DEFAULT_BAN_TIME_MS);
      this.#log.debug({ addr: text }, `reached max attempts ${MAX_ATTEMPTS_TO_DIAL} to dial`);
      return false;
    }
    if (info && attempts > 0) {
      let backoffMs = Math.random() * this.#backoffUnitMs + 2 ** attempts * this.#backoffUnitMs;
      if (this.#maxDialPeriodMs > 0 && backoffMs > this.#maxDialPeriodMs && sw.isPeerPersistent(addr)) {
        backoffMs = this.#maxDialPeriodMs;
      }
      if (Date.now() - info.lastDialedMs < backoffMs) {
        this.#log.debug({ addr: text, backoffMs }, "too early to dial");
        return false;
      }
    }
    try {
      await sw.dialPeerWithAddress(addr);
    } catch (err) {
      if (err instanceof CurrentlyDialingOrExistingAddressError || err instanceof SwitchNotRunningError) return false;
      if (err instanceof SwitchAuthenticationFailureError) {
        this.#book.markBad(addr, DEFAULT_BAN_TIME_MS);
        this.#attemptsToDial.delete(key);
      } else {
        this.#book.markAttempt(addr);
        this.#attemptsToDial.set(key, { number: attempts + 1, lastDialedMs: Date.now() });
      }
      this.#log.debug({ err, addr: text, attempts: attempts + 1 }, "dialing failed");
      return false;
    }
    this.#attemptsToDial.delete(key);
    return true;
  }

  /** Dials seeds in random order until one connects. */
  async #dialSeeds(): Promise<void> {
    const sw = this.#switch();
    const order = shuffle([...this.#seedAddrs]);
    for (const seed of order) {
      try {
        await sw.dialPeerWithAddress(seed);
        return;
      } catch (err) {
        if (err instanceof CurrentlyDialingOrExistingAddressError) return;
        this.#log.error({ err, seed: formatNetAddress(seed) }, "Error dialing seed");
      }
    }
    if (this.#seedAddrs.length > 0) this.#log.error("Couldn't connect to any seeds");
  }

  // ---- seed mode

  async #crawlPeers(addrs: readonly NetAddress[]): Promise<void> {
    const sw = this.#switch();
    const now = Date.now();
    for (const addr of addrs) {
      const last = this.#crawled.get(addr.id);
      if (last !== undefined && now - last < MIN_TIME_BETWEEN_CRAWLS_MS) continue;
      this.#crawled.set(addr.id, now);
      if (!(await this.#dialPeer(addr))) continue;
      const peer = sw.peer(addr.id);
      if (peer) this.requestAddrs(peer);
    }
  }

  #attemptDisconnects(): void {
    const sw = this.#switch();
    for (const peer of sw.peers()) {
      if (peer.status().durationMs < this.#seedDisconnectWaitMs || peer.isPersistent) continue;
      sw.stopPeerGracefully(peer);
    }
  }
}

/** Resolves once `channelId`'s send queue is empty (or after maxWaitMs), so a close does not drop it. */
async function waitForSendQueue(peer: Peer, channelId: number, maxWaitMs: number): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  const pending = () => peer.status().channels.find((c) => c.id === channelId)?.sendQueueSize ?? 0;
  while (peer.isRunning() && pending() > 0 && Date.now() < deadline) {
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
  }
}
