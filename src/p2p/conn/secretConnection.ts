import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";
import type { Socket } from "node:net";
import { x25519 } from "@noble/curves/ed25519.js";
import { KEY_TYPES, signBytes, verifySignature } from "../../types/index.js";
import { compareBytes } from "../../util/bytes.js";
import { ChunkReader } from "./chunkReader.js";
import { ChallengeVerificationError, FrameDecryptError, LowOrderPointError, SecretConnectionError } from "./errors.js";
import { MerlinTranscript } from "./merlin.js";
import {
  decodeAuthSigMessage,
  decodeBytesValue,
  encodeAuthSigMessageDelimited,
  encodeBytesValueDelimited,
} from "./wire.js";

/**
 * The authenticated, encrypted stream between two nodes (p2p/conn/secret_connection.go, the
 * Station-to-Station protocol). Byte-compatible with CometBFT v0.38: ephemeral X25519 keys in
 * delimited BytesValues, a Merlin transcript for the 32-byte challenge, HKDF-SHA256 for the two
 * ChaCha20-Poly1305 keys, delimited AuthSigMessages, then sealed 1028-byte frames
 * (4-byte little-endian length + up to 1024 data bytes) with per-direction 96-bit counter nonces.
 */

export const DATA_MAX_SIZE = 1024;
const DATA_LEN_SIZE = 4;
const TOTAL_FRAME_SIZE = DATA_MAX_SIZE + DATA_LEN_SIZE;
const AEAD_TAG_SIZE = 16;
export const SEALED_FRAME_SIZE = TOTAL_FRAME_SIZE + AEAD_TAG_SIZE;
const AEAD_KEY_SIZE = 32;
/** protoio reader cap CometBFT uses for the handshake messages. */
const HANDSHAKE_MSG_MAX_BYTES = 1024 * 1024;

const KEY_AND_CHALLENGE_GEN = "TENDERMINT_SECRET_CONNECTION_KEY_AND_CHALLENGE_GEN";

/** A 96-bit ChaCha20-Poly1305 nonce: the first 4 bytes stay zero, the last 8 are a little-endian counter. */
class FrameNonce {
  readonly bytes = new Uint8Array(12);

  increment(): void {
    for (let i = 4; i < 12; i++) {
      const v = ((this.bytes[i] ?? 0) + 1) & 0xff;
      this.bytes[i] = v;
      if (v !== 0) return;
    }
    // Wrapping would reuse a nonce (tendermint#3531): the session must end instead.
    throw new SecretConnectionError("can't increase nonce without overflow; reconnect to rekey");
  }
}

export class SecretConnection {
  /** Decrypted bytes from the remote. */
  readonly reader: ChunkReader;
  readonly #socket: Socket;
  readonly #sendKey: Uint8Array;
  readonly #recvKey: Uint8Array;
  readonly #sendNonce = new FrameNonce();
  readonly #recvNonce = new FrameNonce();
  readonly #cipherReader: ChunkReader;
  #provenKey: Uint8Array = new Uint8Array(0);

  private constructor(socket: Socket, cipherReader: ChunkReader, keys: { send: Uint8Array; recv: Uint8Array }) {
    this.#socket = socket;
    this.#cipherReader = cipherReader;
    this.#sendKey = keys.send;
    this.#recvKey = keys.recv;
    this.reader = new ChunkReader(() => this.#readFrame());
  }

  /** The remote's Ed25519 public key, proven by its signature over the shared challenge. */
  get remotePubKey(): Uint8Array {
    return this.#provenKey;
  }

  /**
   * Runs the handshake over `socket` (MakeSecretConnection) with our 64-byte Ed25519 key.
   * `rawReader` reads the socket's bytes; the caller enforces the timeout by destroying the socket.
   */
  static async handshake(socket: Socket, rawReader: ChunkReader, privKey: Uint8Array): Promise<SecretConnection> {
    const locEphPriv = x25519.utils.randomSecretKey();
    const locEphPub = x25519.getPublicKey(locEphPriv);

    socket.write(encodeBytesValueDelimited(locEphPub));
    const { msg } = await rawReader.readDelimited(HANDSHAKE_MSG_MAX_BYTES);
    let remEphPub: Uint8Array;
    try {
      remEphPub = decodeBytesValue(msg);
    } catch (err) {
      throw new SecretConnectionError(`secret conn failed: malformed ephemeral key message`, { cause: err });
    }
    if (remEphPub.length !== 32) {
      throw new SecretConnectionError(
        `secret conn failed: ephemeral key must be 32 bytes, got ${remEphPub.length}. The peer is not a CometBFT node`,
      );
    }

    const locIsLeast = compareBytes(locEphPub, remEphPub) < 0;
    const [lo, hi] = locIsLeast ? [locEphPub, remEphPub] : [remEphPub, locEphPub];
    const transcript = new MerlinTranscript("TENDERMINT_SECRET_CONNECTION_TRANSCRIPT_HASH");
    transcript.appendMessage("EPHEMERAL_LOWER_PUBLIC_KEY", lo);
    transcript.appendMessage("EPHEMERAL_UPPER_PUBLIC_KEY", hi);

    const dhSecret = computeDhSecret(locEphPriv, remEphPub);
    transcript.appendMessage("DH_SECRET", dhSecret);

    const keys = deriveSecrets(dhSecret, locIsLeast);
    const challenge = transcript.extractBytes("SECRET_CONNECTION_MAC", 32);

    const sc = new SecretConnection(socket, rawReader, keys);
    const locPub = privKey.slice(32, 64);
    const locSig = signBytes({ type: KEY_TYPES.ed25519, bytes: privKey }, challenge);
    sc.write(encodeAuthSigMessageDelimited(locPub, locSig));

    const authMsg = await sc.reader.readDelimited(HANDSHAKE_MSG_MAX_BYTES);
    let auth: ReturnType<typeof decodeAuthSigMessage>;
    try {
      auth = decodeAuthSigMessage(authMsg.msg);
    } catch (err) {
      throw new SecretConnectionError("secret conn failed: malformed AuthSigMessage", { cause: err });
    }
    if (auth.pubKey.type !== "ed25519" || auth.pubKey.bytes.length !== 32) {
      throw new ChallengeVerificationError(`expected ed25519 pubkey, got ${auth.pubKey.type}`);
    }
    if (!verifySignature({ type: KEY_TYPES.ed25519, bytes: auth.pubKey.bytes }, challenge, auth.sig)) {
      throw new ChallengeVerificationError();
    }
    sc.#provenKey = auth.pubKey.bytes;
    return sc;
  }

  /**
   * Seals `data` into frames and writes them. Returns false when the socket's write buffer is over
   * its high-water mark (wait for waitDrain before writing more).
   */
  write(data: Uint8Array): boolean {
    const frames = Math.ceil(data.length / DATA_MAX_SIZE);
    if (frames === 0) return true;
    const out = Buffer.allocUnsafe(frames * SEALED_FRAME_SIZE);
    const frame = Buffer.alloc(TOTAL_FRAME_SIZE);
    for (let i = 0; i < frames; i++) {
      const chunk = data.subarray(i * DATA_MAX_SIZE, Math.min(data.length, (i + 1) * DATA_MAX_SIZE));
      frame.fill(0);
      frame.writeUInt32LE(chunk.length, 0);
      frame.set(chunk, DATA_LEN_SIZE);
      const cipher = createCipheriv("chacha20-poly1305", this.#sendKey, this.#sendNonce.bytes, {
        authTagLength: AEAD_TAG_SIZE,
      });
      const ct = cipher.update(frame);
      cipher.final();
      const base = i * SEALED_FRAME_SIZE;
      out.set(ct, base);
      out.set(cipher.getAuthTag(), base + TOTAL_FRAME_SIZE);
      this.#sendNonce.increment();
    }
    return this.#socket.write(out);
  }

  /** Bytes written but not yet handed to the kernel. */
  get writableLength(): number {
    return this.#socket.writableLength;
  }

  /** Resolves when the socket drained its write buffer, or closed. */
  waitDrain(): Promise<void> {
    if (this.#socket.destroyed || this.#socket.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#socket.off("drain", done);
        this.#socket.off("close", done);
        resolve();
      };
      this.#socket.on("drain", done);
      this.#socket.on("close", done);
    });
  }

  async #readFrame(): Promise<Uint8Array | undefined> {
    const sealed = await this.#cipherReader.readExact(SEALED_FRAME_SIZE);
    const decipher = createDecipheriv("chacha20-poly1305", this.#recvKey, this.#recvNonce.bytes, {
      authTagLength: AEAD_TAG_SIZE,
    });
    decipher.setAuthTag(sealed.subarray(TOTAL_FRAME_SIZE));
    const frame = decipher.update(sealed.subarray(0, TOTAL_FRAME_SIZE));
    try {
      decipher.final();
    } catch (err) {
      throw new FrameDecryptError("message authentication failed (tampered, replayed or out-of-order frame)", {
        cause: err,
      });
    }
    this.#recvNonce.increment();
    const len = frame.readUInt32LE(0);
    if (len > DATA_MAX_SIZE) throw new FrameDecryptError(`chunkLength ${len} is greater than dataMaxSize`);
    return new Uint8Array(frame.buffer, frame.byteOffset + DATA_LEN_SIZE, len);
  }
}

function computeDhSecret(locPriv: Uint8Array, remPub: Uint8Array): Uint8Array {
  let shared: Uint8Array;
  try {
    shared = x25519.getSharedSecret(locPriv, remPub);
  } catch (err) {
    throw new LowOrderPointError({ cause: err });
  }
  if (shared.every((b) => b === 0)) throw new LowOrderPointError();
  return shared;
}

/** deriveSecrets: HKDF-SHA256(dh, info) → two AEAD keys; the lower ephemeral key receives with the first. */
function deriveSecrets(dhSecret: Uint8Array, locIsLeast: boolean): { send: Uint8Array; recv: Uint8Array } {
  const out = new Uint8Array(
    hkdfSync("sha256", dhSecret, new Uint8Array(0), KEY_AND_CHALLENGE_GEN, 2 * AEAD_KEY_SIZE + 32),
  );
  const first = out.slice(0, AEAD_KEY_SIZE);
  const second = out.slice(AEAD_KEY_SIZE, 2 * AEAD_KEY_SIZE);
  return locIsLeast ? { recv: first, send: second } : { send: first, recv: second };
}
