import { bytesEqual, bytesToHex, bytesToHexUpper, compareBytes } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import { type BlockId, blockIdEquals, formatBlockId } from "./blockId.js";
import { BLOCK_ID_FLAG, type Commit } from "./blockTypes.js";
import { commitSigProblem, commitSigToVote } from "./commit.js";
import { addressFromPubKey, type PubKey, verifySignature } from "./keys.js";
import { hashFromByteSlices } from "./merkle.js";
import { decodeValidatorSetMessage, encodeSimpleValidator, encodeValidatorSetMessage } from "./protoCodec.js";
import type { Validator } from "./validator.js";
import { voteSignBytesFor } from "./vote.js";

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** types.MaxTotalVotingPower = MaxInt64 / 8: keeps priority arithmetic clear of overflow. */
export const MAX_TOTAL_VOTING_POWER = INT64_MAX / 8n;
/** types.PriorityWindowSizeFactor: priorities are kept within 2 × total power of each other. */
export const PRIORITY_WINDOW_SIZE_FACTOR = 2n;

/** A validator change set that CometBFT would refuse (updateWithChangeSet); the set is left unchanged. */
export class InvalidValidatorUpdateError extends ComethError {}

/** Misuse of a validator set: incrementing an empty set, a proposer that is not a member. */
export class ValidatorSetError extends ComethError {}

export const COMMIT_VERIFICATION_FAILURE = {
  size: "size",
  height: "height",
  blockId: "blockId",
  invalidSignature: "invalidSignature",
  addressMismatch: "addressMismatch",
  wrongSignature: "wrongSignature",
  notEnoughPower: "notEnoughPower",
} as const;
export type CommitVerificationFailure = (typeof COMMIT_VERIFICATION_FAILURE)[keyof typeof COMMIT_VERIFICATION_FAILURE];

/** ValidatorSet.verifyCommit failed; `kind` says why, the message is CometBFT's. */
export class CommitVerificationError extends ComethError {
  readonly kind: CommitVerificationFailure;
  constructor(kind: CommitVerificationFailure, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** Go's int64 arithmetic in safeAddClip/safeSubClip: exact result clipped to the int64 range. */
function clip(x: bigint): bigint {
  return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : x;
}

function copyValidator(v: Validator): Validator {
  return { address: v.address, pubKey: v.pubKey, votingPower: v.votingPower, proposerPriority: v.proposerPriority };
}

/** ValidatorsByVotingPower: power descending, then address ascending. */
function bySetOrder(a: Validator, b: Validator): number {
  if (a.votingPower !== b.votingPower) return a.votingPower > b.votingPower ? -1 : 1;
  return compareBytes(a.address, b.address);
}

function byAddress(a: Validator, b: Validator): number {
  return compareBytes(a.address, b.address);
}

/** Validator.CompareProposerPriority: higher priority wins, ties go to the smaller address. */
function morePriority(a: Validator | undefined, b: Validator): Validator {
  if (!a) return b;
  if (a.proposerPriority !== b.proposerPriority) return a.proposerPriority > b.proposerPriority ? a : b;
  return compareBytes(a.address, b.address) <= 0 ? a : b;
}

/**
 * A validator set with CometBFT's proposer rotation (types/validator_set.go, docs/cometbft-hashes.md
 * "Proposer selection"). Validators are kept in set order (power desc, address asc); that order is the
 * validator index used by votes and commits and the leaf order of validators_hash.
 *
 * incrementProposerPriority and updateWithChangeSet mutate the Validator objects in place;
 * take copy() first when a snapshot must stay unchanged.
 */
export class ValidatorSet {
  #vals: Validator[];
  #proposer: Validator | undefined;
  #total = 0n;
  #hash: Uint8Array | undefined;
  #indexByAddress: Map<string, number> | undefined;

  private constructor(vals: Validator[], proposer: Validator | undefined) {
    this.#vals = vals;
    this.#proposer = proposer;
    this.#recomputeTotal();
  }

  /**
   * NewValidatorSet: new validators start at -(P + P>>3) where P is the total power, the set is
   * sorted and then incremented once so a proposer is chosen. Zero power, duplicates and a total
   * above MAX_TOTAL_VOTING_POWER throw InvalidValidatorUpdateError.
   */
  static create(vals: readonly Validator[]): ValidatorSet {
    const set = new ValidatorSet([], undefined);
    set.#applyChanges(vals.map(copyValidator), false);
    if (vals.length > 0) set.incrementProposerPriority(1);
    return set;
  }

  /**
   * A set exactly as stored (ValidatorSetFromProto): validators in the given order with their
   * priorities untouched, the proposer looked up by address (found lazily when undefined).
   */
  static restore(vals: readonly Validator[], proposerAddress: Uint8Array | undefined): ValidatorSet {
    const copies = vals.map(copyValidator);
    let proposer: Validator | undefined;
    if (proposerAddress !== undefined) {
      proposer = copies.find((v) => bytesEqual(v.address, proposerAddress));
      if (!proposer) {
        throw new ValidatorSetError(`proposer ${bytesToHexUpper(proposerAddress)} not in validator set`);
      }
    }
    const set = new ValidatorSet(copies, proposer);
    if (set.#total > MAX_TOTAL_VOTING_POWER) {
      throw new ValidatorSetError(`total voting power ${set.#total} exceeds maximum ${MAX_TOTAL_VOTING_POWER}`);
    }
    return set;
  }

  static empty(): ValidatorSet {
    return new ValidatorSet([], undefined);
  }

  /** In set order. Do not mutate the returned objects. */
  get validators(): readonly Validator[] {
    return this.#vals;
  }

  /** The proposer for the current round (GetProposer), undefined for an empty set. */
  getProposer(): Validator | undefined {
    if (this.#vals.length === 0) return undefined;
    if (!this.#proposer) this.#proposer = this.#findProposer();
    return this.#proposer;
  }

  size(): number {
    return this.#vals.length;
  }

  totalVotingPower(): bigint {
    return this.#total;
  }

  isEmpty(): boolean {
    return this.#vals.length === 0;
  }

  hasAddress(addr: Uint8Array): boolean {
    return this.#index().has(bytesToHex(addr));
  }

  getByAddress(addr: Uint8Array): { index: number; validator: Validator } | undefined {
    const index = this.#index().get(bytesToHex(addr));
    if (index === undefined) return undefined;
    return { index, validator: this.#vals[index] as Validator };
  }

  getByIndex(i: number): Validator | undefined {
    return this.#vals[i];
  }

  /** validators_hash: merkle over SimpleValidator{pub_key, voting_power} in set order (priorities excluded). */
  hash(): Uint8Array {
    if (!this.#hash) this.#hash = hashFromByteSlices(this.#vals.map(encodeSimpleValidator));
    return this.#hash.slice();
  }

  /** A deep copy (validator objects included); the proposer is carried over. */
  copy(): ValidatorSet {
    const vals = this.#vals.map(copyValidator);
    const p = this.#proposer;
    const proposer = p ? vals.find((v) => bytesEqual(v.address, p.address)) : undefined;
    const c = new ValidatorSet(vals, proposer);
    c.#hash = this.#hash;
    return c;
  }

  copyIncrementProposerPriority(times: number): ValidatorSet {
    const c = this.copy();
    c.incrementProposerPriority(times);
    return c;
  }

  /**
   * IncrementProposerPriority: rescale priorities into a 2×total window, centre them on zero,
   * then `times` rounds of "add power, pick the highest, subtract total". The last pick proposes.
   */
  incrementProposerPriority(times: number): void {
    if (this.#vals.length === 0) throw new ValidatorSetError("empty validator set");
    if (!Number.isInteger(times) || times <= 0) {
      throw new ValidatorSetError(`cannot increment proposer priority ${times} times; pass a positive integer`);
    }
    this.#rescalePriorities(PRIORITY_WINDOW_SIZE_FACTOR * this.#total);
    this.#shiftByAvgProposerPriority();
    let proposer: Validator | undefined;
    for (let i = 0; i < times; i++) proposer = this.#incrementOnce();
    this.#proposer = proposer;
  }

  /**
   * UpdateWithChangeSet: power 0 removes, an unknown address adds (at -1.125 × the new total),
   * a known one updates its power and keeps its priority. Then rescale, centre and re-sort.
   * Throws InvalidValidatorUpdateError (and leaves the set unchanged) for duplicates, negative
   * power, removing an unknown validator, an empty result or a total above MAX_TOTAL_VOTING_POWER.
   */
  updateWithChangeSet(changes: readonly { pubKey: PubKey; power: bigint }[]): void {
    const vals = changes.map((c) => ({
      address: addressFromPubKey(c.pubKey),
      pubKey: c.pubKey,
      votingPower: c.power,
      proposerPriority: 0n,
    }));
    this.#applyChanges(vals, true);
  }

  /**
   * ValidatorSet.VerifyCommit: one signature slot per validator, the commit is for (height,
   * blockId), every present signature is valid for its validator, and the precommits for the
   * block carry more than 2/3 of the total power. Throws CommitVerificationError.
   */
  verifyCommit(chainId: string, blockId: BlockId, height: number, commit: Commit): void {
    const F = COMMIT_VERIFICATION_FAILURE;
    if (this.#vals.length !== commit.signatures.length) {
      throw new CommitVerificationError(
        F.size,
        `Invalid commit -- wrong set size: ${this.#vals.length} vs ${commit.signatures.length}`,
      );
    }
    if (height !== commit.height) {
      throw new CommitVerificationError(F.height, `Invalid commit -- wrong height: ${height} vs ${commit.height}`);
    }
    if (!blockIdEquals(blockId, commit.blockId)) {
      throw new CommitVerificationError(
        F.blockId,
        `invalid commit -- wrong block ID: want ${formatBlockId(blockId)}, got ${formatBlockId(commit.blockId)}`,
      );
    }
    // Total power is capped at MaxInt64/8, so doubling cannot overflow (validation.go).
    const needed = (this.#total * 2n) / 3n;
    let tallied = 0n;
    commit.signatures.forEach((sig, idx) => {
      if (sig.blockIdFlag === BLOCK_ID_FLAG.absent) return;
      const problem = commitSigProblem(sig);
      if (problem)
        throw new CommitVerificationError(F.invalidSignature, `invalid signatures at index ${idx}: ${problem}`);
      const val = this.#vals[idx] as Validator;
      if (!bytesEqual(val.address, sig.validatorAddress)) {
        throw new CommitVerificationError(
          F.addressMismatch,
          `validator address mismatch at index ${idx}: expected ${bytesToHexUpper(val.address)}, got ${bytesToHexUpper(sig.validatorAddress)}`,
        );
      }
      const signBytes = voteSignBytesFor(chainId, commitSigToVote(commit, idx), sig.signature);
      if (!verifySignature(val.pubKey, signBytes, sig.signature)) {
        throw new CommitVerificationError(
          F.wrongSignature,
          `wrong signature (#${idx}): ${bytesToHexUpper(sig.signature)}`,
        );
      }
      if (sig.blockIdFlag === BLOCK_ID_FLAG.commit) tallied += val.votingPower;
    });
    if (tallied <= needed) {
      throw new CommitVerificationError(
        F.notEnoughPower,
        `invalid commit -- insufficient voting power: got ${tallied}, needed more than ${needed}`,
      );
    }
  }

  // ---- internals (validator_set.go) --------------------------------------------------------------

  #index(): Map<string, number> {
    if (!this.#indexByAddress) {
      const m = new Map<string, number>();
      this.#vals.forEach((v, i) => {
        m.set(bytesToHex(v.address), i);
      });
      this.#indexByAddress = m;
    }
    return this.#indexByAddress;
  }

  #recomputeTotal(): void {
    let sum = 0n;
    for (const v of this.#vals) sum = clip(sum + v.votingPower);
    this.#total = sum;
  }

  #findProposer(): Validator | undefined {
    let p: Validator | undefined;
    for (const v of this.#vals) p = morePriority(p, v);
    return p;
  }

  #rescalePriorities(diffMax: bigint): void {
    if (diffMax <= 0n) return;
    let max = INT64_MIN;
    let min = INT64_MAX;
    for (const v of this.#vals) {
      if (v.proposerPriority < min) min = v.proposerPriority;
      if (v.proposerPriority > max) max = v.proposerPriority;
    }
    // computeMaxMinPriorityDiff and the ratio use wrapping int64 arithmetic in Go.
    let diff = BigInt.asIntN(64, max - min);
    if (diff < 0n) diff = BigInt.asIntN(64, -diff);
    const ratio = BigInt.asIntN(64, diff + diffMax - 1n) / diffMax;
    if (diff > diffMax && ratio !== 0n) {
      // BigInt division truncates toward zero, like Go's.
      for (const v of this.#vals) v.proposerPriority /= ratio;
    }
  }

  #shiftByAvgProposerPriority(): void {
    const n = BigInt(this.#vals.length);
    let sum = 0n;
    for (const v of this.#vals) sum += v.proposerPriority;
    // big.Int.Div is Euclidean: the floor for a positive divisor.
    let avg = sum / n;
    if (sum % n < 0n) avg -= 1n;
    for (const v of this.#vals) v.proposerPriority = clip(v.proposerPriority - avg);
  }

  #incrementOnce(): Validator {
    let most: Validator | undefined;
    for (const v of this.#vals) {
      v.proposerPriority = clip(v.proposerPriority + v.votingPower);
      most = morePriority(most, v);
    }
    const m = most as Validator;
    m.proposerPriority = clip(m.proposerPriority - this.#total);
    return m;
  }

  /** updateWithChangeSet(changes, allowDeletes): all checks first, so a failure changes nothing. */
  #applyChanges(changes: Validator[], allowDeletes: boolean): void {
    if (changes.length === 0) return;
    const sorted = [...changes].sort(byAddress);
    const updates: Validator[] = [];
    const deletes: Validator[] = [];
    let prev: Uint8Array | undefined;
    for (const c of sorted) {
      if (prev && bytesEqual(prev, c.address)) {
        throw new InvalidValidatorUpdateError(`duplicate entry ${bytesToHexUpper(c.address)} in validator changes`);
      }
      if (c.votingPower < 0n) {
        throw new InvalidValidatorUpdateError(`voting power can't be negative: ${c.votingPower}`);
      }
      if (c.votingPower > MAX_TOTAL_VOTING_POWER) {
        throw new InvalidValidatorUpdateError(
          `to prevent clipping/overflow, voting power can't be higher than ${MAX_TOTAL_VOTING_POWER}, got ${c.votingPower}`,
        );
      }
      (c.votingPower === 0n ? deletes : updates).push(c);
      prev = c.address;
    }
    if (!allowDeletes && deletes.length > 0) {
      throw new InvalidValidatorUpdateError(
        `cannot process validators with voting power 0: ${deletes.map((d) => bytesToHexUpper(d.address)).join(", ")}`,
      );
    }
    const newCount = updates.filter((u) => !this.hasAddress(u.address)).length;
    if (newCount === 0 && this.#vals.length === deletes.length) {
      throw new InvalidValidatorUpdateError("applying the validator changes would result in empty set");
    }
    let removedPower = 0n;
    for (const d of deletes) {
      const found = this.getByAddress(d.address);
      if (!found)
        throw new InvalidValidatorUpdateError(`failed to find validator ${bytesToHexUpper(d.address)} to remove`);
      removedPower += found.validator.votingPower;
    }
    // verifyUpdates: applying deltas in ascending order, the running total peaks at its final value.
    let tvpAfterUpdatesBeforeRemovals = this.#total;
    for (const u of updates) {
      tvpAfterUpdatesBeforeRemovals += u.votingPower - (this.getByAddress(u.address)?.validator.votingPower ?? 0n);
    }
    if (tvpAfterUpdatesBeforeRemovals - removedPower > MAX_TOTAL_VOTING_POWER) {
      throw new InvalidValidatorUpdateError(
        `total voting power of resulting valset exceeds max ${MAX_TOTAL_VOTING_POWER}`,
      );
    }

    // computeNewPriorities: newcomers start at -1.125 × the total so re-bonding cannot reset a low priority.
    const p = tvpAfterUpdatesBeforeRemovals;
    for (const u of updates) {
      const existing = this.getByAddress(u.address);
      u.proposerPriority = existing ? existing.validator.proposerPriority : -(p + (p >> 3n));
    }

    const byAddr = new Map<string, Validator>();
    for (const v of this.#vals) byAddr.set(bytesToHex(v.address), v);
    for (const u of updates) byAddr.set(bytesToHex(u.address), u);
    for (const d of deletes) byAddr.delete(bytesToHex(d.address));
    this.#vals = [...byAddr.values()];
    this.#indexByAddress = undefined;
    this.#hash = undefined;
    this.#recomputeTotal();

    this.#rescalePriorities(PRIORITY_WINDOW_SIZE_FACTOR * this.#total);
    this.#shiftByAvgProposerPriority();
    this.#vals.sort(bySetOrder);

    // Go keeps a pointer to the old proposer object; following it by address gives the same
    // validator (GetProposer is only read after the next increment in the block path).
    const old = this.#proposer;
    this.#proposer = old ? this.#vals.find((v) => bytesEqual(v.address, old.address)) : undefined;
  }
}

/**
 * tendermint.types.ValidatorSet bytes, as CometBFT stores a set (total_voting_power written as 0,
 * as ToProto does). An empty set has no proposer.
 */
export function encodeValidatorSet(vs: ValidatorSet): Uint8Array {
  const proposer = vs.getProposer();
  return encodeValidatorSetMessage(vs.validators, proposer);
}

export function decodeValidatorSet(bytes: Uint8Array): ValidatorSet {
  const { validators, proposerAddress } = decodeValidatorSetMessage(bytes);
  if (validators.length === 0) return ValidatorSet.empty();
  return ValidatorSet.restore(validators, proposerAddress);
}
