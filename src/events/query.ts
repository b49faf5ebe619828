import { type BinaryFloat, compareBinaryFloat, parseArgumentNumber, parseAttributeNumber } from "./bigDecimal.js";
import { QueryParseError } from "./errors.js";
import { DATE_LAYOUT, goParseTime, RFC3339_LAYOUT } from "./goTime.js";

/**
 * CometBFT's event query language (docs/cometbft-rpc.md §4.3; libs/pubsub/query and query/syntax, v0.38):
 *
 *   query      = condition {"AND" condition}
 *   condition  = tag ("=" (number|date|time|string) | ("<"|"<="|">"|">=") (number|date|time)
 *                     | "CONTAINS" string | "EXISTS")
 *
 * The scanner, the parser and their error texts follow the Go code token by token, offsets in
 * UTF-8 bytes, because clients see the texts (`failed to parse query: offset 15: got tag, …`).
 */

/** Token kinds; the values are Go's Token.String() texts, which appear in parse errors. */
export const QUERY_TOKENS = {
  invalid: "invalid token",
  tag: "tag",
  string: "string",
  number: "number",
  time: "timestamp",
  date: "datestamp",
  and: "AND operator",
  contains: "CONTAINS operator",
  exists: "EXISTS operator",
  eq: "= operator",
  lt: "< operator",
  leq: "<= operator",
  gt: "> operator",
  geq: ">= operator",
} as const;
type TokenKind = keyof typeof QUERY_TOKENS;

/** Comparison operators as written in the canonical form. */
export const QUERY_OPS = {
  eq: "=",
  lt: "<",
  leq: "<=",
  gt: ">",
  geq: ">=",
  contains: "CONTAINS",
  exists: "EXISTS",
} as const;
export type QueryOp = (typeof QUERY_OPS)[keyof typeof QUERY_OPS];

/** Argument kinds. */
export const QUERY_ARG_TYPES = { string: "string", number: "number", time: "time", date: "date" } as const;
export type QueryArgType = (typeof QUERY_ARG_TYPES)[keyof typeof QUERY_ARG_TYPES];

export interface QueryArg {
  readonly type: QueryArgType;
  /** The literal as written: a string without its quotes, a TIME/DATE value without the keyword. */
  readonly text: string;
}

/** One `tag op arg` condition of a parsed query. */
export interface QueryCondition {
  /** Composite key, e.g. `tm.event`, `transfer.sender`. */
  readonly tag: string;
  readonly op: QueryOp;
  /** Undefined for EXISTS. */
  readonly arg: QueryArg | undefined;
  /** `tag op arg`, as in the canonical query. */
  toString(): string;
  /** Whether one attribute value satisfies the operator and argument (EXISTS: always). */
  matchesValue(value: string): boolean;
}

/** The events a message carries: composite key (`<type>.<attribute key>`) → values. */
export type EventsMap = Readonly<Record<string, readonly string[]>>;

/** A parsed query. */
export interface Query {
  /** The text as given to parseQuery. */
  readonly text: string;
  readonly conditions: readonly QueryCondition[];
  /** Conditions joined by " AND ", each `tag op arg`, e.g. `tm.event = 'NewBlock'`: the subscription key. */
  canonical(): string;
  /**
   * pubsub semantics: every condition must hold for at least one value of its composite key, each
   * condition independently; a message without events never matches.
   */
  matches(events: EventsMap): boolean;
}

// ---------------------------------------------------------------- scanner

const EOF = -1;

/** unicode.IsSpace: Latin-1 spaces plus the White_Space property. */
function isSpace(cp: number): boolean {
  switch (cp) {
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x20:
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

const LETTER = /^\p{L}$/u;
const DECIMAL_DIGIT = /^\p{Nd}$/u;

function isAsciiDigit(cp: number): boolean {
  return cp >= 0x30 && cp <= 0x39;
}

function isLetterOrDigit(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || isAsciiDigit(cp);
  const ch = String.fromCodePoint(cp);
  return LETTER.test(ch) || DECIMAL_DIGIT.test(ch);
}

function isFirstTagRune(cp: number): boolean {
  return cp === 0x5f || isLetterOrDigit(cp);
}

function isTagRune(cp: number): boolean {
  return cp === 0x2e || cp === 0x5f || cp === 0x2d || isLetterOrDigit(cp);
}

function isTimeRune(cp: number): boolean {
  return isAsciiDigit(cp) || "-T:+Z".includes(String.fromCodePoint(cp));
}

function isDateRune(cp: number): boolean {
  return isAsciiDigit(cp) || cp === 0x2d;
}

function utf8Width(cp: number): number {
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

/** Scan failure: end of input (Go's io.EOF) or a message. */
type ScanError = { eof: true } | { eof: false; message: string };

/** The Go scanner over a bufio.Reader, with its one-rune unread. */
class Scanner {
  readonly #cps: number[];
  #i = 0;
  #end = 0;
  #last = 0;
  #buf = "";
  tok: TokenKind = "invalid";
  pos = 0;

  constructor(text: string) {
    this.#cps = Array.from(text, (ch) => ch.codePointAt(0) ?? 0xfffd);
  }

  text(): string {
    return this.#buf;
  }

  /** Advances to the next token; undefined on success. */
  next(): ScanError | undefined {
    this.#buf = "";
    this.pos = this.#end;
    this.tok = "invalid";
    for (;;) {
      const ch = this.#rune();
      if (ch === EOF) return { eof: true };
      if (isSpace(ch)) {
        this.pos = this.#end;
        continue;
      }
      if (isAsciiDigit(ch)) return this.#scanNumber(ch);
      if (isFirstTagRune(ch)) return this.#scanTagLike(ch);
      switch (ch) {
        case 0x27: // '
          return this.#scanString(ch);
        case 0x3c: // <
        case 0x3e: // >
        case 0x3d: // =
          return this.#scanCompare(ch);
        default:
          return this.#invalid(ch);
      }
    }
  }

  #rune(): number {
    const ch = this.#cps[this.#i];
    if (ch === undefined) {
      this.#last = 0;
      return EOF;
    }
    this.#i++;
    this.#last = utf8Width(ch);
    this.#end += this.#last;
    return ch;
  }

  #unrune(): void {
    if (this.#last === 0) return; // bufio cannot unread after EOF
    this.#i--;
    this.#end -= this.#last;
    this.#last = 0;
  }

  #write(cp: number): void {
    this.#buf += String.fromCodePoint(cp);
  }

  #scanWhile(ok: (cp: number) => boolean): void {
    for (;;) {
      const ch = this.#rune();
      if (ch === EOF) return;
      if (!ok(ch)) {
        this.#unrune();
        return;
      }
      this.#write(ch);
    }
  }

  #scanNumber(first: number): undefined {
    this.#write(first);
    this.#scanWhile(isAsciiDigit);
    const ch = this.#rune();
    if (ch === 0x2e) {
      // Go takes the dot and then any digits, so "5." is a number.
      this.#write(ch);
      this.#scanWhile(isAsciiDigit);
    } else {
      this.#unrune();
    }
    this.tok = "number";
    return undefined;
  }

  #scanString(quote: number): ScanError | undefined {
    for (;;) {
      const ch = this.#rune();
      if (ch === EOF) return { eof: true };
      if (ch === quote) {
        this.tok = "string";
        return undefined;
      }
      this.#write(ch);
    }
  }

  #scanCompare(first: number): undefined {
    this.#write(first);
    if (first === 0x3d) {
      this.tok = "eq";
      return undefined;
    }
    this.tok = first === 0x3c ? "lt" : "gt";
    const ch = this.#rune();
    if (ch === EOF) return undefined;
    if (ch === 0x3d) {
      this.#write(ch);
      this.tok = first === 0x3c ? "leq" : "geq";
      return undefined;
    }
    this.#unrune();
    return undefined;
  }

  #scanTagLike(first: number): ScanError | undefined {
    this.#write(first);
    let hasSpace = false;
    for (;;) {
      const ch = this.#rune();
      if (ch === EOF) break;
      if (!isTagRune(ch)) {
        hasSpace = ch === 0x20; // TIME and DATE take exactly one ASCII space before the value
        break;
      }
      this.#write(ch);
    }
    switch (this.#buf) {
      case "TIME":
        if (hasSpace) return this.#scanStamp("time");
        this.tok = "tag";
        break;
      case "DATE":
        if (hasSpace) return this.#scanStamp("date");
        this.tok = "tag";
        break;
      case "AND":
        this.tok = "and";
        break;
      case "EXISTS":
        this.tok = "exists";
        break;
      case "CONTAINS":
        this.tok = "contains";
        break;
      default:
        this.tok = "tag";
    }
    this.#unrune();
    return undefined;
  }

  #scanStamp(kind: "time" | "date"): ScanError | undefined {
    this.#buf = ""; // drop the TIME/DATE label; the space stays consumed
    this.#scanWhile(kind === "time" ? isTimeRune : isDateRune);
    const parsed = goParseTime(kind === "time" ? RFC3339_LAYOUT : DATE_LAYOUT, this.#buf);
    const label = kind === "time" ? "TIME" : "DATE";
    if (!parsed.ok) return { eof: false, message: `invalid ${label} value: ${parsed.error}` };
    const { year } = parsed.time;
    if (year < 1900 || year > 2999) {
      return { eof: false, message: `${kind === "time" ? "timestamp" : "datestamp"} year ${year} out of range` };
    }
    this.tok = kind;
    return undefined;
  }

  #invalid(ch: number): ScanError {
    return { eof: false, message: `invalid input ${String.fromCodePoint(ch)} at offset ${this.#end}` };
  }
}

// ---------------------------------------------------------------- parser

const OP_TOKENS = ["leq", "geq", "lt", "gt", "eq", "contains", "exists"] as const satisfies readonly TokenKind[];
type OpToken = (typeof OP_TOKENS)[number];

const OP_OF_TOKEN: Record<OpToken, QueryOp> = {
  leq: "<=",
  geq: ">=",
  lt: "<",
  gt: ">",
  eq: "=",
  contains: "CONTAINS",
  exists: "EXISTS",
};

const ARG_TYPE_OF_TOKEN: Partial<Record<TokenKind, QueryArgType>> = {
  string: "string",
  number: "number",
  time: "time",
  date: "date",
};

function tokLabel(tokens: readonly TokenKind[]): string {
  const names = tokens.map((t) => QUERY_TOKENS[t]);
  if (names.length === 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

function scanErrorText(err: ScanError): string {
  return err.eof ? "EOF" : err.message;
}

class Parser {
  readonly #scanner: Scanner;
  constructor(text: string) {
    this.#scanner = new Scanner(text);
  }

  parse(): RawCondition[] {
    const conds = [this.#parseCond()];
    for (;;) {
      const err = this.#scanner.next();
      // Go loops `for p.scanner.Next() != io.EOF`: an unterminated string after a complete query
      // also reads as io.EOF and ends the query without an error.
      if (err?.eof) break;
      if (this.#scanner.tok !== "and") {
        throw new QueryParseError(
          this.#scanner.pos,
          `offset ${this.#scanner.pos}: got ${QUERY_TOKENS[this.#scanner.tok]}, want ${QUERY_TOKENS.and}`,
        );
      }
      conds.push(this.#parseCond());
    }
    return conds;
  }

  #parseCond(): RawCondition {
    this.#require(["tag"]);
    const tag = this.#scanner.text();
    this.#require(OP_TOKENS);
    const op = OP_OF_TOKEN[this.#scanner.tok as OpToken];
    switch (op) {
      case "<":
      case "<=":
      case ">":
      case ">=":
        this.#require(["number", "time", "date"]);
        break;
      case "=":
        this.#require(["number", "time", "date", "string"]);
        break;
      case "CONTAINS":
        this.#require(["string"]);
        break;
      case "EXISTS":
        return { tag, op, arg: undefined };
    }
    const type = ARG_TYPE_OF_TOKEN[this.#scanner.tok] ?? "string";
    return { tag, op, arg: { type, text: this.#scanner.text() } };
  }

  #require(tokens: readonly TokenKind[]): void {
    const err = this.#scanner.next();
    const pos = this.#scanner.pos;
    if (err !== undefined) throw new QueryParseError(pos, `offset ${pos}: ${scanErrorText(err)}`);
    if (!tokens.includes(this.#scanner.tok)) {
      throw new QueryParseError(
        pos,
        `offset ${pos}: got ${QUERY_TOKENS[this.#scanner.tok]}, wanted ${tokLabel(tokens)}`,
      );
    }
  }
}

interface RawCondition {
  tag: string;
  op: QueryOp;
  arg: QueryArg | undefined;
}

// ---------------------------------------------------------------- matching

function argText(arg: QueryArg): string {
  switch (arg.type) {
    case "string":
      return `'${arg.text}'`;
    case "time":
      return `TIME ${arg.text}`;
    case "date":
      return `DATE ${arg.text}`;
    case "number":
      return arg.text;
  }
}

function orderTest(op: QueryOp): (cmp: number) => boolean {
  switch (op) {
    case "<":
      return (c) => c < 0;
    case "<=":
      return (c) => c <= 0;
    case ">":
      return (c) => c > 0;
    case ">=":
      return (c) => c >= 0;
    default:
      return (c) => c === 0;
  }
}

function compileMatcher(op: QueryOp, arg: QueryArg | undefined): (value: string) => boolean {
  if (op === "EXISTS" || arg === undefined) return () => true;
  const test = orderTest(op);
  switch (arg.type) {
    case "string": {
      const want = arg.text;
      return op === "CONTAINS" ? (v) => v.includes(want) : (v) => v === want;
    }
    case "number": {
      const want: BinaryFloat = parseArgumentNumber(arg.text);
      return (v) => {
        const got = parseAttributeNumber(v);
        return got !== undefined && test(compareBinaryFloat(got, want));
      };
    }
    case "time":
    case "date": {
      const layout = arg.type === "time" ? RFC3339_LAYOUT : DATE_LAYOUT;
      const parsedArg = goParseTime(layout, arg.text);
      const want = parsedArg.ok ? parsedArg.time.unixNs : 0n;
      return (v) => {
        const got = goParseTime(layout, v);
        if (!got.ok) return false;
        const t = got.time.unixNs;
        return test(t < want ? -1 : t > want ? 1 : 0);
      };
    }
  }
}

class CompiledCondition implements QueryCondition {
  readonly tag: string;
  readonly op: QueryOp;
  readonly arg: QueryArg | undefined;
  readonly matchesValue: (value: string) => boolean;
  readonly #tagHasDot: boolean;
  /** Whether the empty value (a key whose event type equals the tag) satisfies the condition. */
  readonly #emptyMatches: boolean;

  constructor(raw: RawCondition) {
    this.tag = raw.tag;
    this.op = raw.op;
    this.arg = raw.arg;
    this.matchesValue = compileMatcher(raw.op, raw.arg);
    this.#tagHasDot = raw.tag.includes(".");
    this.#emptyMatches = this.matchesValue("");
  }

  toString(): string {
    return this.arg === undefined ? `${this.tag} ${this.op}` : `${this.tag} ${this.op} ${argText(this.arg)}`;
  }

  /**
   * CometBFT expands each composite key into an event (type = text before the last dot, attribute =
   * the rest). The condition holds if a key equal to the tag has a matching value, or if a key's
   * event type equals the tag, which is tested against the empty value (so `slash EXISTS` matches
   * `slash.reason`). Keys without a dot never match.
   */
  matchesEvents(events: EventsMap): boolean {
    if (this.#tagHasDot && Object.hasOwn(events, this.tag)) {
      for (const value of events[this.tag] ?? []) {
        if (this.matchesValue(value)) return true;
      }
    }
    if (!this.#emptyMatches) return false;
    const typeLength = this.tag.length;
    for (const key in events) {
      if (key.length > typeLength && key.startsWith(this.tag) && key.lastIndexOf(".") === typeLength) return true;
    }
    return false;
  }
}

class ParsedQuery implements Query {
  readonly text: string;
  readonly conditions: readonly CompiledCondition[];
  readonly #canonicalText: string;

  constructor(text: string, conditions: CompiledCondition[]) {
    this.text = text;
    this.conditions = conditions;
    this.#canonicalText = conditions.map((c) => c.toString()).join(" AND ");
  }

  canonical(): string {
    return this.#canonicalText;
  }

  toString(): string {
    return this.#canonicalText;
  }

  matches(events: EventsMap): boolean {
    let any = false;
    for (const _ in events) {
      any = true;
      break;
    }
    if (!any) return false;
    for (const cond of this.conditions) {
      if (!cond.matchesEvents(events)) return false;
    }
    return true;
  }
}

/** Parses a query; throws QueryParseError with CometBFT's text (`offset N: got X, wanted Y`). */
export function parseQuery(text: string): Query {
  const raw = new Parser(text).parse();
  return new ParsedQuery(
    text,
    raw.map((r) => new CompiledCondition(r)),
  );
}
