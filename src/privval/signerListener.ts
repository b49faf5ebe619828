import { lstatSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { generateEd25519PrivKey } from "../types/index.js";
import type { Logger } from "../util/logger.js";
import { SignerAddressError, SignerConnectionError } from "./errors.js";
import { formatSignerAddress, parseSignerAddress, type SignerAddress, SignerConnection } from "./signerConnection.js";
import type { SignerMessage } from "./signerMessages.js";

export interface SignerListenerOptions {
  /** Deadline of each read and write, and of the secret handshake (CometBFT: 5 s). */
  readonly timeoutReadWriteMs: number;
  /**
   * Runs on each new connection before it serves requests (the client checks the signer's key);
   * a throw closes it and the next waiting connection is tried.
   */
  readonly verify?: (conn: SignerConnection) => Promise<void>;
  /** Called each time a verified connection starts serving. */
  readonly onConnected?: () => void;
}

/**
 * The node's end of the privval socket (privval/signer_listener_endpoint.go): it listens on
 * priv_validator_laddr and the signer dials in. One connection serves at a time; a signer dialing
 * while another is connected waits, unanswered, until that one drops (as in CometBFT, where the
 * listener accepts only when it has no connection). Requests are serialised: one request, one
 * answer. When idle the connection is pinged every 2/3 of the read/write timeout, so the signer's
 * read deadline never passes, and a failed ping drops it.
 */
export class SignerListener {
  readonly address: SignerAddress;
  readonly #server: Server;
  readonly #opts: SignerListenerOptions;
  readonly #log: Logger;
  /** Our secret-connection key on tcp: fresh per start, as CometBFT's (the signer cannot pin it). */
  readonly #secretKey: Uint8Array | undefined;
  readonly #waiting: Socket[] = [];
  #active: SignerConnection | undefined;
  #promoting = false;
  /** The socket going through the handshake and the key check (closed by close() too). */
  #promotingSocket: Socket | undefined;
  #closed = false;
  /** Why the last connection was refused, for the error of a request that found none. */
  #lastRefusal = "";
  #connectedWaiters: (() => void)[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #lastUse = Date.now();
  readonly #pingTimer: ReturnType<typeof setInterval>;
  readonly #pingIntervalMs: number;

  private constructor(server: Server, address: SignerAddress, opts: SignerListenerOptions, log: Logger) {
    this.#server = server;
    this.address = address;
    this.#opts = opts;
    this.#log = log;
    this.#secretKey = address.kind === "tcp" ? generateEd25519PrivKey().bytes : undefined;
    this.#pingIntervalMs = Math.max(1, Math.floor((opts.timeoutReadWriteMs * 2) / 3));
    server.on("connection", (socket) => this.#onConnection(socket));
    this.#pingTimer = setInterval(() => this.#pingIfIdle(), Math.max(10, Math.floor(this.#pingIntervalMs / 4)));
    this.#pingTimer.unref();
  }

  /** Listens on `laddr` (tcp port 0 picks a free port: see `address`). A stale unix socket file is replaced. */
  static async listen(laddr: string, opts: SignerListenerOptions, log: Logger): Promise<SignerListener> {
    const parsed = parseSignerAddress(laddr);
    const server = createServer({ pauseOnConnect: true });
    if (parsed.kind === "unix") await removeStaleSocket(parsed.path);
    await new Promise<void>((resolve, reject) => {
      server.once("error", (err) =>
        reject(
          new SignerAddressError(`cannot listen for the remote signer on ${laddr}: ${(err as Error).message}`, {
            cause: err,
          }),
        ),
      );
      if (parsed.kind === "unix") server.listen(parsed.path, resolve);
      else server.listen(parsed.port, parsed.host, resolve);
    });
    server.on("error", (err) => log.error({ err }, "remote signer listener failed"));
    const bound = server.address();
    const address: SignerAddress =
      parsed.kind === "tcp" && bound !== null && typeof bound === "object" ? { ...parsed, port: bound.port } : parsed;
    return new SignerListener(server, address, opts, log);
  }

  isConnected(): boolean {
    return this.#active !== undefined && !this.#active.isClosed;
  }

  /** Resolves once a signer is connected (and verified); rejects after `waitMs`. */
  waitForConnection(waitMs: number): Promise<SignerConnection> {
    return this.#waitConnection(waitMs);
  }

  /**
   * Sends `msg` and reads its answer on the current connection, waiting up to `waitMs` for one.
   * After any other request in flight. A failed read or write drops the connection.
   */
  request(msg: SignerMessage, waitMs: number): Promise<SignerMessage> {
    const run = this.#queue.then(() => this.#exchange(msg, waitMs));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pingTimer);
    this.#active?.close();
    this.#promotingSocket?.destroy();
    for (const s of this.#waiting.splice(0)) s.destroy();
    for (const w of this.#connectedWaiters.splice(0)) w();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #exchange(msg: SignerMessage, waitMs: number): Promise<SignerMessage> {
    const conn = await this.#waitConnection(waitMs);
    const t = this.#opts.timeoutReadWriteMs;
    try {
      await conn.write(msg, t);
      const answer = await conn.read(t);
      this.#lastUse = Date.now();
      return answer;
    } catch (err) {
      conn.close();
      throw err;
    }
  }

  async #waitConnection(waitMs: number): Promise<SignerConnection> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.#closed) throw new SignerConnectionError("the remote signer listener is closed");
      const active = this.#active;
      if (active !== undefined && !active.isClosed) return active;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new SignerConnectionError(
          `no remote signer connected to ${formatSignerAddress(this.address)} (waited ${waitMs} ms)${this.#lastRefusal === "" ? "" : `; the last one was refused: ${this.#lastRefusal}`}. Start the signer and point it at this address`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        this.#connectedWaiters.push(done);
        function done() {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  }

  #onConnection(socket: Socket): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    socket.on("error", () => {});
    socket.once("close", () => {
      const i = this.#waiting.indexOf(socket);
      if (i >= 0) this.#waiting.splice(i, 1);
    });
    this.#waiting.push(socket);
    void this.#promote();
  }

  /** With no live connection, takes the next waiting one through the handshake and the check. */
  async #promote(): Promise<void> {
    if (this.#promoting || this.#closed || this.isConnected()) return;
    this.#promoting = true;
    try {
      for (;;) {
        const socket = this.#waiting.shift();
        if (socket === undefined || this.#closed) return;
        if (socket.destroyed) continue;
        socket.resume();
        this.#promotingSocket = socket;
        let conn: SignerConnection;
        try {
          conn = await SignerConnection.open(socket, this.#secretKey, this.#opts.timeoutReadWriteMs);
          await this.#opts.verify?.(conn);
        } catch (err) {
          if (this.#closed) return;
          socket.destroy();
          this.#lastRefusal = (err as Error).message;
          this.#log.error({ err: this.#lastRefusal }, "remote signer connection refused");
          continue;
        }
        if (this.#closed) {
          conn.close();
          return;
        }
        this.#active = conn;
        this.#lastUse = Date.now();
        this.#log.info({ remote: conn.remote }, "remote signer connected");
        void conn.closed.then(() => this.#onDropped(conn));
        for (const w of this.#connectedWaiters.splice(0)) w();
        this.#opts.onConnected?.();
        return;
      }
    } finally {
      this.#promoting = false;
      this.#promotingSocket = undefined;
    }
  }

  #onDropped(conn: SignerConnection): void {
    if (this.#active !== conn) return;
    this.#active = undefined;
    if (this.#closed) return;
    this.#log.error("remote signer disconnected; waiting for it to connect again");
    void this.#promote();
  }

  /** The keepalive (signer_listener_endpoint.go pingLoop), only while connected and idle. */
  #pingIfIdle(): void {
    if (!this.isConnected() || Date.now() - this.#lastUse < this.#pingIntervalMs) return;
    this.#lastUse = Date.now();
    this.request({ kind: "pingRequest" }, 0).then(
      (answer) => {
        if (answer.kind !== "pingResponse") {
          this.#log.error({ kind: answer.kind }, "remote signer answered a ping with another message; dropping it");
          this.#active?.close();
        }
      },
      (err: unknown) => this.#log.error({ err: (err as Error).message }, "remote signer ping failed"),
    );
  }
}

/**
 * A unix socket file left by a node that did not shut down cleanly is removed; one a live process
 * still listens on is not (listening then fails with EADDRINUSE, which names the path).
 */
async function removeStaleSocket(path: string): Promise<void> {
  let isSocket = false;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) return;
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (!live) {
    try {
      unlinkSync(path);
    } catch {
      // Listening reports the problem with the path.
    }
  }
}
