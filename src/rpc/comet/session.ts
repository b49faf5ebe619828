import type { IncomingMessage } from "node:http";
import type { Logger } from "../../util/logger.js";
import {
  callMethod,
  createWsTransport,
  encodeResponse,
  errorResponse,
  errorText,
  InternalError,
  isPromise,
  type JsonRpcRequest,
  type MaybePromise,
  type WsConnection,
  type WsFrame,
  type WsTransport,
} from "../jsonrpc/index.js";
import type { ActiveSubscription, CometCallContext, CometRuntime, WsSession } from "./context.js";
import { parseErrorOf } from "./errors.js";
import { parseSingleRequest, RequestDecodeError } from "./request.js";
import type { CometServices } from "./services.js";
import { releaseSession } from "./subscriptions.js";
import { type CometCalls, cometCalls, type RouteTable } from "./table.js";

/**
 * The node RPC's WebSocket at `/websocket` on the shared transport (rpc/jsonrpc/ws.ts), as
 * CometBFT's ws_handler.go serves it: one request per frame (its first JSON value), handled in
 * order; no batches; param errors are -32603; every route is callable; no origin check (gorilla's
 * CheckOrigin returns true, even with CORS configured). Replies and pushed events share a bounded
 * write queue (experimental_websocket_write_buffer_size).
 */

export interface CometWsOptions {
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

type Conn = WsConnection<ActiveSubscription>;

/** A call's view of its connection: pushes go to the connection, deferred work to the frame. */
class CometWsSession implements WsSession {
  readonly #conn: Conn;
  readonly #frame: WsFrame;

  constructor(conn: Conn, frame: WsFrame) {
    this.#conn = conn;
    this.#frame = frame;
  }

  get remoteAddr(): string {
    return this.#conn.remoteAddr;
  }

  get subscriptions(): Map<string, ActiveSubscription> {
    return this.#conn.subscriptions;
  }

  send(text: string, timeoutMs: number): Promise<boolean> {
    return this.#conn.send(text, timeoutMs);
  }

  trySend(text: string): boolean {
    return this.#conn.trySend(text);
  }

  afterReply(fn: () => void): void {
    this.#frame.afterReply(fn);
  }

  isClosed(): boolean {
    return this.#conn.isClosed();
  }
}

/** The refusal of an upgrade anywhere but `GET /websocket`. */
function refuse(req: IncomingMessage): string | undefined {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === "/websocket" && req.method === "GET") return undefined;
  const status = path !== "/websocket" ? "404 Not Found" : "405 Method Not Allowed";
  return `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n`;
}

function answerText(out: { readonly text: string }): string {
  return out.text;
}

function handleFrame(calls: CometCalls, text: string, conn: Conn, frame: WsFrame): MaybePromise<string | undefined> {
  let req: JsonRpcRequest;
  try {
    req = parseSingleRequest(text);
  } catch (err) {
    if (!(err instanceof RequestDecodeError)) throw err;
    return encodeResponse(errorResponse(undefined, parseErrorOf(err)));
  }
  if (req.kind !== "call") return undefined;
  const session = new CometWsSession(conn, frame);
  const out = callMethod(calls, req, { remoteAddr: conn.remoteAddr, ws: session, uriArg: undefined });
  return isPromise(out) ? out.then(answerText) : out.text;
}

export function createCometWsTransport(opts: CometWsOptions): WsTransport<ActiveSubscription> {
  const calls = cometCalls(opts.routes, opts.services, opts.runtime, "ws");
  return createWsTransport<ActiveSubscription>({
    maxMessageBytes: opts.maxBodyBytes,
    // gorilla/websocket does not check that text frames are UTF-8; Go's JSON decoder then turns invalid
    // bytes into U+FFFD or a parse error. ws would instead close the connection with 1007.
    skipUtf8Validation: true,
    refuse,
    pingIntervalMs: opts.pingIntervalMs,
    readWaitMs: opts.readWaitMs,
    frames: "sequential",
    maxQueuedWrites: opts.writeBufferSize,
    writeWaitMs: opts.writeWaitMs,
    pauseReadingBytes: 0,
    stallTimeoutMs: 0,
    maxBufferedBytes: 0,
    handleFrame: (text, conn, frame) => handleFrame(calls, text, conn, frame),
    onFrameError: (err) => {
      // ws_handler.go recovers a handler panic with -32603 and id -1, then keeps reading.
      opts.log.error({ err }, "panic in WSJSONRPC handler");
      return encodeResponse(errorResponse(-1n, new InternalError(errorText(err), { cause: err })));
    },
    // On disconnect CometBFT unsubscribes everything the connection's address holds.
    onClose: (conn) => releaseSession(conn, opts.services),
    log: opts.log,
  });
}
