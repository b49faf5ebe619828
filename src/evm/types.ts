import { ComethError } from "../util/errors.js";
import type { Word } from "./words.js";

/**
 * The contract between the parts of cometh's own EVM (docs/evm-engine.md): the state it runs on, the
 * block and transaction it runs, what it returns, and the precompile table. Everything is synchronous:
 * no promise from the first opcode to the last.
 */

/** The rule sets the engine implements: Cancun for ethereum/tests' fixtures, Prague for the chain. */
export type Fork = "cancun" | "prague";

/** An account as the host stores it. `exists: false` is a tombstone that keeps the incarnation after a deletion. */
export interface StoredAccount {
  exists: boolean;
  nonce: bigint;
  balance: bigint;
  codeHash: Uint8Array;
  /** Bumped when the account's storage is wiped (deletion, creation): older storage is no longer visible. */
  incarnation: number;
}

/**
 * `a` with a new nonce and balance (and `exists` set when asked), built as a literal of the one shape
 * every account record has: cheaper than a spread, and it keeps the state's Maps monomorphic.
 */
export function accountWith(a: StoredAccount, nonce: bigint, balance: bigint, exists = a.exists): StoredAccount {
  return { exists, nonce, balance, codeHash: a.codeHash, incarnation: a.incarnation };
}

/**
 * The state a transaction runs on, synchronous, with an undo journal: writes after mark() are undone
 * by revertTo(mark) and kept by keep(mark). OverlayStateManager (stateManager.ts) implements it, over
 * the chain's store or over a state test's pre-state. Storage keys are 32-byte words; values come back
 * without leading zeros (empty = 0) and may be given with them. An account's storage is wiped by
 * bumping its incarnation (wipeStorage), as the app's store keys storage by incarnation.
 */
export interface EngineState {
  /** `key`: the address's lowercase hex (no 0x) when the caller has it. */
  account(addr: Uint8Array, key?: string): StoredAccount;
  /**
   * The working record of a storage slot (`addrKey`: the address's lowercase hex, no 0x), valid for
   * the current incarnation until the account is wiped. SLOAD and SSTORE use it: one lookup per
   * access, no bytes. Its `original` is the value when the current transaction started.
   */
  slotOf(addr: Uint8Array, addrKey: string, key: Word): StorageSlot;
  /** Sets a slot's value through its record (journaled like every other write). */
  writeSlot(slot: StorageSlot, value: Word): void;
  /** `key`: the address's lowercase hex (no 0x) when the caller has it. */
  setAccount(addr: Uint8Array, account: StoredAccount, key?: string): void;
  /** The code of an account (empty when none). */
  code(addr: Uint8Array, key?: string): Uint8Array;
  /** Sets code and codeHash (and makes the account exist). */
  setCode(addr: Uint8Array, code: Uint8Array): void;
  storage(addr: Uint8Array, slot: Uint8Array): Uint8Array;
  setStorage(addr: Uint8Array, slot: Uint8Array, value: Uint8Array): void;
  /** The value of a slot when the transaction started (EIP-2200 "original value"). */
  originalStorage(addr: Uint8Array, slot: Uint8Array): Uint8Array;
  /** Forgets the original values (call at the start of each transaction). */
  clearOriginalStorage(): void;
  /** Whether the account holds any non-zero slot (EIP-7610: creating at such an address collides). */
  hasStorage(addr: Uint8Array): boolean;
  /** Wipes the account's storage (incarnation + 1). */
  wipeStorage(addr: Uint8Array): void;
  /** Starts a nested checkpoint; returns its mark. */
  mark(): number;
  /** Ends the checkpoint `mark`, keeping its writes (they join the enclosing checkpoint). */
  keep(mark: number): void;
  /** Undoes every write since `mark` and ends that checkpoint. */
  revertTo(mark: number): void;
}

/** A storage slot as EngineState.slotOf hands it out. */
export interface StorageSlot {
  /** The current value. */
  readonly value: Word;
  /** The value when the current transaction started (EIP-2200's original value). */
  readonly original: Word;
}

/** The block a transaction runs in. */
export interface BlockEnv {
  number: bigint;
  /** Unix seconds. */
  timestamp: bigint;
  coinbase: Uint8Array;
  gasLimit: bigint;
  baseFee: bigint;
  /** PREVRANDAO (32 bytes). */
  prevRandao: Uint8Array;
  /** BLOBBASEFEE. */
  blobBaseFee: bigint;
  chainId: bigint;
  /** BLOCKHASH: the hash of block `n` (only asked for the last 256 blocks); zero bytes when unknown. */
  blockHash(n: bigint): Uint8Array;
}

export interface AccessListItem {
  address: Uint8Array;
  storageKeys: Uint8Array[];
}

/** An EIP-7702 authorization tuple, signer already recovered (undefined when recovery failed). */
export interface Authorization {
  chainId: bigint;
  address: Uint8Array;
  nonce: bigint;
  /** The recovered authority; undefined when the signature is invalid (the tuple is skipped). */
  authority: Uint8Array | undefined;
}

/** A transaction as the engine runs it: sender known, fields decoded. */
export interface EngineTx {
  /** 0 legacy, 1 access list, 2 dynamic fee, 3 blob, 4 set code. */
  type: number;
  from: Uint8Array;
  /** Undefined: contract creation. */
  to: Uint8Array | undefined;
  nonce: bigint;
  gasLimit: bigint;
  value: bigint;
  data: Uint8Array;
  /** Legacy/access-list: gasPrice in both. */
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  accessList: AccessListItem[];
  blobVersionedHashes: Uint8Array[];
  maxFeePerBlobGas: bigint;
  authorizationList: Authorization[];
}

export interface EngineLog {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
}

/** What a transaction did. Invalid transactions (bad nonce, funds, intrinsic gas) throw EngineTxError. */
export interface TxResult {
  /** true: success; false: reverted or failed (state rolled back except gas and nonce). */
  success: boolean;
  /** Gas charged to the sender, after refunds and the EIP-7623 floor. */
  gasUsed: bigint;
  /**
   * The refund counter at the end (EIP-3529 SSTORE refunds and EIP-7702 authorization refunds), before
   * the gasUsed/5 cap; 0 when the EIP-7623 floor set the gas used.
   */
  refund: bigint;
  /** Return data, or revert data. */
  returnData: Uint8Array;
  /** Logs of a successful transaction (empty otherwise). */
  logs: EngineLog[];
  /** geth's error text when not successful ("execution reverted", "out of gas", ...), else "". */
  error: string;
  /** The created contract's address (creation transactions). */
  createdAddress: Uint8Array | undefined;
}

/** A transaction that cannot be included (geth's core errors: nonce, funds, gas, fees). */
export class EngineTxError extends ComethError {}

/**
 * A precompile's outcome: output and gas; a failure that consumes all the gas given; or a revert
 * (the app's Bech32 precompile reverts on input shorter than a selector) that returns its gas left.
 */
export type PrecompileResult =
  | { readonly ok: true; readonly gasUsed: bigint; readonly output: Uint8Array }
  | { readonly ok: false; readonly error: string }
  | { readonly ok: "revert"; readonly gasUsed: bigint; readonly output: Uint8Array };

/** A precompiled contract: pure, synchronous. */
export type Precompile = (input: Uint8Array, gasLimit: bigint, fork: Fork) => PrecompileResult;

/**
 * The inputs of a message call (revm's CallInputs), as CALL, CALLCODE, DELEGATECALL, STATICCALL and a
 * transaction's own call give them: `address` is the account whose context runs (storage, ADDRESS),
 * `codeAddress` the one whose code runs, `caller` the new frame's CALLER; CALL moves `value` from caller
 * to address, CALLCODE only checks that the caller can pay it.
 */
export interface CallInputs {
  /** The opcode (0xf1 CALL, 0xf2 CALLCODE, 0xf4 DELEGATECALL, 0xfa STATICCALL; a transaction's call is a CALL). */
  readonly kind: number;
  readonly caller: Uint8Array;
  readonly address: Uint8Array;
  readonly codeAddress: Uint8Array;
  readonly value: bigint;
  readonly input: Uint8Array;
  /** Gas handed to the new frame (at most 2^53 − 1; the rest travels as the frame's reserve). */
  readonly gas: number;
  readonly isStatic: boolean;
  /** The new frame's depth (0 for a transaction's own call). */
  readonly depth: number;
}

/** The kinds of frame geth's tracing hooks name (SELFDESTRUCT: the opcode, reported as a frame). */
export type FrameType = "CALL" | "CALLCODE" | "DELEGATECALL" | "STATICCALL" | "CREATE" | "CREATE2" | "SELFDESTRUCT";

/**
 * A frame about to start, as geth's tracing OnEnter sees it: called at the start of every call and
 * creation, before the depth and balance checks, also for precompiles and accounts without code, and
 * for SELFDESTRUCT (a frame that opens and closes at once, gas 0, value the balance moved).
 */
export interface FrameEnter {
  /** 0 for the transaction's own frame (geth's OnEnter depth). */
  depth: number;
  type: FrameType;
  /** geth's `from`: the account making the call (the calling frame's address; the sender at depth 0). */
  from: Uint8Array;
  /** The account whose context runs (the created address for creations, the beneficiary for SELFDESTRUCT). */
  to: Uint8Array;
  /**
   * The account whose code runs (differs from `to` for DELEGATECALL/CALLCODE): geth's OnEnter `to`
   * for every type.
   */
  codeAddress: Uint8Array;
  /** Whether codeAddress is a precompile of the run's fork. */
  precompile: boolean;
  /** Call data; the initcode for creations. */
  input: Uint8Array;
  /** The gas the frame starts with (a value-bearing CALL's includes the stipend). */
  gas: bigint;
  /** The value moved; DELEGATECALL: the value the frame inherits; STATICCALL: 0. */
  value: bigint;
}

/** A frame that ended, as geth's tracing OnExit sees it (also for frames that ran no code). */
export interface FrameExit {
  depth: number;
  /** Return data, revert data, or (creations) the deployed code; empty after an exceptional halt. */
  output: Uint8Array;
  /** The frame's start gas minus what it hands back. */
  gasUsed: bigint;
  /** geth's error text, "" on success. */
  error: string;
  /** Whether its state changes were undone (every failure, a revert or not). */
  reverted: boolean;
}

/**
 * The state before one opcode, for tracers (geth's OnOpcode scope). The engine passes the same object
 * for every opcode of a run and the arrays are the frame's own: read them inside the hook and copy
 * what you keep.
 */
export interface OpcodeStep {
  pc: number;
  op: number;
  /** Gas left before the opcode. */
  gas: number;
  /** 1 for the transaction's own frame (geth's OnOpcode depth: OnEnter's + 1). */
  depth: number;
  /** The stack, bottom first; entries [0, stackSize) are live (words.ts: numbers below 2^53). */
  stack: readonly Word[];
  stackSize: number;
  /** The frame's memory as the opcode finds it (before any expansion the opcode makes). */
  memory: Uint8Array;
  /** The refund counter (EIP-3529) before the opcode. */
  refund: number;
  /** The account whose context runs (ADDRESS). */
  address: Uint8Array;
  /** RETURNDATA: the output of the frame's last call. */
  returnData: Uint8Array;
}

/**
 * Hooks the engine calls while it runs (tracers, console.log recording). Synchronous; a hook that
 * throws aborts the run. The engine runs its untraced loop unless `onOpcode` is set.
 */
export interface EngineHooks {
  onEnter?(frame: FrameEnter): void;
  onExit?(frame: FrameExit): void;
  /** Before each opcode (only the run with this hook steps through the traced loop). */
  onOpcode?(step: OpcodeStep): void;
  /**
   * After each onOpcode, once the opcode's gas is known: `cost` is geth's OnOpcode cost, static plus
   * dynamic gas (CALL*: including the gas handed to the new frame, not the stipend; CREATE*: without
   * it), and comes before the onEnter of the frame the opcode opens. `error` is set (geth's text) when
   * the opcode failed before it executed: stack underflow or overflow, out of gas (then `cost` is all
   * the gas left, or the static gas when that alone was missing); faults while it executes (invalid
   * jump, write protection, ...) leave it "" and end the frame (onExit).
   */
  onOpcodeEnd?(cost: number, error: string): void;
  /** A LOG opcode's log, as it is emitted (also in frames that later revert). */
  onLog?(log: EngineLog): void;
  /**
   * Calls to these code addresses (keys as lower-case hex without 0x) are reported with their input
   * (valid during the callback only) when the frame is entered, as onEnter would see them, without
   * making every frame pay for onEnter (Hardhat's console.log watches one address).
   */
  watch?: ReadonlyMap<string, (input: Uint8Array) => void>;
}
