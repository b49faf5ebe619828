import type {
  AccessListEntry,
  AuthorizationView as Authorization,
  EvmTx,
  SimulateBlockOverrides,
  SimulateBlockSpec,
  SimulatedBlock,
  SimulatedCall,
  SimulatedLog,
  SimulationFailure,
} from "../../app/evm/index.js";
import { ComethError } from "../../util/errors.js";
import type { UnsignedTx } from "./tx/buildTx.js";
/**
 * What the EVM JSON-RPC server needs from the node, and nothing more. Structural interfaces in
 * domain terms: wei and gas are `bigint`, bytes/hashes/addresses are `Uint8Array` (32-byte hashes,
 * 20-byte addresses), heights and indexes are `number`. node/ adapts the EVM application, the block
 * store, the mempool and the event bus to these shapes; rpc/evm never sees wire formats from them.
 *
 * Reads may answer synchronously or with a promise (`Awaitable`). A read that cannot be served
 * (pruned state, a storage failure) throws; its message reaches the client as a -32000 error, so
 * word it the way geth does ("missing trie node …", "nonce too low: …").
 */

export type Awaitable<T> = T | Promise<T>;

export interface EvmServices {
  chain: ChainReader;
  state: StateReader;
  execution: Executor;
  mempool: MempoolAccess;
  fees: FeeOracle;
  events: EvmEventSource;
  node: NodeInfoSource;
  /** Absent: debug_trace* answer "tracing is not available on this node". */
  tracer?: Tracer;
  /** Absent: eth_accounts is `[]` and signing methods answer "no dev keyring". */
  keyring?: DevKeyring;
  /** Absent: admin_addPeer/removePeer answer false, admin_peers is `[]`. */
  p2p?: PeerControl;
  /** Absent: miner_setEtherbase and miner_setGasPrice answer false. */
  miner?: MinerControl;
  /** A dev chain's controls (`cometh dev`). Absent: every evm_/hardhat_/anvil_ method answers -32601. */
  dev?: DevControl;
}

// ---------------------------------------------------------------------------------------------
// Chain data

/**
 * The transaction, its access-list entries and EIP-7702 authorizations are the EVM app's own types
 * (app/evm/readerTypes.ts), declared once: node/ hands the app's decoded txs to the RPC unchanged.
 * So are eth_simulateV1's blocks, calls and results (app/evm/simulate.ts).
 */
export type {
  AccessListEntry,
  Authorization,
  EvmTx,
  SimulateBlockSpec,
  SimulatedBlock,
  SimulatedCall,
  SimulatedLog,
  SimulationFailure,
};

/** Ethereum transaction type numbers. */
export const TX_TYPE = { legacy: 0, accessList: 1, dynamicFee: 2, blob: 3, setCode: 4 } as const;

/** Where a mined transaction sits. */
export interface TxLocation {
  readonly blockHash: Uint8Array;
  readonly blockNumber: number;
  /** Unix seconds of the block. */
  readonly blockTimestamp: number;
  /** Position among the block's EVM transactions. */
  readonly index: number;
  /** The block's base fee, for the effective gas price of EIP-1559 txs. */
  readonly baseFeePerGas: bigint | undefined;
}

/**
 * A committed block seen as an Ethereum block. `hash` is the CometBFT block hash (32 bytes) and
 * `number` the CometBFT height, so that the hash in newHeads, eth_getBlockBy* and receipts agree.
 */
export interface EvmBlock {
  readonly number: number;
  readonly hash: Uint8Array;
  /** Zero hash for the first block. */
  readonly parentHash: Uint8Array;
  /** Unix seconds. */
  readonly timestamp: number;
  readonly gasLimit: bigint;
  readonly gasUsed: bigint;
  /** Undefined when the block has no EIP-1559 base fee. */
  readonly baseFeePerGas: bigint | undefined;
  /** 20-byte fee recipient (the proposer's account). */
  readonly miner: Uint8Array;
  /** 256 bytes: OR of the receipts' blooms. */
  readonly logsBloom: Uint8Array;
  readonly stateRoot: Uint8Array;
  readonly transactionsRoot: Uint8Array;
  readonly receiptsRoot: Uint8Array;
  /** Byte size of the block (RLP length of the synthesized Ethereum block). */
  readonly size: number;
  /** Defaults to empty. */
  readonly extraData?: Uint8Array;
  /** The block's EVM transactions in order. */
  readonly transactions: readonly EvmTx[];
}

/** One log as stored with its receipt. */
export interface EvmLog {
  readonly address: Uint8Array;
  /** 0 to 4 32-byte topics. */
  readonly topics: readonly Uint8Array[];
  readonly data: Uint8Array;
  readonly blockNumber: number;
  readonly blockHash: Uint8Array;
  readonly blockTimestamp: number;
  readonly transactionHash: Uint8Array;
  readonly transactionIndex: number;
  /** Block-wide index among the block's logs. */
  readonly logIndex: number;
}

/** A transaction receipt. */
export interface EvmReceipt {
  readonly transactionHash: Uint8Array;
  readonly transactionIndex: number;
  readonly blockHash: Uint8Array;
  readonly blockNumber: number;
  readonly from: Uint8Array;
  readonly to: Uint8Array | undefined;
  readonly type: number;
  /** 1 success, 0 failure. */
  readonly status: 0 | 1;
  readonly gasUsed: bigint;
  /** Sum of gasUsed of this and every earlier EVM tx in the block. */
  readonly cumulativeGasUsed: bigint;
  readonly effectiveGasPrice: bigint;
  /** Set for contract creations. */
  readonly contractAddress: Uint8Array | undefined;
  readonly logs: readonly EvmLog[];
  readonly logsBloom: Uint8Array;
}

/** A log query over a height range, already resolved to numbers and validated against the caps. */
export interface LogQuery {
  readonly fromBlock: number;
  readonly toBlock: number;
  /** Any of these emitters; empty = any address. */
  readonly addresses: readonly Uint8Array[];
  /**
   * Positional topic criteria: position i matches when `null` (wildcard) or when the log's topic i
   * is one of the listed hashes. A log with fewer topics than criteria never matches.
   */
  readonly topics: readonly (readonly Uint8Array[] | null)[];
  /** Stop after this many matches (the RPC then reports logs-cap exceeded). */
  readonly limit: number;
}

/** Blocks, transactions, receipts and logs of the committed chain. */
export interface ChainReader {
  /** The latest committed height (eth_blockNumber); 0 before the first block. */
  latestHeight(): number;
  /** The lowest height whose block is kept (above 1 once min-retain-blocks pruned older ones). */
  earliestHeight?(): number;
  /**
   * The block at `number`. Number 0 is the genesis block (`earliest`): the node may synthesize it
   * from the genesis state, or answer undefined when it cannot.
   */
  blockByNumber(number: number): Awaitable<EvmBlock | undefined>;
  blockByHash(hash: Uint8Array): Awaitable<EvmBlock | undefined>;
  /**
   * The number of the block with this hash, when the node can tell it without building the block (a
   * read process); absent: block parameters by hash read `blockByHash(hash).number`.
   */
  blockNumberByHash?(hash: Uint8Array): number | undefined;
  /** A mined transaction and its location. */
  transactionByHash(hash: Uint8Array): Awaitable<{ tx: EvmTx; location: TxLocation } | undefined>;
  receiptByHash(hash: Uint8Array): Awaitable<EvmReceipt | undefined>;
  /** Every receipt of the block in order; undefined when the block is unknown. */
  blockReceipts(number: number): Awaitable<readonly EvmReceipt[] | undefined>;
  /** Logs matching the query exactly, in chain order (block, then log index); at most `limit`. */
  logs(query: LogQuery): Awaitable<readonly EvmLog[]>;
  /**
   * Dev chains forked from another chain: the source's own JSON answer to a request about what
   * only it holds (a block, transaction or receipt from before the fork, looked up by hash);
   * undefined when the chain is not a fork. Throws (-32000) when the source cannot be reached.
   */
  fromForkSource?(method: string, params: unknown[]): unknown;
  /**
   * Dev chains forked from another chain: the highest block number the source answers for (the fork
   * block, which is the genesis height: the chain's own blocks start above it); blocks at or below it
   * and state below it are the source's (rpc/evm/forkHistory.ts). Undefined when the chain is not a fork.
   */
  forkBlock?(): number | undefined;
}

// ---------------------------------------------------------------------------------------------
// State

/** An account proof (eth_getProof, EIP-1186). */
export interface AccountProof {
  readonly address: Uint8Array;
  readonly accountProof: readonly Uint8Array[];
  readonly balance: bigint;
  readonly codeHash: Uint8Array;
  readonly nonce: bigint;
  readonly storageHash: Uint8Array;
  readonly storageProof: readonly { key: Uint8Array; value: bigint; proof: readonly Uint8Array[] }[];
}

/**
 * Account state after block `height` was committed (height 0 = the genesis state). The RPC only
 * asks for heights ≤ latestHeight().
 */
export interface StateReader {
  balance(address: Uint8Array, height: number): Awaitable<bigint>;
  nonce(address: Uint8Array, height: number): Awaitable<bigint>;
  code(address: Uint8Array, height: number): Awaitable<Uint8Array>;
  /** The 32-byte value of `slot` (32 bytes). */
  storage(address: Uint8Array, slot: Uint8Array, height: number): Awaitable<Uint8Array>;
  proof(address: Uint8Array, slots: readonly Uint8Array[], height: number): Awaitable<AccountProof>;
}

// ---------------------------------------------------------------------------------------------
// Execution

/** eth_call / eth_estimateGas arguments after decoding (geth TransactionArgs). */
export interface CallRequest {
  from?: Uint8Array;
  /** Undefined: contract creation. */
  to?: Uint8Array;
  gas?: bigint;
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  maxFeePerBlobGas?: bigint;
  value?: bigint;
  nonce?: bigint;
  data?: Uint8Array;
  accessList?: readonly AccessListEntry[];
  chainId?: bigint;
  blobVersionedHashes?: readonly Uint8Array[];
  authorizationList?: readonly Authorization[];
  /** The `type` field when the client sent one. */
  type?: number;
}

/** A geth-style state override for one account. */
export interface AccountOverride {
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  /** Replaces the whole storage. */
  state?: ReadonlyMap<string, Uint8Array>;
  /** Changes only these slots. Map keys are 0x-hex slot strings (32 bytes, lowercase). */
  stateDiff?: ReadonlyMap<string, Uint8Array>;
  /** Moves the precompile at this account to another address. */
  movePrecompileToAddress?: Uint8Array;
}

/** Overrides keyed by lowercase 0x-hex address. */
export type StateOverrides = ReadonlyMap<string, AccountOverride>;

export interface CallOptions {
  /** Run on the state after this block. */
  readonly height: number;
  /** Exact gas limit to run with (the RPC already applied gas-cap and defaults). */
  readonly gasCap: bigint;
  /** evm-timeout; the RPC also aborts `signal` when it passes. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly overrides?: StateOverrides;
  /** The block context's fields replaced (debug_traceCall's blockOverrides; no beaconRoot, no withdrawals). */
  readonly block?: SimulateBlockOverrides;
  /** A dev chain prints a call's console.log lines unless quiet (the estimate inside eth_sendTransaction). */
  readonly quietConsole?: boolean;
}

/**
 * The outcome of executing a call. Failures before execution (insufficient funds, nonce,
 * intrinsic gas) are thrown with geth's message instead.
 */
export interface CallResult {
  /** `reverted`: REVERT opcode; `failed`: any other VM error (out of gas, invalid opcode…). */
  readonly status: "success" | "reverted" | "failed";
  /** Return data, or the revert payload. */
  readonly returnData: Uint8Array;
  readonly gasUsed: bigint;
  /** The VM error text for `failed` (geth wording, e.g. "out of gas"). */
  readonly error?: string;
}

/** eth_simulateV1's first argument, decoded (returnFullTransactions stays with the RPC). */
export interface SimulateInput {
  readonly blocks: readonly SimulateBlockSpec[];
  readonly traceTransfers: boolean;
  readonly validation: boolean;
}

export interface SimulateOptions {
  /** Simulate on the state after this block. */
  readonly height: number;
  /** `[json-rpc] gas-cap`: the gas all calls together may use (0 = none). */
  readonly gasCap: bigint;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** eth_simulateV1 could not simulate: `reason` names geth's error family (docs/ethereum-rpc.md). */
export class SimulateRejectedError extends ComethError {
  readonly reason: SimulationFailure;
  constructor(reason: SimulationFailure, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.reason = reason;
  }
}

export interface Executor {
  call(request: CallRequest, opts: CallOptions): Promise<CallResult>;
  /**
   * Optional: `call` run on the RPC's own thread, its result returned synchronously. Present only
   * when this executor's calls run in process: it then enforces `opts.timeoutMs` itself (nothing
   * else can run meanwhile), so the RPC arms no timer or abort signal for any of its calls.
   */
  readonly callNow?: ((request: CallRequest, opts: CallOptions) => CallResult) | undefined;
  /**
   * Optional, for executors that run calls elsewhere (read workers) as well as in process: `call` run
   * on the RPC's own thread when the executor judges it cheap, its result returned synchronously (the
   * executor enforces `opts.timeoutMs` itself); undefined when it should go through `call` instead.
   */
  readonly callNowIfCheap?: ((request: CallRequest, opts: CallOptions) => CallResult | undefined) | undefined;
  /**
   * eth_simulateV1. Throws SimulateRejectedError for geth's simulation errors. Absent: the method
   * answers -32601.
   */
  simulate?(input: SimulateInput, opts: SimulateOptions): Promise<readonly SimulatedBlock[]>;
  /**
   * Optional: `call`'s result when the node already has it (a call it memoizes), without running
   * anything; undefined otherwise. Lets repeated calls be answered synchronously.
   */
  peekCall?(request: CallRequest, opts: CallOptions): CallResult | undefined;
  /**
   * Optional: the lowest gas limit that succeeds, or the failing CallResult when even
   * `opts.gasCap` fails. When absent the RPC runs geth's binary search over `call` (each try sets
   * the request's `gas`).
   */
  estimateGas?(request: CallRequest, opts: CallOptions): Promise<bigint | CallResult>;
  /**
   * Optional: the access list the call touches (eth_createAccessList, geth's AccessList). When absent
   * (test fakes) the RPC answers the given list (or []) with the call's gasUsed, as Cosmos EVM v0.5 does.
   */
  createAccessList?(
    request: CallRequest,
    opts: CallOptions,
  ): Promise<{ accessList: readonly AccessListEntry[]; gasUsed: bigint; error?: string }>;
}

// ---------------------------------------------------------------------------------------------
// Mempool

/** CheckTx's verdict on a submitted transaction. */
export type SubmitResult =
  | { readonly accepted: true; readonly hash: Uint8Array }
  /** `log` is shown to the client; keep geth's wording ("nonce too low", "insufficient funds"). */
  | { readonly accepted: false; readonly code: number; readonly log: string };

export interface MempoolAccess {
  /**
   * Sends signed tx bytes through the node mempool (CheckTx). `signer`: the address whose key the
   * caller itself just signed the bytes with (the dev keyring's eth_sendTransaction); CheckTx then
   * skips recovering it again and makes every other check.
   */
  submit(raw: Uint8Array, signer?: Uint8Array): Promise<SubmitResult>;
  /** Transactions waiting for a block: executable (`pending`) and nonce-gapped (`queued`). */
  content(): Awaitable<{ pending: readonly EvmTx[]; queued: readonly EvmTx[] }>;
  /** A waiting transaction by hash. */
  transactionByHash(hash: Uint8Array): Awaitable<EvmTx | undefined>;
}

// ---------------------------------------------------------------------------------------------
// Fees

export interface FeeOracle {
  /** Base fee of the block after the latest one; undefined when the fee market is off. */
  nextBaseFee(): Awaitable<bigint | undefined>;
  /** Base fee of the latest block (Cosmos EVM's head.BaseFee); undefined when the fee market is off. */
  headBaseFee(): Awaitable<bigint | undefined>;
  /** Suggested priority fee per gas (eth_maxPriorityFeePerGas), from the latest block's base fee. */
  suggestTipCap(): Awaitable<bigint>;
  /** The node's minimum gas price; eth_gasPrice never answers less. */
  minGasPrice(): Awaitable<bigint>;
}

// ---------------------------------------------------------------------------------------------
// Events

/** EvmEventSource.waitForTx's bounds. */
export interface TxWaitRequest {
  timeoutMs?: number;
  maxBlocks?: number;
  stillPending?: () => boolean;
  /** A block committed before the wait started counts (for waits started after admission). */
  acceptRecent?: boolean;
}

/** How EvmEventSource.waitForTx ended. */
export type TxWaitOutcome =
  | { kind: "included"; height: number; index: number }
  | { kind: "timeout" }
  | { kind: "cancelled"; reason: string }
  | { kind: "notIncluded"; reason: string };

/** Push notifications from the node; each returns its unsubscribe function. */
export interface EvmEventSource {
  /** Called once per committed block, after it is readable through ChainReader, in height order. */
  onNewBlock(listener: (height: number) => void): () => void;
  /**
   * The node's one "tx included" wait (events/ TxInclusion): the outcome once the block that includes
   * `raw` is committed and readable through ChainReader, or why not (`timeoutMs` passed; "cancelled":
   * the chain was rolled back or the node is stopping; "notIncluded": `maxBlocks` blocks went by without
   * it or `stillPending`, asked after each such block, said it left the mempool). `cancel` drops a
   * wait that will not be awaited. eth_sendRawTransactionSync and the dev chain's automined sends use it.
   */
  waitForTx(raw: Uint8Array, opts: TxWaitRequest): { outcome: Promise<TxWaitOutcome>; cancel(): void };
  /** Called for each Ethereum tx this node's CheckTx accepted. */
  onPendingTransaction(listener: (hash: Uint8Array) => void): () => void;
  /**
   * Dev chains: called after the chain was rolled back to `height` (evm_revert, hardhat_reset); heights
   * above it will be made again, so anything kept about them must go.
   */
  onRollback?(listener: (height: number) => void): () => void;
}

// ---------------------------------------------------------------------------------------------
// Node information

export interface SyncStatus {
  readonly catchingUp: boolean;
  readonly startingBlock: number;
  readonly currentBlock: number;
  readonly highestBlock: number;
}

/** What admin_nodeInfo shows. */
export interface NodeIdentity {
  /** The p2p node id. */
  readonly id: string;
  /** Moniker. */
  readonly name: string;
  /** p2p listen address, e.g. tcp://0.0.0.0:26656. */
  readonly listenAddr: string;
  /** CometBFT chain_id string. */
  readonly network: string;
}

/** One connected peer (admin_peers). */
export interface PeerView {
  readonly id: string;
  readonly name: string;
  readonly remoteAddress: string;
  readonly inbound: boolean;
}

/** A named address (a precompile or system contract) of the chain's rules. */
export interface NamedAddress {
  /** The EIP-7910 name (geth's spelling, e.g. "ECREC", "HISTORY_STORAGE_ADDRESS"). */
  readonly name: string;
  readonly address: Uint8Array;
}

/** eth_config (EIP-7910): the rules of the chain's one fork, active since genesis. */
export interface ChainRules {
  readonly precompiles: readonly NamedAddress[];
  readonly systemContracts: readonly NamedAddress[];
  /** The EVM's blob fee schedule (BLOBBASEFEE), even where the chain takes no blob txs. */
  readonly blobSchedule: { readonly target: number; readonly max: number; readonly baseFeeUpdateFraction: bigint };
}

export interface NodeInfoSource {
  /** EIP-155 chain id (`[evm] evm-chain-id`). */
  chainId(): bigint;
  /** The node's software version, e.g. "0.1.0". */
  version(): string;
  syncStatus(): Awaitable<SyncStatus>;
  peerCount(): Awaitable<number>;
  listening(): Awaitable<boolean>;
  identity(): NodeIdentity;
  /** Home directory (admin_datadir). */
  dataDir(): string;
  /** The chain's rules for eth_config. Absent: eth_config answers -32601. */
  chainRules?(): ChainRules;
}

/** p2p actions for admin_*. */
export interface PeerControl {
  peers(): Awaitable<readonly PeerView[]>;
  /** Dials `url` (id@host:port); `persistent` for trusted peers. */
  addPeer(url: string, persistent: boolean): Awaitable<boolean>;
  removePeer(url: string): Awaitable<boolean>;
}

export interface MinerControl {
  setEtherbase(address: Uint8Array): Awaitable<boolean>;
  setGasPrice(wei: bigint): Awaitable<boolean>;
}

// ---------------------------------------------------------------------------------------------
// Tracing

/** debug_trace* options after decoding (geth TraceConfig). */
export interface TraceConfig {
  /** debug_traceCall: state overrides as eth_call takes them (geth's TraceCallConfig). */
  readonly stateOverrides?: StateOverrides;
  /** debug_traceCall: block overrides (geth's TraceCallConfig), as eth_simulateV1 takes them. */
  readonly blockOverrides?: SimulateBlockOverrides;
  /**
   * Undefined: the struct (opcode) logger. `vmTrace`: OpenEthereum's vmTrace (trace_replayTransaction
   * on dev chains; debug_trace* do not take it).
   */
  readonly tracer: "callTracer" | "prestateTracer" | "4byteTracer" | "noopTracer" | "vmTrace" | undefined;
  /** callTracer: only the top call. */
  readonly onlyTopCall: boolean;
  /** callTracer: include logs in frames. */
  readonly withLog: boolean;
  /**
   * callTracer: the top frame's own gas and gas used (OpenEthereum's trace_*: the intrinsic gas and
   * refunds left out) instead of the tx's gas limit and receipt gas used. Absent: geth's.
   */
  readonly frameGasAtTop?: boolean;
  /** prestateTracer: `pre` and `post` of what the tx changed. */
  readonly diffMode: boolean;
  /** prestateTracer: leave code out. */
  readonly tracerDisableCode: boolean;
  /** prestateTracer: leave storage out. */
  readonly tracerDisableStorage: boolean;
  readonly disableStack: boolean;
  readonly disableStorage: boolean;
  readonly enableMemory: boolean;
  readonly enableReturnData: boolean;
  /** Max struct logs (0 = no limit). */
  readonly limit: number;
  readonly timeoutMs: number;
}

export interface StructLog {
  readonly pc: number;
  readonly op: string;
  readonly gas: bigint;
  readonly gasCost: bigint;
  readonly depth: number;
  readonly refund?: bigint;
  readonly error?: string;
  readonly stack?: readonly bigint[];
  /** 32-byte words. */
  readonly memory?: readonly Uint8Array[];
  /** Slot → value, both 32 bytes, as 0x-hex keys. */
  readonly storage?: ReadonlyMap<string, Uint8Array>;
  readonly returnData?: Uint8Array;
}

export interface CallFrame {
  /** CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2, SELFDESTRUCT. */
  readonly type: string;
  readonly from: Uint8Array;
  readonly to: Uint8Array | undefined;
  readonly value: bigint | undefined;
  readonly gas: bigint;
  readonly gasUsed: bigint;
  readonly input: Uint8Array;
  readonly output?: Uint8Array;
  readonly error?: string;
  readonly revertReason?: string;
  readonly calls?: readonly CallFrame[];
  readonly logs?: readonly {
    address: Uint8Array;
    topics: readonly Uint8Array[];
    data: Uint8Array;
    /** geth's log.Index: block-wide in a tx's trace, from 0 in a call's. */
    index: number;
    position: number;
  }[];
}

export type TraceResult =
  | {
      readonly kind: "struct";
      readonly gas: bigint;
      readonly failed: boolean;
      readonly returnValue: Uint8Array;
      readonly structLogs: readonly StructLog[];
    }
  | { readonly kind: "call"; readonly frame: CallFrame }
  | {
      readonly kind: "prestate";
      readonly diffMode: boolean;
      /** By 0x-less lowercase hex address. */
      readonly pre: ReadonlyMap<string, PrestateAccount>;
      readonly post: ReadonlyMap<string, PrestateAccount>;
    }
  | { readonly kind: "vm"; readonly trace: VmTrace | undefined }
  /** 4byteTracer: `0x<selector>-<calldata size - 4>` → calls. */
  | { readonly kind: "fourByte"; readonly counts: ReadonlyMap<string, number> }
  | { readonly kind: "noop" };

/** One account of a prestateTracer result (geth omits what is undefined, a zero nonce and empty code). */
export interface PrestateAccount {
  readonly balance?: bigint;
  readonly nonce?: bigint;
  readonly code?: Uint8Array;
  /** keccak of the code, for accounts with code (geth v1.16+; kept when disableCode leaves the code out). */
  readonly codeHash?: Uint8Array;
  /** 0x-less 64-hex slot → 32-byte value. */
  readonly storage: ReadonlyMap<string, Uint8Array>;
}

/** OpenEthereum's vmTrace of one frame: its code and each opcode run (`ex` absent: it failed before running). */
export interface VmTrace {
  readonly code: Uint8Array;
  readonly ops: readonly {
    readonly pc: number;
    readonly op: string;
    readonly cost: bigint;
    readonly ex?: {
      readonly used: bigint;
      readonly push: readonly bigint[];
      readonly mem?: { readonly off: number; readonly data: Uint8Array };
      readonly store?: { readonly key: bigint; readonly val: bigint };
    };
    readonly sub?: VmTrace;
  }[];
}

export interface Tracer {
  /** Replays the block up to the tx and traces it. Throws for unknown txs. */
  traceTransaction(hash: Uint8Array, config: TraceConfig): Promise<TraceResult>;
  /** Traces every EVM tx of the block; a failing trace gives `error` for that tx. */
  traceBlock(
    height: number,
    config: TraceConfig,
  ): Promise<readonly { txHash: Uint8Array; result?: TraceResult; error?: string }[]>;
  /** Traces a call on the state after `opts.height`. */
  traceCall(request: CallRequest, config: TraceConfig, opts: CallOptions): Promise<TraceResult>;
}

// ---------------------------------------------------------------------------------------------
// Dev keyring

/** Node-held keys for eth_accounts, eth_sendTransaction, eth_sign* and personal_*. */
export interface DevKeyring {
  accounts(): Awaitable<readonly Uint8Array[]>;
  /**
   * Signs a 32-byte digest with the key of `address`: 65 bytes r‖s‖yParity (0/1). Throws when the
   * keyring has no key for the address.
   */
  signDigest(address: Uint8Array, digest: Uint8Array): Awaitable<Uint8Array>;
  /** Adds a secp256k1 private key; returns its address. */
  importRawKey(privateKey: Uint8Array, password: string): Awaitable<Uint8Array>;
  /** Creates a new key; returns its address. */
  newAccount(password: string): Awaitable<Uint8Array>;
}

// ---------------------------------------------------------------------------------------------
// Dev chains (`cometh dev`): Anvil's and Hardhat's dev methods

/** A state change a cheat method makes (in the next block, which the method commits). */
export type DevCheatRequest =
  | { readonly op: "setBalance"; readonly address: Uint8Array; readonly value: bigint }
  | { readonly op: "setNonce"; readonly address: Uint8Array; readonly value: bigint }
  | { readonly op: "setCode"; readonly address: Uint8Array; readonly code: Uint8Array }
  | { readonly op: "setStorageAt"; readonly address: Uint8Array; readonly slot: Uint8Array; readonly value: Uint8Array }
  | { readonly op: "setCoinbase"; readonly address: Uint8Array }
  | { readonly op: "setNextBaseFee"; readonly value: bigint }
  | { readonly op: "setMinGasPrice"; readonly value: bigint }
  | { readonly op: "setBlockGasLimit"; readonly value: bigint };

/** A transaction from an impersonated address (no signature): the fields a send fills, and its sender. */
export type ImpersonatedTx = Omit<UnsignedTx, "chainId"> & { readonly from: Uint8Array };

/** A bad dev-method argument (a timestamp in the past, a reverted-to height that is gone): -32602. */
export class DevInputError extends ComethError {}

export interface DevNodeInfo {
  readonly currentBlockNumber: number;
  readonly currentBlockTimestamp: bigint;
  readonly currentBlockHash: Uint8Array;
  readonly hardFork: string;
  readonly baseFee: bigint;
  readonly chainId: bigint;
  readonly gasLimit: bigint;
  readonly gasPrice: bigint;
  /** A forked chain's source (anvil_nodeInfo's forkConfig, hardhat_metadata's forkedNetwork). */
  readonly fork?: DevForkInfo;
}

export interface DevForkInfo {
  readonly url: string;
  readonly chainId: bigint;
  readonly blockNumber: bigint;
  readonly blockHash: string;
}

export interface DevMetadata {
  readonly clientVersion: string;
  readonly chainId: bigint;
  readonly instanceId: Uint8Array;
  readonly latestBlockNumber: number;
  readonly latestBlockHash: Uint8Array;
  readonly snapshots: readonly bigint[];
  readonly fork?: DevForkInfo;
}

/**
 * What Anvil's and Hardhat's dev methods need from a dev chain. Every state change still goes through
 * a block: a cheat commits one of its own before it returns (docs/dev-chain.md).
 */
export interface DevControl {
  /** web3_clientVersion on a dev chain: Anvil's form, which hardhat-network-helpers accept. */
  clientVersion(): string;
  /** Each request's method name (the request log). */
  onRequest(method: string): void;

  /** Commits `blocks` blocks back to back; with `intervalSec`, each one that much later than the last. */
  mine(blocks: bigint, intervalSec?: bigint): Promise<void>;
  /** evm_mine: one block, at `timestamp` when given. */
  mineOne(timestamp?: bigint): Promise<void>;
  automine(): boolean;
  setAutomine(on: boolean): void;
  /** Interval mining period in seconds (undefined: off). */
  intervalMining(): number | undefined;
  setIntervalMining(seconds: number): void;
  setBlockTimestampInterval(seconds: bigint): void;
  /** True when an interval was set. */
  removeBlockTimestampInterval(): boolean;
  /** Removes a waiting tx by its Ethereum hash; returns the hash when one was removed. */
  dropTransaction(hash: Uint8Array): Promise<Uint8Array | undefined>;
  dropAllTransactions(): Promise<void>;
  /** Removes every waiting tx from `address`. */
  removePoolTransactions(address: Uint8Array): Promise<void>;
  /**
   * After a send was accepted by CheckTx: with automine on, resolves once the block holding it is
   * committed (the receipt exists), or at once when the tx cannot be mined yet (a nonce gap).
   */
  afterSubmit(raw: Uint8Array, hash: Uint8Array): Promise<void>;

  /** Seconds added to the clock for later blocks; returns the total offset. */
  increaseTime(seconds: bigint): bigint;
  /** The next block's exact timestamp; DevInputError when it is before the latest block's. */
  setNextBlockTimestamp(timestamp: bigint): void;
  /** Moves the clock to `timestamp`; returns the offset from the wall clock. */
  setTime(timestamp: bigint): bigint;

  snapshot(): bigint;
  /** Hardhat's semantics: false for an unknown id; the snapshot and every later one are used up. */
  revert(id: bigint): Promise<boolean>;
  /** Back to genesis. */
  reset(): Promise<void>;
  /**
   * anvil_rollback: the chain's last `depth` blocks are removed (the head goes back to head - depth);
   * DevInputError when depth exceeds the head. Snapshots taken above the new head are used up.
   */
  rollback(depth: bigint): Promise<void>;
  /**
   * anvil_setRpcUrl: a forked chain reads what it has not read yet from `url` instead, at the same
   * fork block; the chain and the reads cached on disk stay. A chain that is no fork is unchanged.
   */
  setRpcUrl(url: string): Promise<void>;
  /**
   * anvil_reset / hardhat_reset with `forking`: back to genesis, then the chain reads its state
   * from `urls` (absent: the same source) at `blockNumber` (absent: the source's head); a chain
   * that is not a fork becomes one, and without `urls` it is a plain reset. A source that does not
   * answer leaves the chain as it was (DevInputError).
   */
  resetFork(forking: { urls?: string[]; blockNumber?: bigint }): Promise<void>;

  cheat(c: DevCheatRequest): Promise<void>;

  impersonate(address: Uint8Array): void;
  stopImpersonating(address: Uint8Array): void;
  setAutoImpersonate(on: boolean): void;
  isImpersonated(address: Uint8Array): boolean;
  /** Submits a send from an impersonated address; returns its hash (after afterSubmit's wait). */
  sendImpersonated(tx: ImpersonatedTx): Promise<Uint8Array>;

  /** anvil_dumpState: 0x-hex of gzip(JSON) in Anvil's format. */
  dumpState(): Promise<string>;
  /** anvil_loadState: merges a dump (hex gzip or JSON) into the state, through blocks. */
  loadState(dump: Uint8Array): Promise<void>;
  nodeInfo(): DevNodeInfo;
  metadata(): DevMetadata;
  setLoggingEnabled(on: boolean): void;
}
