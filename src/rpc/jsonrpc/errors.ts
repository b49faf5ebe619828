import { ComethError } from "../../util/errors.js";

/**
 * JSON-RPC 2.0 error families, one class per code. The default messages are the JSON-RPC 2.0
 * spec's names; a server that words them differently (CometBFT's "Parse error. Invalid JSON")
 * passes its own. `data` carries the human-readable detail.
 */

export interface RpcErrorOptions {
  data?: unknown;
  cause?: unknown;
}

export class RpcError extends ComethError {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, opts: RpcErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.data = opts.data;
  }
}

/** -32700: the payload is not JSON, or not a request object. */
export class ParseError extends RpcError {
  static readonly code = -32700;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(ParseError.code, opts.message ?? "Parse error", { data, cause: opts.cause });
  }
}

/** -32600: the request could not be taken (unreadable body, batch too large). */
export class InvalidRequestError extends RpcError {
  static readonly code = -32600;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(InvalidRequestError.code, opts.message ?? "Invalid Request", { data, cause: opts.cause });
  }
}

/** -32601: no such method on this transport. */
export class MethodNotFoundError extends RpcError {
  static readonly code = -32601;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(MethodNotFoundError.code, opts.message ?? "Method not found", { data, cause: opts.cause });
  }
}

/** -32602: the params do not decode into the method's arguments. */
export class InvalidParamsError extends RpcError {
  static readonly code = -32602;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(InvalidParamsError.code, opts.message ?? "Invalid params", { data, cause: opts.cause });
  }
}

/** -32603: the method ran and failed; `data` is the failure text. */
export class InternalError extends RpcError {
  static readonly code = -32603;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(InternalError.code, opts.message ?? "Internal error", { data, cause: opts.cause });
  }
}

/** -32000: a server-side condition outside any one call (a cancelled subscription). */
export class ServerError extends RpcError {
  static readonly code = -32000;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(ServerError.code, opts.message ?? "Server error", { data, cause: opts.cause });
  }
}

/** -32002: the request ran past the server's write deadline (geth's errcodeTimeout). */
export class RequestTimeoutError extends RpcError {
  static readonly code = -32002;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(RequestTimeoutError.code, opts.message ?? "request timed out", { data, cause: opts.cause });
  }
}

/** -32003: a batch answer grew past the response size limit (geth's errcodeResponseTooLarge). */
export class ResponseTooLargeError extends RpcError {
  static readonly code = -32003;
  constructor(data?: string, opts: { message?: string; cause?: unknown } = {}) {
    super(ResponseTooLargeError.code, opts.message ?? "response too large", { data, cause: opts.cause });
  }
}

/** 3: an EVM call reverted; `data` is the 0x-hex revert payload (geth's revertError). */
export class ExecutionRevertedError extends RpcError {
  static readonly code = 3;
  constructor(data: string, opts: { message?: string; cause?: unknown } = {}) {
    super(ExecutionRevertedError.code, opts.message ?? "execution reverted", { data, cause: opts.cause });
  }
}

/**
 * 4: eth_sendRawTransactionSync's wait ended before the tx was in a block (EIP-7966, geth's
 * txSyncTimeoutError); `data` is the 0x-hex tx hash, so the client can keep polling for the receipt.
 */
export class TxSyncTimeoutError extends RpcError {
  static readonly code = 4;
  constructor(message: string, txHash: string) {
    super(TxSyncTimeoutError.code, message, { data: txHash });
  }
}

/**
 * geth's transaction-validation and simulation family (-38010 … -38026: nonce, fees, intrinsic gas,
 * funds, block gas limit, block number/timestamp order, client limits), as eth_simulateV1 answers it.
 */
export class TxValidationError extends RpcError {
  constructor(code: number, message: string, opts: { cause?: unknown } = {}) {
    super(code, message, { cause: opts.cause });
  }
}

/** The failure text of anything thrown (an Error's message, else its string form). */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
