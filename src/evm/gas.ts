import type { AccessListItem, Authorization, Fork } from "./types.js";
import type { Word } from "./words.js";

/**
 * Gas constants and the pure gas formulas of the engine (yellow paper appendix G and the EIPs named
 * beside each). Frame gas is a `number` of at most 2^53 − 1 (MAX_FRAME_GAS); a transaction with a
 * larger gas limit keeps the rest in its frames' reserve (frames.ts, Frame.reserve).
 */

export const G_ZERO = 0;
export const G_JUMPDEST = 1;
export const G_BASE = 2;
export const G_VERYLOW = 3;
export const G_LOW = 5;
export const G_MID = 8;
export const G_HIGH = 10;
export const G_EXP = 10;
export const G_EXP_BYTE = 50;
export const G_KECCAK = 30;
export const G_KECCAK_WORD = 6;
export const G_COPY_WORD = 3;
export const G_BLOCKHASH = 20;
export const G_LOG = 375;
export const G_LOG_TOPIC = 375;
export const G_LOG_DATA = 8;
export const G_CREATE = 32000;
export const G_CODE_DEPOSIT = 200;
export const G_CALL_VALUE = 9000;
export const G_CALL_STIPEND = 2300;
export const G_NEW_ACCOUNT = 25000;
export const G_SELFDESTRUCT = 5000;
export const G_MEMORY = 3;
export const G_QUAD_DIVISOR = 512;
/** EIP-2929. */
export const G_WARM_ACCESS = 100;
export const G_COLD_SLOAD = 2100;
export const G_COLD_ACCOUNT = 2600;
/** EIP-2200 with EIP-2929 and EIP-3529. */
export const G_SSTORE_SET = 20000;
export const G_SSTORE_RESET = 5000 - G_COLD_SLOAD;
export const G_SSTORE_SENTRY = 2300;
export const R_SSTORE_CLEARS = 4800;
/** EIP-3860. */
export const G_INITCODE_WORD = 2;
export const MAX_CODE_SIZE = 24576;
export const MAX_INITCODE_SIZE = 2 * MAX_CODE_SIZE;
/** EIP-1153. */
export const G_TRANSIENT = 100;
/** Transaction intrinsic costs. */
export const G_TX = 21000;
export const G_TX_CREATE = 32000;
export const G_TX_DATA_ZERO = 4;
export const G_TX_DATA_NONZERO = 16;
export const G_ACCESS_LIST_ADDRESS = 2400;
export const G_ACCESS_LIST_KEY = 1900;
/** EIP-7702. */
export const G_AUTH_EMPTY_ACCOUNT = 25000;
export const G_AUTH_BASE = 12500;
/** EIP-7623. */
export const G_FLOOR_PER_TOKEN = 10;
/** EIP-4844. */
export const BLOB_GAS_PER_BLOB = 131072n;
/** EIP-3529: refunds are capped at gasUsed / 5. */
export const REFUND_QUOTIENT = 5n;

/** The largest frame gas the engine runs with (see the file comment). */
export const MAX_FRAME_GAS = Number.MAX_SAFE_INTEGER;
/** Memory beyond this many bytes is refused as out of gas (its cost alone would be ~2^45 gas). */
export const MAX_MEMORY_BYTES = 0x1_0000_0000;

/**
 * What differs between the forks the engine runs, one table per fork (Cancun: ethereum/tests' fixtures;
 * Prague: the chain). The opcode table and its static gas are the same in both (opcodes.ts); the
 * precompiles have a table per fork (precompiles.ts).
 */
export interface ForkRules {
  /** EIP-4844 blobs per transaction (EIP-7691 raised it in Prague). */
  readonly maxBlobsPerTx: number;
  /** EIP-7623: a transaction pays at least 21000 + 10 per calldata token. */
  readonly calldataFloor: boolean;
  /** EIP-7702: set-code transactions, delegated EOAs as senders, calls that follow a delegation. */
  readonly setCode: boolean;
}

export const FORK_RULES: Readonly<Record<Fork, ForkRules>> = {
  cancun: { maxBlobsPerTx: 6, calldataFloor: false, setCode: false },
  prague: { maxBlobsPerTx: 9, calldataFloor: true, setCode: true },
};

/** Words of `bytes` (rounded up). */
export function words(bytes: number): number {
  return Math.ceil(bytes / 32);
}

/** The total cost of `w` words of memory: 3w + w²/512. */
export function memoryCost(w: number): number {
  return G_MEMORY * w + Math.floor((w * w) / G_QUAD_DIVISOR);
}

/** 63/64 rule (EIP-150): what a frame may pass on out of `available`. */
export function allButOne64th(available: number): number {
  return available - Math.floor(available / 64);
}

/** The non-zero and zero byte counts of calldata. */
function dataCounts(data: Uint8Array): { zero: number; nonZero: number } {
  let zero = 0;
  for (let i = 0; i < data.length; i++) if (data[i] === 0) zero++;
  return { zero, nonZero: data.length - zero };
}

/** EIP-7623 tokens of calldata: zero bytes count 1, others 4. */
export function calldataTokens(data: Uint8Array): bigint {
  const { zero, nonZero } = dataCounts(data);
  return BigInt(zero + nonZero * 4);
}

/** A transaction's intrinsic gas (geth's IntrinsicGas, Shanghai+). */
export function intrinsicGas(
  data: Uint8Array,
  accessList: readonly AccessListItem[],
  authorizations: readonly Authorization[],
  isCreate: boolean,
): bigint {
  let gas = BigInt(G_TX);
  if (isCreate) gas += BigInt(G_TX_CREATE);
  const { zero, nonZero } = dataCounts(data);
  gas += BigInt(zero * G_TX_DATA_ZERO + nonZero * G_TX_DATA_NONZERO);
  if (isCreate) gas += BigInt(words(data.length) * G_INITCODE_WORD);
  for (const item of accessList) {
    gas += BigInt(G_ACCESS_LIST_ADDRESS + item.storageKeys.length * G_ACCESS_LIST_KEY);
  }
  gas += BigInt(authorizations.length * G_AUTH_EMPTY_ACCOUNT);
  return gas;
}

/** EIP-7623's floor: 21000 + 10 per calldata token. */
export function floorDataGas(data: Uint8Array): bigint {
  return BigInt(G_TX) + calldataTokens(data) * BigInt(G_FLOOR_PER_TOKEN);
}

/**
 * SSTORE's gas and refund change (EIP-2200 as amended by EIP-2929 and EIP-3529), cold surcharge not
 * included. `original`, `current` and `value` compare as words.
 */
export function sstoreCost(original: Word, current: Word, value: Word): { gas: number; refund: number } {
  if (current === value) return { gas: G_WARM_ACCESS, refund: 0 };
  if (original === current) {
    if (original === 0) return { gas: G_SSTORE_SET, refund: 0 };
    return { gas: G_SSTORE_RESET, refund: value === 0 ? R_SSTORE_CLEARS : 0 };
  }
  let refund = 0;
  if (original !== 0) {
    if (current === 0) refund -= R_SSTORE_CLEARS;
    else if (value === 0) refund += R_SSTORE_CLEARS;
  }
  if (original === value) {
    refund += original === 0 ? G_SSTORE_SET - G_WARM_ACCESS : G_SSTORE_RESET - G_WARM_ACCESS;
  }
  return { gas: G_WARM_ACCESS, refund };
}
