/**
 * Ethereum JSON-RPC value encodings (execution-apis base types, geth hexutil): quantities are
 * compact lowercase hex ("0x0", "0x400"), data is even-length lowercase hex ("0x", "0x0042"),
 * addresses are 20 bytes lowercase without checksum, as geth writes them.
 */

/** A quantity: `0x` + hex without leading zeros; zero is `0x0`. */
export function toQuantity(n: bigint | number): string {
  return `0x${n.toString(16)}`;
}

/** Unformatted bytes: `0x` + two lowercase hex digits per byte. */
export function toData(b: Uint8Array): string {
  return `0x${Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex")}`;
}

/** A 20-byte address in lowercase hex. */
export function toAddress(b: Uint8Array): string {
  return toData(b);
}

/** A quantity as a 32-byte word (storage values, uint256 slots). */
export function toWord(n: bigint): string {
  return `0x${n.toString(16).padStart(64, "0")}`;
}

export function toQuantityOrNull(n: bigint | number | undefined): string | null {
  return n === undefined ? null : toQuantity(n);
}

export function toDataOrNull(b: Uint8Array | undefined): string | null {
  return b === undefined ? null : toData(b);
}

/** Big-endian bytes of a non-negative integer, without leading zeros (0 → empty). */
export function bigintToBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return new Uint8Array(Buffer.from(hex, "hex"));
}

export function bytesToBigint(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  return BigInt(toData(b));
}

/** Left-pads to `size` bytes (32 for words and hashes). */
export function padBytes(b: Uint8Array, size: number): Uint8Array {
  if (b.length >= size) return b;
  const out = new Uint8Array(size);
  out.set(b, size - b.length);
  return out;
}

export const ZERO_HASH: Uint8Array = new Uint8Array(32);
export const ZERO_ADDRESS: Uint8Array = new Uint8Array(20);
export const EMPTY_BLOOM: Uint8Array = new Uint8Array(256);
/** keccak256(rlp([])): the hash of an empty uncle list. */
export const EMPTY_UNCLES_HASH = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
/** The root of an empty Merkle-Patricia trie. */
export const EMPTY_ROOT_HASH = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
/** sha256 of nothing: EIP-7685 requests hash with no requests. */
export const EMPTY_REQUESTS_HASH = "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
