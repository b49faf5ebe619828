import type { Socket } from "node:net";
import { ConnectionClosedError, MalformedPacketError } from "./errors.js";

/** Where a ChunkReader gets its bytes: the next chunk, or undefined at end of stream. */
export type ChunkSource = () => Promise<Uint8Array | undefined>;

/**
 * Pull-style reads of exact lengths and varint-delimited messages over a chunk source (the role
 * bufio.Reader + protoio.DelimitedReader play in CometBFT). Reads must not overlap.
 */
export class ChunkReader {
  readonly #pull: ChunkSource;
  #chunks: Uint8Array[] = [];
  #head = 0;
  #size = 0;

  constructor(pull: ChunkSource) {
    this.#pull = pull;
  }

  /** Bytes already buffered. */
  get buffered(): number {
    return this.#size;
  }

  async readExact(n: number): Promise<Uint8Array> {
    while (this.#size < n) {
      const c = await this.#pull();
      if (c === undefined) throw new ConnectionClosedError();
      if (c.length > 0) {
        this.#chunks.push(c);
        this.#size += c.length;
      }
    }
    return this.#take(n);
  }

  /** Reads a uvarint length prefix and that many bytes; a length above maxBytes is an error. */
  async readDelimited(maxBytes: number): Promise<{ msg: Uint8Array; wireBytes: number }> {
    let len = 0;
    let shift = 0;
    let prefix = 0;
    for (;;) {
      const b = (await this.readExact(1))[0] ?? 0;
      prefix++;
      len += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
      if (shift > 63) throw new MalformedPacketError("malformed packet: length prefix varint overflows");
    }
    if (len > maxBytes) {
      throw new MalformedPacketError(`message exceeds max size (${len} > ${maxBytes})`);
    }
    const msg = await this.readExact(len);
    return { msg, wireBytes: prefix + len };
  }

  #take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const c = this.#chunks[0] as Uint8Array;
      const avail = c.length - this.#head;
      const k = Math.min(avail, n - filled);
      out.set(c.subarray(this.#head, this.#head + k), filled);
      filled += k;
      if (k === avail) {
        this.#chunks.shift();
        this.#head = 0;
      } else {
        this.#head += k;
      }
    }
    this.#size -= n;
    return out;
  }
}

/** Buffered socket bytes above which we pause the socket, so slow readers push back on TCP. */
const SOCKET_HIGH_WATER_BYTES = 256 * 1024;

/**
 * A ChunkSource over a socket. Data is buffered as it arrives and the socket is paused while the
 * buffer is above a high-water mark, so a reader that stops pulling (receive rate limit, a peer not
 * yet started) makes TCP push back on the sender. Ends with undefined on EOF, rejects on socket errors.
 */
export function socketSource(socket: Socket): ChunkSource {
  const queue: Uint8Array[] = [];
  let queued = 0;
  let done = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  socket.on("data", (chunk: Buffer) => {
    queue.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    queued += chunk.byteLength;
    if (queued > SOCKET_HIGH_WATER_BYTES) socket.pause();
    notify();
  });
  socket.on("end", () => {
    done = true;
    notify();
  });
  socket.on("error", (err) => {
    failure ??= err;
    notify();
  });
  socket.on("close", () => {
    done = true;
    notify();
  });
  return async () => {
    for (;;) {
      const c = queue.shift();
      if (c !== undefined) {
        queued -= c.length;
        if (queued <= SOCKET_HIGH_WATER_BYTES && socket.isPaused() && !socket.destroyed) socket.resume();
        return c;
      }
      if (failure !== undefined)
        throw new ConnectionClosedError(`connection failed: ${String(failure)}`, { cause: failure });
      if (done) return undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  };
}
