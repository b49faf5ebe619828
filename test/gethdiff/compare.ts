import { type Difference, diffValues, type MustDiffer, unexpected } from "./diff.js";
import type { Endpoint, NodePair, RpcAnswer } from "./nodes.js";

/** Params that name something only one node knows (its own block hash): computed per node. */
export type Params = unknown[] | ((e: Endpoint) => unknown[] | Promise<unknown[]>);

/** Every difference between the two answers found so far (the report printed at the end). */
export const found: { label: string; diffs: Difference[] }[] = [];

function strip(a: RpcAnswer): { result?: unknown; error?: unknown } {
  return a.error !== undefined ? { error: a.error } : { result: a.result };
}

/**
 * Sends one request to both nodes and returns the differences MUST_DIFFER (and `extra`) does not
 * name; every difference, expected or not, is kept in `found`.
 */
export async function compareCall(
  pair: NodePair,
  method: string,
  params: Params = [],
  opts: { label?: string; extra?: readonly MustDiffer[]; map?: (v: unknown, e: Endpoint) => unknown } = {},
): Promise<{ geth: RpcAnswer; cometh: RpcAnswer; unexpected: Difference[] }> {
  const answers: RpcAnswer[] = [];
  for (const e of pair.both) {
    const p = typeof params === "function" ? await params(e) : params;
    answers.push(await e.call(method, p));
  }
  const [geth, cometh] = answers as [RpcAnswer, RpcAnswer];
  const shown = (a: RpcAnswer, e: Endpoint) => {
    const s = strip(a);
    return opts.map !== undefined && s.result !== undefined ? { result: opts.map(s.result, e) } : s;
  };
  const label = opts.label ?? `${method} ${JSON.stringify(typeof params === "function" ? "(per node)" : params)}`;
  const diffs = diffValues(shown(geth, pair.geth), shown(cometh, pair.cometh), method);
  if (diffs.length > 0) found.push({ label, diffs });
  return { geth, cometh, unexpected: unexpected(diffs, label, opts.extra) };
}
