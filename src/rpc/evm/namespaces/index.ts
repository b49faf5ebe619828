import { methodNotFound, notImplemented } from "../errors.js";
import { type Method, method, type Namespace } from "../method.js";
import { admin } from "./admin.js";
import { debug } from "./debug.js";
import { DEV_NAMESPACES } from "./dev.js";
import { eth } from "./eth.js";
import { miner } from "./miner.js";
import { net } from "./net.js";
import { OTTERSCAN_NAMESPACES, TRACE_METHOD_NOT_SERVED } from "./otterscan.js";
import { personal } from "./personal.js";
import { txpool } from "./txpool.js";
import { web3 } from "./web3.js";

/**
 * The namespaces `[json-rpc] api` switches on, plus geth's built-in `rpc_modules` (always on).
 * A method is found by splitting its name at the first underscore.
 */

export const NAMESPACES = { eth, web3, net, txpool, debug, personal, admin, miner } as const;
export type NamespaceName = keyof typeof NAMESPACES;
export const NAMESPACE_NAMES = Object.keys(NAMESPACES) as NamespaceName[];

/** geth's rpc_modules: every served namespace with version "1.0". */
const rpc = {
  modules: method([], (_, _s, ctx) => {
    const out: Record<string, string> = {};
    for (const ns of NAMESPACE_NAMES) if (ctx.runtime.settings.namespaces.has(ns)) out[ns] = "1.0";
    out.rpc = "1.0";
    return out;
  }),
} satisfies Namespace;

/** Namespaces that answer "not implemented" (docs/ethereum-rpc.md "Methods that are not implemented"). */
const NOT_SERVED: Readonly<Record<string, string>> = {
  engine: "the Engine API does not apply: CometBFT consensus builds the blocks",
};

/** Finds a method, or throws -32601 naming why (unknown, or its namespace is switched off). */
export function findMethod(name: string, enabled: ReadonlySet<string>): Method {
  const sep = name.indexOf("_");
  const ns = sep < 0 ? "" : name.slice(0, sep);
  const short = name.slice(sep + 1);
  if (ns === "rpc") {
    if (Object.hasOwn(rpc, short)) return rpc[short as keyof typeof rpc];
    throw methodNotFound(name);
  }
  const why = NOT_SERVED[ns];
  if (why !== undefined) throw notImplemented(name, why);
  const otsTable = Object.hasOwn(OTTERSCAN_NAMESPACES, ns) ? OTTERSCAN_NAMESPACES[ns] : undefined;
  if (otsTable !== undefined) {
    // Always routed: off a dev chain each method answers what Cosmos EVM answers (trace_: not implemented).
    if (Object.hasOwn(otsTable, short)) return otsTable[short] as Method;
    if (ns === "trace") throw notImplemented(name, TRACE_METHOD_NOT_SERVED);
    throw methodNotFound(name);
  }
  const devTable = Object.hasOwn(DEV_NAMESPACES, ns) ? DEV_NAMESPACES[ns] : undefined;
  if (devTable !== undefined) {
    // Always routed: on a chain that is not a dev chain the method itself says what it needs.
    if (!Object.hasOwn(devTable, short)) throw methodNotFound(name);
    return devTable[short] as Method;
  }
  if (!Object.hasOwn(NAMESPACES, ns)) throw methodNotFound(name);
  const table: Namespace = NAMESPACES[ns as NamespaceName];
  if (!Object.hasOwn(table, short)) throw methodNotFound(name);
  if (!enabled.has(ns)) {
    throw methodNotFound(name, `the ${ns} namespace is not enabled; add it to [json-rpc] api in app.toml`);
  }
  return table[short] as Method;
}
