import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../../../util/logger.js";
import {
  dispatchRequest,
  encodeResponse,
  errorResponse,
  errorText,
  InternalError,
  type JsonRpcRequest,
  type JsonRpcResponse,
  ParseError,
  parseSingleRequest,
  RequestDecodeError,
  type RouteTable,
} from "../../jsonrpc/index.js";
import type { ActiveSubscription, CometCallContext, CometRuntime, WsSession } from "../context.js";
import { toCometRpcError } from "../errors.js";
import type { CometServices } from "../services.js";
import { releaseSession } from "../subscriptions.js";
import { PARSE_ERROR_MESSAGE } from "./http.js";

/**
 * JSON-RPC over WebSocket at `/websocket` (rpc/jsonrpc/server/ws_handler.go): one request per
 * frame, handled in order; no batches; param errors are -32603; every route is callable. Replies
 * and pushed events share a bounded write queue (experimental_websocket_write_buffer_size).
 */

export interface WsOptions {
  readonly routes: RouteTable<CometServices, CometCallContext>;
  readonly services: CometServices;
  readonly runtime: CometRuntime;
  /** Read limit per message; a larger frame closes the connection with 1009. */
  readonly maxBodyBytes: number;
  readonly writeBufferSize: number;
  readonly pingIntervalMs: number;
  readonly readWaitMs: number;
  readonly writeWaitMs: number;
  readonly log: Logger;
}

/** Frames waiting to be handled before the socket stops reading (TCP backpressure, as Go's blocking read loop). */
const MAX_PENDING_FRAMES = 16;

class WsConnection implements WsSession {
  readonly remoteAddr: string;
  readonly subscriptions = new Map<string, ActiveSubscription>();
  private closed = false;
  private inflight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private pendingFrames = 0;
  private chain: Promise<void> = Promise.resolve();
  private afterReplyFns: (() => void)[] = [];
  private readTimer: NodeJS.Timeout | undefined;
  private readonly pingTimer: NodeJS.Timeout;
  private readonly ws: WebSocket;
  private readonly opts: WsOptions;

  constructor(ws: WebSocket, remoteAddr: string, opts: WsOptions) {
    this.ws = ws;
    this.remoteAddr = remoteAddr;
    this.opts = opts;
    this.resetReadDeadline();
    this.pingTimer = setInterval(() => {
      try {
        ws.ping();
      } catch {
        ws.terminate();
      }
    }, opts.pingIntervalMs);
    ws.on("message", (data, isBinary) => this.onFrame(data, isBinary));
    ws.on("pong", () => this.resetReadDeadline());
    ws.on("error", (err) => opts.log.debug({ err, remote: remoteAddr }, "websocket error"));
    ws.on("close", () => this.onClose());
  }

  isClosed(): boolean {
    return this.closed;
  }

  private resetReadDeadline(): void {
    if (this.readTimer !== undefined) clearTimeout(this.readTimer);
    this.readTimer = setTimeout(() => this.ws.terminate(), this.opts.readWaitMs);
  }

  private write(res: JsonRpcResponse): void {
    this.inflight++;
    const deadline = setTimeout(() => this.ws.terminate(), this.opts.writeWaitMs);
    this.ws.send(encodeResponse(res), (err) => {
      clearTimeout(deadline);
      this.inflight--;
      this.slotWaiters.shift()?.();
      if (err !== undefined && err !== null) this.ws.terminate();
    });
  }

  trySend(res: JsonRpcResponse): boolean {
    if (this.closed || this.inflight >= this.opts.writeBufferSize) return false;
    this.write(res);
    return true;
  }

  async send(res: JsonRpcResponse, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && this.inflight >= this.opts.writeBufferSize) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(left) ? setTimeout(done, left) : undefined;
        function done() {
          if (timer !== undefined) clearTimeout(timer);
          resolve();
        }
        this.slotWaiters.push(done);
      });
    }
    if (this.closed) return false;
    this.write(res);
    return true;
  }

  afterReply(fn: () => void): void {
    this.afterReplyFns.push(fn);
  }

  private onFrame(data: RawData, _isBinary: boolean): void {
    this.resetReadDeadline();
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString("utf8");
    this.pendingFrames++;
    if (this.pendingFrames >= MAX_PENDING_FRAMES) this.ws.pause();
    this.chain = this.chain
      .then(() => this.handle(text))
      .catch((err: unknown) => {
        // ws_handler.go recovers a handler panic with -32603 and id -1, then keeps reading.
        this.opts.log.error({ err }, "panic in WSJSONRPC handler");
        void this.send(errorResponse(-1n, new InternalError(errorText(err), { cause: err })), Number.POSITIVE_INFINITY);
      })
      .finally(() => {
        this.pendingFrames--;
        if (this.pendingFrames < MAX_PENDING_FRAMES && !this.closed) this.ws.resume();
      });
  }

  private async handle(text: string): Promise<void> {
    if (this.closed) return;
    let req: JsonRpcRequest;
    try {
      req = parseSingleRequest(text);
    } catch (err) {
      if (!(err instanceof RequestDecodeError)) throw err;
      const parseError = new ParseError(`error unmarshaling request: ${err.message}`, { message: PARSE_ERROR_MESSAGE });
      await this.send(errorResponse(undefined, parseError), Number.POSITIVE_INFINITY);
      return;
    }
    if (req.id === undefined) return;
    const { routes, services, runtime } = this.opts;
    const ctx: CometCallContext = {
      transport: "ws",
      remoteAddr: this.remoteAddr,
      requestId: req.id,
      runtime,
      ws: this,
    };
    this.afterReplyFns = [];
    const { response } = await dispatchRequest(routes, req, services, ctx, {
      transport: "ws",
      paramsError: (d) => new InternalError(d),
      mapError: toCometRpcError,
    });
    const fns = this.afterReplyFns;
    this.afterReplyFns = [];
    await this.send(response, Number.POSITIVE_INFINITY);
    for (const fn of fns) fn();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pingTimer);
    if (this.readTimer !== undefined) clearTimeout(this.readTimer);
    for (const wake of this.slotWaiters.splice(0)) wake();
    releaseSession(this, this.opts.services);
  }

  /** Server shutdown: a normal close frame, then the socket. */
  shutdown(): void {
    this.ws.close(1001, "server shutting down");
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }
}

export interface WsTransport {
  /** For the http.Server 'upgrade' event. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, remoteAddr: string): void;
  closeAll(): void;
  readonly connections: ReadonlySet<WsConnection>;
}

export function createWsTransport(opts: WsOptions): WsTransport {
  // gorilla/websocket does not check that text frames are UTF-8; Go's JSON decoder then turns invalid
  // bytes into U+FFFD or a parse error. ws would instead close the connection with 1007.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: opts.maxBodyBytes,
    perMessageDeflate: false,
    skipUTF8Validation: true,
  });
  const connections = new Set<WsConnection>();
  return {
    connections,
    handleUpgrade(req, socket, head, remoteAddr) {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (path !== "/websocket" || req.method !== "GET") {
        const status = path !== "/websocket" ? "404 Not Found" : "405 Method Not Allowed";
        socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n`);
        return;
      }
      // gorilla's CheckOrigin returns true: no origin check, even with CORS configured.
      wss.handleUpgrade(req, socket, head, (ws) => {
        const conn = new WsConnection(ws, remoteAddr, opts);
        connections.add(conn);
        ws.once("close", () => connections.delete(conn));
      });
    },
    closeAll() {
      for (const c of connections) c.shutdown();
    },
  };
}
