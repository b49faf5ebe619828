import { EncodedJson, type MaybePromise, type RpcMessage, type WireValue } from "../jsonrpc/index.js";
import { toQuantity } from "./encode/hex.js";
import type { BlockRef, BlockSpec, FilterCriteria } from "./params.js";
import type { EvmServices } from "./services.js";

/**
 * A forked dev chain's history before the fork, answered by its source (docs/dev-chain.md "Forking":
 * the source's history). The chain's genesis is the fork block (its initial_height is the fork block
 * + 1), so block numbers and heights are the same on both chains and a request is passed on with its
 * params as the client wrote them, its block tag replaced by the number it named here:
 *
 * - a block by number at or below the fork block (the fork block itself too: the chain holds no
 *   block there, only its state);
 * - state by number below the fork block (at the fork block the chain's genesis answers: the source's
 *   state with the dev accounts funded);
 * - eth_getLogs over a range that starts at or below the fork block: that part from the source, the
 *   rest from the chain; a block hash the chain does not hold goes to the source.
 *
 * Everything else, and every request on a chain that is no fork, runs here as usual.
 */

/** Which argument names the block, and whether the method reads a block or the state after it. */
interface Route {
  readonly arg: number;
  readonly reads: "block" | "state";
}

const ROUTES: ReadonlyMap<string, Route> = new Map<string, Route>([
  ["eth_getBlockByNumber", { arg: 0, reads: "block" }],
  ["eth_getHeaderByNumber", { arg: 0, reads: "block" }],
  ["eth_getBlockTransactionCountByNumber", { arg: 0, reads: "block" }],
  ["eth_getTransactionByBlockNumberAndIndex", { arg: 0, reads: "block" }],
  ["eth_getUncleCountByBlockNumber", { arg: 0, reads: "block" }],
  ["eth_getBlockReceipts", { arg: 0, reads: "block" }],
  ["debug_traceBlockByNumber", { arg: 0, reads: "block" }],
  // Its newest block at or below the fork block: the whole history is the source's.
  ["eth_feeHistory", { arg: 1, reads: "block" }],
  ["eth_getBalance", { arg: 1, reads: "state" }],
  ["eth_getCode", { arg: 1, reads: "state" }],
  ["eth_getStorageAt", { arg: 2, reads: "state" }],
  ["eth_getTransactionCount", { arg: 1, reads: "state" }],
  ["eth_getAccountInfo", { arg: 1, reads: "state" }],
  ["eth_getProof", { arg: 2, reads: "state" }],
  ["eth_call", { arg: 1, reads: "state" }],
  ["eth_estimateGas", { arg: 1, reads: "state" }],
  ["eth_createAccessList", { arg: 1, reads: "state" }],
  ["debug_traceCall", { arg: 1, reads: "state" }],
]);

/** The number a block argument names (tags are the head); undefined for a hash or an absent argument. */
function numberOf(ref: BlockRef | BlockSpec | undefined, s: EvmServices): number | undefined {
  if (ref === undefined || ref.kind === "hash") return undefined;
  return ref.kind === "number" ? ref.number : s.chain.latestHeight();
}

/** The client's params as plain JSON (decoded already, so they parse). */
function plainParams(msg: RpcMessage): unknown[] {
  const raw = msg.params === undefined || msg.params.kind === "null" ? [] : JSON.parse(msg.params.raw);
  return Array.isArray(raw) ? raw : [];
}

/**
 * The fork's source's answer, passed on as it is; null on a chain that is no fork. Throws (-32000)
 * when the source cannot be reached or answers with an error.
 */
export function fromForkSource(s: EvmServices, method: string, params: unknown[]): WireValue {
  const answer = s.chain.fromForkSource?.(method, params);
  return answer === undefined ? null : (answer as WireValue);
}

/**
 * The answer of a request only the fork's source holds, or undefined when the chain answers it
 * (`runHere` runs the method here with other arguments: eth_getLogs's part after the fork).
 */
export function forkHistoryCall(
  msg: RpcMessage,
  args: readonly unknown[],
  s: EvmServices,
  runHere: (args: readonly unknown[]) => MaybePromise<WireValue>,
): MaybePromise<WireValue> | undefined {
  if (msg.method === "eth_getLogs") return logsCall(msg, args[0] as FilterCriteria, s, runHere);
  const route = ROUTES.get(msg.method);
  if (route === undefined) return undefined;
  const top = s.chain.forkBlock?.();
  if (top === undefined) return undefined;
  const n = numberOf(args[route.arg] as BlockRef | undefined, s);
  if (n === undefined || (route.reads === "block" ? n > top : n >= top)) return undefined;
  const params = plainParams(msg);
  params[route.arg] = toQuantity(n);
  return fromForkSource(s, msg.method, params);
}

function logsCall(
  msg: RpcMessage,
  criteria: FilterCriteria,
  s: EvmServices,
  runHere: (args: readonly unknown[]) => MaybePromise<WireValue>,
): MaybePromise<WireValue> | undefined {
  const top = s.chain.forkBlock?.();
  if (top === undefined || criteria === undefined) return undefined;
  const [raw] = plainParams(msg) as [Record<string, unknown>];
  if (criteria.blockHash !== undefined) {
    const hash = criteria.blockHash;
    const local = s.chain.blockByHash(hash);
    const forward = (b: unknown) => (b === undefined ? fromForkSource(s, "eth_getLogs", [raw]) : runHere([criteria]));
    return local instanceof Promise ? local.then(forward) : forward(local);
  }
  // Pending is refused by the chain's own eth_getLogs; every other tag is the head.
  if (criteria.fromBlock?.kind === "tag" && criteria.fromBlock.tag === "pending") return undefined;
  if (criteria.toBlock?.kind === "tag" && criteria.toBlock.tag === "pending") return undefined;
  const head = s.chain.latestHeight();
  const from = numberOf(criteria.fromBlock, s) ?? head;
  const to = numberOf(criteria.toBlock, s) ?? head;
  // Ranges after the fork, and ranges the chain refuses (reversed, past the head), run here.
  if (from > top || from > to || to > head) return undefined;
  const before = fromForkSource(s, "eth_getLogs", [
    { ...raw, fromBlock: toQuantity(from), toBlock: toQuantity(Math.min(to, top)) },
  ]);
  if (to <= top) return before;
  const after = runHere([{ ...criteria, fromBlock: { kind: "number", number: top + 1 } }]);
  return after instanceof Promise ? after.then((a) => joinLogs(before, a)) : joinLogs(before, after);
}

/** The source's logs, then the chain's (an encoded JSON array or plain values). */
function joinLogs(before: WireValue, after: WireValue): WireValue {
  const first = JSON.stringify(Array.isArray(before) ? before : []).slice(1, -1);
  const second = (after instanceof EncodedJson ? after.text : JSON.stringify(after ?? [])).slice(1, -1);
  return new EncodedJson(`[${first}${first !== "" && second !== "" ? "," : ""}${second}]`);
}
