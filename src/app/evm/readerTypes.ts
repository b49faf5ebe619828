import type { EvmBlock, EvmLogRecord, EvmReceipt } from "./records.js";
import type { SimulatedBlock, SimulateRequest } from "./simulate.js";
import type { StateProof } from "./stateProof.js";
import type { EvmTracer } from "./tracer.js";

/**
 * What the Ethereum JSON-RPC server reads from the EVM app (the app's `reader`). Domain values only:
 * addresses/hashes are bytes, quantities bigint, heights number. Heights are CometBFT heights; the
 * genesis state is at `initial_height - 1` (0). Methods taking `height` default to the latest committed
 * height and throw StateUnavailableError outside [earliestStateHeight(), latestHeight()].
 */
export interface EvmReader {
  chainId(): bigint;
  /** Latest committed height (-1 before InitChain). */
  latestHeight(): number;
  /** Oldest height whose state is kept (pruning window). */
  earliestStateHeight(): number;

  account(address: Uint8Array, height?: number): EvmAccountView;
  balance(address: Uint8Array, height?: number): bigint;
  nonce(address: Uint8Array, height?: number): bigint;
  code(address: Uint8Array, height?: number): Uint8Array;
  /** 32-byte value of a storage slot (slot given as up to 32 bytes). */
  storageAt(address: Uint8Array, slot: Uint8Array, height?: number): Uint8Array;
  /**
   * EIP-1186 account and storage proofs after `height` (slots as up to 32 bytes), against the state
   * trie built for that height (see stateProof.ts).
   */
  proof(address: Uint8Array, slots: readonly Uint8Array[], height?: number): Promise<StateProof>;
  /** Committed nonce + txs of this sender admitted to the mempool since (eth_getTransactionCount "pending"). */
  pendingNonce(address: Uint8Array): bigint;

  /**
   * eth_call: runs `args` on the state after `height`, in that block's context, without committing.
   * Reverts and EVM failures are results (status), not exceptions; EvmCallError for calls that cannot
   * start (insufficient funds for gas * price + value, intrinsic gas, fee below base fee),
   * EvmCallTimeoutError past `timeoutMs`.
   */
  call(args: CallArgs, opts?: CallOptions): Promise<CallResult>;
  /**
   * `call` on this thread, returning its result synchronously: the same memo, checks and errors, and
   * the deadline `opts.timeoutMs` enforced by the engine itself (no timer can fire while it runs).
   */
  callNow(args: CallArgs, opts?: CallOptions): CallResult;
  /** The result `call` would give, when it is already known (memoized at that height); never executes. */
  peekCall(args: CallArgs, opts?: CallOptions): CallResult | undefined;
  /**
   * Keeps a result `call` computed elsewhere (a read worker, readPool.ts) as if it had run here, so
   * peekCall and call answer it from now on (when `call` would have memoized it).
   */
  keepCall(args: CallArgs, opts: CallOptions, result: CallResult): void;
  /** Forgets memoized results (a dev chain rolled back: heights are reused). */
  forgetResults(): void;
  /**
   * eth_estimateGas: geth's binary search for the least gas limit that succeeds (plain transfers →
   * 21000). GasEstimationError when no limit up to the cap works (revertData set when it reverted).
   */
  estimateGas(args: CallArgs, opts?: CallOptions): Promise<bigint>;
  /** eth_createAccessList: the accounts and slots the call touches (geth's AccessList), and its gas. */
  createAccessList(
    args: CallArgs,
    opts?: CallOptions,
  ): Promise<{ accessList: AccessListEntry[]; gasUsed: bigint; error?: string }>;

  /** The EVM view of a committed block, or undefined (genesis, pruned by nothing: blocks are kept). */
  block(height: number): EvmBlock | undefined;
  /** A committed block's hash and timestamp only (no transaction/receipt roots computed): for receipts and logs. */
  blockStamp(height: number): { readonly hash: Uint8Array; readonly timestamp: bigint } | undefined;
  blockByHash(hash: Uint8Array): EvmBlock | undefined;
  /** Receipts of the block's executed EVM txs, in order (cumulativeGasUsed is block-wide). */
  receipts(height: number): EvmReceipt[];
  receiptByHash(ethTxHash: Uint8Array): EvmReceipt | undefined;
  /** Where a committed Ethereum tx is: height and index among the block's EVM txs. */
  txLocation(ethTxHash: Uint8Array): { height: number; index: number } | undefined;
  /** A committed tx decoded (with sender and location). */
  transaction(ethTxHash: Uint8Array): EvmTxView | undefined;
  /** Decodes raw tx bytes (e.g. from the mempool) without location; throws InvalidEthTxError. */
  decodeTransaction(raw: Uint8Array): EvmTxView;
  /** Logs in [fromHeight, toHeight] matching the filter (block blooms skip blocks); stops after `limit`. */
  logs(filter: LogFilter): EvmLogView[];
  /** Base fee (wei) of the block at `height`; for latest+1, the base fee the next block will have. */
  baseFee(height: number): bigint | undefined;
  /** Base fee the next block will use. */
  nextBaseFee(): bigint;
  /** Gas used by the block at `height` (after Cosmos EVM's min-gas-multiplier floor). */
  gasUsed(height: number): bigint | undefined;

  /**
   * eth_simulateV1: simulated blocks on the state after `req.height` (simulate.ts). Runs on the calling
   * thread; throws SimulationError with geth's errors, StateUnavailableError outside the kept window.
   */
  simulate(req: SimulateRequest): SimulatedBlock[];

  /** Replays the block up to the tx and runs it with `tracer` attached; returns the tracer's result. */
  traceTransaction<T>(ethTxHash: Uint8Array, tracer: EvmTracer<T>, opts?: { timeoutMs?: number }): Promise<T>;
  /** A call with `tracer` attached. */
  traceCall<T>(args: CallArgs, tracer: EvmTracer<T>, opts?: CallOptions): Promise<T>;
}

export interface EvmAccountView {
  exists: boolean;
  nonce: bigint;
  balance: bigint;
  codeHash: Uint8Array;
}

/** One access-list entry (EIP-2930). */
export interface AccessListEntry {
  readonly address: Uint8Array;
  readonly storageKeys: readonly Uint8Array[];
}

/** One EIP-7702 authorization tuple. */
export interface AuthorizationView {
  readonly chainId: bigint;
  readonly address: Uint8Array;
  readonly nonce: bigint;
  readonly yParity: number;
  readonly r: bigint;
  readonly s: bigint;
}

/** eth_call/eth_estimateGas arguments (geth TransactionArgs, decoded). */
export interface CallArgs {
  from?: Uint8Array;
  to?: Uint8Array;
  gas?: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  value?: bigint;
  data?: Uint8Array;
  accessList?: AccessListEntry[];
  authorizationList?: AuthorizationView[];
}

/** geth state override for one account; `state` replaces all storage, `stateDiff` patches slots. */
export interface StateOverride {
  address: Uint8Array;
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  state?: { slot: Uint8Array; value: Uint8Array }[];
  stateDiff?: { slot: Uint8Array; value: Uint8Array }[];
}

/** The block context fields a call may override (geth's BlockOverrides as debug_traceCall applies them). */
export interface CallBlockOverrides {
  number?: bigint;
  /** Unix seconds. */
  time?: bigint;
  gasLimit?: bigint;
  coinbase?: Uint8Array;
  prevRandao?: Uint8Array;
  baseFee?: bigint;
  blobBaseFee?: bigint;
}

export interface CallOptions {
  /** State after this height and that block's context; default latest. */
  height?: number;
  overrides?: StateOverride[];
  /** The block context's fields replaced (debug_traceCall's blockOverrides). */
  block?: CallBlockOverrides;
  /** Gas cap (`[json-rpc] gas-cap`); 0 = none; default 25 000 000. */
  gasCap?: bigint;
  /** `evm-timeout`; 0 = none; default 5000. */
  timeoutMs?: number;
  /** Dev chains: do not report this run's console.log lines (eth_estimateGas's search runs). */
  quietConsole?: boolean;
}

export interface CallResult {
  status: "success" | "reverted" | "failed";
  /** Return data, or the revert data. */
  returnData: Uint8Array;
  /** EVM gas used, after refunds (no min-gas-multiplier floor). */
  gasUsed: bigint;
  /** "" on success; geth's text otherwise ("execution reverted", "out of gas", ...). */
  vmError: string;
  logs: { address: Uint8Array; topics: Uint8Array[]; data: Uint8Array }[];
}

export interface LogFilter {
  fromHeight: number;
  toHeight: number;
  /** Any of these emitters; empty/undefined = any. */
  addresses?: Uint8Array[];
  /** Positional: each entry null (any) or alternatives. */
  topics?: (Uint8Array[] | null)[];
  /** Stop after this many logs (logs-cap); the caller decides whether that is an error. */
  limit?: number;
}

export interface EvmLogView extends EvmLogRecord {
  height: number;
  blockHash: Uint8Array;
  /** Block time, Unix seconds. */
  blockTimestamp: bigint;
  txHash: Uint8Array;
  txIndex: number;
}

/**
 * A signed Ethereum transaction, decoded: the one transaction type of the app's reader and of the
 * Ethereum JSON-RPC (rpc/evm/services.ts takes it from here), handed from one to the other as is.
 * An optional field may be absent or undefined; both mean the tx has no such field.
 */
export interface EvmTx {
  /** keccak256 of the signed encoding (the Ethereum tx hash). */
  readonly hash: Uint8Array;
  /** 0 legacy, 1 EIP-2930, 2 EIP-1559, 3 EIP-4844, 4 EIP-7702. */
  readonly type: number;
  /** Recovered sender. */
  readonly from: Uint8Array;
  /** Undefined for contract creation. */
  readonly to: Uint8Array | undefined;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  readonly value: bigint;
  readonly input: Uint8Array;
  /** Types 0 and 1. */
  readonly gasPrice?: bigint | undefined;
  /** Types 2, 3 and 4. */
  readonly maxFeePerGas?: bigint | undefined;
  readonly maxPriorityFeePerGas?: bigint | undefined;
  /** Undefined for an unprotected (pre-EIP-155) legacy tx. */
  readonly chainId: bigint | undefined;
  /** Types 1, 2 and 4. */
  readonly accessList?: readonly AccessListEntry[] | undefined;
  /** Type 4. */
  readonly authorizationList?: readonly AuthorizationView[] | undefined;
  /** Type 3 (never admitted by this app). */
  readonly maxFeePerBlobGas?: bigint | undefined;
  readonly blobVersionedHashes?: readonly Uint8Array[] | undefined;
  /** Legacy: 27/28 or chainId·2+35/36; typed: the y parity (0/1). */
  readonly v: bigint;
  readonly r: bigint;
  readonly s: bigint;
}

/** A transaction as the reader decodes it: the tx, its signed bytes and, once committed, where it is. */
export interface EvmTxView extends EvmTx {
  readonly raw: Uint8Array;
  /** Committed txs only. */
  location: { height: number; index: number; blockHash: Uint8Array } | undefined;
}
