import { bytesEqual, bytesToHex, bytesToHexUpper } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import { GO_ZERO_TIME, type Timestamp } from "../util/time.js";
import { type BlockId, hashSizeProblem, validateBlockIdBasic } from "./blockId.js";
import { BLOCK_ID_FLAG, type Block, type BlockMeta, type Commit, type CommitSig, type Header } from "./blockTypes.js";
import { encodeBytesValue, encodeInt64Value, encodeStringValue, encodeTimestampMessage } from "./canonical.js";
import { validateCommitBasic } from "./commit.js";
import { evidenceHash, validateEvidenceBasic } from "./evidence.js";
import { ADDRESS_SIZE } from "./keys.js";
import { hashFromByteSlices, merkleInnerHash, merkleLeafHash, merkleSplitPoint, sha256 } from "./merkle.js";
import { PART_SIZE_BYTES, PartSet } from "./partSet.js";
import { encodeBlock, encodeBlockId, encodeCommitSig, encodeConsensusVersion } from "./protoCodec.js";
import type { ValidatorSet } from "./validatorSet.js";

// The declarations live in blockTypes.ts; rpc/comet imports some of them from this file by name.
export type { Block, BlockIdFlag, BlockMeta, Commit, CommitSig, Data, Header } from "./blockTypes.js";

/** version.BlockProtocol of CometBFT v0.38. */
export const BLOCK_PROTOCOL = 11n;

/** types.MaxChainIDLen. */
export const MAX_CHAIN_ID_LENGTH = 50;
/** types.MaxHeaderBytes: a soft bound (the app hash has no fixed size). */
export const MAX_HEADER_BYTES = 626;
/** types.MaxOverheadForBlock: proto overhead of a block besides header, commit and evidence. */
export const MAX_OVERHEAD_FOR_BLOCK = 11;
/** types.MaxCommitOverheadBytes / MaxCommitSigBytes. */
export const MAX_COMMIT_OVERHEAD_BYTES = 94;
export const MAX_COMMIT_SIG_BYTES = 109;

/** A block (or its header or last commit) fails types.Block.ValidateBasic, or BFT time cannot be computed. */
export class InvalidBlockError extends ComethError {}

// ---- hashes -----------------------------------------------------------------------------------

const HEADER_LEAVES = 14;

/** The 14 header hash leaves (docs/cometbft-hashes.md "Header hash"): single-field wrappers, empty for zero values. */
export function headerHashLeaves(h: Header): Uint8Array[] {
  const leaves: Uint8Array[] = [];
  for (let i = 0; i < HEADER_LEAVES; i++) leaves.push(headerHashLeaf(h, i));
  return leaves;
}

/** Leaf `i` of headerHashLeaves. */
function headerHashLeaf(h: Header, i: number): Uint8Array {
  switch (i) {
    case 0:
      return encodeConsensusVersion(h.version);
    case 1:
      return encodeStringValue(h.chainId);
    case 2:
      return encodeInt64Value(h.height);
    case 3:
      return encodeTimestampMessage(h.time);
    case 4:
      return encodeBlockId(h.lastBlockId);
    default:
      return encodeBytesValue((HEADER_BYTES_FIELDS[i - 5] as (h: Header) => Uint8Array)(h));
  }
}

function headerFieldRefs(h: Header): unknown[] {
  const id = h.lastBlockId;
  return [
    h.version.block,
    h.version.app,
    h.chainId,
    h.height,
    h.time,
    id.hash,
    id.partSetHeader.total,
    id.partSetHeader.hash,
    h.lastCommitHash,
    h.dataHash,
    h.validatorsHash,
    h.nextValidatorsHash,
    h.consensusHash,
    h.appHash,
    h.lastResultsHash,
    h.evidenceHash,
    h.proposerAddress,
  ];
}

// The header hash is asked for repeatedly per block (block id, proposal, commit checks, RPC).
// The cache remembers which values and byte arrays the hash was computed from, so assigning a
// field afterwards recomputes; writing into a hash's bytes in place is not detected.
const headerHashCache = new WeakMap<Header, { refs: unknown[]; hash: Uint8Array }>();

/** types.Header.Hash: merkle over the 14 leaves; undefined when validatorsHash is empty. */
export function headerHash(h: Header): Uint8Array | undefined {
  if (h.validatorsHash.length === 0) return undefined;
  const refs = headerFieldRefs(h);
  const cached = headerHashCache.get(h);
  if (cached?.refs.every((r, i) => r === refs[i])) return cached.hash.slice();
  const hash = headerRoot(h);
  headerHashCache.set(h, { refs, hash });
  return hash.slice();
}

/**
 * Consecutive headers of a chain share most leaves: the version, chain id, validator and consensus
 * hashes, the proposer, and on empty blocks the data, results and evidence hashes. A header's 14 leaf
 * hashes and 13 inner hashes (27 sha256) are each kept with the values they were computed from (byte
 * fields by value, copied) and reused for the next header hashed when those values are equal; an
 * inner node is reused when both its children were. The memo is of the last header hashed only
 * (consensus hashes each new block's header a few times, the RPC older ones: those recompute).
 */
interface LeafMemo {
  values: unknown[];
  hash: Uint8Array;
}
const leafMemos: (LeafMemo | undefined)[] = [];
const innerMemos = new Map<number, { left: Uint8Array; right: Uint8Array; hash: Uint8Array }>();

function headerLeafValues(h: Header, i: number): unknown[] {
  switch (i) {
    case 0:
      return [h.version.block, h.version.app];
    case 1:
      return [h.chainId];
    case 2:
      return [h.height];
    case 3:
      return [h.time];
    case 4:
      return [h.lastBlockId.hash, h.lastBlockId.partSetHeader.total, h.lastBlockId.partSetHeader.hash];
    default:
      return [(HEADER_BYTES_FIELDS[i - 5] as (h: Header) => Uint8Array)(h)];
  }
}

const HEADER_BYTES_FIELDS: ((h: Header) => Uint8Array)[] = [
  (h) => h.lastCommitHash,
  (h) => h.dataHash,
  (h) => h.validatorsHash,
  (h) => h.nextValidatorsHash,
  (h) => h.consensusHash,
  (h) => h.appHash,
  (h) => h.lastResultsHash,
  (h) => h.evidenceHash,
  (h) => h.proposerAddress,
];

function sameLeafValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (!(x instanceof Uint8Array && y instanceof Uint8Array && bytesEqual(x, y))) return false;
  }
  return true;
}

function headerLeafHash(h: Header, i: number): Uint8Array {
  const values = headerLeafValues(h, i);
  const memo = leafMemos[i];
  if (memo !== undefined && sameLeafValues(memo.values, values)) return memo.hash;
  const hash = merkleLeafHash(headerHashLeaf(h, i));
  leafMemos[i] = { values: values.map((v) => (v instanceof Uint8Array ? v.slice() : v)), hash };
  return hash;
}

function headerInner(hashes: readonly Uint8Array[], start: number, end: number): Uint8Array {
  if (end - start === 1) return hashes[start] as Uint8Array;
  const k = merkleSplitPoint(end - start);
  const left = headerInner(hashes, start, start + k);
  const right = headerInner(hashes, start + k, end);
  const key = start * 32 + end;
  const memo = innerMemos.get(key);
  if (memo !== undefined && memo.left === left && memo.right === right) return memo.hash;
  const hash = merkleInnerHash(left, right);
  innerMemos.set(key, { left, right, hash });
  return hash;
}

function headerRoot(h: Header): Uint8Array {
  const hashes: Uint8Array[] = [];
  for (let i = 0; i < HEADER_LEAVES; i++) hashes.push(headerLeafHash(h, i));
  return headerInner(hashes, 0, HEADER_LEAVES);
}

// A tx's bytes are never written to once received (the mempool, blocks, stores and the app only read
// them), so its hash is kept with the bytes object: CheckTx, the mempool, the app's decode cache, the
// event bus and the indexer each ask for it, and a block's data hash is checked when it is made,
// prevoted, precommitted and committed (CometBFT memoizes Data.Hash the same way). The hashes handed
// out are shared: callers must not write into them.
const txHashes = new WeakMap<Uint8Array, Uint8Array>();
const txHashHexes = new WeakMap<Uint8Array, string>();
const dataHashes = new WeakMap<readonly Uint8Array[], { txs: Uint8Array[]; hash: Uint8Array }>();

/** sha256 of the tx bytes (types.Tx.Hash). */
export function txHash(tx: Uint8Array): Uint8Array {
  let h = txHashes.get(tx);
  if (h === undefined) {
    h = sha256(tx);
    txHashes.set(tx, h);
  }
  return h;
}

/**
 * txHash as lowercase hex without 0x, kept with the bytes like txHash: the key the mempool and the
 * EVM app file a tx under, asked for at CheckTx, recheck, block update and decode.
 */
export function txHashHex(tx: Uint8Array): string {
  let h = txHashHexes.get(tx);
  if (h === undefined) {
    h = bytesToHex(txHash(tx));
    txHashHexes.set(tx, h);
  }
  return h;
}

/** data_hash: merkle over the tx hashes (types.Txs.Hash); no txs gives sha256(""). */
export function dataHash(txs: readonly Uint8Array[]): Uint8Array {
  const memo = dataHashes.get(txs);
  // The array may have been changed since (a tx added or replaced): the memo holds only for the same txs.
  if (memo !== undefined && memo.txs.length === txs.length && memo.txs.every((t, i) => t === txs[i])) return memo.hash;
  const hash = hashFromByteSlices(txs.map(txHash));
  dataHashes.set(txs, { txs: [...txs], hash });
  return hash;
}

// A block's last_commit_hash is asked for when it is made and at each of its three validations
// (prevote, precommit, commit), as Go memoizes Commit.Hash. Kept with the signatures array and the
// values it was computed from, as headerHash's memo: a signature added, replaced or a field assigned
// recomputes it; bytes written in place are not detected (commit signatures are never written to).
const commitHashes = new WeakMap<readonly CommitSig[], { refs: unknown[]; hash: Uint8Array }>();

function commitSigRefs(sigs: readonly CommitSig[]): unknown[] {
  const refs: unknown[] = [];
  for (const s of sigs) refs.push(s, s.blockIdFlag, s.validatorAddress, s.timestamp, s.signature);
  return refs;
}

/** last_commit_hash: merkle over each CommitSig's proto bytes, absent ones included (types.Commit.Hash). */
export function commitHash(c: Commit): Uint8Array {
  const refs = commitSigRefs(c.signatures);
  const memo = commitHashes.get(c.signatures);
  if (memo !== undefined && memo.refs.length === refs.length && memo.refs.every((r, i) => r === refs[i]))
    return memo.hash.slice();
  const hash = hashFromByteSlices(c.signatures.map(encodeCommitSig));
  commitHashes.set(c.signatures, { refs, hash });
  return hash.slice();
}

// ---- block id and parts -------------------------------------------------------------------------

/** Splits the block's proto encoding into parts (types.Block.MakePartSet). */
export function makePartSet(b: Block, partSize: number = PART_SIZE_BYTES): PartSet {
  return PartSet.fromData(encodeBlock(b), partSize);
}

/** {header hash, part set header}; the hash is empty when the header has no validatorsHash. */
export function blockId(b: Block, parts: PartSet): BlockId {
  return { hash: headerHash(b.header) ?? new Uint8Array(0), partSetHeader: parts.header() };
}

/** The block store's per-height summary (types.NewBlockMeta). */
export function createBlockMeta(b: Block, parts: PartSet): BlockMeta {
  return { blockId: blockId(b, parts), blockSize: parts.byteSize(), header: b.header, numTxs: b.data.txs.length };
}

// ---- validation ---------------------------------------------------------------------------------

/** types.Header.ValidateBasic. Throws InvalidBlockError. */
export function validateHeaderBasic(h: Header): void {
  const fail = (m: string): never => {
    throw new InvalidBlockError(m);
  };
  if (h.version.block !== BLOCK_PROTOCOL) {
    fail(`block protocol is incorrect: got: ${h.version.block}, want: ${BLOCK_PROTOCOL} `);
  }
  const chainIdLen = Buffer.byteLength(h.chainId, "utf8");
  if (chainIdLen > MAX_CHAIN_ID_LENGTH) fail(`chainID is too long; got: ${chainIdLen}, max: ${MAX_CHAIN_ID_LENGTH}`);
  if (h.height < 0) fail("negative Height");
  if (h.height === 0) fail("zero Height");
  try {
    validateBlockIdBasic(h.lastBlockId);
  } catch (err) {
    fail(`wrong LastBlockID: ${(err as Error).message}`);
  }
  const hashes: [string, Uint8Array][] = [
    ["LastCommitHash", h.lastCommitHash],
    ["DataHash", h.dataHash],
    ["EvidenceHash", h.evidenceHash],
  ];
  for (const [name, v] of hashes) {
    const p = hashSizeProblem(v);
    if (p) fail(`wrong ${name}: ${p}`);
  }
  if (h.proposerAddress.length !== ADDRESS_SIZE) {
    fail(`invalid ProposerAddress length; got: ${h.proposerAddress.length}, expected: ${ADDRESS_SIZE}`);
  }
  // The app hash may have any length; the rest are checked against state later (state.validateBlock).
  const appHashes: [string, Uint8Array][] = [
    ["ValidatorsHash", h.validatorsHash],
    ["NextValidatorsHash", h.nextValidatorsHash],
    ["ConsensusHash", h.consensusHash],
    ["LastResultsHash", h.lastResultsHash],
  ];
  for (const [name, v] of appHashes) {
    const p = hashSizeProblem(v);
    if (p) fail(`wrong ${name}: ${p}`);
  }
}

/**
 * types.Block.ValidateBasic: a well-formed header and last commit, and header hashes that match
 * the last commit, the txs and the evidence. Throws InvalidBlockError with CometBFT's message.
 */
export function validateBlockBasic(b: Block): void {
  try {
    validateHeaderBasic(b.header);
  } catch (err) {
    throw new InvalidBlockError(`invalid header: ${(err as Error).message}`, { cause: err });
  }
  try {
    validateCommitBasic(b.lastCommit);
  } catch (err) {
    throw new InvalidBlockError(`wrong LastCommit: ${(err as Error).message}`, { cause: err });
  }
  const lc = commitHash(b.lastCommit);
  if (!bytesEqual(b.header.lastCommitHash, lc)) {
    throw new InvalidBlockError(
      `wrong Header.LastCommitHash. Expected ${bytesToHexUpper(lc)}, got ${bytesToHexUpper(b.header.lastCommitHash)}`,
    );
  }
  const dh = dataHash(b.data.txs);
  if (!bytesEqual(b.header.dataHash, dh)) {
    throw new InvalidBlockError(
      `wrong Header.DataHash. Expected ${bytesToHexUpper(dh)}, got ${bytesToHexUpper(b.header.dataHash)}`,
    );
  }
  b.evidence.forEach((ev, i) => {
    try {
      validateEvidenceBasic(ev);
    } catch (err) {
      throw new InvalidBlockError(`invalid evidence (#${i}): ${(err as Error).message}`, { cause: err });
    }
  });
  const eh = evidenceHash(b.evidence);
  if (!bytesEqual(b.header.evidenceHash, eh)) {
    // Go prints the header's hash as "Expected" here (types/block.go); kept for identical logs.
    throw new InvalidBlockError(
      `wrong Header.EvidenceHash. Expected ${bytesToHexUpper(b.header.evidenceHash)}, got ${bytesToHexUpper(eh)}`,
    );
  }
}

// ---- BFT time and size limits -------------------------------------------------------------------

/**
 * state.MedianTime (docs/cometbft-hashes.md "BFT time"): the voting-power-weighted median of the non-absent
 * signatures' timestamps. Sorted ascending, the first time whose weight covers the remaining
 * half of the total is the median. Go's zero time when no signature counts.
 */
export function medianTime(commit: Commit, validators: ValidatorSet): Timestamp {
  const weighted: { time: Timestamp; weight: bigint }[] = [];
  let total = 0n;
  for (const sig of commit.signatures) {
    if (sig.blockIdFlag === BLOCK_ID_FLAG.absent) continue;
    const found = validators.getByAddress(sig.validatorAddress);
    if (!found) {
      throw new InvalidBlockError(
        `commit validator not found in validator set: ${bytesToHexUpper(sig.validatorAddress)}`,
      );
    }
    total += found.validator.votingPower;
    weighted.push({ time: sig.timestamp, weight: found.validator.votingPower });
  }
  weighted.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  let median = total / 2n;
  for (const w of weighted) {
    if (median <= w.weight) return w.time;
    median -= w.weight;
  }
  return GO_ZERO_TIME;
}

/** types.MaxCommitBytes: the most a LastCommit for `valCount` validators can take. */
export function maxCommitBytes(valCount: number): number {
  return MAX_COMMIT_OVERHEAD_BYTES + (MAX_COMMIT_SIG_BYTES + 2) * valCount;
}

/**
 * types.MaxDataBytes: room left for txs in a block of maxBytes once header, last commit and
 * evidence are accounted for (PrepareProposal's max_tx_bytes). Throws when nothing is left.
 */
export function maxDataBytes(maxBytes: number, evidenceBytes: number, valCount: number): number {
  const n = maxBytes - MAX_OVERHEAD_FOR_BLOCK - MAX_HEADER_BYTES - maxCommitBytes(valCount) - evidenceBytes;
  if (n < 0) {
    throw new InvalidBlockError(
      `Negative MaxDataBytes. Block.MaxBytes=${maxBytes} is too small to accommodate header&lastCommit&evidence=${-(n - maxBytes)}`,
    );
  }
  return n;
}
