import { hash } from "node:crypto";
import { bytesEqual } from "../util/bytes.js";

/**
 * RFC 6962 style merkle tree as CometBFT's crypto/merkle builds it (docs/cometbft-hashes.md "Merkle tree"): leaves are
 * sha256(0x00‖item), inner nodes sha256(0x01‖left‖right), split at the largest power of two
 * strictly below the item count.
 */

/** A merkle inclusion proof; `aunts` run from the leaf's sibling up to the root's children. */
export interface MerkleProof {
  total: number;
  index: number;
  leafHash: Uint8Array;
  aunts: Uint8Array[];
}

/** crypto/merkle/proof.go MaxAunts: deeper proofs are rejected before hashing. */
export const MAX_AUNTS = 100;
export const HASH_SIZE = 32;

export function sha256(data: Uint8Array): Uint8Array {
  const b = hash("sha256", data, "buffer");
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

// Leaf and inner hashes are computed by the thousand per block (tx hashes, parts, commit sigs).
// Assembling prefix‖data in one reused buffer saves an allocation per hash; crypto.hash is
// synchronous, so the buffer is never shared between two hashes in flight.
const SCRATCH_MAX = 1 + 65536 + 64;
let scratch = Buffer.allocUnsafe(1024);

function prefixedHash(prefix: number, a: Uint8Array, b?: Uint8Array): Uint8Array {
  const len = 1 + a.length + (b ? b.length : 0);
  if (len > scratch.length) {
    if (len > SCRATCH_MAX) return sha256(Buffer.concat(b ? [Uint8Array.of(prefix), a, b] : [Uint8Array.of(prefix), a]));
    scratch = Buffer.allocUnsafe(SCRATCH_MAX);
  }
  scratch[0] = prefix;
  scratch.set(a, 1);
  if (b) scratch.set(b, 1 + a.length);
  return sha256(scratch.subarray(0, len));
}

/** sha256(0x00‖leaf). */
export function merkleLeafHash(leaf: Uint8Array): Uint8Array {
  return prefixedHash(0, leaf);
}

/** sha256(0x01‖left‖right). */
export function merkleInnerHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return prefixedHash(1, left, right);
}

/** Largest power of two strictly less than `length` (0 for 1): the size of the left subtree (getSplitPoint). */
export function merkleSplitPoint(length: number): number {
  return length < 2 ? 0 : 2 ** (31 - Math.clz32(length - 1));
}

const EMPTY_ROOT = sha256(new Uint8Array(0));

function rootOf(items: readonly Uint8Array[], start: number, end: number): Uint8Array {
  const n = end - start;
  if (n === 1) return merkleLeafHash(items[start] as Uint8Array);
  const k = merkleSplitPoint(n);
  return merkleInnerHash(rootOf(items, start, start + k), rootOf(items, start + k, end));
}

/** Merkle root of the items; the empty list hashes to sha256(""). */
export function hashFromByteSlices(items: readonly Uint8Array[]): Uint8Array {
  if (items.length === 0) return EMPTY_ROOT.slice();
  return rootOf(items, 0, items.length);
}

function buildProofs(items: readonly Uint8Array[], start: number, end: number, proofs: MerkleProof[]): Uint8Array {
  const n = end - start;
  if (n === 1) {
    const leaf = merkleLeafHash(items[start] as Uint8Array);
    proofs[start] = { total: items.length, index: start, leafHash: leaf, aunts: [] };
    return leaf;
  }
  const k = merkleSplitPoint(n);
  const left = buildProofs(items, start, start + k, proofs);
  const right = buildProofs(items, start + k, end, proofs);
  // Children are finished first, so pushing here appends the aunt one level above the ones
  // already recorded: sibling first, root-level last, as merkle.Proof.Aunts.
  for (let i = start; i < start + k; i++) (proofs[i] as MerkleProof).aunts.push(right);
  for (let i = start + k; i < end; i++) (proofs[i] as MerkleProof).aunts.push(left);
  return merkleInnerHash(left, right);
}

/** Root plus one inclusion proof per item (merkle.ProofsFromByteSlices). */
export function proofsFromByteSlices(items: readonly Uint8Array[]): { root: Uint8Array; proofs: MerkleProof[] } {
  if (items.length === 0) return { root: EMPTY_ROOT.slice(), proofs: [] };
  const proofs: MerkleProof[] = new Array(items.length);
  const root = buildProofs(items, 0, items.length, proofs);
  return { root, proofs };
}

function rootFromAunts(
  index: number,
  total: number,
  leafHash: Uint8Array,
  aunts: readonly Uint8Array[],
  depth: number,
): Uint8Array | undefined {
  if (index >= total || index < 0 || total <= 0) return undefined;
  if (total === 1) return depth === 0 ? leafHash : undefined;
  if (depth === 0) return undefined;
  const top = aunts[depth - 1] as Uint8Array;
  const k = merkleSplitPoint(total);
  if (index < k) {
    const left = rootFromAunts(index, k, leafHash, aunts, depth - 1);
    return left && merkleInnerHash(left, top);
  }
  const right = rootFromAunts(index - k, total - k, leafHash, aunts, depth - 1);
  return right && merkleInnerHash(top, right);
}

/** Root implied by the proof, or undefined when the proof is malformed (merkle.Proof.ComputeRootHash). */
export function computeMerkleProofRoot(proof: MerkleProof): Uint8Array | undefined {
  if (!Number.isSafeInteger(proof.total) || !Number.isSafeInteger(proof.index)) return undefined;
  if (proof.leafHash.length !== HASH_SIZE || proof.aunts.length > MAX_AUNTS) return undefined;
  for (const aunt of proof.aunts) if (aunt.length !== HASH_SIZE) return undefined;
  return rootFromAunts(proof.index, proof.total, proof.leafHash, proof.aunts, proof.aunts.length);
}

/** merkle.Proof.Verify: the leaf hashes to proof.leafHash and the aunts lead to `root`. */
export function verifyMerkleProof(proof: MerkleProof, root: Uint8Array, leaf: Uint8Array): boolean {
  if (proof.total < 0 || proof.index < 0) return false;
  if (!bytesEqual(merkleLeafHash(leaf), proof.leafHash)) return false;
  const computed = computeMerkleProofRoot(proof);
  return computed !== undefined && bytesEqual(computed, root);
}
