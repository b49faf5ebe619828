import { bytesEqual } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import { BitArray } from "./bitArray.js";
import type { PartSetHeader } from "./blockId.js";
import {
  computeMerkleProofRoot,
  HASH_SIZE,
  MAX_AUNTS,
  type MerkleProof,
  merkleLeafHash,
  proofsFromByteSlices,
} from "./merkle.js";

/**
 * types.BlockPartSizeBytes: blocks travel and are stored as 64 KiB parts (docs/cometbft-hashes.md
 * "Block ID and block parts").
 */
export const PART_SIZE_BYTES = 65536;

/** A block part: a slice of the encoded block plus its merkle proof against the part set hash. */
export interface Part {
  index: number;
  bytes: Uint8Array;
  proof: MerkleProof;
}

/** A part that does not belong to the set: wrong index, size or proof. */
export class InvalidPartError extends ComethError {}

/** bytes() was called before every part arrived. */
export class IncompletePartSetError extends ComethError {}

/**
 * types.Part.ValidateBasic: size bound, every part but the last exactly partSize long, index
 * matching the proof, proof well formed.
 */
export function validatePartBasic(part: Part, partSize: number = PART_SIZE_BYTES): void {
  if (part.bytes.length > partSize) throw new InvalidPartError(`too big: ${part.bytes.length} bytes, max: ${partSize}`);
  if (part.index < part.proof.total - 1 && part.bytes.length !== partSize) {
    throw new InvalidPartError(`error inner part with invalid size: ${part.bytes.length} bytes, want ${partSize}`);
  }
  if (part.index !== part.proof.index) {
    throw new InvalidPartError(`error invalid part index: part index ${part.index} != proof index ${part.proof.index}`);
  }
  if (part.proof.total < 0 || part.proof.index < 0) throw new InvalidPartError("wrong Proof: negative total or index");
  if (part.proof.leafHash.length !== HASH_SIZE) throw new InvalidPartError("wrong Proof: leaf hash is not 32 bytes");
  if (part.proof.aunts.length > MAX_AUNTS) throw new InvalidPartError(`wrong Proof: more than ${MAX_AUNTS} aunts`);
}

/**
 * The parts of one encoded block (types.PartSet). Built whole by the proposer (fromData) or
 * filled part by part from gossip (fromHeader + addPart), each part checked against the header hash.
 */
export class PartSet {
  readonly total: number;
  readonly hash: Uint8Array;
  readonly partSize: number;
  readonly #parts: (Part | undefined)[];
  readonly #bitArray: BitArray;
  #count = 0;
  #byteSize = 0;
  #data: Uint8Array | undefined;

  private constructor(total: number, hash: Uint8Array, partSize: number) {
    this.total = total;
    this.hash = hash;
    this.partSize = partSize;
    this.#parts = new Array(total).fill(undefined);
    this.#bitArray = new BitArray(total);
  }

  /** Splits data into partSize chunks (views, not copies) with merkle proofs over the raw chunks. */
  static fromData(data: Uint8Array, partSize: number = PART_SIZE_BYTES): PartSet {
    const total = Math.ceil(data.length / partSize);
    const chunks: Uint8Array[] = new Array(total);
    for (let i = 0; i < total; i++) chunks[i] = data.subarray(i * partSize, Math.min(data.length, (i + 1) * partSize));
    const { root, proofs } = proofsFromByteSlices(chunks);
    const ps = new PartSet(total, root, partSize);
    for (let i = 0; i < total; i++) {
      ps.#parts[i] = { index: i, bytes: chunks[i] as Uint8Array, proof: proofs[i] as MerkleProof };
      ps.#bitArray.set(i, true);
    }
    ps.#count = total;
    ps.#byteSize = data.length;
    ps.#data = data;
    return ps;
  }

  /** An empty set waiting for the parts named by a proposal's (or a peer's) part set header. */
  static fromHeader(h: PartSetHeader, partSize: number = PART_SIZE_BYTES): PartSet {
    return new PartSet(h.total, h.hash, partSize);
  }

  header(): PartSetHeader {
    return { total: this.total, hash: this.hash };
  }

  hasHeader(h: PartSetHeader): boolean {
    return h.total === this.total && bytesEqual(h.hash, this.hash);
  }

  count(): number {
    return this.#count;
  }

  isComplete(): boolean {
    return this.#count === this.total;
  }

  getPart(i: number): Part | undefined {
    return this.#parts[i];
  }

  /**
   * Adds a gossiped part (PartSet.AddPart). Returns false for a part already held; throws
   * InvalidPartError for an index out of range or a part whose proof does not lead to the set hash.
   */
  addPart(part: Part): boolean {
    if (!Number.isInteger(part.index) || part.index < 0 || part.index >= this.total) {
      throw new InvalidPartError(`error part set unexpected index: ${part.index} (total ${this.total})`);
    }
    if (this.#parts[part.index] !== undefined) return false;
    validatePartBasic(part, this.partSize);
    if (part.proof.total !== this.total) {
      throw new InvalidPartError(`error part set invalid proof: proof total ${part.proof.total} != ${this.total}`);
    }
    if (!bytesEqual(merkleLeafHash(part.bytes), part.proof.leafHash)) {
      throw new InvalidPartError("error part set invalid proof: leaf hash does not match the part bytes");
    }
    const root = computeMerkleProofRoot(part.proof);
    if (root === undefined || !bytesEqual(root, this.hash)) {
      throw new InvalidPartError("error part set invalid proof: proof does not lead to the part set hash");
    }
    this.#parts[part.index] = part;
    this.#bitArray.set(part.index, true);
    this.#count++;
    this.#byteSize += part.bytes.length;
    return true;
  }

  /** Which parts are held (a copy). */
  bitArray(): BitArray {
    return this.#bitArray.copy();
  }

  /** The whole encoded block; only once every part is held. */
  bytes(): Uint8Array {
    if (this.#data) return this.#data;
    if (!this.isComplete()) {
      throw new IncompletePartSetError(`part set has ${this.#count} of ${this.total} parts; wait for isComplete()`);
    }
    const out = new Uint8Array(this.#byteSize);
    let pos = 0;
    for (const p of this.#parts) {
      const b = (p as Part).bytes;
      out.set(b, pos);
      pos += b.length;
    }
    this.#data = out;
    return out;
  }

  /** Sum of the held parts' lengths. */
  byteSize(): number {
    return this.#byteSize;
  }
}
