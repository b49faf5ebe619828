import type { ChannelDescriptor, ChannelStatus, ConnectionStatus } from "../reactor.js";
import type { ChunkReader } from "./chunkReader.js";
import { MConnectionConfigError, MessageTooLargeError, PongTimeoutError, UnknownChannelError } from "./errors.js";
import { FlowMonitor } from "./flowMonitor.js";
import { decodePacket, encodePacketDelimited, maxPacketSize, type Packet } from "./wire.js";

/** [p2p] connection settings (conn.MConnConfig). */
export interface MConnectionConfig {
  /** [p2p] send_rate in bytes/s; 0 = unlimited. */
  sendRateBytesPerSec: number;
  /** [p2p] recv_rate in bytes/s; 0 = unlimited. */
  recvRateBytesPerSec: number;
  /** [p2p] max_packet_msg_payload_size: messages are cut into packets of at most this many data bytes. */
  maxPacketMsgPayloadSize: number;
  /** [p2p] flush_throttle_timeout: the longest small packets wait to be batched while the socket is busy. */
  flushThrottleMs: number;
  pingIntervalMs: number;
  /** Must be below pingIntervalMs. */
  pongTimeoutMs: number;
}

/** CometBFT's config defaults ([p2p] send_rate/recv_rate 5120000, payload 1024, flush 100ms, ping 60s, pong 45s). */
export const DEFAULT_MCONNECTION_CONFIG: MConnectionConfig = Object.freeze({
  sendRateBytesPerSec: 5_120_000,
  recvRateBytesPerSec: 5_120_000,
  maxPacketMsgPayloadSize: 1024,
  flushThrottleMs: 100,
  pingIntervalMs: 60_000,
  pongTimeoutMs: 45_000,
});

/** The byte stream an MConnection runs over (a SecretConnection in production). */
export interface MConnectionStream {
  readonly reader: ChunkReader;
  /** Returns false when the underlying socket's buffer is full. */
  write(data: Uint8Array): boolean;
  readonly writableLength: number;
  waitDrain(): Promise<void>;
  /** Half-close after pending writes (local close). */
  end(): void;
  /** Tear down now (failure). */
  destroy(): void;
}

// connection.go constants.
const NUM_BATCH_PACKET_MSGS = 10;
const MIN_WRITE_BUFFER_BYTES = 65_536;
const UPDATE_STATS_MS = 2_000;
const DEFAULT_SEND_QUEUE_CAPACITY = 1;
const DEFAULT_RECV_MESSAGE_CAPACITY = 22_020_096;
const DEFAULT_SEND_TIMEOUT_MS = 10_000;
/** Socket backlog above which the send loop waits for 'drain' instead of encrypting more. */
const WRITE_HIGH_WATER_BYTES = 1024 * 1024;
/** Bytes the send loop encodes before yielding to the event loop. */
const YIELD_EVERY_BYTES = 64 * 1024;
/** After a local close, how long the remote gets to finish the FIN exchange before we destroy. */
const CLOSE_GRACE_MS = 1_000;

interface SendWaiter {
  readonly msg: Uint8Array;
  readonly resolve: (queued: boolean) => void;
  cancelTimer: () => void;
}

class Channel {
  readonly desc: ChannelDescriptor;
  readonly sendQueueCapacity: number;
  readonly recvMessageCapacity: number;
  readonly queue: Uint8Array[] = [];
  readonly waiters: SendWaiter[] = [];
  sending: Uint8Array | undefined;
  sendingOffset = 0;
  /** Exponential moving average of bytes sent (decays ×0.8 every UPDATE_STATS_MS). */
  recentlySent = 0;
  #recving: Uint8Array[] = [];
  #recvBytes = 0;

  constructor(desc: ChannelDescriptor) {
    if (!(desc.priority > 0)) {
      throw new MConnectionConfigError(
        `channel ${desc.name} (${desc.id}) has priority ${desc.priority}. Channel priority must be a positive number`,
      );
    }
    this.desc = desc;
    this.sendQueueCapacity = desc.sendQueueCapacity > 0 ? desc.sendQueueCapacity : DEFAULT_SEND_QUEUE_CAPACITY;
    this.recvMessageCapacity = desc.recvMessageCapacity > 0 ? desc.recvMessageCapacity : DEFAULT_RECV_MESSAGE_CAPACITY;
  }

  /** Queued messages plus the one being cut into packets (sendQueueSize). */
  get sendQueueSize(): number {
    return this.queue.length + (this.sending === undefined ? 0 : 1);
  }

  /** Takes the next message into `sending` if none is in progress; true when there is data to send. */
  isSendPending(): boolean {
    if (this.sending === undefined) {
      const next = this.queue.shift();
      if (next === undefined) return false;
      this.sending = next;
      this.sendingOffset = 0;
      this.admitWaiter();
    }
    return true;
  }

  /** The next packet of the message in progress (nextPacketMsg); call only when isSendPending(). */
  nextPacket(maxPayload: number): Packet {
    const msg = this.sending as Uint8Array;
    const end = Math.min(msg.length, this.sendingOffset + maxPayload);
    const data = msg.subarray(this.sendingOffset, end);
    const eof = end === msg.length;
    if (eof) this.sending = undefined;
    else this.sendingOffset = end;
    return { kind: "msg", channelId: this.desc.id, eof, data };
  }

  /** Moves the oldest blocked send() into the queue now that there is room. */
  admitWaiter(): void {
    while (this.queue.length < this.sendQueueCapacity) {
      const w = this.waiters.shift();
      if (!w) return;
      w.cancelTimer();
      this.queue.push(w.msg);
      w.resolve(true);
    }
  }

  /** Appends a packet's data; returns the complete message on eof (recvPacketMsg). */
  recvPacket(data: Uint8Array, eof: boolean): Uint8Array | undefined {
    const total = this.#recvBytes + data.length;
    if (total > this.recvMessageCapacity) {
      throw new MessageTooLargeError(this.desc.id, this.recvMessageCapacity, total);
    }
    if (data.length > 0) {
      this.#recving.push(data);
      this.#recvBytes = total;
    }
    if (!eof) return undefined;
    const parts = this.#recving;
    this.#recving = [];
    this.#recvBytes = 0;
    if (parts.length === 1) return parts[0];
    const out = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }

  failWaiters(): void {
    for (const w of this.waiters.splice(0)) {
      w.cancelTimer();
      w.resolve(false);
    }
  }

  status(): ChannelStatus {
    return {
      id: this.desc.id,
      sendQueueCapacity: this.sendQueueCapacity,
      sendQueueSize: this.sendQueueSize,
      priority: this.desc.priority,
      recentlySent: Math.trunc(this.recentlySent),
    };
  }
}

const STATES = { created: "created", running: "running", stopped: "stopped" } as const;
type State = (typeof STATES)[keyof typeof STATES];

/**
 * Multiplexes prioritized channels over one stream (p2p/conn/connection.go MConnection).
 *
 * Sending: messages wait in per-channel queues; a send loop repeatedly picks the pending channel
 * with the lowest recentlySent/priority and emits up to 10 packets of at most
 * maxPacketMsgPayloadSize data bytes, rate-limited by the send monitor.
 *
 * Flushing (our choice; CometBFT always waits for its 100 ms throttle timer): packets are encoded
 * into a write buffer. When the socket has nothing in flight the buffer is flushed at the end of
 * the batch (so a lone message goes out at once, and messages queued in the same tick share
 * frames). While the socket is still busy the buffer keeps growing and is flushed at most
 * flushThrottleMs after the previous flush, or as soon as it holds 64 KiB.
 */
export class MConnection {
  readonly #stream: MConnectionStream;
  readonly #config: MConnectionConfig;
  readonly #channels: Channel[];
  readonly #channelsById = new Map<number, Channel>();
  readonly #maxPacketBytes: number;
  readonly #sendMonitor = new FlowMonitor();
  readonly #recvMonitor = new FlowMonitor();
  readonly #createdAt = performance.now();
  #state: State = STATES.created;
  #onReceive: ((channelId: number, msg: Uint8Array) => void) | undefined;
  #onError: ((err: unknown) => void) | undefined;
  #pendingError: { err: unknown } | undefined;
  #pumping = false;
  #writeBuf: Uint8Array[] = [];
  #writeBufBytes = 0;
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #pongTimer: ReturnType<typeof setTimeout> | undefined;
  #statsTimer: ReturnType<typeof setInterval> | undefined;

  constructor(stream: MConnectionStream, channels: readonly ChannelDescriptor[], config: MConnectionConfig) {
    if (!(config.pongTimeoutMs < config.pingIntervalMs)) {
      throw new MConnectionConfigError(
        `pong timeout (${config.pongTimeoutMs}ms) must be less than ping interval (${config.pingIntervalMs}ms), otherwise the next ping resets the pong timer`,
      );
    }
    if (!(config.maxPacketMsgPayloadSize > 0)) {
      throw new MConnectionConfigError(
        `max_packet_msg_payload_size must be positive, got ${config.maxPacketMsgPayloadSize}`,
      );
    }
    this.#stream = stream;
    this.#config = config;
    this.#channels = channels.map((d) => new Channel(d));
    for (const ch of this.#channels) this.#channelsById.set(ch.desc.id, ch);
    this.#maxPacketBytes = maxPacketSize(config.maxPacketMsgPayloadSize);
  }

  /** Starts the receive loop and the keepalive; onError fires once when the connection fails. */
  start(onReceive: (channelId: number, msg: Uint8Array) => void, onError: (err: unknown) => void): void {
    if (this.#state !== STATES.created) {
      if (this.#pendingError) {
        const { err } = this.#pendingError;
        this.#pendingError = undefined;
        onError(err);
      }
      return;
    }
    this.#state = STATES.running;
    this.#onReceive = onReceive;
    this.#onError = onError;
    this.#pingTimer = setInterval(() => this.#sendPing(), this.#config.pingIntervalMs);
    this.#statsTimer = setInterval(() => {
      for (const ch of this.#channels) ch.recentlySent = Math.trunc(ch.recentlySent * 0.8);
    }, UPDATE_STATS_MS);
    this.#pingTimer.unref();
    this.#statsTimer.unref();
    void this.#recvLoop();
    this.#kick();
  }

  /** Queues msg, waiting (up to 10 s, as CometBFT) while the channel's queue is full. */
  send(channelId: number, msg: Uint8Array): Promise<boolean> {
    if (this.#state === STATES.stopped) return Promise.resolve(false);
    const ch = this.#channelsById.get(channelId);
    if (!ch) return Promise.resolve(false);
    if (ch.queue.length < ch.sendQueueCapacity && ch.waiters.length === 0) {
      ch.queue.push(msg);
      this.#kick();
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        const i = ch.waiters.indexOf(waiter);
        if (i >= 0) ch.waiters.splice(i, 1);
        resolve(false);
      }, DEFAULT_SEND_TIMEOUT_MS);
      const waiter: SendWaiter = {
        msg,
        resolve: (queued) => {
          if (queued) this.#kick();
          resolve(queued);
        },
        cancelTimer: () => clearTimeout(timer),
      };
      ch.waiters.push(waiter);
    });
  }

  /** Queues msg unless the channel's queue is full. */
  trySend(channelId: number, msg: Uint8Array): boolean {
    if (this.#state === STATES.stopped) return false;
    const ch = this.#channelsById.get(channelId);
    if (!ch || ch.queue.length >= ch.sendQueueCapacity) return false;
    ch.queue.push(msg);
    this.#kick();
    return true;
  }

  /** Whether trySend would queue right now (MConnection.CanSend). */
  canSend(channelId: number): boolean {
    const ch = this.#channelsById.get(channelId);
    return this.#state !== STATES.stopped && ch !== undefined && ch.queue.length < ch.sendQueueCapacity;
  }

  isRunning(): boolean {
    return this.#state === STATES.running;
  }

  status(): ConnectionStatus {
    return {
      durationMs: Math.round(performance.now() - this.#createdAt),
      sendMonitor: this.#sendMonitor.status(),
      recvMonitor: this.#recvMonitor.status(),
      channels: this.#channels.map((c) => c.status()),
    };
  }

  /**
   * Stops without reporting an error (MConnection.FlushStop): messages already queued are written
   * out (ignoring the rate limit), then the stream half-closes. Blocked send() calls resolve false.
   */
  close(): void {
    if (this.#state === STATES.stopped) return;
    this.#state = STATES.stopped;
    this.#cleanup();
    for (let ch = this.#selectChannel(); ch !== undefined; ch = this.#selectChannel()) {
      this.#bufferPacket(encodePacketDelimited(ch.nextPacket(this.#config.maxPacketMsgPayloadSize)));
    }
    this.#flushNow();
    this.#stream.end();
    setTimeout(() => this.#stream.destroy(), CLOSE_GRACE_MS).unref();
  }

  #stopForError(err: unknown): void {
    if (this.#state === STATES.stopped) return;
    const wasRunning = this.#state === STATES.running;
    this.#state = STATES.stopped;
    this.#cleanup();
    this.#stream.destroy();
    if (wasRunning) this.#onError?.(err);
    else this.#pendingError = { err };
  }

  #cleanup(): void {
    clearInterval(this.#pingTimer);
    clearInterval(this.#statsTimer);
    clearTimeout(this.#pongTimer);
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    for (const ch of this.#channels) ch.failWaiters();
  }

  readonly #isStopped = (): boolean => this.#state === STATES.stopped;

  // ---- sending ----

  #kick(): void {
    if (this.#pumping || this.#state === STATES.stopped) return;
    this.#pumping = true;
    // Deferred so that messages queued in the same tick are batched (and priorities compared).
    queueMicrotask(() => void this.#pump());
  }

  #selectChannel(): Channel | undefined {
    let least = Number.POSITIVE_INFINITY;
    let pick: Channel | undefined;
    for (const ch of this.#channels) {
      if (!ch.isSendPending()) continue;
      const ratio = ch.recentlySent / ch.desc.priority;
      if (ratio < least) {
        least = ratio;
        pick = ch;
      }
    }
    return pick;
  }

  async #pump(): Promise<void> {
    let sinceYield = 0;
    try {
      while (this.#state !== STATES.stopped && this.#selectChannel() !== undefined) {
        await this.#sendMonitor.limit(this.#maxPacketBytes, this.#config.sendRateBytesPerSec, this.#isStopped);
        if (this.#isStopped()) break;
        let written = 0;
        for (let i = 0; i < NUM_BATCH_PACKET_MSGS; i++) {
          const ch = this.#selectChannel();
          if (!ch) break;
          const bytes = encodePacketDelimited(ch.nextPacket(this.#config.maxPacketMsgPayloadSize));
          this.#bufferPacket(bytes);
          ch.recentlySent += bytes.length;
          written += bytes.length;
        }
        this.#sendMonitor.update(written);
        this.#scheduleFlush();
        sinceYield += written;
        if (this.#stream.writableLength >= WRITE_HIGH_WATER_BYTES) {
          await this.#stream.waitDrain();
          sinceYield = 0;
        } else if (sinceYield >= YIELD_EVERY_BYTES) {
          // Let timers and the receive loop run between large sends.
          await new Promise((resolve) => setImmediate(resolve));
          sinceYield = 0;
        }
      }
    } catch (err) {
      this.#stopForError(err);
    } finally {
      this.#pumping = false;
    }
  }

  #bufferPacket(bytes: Uint8Array): void {
    this.#writeBuf.push(bytes);
    this.#writeBufBytes += bytes.length;
  }

  #scheduleFlush(): void {
    if (this.#writeBufBytes === 0) return;
    const now = performance.now();
    const sinceFlush = now - this.#lastFlushAt;
    if (
      this.#stream.writableLength === 0 ||
      this.#writeBufBytes >= MIN_WRITE_BUFFER_BYTES ||
      sinceFlush >= this.#config.flushThrottleMs
    ) {
      this.#flushNow();
      return;
    }
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flushNow();
    }, this.#config.flushThrottleMs - sinceFlush);
  }

  #flushNow(): void {
    if (this.#flushTimer !== undefined) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
    }
    if (this.#writeBufBytes === 0) return;
    const parts = this.#writeBuf;
    const data = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts, this.#writeBufBytes);
    this.#writeBuf = [];
    this.#writeBufBytes = 0;
    this.#lastFlushAt = performance.now();
    try {
      this.#stream.write(data);
    } catch (err) {
      this.#stopForError(err);
    }
  }

  #sendControl(kind: "ping" | "pong"): void {
    if (this.#state === STATES.stopped) return;
    const bytes = encodePacketDelimited({ kind });
    this.#bufferPacket(bytes);
    this.#sendMonitor.update(bytes.length);
    this.#flushNow();
  }

  #sendPing(): void {
    this.#sendControl("ping");
    clearTimeout(this.#pongTimer);
    this.#pongTimer = setTimeout(
      () => this.#stopForError(new PongTimeoutError(this.#config.pongTimeoutMs)),
      this.#config.pongTimeoutMs,
    );
  }

  // ---- receiving ----

  async #recvLoop(): Promise<void> {
    try {
      while (this.#state === STATES.running) {
        await this.#recvMonitor.limit(this.#maxPacketBytes, this.#config.recvRateBytesPerSec, this.#isStopped);
        if (this.#isStopped()) return;
        const { msg, wireBytes } = await this.#stream.reader.readDelimited(this.#maxPacketBytes);
        if (this.#isStopped()) return;
        this.#recvMonitor.update(wireBytes);
        const packet = decodePacket(msg);
        if (packet.kind === "ping") {
          this.#sendControl("pong");
        } else if (packet.kind === "pong") {
          clearTimeout(this.#pongTimer);
          this.#pongTimer = undefined;
        } else {
          const ch = this.#channelsById.get(packet.channelId);
          if (!ch) throw new UnknownChannelError(packet.channelId);
          const full = ch.recvPacket(packet.data, packet.eof);
          if (full !== undefined) this.#onReceive?.(packet.channelId, full);
        }
      }
    } catch (err) {
      this.#stopForError(err);
    }
  }
}
