import type { JsonNode, RpcMethod, WireValue } from "../jsonrpc/index.js";
import type { EvmCallContext } from "./context.js";
import { invalidParams, notImplemented as notImplementedError } from "./errors.js";
import { type Param, ParamError, type ParamValues } from "./params.js";
import type { Awaitable, EvmServices } from "./services.js";

/**
 * A method is one table entry: its positional params and a handler. Decoding follows geth's
 * parsePositionalArguments: params must be an array (or absent/null), extra items are refused,
 * missing required ones are named, and each item's failure reads "invalid argument N: …".
 */

export interface Method extends RpcMethod<EvmServices, EvmCallContext> {
  readonly params: readonly Param<unknown>[];
  run(args: readonly unknown[], services: EvmServices, ctx: EvmCallContext): Awaitable<WireValue>;
  /** WebSocket only (eth_subscribe): over HTTP it answers "notifications not supported". */
  readonly wsOnly?: boolean;
  /** Params are not decoded (not-implemented methods answer the same whatever they get). */
  readonly ignoresParams?: boolean;
  /** Checked before the params are decoded: throws when the node cannot serve the method at all. */
  readonly guard?: (services: EvmServices, ctx: EvmCallContext) => void;
}

export type Namespace = { readonly [name: string]: Method };

export function method<const P extends readonly Param<unknown>[]>(
  params: P,
  run: (args: ParamValues<P>, services: EvmServices, ctx: EvmCallContext) => Awaitable<WireValue>,
  opts: { wsOnly?: boolean } = {},
): Method {
  const m: Method = { params, run: (args, s, ctx) => run(args as ParamValues<P>, s, ctx) };
  return opts.wsOnly === true ? { ...m, wsOnly: true } : m;
}

/**
 * A method cometh answers with a clear "not implemented" error (docs/ethereum-rpc.md "Methods that
 * are not implemented").
 */
export function notImplemented(why: string): Method {
  return {
    params: [],
    ignoresParams: true,
    run: (_args, _s, ctx) => {
      throw notImplementedError(ctx.method, why);
    },
  };
}

/** Decodes `params` against the method's codecs. Throws -32602 with geth's wording. */
export function decodeArgs(m: Method, params: JsonNode | undefined): unknown[] {
  if (m.ignoresParams === true) return [];
  let items: readonly JsonNode[] = [];
  if (params !== undefined && params.kind !== "null") {
    if (params.kind !== "array") throw invalidParams("non-array args");
    items = params.items;
  }
  if (items.length > m.params.length) throw invalidParams(`too many arguments, want at most ${m.params.length}`);
  const out: unknown[] = [];
  m.params.forEach((param, i) => {
    const node = items[i];
    if (node === undefined) {
      if (!param.optional) throw invalidParams(`missing value for required argument ${i}`);
      out.push(undefined);
      return;
    }
    try {
      out.push(param.decode(node));
    } catch (err) {
      if (err instanceof ParamError) throw invalidParams(`invalid argument ${i}: ${err.message}`);
      throw err;
    }
  });
  return out;
}
