/** Byte helpers and constants the engine and its hosts share. */

/** keccak256 of the empty string: the code hash of an account without code. */
export const KECCAK256_NULL = new Uint8Array(
  Buffer.from("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470", "hex"),
);

type HexEncoder = (this: Uint8Array, start: number, end: number) => string;
const hexSlice = (Buffer.prototype as unknown as { hexSlice?: HexEncoder }).hexSlice;

/**
 * Lowercase hex of any Uint8Array, through Buffer's own encoder when Node has it (undocumented, so with
 * the documented fallback): `Buffer.from(b.buffer, …)` reads `.buffer`, which moves a fresh array of up
 * to 64 bytes (an address) out of V8's heap first, ~1 µs.
 */
export function hexOfBytes(b: Uint8Array): string {
  if (hexSlice !== undefined) return hexSlice.call(b, 0, b.length);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");
}

/** Byte-wise equality (a loop: faster than Buffer.compare for the 20- and 32-byte values the engine compares). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A bigint's big-endian bytes without leading zeros (empty for 0). */
export function bigintToBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  let h = n.toString(16);
  if (h.length % 2 === 1) h = `0${h}`;
  return new Uint8Array(Buffer.from(h, "hex"));
}
