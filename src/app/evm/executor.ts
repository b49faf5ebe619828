import { type Common, createCustomCommon, Hardfork, Mainnet } from "@ethereumjs/common";
import { paramsTx } from "@ethereumjs/tx";
import {
  type BlockEnv,
  createAddress,
  type EngineHooks,
  type EngineTx,
  EngineTxError,
  executeTx,
  recoverAuthorization,
  type TxResult,
} from "../../evm/index.js";
import { bytesToHex } from "../../util/bytes.js";
import { COSMOS_PRECOMPILES } from "./cosmosPrecompiles.js";
import { ecrecover, keccak256 } from "./crypto.js";
import { CHECK_TX_CODES, InvalidEthTxError } from "./errors.js";
import { DEC_ONE } from "./feeMarket.js";
import { HISTORY_SERVE_WINDOW, HISTORY_STORAGE_ADDRESS } from "./genesis.js";
import { CONSOLE_ADDRESS, formatConsoleLog } from "./hardhatConsole.js";
import { bytesToBigint, type EvmLog, equalBytes, KECCAK256_NULL, setLengthLeft, u64be } from "./records.js";
import type { StateReader } from "./stateDb.js";
import { OverlayStateManager } from "./stateManager.js";
import { type DecodedTx, effectiveGasPrice } from "./txDecode.js";

/** Block-level values the EVM sees (BlockContext). */
export interface ExecBlockContext {
  height: number;
  /** Unix seconds. */
  timestamp: bigint;
  coinbase: Uint8Array;
  baseFee: bigint;
  /** GASLIMIT: block.max_gas, or 2^64-1 when unlimited (Cosmos EVM BlockGasLimit). */
  gasLimit: bigint;
  /** CometBFT block hash of this height (written to the EIP-2935 contract). */
  hash: Uint8Array;
  /** PREVRANDAO, when a call overrides it (otherwise Cosmos EVM's MaxHash). */
  prevRandao?: Uint8Array;
  /** BLOBBASEFEE, when a call overrides it (otherwise 1: the chain takes no blobs). */
  blobBaseFee?: bigint;
}

/** Outcome of one tx in a block: rejected before execution, or executed (success or EVM failure). */
export type TxOutcome =
  | { kind: "invalid"; error: InvalidEthTxError }
  | {
      kind: "executed";
      status: 0 | 1;
      /** Gas charged: EVM gas after refunds, raised to gasLimit·min_gas_multiplier. */
      gasUsed: bigint;
      cumulativeGasUsed: bigint;
      effectiveGasPrice: bigint;
      logs: EvmLog[];
      logsBloom: Uint8Array;
      contractAddress: Uint8Array | undefined;
      returnData: Uint8Array;
      vmError: string;
    };

/** PREVRANDAO/DIFFICULTY: Cosmos EVM sets Random to common.MaxHash. */
const MAX_HASH = new Uint8Array(32).fill(0xff);
const MAX_UINT64 = (1n << 64n) - 1n;
const DELEGATION_PREFIX = Uint8Array.of(0xef, 0x01, 0x00);

/**
 * KZG point evaluation (0x0a) needs a trusted-setup KZG library, which the app does not ship: the
 * stub makes the precompile fail (consume the gas and revert), deterministically.
 */
const NO_KZG = {
  blobToKzgCommitment: unavailable,
  computeBlobProof: unavailable,
  verifyProof: unavailable,
  verifyBlobProofBatch: unavailable,
  computeCells: unavailable,
  computeCellsAndProofs: unavailable,
  recoverCellsAndProofs: unavailable,
  verifyCellKzgProofBatch: unavailable,
};
function unavailable(): never {
  throw new RangeError("KZG is not available in this node");
}

/** ethereumjs Common for the chain: Prague, chain id, native ecrecover. */
export function createEvmCommon(chainId: bigint): Common {
  return createCustomCommon({ chainId: Number(chainId) }, Mainnet, {
    hardfork: Hardfork.Prague,
    customCrypto: { ecrecover, keccak256, kzg: NO_KZG },
  });
}

/**
 * A Common for decoding txs. ethereumjs copies the Common into every tx and re-merges the tx params
 * into it (Common.updateParams, ~50µs per tx, the largest cost of decoding): this one carries the tx
 * params already and ignores further merges. Its copy is itself: a copy is a new object with an
 * EventEmitter of its own (about half of what building a tx object still cost, measured 50 → 26 µs a
 * type-2 tx), and nothing changes a tx's Common after it is built (no hardfork switch, no listeners).
 * Not for VMs or blocks.
 */
export function createTxCommon(chainId: bigint): Common {
  const common = createEvmCommon(chainId);
  common.updateParams(paramsTx);
  Object.defineProperty(common, "updateParams", { value: () => {}, enumerable: true, writable: true });
  Object.defineProperty(common, "copy", { value: () => common, enumerable: true, writable: true });
  return common;
}

export function isDelegation(code: Uint8Array): boolean {
  return code.length === 23 && equalBytes(code.subarray(0, 3), DELEGATION_PREFIX);
}

/**
 * Runs a block's txs on cometh's EVM (engine/) over an OverlayStateManager: the pre-execution checks
 * Cosmos EVM's ante handlers make (as ABCI failures that leave state untouched), executeTx, then the
 * min gas multiplier charge. Used by FinalizeBlock and by replays (tracing).
 */
export class TxExecutor {
  readonly overlay: OverlayStateManager;
  readonly chainId: bigint;
  readonly #blockHash: (n: bigint) => Uint8Array;
  #ctx: ExecBlockContext | undefined;
  #env: BlockEnv | undefined;
  #minGasMultiplier = 0n;
  gasUsed = 0n;
  gasWanted = 0n;
  /** Dev chains: the console.log lines (Hardhat's console) of the runs since the last take, or undefined when off. */
  #consoleLogs: string[] | undefined;
  #consoleHooks: EngineHooks | undefined;

  /** `blockHash(n)`: BLOCKHASH, the stored CometBFT hash of height n (zero bytes when unknown). */
  constructor(chainId: bigint, base: StateReader, blockHash: (n: bigint) => Uint8Array) {
    this.overlay = new OverlayStateManager(base);
    this.chainId = chainId;
    this.#blockHash = blockHash;
  }

  /** Dev chains: records Hardhat console.log calls (to 0x…636F6e736F6c652e6c6f67) as text, for takeConsoleLogs. */
  enableConsoleLog(): void {
    if (this.#consoleLogs !== undefined) return;
    const lines: string[] = [];
    this.#consoleLogs = lines;
    this.#consoleHooks = consoleLogHooks(lines);
  }

  /** The console.log lines recorded since the last take (empty when not enabled). */
  takeConsoleLogs(): string[] {
    const lines = this.#consoleLogs;
    if (lines === undefined || lines.length === 0) return [];
    return lines.splice(0);
  }

  /** The block the txs run in (after begin). */
  get env(): BlockEnv {
    if (this.#env === undefined) throw new RangeError("TxExecutor.begin was not called");
    return this.#env;
  }

  /** The console.log hooks (undefined until enableConsoleLog). */
  get consoleHooks(): EngineHooks | undefined {
    return this.#consoleHooks;
  }

  /**
   * Starts a block on `base`: fresh overlay, block context, and (unless `writeHistory` is false, as for
   * calls on a committed height, whose state already holds it) the EIP-2935 hash write.
   */
  begin(ctx: ExecBlockContext, base: StateReader, minGasMultiplier: bigint, writeHistory = true): void {
    this.overlay.reset(base);
    this.#ctx = ctx;
    this.#env = blockEnvOf(ctx, this.chainId, this.#blockHash);
    this.#minGasMultiplier = minGasMultiplier;
    this.gasUsed = 0n;
    this.gasWanted = 0n;
    if (!writeHistory) return;
    // Cosmos EVM BeginBlock (SetHeaderHash): the current block's hash at slot height % window of the
    // history contract, when the contract is installed.
    const history = this.overlay.storedAccount(HISTORY_STORAGE_ADDRESS);
    if (history.exists && !equalBytes(history.codeHash, KECCAK256_NULL) && ctx.hash.length === 32) {
      const slot = setLengthLeft(u64be(ctx.height % HISTORY_SERVE_WINDOW), 32);
      this.overlay.setStorageValue(HISTORY_STORAGE_ADDRESS, slot, ctx.hash);
    }
  }

  /** Checks and runs one tx (`hooks`: a tracer's); state changes stay in the overlay. */
  apply(d: DecodedTx, hooks?: EngineHooks): TxOutcome {
    const ctx = this.#ctx;
    if (ctx === undefined) throw new RangeError("TxExecutor.begin was not called");
    const check = this.precheck(d, ctx);
    if (check !== undefined) return { kind: "invalid", error: check };
    let r: TxResult;
    try {
      r = executeTx(this.overlay, engineTxOf(d), this.env, "prague", {
        hooks: joinHooks(hooks, this.#consoleHooks),
        impersonated: d.impersonated === true,
        extensions: COSMOS_PRECOMPILES,
        interrupt: this.overlay.deadline === undefined ? undefined : () => this.overlay.checkDeadline(),
      });
    } catch (err) {
      if (!(err instanceof EngineTxError)) throw err;
      return {
        kind: "invalid",
        error: new InvalidEthTxError(CHECK_TX_CODES.txDecode, `failed to apply transaction: ${err.message}`, {
          cause: err,
        }),
      };
    }
    const price = effectiveGasPrice(d, ctx.baseFee);
    const gasUsed = this.#chargeFloor(d, ctx, r.gasUsed, price);
    const logs: EvmLog[] = r.success ? r.logs.map((l) => ({ address: l.address, topics: l.topics, data: l.data })) : [];
    return {
      kind: "executed",
      status: r.success ? 1 : 0,
      gasUsed,
      cumulativeGasUsed: this.gasUsed,
      effectiveGasPrice: price,
      logs,
      logsBloom: logsBloom(logs),
      contractAddress: d.to === undefined ? createAddress(d.from, d.nonce) : undefined,
      returnData: r.returnData,
      vmError: r.error,
    };
  }

  /**
   * Cosmos EVM charges at least gasLimit·min_gas_multiplier (state_transition.go ApplyMessageWithConfig);
   * counts the tx into the block's gas. Returns the gas charged.
   */
  #chargeFloor(d: DecodedTx, ctx: ExecBlockContext, spent: bigint, price: bigint): bigint {
    let gasUsed = spent;
    const floor = (d.gasLimit * this.#minGasMultiplier) / DEC_ONE;
    if (floor > gasUsed) {
      const extra = floor - gasUsed;
      const sender = this.overlay.storedAccount(d.from);
      this.overlay.setStoredAccount(d.from, { ...sender, balance: sender.balance - extra * price });
      const tip = (price - ctx.baseFee) * extra;
      if (tip > 0n) {
        const cb = this.overlay.storedAccount(ctx.coinbase);
        this.overlay.setStoredAccount(ctx.coinbase, { ...cb, exists: true, balance: cb.balance + tip });
      }
      gasUsed = floor;
    }
    this.gasUsed += gasUsed;
    this.gasWanted += d.gasLimit;
    return gasUsed;
  }

  /** Cosmos EVM ante checks against the block's current state; undefined when the tx may run. */
  precheck(d: DecodedTx, ctx: ExecBlockContext): InvalidEthTxError | undefined {
    const left = ctx.gasLimit - this.gasUsed;
    if (d.gasLimit > left) {
      return new InvalidEthTxError(
        CHECK_TX_CODES.outOfGas,
        `out of gas in location: block gas meter; tx gas ${d.gasLimit} exceeds the ${left} gas left in block ${ctx.height}`,
      );
    }
    if (d.maxFeePerGas < ctx.baseFee) {
      return new InvalidEthTxError(
        CHECK_TX_CODES.insufficientFee,
        `max fee per gas less than block base fee (${d.maxFeePerGas} < ${ctx.baseFee}): insufficient fee`,
      );
    }
    const acct = this.overlay.storedAccount(d.from, d.fromHex);
    if (d.impersonated !== true && acct.exists && !equalBytes(acct.codeHash, KECCAK256_NULL)) {
      if (!isDelegation(this.overlay.codeByHash(acct.codeHash))) {
        return new InvalidEthTxError(CHECK_TX_CODES.invalidType, `sender not an eoa: address 0x${d.fromHex}`);
      }
    }
    if (d.nonce !== acct.nonce) {
      return new InvalidEthTxError(
        CHECK_TX_CODES.invalidSequence,
        d.nonce < acct.nonce
          ? `nonce too low: next nonce ${acct.nonce}, tx nonce ${d.nonce}`
          : `nonce too high: next nonce ${acct.nonce}, tx nonce ${d.nonce}`,
      );
    }
    if (acct.balance < d.cost) {
      return new InvalidEthTxError(
        CHECK_TX_CODES.insufficientFunds,
        `insufficient funds for gas * price + value: address 0x${d.fromHex} have ${acct.balance} want ${d.cost}`,
      );
    }
    return undefined;
  }
}

/** The block a context describes, as the engine runs it (PREVRANDAO is Cosmos EVM's MaxHash). */
export function blockEnvOf(ctx: ExecBlockContext, chainId: bigint, blockHash: (n: bigint) => Uint8Array): BlockEnv {
  return {
    number: BigInt(ctx.height),
    timestamp: ctx.timestamp,
    coinbase: ctx.coinbase,
    gasLimit: ctx.gasLimit > MAX_UINT64 ? MAX_UINT64 : ctx.gasLimit,
    baseFee: ctx.baseFee,
    prevRandao: ctx.prevRandao ?? MAX_HASH,
    blobBaseFee: ctx.blobBaseFee ?? 1n,
    chainId,
    blockHash,
  };
}

/** A decoded tx as the engine runs it (7702 authorities recovered here). */
export function engineTxOf(d: DecodedTx): EngineTx {
  const tx = d.tx;
  return {
    type: d.type,
    from: d.from,
    to: d.to,
    nonce: d.nonce,
    gasLimit: d.gasLimit,
    value: d.value,
    data: tx.data,
    maxFeePerGas: d.maxFeePerGas,
    maxPriorityFeePerGas: d.maxPriorityFeePerGas,
    accessList: "accessList" in tx ? tx.accessList.map(([address, keys]) => ({ address, storageKeys: keys })) : [],
    blobVersionedHashes: [],
    maxFeePerBlobGas: 0n,
    authorizationList:
      "authorizationList" in tx
        ? tx.authorizationList.map(([chainId, address, nonce, yParity, r, s]) =>
            recoverAuthorization({
              chainId: bytesToBigint(chainId),
              address,
              nonce: bytesToBigint(nonce),
              yParity: bytesToBigint(yParity),
              r: bytesToBigint(r),
              s: bytesToBigint(s),
            }),
          )
        : [],
  };
}

/** Hooks that record Hardhat console.log calls into `lines`. */
export function consoleLogHooks(lines: string[]): EngineHooks {
  const record = (input: Uint8Array): void => {
    const text = formatConsoleLog(input);
    if (text !== undefined) lines.push(text);
  };
  // A watched address rather than onEnter: onEnter would send every frame of every call through the
  // engine's traced path.
  return { watch: new Map([[Buffer.from(CONSOLE_ADDRESS).toString("hex"), record]]) };
}

/** Both hook sets (either may be undefined). */
export function joinHooks(a: EngineHooks | undefined, b: EngineHooks | undefined): EngineHooks | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const out: EngineHooks = { ...a };
  for (const k of Object.keys(b) as (keyof EngineHooks)[]) {
    if (k === "watch") {
      out.watch = new Map([...(a.watch ?? []), ...(b.watch ?? [])]);
      continue;
    }
    const fa = a[k] as ((...args: unknown[]) => void) | undefined;
    const fb = b[k] as (...args: unknown[]) => void;
    (out as Record<string, unknown>)[k] =
      fa === undefined
        ? fb
        : (...args: unknown[]) => {
            fa(...args);
            fb(...args);
          };
  }
  return out;
}

/**
 * The three bloom bits of each value seen lately (addresses and topics repeat across a block's logs:
 * a token's address, its Transfer topic, its holders), as bit indexes; each costs a keccak otherwise.
 */
const bloomBits = new Map<string, [number, number, number]>();
const BLOOM_BITS_KEPT = 20_000;

function bloomBitsOf(v: Uint8Array): [number, number, number] {
  const key = bytesToHex(v);
  let bits = bloomBits.get(key);
  if (bits === undefined) {
    const h = keccak256(v);
    const bit = (i: number) => (((h[i] as number) << 8) | (h[i + 1] as number)) & 2047;
    bits = [bit(0), bit(2), bit(4)];
    if (bloomBits.size >= BLOOM_BITS_KEPT) bloomBits.clear();
    bloomBits.set(key, bits);
  }
  return bits;
}

function addToBloom(bloom: Uint8Array, v: Uint8Array): void {
  for (const bit of bloomBitsOf(v)) bloom[255 - (bit >> 3)] = (bloom[255 - (bit >> 3)] as number) | (1 << (bit & 7));
}

/** The logs bloom of a tx's logs (yellow paper: three 11-bit indexes of keccak per address and topic). */
export function logsBloom(logs: readonly EvmLog[]): Uint8Array {
  const bloom = new Uint8Array(256);
  for (const l of logs) {
    addToBloom(bloom, l.address);
    for (const t of l.topics) addToBloom(bloom, t);
  }
  return bloom;
}
