import { serverError } from "../errors.js";
import type { BlockRef, BlockSpec } from "../params.js";
import type { EvmBlock, EvmServices } from "../services.js";

/**
 * Block parameters → heights. CometBFT has instant finality and no pending block, so latest,
 * safe, finalized and pending are all the latest committed height; `earliest` is number 0, the
 * genesis (docs/ethereum-rpc.md "Block parameters").
 */

export function specHeight(spec: BlockSpec, s: EvmServices): number {
  return spec.kind === "number" ? spec.number : s.chain.latestHeight();
}

/** A block by number or tag; undefined past the head (geth answers null). */
export async function blockBySpec(spec: BlockSpec, s: EvmServices): Promise<EvmBlock | undefined> {
  const height = specHeight(spec, s);
  if (height > s.chain.latestHeight()) return undefined;
  return s.chain.blockByNumber(height);
}

/** The height of a block reference; a hash must name a known block. */
export async function refHeight(ref: BlockRef, s: EvmServices): Promise<number> {
  if (ref.kind !== "hash") return specHeight(ref, s);
  if (s.chain.blockNumberByHash !== undefined) {
    const n = s.chain.blockNumberByHash(ref.hash);
    if (n === undefined) throw serverError("header for hash not found");
    return n;
  }
  const block = await s.chain.blockByHash(ref.hash);
  if (block === undefined) throw serverError("header for hash not found");
  return block.number;
}

/** The height whose state a query reads; past the head is geth's "header not found". */
export async function stateHeight(ref: BlockRef | undefined, s: EvmServices): Promise<number> {
  const height = ref === undefined ? s.chain.latestHeight() : await refHeight(ref, s);
  if (height > s.chain.latestHeight()) throw serverError("header not found");
  return height;
}

/** A block by reference; undefined when unknown (number past the head or unknown hash). */
export async function blockByRef(ref: BlockRef, s: EvmServices): Promise<EvmBlock | undefined> {
  if (ref.kind === "hash") return s.chain.blockByHash(ref.hash);
  return blockBySpec(ref, s);
}

/**
 * stateHeight without waiting when the reference is a tag or a number (every reference but a
 * block hash): reads by tag are answered synchronously. Undefined for a hash reference.
 */
export function stateHeightNow(ref: BlockRef | undefined, s: EvmServices): number | undefined {
  if (ref !== undefined && ref.kind === "hash") return undefined;
  const height = ref === undefined ? s.chain.latestHeight() : specHeight(ref, s);
  if (height > s.chain.latestHeight()) throw serverError("header not found");
  return height;
}
