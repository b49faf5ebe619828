/** Byte helpers: hex, base64, comparison. No project imports. */

/**
 * Buffer's own string encoders, called on any Uint8Array. `Buffer.from(b.buffer, …).toString()` reads
 * the array's `.buffer`, and a fresh array of up to 64 bytes (an address, a hash, a key) lives inside
 * V8's heap until then: reading `.buffer` moves it out to a backing store of its own, ~1 µs, five times
 * the encoding. Node's encoders (`hexSlice` and its siblings, which `toString` itself calls) read a small
 * view's bytes without moving it. They are not in Node's documented API, so each falls back to the
 * documented way when absent.
 */
type Encoder = (this: Uint8Array, start: number, end: number) => string;
const slices = Buffer.prototype as unknown as { hexSlice?: Encoder; base64Slice?: Encoder; utf8Slice?: Encoder };
const hexSlice = slices.hexSlice;
const base64Slice = slices.base64Slice;
const utf8Slice = slices.utf8Slice;

export function bytesToHex(b: Uint8Array): string {
  if (hexSlice !== undefined) return hexSlice.call(b, 0, b.length);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/** Uppercase hex, as CometBFT writes HexBytes. */
export function bytesToHexUpper(b: Uint8Array): string {
  return bytesToHex(b).toUpperCase();
}

/** Decodes hex with or without a 0x prefix; returns undefined when it is not valid hex. */
export function hexToBytes(hex: string): Uint8Array | undefined {
  const s = hex.startsWith("0x") || hex.startsWith("0X") ? hex.slice(2) : hex;
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) return undefined;
  return new Uint8Array(Buffer.from(s, "hex"));
}

export function bytesToBase64(b: Uint8Array): string {
  if (base64Slice !== undefined) return base64Slice.call(b, 0, b.length);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
}

/** Decodes standard (padded) base64; returns undefined when it is not valid. */
export function base64ToBytes(s: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(s, "base64"));
}

export function utf8ToBytes(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, "utf8"));
}

export function bytesToUtf8(b: Uint8Array): string {
  if (utf8Slice !== undefined) return utf8Slice.call(b, 0, b.length);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8");
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** Lexicographic byte order, as Go's bytes.Compare. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);
