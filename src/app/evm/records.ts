import { RLP } from "@ethereumjs/rlp";
import { bigintToBytes, bytesToBigint, equalBytes, KECCAK256_NULL, type StoredAccount } from "../../evm/index.js";
import { EvmStateCorruptionError } from "./errors.js";
import { type RlpDecoded, rlpDecode } from "./rlpReader.js";
import { type RlpItem, rlpEncode } from "./rlpWriter.js";

const EMPTY = new Uint8Array(0);

/**
 * Domain records of the EVM app and their byte encodings (RLP) in its LMDB tables. Numbers are
 * bigint (gas, wei) or number (heights, indexes); no wire formats here.
 */

/** The engine's byte helpers and account record, which the app's files import from here. */
export { bigintToBytes, bytesToBigint, equalBytes, KECCAK256_NULL, type StoredAccount };

/** keccak256(rlp("")): the root of an empty trie (transactionsRoot/receiptsRoot of an empty block). */
export const EMPTY_TRIE_ROOT = hex32("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");

function hex32(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h, "hex"));
}

export const MISSING_ACCOUNT: StoredAccount = Object.freeze({
  exists: false,
  nonce: 0n,
  balance: 0n,
  codeHash: KECCAK256_NULL,
  incarnation: 0,
}) as StoredAccount;

export interface EvmLog {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
}

/** A log as the chain recorded it: position in the block and in its tx. */
export interface EvmLogRecord extends EvmLog {
  /** Block-wide index (0-based, over the block's EVM txs). */
  logIndex: number;
}

/** Receipt of an executed Ethereum tx (status 0 = reverted/failed in the EVM, 1 = success). */
export interface EvmReceipt {
  height: number;
  /** Index among the block's executed EVM txs (`transactionIndex`). */
  txIndex: number;
  /** Position of the tx in the CometBFT block (`tx.height` + this index find it with `tx_search`). */
  cometIndex: number;
  txHash: Uint8Array;
  /** The signed tx as submitted (typed envelope or legacy RLP). */
  rawTx: Uint8Array;
  type: number;
  from: Uint8Array;
  to: Uint8Array | undefined;
  nonce: bigint;
  gasLimit: bigint;
  contractAddress: Uint8Array | undefined;
  status: 0 | 1;
  /** Gas charged (after refunds and Cosmos EVM's min-gas-multiplier floor). */
  gasUsed: bigint;
  cumulativeGasUsed: bigint;
  effectiveGasPrice: bigint;
  logs: EvmLogRecord[];
  logsBloom: Uint8Array;
  /** EVM error text ("" on success), e.g. "execution reverted", "out of gas". */
  vmError: string;
  /** Return data, or the revert data of a reverted tx. */
  returnData: Uint8Array;
}

/** What the app records per committed height. */
export interface EvmBlock {
  height: number;
  /** CometBFT block hash (the `hash` Cosmos EVM's JSON-RPC shows). */
  hash: Uint8Array;
  parentHash: Uint8Array;
  /** Block time, Unix seconds. */
  timestamp: bigint;
  /** Block time in ns (CometBFT). */
  timeNs: bigint;
  /** CometBFT proposer (consensus address). */
  proposer: Uint8Array;
  /** Who received the priority fees (`miner`, `COINBASE`). */
  coinbase: Uint8Array;
  baseFee: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  /** Sum of executed txs' gas limits (feeds the fee market). */
  gasWanted: bigint;
  logsBloom: Uint8Array;
  transactionsRoot: Uint8Array;
  receiptsRoot: Uint8Array;
  /** App hash after this block (the header of the next block carries it). */
  appHash: Uint8Array;
  txHashes: Uint8Array[];
}

// ---- scalar helpers -------------------------------------------------------------------------------

function smallNum(b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < b.length; i++) n = n * 256 + (b[i] as number);
  return n;
}

function num(b: Uint8Array): number {
  return b.length <= 6 ? smallNum(b) : Number(bytesToBigint(b));
}

export function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return i === 0 ? b : b.subarray(i);
}

export function setLengthLeft(b: Uint8Array, length: number): Uint8Array {
  if (b.length >= length) return b.length === length ? b : b.subarray(b.length - length);
  const out = new Uint8Array(length);
  out.set(b, length - b.length);
  return out;
}

/*
 * The fixed-width integers of keys are written byte by byte. A `new Uint8Array(n)` of up to 64 bytes
 * lives inside V8's heap, and asking for its `.buffer` (as `new DataView(out.buffer)` does) moves it out
 * to a backing store of its own: ~1 µs, ten times the rest of the function. A storage key (addr,
 * incarnation, slot) is built for every slot a call reads from LMDB, and a height key for every history
 * row, so this was ~1 µs per cold SLOAD of every eth_call.
 */

export function u64be(n: number | bigint): Uint8Array {
  const out = new Uint8Array(8);
  const v = typeof n === "bigint" ? BigInt.asUintN(64, n) : n;
  const hi = typeof v === "bigint" ? Number(v >> 32n) : Math.floor(v / 0x1_0000_0000);
  const lo = typeof v === "bigint" ? Number(v & 0xffff_ffffn) : v >>> 0;
  writeU32(out, 0, hi);
  writeU32(out, 4, lo);
  return out;
}

export function readU64be(b: Uint8Array, offset = 0): number {
  return Number(new DataView(b.buffer, b.byteOffset + offset, 8).getBigUint64(0));
}

export function u32be(n: number): Uint8Array {
  const out = new Uint8Array(4);
  writeU32(out, 0, n);
  return out;
}

/** Writes `n` (as an unsigned 32-bit integer) big-endian at `at`. */
function writeU32(out: Uint8Array, at: number, n: number): void {
  out[at] = n >>> 24;
  out[at + 1] = (n >>> 16) & 0xff;
  out[at + 2] = (n >>> 8) & 0xff;
  out[at + 3] = n & 0xff;
}

function asBytes(v: RlpDecoded | undefined, what: string): Uint8Array {
  if (!(v instanceof Uint8Array)) throw new EvmStateCorruptionError(what);
  return v;
}

function asList(v: RlpDecoded | undefined, what: string): RlpDecoded[] {
  if (!Array.isArray(v)) throw new EvmStateCorruptionError(what);
  return v;
}

function decodeList(bytes: Uint8Array, what: string): RlpDecoded[] {
  try {
    return asList(rlpDecode(bytes), what);
  } catch (err) {
    if (err instanceof EvmStateCorruptionError) throw err;
    throw new EvmStateCorruptionError(what, { cause: err });
  }
}

// ---- accounts -------------------------------------------------------------------------------------

export function encodeAccount(a: StoredAccount): Uint8Array {
  if (!a.exists) return rlpEncode([a.incarnation]);
  const codeHash = equalBytes(a.codeHash, KECCAK256_NULL) ? EMPTY : a.codeHash;
  return rlpEncode([a.nonce, a.balance, codeHash, a.incarnation]);
}

export function decodeAccount(bytes: Uint8Array): StoredAccount {
  const l = decodeList(bytes, "an account record");
  if (l.length === 1) return { ...MISSING_ACCOUNT, incarnation: num(asBytes(l[0], "an account record")) };
  const codeHash = asBytes(l[2], "an account record");
  return {
    exists: true,
    nonce: bytesToBigint(asBytes(l[0], "an account record")),
    balance: bytesToBigint(asBytes(l[1], "an account record")),
    codeHash: codeHash.length === 0 ? KECCAK256_NULL : codeHash,
    incarnation: num(asBytes(l[3], "an account record")),
  };
}

// ---- receipts -------------------------------------------------------------------------------------

function encodeLogs(logs: EvmLogRecord[]): RlpItem[] {
  return logs.map((l) => [l.address, l.topics, l.data, l.logIndex]);
}

function decodeLogs(v: RlpDecoded | undefined): EvmLogRecord[] {
  return asList(v, "receipt logs").map((item) => {
    const l = asList(item, "a log");
    return {
      address: asBytes(l[0], "a log"),
      topics: asList(l[1], "log topics").map((t) => asBytes(t, "a log topic")),
      data: asBytes(l[2], "a log"),
      logIndex: num(asBytes(l[3], "a log")),
    };
  });
}

const UTF8 = new TextDecoder();
const UTF8_ENCODER = new TextEncoder();

export function encodeReceipt(r: EvmReceipt): Uint8Array {
  return rlpEncode([
    r.cometIndex,
    r.txHash,
    r.rawTx,
    r.type,
    r.from,
    r.to ?? EMPTY,
    r.nonce,
    r.gasLimit,
    r.contractAddress ?? EMPTY,
    r.status,
    r.gasUsed,
    r.cumulativeGasUsed,
    r.effectiveGasPrice,
    encodeLogs(r.logs),
    r.logsBloom,
    r.vmError === "" ? EMPTY : UTF8_ENCODER.encode(r.vmError),
    r.returnData,
  ]);
}

export function decodeReceipt(height: number, txIndex: number, bytes: Uint8Array): EvmReceipt {
  const w = "a receipt";
  const l = decodeList(bytes, w);
  const to = asBytes(l[5], w);
  const contract = asBytes(l[8], w);
  return {
    height,
    txIndex,
    cometIndex: num(asBytes(l[0], w)),
    txHash: asBytes(l[1], w),
    rawTx: asBytes(l[2], w),
    type: num(asBytes(l[3], w)),
    from: asBytes(l[4], w),
    to: to.length === 0 ? undefined : to,
    nonce: bytesToBigint(asBytes(l[6], w)),
    gasLimit: bytesToBigint(asBytes(l[7], w)),
    contractAddress: contract.length === 0 ? undefined : contract,
    status: num(asBytes(l[9], w)) === 1 ? 1 : 0,
    gasUsed: bytesToBigint(asBytes(l[10], w)),
    cumulativeGasUsed: bytesToBigint(asBytes(l[11], w)),
    effectiveGasPrice: bytesToBigint(asBytes(l[12], w)),
    logs: decodeLogs(l[13]),
    logsBloom: asBytes(l[14], w),
    vmError: UTF8.decode(asBytes(l[15], w)),
    returnData: asBytes(l[16], w),
  };
}

/** What eth_getLogs needs of a stored receipt: its tx hash and logs (the rest is not converted). */
export function decodeReceiptLogs(bytes: Uint8Array): { txHash: Uint8Array; logs: EvmLogRecord[] } {
  const w = "a receipt";
  const l = decodeList(bytes, w);
  return { txHash: asBytes(l[1], w), logs: decodeLogs(l[13]) };
}

// ---- blocks ---------------------------------------------------------------------------------------

export function encodeBlock(b: EvmBlock): Uint8Array {
  return rlpEncode([
    b.height,
    b.hash,
    b.parentHash,
    b.timestamp,
    b.timeNs < 0n ? 0n : b.timeNs,
    b.proposer,
    b.coinbase,
    b.baseFee,
    b.gasLimit,
    b.gasUsed,
    b.gasWanted,
    b.logsBloom,
    b.transactionsRoot,
    b.receiptsRoot,
    b.appHash,
    b.txHashes,
  ]);
}

export function decodeBlock(bytes: Uint8Array): EvmBlock {
  const w = "a block record";
  const l = decodeList(bytes, w);
  return {
    height: num(asBytes(l[0], w)),
    hash: asBytes(l[1], w),
    parentHash: asBytes(l[2], w),
    timestamp: bytesToBigint(asBytes(l[3], w)),
    timeNs: bytesToBigint(asBytes(l[4], w)),
    proposer: asBytes(l[5], w),
    coinbase: asBytes(l[6], w),
    baseFee: bytesToBigint(asBytes(l[7], w)),
    gasLimit: bytesToBigint(asBytes(l[8], w)),
    gasUsed: bytesToBigint(asBytes(l[9], w)),
    gasWanted: bytesToBigint(asBytes(l[10], w)),
    logsBloom: asBytes(l[11], w),
    transactionsRoot: asBytes(l[12], w),
    receiptsRoot: asBytes(l[13], w),
    appHash: asBytes(l[14], w),
    txHashes: asList(l[15], w).map((h) => asBytes(h, w)),
  };
}

// ---- app meta -------------------------------------------------------------------------------------

/** Fee market parameters (x/feemarket Params); Dec values are bigint scaled by 1e18. */
export interface FeeMarketParams {
  noBaseFee: boolean;
  baseFeeChangeDenominator: bigint;
  elasticityMultiplier: bigint;
  /** Initial base fee (Dec, wei·1e18). */
  baseFee: bigint;
  enableHeight: number;
  /** Dec, wei·1e18. */
  minGasPrice: bigint;
  /** Dec (0.5 = 5e17). */
  minGasMultiplier: bigint;
}

/** The fee market's moving state: params.BaseFee and the block gas wanted of the last block. */
export interface FeeMarketState {
  /** Dec, wei·1e18: the last block's base fee (before the first block, the initial one). */
  baseFee: bigint;
  /** max(gasWanted·minGasMultiplier, gasUsed) of the last block. */
  blockGasWanted: bigint;
}

/** Chain-level settings fixed at genesis (every validator must agree: they change the app hash). */
export interface ChainSettings {
  chainId: bigint;
  initialHeight: number;
  /** Consensus params block.max_gas at genesis (-1 = unlimited). */
  maxGas: bigint;
  /** Fixed fee recipient, or undefined to credit the proposer's address bytes. */
  coinbase: Uint8Array | undefined;
  feeMarket: FeeMarketParams;
  /**
   * A dev chain (genesis `evm.dev_chain`): dev entries are accepted (devEntries.ts); cheats may change
   * coinbase, maxGas and the min gas price above.
   */
  devChain?: boolean;
  /**
   * Consensus params evidence.max_age_num_blocks at genesis: the retain height given in Commit stays
   * this many blocks below the committed height (the Cosmos SDK's GetBlockRetentionHeight). Absent in
   * records written before pruning by min-retain-blocks existed.
   */
  evidenceMaxAgeNumBlocks?: bigint;
}

/** Committed app state pointer. */
export interface AppMeta {
  height: number;
  appHash: Uint8Array;
  /** Oldest height whose state is still kept. */
  earliestStateHeight: number;
  feeMarket: FeeMarketState;
  /** Dev chains: the next block's base fee in wei, set by a setNextBaseFee dev entry. */
  nextBaseFee?: bigint;
}

/** Written at every height: by rlpWriter (the same bytes as RLP.encode of the fields' minimal big-endian bytes). */
export function encodeMeta(m: AppMeta): Uint8Array {
  const fields: RlpItem[] = [
    m.height,
    m.appHash,
    m.earliestStateHeight,
    m.feeMarket.baseFee,
    m.feeMarket.blockGasWanted,
  ];
  // Present only when set, so records of chains that never set it stay byte-identical.
  if (m.nextBaseFee !== undefined) fields.push(1, m.nextBaseFee);
  return rlpEncode(fields);
}

export function decodeMeta(bytes: Uint8Array): AppMeta {
  const w = "the app state record";
  const l = decodeList(bytes, w);
  return {
    height: num(asBytes(l[0], w)),
    appHash: asBytes(l[1], w),
    earliestStateHeight: num(asBytes(l[2], w)),
    feeMarket: { baseFee: bytesToBigint(asBytes(l[3], w)), blockGasWanted: bytesToBigint(asBytes(l[4], w)) },
    ...(l.length >= 7 ? { nextBaseFee: bytesToBigint(asBytes(l[6], w)) } : {}),
  };
}

export function encodeSettings(s: ChainSettings): Uint8Array {
  const f = s.feeMarket;
  return RLP.encode([
    bigintToBytes(s.chainId),
    bigintToBytes(BigInt(s.initialHeight)),
    new TextEncoder().encode(s.maxGas.toString()),
    s.coinbase ?? EMPTY,
    [
      f.noBaseFee ? Uint8Array.of(1) : EMPTY,
      bigintToBytes(f.baseFeeChangeDenominator),
      bigintToBytes(f.elasticityMultiplier),
      bigintToBytes(f.baseFee),
      bigintToBytes(BigInt(f.enableHeight)),
      bigintToBytes(f.minGasPrice),
      bigintToBytes(f.minGasMultiplier),
    ],
    // Present only on dev chains (or before the evidence age), so other chains' records stay byte-identical.
    ...(s.devChain === true || s.evidenceMaxAgeNumBlocks !== undefined
      ? [s.devChain === true ? Uint8Array.of(1) : EMPTY]
      : []),
    ...(s.evidenceMaxAgeNumBlocks === undefined ? [] : [bigintToBytes(s.evidenceMaxAgeNumBlocks)]),
  ]);
}

export function decodeSettings(bytes: Uint8Array): ChainSettings {
  const w = "the chain settings record";
  const l = decodeList(bytes, w);
  const f = asList(l[4], w);
  const coinbase = asBytes(l[3], w);
  return {
    chainId: bytesToBigint(asBytes(l[0], w)),
    initialHeight: num(asBytes(l[1], w)),
    maxGas: BigInt(new TextDecoder().decode(asBytes(l[2], w))),
    coinbase: coinbase.length === 0 ? undefined : coinbase,
    feeMarket: {
      noBaseFee: asBytes(f[0], w).length > 0,
      baseFeeChangeDenominator: bytesToBigint(asBytes(f[1], w)),
      elasticityMultiplier: bytesToBigint(asBytes(f[2], w)),
      baseFee: bytesToBigint(asBytes(f[3], w)),
      enableHeight: num(asBytes(f[4], w)),
      minGasPrice: bytesToBigint(asBytes(f[5], w)),
      minGasMultiplier: bytesToBigint(asBytes(f[6], w)),
    },
    ...(l.length >= 6 && asBytes(l[5], w).length > 0 ? { devChain: true } : {}),
    ...(l.length >= 7 ? { evidenceMaxAgeNumBlocks: bytesToBigint(asBytes(l[6], w)) } : {}),
  };
}
