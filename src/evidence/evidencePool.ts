import type { KvStore, KvTable } from "../store/index.js";
import {
  type ChainState,
  decodeEvidence,
  type Evidence,
  encodeEvidence,
  hashEvidence,
  newDuplicateVoteEvidence,
  type ValidatorSet,
  type Vote,
  validateEvidenceBasic,
} from "../types/index.js";
import { bytesToHexUpper } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import { formatRfc3339Nano, type Timestamp } from "../util/time.js";
import { EvidencePoolNotReadyError, InvalidEvidenceSubmissionError, UnverifiableEvidenceError } from "./errors.js";
import { isEvidenceExpired, verifyDuplicateVote } from "./verifyDuplicateVote.js";

/** store/ StateStore, the parts the pool reads. */
export interface EvidenceStateReader {
  /** The state after the last committed block (undefined before the handshake saved one). */
  load(): ChainState | undefined;
  /** The validator set of block `height`. */
  loadValidators(height: number): ValidatorSet | undefined;
}

/** store/ BlockStore, the part the pool reads: a block's time. */
export interface EvidenceBlockReader {
  loadBlockMeta(height: number): { header: { time: Timestamp } } | undefined;
}

export interface EvidencePoolDeps {
  /** The pool keeps its records in this store's "evidence" table. */
  db: KvStore;
  stateStore: EvidenceStateReader;
  blockStore: EvidenceBlockReader;
  log: Logger;
}

/** Table holding pending and committed evidence (CometBFT's evidence.db). */
export const EVIDENCE_TABLE = "evidence";

// evidence/pool.go key layout: one prefix byte, then "<height as %016X>/<hash as %X>" so keys sort by height.
const KEY_PREFIX = { committed: 0x00, pending: 0x01 } as const;

interface PendingEntry {
  key: string;
  evidence: Evidence;
  /** tendermint.types.Evidence bytes (what is stored and what EvidenceList sizes count). */
  bytes: Uint8Array;
}

function evidenceHeight(ev: Evidence): number {
  return ev.voteA.height;
}

/** The key suffix shared by the pending and committed records: `%016X/%X` of height and hash. */
function keySuffix(ev: Evidence): string {
  return `${evidenceHeight(ev).toString(16).toUpperCase().padStart(16, "0")}/${bytesToHexUpper(hashEvidence(ev))}`;
}

function dbKey(prefix: number, suffix: string): Uint8Array {
  const out = new Uint8Array(1 + suffix.length);
  out[0] = prefix;
  for (let i = 0; i < suffix.length; i++) out[i + 1] = suffix.charCodeAt(i);
  return out;
}

function varintSize(n: number): number {
  let size = 1;
  for (let v = n; v >= 128; v = Math.floor(v / 128)) size++;
  return size;
}

/** Size of one `repeated Evidence evidence = 1` entry inside an EvidenceList (tag + length + bytes). */
function listEntrySize(bytes: Uint8Array): number {
  return 1 + varintSize(bytes.length) + bytes.length;
}

/** Committed record value: the evidence height and time (16 bytes), enough to prune it once expired. */
function encodeCommittedRecord(height: number, time: Timestamp): Uint8Array {
  const out = new Uint8Array(16);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(height));
  view.setBigInt64(8, time);
  return out;
}

function decodeCommittedRecord(value: Uint8Array): { height: number; time: Timestamp } | undefined {
  if (value.length !== 16) return undefined;
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  return { height: Number(view.getBigUint64(0)), time: view.getBigInt64(8) };
}

/**
 * The evidence pool (CometBFT evidence/pool.go): verified duplicate-vote evidence waiting to be
 * proposed (pending) and the evidence already committed in blocks, both persisted. Consensus reports
 * conflicting votes here; they become evidence once their height is committed (update). The block
 * executor takes pending evidence for proposals, checks the evidence of incoming blocks and tells
 * the pool what each committed block carried. The reactor gossips what is added.
 *
 * In-memory pending set and state change synchronously; the records follow in one serialized
 * chain of store transactions.
 */
export class EvidencePool {
  readonly #deps: EvidencePoolDeps;
  readonly #table: KvTable;
  /** Pending evidence by key suffix. */
  readonly #pending = new Map<string, PendingEntry>();
  /** Committed keys whose record is still being written. */
  readonly #committing = new Set<string>();
  /**
   * Whether committed-evidence records may be stored: false once a prune found none (and none was
   * being written), true again when one is written. Almost every chain has none, and each block's
   * prune then skips the range scan of them.
   */
  #committedMayExist = true;
  /** Conflicting votes from consensus, awaiting the commit of their height. */
  #buffer: { voteA: Vote; voteB: Vote }[] = [];
  #state: ChainState | undefined;
  readonly #listeners = new Set<(ev: Evidence) => void>();
  #writes: Promise<void> = Promise.resolve();

  constructor(deps: EvidencePoolDeps) {
    this.#deps = deps;
    this.#table = deps.db.table(EVIDENCE_TABLE);
    this.#state = deps.stateStore.load();
    for (const { key, value } of this.#table.range({ prefix: Uint8Array.of(KEY_PREFIX.pending) })) {
      const suffix = Buffer.from(key.subarray(1)).toString("latin1");
      try {
        this.#pending.set(suffix, { key: suffix, evidence: decodeEvidence(value), bytes: value });
      } catch (err) {
        deps.log.error({ err, key: suffix }, "dropping undecodable pending evidence record");
        this.#write(() => this.#table.remove(key)).catch((e: unknown) =>
          deps.log.error({ err: e }, "unable to remove an undecodable pending evidence record"),
        );
      }
    }
    // NewPool: evidence that expired while the node was down is dropped before it can be proposed.
    if (this.#state !== undefined) this.#pruneExpired(this.#state);
  }

  /** Number of pending pieces of evidence. */
  size(): number {
    return this.#pending.size;
  }

  /** The pool's chain state (the last one passed to update, else the stored one). */
  state(): ChainState | undefined {
    this.#state ??= this.#deps.stateStore.load();
    return this.#state;
  }

  /** Pending evidence, ordered by height then hash (the order it is proposed in). */
  pendingList(): Evidence[] {
    return this.#sortedPending().map((e) => e.evidence);
  }

  /**
   * PendingEvidence: pending evidence, oldest first, as long as the EvidenceList proto holding it
   * stays within `maxBytes` (-1 for no cap); `bytes` is that list's size.
   */
  pendingEvidence(maxBytes: number): { evidence: Evidence[]; bytes: number } {
    const evidence: Evidence[] = [];
    let bytes = 0;
    for (const entry of this.#sortedPending()) {
      const next = bytes + listEntrySize(entry.bytes);
      if (maxBytes !== -1 && next > maxBytes) break;
      bytes = next;
      evidence.push(entry.evidence);
    }
    return { evidence, bytes };
  }

  isPending(ev: Evidence): boolean {
    return this.#pending.has(keySuffix(ev));
  }

  isCommitted(ev: Evidence): boolean {
    return this.#isCommittedKey(keySuffix(ev));
  }

  /** Calls `cb` with each piece of evidence added from a peer, RPC or consensus; returns the unsubscribe function. */
  onEvidenceAdded(cb: (ev: Evidence) => void): () => void {
    this.#listeners.add(cb);
    return () => {
      this.#listeners.delete(cb);
    };
  }

  /** types.Evidence.ValidateBasic (for broadcast_evidence). Throws InvalidEvidenceError from types/. */
  validateBasic(ev: Evidence): void {
    validateEvidenceBasic(ev);
  }

  /** Evidence.Hash(). */
  hash(ev: Evidence): Uint8Array {
    return hashEvidence(ev);
  }

  /**
   * ReportConflictingVotes (consensus EvidenceReporter): buffers the pair, unverified; it becomes
   * DuplicateVoteEvidence at the update for its height, when that block's time is known.
   */
  reportConflictingVotes(voteA: Vote, voteB: Vote): void {
    this.#buffer.push({ voteA, voteB });
  }

  /**
   * AddEvidence: ignores evidence already pending or committed; otherwise verifies it against the
   * chain state and stores it as pending, then tells the listeners. Throws
   * InvalidEvidenceSubmissionError for evidence that does not verify, UnverifiableEvidenceError for
   * evidence above the committed height.
   */
  async addEvidence(ev: Evidence): Promise<void> {
    try {
      validateEvidenceBasic(ev);
    } catch (err) {
      throw new InvalidEvidenceSubmissionError(ev, (err as Error).message, { cause: err });
    }
    const key = keySuffix(ev);
    if (this.#pending.has(key)) {
      this.#deps.log.debug({ evidence: key }, "evidence already pending, ignoring this one");
      return;
    }
    if (this.#isCommittedKey(key)) {
      // The sender may just be behind: not its fault.
      this.#deps.log.debug({ evidence: key }, "evidence was already committed, ignoring this one");
      return;
    }
    const state = this.state();
    if (state === undefined) throw new EvidencePoolNotReadyError();
    if (evidenceHeight(ev) > state.lastBlockHeight) {
      throw new UnverifiableEvidenceError(evidenceHeight(ev), state.lastBlockHeight);
    }
    this.#verify(ev, state);
    await this.#addPending(ev, key);
    this.#deps.log.info({ evidence: key }, "verified new evidence of byzantine behavior");
    this.#notify([ev]);
  }

  /**
   * CheckEvidence (block validation against `state`): each piece not already pending must verify
   * and not be committed (it is then kept as pending), and no piece may appear twice. Throws
   * InvalidEvidenceSubmissionError.
   */
  checkEvidence(list: readonly Evidence[], state: ChainState): void {
    const seen = new Set<string>();
    for (const ev of list) {
      const key = keySuffix(ev);
      if (!this.#pending.has(key)) {
        if (this.#isCommittedKey(key)) throw new InvalidEvidenceSubmissionError(ev, "evidence was already committed");
        this.#verify(ev, state);
        this.#addPending(ev, key).catch((err: unknown) => {
          this.#deps.log.error({ err, evidence: key }, "can't add evidence to pending list");
        });
      }
      if (seen.has(key)) throw new InvalidEvidenceSubmissionError(ev, "duplicate evidence");
      seen.add(key);
    }
  }

  /**
   * Update, after the block at state.lastBlockHeight is committed: forms evidence from buffered
   * conflicting votes, adopts the state, moves the block's evidence from pending to committed and
   * drops expired evidence. Resolves once the records are written.
   */
  async update(state: ChainState, committed: readonly Evidence[]): Promise<void> {
    const prev = this.#state;
    if (prev !== undefined && state.lastBlockHeight <= prev.lastBlockHeight) {
      this.#deps.log.error(
        { height: state.lastBlockHeight, previous: prev.lastBlockHeight },
        "evidence pool update with a state that is not newer than the pool's",
      );
    }
    const formed = this.#processConsensusBuffer(state);
    if (prev === undefined || state.lastBlockHeight > prev.lastBlockHeight) this.#state = state;
    this.#markCommitted(committed);
    this.#pruneExpired(this.#state ?? state);
    await this.#writes;
    this.#notify(formed);
  }

  /**
   * Dev chains (evm_revert, hardhat_reset): adopts the rolled-back state, so the heights above it
   * that are made again count as newer. A dev chain has one validator: no evidence can exist.
   */
  rollbackTo(state: ChainState): void {
    this.#state = state;
  }

  /** Resolves once every record write queued so far is done (tests, shutdown). */
  async flush(): Promise<void> {
    await this.#writes;
  }

  #sortedPending(): PendingEntry[] {
    // Suffixes are ASCII, so string order is the store's byte order.
    return [...this.#pending.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  #isCommittedKey(key: string): boolean {
    return this.#committing.has(key) || this.#table.get(dbKey(KEY_PREFIX.committed, key)) !== undefined;
  }

  /** evidence/verify.go verify: block time, age, then the duplicate-vote checks at the evidence height. */
  #verify(ev: Evidence, state: ChainState): void {
    const height = evidenceHeight(ev);
    const meta = this.#deps.blockStore.loadBlockMeta(height);
    if (meta === undefined) throw new InvalidEvidenceSubmissionError(ev, `don't have header #${height}`);
    const evTime = meta.header.time;
    if (ev.timestamp !== evTime) {
      throw new InvalidEvidenceSubmissionError(
        ev,
        `evidence has a different time to the block it is associated with (${formatRfc3339Nano(ev.timestamp)} != ${formatRfc3339Nano(evTime)})`,
      );
    }
    const params = state.consensusParams.evidence;
    if (isEvidenceExpired(state.lastBlockHeight, state.lastBlockTime, height, evTime, params)) {
      throw new InvalidEvidenceSubmissionError(
        ev,
        `evidence from height ${height} (created at: ${formatRfc3339Nano(evTime)}) is too old; min height is ${BigInt(state.lastBlockHeight) - params.maxAgeNumBlocks} and evidence can not be older than ${formatRfc3339Nano(state.lastBlockTime + params.maxAgeDurationNs)}`,
      );
    }
    const valSet = this.#deps.stateStore.loadValidators(height);
    if (valSet === undefined) {
      throw new InvalidEvidenceSubmissionError(ev, `could not load the validator set of height ${height}`);
    }
    verifyDuplicateVote(ev, state.chainId, valSet);
  }

  #addPending(ev: Evidence, key: string): Promise<void> {
    const bytes = encodeEvidence(ev);
    this.#pending.set(key, { key, evidence: ev, bytes });
    return this.#write(() => this.#table.put(dbKey(KEY_PREFIX.pending, key), bytes));
  }

  /** processConsensusBuffer: votes at or below the committed height become evidence; later ones wait. */
  #processConsensusBuffer(state: ChainState): Evidence[] {
    const formed: Evidence[] = [];
    const waiting: { voteA: Vote; voteB: Vote }[] = [];
    for (const pair of this.#buffer) {
      const height = pair.voteA.height;
      let valSet: ValidatorSet | undefined;
      let time: Timestamp | undefined;
      if (height > state.lastBlockHeight) {
        waiting.push(pair);
        continue;
      }
      if (height === state.lastBlockHeight) {
        valSet = state.lastValidators;
        time = state.lastBlockTime;
      } else {
        valSet = this.#deps.stateStore.loadValidators(height);
        time = this.#deps.blockStore.loadBlockMeta(height)?.header.time;
      }
      if (valSet === undefined || time === undefined) {
        this.#deps.log.error({ height }, "failed to load the validator set or block time for conflicting votes");
        continue;
      }
      let ev: Evidence;
      try {
        ev = newDuplicateVoteEvidence(pair.voteA, pair.voteB, time, valSet);
      } catch (err) {
        this.#deps.log.error({ err, height }, "error in generating evidence from votes");
        continue;
      }
      const key = keySuffix(ev);
      if (this.#pending.has(key) || this.#isCommittedKey(key)) continue;
      this.#addPending(ev, key).catch((err: unknown) => {
        this.#deps.log.error({ err, evidence: key }, "failed to flush evidence from consensus buffer to pending list");
      });
      this.#deps.log.info({ evidence: key, height }, "verified new evidence of byzantine behavior");
      formed.push(ev);
    }
    this.#buffer = waiting;
    return formed;
  }

  #markCommitted(list: readonly Evidence[]): void {
    if (list.length === 0) return;
    const records: { key: string; value: Uint8Array }[] = [];
    this.#committedMayExist = true;
    for (const ev of list) {
      const key = keySuffix(ev);
      this.#pending.delete(key);
      this.#committing.add(key);
      records.push({ key, value: encodeCommittedRecord(evidenceHeight(ev), ev.timestamp) });
    }
    const done = this.#write(() => {
      for (const r of records) {
        this.#table.remove(dbKey(KEY_PREFIX.pending, r.key));
        this.#table.put(dbKey(KEY_PREFIX.committed, r.key), r.value);
      }
    });
    done
      .catch((err: unknown) => this.#deps.log.error({ err }, "unable to save committed evidence"))
      .finally(() => {
        for (const r of records) this.#committing.delete(r.key);
      });
  }

  /**
   * removeExpiredPendingEvidence, in height order up to the first piece still valid. Committed
   * records are pruned the same way (CometBFT keeps them forever): expired evidence fails
   * verification anyway, so the record is no longer needed to refuse it.
   */
  #pruneExpired(state: ChainState): void {
    const params = state.consensusParams.evidence;
    const expired = (height: number, time: Timestamp) =>
      isEvidenceExpired(state.lastBlockHeight, state.lastBlockTime, height, time, params);
    const removals: Uint8Array[] = [];
    for (const entry of this.#sortedPending()) {
      if (!expired(evidenceHeight(entry.evidence), entry.evidence.timestamp)) break;
      this.#pending.delete(entry.key);
      removals.push(dbKey(KEY_PREFIX.pending, entry.key));
    }
    if (this.#committedMayExist) {
      let seen = 0;
      for (const { key, value } of this.#table.range({ prefix: Uint8Array.of(KEY_PREFIX.committed) })) {
        seen++;
        const rec = decodeCommittedRecord(value);
        if (rec !== undefined && !expired(rec.height, rec.time)) break;
        removals.push(key.slice());
      }
      if (seen === 0 && this.#committing.size === 0) this.#committedMayExist = false;
    }
    if (removals.length === 0) return;
    this.#write(() => {
      for (const k of removals) this.#table.remove(k);
    }).catch((err: unknown) => this.#deps.log.error({ err }, "unable to prune expired evidence"));
  }

  /** Queues a store transaction after the ones already queued; the returned promise reports its failure. */
  #write(fn: () => void): Promise<void> {
    const p = this.#writes.then(() => this.#deps.db.transaction(fn));
    this.#writes = p.catch(() => {});
    return p;
  }

  #notify(list: readonly Evidence[]): void {
    for (const ev of list) {
      for (const cb of this.#listeners) {
        try {
          cb(ev);
        } catch (err) {
          this.#deps.log.error({ err }, "evidence listener failed");
        }
      }
    }
  }
}
