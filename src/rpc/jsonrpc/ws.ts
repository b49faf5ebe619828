import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import type { RawData, WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../../util/logger.js";
import { DeadlineSweeper } from "./deadlineSweeper.js";
import { isPromise, type MaybePromise } from "./dispatch.js";

/**
 * JSON-RPC over WebSocket for both servers, on `ws`: the upgrade (the server's path and origin
 * rules), the read limit, ping/pong with a read deadline, frames handled in order (the node RPC)
 * or concurrently (geth), ordered writes with their limits (a bounded write queue with a deadline
 * per frame, or a byte budget past which reading pauses and a stuck client is cut), and the
 * per-connection subscriptions registry, cancelled when the connection closes. The servers supply
 * the frame handler and what their pushed messages look like.
 */

/** A live subscription on a connection. */
export interface WsSubscription {
  /** Stops pushing; called once when the client unsubscribes or the connection closes. */
  cancel(): void;
}

/** One frame being handled: work to run once its answer has been queued. */
export class WsFrame {
  readonly #after: (() => void)[] = [];

  /** Runs `fn` after this frame's answer has been queued, so that pushes never overtake it. */
  afterReply(fn: () => void): void {
    this.#after.push(fn);
  }

  /** Runs the deferred work (the transport calls it once the answer is queued). */
  replied(): void {
    for (const fn of this.#after) fn();
  }
}

export interface WsTransportOptions<Sub extends WsSubscription = WsSubscription> {
  /** Read limit per message; a larger frame closes the connection with 1009. */
  readonly maxMessageBytes: number;
  /** Text frames are not checked for UTF-8 (gorilla/websocket does not; Go's JSON decoder copes). */
  readonly skipUtf8Validation: boolean;
  /** The refusal (whole HTTP answer) for an upgrade this server does not take; undefined = accepted. */
  readonly refuse: (req: IncomingMessage) => string | undefined;
  /** Ping period; 0 = no pings and no read deadline. */
  readonly pingIntervalMs: number;
  /** A connection with no frame or pong for this long is cut. */
  readonly readWaitMs: number;
  /**
   * `sequential`: one frame at a time, in order (reading pauses past a few waiting frames);
   * `concurrent`: each frame is handled as it arrives.
   */
  readonly frames: "sequential" | "concurrent";
  /** Writes queued and not yet flushed past which `trySend` fails and `send` waits (0 = unlimited). */
  readonly maxQueuedWrites: number;
  /** A frame not written within this long cuts the connection (0 = no deadline). */
  readonly writeWaitMs: number;
  /** Unsent bytes past which reading pauses until the client takes its answers (0 = never). */
  readonly pauseReadingBytes: number;
  /** A paused connection whose client takes nothing for this long is cut. */
  readonly stallTimeoutMs: number;
  /** Unsent bytes past which a client is too slow and is cut (0 = unlimited). */
  readonly maxBufferedBytes: number;
  /** The answer to a frame (undefined: none); handled frames' errors go to `onFrameError`. */
  readonly handleFrame: (text: string, conn: WsConnection<Sub>, frame: WsFrame) => MaybePromise<string | undefined>;
  /** A frame handler that threw or rejected: logged, and answered with the returned text if any. */
  readonly onFrameError: (err: unknown, conn: WsConnection<Sub>) => string | undefined;
  /** After the connection closed and its subscriptions were cancelled. */
  readonly onClose?: (conn: WsConnection<Sub>) => void;
  readonly log: Logger;
}

export interface WsTransport<Sub extends WsSubscription = WsSubscription> {
  /** Handles an HTTP upgrade (the server's rules checked first); `remoteAddr` names the client. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, remoteAddr: string): void;
  /** Server shutdown: every connection gets a 1001 close frame, then is cut a second later. */
  closeAll(): void;
  readonly connections: ReadonlySet<WsConnection<Sub>>;
}

/** Frames waiting to be handled before the socket stops reading (TCP backpressure, as Go's blocking read loop). */
const MAX_PENDING_FRAMES = 16;

/** One client connection. */
export class WsConnection<Sub extends WsSubscription = WsSubscription> {
  readonly remoteAddr: string;
  /** Live subscriptions by the server's key (geth: the subscription id; CometBFT: the canonical query). */
  readonly subscriptions = new Map<string, Sub>();
  readonly #ws: WebSocket;
  readonly #opts: WsTransportOptions<Sub>;
  readonly #deadlines: DeadlineSweeper<object>;
  #closed = false;
  #queued = 0;
  readonly #slotWaiters: (() => void)[] = [];
  #pendingFrames = 0;
  #chain: Promise<void> = Promise.resolve();
  #readTimer: NodeJS.Timeout | undefined;
  readonly #pingTimer: NodeJS.Timeout | undefined;
  /** Set while reading is paused for a client that does not read (pauseReadingBytes). */
  #stalled: NodeJS.Timeout | undefined;

  constructor(ws: WebSocket, remoteAddr: string, opts: WsTransportOptions<Sub>, deadlines: DeadlineSweeper<object>) {
    this.#ws = ws;
    this.remoteAddr = remoteAddr;
    this.#opts = opts;
    this.#deadlines = deadlines;
    if (opts.pingIntervalMs > 0) {
      this.#resetReadDeadline();
      this.#pingTimer = setInterval(() => {
        try {
          ws.ping();
        } catch {
          ws.terminate();
        }
      }, opts.pingIntervalMs);
      ws.on("pong", () => this.#resetReadDeadline());
    }
    ws.on("message", (data: RawData) => this.#onFrame(data));
    ws.on("error", (err) => {
      opts.log.debug({ err, remote: remoteAddr }, "websocket error");
      this.#release();
    });
    ws.on("close", () => this.#release());
  }

  /** The connection is gone or closing: nothing more can be sent. */
  isClosed(): boolean {
    return this.#closed || this.#ws.readyState !== this.#ws.OPEN;
  }

  #resetReadDeadline(): void {
    if (this.#readTimer !== undefined) clearTimeout(this.#readTimer);
    this.#readTimer = setTimeout(() => this.#ws.terminate(), this.#opts.readWaitMs);
  }

  #write(text: string): void {
    const ws = this.#ws;
    const opts = this.#opts;
    this.#queued++;
    const token = {};
    if (opts.writeWaitMs > 0) this.#deadlines.watch(token, Date.now() + opts.writeWaitMs, () => ws.terminate());
    ws.send(text, (err) => {
      this.#deadlines.unwatch(token);
      this.#queued--;
      this.#slotWaiters.shift()?.();
      if (err !== undefined && err !== null) ws.terminate();
      else if (this.#stalled !== undefined && ws.bufferedAmount <= opts.pauseReadingBytes / 4) {
        clearTimeout(this.#stalled);
        this.#stalled = undefined;
        ws.resume();
      }
    });
    if (opts.pauseReadingBytes > 0 && this.#stalled === undefined && ws.bufferedAmount > opts.pauseReadingBytes) {
      ws.pause();
      this.#stalled = setTimeout(() => ws.terminate(), opts.stallTimeoutMs);
    }
  }

  /** Whether a write can be queued now; a client past the byte limit is cut. */
  #writable(): boolean {
    if (this.isClosed()) return false;
    const max = this.#opts.maxBufferedBytes;
    if (max > 0 && this.#ws.bufferedAmount > max) {
      this.#opts.log.info({ remote: this.remoteAddr }, "WebSocket client too slow; closing");
      this.#ws.terminate();
      return false;
    }
    return true;
  }

  /** Queues a message only if there is room now; false when it could not be queued. */
  trySend(text: string): boolean {
    const max = this.#opts.maxQueuedWrites;
    if (!this.#writable() || (max > 0 && this.#queued >= max)) return false;
    this.#write(text);
    return true;
  }

  /** Queues a message, waiting up to `timeoutMs` for room; false when it could not be queued. */
  async send(text: string, timeoutMs: number): Promise<boolean> {
    const max = this.#opts.maxQueuedWrites;
    const deadline = Date.now() + timeoutMs;
    while (!this.#closed && max > 0 && this.#queued >= max) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(left) ? setTimeout(done, left) : undefined;
        function done() {
          if (timer !== undefined) clearTimeout(timer);
          resolve();
        }
        this.#slotWaiters.push(done);
      });
    }
    if (!this.#writable()) return false;
    this.#write(text);
    return true;
  }

  #onFrame(data: RawData): void {
    if (this.#opts.pingIntervalMs > 0) this.#resetReadDeadline();
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString("utf8");
    if (this.#opts.frames === "concurrent") {
      this.#handleConcurrently(text);
      return;
    }
    this.#pendingFrames++;
    if (this.#pendingFrames >= MAX_PENDING_FRAMES) this.#ws.pause();
    this.#chain = this.#chain
      .then(() => (this.#closed ? undefined : this.#handle(text)))
      .catch((err: unknown) => this.#failed(err))
      .finally(() => {
        this.#pendingFrames--;
        if (this.#pendingFrames < MAX_PENDING_FRAMES && !this.#closed) this.#ws.resume();
      });
  }

  /** Handles one frame and queues its answer (then what the frame deferred). */
  #handle(text: string): MaybePromise<void> {
    const frame = new WsFrame();
    const out = this.#opts.handleFrame(text, this, frame);
    if (!isPromise(out)) return this.#reply(out, frame);
    return out.then((answer) => this.#reply(answer, frame));
  }

  #reply(answer: string | undefined, frame: WsFrame): MaybePromise<void> {
    if (answer === undefined) {
      frame.replied();
      return;
    }
    // Over a bounded queue the answer waits for room (Go's blocking write); else it is queued at once.
    if (this.#opts.maxQueuedWrites > 0) return this.send(answer, Number.POSITIVE_INFINITY).then(() => frame.replied());
    this.trySend(answer);
    frame.replied();
  }

  #handleConcurrently(text: string): void {
    let handled: MaybePromise<void>;
    try {
      handled = this.#handle(text);
    } catch (err) {
      this.#failed(err);
      return;
    }
    if (isPromise(handled)) handled.catch((err: unknown) => this.#failed(err));
  }

  #failed(err: unknown): void {
    const answer = this.#opts.onFrameError(err, this);
    if (answer !== undefined) void this.send(answer, Number.POSITIVE_INFINITY);
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#pingTimer !== undefined) clearInterval(this.#pingTimer);
    if (this.#readTimer !== undefined) clearTimeout(this.#readTimer);
    clearTimeout(this.#stalled);
    for (const wake of this.#slotWaiters.splice(0)) wake();
    const subscriptions = [...this.subscriptions.values()];
    this.subscriptions.clear();
    for (const s of subscriptions) s.cancel();
    this.#opts.onClose?.(this);
  }

  /** Server shutdown: a normal close frame, then the socket. */
  shutdown(): void {
    this.#ws.close(1001, "server shutting down");
    setTimeout(() => this.#ws.terminate(), 1000).unref();
  }
}

/**
 * The ws package, loaded on the first WebSocket upgrade: with the Node modules it needs (https, tls,
 * zlib) it was ~3% of `cometh dev`'s start-up, and most HTTP clients never upgrade (docs/dev-chain.md
 * "Start-up").
 */
let wsModule: typeof import("ws") | undefined;
function loadWs(): typeof import("ws") {
  wsModule ??= createRequire(import.meta.url)("ws") as typeof import("ws");
  return wsModule;
}

export function createWsTransport<Sub extends WsSubscription>(opts: WsTransportOptions<Sub>): WsTransport<Sub> {
  let wss: WebSocketServer | undefined;
  const server = (): WebSocketServer => {
    wss ??= new (loadWs().WebSocketServer)({
      noServer: true,
      maxPayload: opts.maxMessageBytes,
      perMessageDeflate: false,
      skipUTF8Validation: opts.skipUtf8Validation,
    });
    return wss;
  };
  const deadlines = new DeadlineSweeper<object>(
    Math.max(5, Math.min(1000, Math.floor((opts.writeWaitMs > 0 ? opts.writeWaitMs : 1000) / 10))),
  );
  const connections = new Set<WsConnection<Sub>>();
  return {
    connections,
    handleUpgrade(req, socket, head, remoteAddr) {
      const refusal = opts.refuse(req);
      if (refusal !== undefined) {
        socket.end(refusal);
        return;
      }
      server().handleUpgrade(req, socket, head, (ws) => {
        const conn = new WsConnection<Sub>(ws, remoteAddr, opts, deadlines);
        connections.add(conn);
        ws.once("close", () => connections.delete(conn));
      });
    },
    closeAll() {
      for (const c of connections) c.shutdown();
      connections.clear();
      wss?.close();
    },
  };
}
