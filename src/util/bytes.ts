/** Byte helpers: hex, base64, comparison. No project imports. */

export function bytesToHex(b: Uint8Array): string {
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
