import { createHash } from "node:crypto";
import {
  type CheckTxOptions,
  MempoolFullError,
  type TxAddedInfo,
  TxInCacheError,
  TxTooLargeError,
} from "../mempool/index.js";
import type { ChannelDescriptor, Peer, Reactor, ReactorSwitch } from "../p2p/reactor.js";
import type { Logger } from "../util/logger.js";
import { decodeMempoolTxs, encodeMempoolTxs, mempoolRecvMessageCapacity } from "./mempoolCodec.js";
import { PeerSender } from "./peerSender.js";

/** The mempool reactor's channel (mempool.MempoolChannel). */
export const MEMPOOL_CHANNEL = 0x30;

/** What the reactor uses of the mempool (mempool/ Mempool satisfies it). */
export interface MempoolPort {
  checkTx(tx: Uint8Array, opts?: CheckTxOptions): Promise<unknown>;
  onTxAdded(cb: (tx: Uint8Array, info: TxAddedInfo) => void): () => void;
  /** Txs in arrival order, for a peer that just connected. */
  txs(): Uint8Array[];
}

export interface MempoolReactorOptions {
  /** `[mempool] broadcast`: relay admitted txs to peers. */
  broadcast: boolean;
  /** `[mempool] max_tx_bytes`: sizes the channel's largest accepted message. */
  maxTxBytes: number;
  /** Received txs waiting for CheckTx before new ones are dropped (default 10000). */
  maxPendingChecks?: number;
  /** Messages that may wait for one peer before new ones are dropped (default 10000). */
  maxPendingPerPeer?: number;
}

function txKey(tx: Uint8Array): string {
  return createHash("sha256").update(tx).digest("hex");
}

/**
 * The mempool reactor (mempool/reactor.go): txs from peers go to the mempool's CheckTx; every tx the
 * mempool admits (from RPC or a peer) is sent to each peer except those it came from, one tx per
 * message as v0.38 does. A peer that connects gets the txs already in the mempool. Unlike CometBFT it
 * does not hold a tx back from a peer whose height is below the tx's height - 1.
 */
export class MempoolReactor implements Reactor {
  readonly name = "MEMPOOL";
  readonly #mempool: MempoolPort;
  readonly #opts: MempoolReactorOptions;
  readonly #log: Logger;
  readonly #sender: PeerSender;
  readonly #channels: readonly ChannelDescriptor[];
  readonly #peers = new Map<string, Peer>();
  /**
   * Peers each admitted tx came from, by tx hash (CometBFT mempoolTx.senders), for the replay to new
   * peers; entries for txs no longer in the mempool are pruned on each replay, and the map is bounded.
   */
  readonly #senders = new Map<string, Set<string>>();
  #unsubscribe: (() => void) | undefined;
  /** CheckTx calls for received txs run one at a time, in arrival order. */
  #checks: Promise<void> = Promise.resolve();
  #pendingChecks = 0;
  #stopped = false;

  constructor(mempool: MempoolPort, opts: MempoolReactorOptions, log: Logger) {
    this.#mempool = mempool;
    this.#opts = opts;
    this.#log = log;
    this.#sender = new PeerSender(
      log,
      opts.maxPendingPerPeer === undefined ? {} : { maxPending: opts.maxPendingPerPeer },
    );
    this.#channels = [
      {
        id: MEMPOOL_CHANNEL,
        priority: 5,
        // CometBFT leaves it at the default (1).
        sendQueueCapacity: 1,
        recvMessageCapacity: mempoolRecvMessageCapacity(opts.maxTxBytes),
        name: "mempool",
      },
    ];
  }

  channels(): readonly ChannelDescriptor[] {
    return this.#channels;
  }

  start(_sw: ReactorSwitch): void {
    this.#stopped = false;
    if (!this.#opts.broadcast) {
      this.#log.info("tx broadcasting is disabled");
      return;
    }
    this.#unsubscribe ??= this.#mempool.onTxAdded((tx, info) => this.#onTxAdded(tx, info));
  }

  stop(): void {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#sender.clear();
  }

  addPeer(peer: Peer): void {
    this.#peers.set(peer.id, peer);
    if (!this.#opts.broadcast || this.#stopped) return;
    const live = new Set<string>();
    for (const tx of this.#mempool.txs()) {
      const key = txKey(tx);
      live.add(key);
      if (this.#senders.get(key)?.has(peer.id)) continue;
      this.#sender.send(peer, MEMPOOL_CHANNEL, encodeMempoolTxs([tx]));
    }
    for (const key of this.#senders.keys()) if (!live.has(key)) this.#senders.delete(key);
  }

  removePeer(peer: Peer, _reason: unknown): void {
    this.#sender.removePeer(peer);
    if (this.#peers.get(peer.id) !== peer) return;
    this.#peers.delete(peer.id);
  }

  /** Throws InvalidMempoolMessageError for bytes that are not a mempool Message (the peer is stopped). */
  receive(_channelId: number, peer: Peer, msg: Uint8Array): void {
    const txs = decodeMempoolTxs(msg);
    if (txs.length === 0) {
      this.#log.error({ peer: peer.id }, "received empty txs from peer");
      return;
    }
    if (this.#stopped) return;
    for (const tx of txs) {
      if (this.#pendingChecks >= (this.#opts.maxPendingChecks ?? 10_000)) {
        this.#log.debug({ peer: peer.id }, "too many txs waiting for CheckTx; dropping tx");
        continue;
      }
      this.#pendingChecks++;
      this.#checks = this.#checks.then(() => this.#check(tx, peer.id));
    }
  }

  /** Resolves once every received tx so far has been through CheckTx (tests). */
  idle(): Promise<void> {
    return this.#checks;
  }

  async #check(tx: Uint8Array, sender: string): Promise<void> {
    try {
      await this.#mempool.checkTx(tx, { sender });
    } catch (err) {
      if (err instanceof TxInCacheError) {
        // Remember this sender too, so the tx is not replayed to it (CometBFT addSender).
        this.#senders.get(txKey(tx))?.add(sender);
      } else if (err instanceof MempoolFullError || err instanceof TxTooLargeError) {
        this.#log.debug({ peer: sender, err: err.message }, "could not add tx from peer");
      } else {
        this.#log.info({ peer: sender, err }, "could not check tx");
      }
    } finally {
      this.#pendingChecks--;
    }
  }

  #onTxAdded(tx: Uint8Array, info: TxAddedInfo): void {
    if (this.#stopped) return;
    if (info.sender !== undefined) this.#rememberSender(txKey(tx), info.sender);
    let bytes: Uint8Array | undefined;
    for (const peer of this.#peers.values()) {
      if (peer.id === info.sender) continue;
      bytes ??= encodeMempoolTxs([tx]);
      this.#sender.send(peer, MEMPOOL_CHANNEL, bytes);
    }
  }

  #rememberSender(key: string, sender: string): void {
    const set = this.#senders.get(key);
    if (set !== undefined) {
      set.add(sender);
      return;
    }
    // Bounded: forget the oldest entry (only the replay to new peers consults it).
    if (this.#senders.size >= 100_000) {
      const oldest = this.#senders.keys().next();
      if (oldest.done !== true) this.#senders.delete(oldest.value);
    }
    this.#senders.set(key, new Set([sender]));
  }
}
