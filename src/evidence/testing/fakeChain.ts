import {
  addressFromPubKey,
  type BlockId,
  type ChainState,
  defaultConsensusParams,
  type Evidence,
  generateEd25519PrivKey,
  newDuplicateVoteEvidence,
  type PrivKey,
  pubKeyFromPrivKey,
  SIGNED_MSG_TYPE,
  signBytes,
  ValidatorSet,
  type Vote,
  voteSignBytes,
  zeroBlockId,
} from "../../types/index.js";
import { bytesEqual, EMPTY_BYTES } from "../../util/bytes.js";
import type { Timestamp } from "../../util/time.js";
import type { EvidenceBlockReader, EvidenceStateReader } from "../evidencePool.js";

/** Test support: a chain of `n` validators (power 10 each) with block times, no blocks. */

export const FAKE_CHAIN_ID = "evidence-test-chain";
export const T0: Timestamp = 1_700_000_000_000_000_000n;
const SECOND = 1_000_000_000n;

/** A vote (a prevote unless `type` says otherwise) for `blockId`, signed by `key` for `chainId`. */
export function signedVote(
  key: PrivKey,
  chainId: string,
  v: {
    height: number;
    blockId: BlockId;
    timestamp: Timestamp;
    validatorAddress: Uint8Array;
    validatorIndex: number;
    round?: number;
    type?: 1 | 2;
  },
): Vote {
  const vote: Vote = {
    type: v.type ?? SIGNED_MSG_TYPE.prevote,
    height: v.height,
    round: v.round ?? 0,
    blockId: v.blockId,
    timestamp: v.timestamp,
    validatorAddress: v.validatorAddress,
    validatorIndex: v.validatorIndex,
    signature: EMPTY_BYTES,
    extension: EMPTY_BYTES,
    extensionSignature: EMPTY_BYTES,
  };
  return { ...vote, signature: signBytes(key, voteSignBytes(chainId, vote)) };
}

export function fakeBlockId(tag: number): BlockId {
  return { hash: new Uint8Array(32).fill(tag), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(tag + 1) } };
}

export class FakeChain {
  readonly privKeys: PrivKey[];
  readonly valSet: ValidatorSet;
  state: ChainState;

  constructor(n = 4, seed = 40) {
    const keys = Array.from({ length: n }, (_, i) => generateEd25519PrivKey(new Uint8Array(32).fill(seed + i)));
    this.valSet = ValidatorSet.create(
      keys.map((k) => {
        const pubKey = pubKeyFromPrivKey(k);
        return { address: addressFromPubKey(pubKey), pubKey, votingPower: 10n, proposerPriority: 0n };
      }),
    );
    // privKeys[i] signs for valSet.validators[i] (the set is sorted).
    this.privKeys = this.valSet.validators.map((v) => {
      const k = keys.find((key) => bytesEqual(addressFromPubKey(pubKeyFromPrivKey(key)), v.address));
      if (k === undefined) throw new RangeError("validator without key");
      return k;
    });
    this.state = {
      chainId: FAKE_CHAIN_ID,
      initialHeight: 1,
      lastBlockHeight: 0,
      lastBlockId: zeroBlockId(),
      lastBlockTime: T0,
      nextValidators: this.valSet.copy(),
      validators: this.valSet.copy(),
      lastValidators: ValidatorSet.empty(),
      lastHeightValidatorsChanged: 1,
      consensusParams: defaultConsensusParams(),
      lastHeightConsensusParamsChanged: 1,
      lastResultsHash: EMPTY_BYTES,
      appHash: EMPTY_BYTES,
      appVersion: 0n,
    };
  }

  /** Block time of `height`: T0 + height seconds. */
  timeOf(height: number): Timestamp {
    return T0 + BigInt(height) * SECOND;
  }

  /** The state after block `height`. */
  stateAt(height: number): ChainState {
    return {
      ...this.state,
      lastBlockHeight: height,
      lastBlockTime: this.timeOf(height),
      lastValidators: this.valSet.copy(),
    };
  }

  /** Moves the chain to `height` and returns the new state. */
  advanceTo(height: number): ChainState {
    this.state = this.stateAt(height);
    return this.state;
  }

  readonly stateStore: EvidenceStateReader = {
    load: () => this.state,
    loadValidators: (height) => (height >= 1 && height <= this.state.lastBlockHeight + 2 ? this.valSet : undefined),
  };

  readonly blockStore: EvidenceBlockReader = {
    loadBlockMeta: (height) =>
      height >= 1 && height <= this.state.lastBlockHeight ? { header: { time: this.timeOf(height) } } : undefined,
  };

  /** A prevote (or `type`) of validator `i` for `blockId`, signed with its key unless `key` says otherwise. */
  vote(i: number, height: number, blockId: BlockId, opts: { round?: number; type?: 1 | 2; key?: PrivKey } = {}): Vote {
    const val = this.valSet.validators[i];
    const key = opts.key ?? this.privKeys[i];
    if (val === undefined || key === undefined) throw new RangeError(`no validator ${i}`);
    return signedVote(key, FAKE_CHAIN_ID, {
      height,
      blockId,
      timestamp: this.timeOf(height) + 500_000_000n,
      validatorAddress: val.address,
      validatorIndex: i,
      ...(opts.round === undefined ? {} : { round: opts.round }),
      ...(opts.type === undefined ? {} : { type: opts.type }),
    });
  }

  /** Valid DuplicateVoteEvidence against validator `i` at `height`. */
  evidence(i: number, height: number, tags: [number, number] = [1, 3]): Evidence {
    return newDuplicateVoteEvidence(
      this.vote(i, height, fakeBlockId(tags[0])),
      this.vote(i, height, fakeBlockId(tags[1])),
      this.timeOf(height),
      this.valSet,
    );
  }
}
