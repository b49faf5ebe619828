import { ComethError } from "../util/errors.js";
import { KEY_TYPES } from "./keys.js";
import { sha256 } from "./merkle.js";
import type { ConsensusParams, ConsensusParamsUpdate } from "./paramsTypes.js";
import { encodeHashedParams } from "./protoCodec.js";

// The declarations live in paramsTypes.ts; rpc/comet imports ConsensusParams from this file by name.
export type { ConsensusParams, ConsensusParamsUpdate } from "./paramsTypes.js";

/** types.MaxBlockSizeBytes: 100 MiB. */
export const MAX_BLOCK_SIZE_BYTES = 104857600n;

/** Params with invalid values (types.ConsensusParams.ValidateBasic / ValidateUpdate); CometBFT's message. */
export class InvalidConsensusParamsError extends ComethError {}

/** types.DefaultConsensusParams. */
export function defaultConsensusParams(): ConsensusParams {
  return {
    block: { maxBytes: 22020096n, maxGas: -1n },
    evidence: { maxAgeNumBlocks: 100000n, maxAgeDurationNs: 48n * 3600n * 1_000_000_000n, maxBytes: 1048576n },
    validator: { pubKeyTypes: [KEY_TYPES.ed25519] },
    version: { app: 0n },
    abci: { voteExtensionsEnableHeight: 0n },
  };
}

/**
 * consensus_hash: plain sha256 (not merkle) of HashedParams{block.max_bytes, block.max_gas}
 * (docs/cometbft-hashes.md "Hashes in the header").
 */
export function hashConsensusParams(p: ConsensusParams): Uint8Array {
  let h = paramsHashes.get(p);
  if (h === undefined) {
    h = sha256(encodeHashedParams(p));
    paramsHashes.set(p, h);
  }
  return h;
}

/**
 * The hash of each params object, kept: a chain's state carries the same object from block to block
 * until params change (a new object), and every proposal and block check hashes it. Params objects are
 * not changed once built.
 */
const paramsHashes = new WeakMap<ConsensusParams, Uint8Array>();

const KNOWN_PUBKEY_TYPES: ReadonlySet<string> = new Set(Object.values(KEY_TYPES));

/** types.ConsensusParams.ValidateBasic. Throws InvalidConsensusParamsError. */
export function validateConsensusParams(p: ConsensusParams): void {
  const fail = (m: string): never => {
    throw new InvalidConsensusParamsError(m);
  };
  const { block, evidence } = p;
  if (block.maxBytes === 0n) fail("block.MaxBytes cannot be 0");
  if (block.maxBytes < -1n) fail(`block.MaxBytes must be -1 or greater than 0. Got ${block.maxBytes}`);
  if (block.maxBytes > MAX_BLOCK_SIZE_BYTES) {
    fail(`block.MaxBytes is too big. ${block.maxBytes} > ${MAX_BLOCK_SIZE_BYTES}`);
  }
  if (block.maxGas < -1n) fail(`block.MaxGas must be greater or equal to -1. Got ${block.maxGas}`);
  if (evidence.maxAgeNumBlocks <= 0n) {
    fail(`evidence.MaxAgeNumBlocks must be greater than 0. Got ${evidence.maxAgeNumBlocks}`);
  }
  if (evidence.maxAgeDurationNs <= 0n) {
    fail(`evidence.MaxAgeDuration must be grater than 0 if provided, Got ${evidence.maxAgeDurationNs}ns`);
  }
  const maxBytes = block.maxBytes === -1n ? MAX_BLOCK_SIZE_BYTES : block.maxBytes;
  if (evidence.maxBytes > maxBytes) {
    fail(`evidence.MaxBytesEvidence is greater than upper bound, ${evidence.maxBytes} > ${block.maxBytes}`);
  }
  if (evidence.maxBytes < 0n) fail(`evidence.MaxBytes must be non negative. Got: ${evidence.maxBytes}`);
  if (p.abci.voteExtensionsEnableHeight < 0n) {
    fail(`ABCI.VoteExtensionsEnableHeight cannot be negative. Got: ${p.abci.voteExtensionsEnableHeight}`);
  }
  if (p.validator.pubKeyTypes.length === 0) fail("len(Validator.PubKeyTypes) must be greater than 0");
  p.validator.pubKeyTypes.forEach((t, i) => {
    if (!KNOWN_PUBKEY_TYPES.has(t)) fail(`params.Validator.PubKeyTypes[${i}], ${t}, is an unknown pubkey type`);
  });
}

/** types.ConsensusParams.Update: a copy of p with the update's present sections replacing p's. */
export function updateConsensusParams(p: ConsensusParams, u: ConsensusParamsUpdate | undefined): ConsensusParams {
  const r: ConsensusParams = {
    block: { ...p.block },
    evidence: { ...p.evidence },
    validator: { pubKeyTypes: [...p.validator.pubKeyTypes] },
    version: { ...p.version },
    abci: { ...p.abci },
  };
  if (!u) return r;
  if (u.block) r.block = { ...u.block };
  if (u.evidence) r.evidence = { ...u.evidence };
  if (u.validator) r.validator = { pubKeyTypes: [...u.validator.pubKeyTypes] };
  if (u.version) r.version = { ...u.version };
  if (u.abci) r.abci = { ...u.abci };
  return r;
}

/**
 * types.ConsensusParams.ValidateUpdate: vote extensions may only be scheduled for a future height,
 * and cannot be disabled or moved once enabled. `height` is the height the update is decided at.
 */
export function validateConsensusParamsUpdate(
  p: ConsensusParams,
  u: ConsensusParamsUpdate | undefined,
  height: number,
): void {
  if (!u?.abci) return;
  const cur = p.abci.voteExtensionsEnableHeight;
  const next = u.abci.voteExtensionsEnableHeight;
  const h = BigInt(height);
  if (next < 0n) throw new InvalidConsensusParamsError("VoteExtensionsEnableHeight must be positive");
  if (cur <= 0n && next === 0n) return;
  if (cur === next) return;
  if (cur > 0n && next === 0n) {
    if (cur <= h) {
      throw new InvalidConsensusParamsError(
        `vote extensions cannot be disabled once enabledold enable height: ${cur}, current height ${h}`,
      );
    }
    return;
  }
  if (next <= h) {
    throw new InvalidConsensusParamsError(
      `vote extensions cannot be updated to a past or current height, enable height: ${next}, current height ${h}`,
    );
  }
  if (cur <= 0n) return;
  if (cur <= h) {
    throw new InvalidConsensusParamsError(
      `vote extensions cannot be modified once enabledenable height: ${cur}, current height ${h}`,
    );
  }
}

/** Whether a vote at `height` must carry (and verify) a vote extension (ABCIParams.VoteExtensionsEnabled). */
export function voteExtensionsEnabled(p: ConsensusParams, height: number): boolean {
  const enable = p.abci.voteExtensionsEnableHeight;
  return enable > 0n && BigInt(height) >= enable;
}
