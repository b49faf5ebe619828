/**
 * RLP encoding in one buffer: the same bytes as @ethereumjs/rlp's `RLP.encode`, without its
 * per-item arrays and concatenations. Integers (number or bigint, never negative) are written as
 * their minimal big-endian bytes (empty for zero), as `RLP.encode(bigintToBytes(n))` would have it.
 * The records written on every block (receipts, accounts, blocks: records.ts) go through it; a
 * receipt is about a dozen fields and a log list, and encoding it was a tenth of the block path.
 */

export type RlpItem = Uint8Array | bigint | number | readonly RlpItem[];

/** Bytes of a non-negative integer without leading zeros. */
function uintLength(n: bigint | number): number {
  if (typeof n === "number") {
    let len = 0;
    for (let v = n; v > 0; v = Math.floor(v / 256)) len++;
    return len;
  }
  if (n <= 0xffffffffn) return uintLength(Number(n));
  return (n.toString(16).length + 1) >> 1;
}

/** Length of an RLP header for a payload of `len` bytes. */
function headerLength(len: number): number {
  return len <= 55 ? 1 : 1 + uintLength(len);
}

/**
 * Size of `item` encoded; list payload sizes are pushed on `lists` in pre-order, so the writer
 * takes them back in the same order.
 */
function measure(item: RlpItem, lists: number[]): number {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && (item[0] as number) < 0x80) return 1;
    return headerLength(item.length) + item.length;
  }
  if (typeof item === "number" || typeof item === "bigint") {
    if (item < 0) throw new RangeError(`RLP integers are non-negative, got ${item}`);
    if (item > 0 && item < 0x80) return 1;
    const len = uintLength(item);
    return 1 + len;
  }
  const slot = lists.length;
  lists.push(0);
  let payload = 0;
  for (const x of item) payload += measure(x, lists);
  lists[slot] = payload;
  return headerLength(payload) + payload;
}

/** Writes `n` big-endian in exactly `len` bytes at `pos`. */
function writeUint(out: Uint8Array, pos: number, n: bigint | number, len: number): void {
  if (typeof n === "number") {
    let v = n;
    for (let i = len - 1; i >= 0; i--) {
      out[pos + i] = v % 256;
      v = Math.floor(v / 256);
    }
    return;
  }
  let v = n;
  for (let i = len - 1; i >= 0; i--) {
    out[pos + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

function writeHeader(out: Uint8Array, pos: number, len: number, short: number): number {
  if (len <= 55) {
    out[pos] = short + len;
    return pos + 1;
  }
  const lenLen = uintLength(len);
  out[pos] = short + 55 + lenLen;
  writeUint(out, pos + 1, len, lenLen);
  return pos + 1 + lenLen;
}

class Writer {
  readonly out: Uint8Array;
  readonly #lists: number[];
  #list = 0;

  constructor(size: number, lists: number[]) {
    this.out = new Uint8Array(size);
    this.#lists = lists;
  }

  write(item: RlpItem, pos: number): number {
    const out = this.out;
    if (item instanceof Uint8Array) {
      if (item.length === 1 && (item[0] as number) < 0x80) {
        out[pos] = item[0] as number;
        return pos + 1;
      }
      const p = writeHeader(out, pos, item.length, 0x80);
      out.set(item, p);
      return p + item.length;
    }
    if (typeof item === "number" || typeof item === "bigint") {
      if (item > 0 && item < 0x80) {
        out[pos] = Number(item);
        return pos + 1;
      }
      const len = uintLength(item);
      out[pos] = 0x80 + len;
      writeUint(out, pos + 1, item, len);
      return pos + 1 + len;
    }
    const payload = this.#lists[this.#list++] as number;
    let p = writeHeader(out, pos, payload, 0xc0);
    for (const x of item) p = this.write(x, p);
    return p;
  }
}

/** RLP encoding of `item`. Throws RangeError on a negative integer. */
export function rlpEncode(item: RlpItem): Uint8Array {
  const lists: number[] = [];
  const size = measure(item, lists);
  const w = new Writer(size, lists);
  w.write(item, 0);
  return w.out;
}
