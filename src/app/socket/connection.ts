import { createConnection, type Socket } from "node:net";
import { Request as PbRequest, Response as PbResponse } from "cosmjs-types/tendermint/abci/types";
import type { ListenAddress } from "../../config/index.js";
import type { Logger } from "../../util/logger.js";
import { encodeLengthPrefix, FrameDecoder } from "./codec.js";
import { AbciConnectionError } from "./errors.js";

/**
 * One connection of CometBFT's ABCI socket protocol, the client side (what CometBFT v0.38's
 * abci/client/socket_client.go does, written for Node; docs/abci-socket.md):
 * - every request is a length-delimited `tendermint.abci.Request`; the application answers each with
 *   a `Response` of the same kind, in the order of the requests;
 * - the application buffers its answers until it receives a Flush, and answers the Flush after them;
 *   so every batch of requests written in one turn of the event loop is followed by one Flush (Go's
 *   client flushes after each synchronous call, and on a 20 ms timer after asynchronous CheckTxs);
 * - an Exception response, an answer of the wrong kind or with nothing asked, undecodable bytes, or
 *   the connection closing, stops the connection for good: every waiting request is rejected with
 *   AbciConnectionError and `onError` is told (CometBFT then stops the node).
 */

export type AbciConnectionName = "consensus" | "mempool" | "query" | "snapshot";

/** The kinds of request (the oneof field names of `tendermint.abci.Request`). */
export type AbciRequestKind = keyof PbRequest;
export type RequestOf<K extends AbciRequestKind> = NonNullable<PbRequest[K]>;
/** The response to a request of kind K (the Response field of the same name). */
export type AbciResponseOf<K extends AbciRequestKind> = NonNullable<PbResponse[K]>;

const RESPONSE_KINDS = [
  "exception",
  "echo",
  "flush",
  "info",
  "initChain",
  "query",
  "checkTx",
  "commit",
  "listSnapshots",
  "offerSnapshot",
  "loadSnapshotChunk",
  "applySnapshotChunk",
  "prepareProposal",
  "processProposal",
  "extendVote",
  "verifyVoteExtension",
  "finalizeBlock",
] as const satisfies readonly (keyof PbResponse)[];

/** Request{flush: {}}, framed: 02 12 00. */
const FLUSH_FRAME = Uint8Array.of(0x02, 0x12, 0x00);

/** CometBFT's abci client: dialRetryIntervalSeconds. */
export const DIAL_RETRY_INTERVAL_MS = 3_000;

interface Pending {
  readonly kind: AbciRequestKind;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** One connection to the application, over the socket protocol or gRPC. */
export interface AbciConnection {
  readonly name: AbciConnectionName;
  /** Why the connection stopped, if it did. */
  readonly error: AbciConnectionError | undefined;
  /** Requests sent and not answered yet. */
  readonly inFlight: number;
  /** Sends a request and resolves with the application's response of the same kind. */
  request<K extends AbciRequestKind>(kind: K, value: RequestOf<K>): Promise<AbciResponseOf<K>>;
  echo(message: string): Promise<string>;
  flush(): Promise<void>;
  /** Closes the connection; waiting requests are rejected. Not an error: onError is not called. */
  close(): void;
}

export interface AbciConnectionOptions {
  readonly name: AbciConnectionName;
  readonly address: ListenAddress;
  readonly log: Logger;
  /** Called once when the connection stops for an error (not after close()). */
  readonly onError: (err: AbciConnectionError) => void;
  /** Wait between dial attempts while the application is not listening yet (default 3 s, as CometBFT). */
  readonly retryIntervalMs?: number;
  /** Ends the dial attempts (the node is stopping). */
  readonly signal?: AbortSignal;
}

/** `tcp://host:port` or `unix:///path`, for messages. */
export function formatAbciAddress(a: ListenAddress): string {
  if (a.protocol === "unix") return `unix://${a.path}`;
  return `tcp://${a.host.includes(":") ? `[${a.host}]` : a.host}:${a.port}`;
}

function dial(address: ListenAddress): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket =
      address.protocol === "unix"
        ? createConnection({ path: address.path })
        : createConnection({ host: address.host === "" ? "127.0.0.1" : address.host, port: address.port });
    const onError = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once("error", onError);
    socket.once("connect", () => {
      socket.off("error", onError);
      resolve(socket);
    });
  });
}

export function abortError(name: string, address: ListenAddress): AbciConnectionError {
  return new AbciConnectionError(name, `stopped while dialling ${formatAbciAddress(address)}`);
}

export function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Opens a connection to the application with `open` until it succeeds: each failure is logged as
 * CometBFT's `abci.<client>` logs it and retried after `retryIntervalMs`; an abort ends the wait
 * (`discard` closes a connection opened after it). Shared by the socket and gRPC clients.
 */
export async function connectWithRetry<T>(
  opts: AbciConnectionOptions,
  client: "socketClient" | "grpcClient",
  open: () => Promise<T>,
  discard: (conn: T) => void,
): Promise<T> {
  const text = formatAbciAddress(opts.address);
  const interval = opts.retryIntervalMs ?? DIAL_RETRY_INTERVAL_MS;
  for (;;) {
    if (aborted(opts.signal)) throw abortError(opts.name, opts.address);
    try {
      const conn = await open();
      if (aborted(opts.signal)) {
        discard(conn);
        throw abortError(opts.name, opts.address);
      }
      return conn;
    } catch (err) {
      if (err instanceof AbciConnectionError) throw err;
      opts.log.error(
        { connection: opts.name, err: (err as Error).message },
        `abci.${client} failed to connect to ${text}.  Retrying after ${interval / 1000}s...`,
      );
      await sleep(interval, opts.signal);
    }
  }
}

export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export class AbciSocketConnection implements AbciConnection {
  readonly name: AbciConnectionName;
  readonly #socket: Socket;
  readonly #log: Logger;
  readonly #onError: (err: AbciConnectionError) => void;
  readonly #decoder = new FrameDecoder();
  /** Requests written and not answered yet, oldest first from #head. */
  #pending: Pending[] = [];
  #head = 0;
  /** A request was written since the last Flush. */
  #unflushed = false;
  #flushScheduled = false;
  #error: AbciConnectionError | undefined;
  #closed = false;

  /**
   * Dials the application; while it does not answer, retries every `retryIntervalMs` and logs each
   * failure (CometBFT's socket client does the same when not told to fail at once).
   */
  static async connect(opts: AbciConnectionOptions): Promise<AbciSocketConnection> {
    const socket = await connectWithRetry(
      opts,
      "socketClient",
      () => dial(opts.address),
      (s) => s.destroy(),
    );
    opts.log.info({ connection: opts.name, address: formatAbciAddress(opts.address) }, "ABCI connection established");
    return new AbciSocketConnection(socket, opts);
  }

  private constructor(socket: Socket, opts: AbciConnectionOptions) {
    this.name = opts.name;
    this.#socket = socket;
    this.#log = opts.log;
    this.#onError = opts.onError;
    if (opts.address.protocol === "tcp") socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("error", (err) => this.#fail(`socket error: ${err.message}`, err));
    socket.on("close", () => this.#fail("the application closed the connection (read message: EOF)"));
  }

  /** Why the connection stopped, if it did. */
  get error(): AbciConnectionError | undefined {
    return this.#error;
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.#pending.length - this.#head;
  }

  /** Sends a request and resolves with the application's response of the same kind. */
  request<K extends AbciRequestKind>(kind: K, value: RequestOf<K>): Promise<AbciResponseOf<K>> {
    if (this.#error !== undefined) return Promise.reject(this.#error);
    if (this.#closed) return Promise.reject(new AbciConnectionError(this.name, "the connection is closed"));
    let body: Uint8Array;
    try {
      body = PbRequest.encode({ [kind]: value } as PbRequest).finish();
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<AbciResponseOf<K>>((resolve, reject) => {
      // Track before writing, so that an answer can never arrive for an unknown request.
      this.#pending.push({ kind, resolve: resolve as (v: unknown) => void, reject });
      this.#write(kind, body);
    });
  }

  /** Echo: the application returns the message (a liveness check). */
  async echo(message: string): Promise<string> {
    return (await this.request("echo", { message })).message;
  }

  /** Sends a Flush and resolves once the application has answered everything sent before it. */
  async flush(): Promise<void> {
    await this.request("flush", {});
  }

  /** Closes the connection; waiting requests are rejected. Not an error: onError is not called. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#rejectAll(new AbciConnectionError(this.name, "the connection was closed while a request waited"));
    this.#socket.destroy();
  }

  #write(kind: AbciRequestKind, body: Uint8Array): void {
    if (!this.#flushScheduled) {
      // The first request of this turn: hold the bytes until the batch's Flush is written.
      this.#flushScheduled = true;
      this.#socket.cork();
      queueMicrotask(() => this.#endBatch());
    }
    // Two writes under cork (one syscall): no copy of a large request into a framed buffer.
    this.#socket.write(encodeLengthPrefix(body.length));
    this.#socket.write(body);
    this.#unflushed = kind !== "flush";
  }

  /** After the requests of this turn: one Flush if any was not flushed, then the bytes go out. */
  #endBatch(): void {
    this.#flushScheduled = false;
    if (this.#error !== undefined || this.#closed) return;
    if (this.#unflushed) {
      this.#unflushed = false;
      this.#pending.push({ kind: "flush", resolve: noop, reject: noop });
      this.#socket.write(FLUSH_FRAME);
    }
    this.#socket.uncork();
  }

  #onData(chunk: Buffer): void {
    if (this.#error !== undefined || this.#closed) return;
    let messages: Uint8Array[];
    try {
      messages = this.#decoder.push(chunk);
    } catch (err) {
      this.#fail(`read message: ${(err as Error).message}`, err);
      return;
    }
    for (const body of messages) {
      let res: PbResponse;
      try {
        // Decoded byte fields are views of what they were decoded from: copy the message out of the
        // socket's read buffer so a kept value (an app hash) does not hold the whole chunk.
        res = PbResponse.decode(body.slice());
      } catch (err) {
        this.#fail(`read message: not a tendermint.abci.Response (${(err as Error).message})`, err);
        return;
      }
      this.#onResponse(res);
      if (this.#error !== undefined || this.#closed) return;
    }
  }

  #onResponse(res: PbResponse): void {
    const kind = RESPONSE_KINDS.find((k) => res[k] !== undefined);
    if (kind === "exception") {
      this.#fail(`the application answered with an exception: ${res.exception?.error ?? ""}`);
      return;
    }
    const next = this.#pending[this.#head];
    if (next === undefined) {
      this.#fail(`unexpected response ${kind ?? "(empty)"} when no call was made`);
      return;
    }
    if (kind !== next.kind) {
      this.#fail(`unexpected response ${kind ?? "(empty)"} to the request ${next.kind}`);
      return;
    }
    this.#pending[this.#head] = undefined as unknown as Pending;
    this.#head++;
    if (this.#head === this.#pending.length) {
      this.#pending = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#pending.length) {
      this.#pending = this.#pending.slice(this.#head);
      this.#head = 0;
    }
    next.resolve(res[kind]);
  }

  #fail(message: string, cause?: unknown): void {
    if (this.#error !== undefined || this.#closed) return;
    this.#error = new AbciConnectionError(this.name, message, cause === undefined ? undefined : { cause });
    this.#socket.destroy();
    this.#rejectAll(this.#error);
    this.#log.error({ connection: this.name, err: message }, `Stopping abci.socketClient for error: ${message}`);
    this.#onError(this.#error);
  }

  #rejectAll(err: Error): void {
    const pending = this.#pending;
    const head = this.#head;
    this.#pending = [];
    this.#head = 0;
    for (let i = head; i < pending.length; i++) pending[i]?.reject(err);
  }
}

function noop(): void {}
