import {
  BLOCK_ID_FLAG,
  type Commit,
  commitSigToVote,
  headerHash,
  type ValidatorSet,
  verifySignature,
  voteSignBytes,
} from "../types/index.js";
import { bytesEqual, bytesToHexUpper } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import { type Timestamp, timestampFromMs } from "../util/time.js";
import { ConflictingHeadersError, LightClientError } from "./errors.js";
import type { LightBlock, LightProvider } from "./lightProvider.js";

/** Where verification starts (light.TrustOptions): a height and hash from a trusted source, and how long headers stay trusted. */
export interface TrustOptions {
  readonly height: number;
  readonly hash: Uint8Array;
  readonly periodMs: number;
}

/** light.DefaultTrustLevel: a header is trusted when validators we trust with more than 1/3 of the power signed it. */
const TRUST_NUMERATOR = 1n;
const TRUST_DENOMINATOR = 3n;
/** light.defaultMaxClockDrift. */
const MAX_CLOCK_DRIFT_NS = 10n * 1_000_000_000n;

/**
 * A light client (CometBFT light/client.go, in the parts state sync uses): it trusts the header at
 * the trust height when its hash is the configured one, then verifies a later height by skipping
 * verification (more than 1/3 of the trusted validators signed it, else bisect), an earlier one by
 * following LastBlockID hashes down, and checks each verified header against every witness (the
 * other RPC servers): one that differs stops state sync.
 */
export class LightClient {
  readonly #chainId: string;
  readonly #primary: LightProvider;
  #witnesses: LightProvider[];
  readonly #trust: TrustOptions;
  readonly #log: Logger;
  readonly #now: () => Timestamp;
  /** Verified light blocks by height. */
  readonly #trusted = new Map<number, LightBlock>();

  constructor(opts: {
    chainId: string;
    primary: LightProvider;
    witnesses: LightProvider[];
    trust: TrustOptions;
    log: Logger;
    now?: () => Timestamp;
  }) {
    this.#chainId = opts.chainId;
    this.#primary = opts.primary;
    this.#witnesses = [...opts.witnesses];
    this.#trust = opts.trust;
    this.#log = opts.log;
    this.#now = opts.now ?? (() => timestampFromMs(Date.now()));
  }

  /** Fetches and checks the trusted header (initializeWithTrustOptions), and compares it with the witnesses. */
  async initialize(): Promise<void> {
    if (this.#trusted.size > 0) return;
    if (this.#witnesses.length === 0)
      throw new LightClientError("no witnesses: state sync needs at least two rpc_servers");
    const lb = await this.#primary.lightBlock(this.#trust.height);
    const hash = this.#checkBasic(lb, this.#primary.address);
    if (!bytesEqual(hash, this.#trust.hash)) {
      throw new LightClientError(
        `expected header's hash ${bytesToHexUpper(this.#trust.hash)}, but got ${bytesToHexUpper(hash)} at trust height ${this.#trust.height}`,
      );
    }
    this.#checkNotExpired(lb);
    lb.validators.verifyCommit(this.#chainId, lb.commit.blockId, lb.header.height, lb.commit);
    await this.#compareWithWitnesses(lb, hash);
    this.#trusted.set(lb.header.height, lb);
  }

  /** The light block at `height`, verified from the trusted one and cross-checked with the witnesses. */
  async verifyLightBlockAtHeight(height: number): Promise<LightBlock> {
    await this.initialize();
    const known = this.#trusted.get(height);
    if (known !== undefined) return known;
    const heights = [...this.#trusted.keys()].sort((a, b) => a - b);
    const below = heights.filter((h) => h < height).pop();
    const lb = below !== undefined ? await this.#verifyForward(below, height) : await this.#verifyBackward(height);
    return lb;
  }

  /** Skipping verification with bisection (VerifyNonAdjacent / VerifyAdjacent). */
  async #verifyForward(fromHeight: number, target: number): Promise<LightBlock> {
    let trusted = this.#trusted.get(fromHeight) as LightBlock;
    const fetched = new Map<number, LightBlock>();
    let pivot = target;
    while (trusted.header.height < target) {
      let candidate = fetched.get(pivot);
      if (candidate === undefined) {
        candidate = await this.#primary.lightBlock(pivot);
        fetched.set(pivot, candidate);
      }
      this.#checkNotExpired(trusted);
      const hash = this.#checkBasic(candidate, this.#primary.address);
      if (candidate.header.time <= trusted.header.time) {
        throw new LightClientError(`header ${pivot}'s time is not after the trusted header ${trusted.header.height}'s`);
      }
      if (candidate.header.time > this.#now() + MAX_CLOCK_DRIFT_NS) {
        throw new LightClientError(`header ${pivot} is from the future`);
      }
      let trustedEnough: boolean;
      if (pivot === trusted.header.height + 1) {
        if (!bytesEqual(candidate.header.validatorsHash, trusted.header.nextValidatorsHash)) {
          throw new LightClientError(
            `header ${pivot}'s validators hash is not the next validators hash of header ${trusted.header.height}`,
          );
        }
        trustedEnough = true;
      } else {
        trustedEnough = trustedPowerSigned(this.#chainId, trusted.validators, candidate.commit);
      }
      if (!trustedEnough) {
        // Not enough of the validators we trust signed: verify a header halfway first.
        pivot = trusted.header.height + Math.floor((pivot - trusted.header.height) / 2);
        continue;
      }
      candidate.validators.verifyCommit(this.#chainId, candidate.commit.blockId, pivot, candidate.commit);
      await this.#compareWithWitnesses(candidate, hash);
      this.#trusted.set(pivot, candidate);
      this.#log.debug({ height: pivot }, "light client verified header");
      trusted = candidate;
      pivot = target;
    }
    return trusted;
  }

  /** Below every trusted header: each header's hash must be the LastBlockID of the one above (backwards verification). */
  async #verifyBackward(target: number): Promise<LightBlock> {
    const lowest = Math.min(...this.#trusted.keys());
    let above = this.#trusted.get(lowest) as LightBlock;
    this.#checkNotExpired(above);
    for (let h = lowest - 1; h >= target; h--) {
      const lb = await this.#primary.lightBlock(h);
      const hash = this.#checkBasic(lb, this.#primary.address);
      if (!bytesEqual(hash, above.header.lastBlockId.hash)) {
        throw new LightClientError(`header ${h}'s hash is not the LastBlockID of header ${h + 1}`);
      }
      lb.validators.verifyCommit(this.#chainId, lb.commit.blockId, h, lb.commit);
      if (h === target) await this.#compareWithWitnesses(lb, hash);
      this.#trusted.set(h, lb);
      above = lb;
    }
    return above;
  }

  /** The header's own consistency: chain, height, commit for its hash, validators matching its hash. Returns its hash. */
  #checkBasic(lb: LightBlock, server: string): Uint8Array {
    const { header, commit, validators } = lb;
    if (header.chainId !== this.#chainId) {
      throw new LightClientError(`RPC server ${server}: header is for chain ${header.chainId}, not ${this.#chainId}`);
    }
    const hash = headerHash(header);
    if (hash === undefined)
      throw new LightClientError(`RPC server ${server}: header ${header.height} cannot be hashed`);
    if (commit.height !== header.height || !bytesEqual(commit.blockId.hash, hash)) {
      throw new LightClientError(`RPC server ${server}: commit ${commit.height} does not sign header ${header.height}`);
    }
    if (!bytesEqual(validators.hash(), header.validatorsHash)) {
      throw new LightClientError(
        `RPC server ${server}: validator set of height ${header.height} does not match its header`,
      );
    }
    return hash;
  }

  #checkNotExpired(lb: LightBlock): void {
    const expires = lb.header.time + BigInt(this.#trust.periodMs) * 1_000_000n;
    if (expires <= this.#now()) {
      throw new LightClientError(
        `trusted header ${lb.header.height} has expired (trust_period ${this.#trust.periodMs} ms): pick a recent trust_height and trust_hash`,
      );
    }
  }

  /** light/detector.go: each witness must have the same header; unreachable witnesses are dropped. */
  async #compareWithWitnesses(lb: LightBlock, hash: Uint8Array): Promise<void> {
    const alive: LightProvider[] = [];
    for (const w of this.#witnesses) {
      let theirs: LightBlock;
      try {
        theirs = await w.lightBlock(lb.header.height);
      } catch (err) {
        this.#log.info({ witness: w.address, err: (err as Error).message }, "removing an unreachable witness");
        continue;
      }
      const theirHash = headerHash(theirs.header);
      if (theirHash === undefined || !bytesEqual(theirHash, hash)) {
        throw new ConflictingHeadersError(
          `witness ${w.address} has header ${bytesToHexUpper(theirHash ?? new Uint8Array(0))} at height ${lb.header.height}, the primary ${this.#primary.address} has ${bytesToHexUpper(hash)}`,
        );
      }
      alive.push(w);
    }
    this.#witnesses = alive;
    if (alive.length === 0) throw new LightClientError("no witnesses left: every other rpc_servers entry failed");
  }
}

/**
 * VerifyCommitLightTrusting: the validators we trust that signed the commit (looked up by address,
 * signatures checked) hold more than 1/3 of their total power.
 */
export function trustedPowerSigned(chainId: string, trusted: ValidatorSet, commit: Commit): boolean {
  const needed = (trusted.totalVotingPower() * TRUST_NUMERATOR) / TRUST_DENOMINATOR;
  let tallied = 0n;
  const seen = new Set<string>();
  for (let i = 0; i < commit.signatures.length; i++) {
    const sig = commit.signatures[i];
    if (sig === undefined || sig.blockIdFlag !== BLOCK_ID_FLAG.commit) continue;
    const found = trusted.getByAddress(sig.validatorAddress);
    if (found === undefined) continue;
    const key = bytesToHexUpper(sig.validatorAddress);
    if (seen.has(key)) return false;
    seen.add(key);
    if (!verifySignature(found.validator.pubKey, voteSignBytes(chainId, commitSigToVote(commit, i)), sig.signature)) {
      return false;
    }
    tallied += found.validator.votingPower;
    if (tallied > needed) return true;
  }
  return false;
}
