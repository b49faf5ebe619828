import type { CallOutcome } from "./calls.js";
import type { RpcMessage } from "./envelope.js";
import type { RpcError } from "./errors.js";
import { encodeJson, type WireValue } from "./json.js";

/**
 * Method tables and dispatch, for both servers. A method is one table entry: its params (the
 * server's codecs, which only the server's decoder reads), its handler and its flags. Dispatch
 * finds the entry, decodes the params, runs the handler and encodes the answer with the server's
 * error mapping and envelope; a handler that answers synchronously is answered without a promise.
 */

/** A value now, or later: methods that answer synchronously skip the promise machinery. */
export type MaybePromise<T> = T | Promise<T>;

/** Handlers are async functions or plain ones: a native promise is the only thenable they return. */
export function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return v instanceof Promise;
}

/** One table entry of either server. */
export interface RpcMethod<S, C> {
  // biome-ignore lint/suspicious/noExplicitAny: each entry's handler sees its own decoded argument type.
  run(args: any, services: S, ctx: C): MaybePromise<WireValue>;
  /** Only callable over WebSocket (the subscribe family). */
  readonly wsOnly?: boolean;
}

export type MethodTable<M> = { readonly [name: string]: M };

/**
 * What a server adds to the core to run calls arriving with `request` (`T`: its connection or
 * HTTP request): the context handlers see, finding and decoding (the server's table and codecs),
 * its error mapping and its envelope.
 */
export interface MethodServer<S, C, M extends RpcMethod<S, C>, T> {
  readonly services: S;
  /** The context the handler of `msg` sees. */
  context(msg: RpcMessage, request: T, services: S): C;
  /** The entry for `msg.method`; throws the server's "not found" error. */
  find(msg: RpcMessage, ctx: C, services: S): M;
  /** Decodes the params for `m`; throws the server's params error. */
  decode(m: M, msg: RpcMessage, request: T, ctx: C): unknown;
  /** The handler's call, for servers that observe calls (metrics); absent: `m.run`. */
  run?(m: M, args: unknown, ctx: C, msg: RpcMessage): MaybePromise<WireValue>;
  /** Whether a successful answer may be cached (the node RPC's Cache-Control); absent: never. */
  cacheable?(m: M, args: unknown): boolean;
  /** Maps anything decoding or the handler threw to an error family; `ctx` is undefined when it failed before one existed. */
  mapError(err: unknown, msg: RpcMessage, ctx: C | undefined): RpcError;
  encodeSuccess(idJson: string | undefined, resultJson: string): string;
  encodeFailure(idJson: string | undefined, err: RpcError): string;
  /**
   * The error for a result that cannot be encoded (geth: -32603 "could not encode the result");
   * absent: the encoding error propagates (the node RPC's recover answers it).
   */
  encodeFailed?(err: unknown): RpcError;
}

function failure<S, C, M extends RpcMethod<S, C>, T>(
  server: MethodServer<S, C, M, T>,
  msg: RpcMessage,
  ctx: C | undefined,
  err: unknown,
): CallOutcome {
  const text = server.encodeFailure(msg.idJson, server.mapError(err, msg, ctx));
  return { text, resultBytes: 0, cacheable: false, failed: true };
}

function success<S, C, M extends RpcMethod<S, C>, T>(
  server: MethodServer<S, C, M, T>,
  msg: RpcMessage,
  m: M,
  args: unknown,
  result: WireValue,
): CallOutcome {
  let json: string;
  if (server.encodeFailed === undefined) json = encodeJson(result);
  else {
    try {
      json = encodeJson(result);
    } catch (err) {
      const text = server.encodeFailure(msg.idJson, server.encodeFailed(err));
      return { text, resultBytes: 0, cacheable: false, failed: true };
    }
  }
  const cacheable = server.cacheable === undefined ? false : server.cacheable(m, args);
  return { text: server.encodeSuccess(msg.idJson, json), resultBytes: json.length, cacheable, failed: false };
}

/** Runs one call: find, decode, run, encode (see the module comment). Never throws for a failing call. */
export function callMethod<S, C, M extends RpcMethod<S, C>, T>(
  server: MethodServer<S, C, M, T>,
  msg: RpcMessage,
  request: T,
): MaybePromise<CallOutcome> {
  let ctx: C | undefined;
  let m: M;
  let args: unknown;
  let result: MaybePromise<WireValue>;
  try {
    const { services } = server;
    ctx = server.context(msg, request, services);
    m = server.find(msg, ctx, services);
    args = server.decode(m, msg, request, ctx);
    result = server.run === undefined ? m.run(args, services, ctx) : server.run(m, args, ctx, msg);
  } catch (err) {
    return failure(server, msg, ctx, err);
  }
  if (!isPromise(result)) return success(server, msg, m, args, result);
  return result.then(
    (r) => success(server, msg, m, args, r),
    (err: unknown) => failure(server, msg, ctx, err),
  );
}
