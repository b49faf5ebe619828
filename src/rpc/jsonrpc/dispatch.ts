import {
  errorResponse,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  successResponse,
} from "./envelope.js";
import { InternalError, InvalidParamsError, MethodNotFoundError, RpcError } from "./errors.js";
import type { WireValue } from "./json.js";
import { decodeJsonParams, decodeUriParams, ParamDecodeError, type ParamShape, type ParamValues } from "./params.js";

/**
 * Route tables and dispatch. A route declares its arguments (name → codec, in order) and a handler
 * that returns a wire value; every transport of a server reads the same table.
 */

export interface Route<S, C, P extends ParamShape = ParamShape> {
  readonly params: P;
  run(args: ParamValues<P>, services: S, ctx: C): WireValue | Promise<WireValue>;
  /** Only callable over this transport (CometBFT's subscribe family is WebSocket-only). */
  readonly transport?: "ws";
  /** Registered only when the server enables unsafe routes. */
  readonly unsafe?: boolean;
  /**
   * Answers may be cached: `true` always, or only when each listed argument is set (non-zero).
   */
  readonly cacheable?: boolean | { readonly whenSet: readonly (keyof P & string)[] };
}

export type RouteTable<S, C> = { readonly [method: string]: Route<S, C, ParamShape> };

/**
 * Declares a route table; each entry's handler sees its own decoded argument types.
 * Curried so that services and context are named once: `defineRoutes<S, C>()({...})`.
 */
export function defineRoutes<S, C>() {
  return <T extends { [K in keyof T]: ParamShape }>(routes: { [K in keyof T]: Route<S, C, T[K]> }): RouteTable<S, C> =>
    routes as unknown as RouteTable<S, C>;
}

/** A route's param names in order (for endpoint listings). */
export function routeParamNames(route: Route<unknown, unknown>): string[] {
  return Object.keys(route.params);
}

export function isCacheable(route: Route<unknown, unknown>, args: Record<string, unknown>): boolean {
  const c = route.cacheable;
  if (c === undefined || c === false) return false;
  if (c === true) return true;
  return c.whenSet.every((name) => {
    const codec = route.params[name];
    return codec !== undefined && !codec.isZero(args[name]);
  });
}

export interface DispatchOptions {
  /** Which transport is calling; a route restricted to another transport is "not found". */
  readonly transport: "ws" | "http" | "uri";
  /** The error family for undecodable params (CometBFT uses -32603 over WebSocket). */
  readonly paramsError: (detail: string) => RpcError;
  /** Maps anything a handler throws to an error family (the server's one mapping function). */
  readonly mapError: (err: unknown) => RpcError;
}

export interface DispatchResult {
  readonly response: JsonRpcResponse;
  /** The route is cacheable with these arguments and the call succeeded. */
  readonly cacheable: boolean;
}

function lookup<S, C>(table: RouteTable<S, C>, method: string, transport: DispatchOptions["transport"]) {
  if (!Object.hasOwn(table, method)) return undefined;
  const route = table[method];
  if (route === undefined) return undefined;
  if (route.transport !== undefined && route.transport !== transport) return undefined;
  return route;
}

/** A value now, or later: routes that answer synchronously skip the promise machinery. */
export type MaybePromise<T> = T | Promise<T>;

/** Handlers are async functions or plain ones: a native promise is the only thenable they return. */
export function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return v instanceof Promise;
}

function succeeded<S, C>(
  route: Route<S, C>,
  args: ParamValues<ParamShape>,
  id: JsonRpcId | undefined,
  result: WireValue,
): DispatchResult {
  return { response: successResponse(id, result), cacheable: isCacheable(route, args) };
}

function failed(id: JsonRpcId | undefined, opts: DispatchOptions, err: unknown): DispatchResult {
  return { response: errorResponse(id, opts.mapError(err)), cacheable: false };
}

function runRoute<S, C>(
  route: Route<S, C>,
  id: JsonRpcId | undefined,
  args: ParamValues<ParamShape>,
  services: S,
  ctx: C,
  opts: DispatchOptions,
): MaybePromise<DispatchResult> {
  let result: WireValue | Promise<WireValue>;
  try {
    result = route.run(args, services, ctx);
  } catch (err) {
    return failed(id, opts, err);
  }
  if (!isPromise(result)) return succeeded(route, args, id, result);
  return result.then(
    (r) => succeeded(route, args, id, r),
    (err) => failed(id, opts, err),
  );
}

/** Runs one JSON-RPC request (not a notification) against the table. */
export function dispatchRequest<S, C>(
  table: RouteTable<S, C>,
  req: JsonRpcRequest,
  services: S,
  ctx: C,
  opts: DispatchOptions,
): MaybePromise<DispatchResult> {
  const route = lookup(table, req.method, opts.transport);
  if (route === undefined) return { response: errorResponse(req.id, new MethodNotFoundError()), cacheable: false };
  let args: ParamValues<ParamShape>;
  try {
    args = decodeJsonParams(route.params, req.params);
  } catch (err) {
    if (!(err instanceof ParamDecodeError)) throw err;
    const detail = `error converting json params to arguments: ${err.message}`;
    return { response: errorResponse(req.id, opts.paramsError(detail)), cacheable: false };
  }
  return runRoute(route, req.id, args, services, ctx, opts);
}

/** Runs a URI call (`GET /<method>?a=..`); `get` returns "" for an absent argument. */
export function dispatchUri<S, C>(
  route: Route<S, C>,
  id: JsonRpcId,
  get: (name: string) => string,
  services: S,
  ctx: C,
  opts: DispatchOptions,
): MaybePromise<DispatchResult & { readonly paramsFailed: boolean }> {
  let args: ParamValues<ParamShape>;
  try {
    args = decodeUriParams(route.params, get);
  } catch (err) {
    if (!(err instanceof ParamDecodeError)) throw err;
    const detail = `error converting http params to arguments: ${err.message}`;
    return { response: errorResponse(id, new InvalidParamsError(detail)), cacheable: false, paramsFailed: true };
  }
  const run = runRoute(route, id, args, services, ctx, opts);
  if (!isPromise(run)) return { response: run.response, cacheable: run.cacheable, paramsFailed: false };
  return run.then((r) => ({ response: r.response, cacheable: r.cacheable, paramsFailed: false }));
}

/** The default error mapping: RPC errors pass through, anything else is -32603 with its text. */
export function defaultMapError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  return new InternalError(err instanceof Error ? err.message : String(err), { cause: err });
}
