import type { Block } from "../types/index.js";
import type { Clock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { BlocksyncPeerError } from "./errors.js";

/** Limits and timeouts of the block pool (CometBFT blocksync/pool.go constants, made options). */
export interface BlockPoolOptions {
  /** Requesters (heights being fetched or fetched but not yet applied) at most (maxTotalRequesters). */
  maxPendingRequests: number;
  /** Requests in flight to one peer at most (maxPendingRequestsPerPeer). */
  maxPendingPerPeer: number;
  /** A peer with requests in flight that sends nothing for this long is dropped (peerTimeout). */
  peerTimeoutMs: number;
  /** A height not delivered within this long is asked of another peer (requestRetrySeconds). */
  requestRetryMs: number;
  /** No requests until this long after start, so the first wave spreads over the peers (peerConnWait). */
  peerConnWaitMs: number;
  /** How long a peer that lied (bad block, shrinking range) is ignored. */
  banMs: number;
}

export function defaultBlockPoolOptions(): BlockPoolOptions {
  return {
    maxPendingRequests: 600,
    maxPendingPerPeer: 20,
    peerTimeoutMs: 15_000,
    requestRetryMs: 30_000,
    peerConnWaitMs: 3_000,
    banMs: 60_000,
  };
}

export interface BlockPoolDeps {
  clock: Clock;
  log: Logger;
  /** Sends a BlockRequest for `height` to the peer. */
  sendRequest(height: number, peerId: string): void;
  /** The peer misbehaved or timed out: the reactor stops it (the pool already dropped it). */
  onPeerError(peerId: string, err: BlocksyncPeerError): void;
}

interface PoolPeer {
  readonly id: string;
  base: number;
  height: number;
  /** Requests in flight to this peer. */
  numPending: number;
  cancelTimeout: (() => void) | undefined;
}

interface Requester {
  readonly height: number;
  /** The peer the block is currently asked of. */
  peerId: string | undefined;
  /** Every peer asked for this height since the last retry: a late answer from one is still welcome. */
  readonly asked: Set<string>;
  /** Peers that answered NoBlockResponse: not asked again until the retry timer fires. */
  readonly refused: Set<string>;
  block: Block | undefined;
  gotFrom: string | undefined;
  cancelRetry: (() => void) | undefined;
}

type Outgoing = { kind: "request"; height: number; peerId: string } | { kind: "error"; err: BlocksyncPeerError };

/**
 * Which block heights to fetch from which peer (CometBFT blocksync/pool.go BlockPool), without
 * goroutines: every input (a peer's range, a block, a pop, a timer) updates the requesters and
 * then assigns unassigned heights to peers whose [base, height] contains them. Requests and peer
 * errors go out through the deps callbacks after the pool's state is consistent, so callbacks may
 * call back into the pool.
 */
export class BlockPool {
  readonly #opts: BlockPoolOptions;
  readonly #deps: BlockPoolDeps;
  #startHeight: number;
  /** The lowest height not yet popped: the next block to apply. */
  #heightValue: number;
  readonly #requesters = new Map<number, Requester>();
  readonly #peers = new Map<string, PoolPeer>();
  /** Peer id → ban end (Unix ns). */
  readonly #banned = new Map<string, bigint>();
  #maxPeerHeightValue = 0;
  #running = false;
  #stopped = false;
  #cancelConnWait: (() => void) | undefined;
  readonly #outbox: Outgoing[] = [];
  #flushing = false;

  constructor(startHeight: number, deps: BlockPoolDeps, opts: Partial<BlockPoolOptions> = {}) {
    this.#startHeight = startHeight;
    this.#heightValue = startHeight;
    this.#deps = deps;
    this.#opts = { ...defaultBlockPoolOptions(), ...opts };
  }

  /** Moves the first height to fetch before the pool starts (block sync after state sync). */
  resetHeight(height: number): void {
    if (this.#running || this.#stopped) return;
    this.#startHeight = height;
    this.#heightValue = height;
  }

  /** Starts making requests (after peerConnWaitMs). */
  start(): void {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    if (this.#opts.peerConnWaitMs > 0) {
      this.#cancelConnWait = this.#deps.clock.schedule(this.#opts.peerConnWaitMs, () => {
        this.#cancelConnWait = undefined;
        this.#update();
      });
    }
  }

  /** Stops for good: timers cancelled, later inputs ignored. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#running = false;
    this.#cancelConnWait?.();
    for (const r of this.#requesters.values()) r.cancelRetry?.();
    for (const p of this.#peers.values()) p.cancelTimeout?.();
    this.#outbox.length = 0;
  }

  isRunning(): boolean {
    return this.#running;
  }

  /** The next height to apply. */
  height(): number {
    return this.#heightValue;
  }

  /** The biggest height a pool peer reported (0 without peers). */
  maxPeerHeight(): number {
    return this.#maxPeerHeightValue;
  }

  numPeers(): number {
    return this.#peers.size;
  }

  /** Requesters, and of them how many still wait for their block (GetStatus). */
  status(): { height: number; numPending: number; numRequesters: number; maxPeerHeight: number; numPeers: number } {
    let numPending = 0;
    for (const r of this.#requesters.values()) if (r.block === undefined) numPending++;
    return {
      height: this.#heightValue,
      numPending,
      numRequesters: this.#requesters.size,
      maxPeerHeight: this.#maxPeerHeightValue,
      numPeers: this.#peers.size,
    };
  }

  /**
   * IsCaughtUp: at least one peer, and our next height is at least the best peer height - 1 (block
   * H is verified with H+1's LastCommit, so the last block a peer has cannot be synced).
   */
  isCaughtUp(): boolean {
    if (this.#peers.size === 0) return false;
    return this.#maxPeerHeightValue === 0 || this.#heightValue >= this.#maxPeerHeightValue - 1;
  }

  isPeerBanned(peerId: string): boolean {
    const until = this.#banned.get(peerId);
    if (until === undefined) return false;
    if (this.#deps.clock.nowNs() < until) return true;
    this.#banned.delete(peerId);
    return false;
  }

  /** The peer's alleged [base, height] (StatusResponse). A peer going backwards is dropped and banned. */
  setPeerRange(peerId: string, base: number, height: number): void {
    if (this.#stopped) return;
    const peer = this.#peers.get(peerId);
    if (peer !== undefined) {
      if (base < peer.base || height < peer.height) {
        this.#deps.log.info(
          { peer: peerId, height, base, prevHeight: peer.height, prevBase: peer.base },
          "Peer is reporting height/base that is lower than what it previously reported",
        );
        this.#removePeerInternal(peerId);
        this.#ban(peerId);
        this.#update();
        return;
      }
      peer.base = base;
      peer.height = height;
    } else {
      if (this.isPeerBanned(peerId)) {
        this.#deps.log.debug({ peer: peerId }, "Ignoring banned peer");
        return;
      }
      this.#peers.set(peerId, { id: peerId, base, height, numPending: 0, cancelTimeout: undefined });
    }
    if (height > this.#maxPeerHeightValue) this.#maxPeerHeightValue = height;
    this.#update();
  }

  /** The peer is gone: its requests go to other peers, blocks it sent are dropped. */
  removePeer(peerId: string): void {
    if (this.#stopped) return;
    this.#removePeerInternal(peerId);
    this.#update();
  }

  /**
   * AddBlock: a block arrived from a peer. A block for a height we never asked that peer for is an
   * error (the peer is reported); a late duplicate of an already applied height is ignored.
   * Returns true when the block was taken.
   */
  addBlock(peerId: string, block: Block): boolean {
    if (this.#stopped) return false;
    const height = block.header.height;
    const r = this.#requesters.get(height);
    if (r === undefined) {
      if (height >= this.#heightValue || height < this.#startHeight) {
        this.#reportPeer(
          peerId,
          `peer sent us block #${height} we didn't expect (current height: ${this.#heightValue}, start height: ${this.#startHeight})`,
        );
        this.#update();
      } else {
        this.#deps.log.debug({ height, peer: peerId }, "got an already committed block (possibly from a slow peer)");
      }
      return false;
    }
    if (!r.asked.has(peerId)) {
      this.#reportPeer(peerId, `requested block #${height} from ${r.peerId ?? "nobody"}, not ${peerId}`);
      this.#update();
      return false;
    }
    const peer = this.#peers.get(peerId);
    if (r.peerId === peerId) {
      r.peerId = undefined;
      if (peer !== undefined) this.#decrPending(peer);
    }
    if (r.block !== undefined) {
      // Asked twice (after a retry) and answered twice: not an error.
      this.#update();
      return false;
    }
    r.block = block;
    r.gotFrom = peerId;
    r.cancelRetry?.();
    r.cancelRetry = undefined;
    // The height may still be assigned to another peer after a retry; free that slot.
    if (r.peerId !== undefined) {
      const other = this.#peers.get(r.peerId);
      r.peerId = undefined;
      if (other !== undefined) this.#decrPending(other);
    }
    this.#update();
    return true;
  }

  /** Blocks at height() and height()+1, when both have arrived (PeekTwoBlocks). */
  peekTwoBlocks(): { first: Block | undefined; second: Block | undefined } {
    return {
      first: this.#requesters.get(this.#heightValue)?.block,
      second: this.#requesters.get(this.#heightValue + 1)?.block,
    };
  }

  /** The block at height() was applied: move on (PopRequest). */
  popRequest(): void {
    if (this.#stopped) return;
    const r = this.#requesters.get(this.#heightValue);
    if (r !== undefined) {
      r.cancelRetry?.();
      this.#requesters.delete(this.#heightValue);
    }
    this.#heightValue++;
    this.#update();
  }

  /**
   * The block at `height` failed verification: drop and ban the peer that sent it and ask again
   * for everything it was asked (RemovePeerAndRedoAllPeerRequests). Returns that peer's id.
   */
  removePeerAndRedoAllPeerRequests(height: number): string | undefined {
    const peerId = this.#requesters.get(height)?.gotFrom;
    if (peerId === undefined || this.#stopped) return peerId;
    this.#removePeerInternal(peerId);
    this.#ban(peerId);
    this.#update();
    return peerId;
  }

  /** The peer answered NoBlockResponse for `height`: ask another peer (RedoRequestFrom). */
  redoRequestFrom(height: number, peerId: string): void {
    if (this.#stopped) return;
    const r = this.#requesters.get(height);
    if (r === undefined || r.peerId !== peerId) return;
    r.peerId = undefined;
    r.asked.delete(peerId);
    r.refused.add(peerId);
    const peer = this.#peers.get(peerId);
    if (peer !== undefined) this.#decrPending(peer);
    this.#update();
  }

  // ---- internals ---------------------------------------------------------------------------------

  #ban(peerId: string): void {
    this.#deps.log.debug({ peer: peerId }, "Banning peer");
    this.#banned.set(peerId, this.#deps.clock.nowNs() + BigInt(this.#opts.banMs) * 1_000_000n);
  }

  /** Drops the peer (not banned) and tells the reactor, which stops it. */
  #reportPeer(peerId: string, message: string): void {
    this.#removePeerInternal(peerId);
    this.#outbox.push({ kind: "error", err: new BlocksyncPeerError(peerId, message) });
  }

  #removePeerInternal(peerId: string): void {
    for (const r of this.#requesters.values()) {
      if (r.peerId === peerId) {
        r.peerId = undefined;
        r.cancelRetry?.();
        r.cancelRetry = undefined;
      }
      r.asked.delete(peerId);
      if (r.gotFrom === peerId) {
        r.block = undefined;
        r.gotFrom = undefined;
      }
    }
    const peer = this.#peers.get(peerId);
    if (peer === undefined) return;
    peer.cancelTimeout?.();
    this.#peers.delete(peerId);
    if (peer.height === this.#maxPeerHeightValue) {
      let max = 0;
      for (const p of this.#peers.values()) if (p.height > max) max = p.height;
      this.#maxPeerHeightValue = max;
    }
  }

  #incrPending(peer: PoolPeer): void {
    if (peer.numPending === 0) this.#resetPeerTimeout(peer);
    peer.numPending++;
  }

  #decrPending(peer: PoolPeer): void {
    peer.numPending = Math.max(0, peer.numPending - 1);
    if (peer.numPending === 0) {
      peer.cancelTimeout?.();
      peer.cancelTimeout = undefined;
    } else {
      this.#resetPeerTimeout(peer);
    }
  }

  #resetPeerTimeout(peer: PoolPeer): void {
    peer.cancelTimeout?.();
    peer.cancelTimeout = this.#deps.clock.schedule(this.#opts.peerTimeoutMs, () => {
      peer.cancelTimeout = undefined;
      if (this.#stopped || this.#peers.get(peer.id) !== peer) return;
      this.#deps.log.error({ peer: peer.id, timeoutMs: this.#opts.peerTimeoutMs }, "SendTimeout");
      this.#reportPeer(peer.id, "peer did not send us anything");
      this.#update();
    });
  }

  #onRetry(r: Requester): void {
    r.cancelRetry = undefined;
    if (this.#stopped || this.#requesters.get(r.height) !== r || r.block !== undefined) return;
    this.#deps.log.debug({ height: r.height, peer: r.peerId }, "Retrying block request after timeout");
    if (r.peerId !== undefined) {
      const peer = this.#peers.get(r.peerId);
      r.peerId = undefined;
      if (peer !== undefined) this.#decrPending(peer);
    }
    r.refused.clear();
    this.#update();
  }

  /** Creates requesters up to the limits and assigns every waiting height to a peer that has it. */
  #update(): void {
    if (this.#running && !this.#stopped && this.#cancelConnWait === undefined) {
      this.#makeRequesters();
      this.#assignRequests();
    }
    this.#flush();
  }

  #makeRequesters(): void {
    const limit = Math.min(this.#opts.maxPendingRequests, this.#peers.size * this.#opts.maxPendingPerPeer);
    for (;;) {
      const next = this.#heightValue + this.#requesters.size;
      if (this.#requesters.size >= limit || next > this.#maxPeerHeightValue) return;
      this.#requesters.set(next, {
        height: next,
        peerId: undefined,
        asked: new Set(),
        refused: new Set(),
        block: undefined,
        gotFrom: undefined,
        cancelRetry: undefined,
      });
    }
  }

  #assignRequests(): void {
    for (const r of this.#requesters.values()) {
      if (r.block !== undefined || r.peerId !== undefined) continue;
      const peer = this.#pickPeer(r);
      if (peer === undefined) continue;
      this.#incrPending(peer);
      r.peerId = peer.id;
      r.asked.add(peer.id);
      r.cancelRetry?.();
      r.cancelRetry = this.#deps.clock.schedule(this.#opts.requestRetryMs, () => this.#onRetry(r));
      this.#outbox.push({ kind: "request", height: r.height, peerId: peer.id });
    }
  }

  /** The least busy peer whose range holds the height (CometBFT sorts by receive rate instead). */
  #pickPeer(r: Requester): PoolPeer | undefined {
    let best: PoolPeer | undefined;
    for (const p of this.#peers.values()) {
      if (p.numPending >= this.#opts.maxPendingPerPeer) continue;
      if (r.height < p.base || r.height > p.height) continue;
      if (r.refused.has(p.id)) continue;
      if (best === undefined || p.numPending < best.numPending) best = p;
    }
    return best;
  }

  #flush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      for (let out = this.#outbox.shift(); out !== undefined; out = this.#outbox.shift()) {
        if (this.#stopped) break;
        if (out.kind === "request") {
          // Dropped meanwhile (peer removed, block arrived): nothing to send.
          if (this.#requesters.get(out.height)?.peerId !== out.peerId) continue;
          this.#deps.sendRequest(out.height, out.peerId);
        } else {
          this.#deps.onPeerError(out.err.peerId, out.err);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}
