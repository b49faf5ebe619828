import { equalBytes, KECCAK256_NULL } from "./bytes.js";
import { addressKey, EMPTY } from "./frames.js";
import {
  BLOB_GAS_PER_BLOB,
  FORK_RULES,
  floorDataGas,
  G_AUTH_BASE,
  G_AUTH_EMPTY_ACCOUNT,
  intrinsicGas,
  MAX_FRAME_GAS,
  MAX_INITCODE_SIZE,
  REFUND_QUOTIENT,
} from "./gas.js";
import { createAddress, delegationTarget, Evm } from "./interpreter.js";
import { activePrecompileKeySet, type PrecompileExtensions } from "./precompiles.js";
import {
  type AccessListItem,
  type Authorization,
  accountWith,
  type BlockEnv,
  type EngineHooks,
  type EngineState,
  type EngineTx,
  EngineTxError,
  type Fork,
  type Precompile,
  type StoredAccount,
  type TxResult,
} from "./types.js";
import { bytesToWord } from "./words.js";

/**
 * A transaction from start to end, geth's state transition (core/state_transition.go): the checks that
 * make a transaction invalid (EngineTxError with geth's texts), buying gas, the nonce, warm addresses
 * (EIP-2929/2930/3651), EIP-7702 authorizations, the call or creation, refunds (EIP-3529), the
 * EIP-7623 floor, the fee (base fee burned, tip to the coinbase), blob gas burned, and the end of a
 * transaction (EIP-6780 self-destructs, EIP-161 empty touched accounts, transient storage dropped).
 */

const MAX_NONCE = (1n << 64n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;
const DELEGATION_PREFIX = Uint8Array.of(0xef, 0x01, 0x00);
const ZERO_ADDRESS = new Uint8Array(20);

function hex(addr: Uint8Array): string {
  return `0x${addressKey(addr)}`;
}

function isEmpty(a: StoredAccount): boolean {
  return a.nonce === 0n && a.balance === 0n && equalBytes(a.codeHash, KECCAK256_NULL);
}

/** EIP-1559's effective gas price (legacy and access-list txs carry gasPrice in both fee fields). */
export function effectivePrice(
  tx: Pick<EngineTx, "type" | "maxFeePerGas" | "maxPriorityFeePerGas">,
  baseFee: bigint,
): bigint {
  if (tx.type < 2) return tx.maxFeePerGas;
  const withTip = baseFee + tx.maxPriorityFeePerGas;
  if (withTip < tx.maxFeePerGas) return withTip;
  return tx.maxFeePerGas;
}

/** geth's preCheck and the intrinsic-gas checks of execute(); returns the intrinsic gas. */
function validate(state: EngineState, tx: EngineTx, block: BlockEnv, fork: Fork, impersonated: boolean): bigint {
  const from = hex(tx.from);
  if (tx.type === 4 && !FORK_RULES[fork].setCode) throw new EngineTxError("transaction type not supported");
  if (tx.type > 4 || tx.type < 0) throw new EngineTxError("transaction type not supported");
  const sender = state.account(tx.from);
  if (tx.nonce > sender.nonce) {
    throw new EngineTxError(`nonce too high: address ${from}, tx: ${tx.nonce} state: ${sender.nonce}`);
  }
  if (tx.nonce < sender.nonce) {
    throw new EngineTxError(`nonce too low: address ${from}, tx: ${tx.nonce} state: ${sender.nonce}`);
  }
  if (sender.nonce >= MAX_NONCE)
    throw new EngineTxError(`nonce has max value: address ${from}, nonce: ${sender.nonce}`);
  // EIP-3607, with EIP-7702's delegated EOAs allowed.
  if (!impersonated && sender.exists && !equalBytes(sender.codeHash, KECCAK256_NULL)) {
    const code = state.code(tx.from);
    if (!FORK_RULES[fork].setCode || delegationTarget(code) === undefined) {
      throw new EngineTxError(`sender not an eoa: address ${from}, len(code): ${code.length}`);
    }
  }
  if (tx.maxFeePerGas > MAX_UINT256) {
    throw new EngineTxError(
      `max fee per gas higher than 2^256-1: address ${from}, maxFeePerGas bit length: ${tx.maxFeePerGas.toString(2).length}`,
    );
  }
  if (tx.maxPriorityFeePerGas > MAX_UINT256) {
    throw new EngineTxError(
      `max priority fee per gas higher than 2^256-1: address ${from}, maxPriorityFeePerGas bit length: ${tx.maxPriorityFeePerGas.toString(2).length}`,
    );
  }
  if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) {
    throw new EngineTxError(
      `max priority fee per gas higher than max fee per gas: address ${from}, maxPriorityFeePerGas: ${tx.maxPriorityFeePerGas}, maxFeePerGas: ${tx.maxFeePerGas}`,
    );
  }
  if (tx.maxFeePerGas < block.baseFee) {
    throw new EngineTxError(
      `max fee per gas less than block base fee: address ${from}, maxFeePerGas: ${tx.maxFeePerGas}, baseFee: ${block.baseFee}`,
    );
  }
  if (tx.type === 3) {
    if (tx.to === undefined) throw new EngineTxError(`blob transaction of type create: address ${from}`);
    if (tx.blobVersionedHashes.length === 0) throw new EngineTxError("blob transaction missing blob hashes");
    if (tx.blobVersionedHashes.length > FORK_RULES[fork].maxBlobsPerTx) {
      throw new EngineTxError(
        `blob transaction has too many blobs: have ${tx.blobVersionedHashes.length}, max ${FORK_RULES[fork].maxBlobsPerTx}`,
      );
    }
    tx.blobVersionedHashes.forEach((h, i) => {
      if (h.length !== 32 || h[0] !== 0x01) throw new EngineTxError(`blob ${i} has invalid hash version`);
    });
    if (tx.maxFeePerBlobGas < block.blobBaseFee) {
      throw new EngineTxError(
        `max fee per blob gas less than block blob gas fee: address ${from} blobGasFeeCap: ${tx.maxFeePerBlobGas}, blobBaseFee: ${block.blobBaseFee}`,
      );
    }
  }
  if (tx.type === 4) {
    if (tx.to === undefined)
      throw new EngineTxError(`EIP-7702 transaction cannot be used to create contract: address ${from}`);
    if (tx.authorizationList.length === 0)
      throw new EngineTxError(`EIP-7702 transaction with empty auth list: address ${from}`);
  }
  const blobGas = BigInt(tx.blobVersionedHashes.length) * BLOB_GAS_PER_BLOB;
  const want = tx.gasLimit * tx.maxFeePerGas + tx.value + blobGas * tx.maxFeePerBlobGas;
  if (sender.balance < want) {
    throw new EngineTxError(
      `insufficient funds for gas * price + value: address ${from} have ${sender.balance} want ${want}`,
    );
  }
  if (tx.gasLimit > block.gasLimit) throw new EngineTxError("gas limit reached");
  const intrinsic = intrinsicGas(tx.data, tx.accessList, tx.authorizationList, tx.to === undefined);
  if (tx.gasLimit < intrinsic) {
    throw new EngineTxError(`intrinsic gas too low: have ${tx.gasLimit}, want ${intrinsic}`);
  }
  if (FORK_RULES[fork].calldataFloor) {
    const floor = floorDataGas(tx.data);
    if (tx.gasLimit < floor) {
      throw new EngineTxError(`insufficient gas for floor data gas cost: have ${tx.gasLimit}, want ${floor}`);
    }
  }
  if (tx.to === undefined && tx.data.length > MAX_INITCODE_SIZE) {
    throw new EngineTxError(`max initcode size exceeded: code size ${tx.data.length} limit ${MAX_INITCODE_SIZE}`);
  }
  return intrinsic;
}

/** EIP-7702: applies one authorization tuple; invalid tuples are skipped. Returns the refund it earns. */
function applyAuthorization(evm: Evm, auth: Authorization, chainId: bigint): number {
  if (auth.chainId !== 0n && auth.chainId !== chainId) return 0;
  if (auth.nonce >= MAX_NONCE) return 0;
  const authority = auth.authority;
  if (authority === undefined) return 0;
  const state = evm.state;
  evm.warmAddress(addressKey(authority));
  const code = state.code(authority);
  if (code.length > 0 && delegationTarget(code) === undefined) return 0;
  const acct = state.account(authority);
  if (acct.nonce !== auth.nonce) return 0;
  const refund = acct.exists && !isEmpty(acct) ? G_AUTH_EMPTY_ACCOUNT - G_AUTH_BASE : 0;
  state.setAccount(authority, accountWith(acct, acct.nonce + 1n, acct.balance, true));
  if (equalBytes(auth.address, ZERO_ADDRESS)) state.setCode(authority, EMPTY);
  else {
    const designator = new Uint8Array(23);
    designator.set(DELEGATION_PREFIX);
    designator.set(auth.address, 3);
    state.setCode(authority, designator);
  }
  return refund;
}

/** What a message runs with, after the checks. */
interface Message {
  from: Uint8Array;
  to: Uint8Array | undefined;
  nonce: bigint;
  value: bigint;
  data: Uint8Array;
  gasLimit: bigint;
  intrinsic: bigint;
  gasPrice: bigint;
  accessList: readonly AccessListItem[];
  blobHashes: readonly Uint8Array[];
  authorizations: readonly Authorization[];
}

interface MessageOutcome {
  result: TxResult;
  evm: Evm;
}

/** The part shared by transactions and calls: warm sets, authorizations, the frame, refunds, the floor. */
function runMessage(state: EngineState, m: Message, block: BlockEnv, fork: Fork, opts: ExecOptions): MessageOutcome {
  const evm = new Evm(state, {
    fork,
    block,
    origin: m.from,
    gasPrice: m.gasPrice,
    blobHashes: m.blobHashes,
    interrupt: opts.interrupt,
    hooks: opts.hooks,
    precompiles: opts.precompiles,
    extensions: opts.extensions,
  });
  const fromKey = addressKey(m.from);
  evm.knowKey(m.from, fromKey);
  evm.warmAddress(fromKey);
  if (m.to !== undefined) {
    const toKey = addressKey(m.to);
    evm.knowKey(m.to, toKey);
    evm.warmAddress(toKey);
  }
  evm.warmAddress(addressKey(block.coinbase));
  evm.warmForTransaction(activePrecompileKeySet(fork, opts.extensions));
  for (const item of m.accessList) {
    const key = addressKey(item.address);
    evm.warmAddress(key);
    for (const slot of item.storageKeys) evm.warmSlot(key, bytesToWord(slot));
  }
  // geth bumps a call's nonce before the authorizations (a self-sponsored tuple names nonce + 1).
  if (m.to !== undefined) {
    const sender = state.account(m.from, fromKey);
    state.setAccount(m.from, accountWith(sender, sender.nonce + 1n, sender.balance), fromKey);
  }
  if (FORK_RULES[fork].setCode) {
    for (const auth of m.authorizations) evm.addRefund(applyAuthorization(evm, auth, block.chainId));
    // geth warms the recipient's delegation target, which the authorizations may have just set.
    if (m.to !== undefined) {
      const target = delegationTarget(state.code(m.to));
      if (target !== undefined) evm.warmAddress(addressKey(target));
    }
  }
  const execGas = m.gasLimit - m.intrinsic;
  // Gas above 2^53 − 1 goes to the frame's reserve (Frame.reserve).
  const gas = execGas > BigInt(MAX_FRAME_GAS) ? MAX_FRAME_GAS : Number(execGas);
  const reserve = execGas - BigInt(gas);
  let createdAddress: Uint8Array | undefined;
  let r: { success: boolean; gasLeft: number; output: Uint8Array; error: string };
  if (m.to === undefined) {
    createdAddress = createAddress(m.from, m.nonce);
    r = evm.create(m.from, m.value, m.data, gas, 0, createdAddress, reserve);
  } else {
    r = evm.call(
      {
        kind: 0xf1,
        caller: m.from,
        address: m.to,
        codeAddress: m.to,
        value: m.value,
        input: m.data,
        gas,
        isStatic: false,
        depth: 0,
      },
      reserve,
    );
  }
  let gasUsed = m.gasLimit - BigInt(r.gasLeft) - evm.takeReturnedReserve();
  const refundCap = gasUsed / REFUND_QUOTIENT;
  let refund = BigInt(Math.max(0, evm.refund));
  gasUsed -= refund < refundCap ? refund : refundCap;
  if (FORK_RULES[fork].calldataFloor) {
    const floor = floorDataGas(m.data);
    if (gasUsed < floor) {
      gasUsed = floor;
      refund = 0n;
    }
  }
  return {
    evm,
    result: {
      success: r.success,
      gasUsed,
      refund,
      returnData: r.output,
      logs: r.success ? evm.logs.slice() : [],
      error: r.error,
      createdAddress,
    },
  };
}

/** The end of a transaction: EIP-6780 self-destructs, then EIP-161's empty touched accounts. */
function finalise(evm: Evm): void {
  const state = evm.state;
  for (const addr of [...evm.destructs, ...evm.touched]) {
    const a = state.account(addr);
    if (!a.exists) continue;
    const destructed = evm.destructs.includes(addr);
    if (destructed || isEmpty(a)) {
      state.setAccount(addr, {
        exists: false,
        nonce: 0n,
        balance: 0n,
        codeHash: KECCAK256_NULL,
        incarnation: a.incarnation + 1,
      });
    }
  }
}

/**
 * Runs a transaction: validation (throws EngineTxError, state untouched), then execution. State
 * changes stay in `state`; the caller keeps or drops them.
 */
export function executeTx(
  state: EngineState,
  tx: EngineTx,
  block: BlockEnv,
  fork: Fork,
  opts: ExecOptions = {},
): TxResult {
  const intrinsic = validate(state, tx, block, fork, opts.impersonated === true);
  state.clearOriginalStorage();
  const price = effectivePrice(tx, block.baseFee);
  const blobFee = BigInt(tx.blobVersionedHashes.length) * BLOB_GAS_PER_BLOB * block.blobBaseFee;
  const sender = state.account(tx.from);
  state.setAccount(tx.from, accountWith(sender, sender.nonce, sender.balance - tx.gasLimit * price - blobFee));
  const { result, evm } = runMessage(
    state,
    {
      from: tx.from,
      to: tx.to,
      nonce: tx.nonce,
      value: tx.value,
      data: tx.data,
      gasLimit: tx.gasLimit,
      intrinsic,
      gasPrice: price,
      accessList: tx.accessList,
      blobHashes: tx.blobVersionedHashes,
      authorizations: tx.type === 4 ? tx.authorizationList : [],
    },
    block,
    fork,
    opts,
  );
  const after = state.account(tx.from);
  state.setAccount(tx.from, accountWith(after, after.nonce, after.balance + (tx.gasLimit - result.gasUsed) * price));
  evm.addBalance(block.coinbase, result.gasUsed * (price - block.baseFee));
  finalise(evm);
  evm.release();
  return result;
}

/** Options of executeTx and executeCall. */
export interface ExecOptions {
  /**
   * Called every few thousand jumps and on every call frame: throw from it to stop a call that runs
   * too long (eth_call deadlines); the error propagates out of executeCall.
   */
  interrupt?: (() => void) | undefined;
  /** Tracing and console.log hooks. */
  hooks?: EngineHooks | undefined;
  /** executeTx: the sender is impersonated (dev chains) and may hold code (no EIP-3607 check). */
  impersonated?: boolean;
  /**
   * The precompile at an address, replacing the fork's table (eth_simulateV1's precompile overrides and
   * moves). The addresses warm at the start stay the fork's, as in geth.
   */
  precompiles?: ((addr: Uint8Array) => Precompile | undefined) | undefined;
  /** The chain's own precompiles beside the fork's (precompiles.ts). */
  extensions?: PrecompileExtensions | undefined;
}

/** A call as eth_call runs it: no validity checks and no gas bought. */
export interface CallMessage {
  from: Uint8Array;
  to: Uint8Array | undefined;
  value: bigint;
  data: Uint8Array;
  gasLimit: bigint;
  /** GASPRICE; no fee is charged. */
  gasPrice: bigint;
  accessList?: AccessListItem[];
  blobVersionedHashes?: Uint8Array[];
  authorizationList?: Authorization[];
}

/**
 * Runs a call without the transaction checks and without charging gas (geth's eth_call with no fees):
 * the sender's nonce is bumped, the frame runs, and the state changes stay in `state`. Throws
 * EngineTxError when the gas limit is below the intrinsic gas.
 */
export function executeCall(
  state: EngineState,
  msg: CallMessage,
  block: BlockEnv,
  fork: Fork,
  opts: ExecOptions = {},
): TxResult {
  const accessList = msg.accessList ?? [];
  const authorizations = FORK_RULES[fork].setCode ? (msg.authorizationList ?? []) : [];
  const intrinsic = intrinsicGas(msg.data, accessList, authorizations, msg.to === undefined);
  if (msg.gasLimit < intrinsic) {
    throw new EngineTxError(`intrinsic gas too low: have ${msg.gasLimit}, want ${intrinsic}`);
  }
  state.clearOriginalStorage();
  const sender = state.account(msg.from);
  if (msg.value > sender.balance) {
    throw new EngineTxError(`insufficient funds for transfer: address ${hex(msg.from)}`);
  }
  const { result, evm } = runMessage(
    state,
    {
      from: msg.from,
      to: msg.to,
      nonce: sender.nonce,
      value: msg.value,
      data: msg.data,
      gasLimit: msg.gasLimit,
      intrinsic,
      gasPrice: msg.gasPrice,
      accessList,
      blobHashes: msg.blobVersionedHashes ?? [],
      authorizations,
    },
    block,
    fork,
    opts,
  );
  finalise(evm);
  evm.release();
  return result;
}
