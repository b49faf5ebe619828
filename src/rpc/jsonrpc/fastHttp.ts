import type { Server } from "node:http";
import type { Socket } from "node:net";
import { isPromise, type MaybePromise } from "./dispatch.js";

/**
 * A fast path in front of node:http for the one request shape JSON-RPC clients send: `POST <path>
 * HTTP/1.1` with a Host, a Content-Length body, an accepted JSON content type and no Origin, Expect,
 * Upgrade, Transfer-Encoding or `Connection: close`. Such requests are parsed here and answered
 * `200` with the handler's JSON text, in order, on the kept-alive socket.
 *
 * Anything else (other methods or paths, CORS requests, chunked or oversized bodies, malformed or
 * very long heads, HTTP/1.0) is not second-guessed: the socket, with every byte not yet answered,
 * is handed to the node:http server (`emit("connection")`), which serves it and the rest of the
 * connection with its full rules and statuses. node:http's request/response objects and streams
 * cost more than the answer of a cheap call (about 1/3 of the throughput of a fixed body on this
 * machine), which is why the common case skips them.
 */

export interface FastHttpOptions {
  /** The request target served here ("/"); other targets go to node:http. */
  readonly path: string;
  /** Whether a lower-cased media type (without parameters) is served here. */
  readonly acceptsMediaType: (media: string) => boolean;
  /** Larger declared bodies go to node:http, which answers its 413. */
  readonly maxBodyBytes: number;
  /** A request whose head and body are not complete this long after its first byte gets 408 and a close (0 = none). */
  readonly requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this long (0 = never). */
  readonly idleTimeoutMs: number;
  /** The JSON answer for a body; `started` is when its first byte arrived (ms since epoch). */
  readonly handle: (body: Buffer, started: number) => MaybePromise<string | undefined>;
  /** Called when `handle` throws or rejects; the client gets a 500. */
  readonly onError: (err: unknown) => void;
  /** Where connections go that leave the fast path. */
  readonly fallback: Server;
}

/** node:http's default max header size; longer heads are node's to refuse (431). */
const MAX_HEAD_BYTES = 16 * 1024;
/**
 * Answers not yet taken by the client past which no further request is read or answered until the
 * socket drains: a client that pipelines requests and never reads would otherwise make the node
 * buffer every answer (node:http stops reading such a client too).
 */
const MAX_UNSENT_BYTES = 1024 * 1024;
const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");

let dateSecond = 0;
let dateText = "";
/** The Date header value, formatted once a second. */
function httpDate(now: number): string {
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(s * 1000).toUTCString();
  }
  return dateText;
}

function responseHead(status: string, contentType: string, length: number, now: number): string {
  return `HTTP/1.1 ${status}\r\nContent-Type: ${contentType}\r\nDate: ${httpDate(now)}\r\nContent-Length: ${length}\r\n\r\n`;
}

const DIGITS = /^[0-9]{1,15}$/;

/** What the head of a request says: its body length, or that node:http must serve it. */
const FALLBACK = -1;

/**
 * Reads a complete request head (`head` = latin1 text before the blank line). Returns the declared
 * body length, or FALLBACK for any request this path does not serve itself.
 */
function bodyLengthOf(head: string, opts: FastHttpOptions): number {
  const lineEnd = head.indexOf("\r\n");
  const requestLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
  if (requestLine !== `POST ${opts.path} HTTP/1.1`) return FALLBACK;
  let length = FALLBACK;
  let typeOk = false;
  // HTTP/1.1 requires Host; node:http (and Go's server) answer 400 without it.
  let host = false;
  let at = lineEnd + 2;
  while (lineEnd >= 0 && at < head.length) {
    let end = head.indexOf("\r\n", at);
    if (end < 0) end = head.length;
    const colon = head.indexOf(":", at);
    // No colon, obsolete line folding, or a space before the colon: node:http decides.
    if (colon < 0 || colon >= end || colon === at) return FALLBACK;
    const first = head.charCodeAt(at);
    if (first === 32 || first === 9) return FALLBACK;
    const name = head.slice(at, colon).toLowerCase();
    switch (name) {
      case "content-length": {
        const v = head.slice(colon + 1, end).trim();
        if (length !== FALLBACK || !DIGITS.test(v)) return FALLBACK;
        length = Number(v);
        break;
      }
      case "content-type": {
        const v = head.slice(colon + 1, end);
        const semi = v.indexOf(";");
        typeOk = opts.acceptsMediaType((semi < 0 ? v : v.slice(0, semi)).trim().toLowerCase());
        if (!typeOk) return FALLBACK;
        break;
      }
      case "connection": {
        const v = head
          .slice(colon + 1, end)
          .trim()
          .toLowerCase();
        if (v !== "keep-alive") return FALLBACK;
        break;
      }
      case "host":
        host = true;
        break;
      case "transfer-encoding":
      case "expect":
      case "upgrade":
      case "origin":
      case "access-control-request-method":
        return FALLBACK;
      default:
        if (name.includes(" ") || name.includes("\t")) return FALLBACK;
    }
    at = end + 2;
  }
  if (!typeOk || !host || length > opts.maxBodyBytes) return FALLBACK;
  return length;
}

/** One kept-alive connection on the fast path. */
class FastConnection {
  readonly #socket: Socket;
  readonly #opts: FastHttpOptions;
  /** Bytes received and not yet answered, in arrival order. */
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Total bytes of the request at the front once its head is read (0 = head not read yet). */
  #need = 0;
  /** When the first byte of the request at the front arrived (0 = nothing buffered). */
  #started = 0;
  /** Where the body of the request at the front starts (once its head is read). */
  #headEnd = 0;
  /** An answer is being computed; later requests wait so answers leave in order. */
  #busy = false;
  /** More than MAX_UNSENT_BYTES of answers wait for the client: reading stops until they drain. */
  #blocked = false;
  #gone = false;
  /** Last byte received or answer sent (ms since epoch), for the idle timeout. */
  #lastActive = Date.now();
  /** The socket timer's period: the shorter of the two timeouts that are set. */
  readonly #timerMs: number;
  readonly #onData = (chunk: Buffer): void => this.#receive(chunk);
  readonly #onTimeout = (): void => this.#idle();
  readonly #onEnd = (): void => this.#ended();
  readonly #onClose = (): void => {
    this.#gone = true;
  };
  readonly #onDrain = (): void => this.#drained();

  constructor(socket: Socket, opts: FastHttpOptions) {
    this.#socket = socket;
    this.#opts = opts;
    socket.on("data", this.#onData);
    socket.on("end", this.#onEnd);
    socket.on("close", this.#onClose);
    socket.on("error", noop);
    const { idleTimeoutMs: idle, requestTimeoutMs: request } = opts;
    this.#timerMs = idle > 0 && request > 0 ? Math.min(idle, request) : Math.max(idle, request);
    if (this.#timerMs > 0) {
      socket.setTimeout(this.#timerMs);
      socket.on("timeout", this.#onTimeout);
    }
  }

  #receive(chunk: Buffer): void {
    this.#lastActive = Date.now();
    if (this.#buffered === 0) this.#started = this.#lastActive;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    if (!this.#busy && !this.#blocked) this.#drain();
    // Waiting on an answer, or on the client to read: hold at most one whole request, then stop reading.
    if ((this.#busy || this.#blocked) && this.#buffered > this.#opts.maxBodyBytes + MAX_HEAD_BYTES) {
      this.#socket.pause();
    }
  }

  /** Answers every complete request buffered, stopping at one that must wait for its answer. */
  #drain(): void {
    while (!this.#busy && !this.#blocked && !this.#gone && this.#buffered > 0) {
      if (this.#opts.requestTimeoutMs > 0 && Date.now() - this.#started > this.#opts.requestTimeoutMs) {
        this.#timeOut();
        return;
      }
      // A body still arriving is joined once, when complete (joining per chunk would be quadratic).
      if (this.#need > 0 && this.#buffered < this.#need) return;
      const buf = this.#joined();
      if (this.#need === 0) {
        const headEnd = buf.indexOf(CRLFCRLF);
        if (headEnd < 0) {
          // Early exit for a non-POST (GET, OPTIONS, a WebSocket upgrade...) or a head too long.
          if (buf.length > MAX_HEAD_BYTES || (buf.length >= 5 && buf.toString("latin1", 0, 5) !== "POST "))
            this.#handOver();
          return;
        }
        const length =
          headEnd > MAX_HEAD_BYTES ? FALLBACK : bodyLengthOf(buf.toString("latin1", 0, headEnd), this.#opts);
        if (length === FALLBACK) {
          this.#handOver();
          return;
        }
        this.#need = headEnd + 4 + length;
        this.#headEnd = headEnd + 4;
      }
      if (buf.length < this.#need) return;
      const body = buf.subarray(this.#headEnd, this.#need);
      const rest = buf.length > this.#need ? buf.subarray(this.#need) : undefined;
      const started = this.#started;
      this.#chunks = rest === undefined ? [] : [rest];
      this.#buffered = rest === undefined ? 0 : rest.length;
      this.#need = 0;
      if (rest !== undefined) this.#started = Date.now();
      this.#answer(body, started);
    }
  }

  #joined(): Buffer {
    if (this.#chunks.length > 1) this.#chunks = [Buffer.concat(this.#chunks, this.#buffered)];
    return this.#chunks[0] as Buffer;
  }

  #answer(body: Buffer, started: number): void {
    let out: MaybePromise<string | undefined>;
    try {
      out = this.#opts.handle(body, started);
    } catch (err) {
      this.#failed(err);
      return;
    }
    if (!isPromise(out)) {
      this.#send(out);
      return;
    }
    this.#busy = true;
    out.then(
      (text) => this.#settled(text),
      (err: unknown) => this.#settledWithError(err),
    );
  }

  #settled(text: string | undefined): void {
    this.#busy = false;
    this.#send(text);
    this.#continue();
  }

  #settledWithError(err: unknown): void {
    this.#busy = false;
    this.#failed(err);
    this.#continue();
  }

  /** The client took the answers waiting for it. */
  #drained(): void {
    this.#blocked = false;
    this.#continue();
  }

  /** Answers what is buffered, then reads again unless still waiting. */
  #continue(): void {
    this.#drain();
    if (!this.#busy && !this.#blocked && !this.#gone && this.#socket.isPaused()) this.#socket.resume();
  }

  #failed(err: unknown): void {
    this.#opts.onError(err);
    this.#write("500 Internal Server Error", "text/plain; charset=utf-8", "internal server error\n");
  }

  #send(text: string | undefined): void {
    this.#write("200 OK", "application/json", text ?? "");
  }

  #write(status: string, contentType: string, text: string): void {
    if (this.#gone || this.#socket.destroyed) return;
    const now = Date.now();
    this.#lastActive = now;
    const flushed = this.#socket.write(
      responseHead(status, contentType, Buffer.byteLength(text, "utf8"), now) + text,
      "utf8",
    );
    if (!flushed && !this.#blocked && this.#socket.writableLength > MAX_UNSENT_BYTES) {
      this.#blocked = true;
      this.#socket.pause();
      this.#socket.once("drain", this.#onDrain);
    }
  }

  /** The socket saw no traffic for the timer's period (the timer is re-armed until a decision). */
  #idle(): void {
    if (this.#gone) return;
    const now = Date.now();
    if (this.#blocked) {
      // Answers the client has not read for as long as a request may take (geth's write timeout).
      const limit = this.#opts.requestTimeoutMs > 0 ? this.#opts.requestTimeoutMs : this.#opts.idleTimeoutMs;
      if (limit > 0 && now - this.#lastActive >= limit) {
        this.#socket.destroy();
        return;
      }
    } else if (!this.#busy && this.#buffered > 0) {
      if (this.#opts.requestTimeoutMs > 0 && now - this.#started >= this.#opts.requestTimeoutMs) {
        this.#timeOut();
        return;
      }
    } else if (!this.#busy && this.#opts.idleTimeoutMs > 0 && now - this.#lastActive >= this.#opts.idleTimeoutMs) {
      this.#socket.destroy();
      return;
    }
    this.#socket.setTimeout(this.#timerMs);
  }

  /** The client finished sending: an unanswered partial request will never complete. */
  #ended(): void {
    if (!this.#busy && !this.#blocked) this.#socket.end();
  }

  /** A request took too long to arrive: node:http's answer (408, close). */
  #timeOut(): void {
    this.#gone = true;
    this.#socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  }

  /** The rest of the connection, from the first unanswered byte, is node:http's. */
  #handOver(): void {
    const socket = this.#socket;
    socket.removeListener("data", this.#onData);
    socket.removeListener("end", this.#onEnd);
    socket.removeListener("close", this.#onClose);
    socket.removeListener("timeout", this.#onTimeout);
    socket.removeListener("drain", this.#onDrain);
    socket.removeListener("error", noop);
    socket.setTimeout(0);
    this.#gone = true;
    const pending = this.#joined();
    this.#chunks = [];
    this.#buffered = 0;
    socket.pause();
    socket.unshift(pending);
    this.#opts.fallback.emit("connection", socket);
    socket.resume();
  }
}

function noop(): void {}

/** Serves `socket` on the fast path until a request needs node:http (see the module comment). */
export function serveFastHttp(socket: Socket, opts: FastHttpOptions): void {
  new FastConnection(socket, opts);
}
