import { StoreCorruptionError } from "./errors.js";

const TWO_32 = 0x1_0000_0000;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** Appends varints, bigints, byte strings and text to a growing buffer; the store's record format. */
export class BinaryWriter {
  #buf: Uint8Array;
  #pos = 0;

  constructor(initialSize = 256) {
    this.#buf = new Uint8Array(initialSize);
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#pos));
    this.#buf = next;
  }

  u8(v: number): this {
    this.#ensure(1);
    this.#buf[this.#pos++] = v;
    return this;
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }

  /** Unsigned integer up to 2^53 - 1 as LEB128. */
  uint(v: number): this {
    this.#ensure(8);
    let n = v;
    while (n >= 0x80) {
      this.#buf[this.#pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.#buf[this.#pos++] = n;
    return this;
  }

  /** Signed integer (safe range), zigzag encoded. */
  int(v: number): this {
    return this.uint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  /** Any bigint, zigzag + LEB128. */
  bigint(v: bigint): this {
    let n = v >= 0n ? v * 2n : -v * 2n - 1n;
    if (n < BigInt(Number.MAX_SAFE_INTEGER)) return this.uint(Number(n));
    while (n >= 0x80n) {
      this.u8(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    return this.u8(Number(n));
  }

  bytes(v: Uint8Array): this {
    this.uint(v.length);
    this.#ensure(v.length);
    this.#buf.set(v, this.#pos);
    this.#pos += v.length;
    return this;
  }

  string(v: string): this {
    const n = v.length;
    if (n < 256) {
      // ASCII (event keys and values, nearly every string here) is written in place, no encoder call.
      this.#ensure(n + 8);
      const start = this.#pos;
      this.uint(n);
      const buf = this.#buf;
      const at = this.#pos;
      let i = 0;
      for (; i < n; i++) {
        const c = v.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at + i] = c;
      }
      if (i === n) {
        this.#pos = at + n;
        return this;
      }
      this.#pos = start;
    }
    return this.bytes(textEncoder.encode(v));
  }

  finish(): Uint8Array {
    return this.#buf.slice(0, this.#pos);
  }
}

/** Reads what BinaryWriter wrote; any overrun or bad value throws StoreCorruptionError naming `what`. */
export class BinaryReader {
  readonly #buf: Uint8Array;
  readonly #what: string;
  #pos = 0;

  constructor(buf: Uint8Array, what: string) {
    this.#buf = buf;
    this.#what = what;
  }

  /** Throws StoreCorruptionError: `problem` is a description or the underlying error. */
  fail(problem: unknown): never {
    if (typeof problem === "string") throw new StoreCorruptionError(this.#what, { detail: problem });
    throw new StoreCorruptionError(this.#what, { cause: problem });
  }

  u8(): number {
    if (this.#pos >= this.#buf.length) this.fail("unexpected end of record");
    return this.#buf[this.#pos++] as number;
  }

  bool(): boolean {
    const b = this.u8();
    if (b > 1) this.fail(`bad boolean ${b}`);
    return b === 1;
  }

  uint(): number {
    let result = 0;
    let mul = 1;
    for (;;) {
      const b = this.u8();
      result += (b & 0x7f) * mul;
      if (b < 0x80) break;
      mul *= 0x80;
      if (mul > TWO_32 * 0x20_0000) this.fail("varint too long");
    }
    if (!Number.isSafeInteger(result)) this.fail("integer out of range");
    return result;
  }

  int(): number {
    const z = this.uint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  bigint(): bigint {
    let n = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.u8();
      n |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7n;
      if (shift > 1024n) this.fail("bigint too long");
    }
    return (n & 1n) === 0n ? n >> 1n : -((n + 1n) >> 1n);
  }

  bytes(): Uint8Array {
    const len = this.uint();
    if (this.#pos + len > this.#buf.length) this.fail("byte string overruns record");
    const out = this.#buf.slice(this.#pos, this.#pos + len);
    this.#pos += len;
    return out;
  }

  string(): string {
    const len = this.uint();
    if (this.#pos + len > this.#buf.length) this.fail("string overruns record");
    try {
      return textDecoder.decode(this.#buf.subarray(this.#pos, this.#pos + len));
    } catch (err) {
      return this.fail(err);
    } finally {
      this.#pos += len;
    }
  }

  /** Checks the record's format version byte. */
  version(expected: number): void {
    const v = this.u8();
    if (v !== expected) this.fail(`format version ${v}, expected ${expected}`);
  }

  end(): void {
    if (this.#pos !== this.#buf.length) this.fail(`${this.#buf.length - this.#pos} trailing bytes`);
  }
}
