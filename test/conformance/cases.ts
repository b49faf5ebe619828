/**
 * The execution-apis conformance cases (tests/<method>/<case>.io: `//` comment lines, then request
 * `>>` and response `<<` lines in turn, answered by geth on the test chain) and how an answer is
 * compared with the recorded one.
 */

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface IoExchange {
  request: string;
  response: string;
}

export interface IoCase {
  method: string;
  /** `<method>/<file name without .io>`. */
  name: string;
  /** "speconly": hive checks only that the answer fits the spec's schema, not its values. */
  specOnly: boolean;
  comments: string[];
  exchanges: IoExchange[];
}

export function loadCases(dir: string): IoCase[] {
  const out: IoCase[] = [];
  for (const method of readdirSync(dir).sort()) {
    const sub = join(dir, method);
    if (!statSync(sub).isDirectory()) continue;
    for (const file of readdirSync(sub).sort()) {
      if (!file.endsWith(".io")) continue;
      const lines = readFileSync(join(sub, file), "utf8").split("\n");
      const comments = lines.filter((l) => l.startsWith("//")).map((l) => l.slice(2).trim());
      const exchanges: IoExchange[] = [];
      for (const l of lines) {
        if (l.startsWith(">> ")) exchanges.push({ request: l.slice(3), response: "" });
        else if (l.startsWith("<< ")) {
          const last = exchanges.at(-1);
          if (last !== undefined) last.response = l.slice(3);
        }
      }
      out.push({
        method,
        name: `${method}/${file.replace(/\.io$/, "")}`,
        specOnly: comments.some((c) => c.startsWith("speconly")),
        comments,
        exchanges,
      });
    }
  }
  return out;
}

/** Replaces every key of `swaps` (hex without 0x) found in `text` by its value. */
export function replaceAll(text: string, swaps: Map<string, string>): string {
  let out = text;
  for (const [from, to] of swaps) if (from !== to) out = out.split(from).join(to);
  return out;
}

/**
 * The first differences between `want` and `got`, fields named in `ignore` left out. With `shapeOnly`
 * (speconly cases) only the structure is compared: the same keys, JSON types and array lengths' being
 * zero or not (the first element standing for the rest), so a struct log's gas may differ but not its
 * field set.
 */
export function differences(
  want: unknown,
  got: unknown,
  opts: { ignore?: ReadonlySet<string>; shapeOnly?: boolean } = {},
  path = "$",
  out: string[] = [],
): string[] {
  if (out.length >= 5) return out;
  const show = (v: unknown) => JSON.stringify(v)?.slice(0, 160);
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) {
      out.push(`${path}: expected an array ${show(want)} got ${show(got)}`);
      return out;
    }
    if (opts.shapeOnly) {
      if ((want.length === 0) !== (got.length === 0))
        out.push(`${path}: expected ${want.length} items got ${got.length}`);
      else if (want.length > 0) differences(want[0], got[0], opts, `${path}[0]`, out);
      return out;
    }
    if (got.length !== want.length) {
      out.push(`${path}: expected ${want.length} items ${show(want)} got ${got.length} ${show(got)}`);
      return out;
    }
    for (const [i, w] of want.entries()) differences(w, got[i], opts, `${path}[${i}]`, out);
    return out;
  }
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object" || Array.isArray(got)) {
      out.push(`${path}: expected an object got ${show(got)}`);
      return out;
    }
    const w = want as Record<string, unknown>;
    const g = got as Record<string, unknown>;
    // A map keyed by addresses or numbers (txpool_content's senders and nonces): the first entry
    // stands for the rest, as an array's first item does.
    if (opts.shapeOnly && isKeyedMap(w)) {
      const [wk] = Object.keys(w);
      const [gk] = Object.keys(g);
      if ((wk === undefined) !== (gk === undefined))
        out.push(`${path}: expected ${Object.keys(w).length} keys got ${Object.keys(g).length}`);
      else if (wk !== undefined && gk !== undefined) differences(w[wk], g[gk], opts, `${path}.${gk}`, out);
      return out;
    }
    for (const key of new Set([...Object.keys(w), ...Object.keys(g)])) {
      if (opts.ignore?.has(key)) continue;
      if (opts.shapeOnly && !(key in w)) {
        out.push(`${path}.${key}: not in the expected answer`);
        continue;
      }
      differences(w[key], g[key], opts, `${path}.${key}`, out);
    }
    return out;
  }
  if (opts.shapeOnly) {
    if (typeof want !== typeof got || (want === null) !== (got === null)) {
      out.push(`${path}: expected a ${want === null ? "null" : typeof want} got ${show(got)}`);
    }
    return out;
  }
  if (want !== got) out.push(`${path}: expected ${show(want)} got ${show(got)}`);
  return out;
}

function isKeyedMap(o: Record<string, unknown>): boolean {
  const keys = Object.keys(o);
  return keys.length > 0 && keys.every((k) => /^(0x[0-9a-fA-F]{40}|[0-9]+)$/.test(k));
}
