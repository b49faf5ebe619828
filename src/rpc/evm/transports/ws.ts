import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import type { WireValue } from "../../jsonrpc/index.js";
import type { EvmRuntime, SubscriptionSink } from "../context.js";
import type { EvmServices } from "../services.js";
import { encodeNotification } from "./envelope.js";
import { handlePayload } from "./handler.js";

/**
 * JSON-RPC over WebSocket on `ws-address`, path `/`: every method is callable (geth semantics,
 * batches included, ids echoed), plus eth_subscribe/eth_unsubscribe. The upgrade checks Origin
 * against ws-origins (hostnames; "*" = any; no Origin header = allowed), as Cosmos EVM does.
 * Frames are handled concurrently; a subscription's notifications start after its id was sent.
 * A frame over the read limit, or a client that stops reading, closes the connection.
 */

/** Cosmos EVM's WebSocket read limit. */
export const DEFAULT_WS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Unsent bytes after which a slow client is disconnected. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/**
 * Unsent bytes past which the connection's frames are no longer read until the client takes its
 * answers (each small answer queued costs far more memory than its bytes); a client that takes
 * none for http-timeout is disconnected.
 */
const PAUSE_READING_BYTES = 1024 * 1024;

export interface WsDeps {
  readonly services: EvmServices;
  readonly runtime: EvmRuntime;
  readonly origins: readonly string[];
  readonly maxMessageBytes: number;
  readonly batchRequestLimit: number;
  readonly batchResponseMaxSize: number;
  readonly callTimeoutMs: number;
}

export interface WsTransport {
  /** Handles an HTTP upgrade (origin and path checked here). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every connection (1001 going away). */
  closeAll(): void;
}

export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === "") return true;
  if (allowed.includes("*")) return true;
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return false;
  }
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return allowed.some((a) => a.toLowerCase() === bare.toLowerCase());
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${text.length + 1}\r\n\r\n${text}\n`,
  );
}

class Connection {
  private readonly ws: WebSocket;
  private readonly deps: WsDeps;
  private readonly subscriptions = new Map<string, () => void>();
  private closed = false;
  /** Set while reading is paused for a client that does not read (PAUSE_READING_BYTES). */
  private stalled: NodeJS.Timeout | undefined;
  private readonly onSent = (): void => {
    if (this.stalled !== undefined && this.ws.bufferedAmount <= PAUSE_READING_BYTES / 4) {
      clearTimeout(this.stalled);
      this.stalled = undefined;
      this.ws.resume();
    }
  };

  constructor(ws: WebSocket, deps: WsDeps) {
    this.ws = ws;
    this.deps = deps;
    ws.on("message", (data: RawData) => this.onFrame(data));
    ws.on("close", () => this.release());
    ws.on("error", () => this.release());
  }

  private send(text: string): boolean {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return false;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.deps.runtime.log.info("EVM RPC WebSocket client too slow; closing");
      this.ws.terminate();
      return false;
    }
    this.ws.send(text, this.onSent);
    if (this.stalled === undefined && this.ws.bufferedAmount > PAUSE_READING_BYTES) {
      this.ws.pause();
      this.stalled = setTimeout(
        () => this.ws.terminate(),
        this.deps.callTimeoutMs > 0 ? this.deps.callTimeoutMs : 30_000,
      );
    }
    return true;
  }

  private onFrame(data: RawData): void {
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : Buffer.from(data as ArrayBuffer).toString("utf8");
    const after: (() => void)[] = [];
    const sink: SubscriptionSink = {
      notify: (id: string, result: WireValue) => this.send(encodeNotification(id, result)),
      subscriptions: this.subscriptions,
      afterReply: (fn) => after.push(fn),
    };
    const timeout = this.deps.callTimeoutMs;
    let out: ReturnType<typeof handlePayload>;
    try {
      out = handlePayload(text, {
        services: this.deps.services,
        runtime: this.deps.runtime,
        transport: "ws",
        sink,
        batchRequestLimit: this.deps.batchRequestLimit,
        batchResponseMaxSize: this.deps.batchResponseMaxSize,
        deadline: timeout > 0 ? Date.now() + timeout : undefined,
      });
    } catch (err) {
      out = Promise.reject(err);
    }
    Promise.resolve(out)
      .then((answer) => {
        if (answer !== undefined) this.send(answer);
        for (const fn of after) fn();
      })
      .catch((err: unknown) => this.deps.runtime.log.error({ err }, "EVM RPC WebSocket handler failed"));
  }

  release(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.stalled);
    for (const cancel of this.subscriptions.values()) cancel();
    this.subscriptions.clear();
  }
}

export function createWsTransport(deps: WsDeps): WsTransport {
  const server = new WebSocketServer({ noServer: true, maxPayload: deps.maxMessageBytes });
  const connections = new Set<WebSocket>();
  return {
    handleUpgrade(req, socket, head) {
      const path = (req.url ?? "/").split("?")[0];
      if (path !== "/") {
        rejectUpgrade(socket, 404, "Not Found");
        return;
      }
      if (!originAllowed(req.headers.origin, deps.origins)) {
        rejectUpgrade(socket, 403, "Forbidden");
        return;
      }
      server.handleUpgrade(req, socket, head, (ws) => {
        connections.add(ws);
        const conn = new Connection(ws, deps);
        ws.on("close", () => {
          connections.delete(ws);
          conn.release();
        });
      });
    },
    closeAll() {
      for (const ws of connections) {
        ws.close(1001, "server shutting down");
        // A client that does not answer the close handshake is cut off.
        setTimeout(() => ws.terminate(), 1000).unref();
      }
      connections.clear();
      server.close();
    },
  };
}
