import {
  BitArray,
  BLOCK_ID_FLAG,
  type BlockId,
  blockIdEquals,
  blockIdKey,
  type Commit,
  type CommitSig,
  commitSigToVote,
  formatVote,
  isZeroBlockId,
  SIGNED_MSG_TYPE,
  type ValidatorSet,
  type Vote,
  type VoteType,
  verifyVote,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper, EMPTY_BYTES } from "../util/bytes.js";
import { GO_ZERO_TIME } from "../util/time.js";
import {
  ConflictingPeerMaj23Error,
  ConflictingVoteError,
  InvalidVoteError,
  NonDeterministicSignatureError,
} from "./errors.js";

/** Votes of one validator set for one block id (types.blockVotes). */
class BlockVotes {
  peerMaj23: boolean;
  readonly bitArray: BitArray;
  readonly votes: (Vote | undefined)[];
  sum = 0n;
  constructor(peerMaj23: boolean, size: number) {
    this.peerMaj23 = peerMaj23;
    this.bitArray = new BitArray(size);
    this.votes = new Array<Vote | undefined>(size).fill(undefined);
  }
  add(vote: Vote, power: bigint): void {
    if (this.votes[vote.validatorIndex] === undefined) {
      this.bitArray.set(vote.validatorIndex, true);
      this.votes[vote.validatorIndex] = vote;
      this.sum += power;
    }
  }
}

/** A read-only snapshot of a vote set, what the dump renders (rpc/comet VoteSetView). */
export interface VoteSetView {
  /** One slot per validator, in validator-index order; undefined where no vote has arrived. */
  readonly votes: readonly (Vote | undefined)[];
  /** Voting power of every received vote, whatever block it is for (nil votes count). */
  readonly sum: bigint;
  readonly totalVotingPower: bigint;
  /** Peer ID → the +2/3 block ID that peer claimed. */
  readonly peerMaj23s: ReadonlyMap<string, BlockId>;
}

/**
 * The votes of one (height, round, type) over a validator set (CometBFT types.VoteSet): signature
 * checks, duplicates, conflicting votes (returned as evidence material), per-block tallies and the
 * first +2/3 majority. Conflicting votes are only tracked for blocks a peer claimed +2/3 for, which
 * keeps memory bounded.
 */
export class VoteSet {
  readonly chainId: string;
  readonly height: number;
  readonly round: number;
  readonly type: VoteType;
  readonly valSet: ValidatorSet;
  readonly #votesBitArray: BitArray;
  readonly #votes: (Vote | undefined)[];
  #votedSum = 0n;
  #maj23: BlockId | undefined;
  readonly #votesByBlock = new Map<string, BlockVotes>();
  readonly #peerMaj23Claims = new Map<string, BlockId>();

  constructor(chainId: string, height: number, round: number, type: VoteType, valSet: ValidatorSet) {
    if (height === 0) throw new InvalidVoteError("cannot make a VoteSet for height 0. Heights start at 1");
    this.chainId = chainId;
    this.height = height;
    this.round = round;
    this.type = type;
    this.valSet = valSet;
    this.#votesBitArray = new BitArray(valSet.size());
    this.#votes = new Array<Vote | undefined>(valSet.size()).fill(undefined);
  }

  /** Rebuilds the precommit set a commit stands for (Commit.ToVoteSet); signatures are verified. */
  static fromCommit(chainId: string, commit: Commit, valSet: ValidatorSet): VoteSet {
    const vs = new VoteSet(chainId, commit.height, commit.round, SIGNED_MSG_TYPE.precommit, valSet);
    commit.signatures.forEach((sig, i) => {
      if (sig.blockIdFlag === BLOCK_ID_FLAG.absent) return;
      vs.addVote(commitSigToVote(commit, i));
    });
    return vs;
  }

  size(): number {
    return this.#votes.length;
  }

  /**
   * Adds a signed vote. Returns true when it was added, false for an exact duplicate. Throws
   * InvalidVoteError (wrong step, unknown validator, bad signature), NonDeterministicSignatureError,
   * or ConflictingVoteError (with `added` true when a peer's +2/3 claim made the vote count).
   */
  addVote(vote: Vote): boolean {
    const index = vote.validatorIndex;
    if (index < 0 || !Number.isInteger(index))
      throw new InvalidVoteError(`invalid validator index ${index}: index < 0`);
    if (vote.validatorAddress.length === 0) throw new InvalidVoteError("invalid validator address: empty address");
    if (vote.height !== this.height || vote.round !== this.round || vote.type !== this.type) {
      throw new InvalidVoteError(
        `expected ${this.height}/${this.round}/${this.type}, but got ${vote.height}/${vote.round}/${vote.type}: unexpected step`,
      );
    }
    const val = this.valSet.getByIndex(index);
    if (val === undefined) {
      throw new InvalidVoteError(`cannot find validator ${index} in valSet of size ${this.valSet.size()}`);
    }
    if (!bytesEqual(vote.validatorAddress, val.address)) {
      throw new InvalidVoteError(
        `vote.ValidatorAddress (${bytesToHexUpper(vote.validatorAddress)}) does not match address (${bytesToHexUpper(val.address)}) for vote.ValidatorIndex (${index}). Ensure the genesis file is correct across all validators`,
      );
    }
    const key = blockIdKey(vote.blockId);
    const existing = this.#getVote(index, key);
    if (existing !== undefined) {
      if (bytesEqual(existing.signature, vote.signature)) return false;
      throw new NonDeterministicSignatureError(
        `existing vote: ${formatVote(existing)}; new vote: ${formatVote(vote)}: non-deterministic signature`,
      );
    }
    if (!verifyVote(this.chainId, vote, val.pubKey)) {
      throw new InvalidVoteError(`failed to verify vote with ChainID ${this.chainId}: invalid signature`);
    }
    if (vote.extension.length > 0 || vote.extensionSignature.length > 0) {
      throw new InvalidVoteError(
        `unexpected vote extension data present in vote; ext_len ${vote.extension.length}, sig_len ${vote.extensionSignature.length}`,
      );
    }
    return this.#addVerifiedVote(vote, key, val.votingPower);
  }

  #getVote(index: number, key: string): Vote | undefined {
    const existing = this.#votes[index];
    if (existing !== undefined && blockIdKey(existing.blockId) === key) return existing;
    return this.#votesByBlock.get(key)?.votes[index];
  }

  #addVerifiedVote(vote: Vote, key: string, power: bigint): boolean {
    const index = vote.validatorIndex;
    const existing = this.#votes[index];
    let conflicting: Vote | undefined;
    if (existing !== undefined) {
      conflicting = existing;
      // Replace the canonical vote only when the new one is for the +2/3 block.
      if (this.#maj23 !== undefined && blockIdKey(this.#maj23) === key) {
        this.#votes[index] = vote;
        this.#votesBitArray.set(index, true);
      }
    } else {
      this.#votes[index] = vote;
      this.#votesBitArray.set(index, true);
      this.#votedSum += power;
    }

    let byBlock = this.#votesByBlock.get(key);
    if (byBlock !== undefined) {
      if (conflicting !== undefined && !byBlock.peerMaj23) throw new ConflictingVoteError(conflicting, vote, false);
    } else {
      if (conflicting !== undefined) throw new ConflictingVoteError(conflicting, vote, false);
      byBlock = new BlockVotes(false, this.valSet.size());
      this.#votesByBlock.set(key, byBlock);
    }

    const before = byBlock.sum;
    const quorum = (this.valSet.totalVotingPower() * 2n) / 3n + 1n;
    byBlock.add(vote, power);
    if (before < quorum && quorum <= byBlock.sum && this.#maj23 === undefined) {
      this.#maj23 = vote.blockId;
      byBlock.votes.forEach((v, i) => {
        if (v !== undefined) this.#votes[i] = v;
      });
    }
    if (conflicting !== undefined) throw new ConflictingVoteError(conflicting, vote, true);
    return true;
  }

  /** Records that `peerId` claims +2/3 for `blockId`, so conflicting votes for it get tracked. */
  setPeerMaj23(peerId: string, blockId: BlockId): void {
    const existing = this.#peerMaj23Claims.get(peerId);
    if (existing !== undefined) {
      if (blockIdEquals(existing, blockId)) return;
      throw new ConflictingPeerMaj23Error(
        `setPeerMaj23: received conflicting blockID from peer ${peerId}. Ignore the claim; the peer may be faulty`,
      );
    }
    this.#peerMaj23Claims.set(peerId, blockId);
    const key = blockIdKey(blockId);
    const byBlock = this.#votesByBlock.get(key);
    if (byBlock !== undefined) byBlock.peerMaj23 = true;
    else this.#votesByBlock.set(key, new BlockVotes(true, this.valSet.size()));
  }

  peerMaj23s(): ReadonlyMap<string, BlockId> {
    return new Map(this.#peerMaj23Claims);
  }

  getByIndex(index: number): Vote | undefined {
    return this.#votes[index];
  }

  getByAddress(address: Uint8Array): Vote | undefined {
    const found = this.valSet.getByAddress(address);
    return found === undefined ? undefined : this.#votes[found.index];
  }

  /** The canonical votes (one per validator that voted), in index order. */
  list(): Vote[] {
    return this.#votes.filter((v): v is Vote => v !== undefined);
  }

  bitArray(): BitArray {
    return this.#votesBitArray.copy();
  }

  bitArrayByBlockId(blockId: BlockId): BitArray | undefined {
    return this.#votesByBlock.get(blockIdKey(blockId))?.bitArray.copy();
  }

  /** Voting power of all received votes (conflicts counted once). */
  sum(): bigint {
    return this.#votedSum;
  }

  /** Voting power per block id seen (nil votes under the zero block id). */
  tallies(): { blockId: BlockId; sum: bigint }[] {
    const out: { blockId: BlockId; sum: bigint }[] = [];
    for (const bv of this.#votesByBlock.values()) {
      const v = bv.votes.find((x) => x !== undefined);
      if (v !== undefined) out.push({ blockId: v.blockId, sum: bv.sum });
    }
    return out;
  }

  hasTwoThirdsMajority(): boolean {
    return this.#maj23 !== undefined;
  }

  /** The block id (possibly the zero id = nil) that first got +2/3, if any. */
  twoThirdsMajority(): BlockId | undefined {
    return this.#maj23;
  }

  isCommit(): boolean {
    return this.type === SIGNED_MSG_TYPE.precommit && this.#maj23 !== undefined;
  }

  /** More than 2/3 of the power voted, for anything. */
  hasTwoThirdsAny(): boolean {
    return this.#votedSum > (this.valSet.totalVotingPower() * 2n) / 3n;
  }

  hasAll(): boolean {
    return this.#votedSum === this.valSet.totalVotingPower();
  }

  /** The commit for the +2/3 block (VoteSet.MakeExtendedCommit().ToCommit()). */
  makeCommit(): Commit {
    const maj23 = this.#maj23;
    if (this.type !== SIGNED_MSG_TYPE.precommit || maj23 === undefined || isZeroBlockId(maj23)) {
      throw new InvalidVoteError("cannot make a commit: the vote set has no +2/3 precommits for a block");
    }
    const signatures: CommitSig[] = this.#votes.map((v) => {
      if (v === undefined) return absentCommitSig();
      if (isZeroBlockId(v.blockId)) {
        return {
          blockIdFlag: BLOCK_ID_FLAG.nil,
          validatorAddress: v.validatorAddress,
          timestamp: v.timestamp,
          signature: v.signature,
        };
      }
      if (!blockIdEquals(v.blockId, maj23)) return absentCommitSig();
      return {
        blockIdFlag: BLOCK_ID_FLAG.commit,
        validatorAddress: v.validatorAddress,
        timestamp: v.timestamp,
        signature: v.signature,
      };
    });
    return { height: this.height, round: this.round, blockId: maj23, signatures };
  }

  view(): VoteSetView {
    return {
      votes: [...this.#votes],
      sum: this.#votedSum,
      totalVotingPower: this.valSet.totalVotingPower(),
      peerMaj23s: this.peerMaj23s(),
    };
  }
}

function absentCommitSig(): CommitSig {
  return {
    blockIdFlag: BLOCK_ID_FLAG.absent,
    validatorAddress: EMPTY_BYTES,
    timestamp: GO_ZERO_TIME,
    signature: EMPTY_BYTES,
  };
}

/** `%.2f` of sum/total with Go's round-half-even. */
export function formatFraction(sum: bigint, total: bigint): string {
  if (total === 0n) return sum === 0n ? "NaN" : sum > 0n ? "+Inf" : "-Inf";
  const neg = sum < 0n !== total < 0n;
  const n = (sum < 0n ? -sum : sum) * 100n;
  const d = total < 0n ? -total : total;
  let q = n / d;
  const r2 = (n % d) * 2n;
  if (r2 > d || (r2 === d && q % 2n === 1n)) q += 1n;
  const frac = (q % 100n).toString().padStart(2, "0");
  return `${neg && q !== 0n ? "-" : ""}${q / 100n}.${frac}`;
}

/** libs/bits String() with the empty indent: `BA{4:xxx_}`. */
export function formatBitArray(bits: { readonly size: number; get(i: number): boolean }): string {
  let s = "";
  for (let i = 0; i < bits.size; i++) s += bits.get(i) ? "x" : "_";
  return `BA{${bits.size}:${s}}`;
}

/** VoteSet.BitArrayString: `BA{4:xxx_} 30/40 = 0.75`, sum = power of every received vote. */
export function formatVoteSetBitArray(vs: VoteSetView): string {
  const bits = vs.votes.map((v) => (v === undefined ? "_" : "x")).join("");
  return `BA{${vs.votes.length}:${bits}} ${vs.sum}/${vs.totalVotingPower} = ${formatFraction(vs.sum, vs.totalVotingPower)}`;
}

/** VoteSet.VoteStrings: Vote.String() per validator index, "nil-Vote" where none arrived. */
export function formatVoteSetVotes(vs: VoteSetView): string[] {
  return vs.votes.map((v) => (v === undefined ? "nil-Vote" : formatVote(v)));
}
