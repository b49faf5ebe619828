import { bytesEqual } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import { formatRfc3339Nano, type Timestamp } from "../util/time.js";
import { type BlockId, fingerprint, isCompleteBlockId, isZeroBlockId, validateBlockIdBasic } from "./blockId.js";
import { encodeCanonicalVoteDelimited, encodeCanonicalVoteExtensionDelimited } from "./canonical.js";
import { ADDRESS_SIZE, addressFromPubKey, type PubKey, verifySignature } from "./keys.js";

export const SIGNED_MSG_TYPE = { prevote: 1, precommit: 2, proposal: 32 } as const;
export type VoteType = typeof SIGNED_MSG_TYPE.prevote | typeof SIGNED_MSG_TYPE.precommit;

export interface Vote {
  type: VoteType;
  height: number;
  round: number;
  /** Zero BlockId (empty hash, total 0) for a nil vote. */
  blockId: BlockId;
  timestamp: Timestamp;
  validatorAddress: Uint8Array;
  validatorIndex: number;
  signature: Uint8Array;
  extension: Uint8Array;
  extensionSignature: Uint8Array;
}

/** types.MaxSignatureSize: the largest signature a vote, proposal or commit sig may carry. */
export const MAX_SIGNATURE_SIZE = 64;

/** What Go prints for a missing vote in vote lists (VoteSet.StringIndented, dump_consensus_state). */
export const NIL_VOTE_STRING = "nil-Vote";

/** A vote that fails types.Vote.ValidateBasic; the message matches CometBFT's. */
export class InvalidVoteError extends ComethError {}

/** A vote for no block: the zero BlockId. */
export function isNilVote(vote: Vote): boolean {
  return isZeroBlockId(vote.blockId);
}

/**
 * types.VoteSignBytes: varint length prefix + CanonicalVote{type, height sfixed64, round sfixed64,
 * block_id (left out for nil), timestamp, chain_id} (docs/cometbft-hashes.md "Sign bytes"). The
 * extension is not signed here.
 */
export function voteSignBytes(chainId: string, vote: Vote): Uint8Array {
  return encodeCanonicalVoteDelimited(chainId, vote);
}

/** types.VoteExtensionSignBytes: length-prefixed CanonicalVoteExtension{extension, height, round, chain_id}. */
export function voteExtensionSignBytes(chainId: string, vote: Vote): Uint8Array {
  return encodeCanonicalVoteExtensionDelimited(chainId, vote);
}

/**
 * A vote's sign bytes are encoded when it is signed, again when it is verified on arrival, and again
 * when its block's LastCommit is verified (a vote rebuilt from the commit signature). Each encoding is
 * kept with the signature it was made for and the fields it encodes; asked again for the same
 * signature, the fields are compared (byte fields by value) instead of encoding again. Only the
 * encoding is saved: the signature is still checked against the bytes (keys.ts remembers verified
 * triples). The newest 1024 are kept.
 */
interface SignBytesMemo {
  chainId: string;
  type: number;
  height: number;
  round: number;
  hash: Uint8Array;
  total: number;
  partsHash: Uint8Array;
  timestamp: Timestamp;
  bytes: Uint8Array;
}
const SIGN_BYTES_MEMO_MAX = 1024;
const signBytesMemo = new Map<string, SignBytesMemo>();

function signatureKey(sig: Uint8Array): string {
  return Buffer.from(sig.buffer, sig.byteOffset, sig.byteLength).toString("latin1");
}

function memoMatches(m: SignBytesMemo, chainId: string, vote: Vote): boolean {
  const id = vote.blockId;
  return (
    m.chainId === chainId &&
    m.type === vote.type &&
    m.height === vote.height &&
    m.round === vote.round &&
    m.timestamp === vote.timestamp &&
    m.total === id.partSetHeader.total &&
    bytesEqual(m.hash, id.hash) &&
    bytesEqual(m.partsHash, id.partSetHeader.hash)
  );
}

/** Keeps `bytes` (voteSignBytes(chainId, vote)) as the sign bytes of `signature` (a signer's own vote). */
export function rememberVoteSignBytes(chainId: string, vote: Vote, signature: Uint8Array, bytes: Uint8Array): void {
  if (signature.length === 0) return;
  const key = signatureKey(signature);
  const id = vote.blockId;
  signBytesMemo.delete(key);
  signBytesMemo.set(key, {
    chainId,
    type: vote.type,
    height: vote.height,
    round: vote.round,
    hash: id.hash.slice(),
    total: id.partSetHeader.total,
    partsHash: id.partSetHeader.hash.slice(),
    timestamp: vote.timestamp,
    bytes,
  });
  if (signBytesMemo.size > SIGN_BYTES_MEMO_MAX) signBytesMemo.delete(signBytesMemo.keys().next().value as string);
}

/** voteSignBytes(chainId, vote), kept with `signature` (the vote's, or its commit signature's). */
export function voteSignBytesFor(chainId: string, vote: Vote, signature: Uint8Array): Uint8Array {
  if (signature.length === 0) return voteSignBytes(chainId, vote);
  const m = signBytesMemo.get(signatureKey(signature));
  if (m !== undefined && memoMatches(m, chainId, vote)) return m.bytes;
  const bytes = voteSignBytes(chainId, vote);
  rememberVoteSignBytes(chainId, vote, signature, bytes);
  return bytes;
}

/** types.Vote.Verify: the address belongs to pub and the signature covers voteSignBytes. */
export function verifyVote(chainId: string, vote: Vote, pub: PubKey): boolean {
  if (!bytesEqual(addressFromPubKey(pub), vote.validatorAddress)) return false;
  return verifySignature(pub, voteSignBytesFor(chainId, vote, vote.signature), vote.signature);
}

/**
 * Checks the extension signature (types.Vote.VerifyExtension). Only non-nil precommits carry
 * extensions; callers decide whether extensions are enabled at this height.
 */
export function verifyVoteExtension(chainId: string, vote: Vote, pub: PubKey): boolean {
  if (vote.type !== SIGNED_MSG_TYPE.precommit || isNilVote(vote)) return true;
  return verifySignature(pub, voteExtensionSignBytes(chainId, vote), vote.extensionSignature);
}

const TYPE_NAMES: Record<number, [string, string]> = {
  [SIGNED_MSG_TYPE.prevote]: ["SIGNED_MSG_TYPE_PREVOTE", "Prevote"],
  [SIGNED_MSG_TYPE.precommit]: ["SIGNED_MSG_TYPE_PRECOMMIT", "Precommit"],
};

/** Go's %02d: at least two digits, the sign counting toward the width. */
function pad2(n: number): string {
  return n < 0 ? n.toString() : n.toString().padStart(2, "0");
}

/**
 * Go's Vote.String() (docs/cometbft-rpc.md §3, "Vote text"):
 * `Vote{<idx>:<addr6> <height>/<round %02d>/<TYPE>(<Type>) <hash6> <sig6> <ext6> @ <RFC3339Nano>}`.
 */
export function formatVote(vote: Vote): string {
  const names = TYPE_NAMES[vote.type];
  if (!names) throw new InvalidVoteError(`unknown vote type ${vote.type}`);
  return (
    `Vote{${vote.validatorIndex}:${fingerprint(vote.validatorAddress)} ${vote.height}/${pad2(vote.round)}/` +
    `${names[0]}(${names[1]}) ${fingerprint(vote.blockId.hash)} ${fingerprint(vote.signature)} ` +
    `${fingerprint(vote.extension)} @ ${formatRfc3339Nano(vote.timestamp)}}`
  );
}

/** formatVote, or "nil-Vote" for a missing vote. */
export function formatVoteOrNil(vote: Vote | undefined): string {
  return vote === undefined ? NIL_VOTE_STRING : formatVote(vote);
}

/** types.Vote.ValidateBasic. Throws InvalidVoteError with CometBFT's message. */
export function validateVoteBasic(vote: Vote): void {
  if (vote.type !== SIGNED_MSG_TYPE.prevote && vote.type !== SIGNED_MSG_TYPE.precommit) {
    throw new InvalidVoteError("invalid Type");
  }
  if (vote.height <= 0) throw new InvalidVoteError("negative or zero Height");
  if (vote.round < 0) throw new InvalidVoteError("negative Round");
  try {
    validateBlockIdBasic(vote.blockId);
  } catch (err) {
    throw new InvalidVoteError(`wrong BlockID: ${(err as Error).message}`);
  }
  const nil = isZeroBlockId(vote.blockId);
  if (!nil && !isCompleteBlockId(vote.blockId)) {
    throw new InvalidVoteError("blockID must be either empty or complete");
  }
  if (vote.validatorAddress.length !== ADDRESS_SIZE) {
    throw new InvalidVoteError(
      `expected ValidatorAddress size to be ${ADDRESS_SIZE} bytes, got ${vote.validatorAddress.length} bytes`,
    );
  }
  if (vote.validatorIndex < 0) throw new InvalidVoteError("negative ValidatorIndex");
  if (vote.signature.length === 0) throw new InvalidVoteError("signature is missing");
  if (vote.signature.length > MAX_SIGNATURE_SIZE) {
    throw new InvalidVoteError(`signature is too big (max: ${MAX_SIGNATURE_SIZE})`);
  }
  // Only non-nil precommits may carry extensions (tendermint/tendermint#8487).
  if (vote.type !== SIGNED_MSG_TYPE.precommit || nil) {
    if (vote.extension.length > 0) {
      throw new InvalidVoteError(`unexpected vote extension; vote type ${vote.type}, isNil ${nil}`);
    }
    if (vote.extensionSignature.length > 0) throw new InvalidVoteError("unexpected vote extension signature");
  } else {
    if (vote.extensionSignature.length > MAX_SIGNATURE_SIZE) {
      throw new InvalidVoteError(`vote extension signature is too big (max: ${MAX_SIGNATURE_SIZE})`);
    }
    if (vote.extensionSignature.length === 0 && vote.extension.length !== 0) {
      throw new InvalidVoteError("vote extension signature absent on vote with extension");
    }
  }
}
