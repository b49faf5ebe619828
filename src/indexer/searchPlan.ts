import type { Query, QueryCondition } from "../events/index.js";
import { UnsupportedQueryError } from "./errors.js";
import {
  compareGoNumber,
  decodeGoHex,
  type GoNumber,
  goNumberFromInteger,
  goNumberToInt64,
  goTrimSpace,
  parseGoNumber,
} from "./goValues.js";

/**
 * tx_search and block_search as CometBFT v0.38's kv indexers evaluate them (state/txindex/kv/kv.go
 * Search, state/indexer/block/kv/kv.go Search, their dedupHeight/checkHeightConditions, and
 * state/indexer/query_range.go + internal/indexer CheckBounds), written over an abstract row source
 * so the kv and psql indexers answer identically. What the Go code does, step by step:
 *
 * - tx only: the first `tx.hash` condition, whatever its operator, short-circuits into a lookup by
 *   the hex-decoded argument.
 * - dedupHeight: the first `<height key> = N` (N read by Arg.Number, truncated to int64) is kept
 *   and later ones dropped; any other operator on the height key (a range, but also EXISTS or
 *   CONTAINS) drops every `=` on it. With other conditions, `= N` is not matched itself but filters
 *   every row by height (N = 0 filters nothing). block only: `block.height = N` alone is a lookup
 *   of N.
 * - ranges: `<`, `<=`, `>`, `>=` on one key merge into one range (a later bound replaces an earlier
 *   one on the same side; the inclusive flag never resets), and one value must satisfy the whole
 *   range. A range on `tx.height`/`block.height` also becomes the height filter (and replaces the
 *   `=` filter). A range on the height key itself is matched only when the query has nothing else.
 * - numbers: the attribute value must parse entirely as a Go big.Int or big.Float (see goValues);
 *   `=` is always a text comparison of the value with the argument as written (`x = 5` does not
 *   match "5.0"); CONTAINS is a substring test; EXISTS tests presence of the composite key.
 * - tx values are whitespace-trimmed before CONTAINS and range tests (bytes.TrimSpace in
 *   extractValueFromKey); block values are not (orderedcode keys).
 * - AND: every condition must be satisfied by the same event occurrence of the same tx/block (the
 *   Go code intersects hash+eventSeq / height+eventSeq). A tx's height row counts as its own event
 *   (eventSeq 0), shared by every copy of the tx. A condition on an event type alone (`transfer
 *   EXISTS`) matches nothing: only composite keys are indexed.
 *
 * Deliberate difference: CometBFT's kv indexers cannot compare TIME/DATE ranges (matchRange only
 * handles numbers, so such queries return nothing). Here a range whose bounds are all TIME (or all
 * DATE) compares each value the way the pubsub matcher does (events/ QueryCondition.matchesValue).
 */

export const TX_HASH_KEY = "tx.hash";
export const TX_HEIGHT_KEY = "tx.height";
export const BLOCK_HEIGHT_KEY = "block.height";

export type IndexKind = "tx" | "block";

/** One stored attribute occurrence, as a search reads it. */
export interface IndexRow {
  readonly value: string;
  readonly height: number;
  /** The event occurrence within its target: all conditions must hold in the same one. */
  readonly event: string;
  /** What a match yields: the tx hash as lowercase hex, or the block height in decimal. */
  readonly target: string;
}

/** The rows one condition reads. The hints only narrow the scan; `test` decides. */
export interface SearchStep {
  /** Composite key. */
  readonly tag: string;
  /**
   * Read the per-tx height rows (`tx.height`, value = the height, event "0") or the per-block
   * primary rows (`block.height`) instead of event attributes.
   */
  readonly heightRows: boolean;
  readonly valueEquals: string | undefined;
  /** A substring of every matching (untrimmed) value. */
  readonly valueContains: string | undefined;
  /** Every matching row has minHeight ≤ height ≤ maxHeight. */
  readonly minHeight: number;
  readonly maxHeight: number;
  test(row: IndexRow): boolean;
}

export type SearchPlan =
  | { readonly type: "hash"; readonly hash: Uint8Array }
  /** block only: is this height indexed? (undefined: a height that cannot exist) */
  | { readonly type: "height"; readonly height: number | undefined }
  /** No steps: nothing matches. */
  | { readonly type: "steps"; readonly steps: readonly SearchStep[] };

type Bound =
  | { readonly kind: "number"; readonly value: GoNumber }
  | { readonly kind: "time"; readonly cond: QueryCondition };

interface QueryRange {
  readonly key: string;
  lower: Bound | undefined;
  upper: Bound | undefined;
  includeLower: boolean;
  includeUpper: boolean;
}

const RANGE_OPS = new Set(["<", "<=", ">", ">="]);

/** Arg.Number(): the argument text as a number, whatever the argument's type. */
function argNumber(c: QueryCondition): GoNumber | undefined {
  return c.arg === undefined ? undefined : parseGoNumber(c.arg.text);
}

/** conditionArg: numbers as big.Float, TIME/DATE as times (string arguments cannot reach a range). */
function conditionBound(c: QueryCondition): Bound | undefined {
  if (c.arg === undefined) return undefined;
  if (c.arg.type === "time" || c.arg.type === "date") return { kind: "time", cond: c };
  const value = argNumber(c);
  return value === undefined ? undefined : { kind: "number", value };
}

function safeHeight(h: bigint): number | undefined {
  return h >= 1n && h <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(h) : undefined;
}

/** CheckBounds for a numeric value; a TIME/DATE bound makes it fail, as in Go. */
function inNumberRange(r: QueryRange, v: GoNumber): boolean {
  if (r.lower !== undefined) {
    if (r.lower.kind !== "number") return false;
    const c = compareGoNumber(v, r.lower.value);
    if (c < 0 || (c === 0 && !r.includeLower)) return false;
  }
  if (r.upper !== undefined) {
    if (r.upper.kind !== "number") return false;
    const c = compareGoNumber(v, r.upper.value);
    if (c > 0 || (c === 0 && !r.includeUpper)) return false;
  }
  return true;
}

function inTimeRange(r: QueryRange, value: string): boolean {
  for (const b of [r.lower, r.upper]) {
    if (b === undefined) continue;
    if (b.kind !== "time" || !b.cond.matchesValue(value)) return false;
  }
  return true;
}

/** Inclusive integer heights that can satisfy a numeric range (a superset). */
function heightSpan(r: QueryRange | undefined): { min: number; max: number } {
  const span = { min: 1, max: Number.MAX_SAFE_INTEGER };
  if (r === undefined) return span;
  if (r.lower?.kind === "number") {
    const lo = goNumberToInt64(r.lower.value);
    if (lo > BigInt(span.min)) span.min = lo > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(lo);
  }
  if (r.upper?.kind === "number") {
    const hi = goNumberToInt64(r.upper.value) + 1n;
    if (hi < BigInt(span.max)) span.max = hi < 0n ? 0 : Number(hi);
  }
  return span;
}

interface HeightInfo {
  conditions: QueryCondition[];
  /** 0 when there is no height filter by equality. */
  height: bigint;
  heightEqIdx: number;
  onlyHeightEq: boolean;
  onlyHeightRange: boolean;
  found: boolean;
}

function dedupHeight(conditions: readonly QueryCondition[], heightKey: string): HeightInfo {
  const out: QueryCondition[] = [];
  const heightConds: QueryCondition[] = [];
  let height = 0n;
  let found = false;
  let rangeExists = false;
  let onlyHeightEq = true;
  let onlyHeightRange = true;
  for (const c of conditions) {
    if (c.tag === heightKey) {
      if (c.op === "=") {
        if (rangeExists || found) continue;
        const n = argNumber(c);
        if (n !== undefined) {
          height = goNumberToInt64(n);
          found = true;
          heightConds.push(c);
        }
      } else {
        onlyHeightEq = false;
        rangeExists = true;
        out.push(c);
      }
    } else {
      onlyHeightRange = false;
      onlyHeightEq = false;
      out.push(c);
    }
  }
  if (!rangeExists && heightConds.length > 0) {
    const heightEqIdx = out.length;
    out.push(...heightConds);
    return { conditions: out, height, heightEqIdx, onlyHeightEq, onlyHeightRange: false, found };
  }
  return { conditions: out, height: 0n, heightEqIdx: -1, onlyHeightEq: false, onlyHeightRange, found: false };
}

function emptyRange(key: string): QueryRange {
  return { key, lower: undefined, upper: undefined, includeLower: false, includeUpper: false };
}

/** LookForRangesWithHeight. */
function lookForRanges(conditions: readonly QueryCondition[]): {
  ranges: Map<string, QueryRange>;
  rangeIndexes: Set<number>;
  heightRange: QueryRange | undefined;
} {
  const ranges = new Map<string, QueryRange>();
  const rangeIndexes = new Set<number>();
  let heightRange: QueryRange | undefined;
  conditions.forEach((c, i) => {
    if (!RANGE_OPS.has(c.op)) return;
    const isHeightKey = c.tag === BLOCK_HEIGHT_KEY || c.tag === TX_HEIGHT_KEY;
    let r = ranges.get(c.tag);
    if (r === undefined) {
      r = emptyRange(c.tag);
      ranges.set(c.tag, r);
      // Go starts the height range afresh whenever a new height key shows up.
      if (isHeightKey) heightRange = emptyRange(c.tag);
    }
    const bound = conditionBound(c);
    const targets = isHeightKey && heightRange !== undefined ? [r, heightRange] : [r];
    for (const t of targets) {
      if (c.op === ">" || c.op === ">=") {
        t.lower = bound;
        if (c.op === ">=") t.includeLower = true;
      } else {
        t.upper = bound;
        if (c.op === "<=") t.includeUpper = true;
      }
    }
    rangeIndexes.add(i);
  });
  return { ranges, rangeIndexes, heightRange };
}

interface HeightFilter {
  ok(height: number): boolean;
  min: number;
  max: number;
}

function heightFilter(range: QueryRange | undefined, height: bigint): HeightFilter {
  if (range !== undefined) {
    const span = heightSpan(range);
    return { ok: (h) => inNumberRange(range, goNumberFromInteger(h)), ...span };
  }
  if (height !== 0n) {
    const h = safeHeight(height);
    // A height filter no row can pass: an empty span.
    if (h === undefined) return { ok: () => false, min: 1, max: 0 };
    return { ok: (x) => x === h, min: h, max: h };
  }
  return { ok: () => true, min: 1, max: Number.MAX_SAFE_INTEGER };
}

function rangeStep(r: QueryRange, kind: IndexKind, filter: HeightFilter): SearchStep {
  const heightRows = r.key === (kind === "tx" ? TX_HEIGHT_KEY : BLOCK_HEIGHT_KEY);
  const any = r.lower ?? r.upper;
  const trim = kind === "tx" ? goTrimSpace : (s: string) => s;
  // Go checks the height filter only for ranges over other keys.
  const span = heightRows ? heightSpan(r) : { min: filter.min, max: filter.max };
  const heightOk = heightRows ? () => true : filter.ok;
  const test =
    any?.kind === "number"
      ? (row: IndexRow) => {
          const n = parseGoNumber(trim(row.value));
          return n !== undefined && heightOk(row.height) && inNumberRange(r, n);
        }
      : any?.kind === "time"
        ? (row: IndexRow) => heightOk(row.height) && inTimeRange(r, trim(row.value))
        : () => false;
  return {
    tag: r.key,
    heightRows,
    valueEquals: undefined,
    valueContains: undefined,
    minHeight: span.min,
    maxHeight: span.max,
    test,
  };
}

function conditionStep(c: QueryCondition, kind: IndexKind, filter: HeightFilter): SearchStep | undefined {
  // block.height has only primary rows, which Go's event-key parser rejects: nothing matches.
  if (kind === "block" && c.tag === BLOCK_HEIGHT_KEY) return undefined;
  const heightRows = kind === "tx" && c.tag === TX_HEIGHT_KEY;
  const base = { tag: c.tag, heightRows, minHeight: filter.min, maxHeight: filter.max };
  const text = c.arg?.text ?? "";
  switch (c.op) {
    case "=":
      return {
        ...base,
        valueEquals: text,
        valueContains: undefined,
        test: (row) => row.value === text && filter.ok(row.height),
      };
    case "CONTAINS": {
      const trim = kind === "tx" ? goTrimSpace : (s: string) => s;
      return {
        ...base,
        valueEquals: undefined,
        valueContains: text,
        test: (row) => trim(row.value).includes(text) && filter.ok(row.height),
      };
    }
    case "EXISTS":
      return { ...base, valueEquals: undefined, valueContains: undefined, test: (row) => filter.ok(row.height) };
    default:
      // Ranges were taken out before; nothing else exists.
      return undefined;
  }
}

/** Turns a parsed query into the lookups that answer it (see the file comment). */
export function planSearch(query: Query, kind: IndexKind): SearchPlan {
  const conditions = (query as Partial<Query>).conditions;
  if (!Array.isArray(conditions)) throw new UnsupportedQueryError();
  if (kind === "tx") {
    const byHash = conditions.find((c) => c.tag === TX_HASH_KEY);
    if (byHash !== undefined) return { type: "hash", hash: decodeGoHex(byHash.arg?.text ?? "") };
  }
  const info = dedupHeight(conditions, kind === "tx" ? TX_HEIGHT_KEY : BLOCK_HEIGHT_KEY);
  if (kind === "block" && info.found && info.onlyHeightEq) return { type: "height", height: safeHeight(info.height) };

  const { ranges, rangeIndexes, heightRange } = lookForRanges(info.conditions);
  const filter = heightFilter(heightRange, info.height);
  const heightKey = kind === "tx" ? TX_HEIGHT_KEY : BLOCK_HEIGHT_KEY;
  const steps: SearchStep[] = [];
  for (const r of ranges.values()) {
    if (r.key === heightKey && !info.onlyHeightRange) continue;
    steps.push(rangeStep(r, kind, filter));
  }
  const skipHeightEq = kind === "block" || !info.onlyHeightEq;
  for (let i = 0; i < info.conditions.length; i++) {
    if (rangeIndexes.has(i) || (skipHeightEq && i === info.heightEqIdx)) continue;
    const c = info.conditions[i] as QueryCondition;
    const step = conditionStep(c, kind, filter);
    if (step === undefined) return { type: "steps", steps: [] };
    steps.push(step);
  }
  return { type: "steps", steps };
}

/**
 * Intersects the steps: a target matches when one event occurrence of it has a passing row in
 * every step. Returns the distinct targets; stops early once nothing is left.
 */
export function collectTargets(
  steps: readonly SearchStep[],
  rowsOf: (step: SearchStep, index: number) => Iterable<IndexRow>,
): Set<string> {
  let acc: Map<string, string> | undefined;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as SearchStep;
    const found = new Map<string, string>();
    for (const row of rowsOf(step, i)) {
      if (!step.test(row)) continue;
      const key = `${row.target}\u0000${row.event}`;
      if (acc === undefined || acc.has(key)) found.set(key, row.target);
    }
    acc = found;
    if (acc.size === 0) break;
  }
  return new Set(acc?.values() ?? []);
}
