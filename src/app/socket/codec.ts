import { AbciFrameError } from "./errors.js";

/**
 * The framing of CometBFT's ABCI socket protocol (libs/protoio, abci/types/messages.go): each
 * `tendermint.abci.Request` or `Response` is its protobuf bytes preceded by their length as an
 * unsigned varint. Go refuses a message longer than math.MaxInt32 bytes; so does this decoder.
 */
export const MAX_ABCI_MESSAGE_BYTES = 2 ** 31 - 1;

/** A varint is at most 10 bytes (64 bits); lengths this decoder accepts fit in 5. */
const MAX_VARINT_BYTES = 10;

/** The length prefix alone: `n` as an unsigned varint. */
export function encodeLengthPrefix(n: number): Uint8Array {
  let prefix = 1;
  for (let v = n; v >= 0x80; v = Math.floor(v / 128)) prefix++;
  const out = new Uint8Array(prefix);
  let i = 0;
  let v = n;
  while (v >= 0x80) {
    out[i++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[i] = v;
  return out;
}

/** The length prefix (unsigned varint) followed by the message bytes. */
export function encodeFrame(message: Uint8Array): Uint8Array {
  const prefix = encodeLengthPrefix(message.length);
  const out = new Uint8Array(prefix.length + message.length);
  out.set(prefix, 0);
  out.set(message, prefix.length);
  return out;
}

/**
 * Splits a byte stream into messages: feed each chunk as it arrives; every message the chunks
 * complete comes back, in order (a chunk may hold several, or part of one, or part of a length).
 * After an error the decoder refuses everything: the stream cannot be resynchronised.
 */
export class FrameDecoder {
  readonly #maxBytes: number;
  /** Chunks received and not yet returned (at most one message's worth past #offset of the first). */
  #chunks: Uint8Array[] = [];
  #buffered = 0;
  /** Bytes the message being received needs in all (prefix and body), once its prefix is known. */
  #need: number | undefined;
  #failed: AbciFrameError | undefined;

  constructor(maxBytes = MAX_ABCI_MESSAGE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes held for a message not yet complete. */
  get pendingBytes(): number {
    return this.#buffered;
  }

  /** The messages `chunk` completes; throws AbciFrameError on a malformed or oversized length. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.#failed !== undefined) throw this.#failed;
    if (chunk.length === 0) return [];
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    // A long message arrives in many chunks: keep them apart until it is whole, then join once.
    if (this.#need !== undefined && this.#buffered < this.#need) return [];
    const buf = this.#chunks.length === 1 ? (this.#chunks[0] as Uint8Array) : joinChunks(this.#chunks, this.#buffered);
    const out: Uint8Array[] = [];
    let pos = 0;
    this.#need = undefined;
    for (;;) {
      const header = this.#readLength(buf, pos);
      if (header === undefined) break;
      const start = pos + header.prefixBytes;
      const end = start + header.length;
      if (end > buf.length) {
        this.#need = end - pos;
        break;
      }
      out.push(buf.subarray(start, end));
      pos = end;
    }
    this.#chunks = pos === buf.length ? [] : [buf.subarray(pos)];
    this.#buffered = buf.length - pos;
    return out;
  }

  /** The length at `pos` and its prefix size, or undefined when the prefix is not complete yet. */
  #readLength(buf: Uint8Array, pos: number): { length: number; prefixBytes: number } | undefined {
    let length = 0;
    let scale = 1;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      if (pos + i >= buf.length) return undefined;
      const b = buf[pos + i] as number;
      length += (b & 0x7f) * scale;
      if (length > this.#maxBytes) {
        this.#failed = new AbciFrameError(
          `message length exceeds the maximum (more than ${this.#maxBytes} bytes): the peer does not speak the ABCI socket protocol`,
        );
        throw this.#failed;
      }
      if ((b & 0x80) === 0) return { length, prefixBytes: i + 1 };
      scale *= 128;
    }
    this.#failed = new AbciFrameError("malformed length prefix (a varint longer than 10 bytes)");
    throw this.#failed;
  }
}

function joinChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
