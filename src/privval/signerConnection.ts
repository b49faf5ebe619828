import type { Socket } from "node:net";
import { ChunkReader, delimit, SecretConnection, socketSource } from "../p2p/conn/index.js";
import { SignerAddressError, SignerConnectionError, SignerProtocolError } from "./errors.js";
import {
  decodeSignerMessage,
  encodeSignerMessage,
  MAX_SIGNER_MESSAGE_BYTES,
  type SignerMessage,
} from "./signerMessages.js";

/** Where a node listens for its signer and where the signer dials: `tcp://host:port` or `unix:///path`. */
export type SignerAddress =
  | { readonly kind: "tcp"; readonly host: string; readonly port: number }
  | { readonly kind: "unix"; readonly path: string };

/**
 * Parses priv_validator_laddr as CometBFT does (libs/net ProtocolAndAddress): `tcp://host:port`,
 * `unix://path`, or `host:port` alone, which means tcp.
 */
export function parseSignerAddress(addr: string): SignerAddress {
  const sep = addr.indexOf("://");
  const proto = sep < 0 ? "tcp" : addr.slice(0, sep);
  const rest = sep < 0 ? addr : addr.slice(sep + 3);
  if (proto === "unix") {
    if (rest === "") throw new SignerAddressError(`"${addr}" has no socket path. Use unix:///path/to/signer.sock`);
    return { kind: "unix", path: rest };
  }
  if (proto !== "tcp") {
    throw new SignerAddressError(
      `"${addr}" uses protocol "${proto}"; a signer address is tcp://host:port or unix:///path/to/socket`,
    );
  }
  const m = /^(?:\[([^\]]+)\]|([^:/]*)):(\d+)$/.exec(rest);
  const port = Number(m?.[3]);
  if (m === null || !Number.isInteger(port) || port > 65535) {
    throw new SignerAddressError(`"${addr}" is not host:port. Use tcp://127.0.0.1:26659`);
  }
  return { kind: "tcp", host: m[1] ?? m[2] ?? "", port };
}

export function formatSignerAddress(a: SignerAddress): string {
  if (a.kind === "unix") return `unix://${a.path}`;
  return a.host.includes(":") ? `tcp://[${a.host}]:${a.port}` : `tcp://${a.host}:${a.port}`;
}

/**
 * One privval connection, either side: varint-delimited `Message`s (protoio), over a
 * SecretConnection on tcp and in the clear on a unix socket (privval/socket_listeners.go and
 * socket_dialers.go). Reads and writes each have a deadline; a read that misses it closes the
 * connection, as CometBFT's endpoint drops it, since an answer arriving later would be taken for
 * the next request's. Reads must not overlap.
 */
export class SignerConnection {
  readonly #socket: Socket;
  readonly #reader: ChunkReader;
  readonly #secret: SecretConnection | undefined;
  readonly closed: Promise<void>;

  private constructor(socket: Socket, reader: ChunkReader, secret: SecretConnection | undefined) {
    this.#socket = socket;
    this.#reader = reader;
    this.#secret = secret;
    this.closed = new Promise((resolve) => {
      if (socket.destroyed) resolve();
      else socket.once("close", () => resolve());
    });
  }

  /**
   * Wraps a connected socket: on tcp (`secretKey` given: our 64-byte Ed25519 key) runs the secret
   * connection handshake within `timeoutMs`. On failure the socket is destroyed.
   */
  static async open(socket: Socket, secretKey: Uint8Array | undefined, timeoutMs: number): Promise<SignerConnection> {
    socket.setNoDelay?.(true);
    const raw = new ChunkReader(socketSource(socket));
    if (secretKey === undefined) return new SignerConnection(socket, raw, undefined);
    try {
      const sc = await withDeadline(
        SecretConnection.handshake(socket, raw, secretKey),
        timeoutMs,
        () => new SignerConnectionError(`secret connection handshake timed out after ${timeoutMs} ms`),
        socket,
      );
      return new SignerConnection(socket, sc.reader, sc);
    } catch (err) {
      socket.destroy();
      throw err instanceof SignerConnectionError
        ? err
        : new SignerConnectionError(`secret connection handshake failed: ${(err as Error).message}`, { cause: err });
    }
  }

  get isClosed(): boolean {
    return this.#socket.destroyed;
  }

  /** The remote's address, for logs. */
  get remote(): string {
    const s = this.#socket;
    return s.remoteAddress === undefined ? "unix socket" : `${s.remoteAddress}:${s.remotePort}`;
  }

  /** Reads the next message; closes the connection when it does not arrive within `timeoutMs`. */
  async read(timeoutMs: number): Promise<SignerMessage> {
    let body: Uint8Array;
    try {
      ({ msg: body } = await withDeadline(
        this.#reader.readDelimited(MAX_SIGNER_MESSAGE_BYTES),
        timeoutMs,
        () => new SignerConnectionError(`read timed out after ${timeoutMs} ms`),
        this.#socket,
      ));
    } catch (err) {
      this.close();
      if (err instanceof SignerConnectionError) throw err;
      throw new SignerConnectionError(`read failed: ${(err as Error).message}`, { cause: err });
    }
    try {
      return decodeSignerMessage(body);
    } catch (err) {
      // The stream may be out of step now: nothing after this can be trusted.
      this.close();
      throw err instanceof SignerProtocolError ? err : new SignerProtocolError(String(err), { cause: err });
    }
  }

  /** Writes one message; closes the connection when it is not handed to the kernel within `timeoutMs`. */
  async write(msg: SignerMessage, timeoutMs: number): Promise<void> {
    if (this.#socket.destroyed) throw new SignerConnectionError("connection closed");
    const bytes = delimit(encodeSignerMessage(msg));
    const flushed = this.#secret === undefined ? this.#socket.write(bytes) : this.#secret.write(bytes);
    if (flushed) return;
    try {
      await withDeadline(
        new Promise<void>((resolve) => {
          const done = () => {
            this.#socket.off("drain", done);
            this.#socket.off("close", done);
            resolve();
          };
          this.#socket.on("drain", done);
          this.#socket.on("close", done);
        }),
        timeoutMs,
        () => new SignerConnectionError(`write timed out after ${timeoutMs} ms`),
        this.#socket,
      );
    } catch (err) {
      this.close();
      throw err;
    }
    if (this.#socket.destroyed) throw new SignerConnectionError("connection closed while writing");
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** `work`, or `onTimeout()` after `ms` (the socket is then destroyed, which ends `work` too). */
async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error, socket: Socket): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      socket.destroy();
      reject(onTimeout());
    }, ms);
  });
  // When the deadline wins, the destroyed socket fails `work` too: that failure is expected.
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
