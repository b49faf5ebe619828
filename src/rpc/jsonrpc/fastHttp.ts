import type { Server } from "node:http";
import type { Socket } from "node:net";
import { isPromise, type MaybePromise } from "./dispatch.js";

/**
 * A fast path in front of node:http for the request shapes RPC clients send: `POST <path> HTTP/1.1`
 * with a Host and a Content-Length body, or `GET <path?query> HTTP/1.1` without a body, and no
 * Origin, Expect, Upgrade, Transfer-Encoding or `Connection: close`, on a target the server takes
 * here ({@link FastHttpOptions.accepts}). Such requests are parsed here and answered with the bytes
 * the server's handler makes (its own status line and headers), in order, on the kept-alive socket.
 *
 * Anything else (other methods or targets, CORS requests, chunked or oversized bodies, malformed or
 * very long heads, HTTP/1.0) is not second-guessed: the socket, with every byte not yet answered,
 * is handed to the node:http server (`emit("connection")`), which serves it and the rest of the
 * connection with its full rules and statuses. node:http's request/response objects and streams
 * cost more than the answer of a cheap call (about 1/3 of the throughput of a fixed body on this
 * machine), which is why the common case skips them.
 */

export type FastMethod = "GET" | "POST";

/** A whole HTTP answer as written to the socket: status line, headers and body. */
export type FastAnswer = string | Buffer;

export interface FastHttpOptions {
  /** Whether a request with this method and target is served here (synchronous; else node:http). */
  readonly accepts: (method: FastMethod, target: string) => boolean;
  /**
   * Whether a POST with this lower-cased media type (without parameters; undefined when there is
   * no Content-Type) is served here.
   */
  readonly acceptsMediaType: (media: string | undefined) => boolean;
  /** A POST with an empty body goes to node:http (the node RPC answers it with a page naming the Host). */
  readonly emptyPostToFallback?: boolean;
  /** Longer heads go to node:http (its max header size decides: 431). */
  readonly maxHeadBytes?: number;
  /** Larger declared bodies go to node:http, which answers its 413 or 400. */
  readonly maxBodyBytes: number;
  /** A request whose head and body are not complete this long after its first byte gets 408 and a close (0 = none). */
  readonly requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this long (0 = never). */
  readonly idleTimeoutMs: number;
  /**
   * An answer not made, or not taken by the client, this long after its request arrived cuts the
   * connection (Go's WriteTimeout; 0 = the request timeout applies to answers the client does not take).
   */
  readonly writeTimeoutMs?: number;
  /** The 408 answer (status line and headers) a request too slow to arrive gets before the close. */
  readonly timeoutAnswer?: string;
  /**
   * The answer to a request; `body` is empty for a GET, `started` is when the request's first
   * byte arrived (ms since epoch).
   */
  readonly handle: (
    method: FastMethod,
    target: string,
    body: Buffer,
    started: number,
    socket: Socket,
  ) => MaybePromise<FastAnswer>;
  /** Called when `handle` throws or rejects: the answer to send, or undefined to cut the connection. */
  readonly onError: (err: unknown) => FastAnswer | undefined;
  /**
   * Where connections go that leave the fast path: a node:http server (the socket, with the bytes not
   * yet answered put back, is emitted as its connection), or a function given the socket (paused,
   * its listeners removed, answers already written possibly still being flushed) and those bytes.
   */
  readonly fallback: Server | FastFallback;
}

/** A connection leaving the fast path, with the bytes read from it and not answered. */
export type FastFallback = (socket: Socket, pending: Buffer) => void;

/** node:http's default max header size; longer heads are node's to refuse (431). */
const DEFAULT_MAX_HEAD_BYTES = 16 * 1024;
const NODE_TIMEOUT_ANSWER = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
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
export function httpDate(now: number): string {
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(s * 1000).toUTCString();
  }
  return dateText;
}

/**
 * An answer laid out as the EVM server's fast path has always written it: status line,
 * Content-Type, Date, Content-Length, body.
 */
export function simpleAnswer(status: string, contentType: string, text: string): string {
  return `HTTP/1.1 ${status}\r\nContent-Type: ${contentType}\r\nDate: ${httpDate(Date.now())}\r\nContent-Length: ${Buffer.byteLength(text, "utf8")}\r\n\r\n${text}`;
}

/**
 * An answer laid out byte for byte as node:http writes it on a kept-alive HTTP/1.1 connection: the
 * headers set before writeHead (`first`, complete lines), Content-Type (left out when undefined),
 * Content-Length, the further headers given to writeHead (`extra`, complete lines), Date,
 * Connection and Keep-Alive (the server's keepAliveTimeout in whole seconds).
 */
export function nodeHttpAnswer(
  statusLine: string,
  first: string,
  contentType: string | undefined,
  body: string | Buffer,
  extra: string,
  keepAliveSeconds: number,
): FastAnswer {
  const length = typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length;
  const type = contentType === undefined ? "" : `Content-Type: ${contentType}\r\n`;
  const head = `HTTP/1.1 ${statusLine}\r\n${first}${type}Content-Length: ${length}\r\n${extra}Date: ${httpDate(Date.now())}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n\r\n`;
  if (typeof body === "string") return head + body;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

const DIGITS = /^[0-9]{1,15}$/;

/** What the head of a request says: its body length, or that node:http must serve it. */
const FALLBACK = -1;

/** The request line of the head being read: set by {@link readHead}. */
interface RequestLine {
  method: FastMethod;
  target: string;
}

/**
 * Reads a complete request head (`head` = latin1 text before the blank line) into `line`. Returns
 * the declared body length (0 for a GET), or FALLBACK for any request this path does not serve.
 */
function readHead(head: string, opts: FastHttpOptions, line: RequestLine): number {
  const lineEnd = head.indexOf("\r\n");
  const requestLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
  if (!requestLine.endsWith(" HTTP/1.1")) return FALLBACK;
  const sp = requestLine.indexOf(" ");
  const method = requestLine.slice(0, sp);
  if (method !== "POST" && method !== "GET") return FALLBACK;
  const target = requestLine.slice(sp + 1, requestLine.length - 9);
  if (target.includes(" ") || !opts.accepts(method, target)) return FALLBACK;
  line.method = method;
  line.target = target;
  let length = FALLBACK;
  let media: string | undefined;
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
        if (media !== undefined) return FALLBACK;
        const v = head.slice(colon + 1, end);
        const semi = v.indexOf(";");
        media = (semi < 0 ? v : v.slice(0, semi)).trim().toLowerCase();
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
  if (!host) return FALLBACK;
  if (method === "GET") return length === FALLBACK || length === 0 ? 0 : FALLBACK;
  if (length === FALLBACK || length > opts.maxBodyBytes || !opts.acceptsMediaType(media)) return FALLBACK;
  if (length === 0 && opts.emptyPostToFallback === true) return FALLBACK;
  return length;
}

const EMPTY = Buffer.alloc(0);

/** One kept-alive connection on the fast path. */
class FastConnection {
  readonly #socket: Socket;
  readonly #opts: FastHttpOptions;
  readonly #maxHeadBytes: number;
  /** Bytes received and not yet answered, in arrival order. */
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Total bytes of the request at the front once its head is read (0 = head not read yet). */
  #need = 0;
  /** When the first byte of the request at the front arrived (0 = nothing buffered). */
  #started = 0;
  /** Where the body of the request at the front starts (once its head is read). */
  #headEnd = 0;
  /** The request line of the request at the front (once its head is read). */
  readonly #line: RequestLine = { method: "POST", target: "" };
  /** An answer is being computed; later requests wait so answers leave in order. */
  #busy = false;
  /** When the request being answered arrived (for the write timeout). */
  #answerStarted = 0;
  /** More than MAX_UNSENT_BYTES of answers wait for the client: reading stops until they drain. */
  #blocked = false;
  #gone = false;
  /** Last byte received or answer sent (ms since epoch), for the idle timeout. */
  #lastActive = Date.now();
  /** Last answer written (ms since epoch), for the write timeout of answers the client does not take. */
  #lastWrite = 0;
  /** The socket timer's period: the shortest of the timeouts that are set. */
  readonly #timerMs: number;
  readonly #onData = (chunk: Buffer): void => this.#receive(chunk);
  readonly #onTimeout = (): void => this.#idle();
  readonly #onEnd = (): void => this.#ended();
  readonly #onClose = (): void => {
    this.#gone = true;
  };
  readonly #onDrain = (): void => this.#drained();
  readonly #onSettled = (answer: FastAnswer): void => this.#settled(answer);
  readonly #onRejected = (err: unknown): void => this.#settledWithError(err);

  constructor(socket: Socket, opts: FastHttpOptions) {
    this.#socket = socket;
    this.#opts = opts;
    this.#maxHeadBytes = opts.maxHeadBytes ?? DEFAULT_MAX_HEAD_BYTES;
    socket.on("data", this.#onData);
    socket.on("end", this.#onEnd);
    socket.on("close", this.#onClose);
    socket.on("error", noop);
    let timerMs = 0;
    for (const t of [opts.idleTimeoutMs, opts.requestTimeoutMs, opts.writeTimeoutMs ?? 0]) {
      if (t > 0 && (timerMs === 0 || t < timerMs)) timerMs = t;
    }
    this.#timerMs = timerMs;
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
    if ((this.#busy || this.#blocked) && this.#buffered > this.#opts.maxBodyBytes + this.#maxHeadBytes) {
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
          // Early exit for another method (OPTIONS, HEAD...) or a head too long.
          if (buf.length > this.#maxHeadBytes || (buf.length >= 4 && !startsLikeServed(buf))) this.#handOver();
          return;
        }
        const length =
          headEnd > this.#maxHeadBytes
            ? FALLBACK
            : readHead(buf.toString("latin1", 0, headEnd), this.#opts, this.#line);
        if (length === FALLBACK) {
          this.#handOver();
          return;
        }
        this.#need = headEnd + 4 + length;
        this.#headEnd = headEnd + 4;
      }
      if (buf.length < this.#need) return;
      const body = this.#need > this.#headEnd ? buf.subarray(this.#headEnd, this.#need) : EMPTY;
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
    let out: MaybePromise<FastAnswer>;
    try {
      out = this.#opts.handle(this.#line.method, this.#line.target, body, started, this.#socket);
    } catch (err) {
      this.#failed(err);
      return;
    }
    if (!isPromise(out)) {
      this.#write(out);
      return;
    }
    this.#busy = true;
    this.#answerStarted = started;
    out.then(this.#onSettled, this.#onRejected);
  }

  #settled(answer: FastAnswer): void {
    this.#busy = false;
    this.#write(answer);
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
    const answer = this.#opts.onError(err);
    if (answer !== undefined) this.#write(answer);
    else {
      this.#gone = true;
      this.#socket.destroy();
    }
  }

  #write(answer: FastAnswer): void {
    if (this.#gone || this.#socket.destroyed) return;
    const now = Date.now();
    this.#lastActive = now;
    this.#lastWrite = now;
    const flushed = typeof answer === "string" ? this.#socket.write(answer, "utf8") : this.#socket.write(answer);
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
    const { requestTimeoutMs, idleTimeoutMs } = this.#opts;
    const writeTimeoutMs = this.#opts.writeTimeoutMs ?? 0;
    if (this.#busy) {
      // An answer still being made past the write timeout: the connection is cut (Go's WriteTimeout).
      if (writeTimeoutMs > 0 && now - this.#answerStarted >= writeTimeoutMs) {
        this.#socket.destroy();
        return;
      }
    } else if (this.#blocked || (writeTimeoutMs > 0 && this.#socket.writableLength > 0)) {
      // Answers the client has not read for as long as a request may take (geth's write timeout).
      const limit = writeTimeoutMs > 0 ? writeTimeoutMs : requestTimeoutMs > 0 ? requestTimeoutMs : idleTimeoutMs;
      if (limit > 0 && now - this.#lastWrite >= limit) {
        this.#socket.destroy();
        return;
      }
    } else if (this.#buffered > 0) {
      if (requestTimeoutMs > 0 && now - this.#started >= requestTimeoutMs) {
        this.#timeOut();
        return;
      }
    } else if (idleTimeoutMs > 0 && now - this.#lastActive >= idleTimeoutMs) {
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
    this.#socket.end(this.#opts.timeoutAnswer ?? NODE_TIMEOUT_ANSWER);
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
    const fallback = this.#opts.fallback;
    if (typeof fallback === "function") {
      fallback(socket, pending);
      return;
    }
    socket.unshift(pending);
    fallback.emit("connection", socket);
    socket.resume();
  }
}

/** Whether a request's first bytes can be a GET or a POST. */
function startsLikeServed(buf: Buffer): boolean {
  const b0 = buf[0];
  if (b0 === 0x47) return buf[1] === 0x45 && buf[2] === 0x54 && buf[3] === 0x20; // "GET "
  return b0 === 0x50 && buf[1] === 0x4f && buf[2] === 0x53 && buf[3] === 0x54; // "POST"
}

function noop(): void {}

/** Serves `socket` on the fast path until a request needs node:http (see the module comment). */
export function serveFastHttp(socket: Socket, opts: FastHttpOptions): void {
  new FastConnection(socket, opts);
}
