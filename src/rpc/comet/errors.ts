import { errorText, InternalError, RpcError } from "../jsonrpc/index.js";

/**
 * The node RPC's one mapping from thrown values to JSON-RPC families: RPC errors keep their code;
 * anything else (a domain error such as MempoolFullError, a store failure) is CometBFT's
 * -32603 "Internal error" with the error text as data.
 */
export function toCometRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  return new InternalError(errorText(err), { cause: err });
}
