import { ComethError } from "../../util/errors.js";

/**
 * Errors of the EVM application. CheckTx/FinalizeBlock rejections are not thrown to callers: they become
 * ABCI codes (CHECK_TX_CODES) with the error's message as the log. Messages keep geth's wording inside
 * them (`nonce too low`, `insufficient funds for gas * price + value`, ...) because ethers and viem match
 * on those substrings.
 */

/**
 * ABCI codes for rejected Ethereum txs, in codespace "sdk": the Cosmos SDK error codes that Cosmos EVM's
 * ante handlers wrap for the same failures (types/errors/errors.go), so clients see familiar numbers.
 */
export const CHECK_TX_CODES = {
  ok: 0,
  /** ErrTxDecode: not an Ethereum tx, or a type we do not accept (EIP-4844). */
  txDecode: 2,
  /** ErrInvalidSequence: nonce too low, nonce gap too large, nonce already pending. */
  invalidSequence: 3,
  /** ErrInsufficientFunds. */
  insufficientFunds: 5,
  /** ErrOutOfGas: intrinsic gas too low, gas above the block gas limit or what is left of it. */
  outOfGas: 11,
  /** ErrInsufficientFee: max fee below the base fee, tip above the max fee. */
  insufficientFee: 13,
  /** ErrorInvalidSigner: bad signature, unprotected (pre-EIP-155) tx when not allowed. */
  invalidSigner: 24,
  /** ErrInvalidChainID. */
  invalidChainId: 28,
  /** ErrInvalidType: sender has code (EIP-3607) and is not a 7702 delegation. */
  invalidType: 29,
} as const;
export type CheckTxCode = (typeof CHECK_TX_CODES)[keyof typeof CHECK_TX_CODES];

export const CHECK_TX_CODESPACE = "sdk";

/** Base class of every EVM app error. */
export class EvmAppError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** An Ethereum tx that cannot be admitted or executed; `code` is its ABCI code, the message its log. */
export class InvalidEthTxError extends EvmAppError {
  readonly code: CheckTxCode;
  constructor(code: CheckTxCode, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.code = code;
  }
}

/** The app's database holds something this version cannot read. */
export class EvmStateCorruptionError extends EvmAppError {
  constructor(what: string, opts: { cause?: unknown } = {}) {
    super(
      `cannot read ${what} from the EVM database. The data directory may be damaged or from another version; remove it to start over`,
      opts,
    );
  }
}

/** State at this height was pruned (or is not yet committed). */
export class StateUnavailableError extends EvmAppError {
  readonly height: number;
  constructor(height: number, earliest: number, latest: number) {
    super(
      height > latest
        ? `cannot query with height in the future (current: ${latest}, queried: ${height}); please provide a valid height`
        : `failed to load state at height ${height}; version does not exist (earliest: ${earliest}, latest height: ${latest}). Query a height in the kept window or run with pruning = "nothing" (keep every height)`,
    );
    this.height = height;
  }
}

/** Genesis app_state or options that cannot be used. */
export class EvmConfigError extends EvmAppError {}

/** A call was asked for something the state manager does not do (state roots, proofs). */
export class EvmNotSupportedError extends EvmAppError {}

/** finalizeBlock/commit were called out of order. */
export class EvmAppSequenceError extends EvmAppError {}

/** eth_call ran longer than its timeout. */
export class EvmCallTimeoutError extends EvmAppError {
  constructor(timeoutMs: number) {
    super(`execution aborted (timeout = ${timeoutMs}ms). Raise the call timeout or lower the gas`);
  }
}

/** A call or estimate failed before executing (bad args, insufficient funds, nonce) — geth's -32000 family. */
export class EvmCallError extends EvmAppError {}

/** estimateGas found no gas limit that makes the call succeed. */
export class GasEstimationError extends EvmAppError {
  /** Revert data of the failing call at the cap, when it reverted. */
  readonly revertData: Uint8Array | undefined;
  constructor(message: string, revertData?: Uint8Array) {
    super(message);
    this.revertData = revertData;
  }
}

/**
 * Why eth_simulateV1 stopped (geth internal/ethapi/errors.go): the RPC maps each reason to geth's
 * code (docs/ethereum-rpc.md "eth_simulateV1").
 */
export type SimulationFailure =
  | "nonceTooHigh"
  | "nonceTooLow"
  | "baseFeeTooLow"
  | "intrinsicGas"
  | "insufficientFunds"
  | "blockGasLimitReached"
  | "blockNumberInvalid"
  | "blockTimestampInvalid"
  | "maxInitCodeSizeExceeded"
  | "clientLimitExceeded"
  | "invalidParams"
  | "internal"
  | "other";

/** eth_simulateV1 could not simulate the blocks asked for; `reason` names geth's error family. */
export class SimulationError extends EvmAppError {
  readonly reason: SimulationFailure;
  constructor(reason: SimulationFailure, message: string, opts: { cause?: unknown } = {}) {
    super(message, opts);
    this.reason = reason;
  }
}
