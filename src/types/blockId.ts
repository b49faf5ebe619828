import { bytesEqual, bytesToHex, bytesToHexUpper } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import { HASH_SIZE } from "./merkle.js";

/** Identifies a block: header hash plus the header of its part set. */
export interface PartSetHeader {
  total: number;
  hash: Uint8Array;
}

export interface BlockId {
  hash: Uint8Array;
  partSetHeader: PartSetHeader;
}

/** The nil BlockId: empty hash, total 0 (what nil votes and the first block's lastBlockId carry). */
export function zeroBlockId(): BlockId {
  return { hash: new Uint8Array(0), partSetHeader: { total: 0, hash: new Uint8Array(0) } };
}

/** types.BlockID.IsZero: empty hash and an empty part set header. */
export function isZeroBlockId(id: BlockId): boolean {
  return id.hash.length === 0 && id.partSetHeader.total === 0 && id.partSetHeader.hash.length === 0;
}

/** types.BlockID.IsComplete: a full 32-byte hash and a non-empty part set header. */
export function isCompleteBlockId(id: BlockId): boolean {
  return id.hash.length === HASH_SIZE && id.partSetHeader.total > 0 && id.partSetHeader.hash.length === HASH_SIZE;
}

export function partSetHeaderEquals(a: PartSetHeader, b: PartSetHeader): boolean {
  return a.total === b.total && bytesEqual(a.hash, b.hash);
}

export function blockIdEquals(a: BlockId, b: BlockId): boolean {
  return bytesEqual(a.hash, b.hash) && partSetHeaderEquals(a.partSetHeader, b.partSetHeader);
}

/** A string that is equal for equal BlockIds, for use as a Map key. */
export function blockIdKey(id: BlockId): string {
  return `${bytesToHex(id.hash)}:${id.partSetHeader.total}:${bytesToHex(id.partSetHeader.hash)}`;
}

/** Thrown by validateBlockIdBasic; the message matches CometBFT's BlockID.ValidateBasic. */
export class InvalidBlockIdError extends ComethError {}

/** types.ValidateHash: a hash is either empty or exactly 32 bytes. */
export function hashSizeProblem(h: Uint8Array): string | undefined {
  return h.length > 0 && h.length !== HASH_SIZE
    ? `expected size to be ${HASH_SIZE} bytes, got ${h.length} bytes`
    : undefined;
}

/** types.BlockID.ValidateBasic (the hash may be empty: a nil vote or a proposal's POL id). */
export function validateBlockIdBasic(id: BlockId): void {
  if (hashSizeProblem(id.hash)) throw new InvalidBlockIdError("wrong Hash");
  const total = id.partSetHeader.total;
  if (!Number.isInteger(total) || total < 0 || total > 0xffffffff) {
    throw new InvalidBlockIdError(`wrong PartSetHeader: total ${total} is not a uint32`);
  }
  const p = hashSizeProblem(id.partSetHeader.hash);
  if (p) throw new InvalidBlockIdError(`wrong PartSetHeader: wrong Hash: ${p}`);
}

/** cmtbytes.Fingerprint: the first 6 bytes, zero padded, as uppercase hex. */
export function fingerprint(b: Uint8Array): string {
  const out = new Uint8Array(6);
  out.set(b.subarray(0, 6));
  return bytesToHexUpper(out);
}

/** Go's BlockID.String(): `<HASH>:<total>:<fingerprint of parts hash>`, for error messages and logs. */
export function formatBlockId(id: BlockId): string {
  return `${bytesToHexUpper(id.hash)}:${id.partSetHeader.total}:${fingerprint(id.partSetHeader.hash)}`;
}
