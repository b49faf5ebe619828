import { ComethError } from "../util/errors.js";
import type { Timestamp } from "../util/time.js";
import { type BlockId, isCompleteBlockId, validateBlockIdBasic } from "./blockId.js";
import { encodeCanonicalProposalDelimited } from "./canonical.js";
import { type PubKey, verifySignature } from "./keys.js";
import { MAX_SIGNATURE_SIZE, SIGNED_MSG_TYPE } from "./vote.js";

export interface Proposal {
  type: 32;
  height: number;
  round: number;
  /** -1 when there is no proof-of-lock round. */
  polRound: number;
  blockId: BlockId;
  timestamp: Timestamp;
  signature: Uint8Array;
}

/** A proposal that fails types.Proposal.ValidateBasic; the message matches CometBFT's. */
export class InvalidProposalError extends ComethError {}

/**
 * types.ProposalSignBytes: varint length prefix + CanonicalProposal{type=32, height sfixed64,
 * round sfixed64, pol_round int64 varint, block_id, timestamp, chain_id} (docs/cometbft-hashes.md "Sign bytes").
 */
export function proposalSignBytes(chainId: string, p: Proposal): Uint8Array {
  return encodeCanonicalProposalDelimited(chainId, p);
}

/** The signature covers proposalSignBytes under pub (the proposer's key). */
export function verifyProposal(chainId: string, p: Proposal, pub: PubKey): boolean {
  return verifySignature(pub, proposalSignBytes(chainId, p), p.signature);
}

/** types.Proposal.ValidateBasic. Throws InvalidProposalError with CometBFT's message. */
export function validateProposalBasic(p: Proposal): void {
  if (p.type !== SIGNED_MSG_TYPE.proposal) throw new InvalidProposalError("invalid Type");
  if (p.height < 0) throw new InvalidProposalError("negative Height");
  if (p.round < 0) throw new InvalidProposalError("negative Round");
  if (p.polRound < -1) throw new InvalidProposalError("negative POLRound (exception: -1)");
  try {
    validateBlockIdBasic(p.blockId);
  } catch (err) {
    throw new InvalidProposalError(`wrong BlockID: ${(err as Error).message}`);
  }
  // ValidateBasic of the BlockID alone would let an empty id through.
  if (!isCompleteBlockId(p.blockId)) throw new InvalidProposalError("expected a complete, non-empty BlockID");
  if (p.signature.length === 0) throw new InvalidProposalError("signature is missing");
  if (p.signature.length > MAX_SIGNATURE_SIZE) {
    throw new InvalidProposalError(`signature is too big (max: ${MAX_SIGNATURE_SIZE})`);
  }
}
