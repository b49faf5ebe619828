import { ComethError } from "../util/errors.js";

/**
 * A fixed-size bit array, as CometBFT's libs/bits.BitArray: which validators voted, which block
 * parts a peer has. One byte per bit keeps the code plain; sizes are validator counts and part
 * counts (at most a few thousand).
 */
export class BitArray {
  readonly size: number;
  readonly #bits: Uint8Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 0)
      throw new InvalidBitArrayError(`size must be a non-negative integer, got ${size}`);
    this.size = size;
    this.#bits = new Uint8Array(size);
  }

  /** Parses the compact form ("x_x"): x is set, _ is clear (what toCompactString writes). */
  static fromCompactString(s: string): BitArray {
    const ba = new BitArray(s.length);
    for (let i = 0; i < s.length; i++) {
      const c = s[i];
      if (c === "x") ba.#bits[i] = 1;
      else if (c !== "_")
        throw new InvalidBitArrayError(`unexpected character ${JSON.stringify(c)} at ${i}; use "x" or "_"`);
    }
    return ba;
  }

  static fromIndices(size: number, indices: Iterable<number>): BitArray {
    const ba = new BitArray(size);
    for (const i of indices) ba.set(i, true);
    return ba;
  }

  /** False for an index outside [0, size). */
  get(i: number): boolean {
    return this.#bits[i] === 1;
  }

  /** Returns false (and changes nothing) for an index outside [0, size), as Go's SetIndex. */
  set(i: number, v: boolean): boolean {
    if (!Number.isInteger(i) || i < 0 || i >= this.size) return false;
    this.#bits[i] = v ? 1 : 0;
    return true;
  }

  copy(): BitArray {
    const c = new BitArray(this.size);
    c.#bits.set(this.#bits);
    return c;
  }

  /** Bitwise or; the result is as long as the longer array. */
  or(o: BitArray): BitArray {
    const [long, short] = this.size >= o.size ? [this, o] : [o, this];
    const r = long.copy();
    for (let i = 0; i < short.size; i++) r.#bits[i] = (r.#bits[i] as number) | (short.#bits[i] as number);
    return r;
  }

  /** Bitwise and; the result is as long as the shorter array. */
  and(o: BitArray): BitArray {
    const r = new BitArray(Math.min(this.size, o.size));
    for (let i = 0; i < r.size; i++) r.#bits[i] = (this.#bits[i] as number) & (o.#bits[i] as number);
    return r;
  }

  not(): BitArray {
    const r = new BitArray(this.size);
    for (let i = 0; i < this.size; i++) r.#bits[i] = this.#bits[i] === 1 ? 0 : 1;
    return r;
  }

  /** this AND NOT o, with o padded by zeros; the result has this array's size (Go's Sub). */
  sub(o: BitArray): BitArray {
    const r = this.copy();
    const n = Math.min(this.size, o.size);
    for (let i = 0; i < n; i++) if (o.#bits[i] === 1) r.#bits[i] = 0;
    return r;
  }

  /** Sets this array's bits from o (Go's Update); o must be the same size. */
  update(o: BitArray): void {
    if (o.size !== this.size)
      throw new InvalidBitArrayError(`cannot update a ${this.size}-bit array from ${o.size} bits`);
    this.#bits.set(o.#bits);
  }

  trueCount(): number {
    let n = 0;
    for (let i = 0; i < this.size; i++) n += this.#bits[i] as number;
    return n;
  }

  trueIndices(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.size; i++) if (this.#bits[i] === 1) out.push(i);
    return out;
  }

  /** A uniformly chosen set index, or undefined when none is set (Go's PickRandom). */
  pickRandom(): number | undefined {
    const idx = this.trueIndices();
    if (idx.length === 0) return undefined;
    return idx[Math.floor(Math.random() * idx.length)];
  }

  /** True when every bit is set; an empty array is full (as Go's IsFull on a non-nil array). */
  isFull(): boolean {
    return this.#bits.indexOf(0) === -1;
  }

  isEmpty(): boolean {
    return this.#bits.indexOf(1) === -1;
  }

  equals(o: BitArray): boolean {
    if (o.size !== this.size) return false;
    for (let i = 0; i < this.size; i++) if (this.#bits[i] !== o.#bits[i]) return false;
    return true;
  }

  /** "xx__": one character per bit, x = set (libs/bits JSON form, without quotes). */
  toCompactString(): string {
    let s = "";
    for (let i = 0; i < this.size; i++) s += this.#bits[i] === 1 ? "x" : "_";
    return s;
  }

  /**
   * Go's BitArray.String(): "BA{<size>:<bits>}". A zero-size array is nil in Go
   * (NewBitArray(0) returns nil), so it prints as "nil-BitArray".
   */
  toString(): string {
    return this.size === 0 ? "nil-BitArray" : `BA{${this.size}:${this.toCompactString()}}`;
  }
}

/** Thrown for an impossible size or an unparsable compact string. */
export class InvalidBitArrayError extends ComethError {}

/**
 * What CometBFT's JSON shows for a bit array (docs/cometbft-rpc.md §3, peer round_state): the compact string, or
 * null for a missing or zero-size array (Go's NewBitArray(0) is nil).
 */
export function bitArrayToCompact(ba: BitArray | undefined): string | null {
  return ba === undefined || ba.size === 0 ? null : ba.toCompactString();
}
