import { RLP } from "@ethereumjs/rlp";
import {
  activePrecompiles,
  type EngineHooks,
  EngineTxError,
  executeCall,
  floorDataGas,
  intrinsicGas,
  type Precompile,
  precompileAt,
  recoverAuthorization,
} from "../../evm/index.js";
import { COSMOS_PRECOMPILES } from "./cosmosPrecompiles.js";
import { keccak256 } from "./crypto.js";
import { toChecksumAddress } from "./devAccounts.js";
import { SimulationError } from "./errors.js";
import { logsBloom } from "./executor.js";
import { HISTORY_STORAGE_ADDRESS } from "./genesis.js";
import type { AccessListEntry, AuthorizationView, CallArgs, EvmTx } from "./readerTypes.js";
import { bigintToBytes, EMPTY_TRIE_ROOT, equalBytes, KECCAK256_NULL, setLengthLeft, stripZeros } from "./records.js";
import type { StateReader } from "./stateDb.js";
import { OverlayStateManager } from "./stateManager.js";
import { encodeReceiptForTrie, orderedTrieRoot } from "./trieRoot.js";
import { maxBig } from "./txDecode.js";

/**
 * eth_simulateV1 (docs/ethereum-rpc.md "eth_simulateV1"): a chain of simulated blocks on top of the
 * state after a committed height, each with block overrides, state overrides and calls run one after
 * another on one overlay (cometh's engine, Prague rules), as geth's internal/ethapi/simulate.go does:
 * block numbers and timestamps that only increase (gaps filled with empty blocks, timestamps 12 s
 * apart by default), at most 256 blocks past the base, geth's validation mode (nonces, fees and the
 * base fee checked; without it the base fee is 0 and zero-fee calls pay nothing), ETH transfers traced
 * as ERC-7528 logs, and a gas budget (the RPC gas cap) shared by every call. Synchronous; the deadline
 * is checked on state reads and by the engine's interrupt hook.
 */

/** geth maxSimulateBlocks, maxSimulateCallsPerBlock, maxSimulateTotalCalls, timestampIncrement. */
export const MAX_SIMULATE_BLOCKS = 256;
export const MAX_SIMULATE_CALLS_PER_BLOCK = 5000;
export const MAX_SIMULATE_TOTAL_CALLS = 10000;
const TIMESTAMP_INCREMENT = 12n;

/** keccak256("Transfer(address,address,uint256)"), emitted by 0xEeee…EEeE (ERC-7528) for ETH moves. */
export const TRANSFER_TOPIC = hex32("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
export const TRANSFER_ADDRESS = hexBytes("eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
/** keccak256(rlp([])): the uncles hash of a block without uncles. */
const EMPTY_UNCLES_HASH = hex32("1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347");
/** sha256(""): the EIP-7685 requests hash of a block without requests. */
const EMPTY_REQUESTS_HASH = hex32("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
const ZERO_HASH = new Uint8Array(32);
const ZERO_ADDRESS = new Uint8Array(20);
const MAX_UINT64 = (1n << 64n) - 1n;
const GWEI = 1_000_000_000n;
/** EIP-3860. */
const MAX_INITCODE_SIZE = 49152;
/**
 * The ring sizes of the EIP-2935 history contract's and the EIP-4788 beacon roots contract's code
 * (both 8191 slots): geth runs those contracts' system calls before a simulated block's calls.
 */
const SYSTEM_RING = 8191n;
const BEACON_ROOTS_ADDRESS = hexBytes("000f3df6d732807ef1319fb7b8bb8522d0beac02");
/** EIP-4844 with Prague's blob schedule (EIP-7691): gas per blob, target per block, update fraction. */
const BLOB_GAS_PER_BLOB = 131072n;
const TARGET_BLOB_GAS_PER_BLOCK = 6n * BLOB_GAS_PER_BLOB;
const BLOB_BASE_FEE_UPDATE_FRACTION = 5007716n;
/** EIP-1559 (geth's defaults, for the base fee of the blocks after the first in validation mode). */
const BASE_FEE_CHANGE_DENOMINATOR = 8n;
const ELASTICITY_MULTIPLIER = 2n;

/**
 * The precompiles of one simulated block: the chain's (Prague 0x01–0x11, P256 0x…0100, Bech32 0x…0400) until
 * a state override removes one (an override of its account) or moves it (movePrecompileToAddress), as
 * geth's StateOverride.Apply does; the engine runs the block's calls on this table.
 */
class PrecompileTable {
  readonly #byAddress = new Map<string, Precompile>();

  constructor() {
    for (const addr of activePrecompiles("prague", COSMOS_PRECOMPILES)) {
      this.#byAddress.set(
        Buffer.from(addr).toString("hex"),
        precompileAt(addr, "prague", COSMOS_PRECOMPILES) as Precompile,
      );
    }
  }

  /** The engine's lookup (ExecOptions.precompiles). */
  readonly at = (addr: Uint8Array): Precompile | undefined => this.#byAddress.get(Buffer.from(addr).toString("hex"));

  has(addr: Uint8Array): boolean {
    return this.at(addr) !== undefined;
  }

  move(from: Uint8Array, to: Uint8Array): void {
    const p = this.at(from);
    if (p !== undefined) this.#byAddress.set(Buffer.from(to).toString("hex"), p);
  }

  remove(addr: Uint8Array): void {
    this.#byAddress.delete(Buffer.from(addr).toString("hex"));
  }
}

// ---- the request -------------------------------------------------------------------------------

/** One call (geth TransactionArgs, decoded): eth_call's arguments and the fields only a simulated tx has. */
export interface SimulateCall extends Omit<CallArgs, "accessList" | "authorizationList"> {
  maxFeePerBlobGas?: bigint;
  nonce?: bigint;
  accessList?: readonly AccessListEntry[];
  chainId?: bigint;
  blobVersionedHashes?: readonly Uint8Array[];
  authorizationList?: readonly AuthorizationView[];
}

export interface SimulateWithdrawal {
  index: bigint;
  validatorIndex: bigint;
  address: Uint8Array;
  /** Gwei. */
  amount: bigint;
}

/** geth override.BlockOverrides. */
export interface SimulateBlockOverrides {
  number?: bigint;
  difficulty?: bigint;
  time?: bigint;
  gasLimit?: bigint;
  feeRecipient?: Uint8Array;
  prevRandao?: Uint8Array;
  baseFeePerGas?: bigint;
  blobBaseFee?: bigint;
  beaconRoot?: Uint8Array;
  withdrawals?: readonly SimulateWithdrawal[];
}

/** geth override.OverrideAccount. */
export interface SimulateAccountOverride {
  address: Uint8Array;
  nonce?: bigint;
  code?: Uint8Array;
  balance?: bigint;
  state?: readonly { slot: Uint8Array; value: Uint8Array }[];
  stateDiff?: readonly { slot: Uint8Array; value: Uint8Array }[];
  movePrecompileToAddress?: Uint8Array;
}

export interface SimulateBlockSpec {
  blockOverrides?: SimulateBlockOverrides;
  stateOverrides?: readonly SimulateAccountOverride[];
  calls: readonly SimulateCall[];
}

export interface SimulateRequest {
  blocks: readonly SimulateBlockSpec[];
  traceTransfers: boolean;
  validation: boolean;
  /** The state after this committed height is the base. */
  height: number;
  /** `[json-rpc] gas-cap`: the gas every call together may use; 0 = none. */
  gasCap: bigint;
  /** `evm-timeout` for the whole simulation; 0 = none. */
  timeoutMs: number;
}

// ---- the result --------------------------------------------------------------------------------

export interface SimulatedLog {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
  blockNumber: bigint;
  blockTimestamp: bigint;
  blockHash: Uint8Array;
  transactionHash: Uint8Array;
  transactionIndex: number;
  logIndex: number;
}

export interface SimulatedCall {
  status: 0 | 1;
  returnData: Uint8Array;
  gasUsed: bigint;
  /** Gas used before refunds (geth's MaxUsedGas). */
  maxUsedGas: bigint;
  logs: SimulatedLog[];
  /** geth's VM error text when status is 0 ("execution reverted", "out of gas", ...). */
  vmError: string;
  /** The gas limit was lowered to what was left of the gas cap. */
  gasCapped: boolean;
}

/** A simulated block, as geth's RPCMarshalBlock shows it; `transactions` are unsigned (v, r, s zero). */
export interface SimulatedBlock {
  number: bigint;
  hash: Uint8Array;
  parentHash: Uint8Array;
  timestamp: bigint;
  gasLimit: bigint;
  gasUsed: bigint;
  baseFeePerGas: bigint;
  miner: Uint8Array;
  difficulty: bigint;
  mixHash: Uint8Array;
  logsBloom: Uint8Array;
  stateRoot: Uint8Array;
  transactionsRoot: Uint8Array;
  receiptsRoot: Uint8Array;
  withdrawalsRoot: Uint8Array;
  withdrawals: SimulateWithdrawal[];
  blobGasUsed: bigint;
  excessBlobGas: bigint;
  parentBeaconBlockRoot: Uint8Array;
  requestsHash: Uint8Array;
  size: number;
  transactions: EvmTx[];
  calls: SimulatedCall[];
}

/** What the simulator reads of the chain. */
export interface SimulateChain {
  chainId: bigint;
  /** The state after `height`. */
  state(height: number): StateReader;
  /** A committed block's header fields (undefined when there is none). */
  header(
    height: number,
  ):
    | { hash: Uint8Array; timestamp: bigint; gasLimit: bigint; gasUsed: bigint; baseFee: bigint; coinbase: Uint8Array }
    | undefined;
  /** The base fee of the block after `height` as the chain's fee market sets it (validation mode). */
  nextBaseFee(height: number): bigint;
}

// ---- helpers -----------------------------------------------------------------------------------

function hexBytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

function hex32(hex: string): Uint8Array {
  return hexBytes(hex);
}

function big(b: bigint): Uint8Array {
  return bigintToBytes(b);
}

function fail(reason: SimulationError["reason"], message: string): never {
  throw new SimulationError(reason, message);
}

/** geth's applyMessageWithEVM wording of a consensus error. */
function txFail(reason: SimulationError["reason"], message: string, gas: bigint): never {
  throw new SimulationError(reason, `err: ${message} (supplied gas ${gas})`);
}

/** geth eip1559.CalcBaseFee over a parent's gas limit, gas used and base fee. */
function calcBaseFee(parent: { gasLimit: bigint; gasUsed: bigint; baseFee: bigint }): bigint {
  const target = parent.gasLimit / ELASTICITY_MULTIPLIER;
  if (target === 0n || parent.gasUsed === target) return parent.baseFee;
  if (parent.gasUsed > target) {
    const delta = (parent.baseFee * (parent.gasUsed - target)) / target / BASE_FEE_CHANGE_DENOMINATOR;
    return parent.baseFee + (delta > 1n ? delta : 1n);
  }
  const delta = (parent.baseFee * (target - parent.gasUsed)) / target / BASE_FEE_CHANGE_DENOMINATOR;
  const next = parent.baseFee - delta;
  return next > 0n ? next : 0n;
}

/** EIP-4844 fake_exponential(1, excess, fraction): the blob base fee of a block with this excess blob gas. */
function blobBaseFeeOf(excess: bigint): bigint {
  let i = 1n;
  let output = 0n;
  let acc = BLOB_BASE_FEE_UPDATE_FRACTION;
  while (acc > 0n) {
    output += acc;
    acc = (acc * excess) / (BLOB_BASE_FEE_UPDATE_FRACTION * i);
    i++;
  }
  return output / BLOB_BASE_FEE_UPDATE_FRACTION;
}

/** geth types.Withdrawal's RLP: [index, validatorIndex, address, amount]. */
function encodeWithdrawal(w: SimulateWithdrawal): Uint8Array[] {
  return [big(w.index), big(w.validatorIndex), w.address, big(w.amount)];
}

// ---- the chain: numbers, timestamps, gaps --------------------------------------------------------

interface PlannedBlock {
  number: bigint;
  time: bigint;
  spec: SimulateBlockSpec;
}

/** geth sanitizeChain: numbers and timestamps strictly increasing, gaps filled, at most 256 past the base. */
function planChain(blocks: readonly SimulateBlockSpec[], baseNumber: bigint, baseTime: bigint): PlannedBlock[] {
  const out: PlannedBlock[] = [];
  let prevNumber = baseNumber;
  let prevTime = baseTime;
  for (const spec of blocks) {
    const o = spec.blockOverrides ?? {};
    const number = o.number ?? prevNumber + 1n;
    if (number <= prevNumber) {
      fail("blockNumberInvalid", `block numbers must be in order: ${number} <= ${prevNumber}`);
    }
    if (number - baseNumber > BigInt(MAX_SIMULATE_BLOCKS)) fail("clientLimitExceeded", "too many blocks");
    for (let n = prevNumber + 1n; n < number; n++) {
      prevTime += TIMESTAMP_INCREMENT;
      out.push({ number: n, time: prevTime, spec: { calls: [] } });
    }
    prevNumber = number;
    let time: bigint;
    if (o.time === undefined) time = prevTime + TIMESTAMP_INCREMENT;
    else {
      time = o.time;
      if (time <= prevTime) fail("blockTimestampInvalid", `block timestamps must be in order: ${time} <= ${prevTime}`);
    }
    prevTime = time;
    out.push({ number, time, spec });
  }
  return out;
}

// ---- transactions ------------------------------------------------------------------------------

/**
 * The unsigned transaction geth builds from a call (TransactionArgs.ToTransaction with the dynamic-fee
 * type as default): set-code with an authorization list, blob with blob hashes, dynamic-fee otherwise,
 * legacy when gasPrice is given. v, r and s are zero; the hash is that encoding's keccak.
 */
function buildTx(
  c: SimulateCall & { nonce: bigint; gas: bigint; value: bigint },
  chainId: bigint,
  from: Uint8Array,
): { tx: EvmTx; encoded: Uint8Array } {
  let type = 2;
  if (c.authorizationList !== undefined) type = 4;
  else if (c.blobVersionedHashes !== undefined) type = 3;
  if (c.gasPrice !== undefined) type = 0;
  const data = c.data ?? new Uint8Array(0);
  const to = c.to ?? new Uint8Array(0);
  const accessList = (c.accessList ?? []).map((e) => [e.address, [...e.storageKeys].map((k) => setLengthLeft(k, 32))]);
  const zero = new Uint8Array(0);
  let encoded: Uint8Array;
  if (type === 0) {
    encoded = RLP.encode([big(c.nonce), big(c.gasPrice ?? 0n), big(c.gas), to, big(c.value), data, zero, zero, zero]);
  } else {
    const fields: unknown[] = [
      big(chainId),
      big(c.nonce),
      big(c.maxPriorityFeePerGas ?? 0n),
      big(c.maxFeePerGas ?? 0n),
      big(c.gas),
      to,
      big(c.value),
      data,
      accessList,
    ];
    if (type === 3) fields.push(big(c.maxFeePerBlobGas ?? 0n), [...(c.blobVersionedHashes ?? [])]);
    if (type === 4) {
      fields.push(
        (c.authorizationList ?? []).map((a) => [
          big(a.chainId),
          a.address,
          big(a.nonce),
          big(BigInt(a.yParity)),
          big(a.r),
          big(a.s),
        ]),
      );
    }
    fields.push(zero, zero, zero);
    const body = RLP.encode(fields as Parameters<typeof RLP.encode>[0]);
    encoded = new Uint8Array(body.length + 1);
    encoded[0] = type;
    encoded.set(body, 1);
  }
  const tx: EvmTx = {
    hash: keccak256(encoded),
    type,
    from,
    to: c.to,
    nonce: c.nonce,
    gasLimit: c.gas,
    value: c.value,
    input: data,
    ...(type === 0 ? { gasPrice: c.gasPrice ?? 0n } : {}),
    ...(type >= 2 ? { maxFeePerGas: c.maxFeePerGas ?? 0n, maxPriorityFeePerGas: c.maxPriorityFeePerGas ?? 0n } : {}),
    ...(type === 3
      ? { maxFeePerBlobGas: c.maxFeePerBlobGas ?? 0n, blobVersionedHashes: c.blobVersionedHashes ?? [] }
      : {}),
    ...(type === 0 ? {} : { accessList: c.accessList ?? [] }),
    ...(type === 4 ? { authorizationList: c.authorizationList ?? [] } : {}),
    // An unsigned legacy tx is not EIP-155 protected: no chain id (geth's newRPCTransaction).
    chainId: type === 0 ? undefined : chainId,
    v: 0n,
    r: 0n,
    s: 0n,
  };
  return { tx, encoded };
}

// ---- the tracer: logs per frame and ETH transfers (geth internal/ethapi/logtracer.go) -------------

class SimTracer {
  readonly #traceTransfers: boolean;
  #frames: SimulatedLog[][] = [];
  #count = 0;
  #block: { number: bigint; time: bigint } = { number: 0n, time: 0n };
  #txHash: Uint8Array = ZERO_HASH;
  #txIndex = 0;
  /** The transaction frame's gas used (start gas − gas left), for maxUsedGas. */
  topGasUsed = 0n;
  readonly hooks: EngineHooks;

  constructor(traceTransfers: boolean) {
    this.#traceTransfers = traceTransfers;
    this.hooks = {
      onEnter: (f) => {
        this.#frames.push([]);
        if (f.type !== "DELEGATECALL" && f.type !== "CALLCODE" && f.value > 0n) this.#transfer(f.from, f.to, f.value);
      },
      onExit: (f) => {
        if (f.depth === 0) {
          this.topGasUsed = f.gasUsed;
          if (f.reverted) this.#frames[0] = [];
          return;
        }
        if (this.#frames.length <= 1) return;
        const frame = this.#frames.pop() as SimulatedLog[];
        if (!f.reverted) (this.#frames[this.#frames.length - 1] as SimulatedLog[]).push(...frame);
      },
      onLog: (l) => this.#capture(l.address, l.topics.slice(), l.data),
    };
  }

  /** A new block: geth makes one tracer per block, so log indexes count across its transactions. */
  startBlock(number: bigint, time: bigint): void {
    this.#block = { number, time };
    this.#count = 0;
  }

  startTx(hash: Uint8Array, index: number): void {
    this.#frames = [];
    this.#txHash = hash;
    this.#txIndex = index;
    this.topGasUsed = 0n;
  }

  logs(): SimulatedLog[] {
    return this.#frames[0] ?? [];
  }

  #transfer(from: Uint8Array, to: Uint8Array, value: bigint): void {
    if (!this.#traceTransfers) return;
    this.#capture(
      TRANSFER_ADDRESS,
      [TRANSFER_TOPIC, setLengthLeft(from, 32), setLengthLeft(to, 32)],
      setLengthLeft(big(value), 32),
    );
  }

  #capture(address: Uint8Array, topics: Uint8Array[], data: Uint8Array): void {
    const top = this.#frames[this.#frames.length - 1];
    if (top === undefined) return;
    top.push({
      address,
      topics,
      data,
      blockNumber: this.#block.number,
      blockTimestamp: this.#block.time,
      blockHash: ZERO_HASH,
      transactionHash: this.#txHash,
      transactionIndex: this.#txIndex,
      logIndex: this.#count,
    });
    this.#count++;
  }
}

// ---- the simulator -----------------------------------------------------------------------------

function hasCode(state: OverlayStateManager, addr: Uint8Array): boolean {
  const a = state.storedAccount(addr);
  return a.exists && !equalBytes(a.codeHash, KECCAK256_NULL);
}

/** Checks the limits geth checks before anything runs (SimulateV1). */
export function checkSimulateLimits(blocks: readonly SimulateBlockSpec[]): void {
  if (blocks.length === 0) fail("invalidParams", "empty input");
  if (blocks.length > MAX_SIMULATE_BLOCKS) fail("clientLimitExceeded", "too many blocks");
  let total = 0;
  for (const b of blocks) {
    if (b.calls.length > MAX_SIMULATE_CALLS_PER_BLOCK) {
      fail("clientLimitExceeded", `too many calls in block: ${b.calls.length} > ${MAX_SIMULATE_CALLS_PER_BLOCK}`);
    }
    total += b.calls.length;
    if (total > MAX_SIMULATE_TOTAL_CALLS)
      fail("clientLimitExceeded", `too many calls: ${total} > ${MAX_SIMULATE_TOTAL_CALLS}`);
  }
}

/** Applies one block's state overrides (geth StateOverride.Apply: accounts in address order). */
function applyStateOverrides(
  state: OverlayStateManager,
  overrides: readonly SimulateAccountOverride[],
  precompiles: PrecompileTable,
): void {
  const sorted = [...overrides].sort((a, b) => Buffer.compare(a.address, b.address));
  const overridden = new Set(sorted.map((o) => Buffer.from(o.address).toString("hex")));
  const movedTo = new Set<string>();
  for (const o of sorted) {
    const key = Buffer.from(o.address).toString("hex");
    if (movedTo.has(key))
      fail("other", `account ${toChecksumAddress(o.address)} has already been overridden by a precompile`);
    const precompile = precompiles.has(o.address);
    if (o.movePrecompileToAddress !== undefined) {
      if (!precompile) fail("other", `account ${toChecksumAddress(o.address)} is not a precompile`);
      const dest = Buffer.from(o.movePrecompileToAddress).toString("hex");
      if (overridden.has(dest))
        fail("other", `account ${toChecksumAddress(o.movePrecompileToAddress)} is already overridden`);
      precompiles.move(o.address, o.movePrecompileToAddress);
      movedTo.add(dest);
    }
    // An overridden precompile is gone for the rest of the simulation (its account's code, if any, runs).
    if (precompile) precompiles.remove(o.address);
    if (o.state !== undefined && o.stateDiff !== undefined) {
      fail("other", `account ${toChecksumAddress(o.address)} has both 'state' and 'stateDiff'`);
    }
    const cur = state.storedAccount(o.address);
    let next = { ...cur, exists: true };
    if (o.nonce !== undefined) next = { ...next, nonce: o.nonce };
    if (o.balance !== undefined) next = { ...next, balance: o.balance };
    // `state` replaces the whole storage: a new incarnation hides every older slot.
    if (o.state !== undefined) next = { ...next, incarnation: next.incarnation + 1 };
    state.setStoredAccount(o.address, next);
    if (o.code !== undefined) state.setCode(o.address, o.code);
    for (const s of o.state ?? []) state.setStorageValue(o.address, setLengthLeft(s.slot, 32), stripZeros(s.value));
    for (const s of o.stateDiff ?? []) state.setStorageValue(o.address, setLengthLeft(s.slot, 32), stripZeros(s.value));
  }
}

/** Runs eth_simulateV1 on the state after `req.height`. Throws SimulationError (geth's errors). */
export function simulate(chain: SimulateChain, req: SimulateRequest): SimulatedBlock[] {
  checkSimulateLimits(req.blocks);
  const base = chain.header(req.height);
  if (base === undefined) fail("other", `header for height ${req.height} not found`);
  const planned = planChain(req.blocks, BigInt(req.height), base.timestamp);
  const state = new OverlayStateManager(chain.state(req.height));
  state.timeoutMs = req.timeoutMs;
  state.deadline = req.timeoutMs > 0 ? performance.now() + req.timeoutMs : undefined;
  let budget = req.gasCap === 0n ? MAX_UINT64 : req.gasCap;
  const tracer = new SimTracer(req.traceTransfers);
  const hashes = new Map<bigint, Uint8Array>();
  const blockHash = (n: bigint): Uint8Array => {
    if (n <= BigInt(req.height)) return chain.header(Number(n))?.hash ?? ZERO_HASH;
    return hashes.get(n) ?? ZERO_HASH;
  };
  const out: SimulatedBlock[] = [];
  // The chain has no blobs: the base block used no blob gas and has no excess.
  let parent = {
    number: BigInt(req.height),
    hash: base.hash,
    gasLimit: base.gasLimit,
    gasUsed: base.gasUsed,
    baseFee: base.baseFee,
    blobGasUsed: 0n,
    excessBlobGas: 0n,
  };
  let coinbase = base.coinbase;
  let gasLimit = base.gasLimit;
  for (const [bi, p] of planned.entries()) {
    const o = p.spec.blockOverrides ?? {};
    if (o.feeRecipient !== undefined) coinbase = o.feeRecipient;
    if (o.gasLimit !== undefined) gasLimit = o.gasLimit;
    // Without validation the base fee is 0 unless overridden (geth: a gas price below it would fail).
    let baseFee = o.baseFeePerGas;
    if (baseFee === undefined) {
      if (!req.validation) baseFee = 0n;
      else baseFee = bi === 0 ? chain.nextBaseFee(req.height) : calcBaseFee(parent);
    }
    const excess = parent.excessBlobGas + parent.blobGasUsed - TARGET_BLOB_GAS_PER_BLOCK;
    const excessBlobGas = excess > 0n ? excess : 0n;
    const prevRandao = o.prevRandao ?? ZERO_HASH;
    const beaconRoot = o.beaconRoot ?? ZERO_HASH;
    const difficulty = o.difficulty ?? 0n;
    const env = {
      number: p.number,
      timestamp: p.time,
      coinbase,
      gasLimit: gasLimit > MAX_UINT64 ? MAX_UINT64 : gasLimit,
      baseFee,
      prevRandao,
      blobBaseFee: o.blobBaseFee ?? blobBaseFeeOf(excessBlobGas),
      chainId: chain.chainId,
      blockHash,
    };
    // geth starts each block from the chain's precompiles, then applies that block's overrides.
    const precompiles = new PrecompileTable();
    applyStateOverrides(state, p.spec.stateOverrides ?? [], precompiles);
    // geth's pre-execution system calls, as their contracts store: EIP-4788's beacon root (when the
    // chain has the contract), then EIP-2935's parent hash.
    if (hasCode(state, BEACON_ROOTS_ADDRESS)) {
      const idx = p.time % SYSTEM_RING;
      state.setStorageValue(BEACON_ROOTS_ADDRESS, setLengthLeft(big(idx), 32), big(p.time));
      state.setStorageValue(BEACON_ROOTS_ADDRESS, setLengthLeft(big(idx + SYSTEM_RING), 32), stripZeros(beaconRoot));
    }
    if (hasCode(state, HISTORY_STORAGE_ADDRESS)) {
      const slot = setLengthLeft(big((p.number - 1n) % SYSTEM_RING), 32);
      state.setStorageValue(HISTORY_STORAGE_ADDRESS, slot, stripZeros(parent.hash));
    }
    tracer.startBlock(p.number, p.time);
    const txs: EvmTx[] = [];
    const txEncodings: Uint8Array[] = [];
    const receipts: Uint8Array[] = [];
    const calls: SimulatedCall[] = [];
    const blockLogs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[] = [];
    let used = 0n;
    let blobGasUsed = 0n;
    for (const [i, call] of p.spec.calls.entries()) {
      state.checkDeadline();
      const from = call.from ?? ZERO_ADDRESS;
      const nonce = call.nonce ?? state.storedAccount(from).nonce;
      const remaining = gasLimit - used;
      const asked = call.gas ?? remaining;
      if (remaining < asked) {
        fail("blockGasLimitReached", `block gas limit reached: remaining: ${remaining}, required: ${asked}`);
      }
      const gas = asked > budget ? budget : asked;
      const gasCapped = gas < asked;
      // geth CallDefaults.
      if (call.gasPrice !== undefined && (call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined)) {
        fail("other", "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified");
      }
      if (call.chainId !== undefined && call.chainId !== chain.chainId) {
        fail("other", `chainId does not match node's (have=${call.chainId}, want=${chain.chainId})`);
      }
      const value = call.value ?? 0n;
      const filled = {
        ...call,
        nonce,
        gas,
        value,
        ...(call.gasPrice === undefined
          ? { maxFeePerGas: call.maxFeePerGas ?? 0n, maxPriorityFeePerGas: call.maxPriorityFeePerGas ?? 0n }
          : {}),
      };
      const { tx, encoded } = buildTx(filled, chain.chainId, from);
      tracer.startTx(tx.hash, i);
      const r = applyMessage(state, filled, from, env, req.validation, tracer, precompiles);
      used += r.gasUsed;
      blobGasUsed += BigInt(call.blobVersionedHashes?.length ?? 0) * BLOB_GAS_PER_BLOB;
      if (r.gasUsed > budget) fail("other", `RPC gas cap exhausted: need ${r.gasUsed}, remaining ${budget}`);
      budget -= r.gasUsed;
      const logs = r.success ? r.logs : [];
      const bloom = logsBloom(logs);
      blockLogs.push(...logs);
      receipts.push(
        encodeReceiptForTrie({
          type: tx.type,
          status: r.success ? 1 : 0,
          cumulativeGasUsed: used,
          logsBloom: bloom,
          logs,
        }),
      );
      txs.push(tx);
      txEncodings.push(encoded);
      calls.push({
        status: r.success ? 1 : 0,
        returnData: r.returnData,
        gasUsed: r.gasUsed,
        maxUsedGas: r.maxUsedGas,
        logs: tracer.logs(),
        vmError: r.error,
        gasCapped,
      });
    }
    // Withdrawals (the beacon chain's post-transaction changes): amounts are in gwei.
    const withdrawals = [...(o.withdrawals ?? [])];
    for (const w of withdrawals) {
      const a = state.storedAccount(w.address);
      state.setStoredAccount(w.address, { ...a, exists: true, balance: a.balance + w.amount * GWEI });
    }
    const header = {
      parentHash: parent.hash,
      coinbase,
      // cometh has no Ethereum state trie (docs/compatibility.md): the state root is zero.
      stateRoot: ZERO_HASH,
      transactionsRoot: txEncodings.length === 0 ? EMPTY_TRIE_ROOT : orderedTrieRoot(txEncodings),
      receiptsRoot: receipts.length === 0 ? EMPTY_TRIE_ROOT : orderedTrieRoot(receipts),
      logsBloom: logsBloom(blockLogs),
      withdrawalsRoot:
        withdrawals.length === 0
          ? EMPTY_TRIE_ROOT
          : orderedTrieRoot(withdrawals.map((w) => RLP.encode(encodeWithdrawal(w)))),
    };
    const headerRlp = [
      header.parentHash,
      EMPTY_UNCLES_HASH,
      coinbase,
      header.stateRoot,
      header.transactionsRoot,
      header.receiptsRoot,
      header.logsBloom,
      big(difficulty),
      big(p.number),
      big(gasLimit),
      big(used),
      big(p.time),
      new Uint8Array(0),
      prevRandao,
      new Uint8Array(8),
      big(baseFee),
      header.withdrawalsRoot,
      big(blobGasUsed),
      big(excessBlobGas),
      beaconRoot,
      EMPTY_REQUESTS_HASH,
    ];
    const hash = keccak256(RLP.encode(headerRlp));
    // geth's Block.Size(): the RLP of [header, transactions, uncles, withdrawals]; typed txs as byte strings.
    const size = RLP.encode([
      headerRlp,
      txEncodings.map((e, k) => ((txs[k] as EvmTx).type === 0 ? RLP.decode(e) : e)) as Parameters<typeof RLP.encode>[0],
      [],
      withdrawals.map(encodeWithdrawal),
    ]).length;
    for (const c of calls) for (const l of c.logs) l.blockHash = hash;
    hashes.set(p.number, hash);
    out.push({
      number: p.number,
      hash,
      parentHash: parent.hash,
      timestamp: p.time,
      gasLimit,
      gasUsed: used,
      baseFeePerGas: baseFee,
      miner: coinbase,
      difficulty,
      mixHash: prevRandao,
      logsBloom: header.logsBloom,
      stateRoot: header.stateRoot,
      transactionsRoot: header.transactionsRoot,
      receiptsRoot: header.receiptsRoot,
      withdrawalsRoot: header.withdrawalsRoot,
      withdrawals,
      blobGasUsed,
      excessBlobGas,
      parentBeaconBlockRoot: beaconRoot,
      requestsHash: EMPTY_REQUESTS_HASH,
      size,
      transactions: txs,
      calls,
    });
    parent = { number: p.number, hash, gasLimit, gasUsed: used, baseFee, blobGasUsed, excessBlobGas };
  }
  return out;
}

interface MessageResult {
  success: boolean;
  gasUsed: bigint;
  maxUsedGas: bigint;
  returnData: Uint8Array;
  logs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
  error: string;
}

/**
 * geth's ApplyMessage for a simulated call (core/state_transition.go preCheck, buyGas, the intrinsic
 * and floor checks, the top frame's value check; the EOA check is always skipped), then the engine's
 * executeCall, then the gas refund and the coinbase's tip. Consensus errors throw SimulationError
 * with geth's text.
 */
function applyMessage(
  state: OverlayStateManager,
  c: SimulateCall & { nonce: bigint; gas: bigint; value: bigint },
  from: Uint8Array,
  env: Parameters<typeof executeCall>[2],
  validation: boolean,
  tracer: SimTracer,
  precompiles: PrecompileTable,
): MessageResult {
  const who = toChecksumAddress(from);
  const gas = c.gas;
  const legacy = c.gasPrice !== undefined;
  const feeCap = legacy ? (c.gasPrice as bigint) : (c.maxFeePerGas ?? 0n);
  const tipCap = legacy ? (c.gasPrice as bigint) : (c.maxPriorityFeePerGas ?? 0n);
  let gasPrice = feeCap;
  if (!legacy) {
    gasPrice = 0n;
    if (feeCap > 0n || tipCap > 0n) {
      gasPrice = tipCap + env.baseFee;
      if (gasPrice > feeCap) gasPrice = feeCap;
    }
  }
  const acct = state.storedAccount(from);
  if (validation) {
    if (acct.nonce < c.nonce)
      txFail("nonceTooHigh", `nonce too high: address ${who}, tx: ${c.nonce} state: ${acct.nonce}`, gas);
    if (acct.nonce > c.nonce)
      txFail("nonceTooLow", `nonce too low: address ${who}, tx: ${c.nonce} state: ${acct.nonce}`, gas);
    if (acct.nonce === MAX_UINT64) txFail("internal", `nonce has max value: address ${who}, nonce: ${acct.nonce}`, gas);
  }
  const skipFeeCheck = !validation && feeCap === 0n && tipCap === 0n;
  if (!skipFeeCheck) {
    if (feeCap < tipCap) {
      txFail(
        "invalidParams",
        `max priority fee per gas higher than max fee per gas: address ${who}, maxPriorityFeePerGas: ${tipCap}, maxFeePerGas: ${feeCap}`,
        gas,
      );
    }
    if (feeCap < env.baseFee) {
      txFail(
        "baseFeeTooLow",
        `max fee per gas less than block base fee: address ${who}, maxFeePerGas: ${feeCap}, baseFee: ${env.baseFee}`,
        gas,
      );
    }
  }
  const blobHashes = c.blobVersionedHashes;
  if (blobHashes !== undefined) {
    if (c.to === undefined) txFail("other", "blob transaction of type create", gas);
    if (blobHashes.length === 0) txFail("other", "blob transaction missing blob hashes", gas);
    for (const [i, h] of blobHashes.entries()) {
      if (h.length !== 32 || h[0] !== 0x01) txFail("other", `blob ${i} has invalid hash version`, gas);
    }
  }
  const blobGas = BigInt(blobHashes?.length ?? 0) * BLOB_GAS_PER_BLOB;
  const blobFeeCap = c.maxFeePerBlobGas ?? 0n;
  if (blobGas > 0n && !(!validation && blobFeeCap === 0n) && blobFeeCap < env.blobBaseFee) {
    txFail(
      "internal",
      `max fee per blob gas less than block blob gas fee: address ${who} blobGasFeeCap: ${blobFeeCap}, blobBaseFee: ${env.blobBaseFee}`,
      gas,
    );
  }
  if (c.authorizationList !== undefined) {
    if (c.to === undefined)
      txFail("other", `EIP-7702 transaction cannot be used to create contract (sender ${who})`, gas);
    if (c.authorizationList.length === 0)
      txFail("other", `EIP-7702 transaction with empty auth list (sender ${who})`, gas);
  }
  const data = c.data ?? new Uint8Array(0);
  if (c.to === undefined && data.length > MAX_INITCODE_SIZE) {
    txFail(
      "maxInitCodeSizeExceeded",
      `max initcode size exceeded: code size ${data.length} limit ${MAX_INITCODE_SIZE}`,
      gas,
    );
  }
  // buyGas: the balance must cover gas × fee cap + value (+ blob gas × blob fee cap); gas × price
  // (+ blob gas × blob base fee) is taken.
  const want = gas * feeCap + c.value + blobGas * blobFeeCap;
  if (acct.balance < want) {
    txFail(
      "insufficientFunds",
      `insufficient funds for gas * price + value: address ${who} have ${acct.balance} want ${want}`,
      gas,
    );
  }
  const accessList = (c.accessList ?? []).map((e) => ({
    address: e.address,
    storageKeys: e.storageKeys.map((k) => setLengthLeft(k, 32)),
  }));
  const authorizations = (c.authorizationList ?? []).map((a) =>
    recoverAuthorization({ ...a, yParity: BigInt(a.yParity) }),
  );
  const intrinsic = intrinsicGas(data, accessList, authorizations, c.to === undefined);
  state.setStoredAccount(from, { ...acct, balance: acct.balance - gas * gasPrice - blobGas * env.blobBaseFee });
  if (gas < intrinsic) txFail("intrinsicGas", `intrinsic gas too low: have ${gas}, want ${intrinsic}`, gas);
  const floor = floorDataGas(data);
  if (gas < floor) txFail("internal", `insufficient gas for floor data gas cost: have ${gas}, want ${floor}`, gas);
  if (c.value > 0n && state.storedAccount(from).balance < c.value) {
    txFail("insufficientFunds", `insufficient funds for transfer: address ${who}`, gas);
  }
  let r: ReturnType<typeof executeCall>;
  try {
    r = executeCall(
      state,
      {
        from,
        to: c.to,
        value: c.value,
        data,
        gasLimit: gas,
        gasPrice,
        accessList,
        authorizationList: authorizations,
        blobVersionedHashes: [...(blobHashes ?? [])],
      },
      env,
      "prague",
      {
        interrupt: () => state.checkDeadline(),
        hooks: tracer.hooks,
        precompiles: precompiles.at,
        extensions: COSMOS_PRECOMPILES,
      },
    );
  } catch (err) {
    if (err instanceof EngineTxError) txFail("internal", err.message, gas);
    throw err;
  }
  const after = state.storedAccount(from);
  // geth's nonces are uint64: a call from an account at 2^64-1 (no validation) wraps it to 0.
  const nonceAfter = after.nonce > MAX_UINT64 ? 0n : after.nonce;
  state.setStoredAccount(from, { ...after, nonce: nonceAfter, balance: after.balance + (gas - r.gasUsed) * gasPrice });
  const fee = skipFeeCheck ? 0n : r.gasUsed * (gasPrice - env.baseFee);
  if (fee > 0n) {
    const cb = state.storedAccount(env.coinbase);
    state.setStoredAccount(env.coinbase, { ...cb, exists: true, balance: cb.balance + fee });
  }
  const beforeRefund = intrinsic + tracer.topGasUsed;
  return {
    success: r.success,
    gasUsed: r.gasUsed,
    maxUsedGas: maxBig(beforeRefund, r.gasUsed),
    returnData: r.returnData,
    logs: r.logs.map((l) => ({ address: l.address, topics: l.topics, data: l.data })),
    error: r.error,
  };
}
