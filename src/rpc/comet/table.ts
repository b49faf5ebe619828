import {
  encodeFailureText,
  encodeSuccessText,
  InternalError,
  InvalidParamsError,
  type MaybePromise,
  MethodNotFoundError,
  type MethodServer,
  type RpcError,
  type RpcMessage,
  type RpcMethod,
  type WireValue,
} from "../jsonrpc/index.js";
import type { CometCallContext, CometRuntime, WsSession } from "./context.js";
import { toCometRpcError } from "./errors.js";
import { decodeJsonParams, decodeUriParams, ParamDecodeError, type ParamShape, type ParamValues } from "./params.js";
import type { CometServices } from "./services.js";

/**
 * The node RPC's method table on the shared core (rpc/jsonrpc/dispatch.ts): a route declares its
 * arguments (name → CometBFT codec, in order), its handler and its flags; URI calls, JSON-RPC over
 * HTTP and WebSocket read the same table, each through a {@link MethodServer} of its transport.
 */

export interface Route<S, C, P extends ParamShape = ParamShape> extends RpcMethod<S, C> {
  readonly params: P;
  run(args: ParamValues<P>, services: S, ctx: C): MaybePromise<WireValue>;
  /** Registered only when the server enables unsafe routes. */
  readonly unsafe?: boolean;
  /** Answers may be cached: `true` always, or only when each listed argument is set (non-zero). */
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

type CometTransport = CometCallContext["transport"];

/** What a call arrives with besides its message. */
export interface CometRequest {
  /** The client's `ip:port`. */
  readonly remoteAddr: string;
  readonly ws: WsSession | undefined;
  /** URI calls: an argument's text from the query (or a form body); "" when absent. */
  readonly uriArg: ((name: string) => string) | undefined;
}

/** The id of URI answers (URIClientRequestID). */
export const URI_ID = -1n;

/** A URI call's message: id -1, no params (they come from the query). */
export function uriMessage(route: string): RpcMessage {
  return { kind: "call", idJson: "-1", id: URI_ID, method: route, params: undefined };
}

type CometRoute = Route<CometServices, CometCallContext>;
export type CometCalls = MethodServer<CometServices, CometCallContext, CometRoute, CometRequest>;

/**
 * The node RPC's calls over one transport: a route restricted to WebSocket is "not found"
 * elsewhere; undecodable params are -32602, except over WebSocket where CometBFT answers -32603.
 */
export function cometCalls(
  routes: RouteTable<CometServices, CometCallContext>,
  services: CometServices,
  runtime: CometRuntime,
  transport: CometTransport,
): CometCalls {
  return {
    services,
    context: (msg, request) => ({
      transport,
      remoteAddr: request.remoteAddr,
      requestId: msg.id,
      runtime,
      ws: request.ws,
    }),
    find: (msg) => {
      const route = Object.hasOwn(routes, msg.method) ? routes[msg.method] : undefined;
      if (route === undefined || (route.wsOnly === true && transport !== "ws")) throw new MethodNotFoundError();
      return route;
    },
    decode: transport === "uri" ? decodeUri : transport === "ws" ? decodeWs : decodeHttp,
    cacheable: (route, args) => isCacheable(route, args as Record<string, unknown>),
    mapError: toCometRpcError,
    encodeSuccess: encodeSuccessText,
    encodeFailure: encodeCometFailure,
  };
}

/** CometBFT's failure text: an empty `data` is left out. */
export function encodeCometFailure(idJson: string | undefined, err: RpcError): string {
  return encodeFailureText(idJson, err, true);
}

function decodeJson(route: CometRoute, msg: RpcMessage, paramsError: (detail: string) => RpcError): unknown {
  try {
    return decodeJsonParams(route.params, msg.params);
  } catch (err) {
    if (!(err instanceof ParamDecodeError)) throw err;
    throw paramsError(`error converting json params to arguments: ${err.message}`);
  }
}

function decodeHttp(route: CometRoute, msg: RpcMessage): unknown {
  return decodeJson(route, msg, (d) => new InvalidParamsError(d));
}

function decodeWs(route: CometRoute, msg: RpcMessage): unknown {
  return decodeJson(route, msg, (d) => new InternalError(d));
}

function decodeUri(route: CometRoute, _msg: RpcMessage, request: CometRequest): unknown {
  try {
    return decodeUriParams(route.params, request.uriArg ?? noArg);
  } catch (err) {
    if (!(err instanceof ParamDecodeError)) throw err;
    throw new InvalidParamsError(`error converting http params to arguments: ${err.message}`);
  }
}

function noArg(): string {
  return "";
}
