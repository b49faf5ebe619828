import type { Server as HttpServer, IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Cors } from "./cors.js";
import type { MaybePromise } from "./dispatch.js";
import { type FastHttpOptions, serveFastHttp } from "./fastHttp.js";
import { listenLimited, type SocketTarget } from "./limitedListener.js";

/**
 * The HTTP transport both RPC servers run on: the limited listener hands each connection to the
 * fast path (when the server has one) or to a node:http server that never listens itself; the
 * node:http side gets the body reader, the plain answer writer and the upgrade hook for WebSocket.
 */

/** Reads the whole body, or undefined once it passes `limit` bytes (what the client still sends is drained). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) {
        // Drain a little to let the client read the answer; give up on very large uploads.
        if (size > limit * 4 + 16 * 1024 * 1024) req.destroy();
        return;
      }
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    // One listener per outcome, no named closure per request (tsx keeps function names at a cost).
    req.on("end", () => resolve(tooLarge ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    req.on("close", () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
  });
}

/**
 * Answers with `body` (encoded once: Buffer.byteLength and a string write would each walk the
 * text) and one writeHead with every header; nothing when an answer has already started.
 */
export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers?: Record<string, string>,
): void {
  if (res.headersSent || res.writableEnded) return;
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const all: Record<string, string | number> = { "Content-Type": contentType, "Content-Length": bytes.length };
  if (headers !== undefined) Object.assign(all, headers);
  res.writeHead(status, all);
  res.end(bytes);
}

export interface HttpTransportOptions {
  readonly target: SocketTarget;
  /** max open connections (0 = unlimited); extra connections wait unread until one closes. */
  readonly maxOpenConnections: number;
  /** The node:http (or node:https) server with the handler; it never listens itself. */
  readonly server: HttpServer;
  /** The fast path in front of `server` (plain-text HTTP only); undefined: every request is node:http's. */
  readonly fast?: Omit<FastHttpOptions, "fallback">;
  /** A WebSocket upgrade request; the socket is the WebSocket transport's from then on. */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Hands some accepted connections to other processes (the EVM server's read processes). */
  readonly share?: ConnectionSharing;
}

/** Where accepted connections may go instead of this process's fast path (node/evm/readProcesses.ts). */
export interface ConnectionSharing {
  /**
   * At accept, the socket paused and nothing read from it: undefined to serve it here, or a promise
   * that settles once the connection, handed to another process, has ended there (until then it
   * counts against max-open-connections).
   */
  take(socket: Socket): Promise<void> | undefined;
  /**
   * Cuts the connections handed away (the transport is closing). node:net's close waits for the
   * other processes to close the sockets it sent them, so this runs beside it, not after.
   */
  close(): Promise<void>;
}

export interface HttpTransport {
  /** The bound TCP address (undefined for a unix socket). */
  readonly bound: AddressInfo | undefined;
  /**
   * Stops accepting and cuts every HTTP connection, like Go's http.Server.Close; connections
   * upgraded to WebSocket are left to the WebSocket transport's close frames.
   */
  close(): Promise<void>;
  /**
   * Serves a connection another process hands back, `pending` being the bytes it read and did not
   * answer: on node:http (a request its fast path does not take: CORS, an upgrade...), or on this
   * process's fast path when `fast` (a connection that process was passing on to this one anyway).
   */
  adopt(socket: Socket, pending: Buffer, fast?: boolean): void;
}

/** Listens on `target` and serves HTTP there (see the module comment). Rejects with the listen error. */
export async function serveHttp(opts: HttpTransportOptions): Promise<HttpTransport> {
  const { server } = opts;
  const upgraded = new WeakSet<Duplex>();
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(req.socket);
    opts.upgrade(req, socket, head);
  });
  // Connections come from the listener; 'listening' starts node:http's request and headers timeout checks.
  server.emit("listening");
  const fast: FastHttpOptions | undefined = opts.fast === undefined ? undefined : { ...opts.fast, fallback: server };
  const sockets = new Set<Socket>();
  let closed = false;
  const listener = await listenLimited(opts.target, opts.maxOpenConnections, (socket) => {
    const elsewhere = opts.share?.take(socket);
    if (elsewhere !== undefined) return elsewhere;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    if (fast !== undefined) serveFastHttp(socket, fast);
    else server.emit("connection", socket);
    socket.resume();
    return undefined;
  });
  return {
    bound: listener.bound,
    adopt: (socket, pending, toFast = false) => {
      if (closed) {
        socket.destroy();
        return;
      }
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      socket.pause();
      if (pending.length > 0) socket.unshift(pending);
      if (toFast && fast !== undefined) serveFastHttp(socket, fast);
      else server.emit("connection", socket);
      socket.resume();
    },
    close: async () => {
      closed = true;
      const closing = listener.close();
      const elsewhere = opts.share?.close();
      for (const socket of sockets) if (!upgraded.has(socket)) socket.destroy();
      // Stops the timeout checks (node reports "not running", which is expected).
      server.close(() => undefined);
      await Promise.all([closing, elsewhere]);
    },
  };
}

export interface PostEndpointOptions {
  readonly cors: Cors | undefined;
  readonly maxBodyBytes: number;
  /** Whether a lower-cased media type (no parameters) is served. */
  readonly acceptsMediaType: (media: string) => boolean;
  /** The JSON answer for a body whose first byte arrived at `started` (ms since epoch); undefined: empty body. */
  readonly answer: (body: Buffer, started: number) => MaybePromise<string | undefined>;
  /** A handler that threw or rejected (the client gets a 500). */
  readonly onError: (err: unknown) => void;
}

const PLAIN = "text/plain; charset=utf-8";

/**
 * A JSON-RPC endpoint that takes only `POST /`, with geth's rpc.Server.ServeHTTP checks before the
 * body is read: other paths 404, other methods 405, a declared Content-Length over the body limit
 * 413, a content type not served 415; a body that passes the limit while read is 413 too. CORS
 * (with its preflights) comes first.
 */
export function createPostHandler(opts: PostEndpointOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    servePost(opts, req, res).catch((err: unknown) => {
      opts.onError(err);
      sendText(res, 500, PLAIN, "internal server error\n");
    });
  };
}

async function servePost(opts: PostEndpointOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (opts.cors?.handle(req, res) === true) return;
  if (refusedPost(opts, req, res)) return;
  const started = Date.now();
  const body = await readBody(req, opts.maxBodyBytes);
  if (body === undefined) {
    res.setHeader("Connection", "close");
    sendText(res, 413, PLAIN, `content length too large (>${opts.maxBodyBytes})\n`);
    return;
  }
  const answer = await opts.answer(body, started);
  sendText(res, 200, "application/json", answer ?? "");
}

/** The checks before the body is read (path, method, declared length, content type); true when it answered. */
function refusedPost(opts: PostEndpointOptions, req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== "/") {
    sendText(res, 404, PLAIN, "404 page not found\n");
    return true;
  }
  if (req.method !== "POST") {
    sendText(res, 405, PLAIN, "method not allowed\n");
    return true;
  }
  const declared = Number(req.headers["content-length"] ?? "0");
  if (Number.isFinite(declared) && declared > opts.maxBodyBytes) {
    res.setHeader("Connection", "close");
    sendText(res, 413, PLAIN, `content length too large (${declared}>${opts.maxBodyBytes})\n`);
    req.resume();
    return true;
  }
  const type = req.headers["content-type"];
  if (type === undefined || !opts.acceptsMediaType(type.split(";")[0]?.trim().toLowerCase() ?? "")) {
    sendText(res, 415, PLAIN, "invalid content type, only application/json is supported\n");
    req.resume();
    return true;
  }
  return false;
}
