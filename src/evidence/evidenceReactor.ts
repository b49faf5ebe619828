import { EvidenceList as PbEvidenceList } from "cosmjs-types/tendermint/types/evidence";
import type { ChannelDescriptor, Peer, Reactor, ReactorSwitch } from "../p2p/reactor.js";
import {
  type Evidence,
  evidenceFromProto,
  evidenceToProto,
  hashEvidence,
  validateEvidenceBasic,
} from "../types/index.js";
import { bytesToHex } from "../util/bytes.js";
import { type Clock, systemClock } from "../util/clock.js";
import type { Logger } from "../util/logger.js";
import { InvalidEvidenceMessageError, InvalidEvidenceSubmissionError, UnverifiableEvidenceError } from "./errors.js";

/** evidence.EvidenceChannel. */
export const EVIDENCE_CHANNEL = 0x38;
/** evidence/reactor.go maxMsgSize. */
export const EVIDENCE_MAX_MSG_BYTES = 1_048_576;
/** evidence/reactor.go broadcastEvidenceIntervalS: how often all pending evidence is offered again. */
export const DEFAULT_EVIDENCE_BROADCAST_INTERVAL_MS = 10_000;

/** The pool as the reactor uses it (EvidencePool satisfies it). */
export interface EvidenceGossipPool {
  addEvidence(ev: Evidence): Promise<void>;
  /** Pending evidence in the order it is offered to peers. */
  pendingList(): Evidence[];
  /** Returns the unsubscribe function. */
  onEvidenceAdded(cb: (ev: Evidence) => void): () => void;
}

export interface EvidenceReactorOptions {
  /** Period after which every peer is offered all pending evidence again (CometBFT: 10 s). */
  broadcastIntervalMs?: number;
  clock?: Clock;
  /**
   * The peer's consensus height, when known. Evidence is then held back until the peer has
   * reached the height after it (CometBFT prepareEvidenceMessage); without it evidence is sent at once.
   */
  peerHeight?: (peer: Peer) => number | undefined;
  log: Logger;
}

interface PeerEntry {
  peer: Peer;
  /** Hashes (hex) of evidence sent to, or received from, this peer since the last re-send tick. */
  known: Set<string>;
}

/** tendermint.types.EvidenceList carrying one piece, as broadcastEvidenceRoutine sends it. */
export function encodeEvidenceListMessage(list: readonly Evidence[]): Uint8Array {
  return PbEvidenceList.encode({ evidence: list.map(evidenceToProto) }).finish();
}

/** evidenceListFromProto: decodes and runs ValidateBasic on each piece; throws InvalidEvidenceMessageError. */
export function decodeEvidenceListMessage(bytes: Uint8Array): Evidence[] {
  let list: Evidence[];
  try {
    list = PbEvidenceList.decode(bytes).evidence.map(evidenceFromProto);
  } catch (err) {
    throw new InvalidEvidenceMessageError(`undecodable evidence list: ${(err as Error).message}`, { cause: err });
  }
  list.forEach((ev, i) => {
    try {
      validateEvidenceBasic(ev);
    } catch (err) {
      throw new InvalidEvidenceMessageError(`invalid evidence (#${i}): ${(err as Error).message}`, { cause: err });
    }
  });
  return list;
}

/**
 * Gossips evidence (CometBFT evidence/reactor.go) on channel 0x38: each peer is sent every pending
 * piece it has not been sent yet — when the peer connects, when evidence is added, and again for
 * all still-pending evidence every broadcast interval. Received evidence goes to the pool; a peer
 * that sends evidence failing ValidateBasic or verification is stopped.
 *
 * CometBFT sends a piece only once the peer's consensus height is above the evidence height (a
 * peer that is behind would find it unverifiable). That check runs only when a `peerHeight` source
 * is given; held-back evidence is offered again on the next tick. The max-age skip of old evidence
 * is left out: expired evidence leaves the pending list anyway. Evidence received for a height
 * this node has not committed yet is ignored, not punished.
 */
export class EvidenceReactor implements Reactor {
  readonly name = "Evidence";
  readonly #pool: EvidenceGossipPool;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #peerHeight: ((peer: Peer) => number | undefined) | undefined;
  readonly #peers = new Map<string, PeerEntry>();
  #sw: ReactorSwitch | undefined;
  #unsubscribe: (() => void) | undefined;
  #cancelTick: (() => void) | undefined;

  constructor(pool: EvidenceGossipPool, opts: EvidenceReactorOptions) {
    this.#pool = pool;
    this.#log = opts.log;
    this.#clock = opts.clock ?? systemClock;
    this.#intervalMs = opts.broadcastIntervalMs ?? DEFAULT_EVIDENCE_BROADCAST_INTERVAL_MS;
    this.#peerHeight = opts.peerHeight;
  }

  channels(): readonly ChannelDescriptor[] {
    return [
      {
        id: EVIDENCE_CHANNEL,
        priority: 6,
        sendQueueCapacity: 1,
        recvMessageCapacity: EVIDENCE_MAX_MSG_BYTES,
        name: "evidence",
      },
    ];
  }

  start(sw: ReactorSwitch): void {
    this.#sw = sw;
    this.#unsubscribe = this.#pool.onEvidenceAdded((ev) => {
      for (const entry of this.#peers.values()) this.#offer(entry, ev);
    });
    this.#scheduleTick();
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#cancelTick?.();
    this.#cancelTick = undefined;
    this.#peers.clear();
    this.#sw = undefined;
  }

  addPeer(peer: Peer): void {
    const entry: PeerEntry = { peer, known: new Set() };
    this.#peers.set(peer.id, entry);
    for (const ev of this.#pool.pendingList()) this.#offer(entry, ev);
  }

  removePeer(peer: Peer, _reason: unknown): void {
    const entry = this.#peers.get(peer.id);
    if (entry?.peer === peer) this.#peers.delete(peer.id);
  }

  /** Throws InvalidEvidenceMessageError (the switch stops the peer) for undecodable or malformed evidence. */
  receive(_channelId: number, peer: Peer, msg: Uint8Array): void {
    const list = decodeEvidenceListMessage(msg);
    const entry = this.#peers.get(peer.id);
    for (const ev of list) entry?.known.add(evidenceKey(ev));
    this.#addAll(peer, list).catch((err: unknown) => {
      this.#log.error({ err, peer: peer.id }, "evidence from peer not handled");
    });
  }

  /** Receive: adds in order; the first piece that fails verification stops the peer. */
  async #addAll(peer: Peer, list: readonly Evidence[]): Promise<void> {
    for (const ev of list) {
      try {
        await this.#pool.addEvidence(ev);
      } catch (err) {
        if (err instanceof UnverifiableEvidenceError) {
          this.#log.debug({ err: err.message, peer: peer.id }, "evidence from a peer ahead of this node");
          continue;
        }
        if (err instanceof InvalidEvidenceSubmissionError) {
          this.#log.info({ err: err.message, peer: peer.id }, "peer sent invalid evidence");
          this.#sw?.stopPeerForError(peer, err);
          return;
        }
        this.#log.error({ err, peer: peer.id }, "evidence has not been added");
      }
    }
  }

  #offer(entry: PeerEntry, ev: Evidence): void {
    const key = evidenceKey(ev);
    if (entry.known.has(key) || !entry.peer.isRunning()) return;
    const peerHeight = this.#peerHeight?.(entry.peer);
    if (peerHeight !== undefined && peerHeight <= ev.voteA.height) return;
    // trySend, not send: a peer that stops reading must not collect a waiting send per piece per
    // tick. What does not fit now is offered again on the next tick.
    if (entry.peer.trySend(EVIDENCE_CHANNEL, encodeEvidenceListMessage([ev]))) entry.known.add(key);
  }

  /** Every interval, forget what was sent and offer all pending evidence again (CometBFT restarts its list walk). */
  #scheduleTick(): void {
    this.#cancelTick = this.#clock.schedule(this.#intervalMs, () => {
      if (this.#sw === undefined) return;
      const pending = this.#pool.pendingList();
      for (const entry of this.#peers.values()) {
        entry.known.clear();
        for (const ev of pending) this.#offer(entry, ev);
      }
      this.#scheduleTick();
    });
  }
}

function evidenceKey(ev: Evidence): string {
  return bytesToHex(hashEvidence(ev));
}
