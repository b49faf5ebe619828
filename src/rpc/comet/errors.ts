import { errorText, InternalError, ParseError, RpcError } from "../jsonrpc/index.js";
import type { RequestDecodeError } from "./request.js";

/**
 * The node RPC's one mapping from thrown values to JSON-RPC families: RPC errors keep their code;
 * anything else (a domain error such as MempoolFullError, a store failure) is CometBFT's
 * -32603 "Internal error" with the error text as data.
 */
export function toCometRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  return new InternalError(errorText(err), { cause: err });
}

/** CometBFT's parse error message (types.RPCParseError). */
export const PARSE_ERROR_MESSAGE = "Parse error. Invalid JSON";

/** CometBFT's answer to a body or frame that is not a request. */
export function parseErrorOf(err: RequestDecodeError): ParseError {
  return new ParseError(`error unmarshaling request: ${err.message}`, { message: PARSE_ERROR_MESSAGE });
}
