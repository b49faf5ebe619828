/**
 * Table names and key layouts. Heights are 8-byte big-endian so byte order is height order and range
 * scans ("the last entry at or below h") work.
 */

export const TABLES = { blocks: "blockstore", state: "state" } as const;

/** First byte of each block-store key. */
export const BLOCK_KEY_PREFIX = {
  /** [meta][height] → BlockMeta (own codec) */
  meta: 0x01,
  /** [part][height][index u32] → Part protobuf */
  part: 0x02,
  /** [commit][height] → Commit protobuf, from block height+1's LastCommit */
  commit: 0x03,
  /** [seenCommit][height] → Commit protobuf this node saw for height */
  seenCommit: 0x04,
  /** [hash][block hash] → height (8 bytes) */
  hash: 0x05,
  /** [storeState] → base and height */
  storeState: 0x06,
} as const;

/** First byte of each state-store key. */
export const STATE_KEY_PREFIX = {
  /** [state] → ChainState */
  state: 0x01,
  /** [validators][height] → the full validator set of that height, where it changed (or a checkpoint) */
  validators: 0x02,
  /** [consensusParams][height] → params from that height until the next entry */
  consensusParams: 0x03,
  /** [finalizeBlock][height] → FinalizeBlockResponse */
  finalizeBlock: 0x04,
  /** [stateAt][height] → ChainState after that height (dev chains only: what a rollback restores) */
  stateAt: 0x05,
} as const;

export function heightKey(prefix: number, height: number): Uint8Array {
  const k = new Uint8Array(9);
  k[0] = prefix;
  writeU64(k, 1, height);
  return k;
}

export function heightFromKey(key: Uint8Array): number {
  return readU64(key, 1);
}

export function partKey(height: number, index: number): Uint8Array {
  const k = new Uint8Array(13);
  k[0] = BLOCK_KEY_PREFIX.part;
  writeU64(k, 1, height);
  writeU32(k, 9, index);
  return k;
}

export function blockHashKey(hash: Uint8Array): Uint8Array {
  const k = new Uint8Array(1 + hash.length);
  k[0] = BLOCK_KEY_PREFIX.hash;
  k.set(hash, 1);
  return k;
}

export function prefixKey(prefix: number): Uint8Array {
  return Uint8Array.of(prefix);
}

export function encodeU64(n: number): Uint8Array {
  const b = new Uint8Array(8);
  writeU64(b, 0, n);
  return b;
}

/**
 * Writes `n` big-endian at `offset`, byte by byte: keys are fresh arrays of up to 64 bytes, which V8 keeps
 * in its heap, and a DataView over one (`.buffer`) moves it out to a backing store first, ~1 µs.
 */
export function writeU64(b: Uint8Array, offset: number, n: number): void {
  writeU32(b, offset, Math.floor(n / 0x1_0000_0000));
  writeU32(b, offset + 4, n >>> 0);
}

function writeU32(b: Uint8Array, offset: number, n: number): void {
  b[offset] = n >>> 24;
  b[offset + 1] = (n >>> 16) & 0xff;
  b[offset + 2] = (n >>> 8) & 0xff;
  b[offset + 3] = n & 0xff;
}

export function readU64(b: Uint8Array, offset: number): number {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return dv.getUint32(offset) * 0x1_0000_0000 + dv.getUint32(offset + 4);
}
