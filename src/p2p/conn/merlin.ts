import { keccakP } from "@noble/hashes/sha3.js";

/**
 * Merlin transcripts (merlin.cool) over a minimal STROBE-128/1600, as the curve25519-voi
 * `primitives/merlin` package CometBFT's secret connection derives its challenge with. Only the
 * operations Merlin needs (meta-AD, AD, PRF) are implemented.
 */

const STROBE_R = 166;
const FLAG_I = 1;
const FLAG_A = 1 << 1;
const FLAG_C = 1 << 2;
const FLAG_M = 1 << 4;
const FLAG_K = 1 << 5;

const encoder = new TextEncoder();

// Keccak lanes are little-endian; noble's keccakP works on the platform's u32 view, which is the
// byte layout STROBE expects on little-endian hosts (every Node target we run on).
class Strobe128 {
  readonly #state = new Uint8Array(200);
  readonly #lanes = new Uint32Array(this.#state.buffer);
  #pos = 0;
  #posBegin = 0;

  constructor(protocolLabel: Uint8Array) {
    this.#state.set([1, STROBE_R + 2, 1, 0, 1, 96], 0);
    this.#state.set(encoder.encode("STROBEv1.0.2"), 6);
    keccakP(this.#lanes, 24);
    this.metaAd(protocolLabel, false);
  }

  metaAd(data: Uint8Array, more: boolean): void {
    this.#beginOp(FLAG_M | FLAG_A, more);
    this.#absorb(data);
  }

  ad(data: Uint8Array, more: boolean): void {
    this.#beginOp(FLAG_A, more);
    this.#absorb(data);
  }

  prf(out: Uint8Array, more: boolean): void {
    this.#beginOp(FLAG_I | FLAG_A | FLAG_C, more);
    this.#squeeze(out);
  }

  #runF(): void {
    this.#state[this.#pos] = (this.#state[this.#pos] ?? 0) ^ this.#posBegin;
    this.#state[this.#pos + 1] = (this.#state[this.#pos + 1] ?? 0) ^ 0x04;
    this.#state[STROBE_R + 1] = (this.#state[STROBE_R + 1] ?? 0) ^ 0x80;
    keccakP(this.#lanes, 24);
    this.#pos = 0;
    this.#posBegin = 0;
  }

  #absorb(data: Uint8Array): void {
    for (const b of data) {
      this.#state[this.#pos] = (this.#state[this.#pos] ?? 0) ^ b;
      this.#pos += 1;
      if (this.#pos === STROBE_R) this.#runF();
    }
  }

  #squeeze(out: Uint8Array): void {
    for (let i = 0; i < out.length; i++) {
      out[i] = this.#state[this.#pos] ?? 0;
      this.#state[this.#pos] = 0;
      this.#pos += 1;
      if (this.#pos === STROBE_R) this.#runF();
    }
  }

  #beginOp(flags: number, more: boolean): void {
    // Continuing an operation (more=true) needs no framing; Merlin only continues with the same flags.
    if (more) return;
    const oldBegin = this.#posBegin;
    this.#posBegin = this.#pos + 1;
    this.#absorb(Uint8Array.of(oldBegin, flags));
    const forceF = (flags & (FLAG_C | FLAG_K)) !== 0;
    if (forceF && this.#pos !== 0) this.#runF();
  }
}

function le32(n: number): Uint8Array {
  // Byte by byte: a DataView over a fresh small array (its `.buffer`) costs ~1 µs in V8.
  return new Uint8Array([n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24]);
}

/** A Merlin transcript: append labelled messages, extract labelled challenge bytes. */
export class MerlinTranscript {
  readonly #strobe: Strobe128;

  constructor(label: string) {
    this.#strobe = new Strobe128(encoder.encode("Merlin v1.0"));
    this.appendMessage("dom-sep", encoder.encode(label));
  }

  appendMessage(label: string, message: Uint8Array): void {
    this.#strobe.metaAd(encoder.encode(label), false);
    this.#strobe.metaAd(le32(message.length), true);
    this.#strobe.ad(message, false);
  }

  extractBytes(label: string, length: number): Uint8Array {
    const out = new Uint8Array(length);
    this.#strobe.metaAd(encoder.encode(label), false);
    this.#strobe.metaAd(le32(length), true);
    this.#strobe.prf(out, false);
    return out;
  }
}
