import { ComethError } from "../../util/errors.js";
import {
  ExecutionRevertedError,
  errorText,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseError,
  RequestTimeoutError,
  ResponseTooLargeError,
  RpcError,
  ServerError,
} from "../jsonrpc/index.js";
import { toData } from "./encode/hex.js";

/**
 * The EVM server's error texts and its one mapping from thrown values to JSON-RPC families. The
 * families are rpc/jsonrpc's classes; the EVM server puts geth's text in `message` (geth sends no
 * `data` except for reverts).
 */

/** -32700 for a body or frame that is not JSON (geth: "parse error"). */
export function parseError(): ParseError {
  return new ParseError(undefined, { message: "parse error" });
}

/** -32600: bad envelope ("invalid request"), "empty batch", "batch too large". */
export function invalidRequest(message = "invalid request"): InvalidRequestError {
  return new InvalidRequestError(undefined, { message });
}

/** -32601 for an unknown method; `hint` says why (e.g. a namespace that is switched off). */
export function methodNotFound(method: string, hint?: string): MethodNotFoundError {
  const base = `the method ${method} does not exist/is not available`;
  return new MethodNotFoundError(undefined, { message: hint === undefined ? base : `${base}: ${hint}` });
}

/** -32601 for a method cometh deliberately does not serve (docs/ethereum-rpc.md "Methods that are not implemented"). */
export function notImplemented(method: string, why: string): MethodNotFoundError {
  return new MethodNotFoundError(undefined, { message: `the method ${method} is not implemented: ${why}` });
}

/** -32601 for eth_subscribe over HTTP (geth: "notifications not supported"). */
export function notificationsUnsupported(): MethodNotFoundError {
  return new MethodNotFoundError(undefined, { message: "notifications not supported" });
}

/** -32601 for an eth_subscribe kind that does not exist (geth's subscriptionNotFoundError). */
export function unknownSubscription(kind: string): MethodNotFoundError {
  return new MethodNotFoundError(undefined, {
    message: `no ${JSON.stringify(kind)} subscription in eth namespace`,
  });
}

/** -32602 with geth's text, e.g. "invalid argument 0: hex string without 0x prefix". */
export function invalidParams(message: string): InvalidParamsError {
  return new InvalidParamsError(undefined, { message });
}

/** -32000: every application error (not found, nonce, filters…), geth's default code. */
export function serverError(message: string, cause?: unknown): ServerError {
  return new ServerError(undefined, { message, cause });
}

/** -32603: a result that could not be produced (an encoder or node bug). */
export function internalError(message: string, cause?: unknown): InternalError {
  return new InternalError(undefined, { message, cause });
}

export function requestTimedOut(): RequestTimeoutError {
  return new RequestTimeoutError();
}

export function responseTooLarge(): ResponseTooLargeError {
  return new ResponseTooLargeError();
}

const ERROR_SELECTOR = "08c379a0";
const PANIC_SELECTOR = "4e487b71";

/** Solidity panic codes (geth abi.panicReasons). */
const PANIC_REASONS = new Map<bigint, string>([
  [0x00n, "generic panic"],
  [0x01n, "assert(false)"],
  [0x11n, "arithmetic underflow or overflow"],
  [0x12n, "division or modulo by zero"],
  [0x21n, "enum overflow"],
  [0x22n, "invalid encoded storage byte array accessed"],
  [0x31n, "out-of-bounds array access; popping on an empty array"],
  [0x32n, "out-of-bounds access of an array or bytesN"],
  [0x41n, "out of memory"],
  [0x51n, "uninitialized function"],
]);

/** The reason inside revert data: Error(string) text or a Panic(uint256) meaning; undefined otherwise. */
export function decodeRevertReason(data: Uint8Array): string | undefined {
  if (data.length < 4) return undefined;
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const selector = buf.subarray(0, 4).toString("hex");
  const body = buf.subarray(4);
  if (selector === PANIC_SELECTOR && body.length === 32) {
    const code = BigInt(`0x${body.toString("hex")}`);
    return PANIC_REASONS.get(code) ?? `unknown panic code: 0x${code.toString(16)}`;
  }
  if (selector !== ERROR_SELECTOR || body.length < 64) return undefined;
  const offset = BigInt(`0x${body.subarray(0, 32).toString("hex")}`);
  if (offset + 32n > BigInt(body.length)) return undefined;
  const start = Number(offset);
  const length = BigInt(`0x${body.subarray(start, start + 32).toString("hex")}`);
  if (BigInt(start) + 32n + length > BigInt(body.length)) return undefined;
  return body.subarray(start + 32, start + 32 + Number(length)).toString("utf8");
}

/** Code 3 "execution reverted[: reason]" with the revert bytes as data (geth revertError). */
export function executionReverted(data: Uint8Array): ExecutionRevertedError {
  const reason = decodeRevertReason(data);
  const message = reason === undefined ? "execution reverted" : `execution reverted: ${reason}`;
  return new ExecutionRevertedError(toData(data), { message });
}

/** The EVM server's mapping: RPC errors keep their family; anything else is -32000 with its text. */
export function toEvmRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  return serverError(errorText(err), err);
}

/** A `[json-rpc]` setting outside its valid range; names the key and the valid values. */
export class EvmRpcConfigError extends ComethError {}
