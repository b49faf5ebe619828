import { ComethError } from "../../util/errors.js";

/**
 * JSON reading and writing with Go `encoding/json` semantics: a parser that keeps the raw text of
 * every value (cmtjson decodes int64 from the raw string, and error texts quote raw bytes) and
 * reports syntax errors with Go's wording, and a compact writer with Go's HTML-safe escaping.
 */

/** A parsed JSON value that remembers its exact source text. */
export type JsonNode =
  | { readonly kind: "object"; readonly entries: readonly (readonly [string, JsonNode])[]; readonly raw: string }
  | { readonly kind: "array"; readonly items: readonly JsonNode[]; readonly raw: string }
  | { readonly kind: "string"; readonly value: string; readonly raw: string }
  | { readonly kind: "number"; readonly raw: string }
  | { readonly kind: "bool"; readonly value: boolean; readonly raw: string }
  | { readonly kind: "null"; readonly raw: string };

/** A syntax error worded like Go's `json.SyntaxError` (e.g. `invalid character 'x' looking for beginning of value`). */
export class JsonSyntaxError extends ComethError {}

/** Go's `quoteChar`: how the scanner names an unexpected character. */
export function goQuoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return "'\"'";
  const q = goQuote(c);
  return `'${q.slice(1, -1)}'`;
}

/** Go's `strconv.Quote` (close enough for error texts: ASCII escapes, printable Unicode kept). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case "\\":
        out += "\\\\";
        continue;
      case "\x07":
        out += "\\a";
        continue;
      case "\b":
        out += "\\b";
        continue;
      case "\f":
        out += "\\f";
        continue;
      case "\n":
        out += "\\n";
        continue;
      case "\r":
        out += "\\r";
        continue;
      case "\t":
        out += "\\t";
        continue;
      case "\v":
        out += "\\v";
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if ((cp >= 0x80 && cp < 0xa0) || cp === 0x2028 || cp === 0x2029 || cp === 0xfeff)
      out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

const WS = new Set([" ", "\t", "\n", "\r"]);

interface ParseOptions {
  /** json.Decoder mode: read the first value and ignore what follows; truncation reads "unexpected EOF". */
  firstValueOnly?: boolean;
}

/** Parses JSON text into a {@link JsonNode} tree. Throws {@link JsonSyntaxError}. */
export function parseJson(text: string, opts: ParseOptions = {}): JsonNode {
  return new Parser(text, opts.firstValueOnly === true).parseTop();
}

/**
 * Go's encoding/json scanner refuses nesting deeper than this (maxNestingDepth) with the syntax error
 * "invalid character '[' exceeded max depth"; the limit also keeps this recursive parser (and what
 * walks its trees) away from the end of the stack.
 */
export const MAX_JSON_DEPTH = 10_000;

/** An object or array being read: its start, its members so far (and an object's pending key). */
type OpenContainer =
  | { start: number; items: JsonNode[] }
  | { start: number; entries: [string, JsonNode][]; key: string };

class Parser {
  #pos = 0;
  #depth = 0;
  readonly #s: string;
  readonly #decoderMode: boolean;
  constructor(s: string, decoderMode: boolean) {
    this.#s = s;
    this.#decoderMode = decoderMode;
  }

  #eof(): JsonSyntaxError {
    return new JsonSyntaxError(this.#decoderMode ? "unexpected EOF" : "unexpected end of JSON input");
  }

  #skipWs(): void {
    while (this.#pos < this.#s.length && WS.has(this.#s[this.#pos] as string)) this.#pos++;
  }

  #peekChar(): string | undefined {
    if (this.#pos >= this.#s.length) return undefined;
    const cp = this.#s.codePointAt(this.#pos) ?? 0;
    return String.fromCodePoint(cp);
  }

  parseTop(): JsonNode {
    this.#skipWs();
    if (this.#pos >= this.#s.length) {
      if (this.#decoderMode) throw new JsonSyntaxError("EOF");
      throw this.#eof();
    }
    const v = this.#parseValue("looking for beginning of value");
    if (!this.#decoderMode) {
      this.#skipWs();
      const c = this.#peekChar();
      if (c !== undefined) throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} after top-level value`);
    }
    return v;
  }

  /**
   * One JSON value, nested objects and arrays included. Iterative (an explicit stack of open containers),
   * so that nesting up to MAX_JSON_DEPTH cannot exhaust the call stack; the errors are Go's, in the
   * order Go's scanner meets them.
   */
  #parseValue(context: string): JsonNode {
    const open: OpenContainer[] = [];
    for (;;) {
      // A value starts here: a scalar, or a container whose first member comes next.
      this.#skipWs();
      const c = this.#peekChar();
      if (c === undefined) throw this.#eof();
      const start = this.#pos;
      let value: JsonNode;
      if (c === "{" || c === "[") {
        this.#enter();
        this.#pos++;
        this.#skipWs();
        const close = c === "{" ? "}" : "]";
        if (this.#peekChar() === close) {
          this.#pos++;
          this.#depth--;
          const raw = this.#s.slice(start, this.#pos);
          value = c === "{" ? { kind: "object", entries: [], raw } : { kind: "array", items: [], raw };
        } else {
          open.push(c === "{" ? { start, entries: [], key: this.#parseKey() } : { start, items: [] });
          continue;
        }
      } else {
        value = this.#parseScalar(c, start, open.length === 0 ? context : "looking for beginning of value");
      }
      // The value is complete: add it to the innermost open container; close those that end here.
      for (;;) {
        const top = open.at(-1);
        if (top === undefined) return value;
        this.#skipWs();
        const sep = this.#peekChar();
        if (sep === undefined) throw this.#eof();
        this.#pos++;
        if ("items" in top) {
          top.items.push(value);
          if (sep === "]") {
            open.pop();
            this.#depth--;
            value = { kind: "array", items: top.items, raw: this.#s.slice(top.start, this.#pos) };
            continue;
          }
          if (sep !== ",") throw new JsonSyntaxError(`invalid character ${goQuoteChar(sep)} after array element`);
        } else {
          top.entries.push([top.key, value]);
          if (sep === "}") {
            open.pop();
            this.#depth--;
            value = { kind: "object", entries: top.entries, raw: this.#s.slice(top.start, this.#pos) };
            continue;
          }
          if (sep !== ",")
            throw new JsonSyntaxError(`invalid character ${goQuoteChar(sep)} after object key:value pair`);
          top.key = this.#parseKey();
        }
        break;
      }
    }
  }

  /** An object member's key and its colon. */
  #parseKey(): string {
    this.#skipWs();
    const c = this.#peekChar();
    if (c === undefined) throw this.#eof();
    if (c !== '"')
      throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} looking for beginning of object key string`);
    const key = this.#parseString();
    this.#skipWs();
    const colon = this.#peekChar();
    if (colon === undefined) throw this.#eof();
    if (colon !== ":") throw new JsonSyntaxError(`invalid character ${goQuoteChar(colon)} after object key`);
    this.#pos++;
    return key;
  }

  #parseScalar(c: string, start: number, context: string): JsonNode {
    switch (c) {
      case '"': {
        const value = this.#parseString();
        return { kind: "string", value, raw: this.#s.slice(start, this.#pos) };
      }
      case "t":
        this.#literal("true");
        return { kind: "bool", value: true, raw: "true" };
      case "f":
        this.#literal("false");
        return { kind: "bool", value: false, raw: "false" };
      case "n":
        this.#literal("null");
        return { kind: "null", raw: "null" };
      default:
        if (c === "-" || (c >= "0" && c <= "9")) {
          this.#parseNumber();
          return { kind: "number", raw: this.#s.slice(start, this.#pos) };
        }
        throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} ${context}`);
    }
  }

  #literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      const c = this.#peekChar();
      if (c === undefined) throw this.#eof();
      if (c !== word[i]) {
        throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} in literal ${word} (expecting '${word[i]}')`);
      }
      this.#pos++;
    }
  }

  #parseNumber(): void {
    if (this.#peekChar() === "-") {
      this.#pos++;
      const c = this.#peekChar();
      if (c === undefined) throw this.#eof();
      if (!digit(c)) throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} in numeric literal`);
    }
    if (this.#peekChar() === "0") this.#pos++;
    else while (digit(this.#peekChar())) this.#pos++;
    if (this.#peekChar() === ".") {
      this.#pos++;
      const c = this.#peekChar();
      if (c === undefined) throw this.#eof();
      if (!digit(c))
        throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} after decimal point in numeric literal`);
      while (digit(this.#peekChar())) this.#pos++;
    }
    const e = this.#peekChar();
    if (e === "e" || e === "E") {
      this.#pos++;
      let c = this.#peekChar();
      if (c === "+" || c === "-") {
        this.#pos++;
        c = this.#peekChar();
      }
      if (c === undefined) throw this.#eof();
      if (!digit(c)) throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} in exponent of numeric literal`);
      while (digit(this.#peekChar())) this.#pos++;
    }
  }

  #parseString(): string {
    this.#pos++; // opening quote
    const s = this.#s;
    // A string without escapes or control characters (hex data, method names) is one slice.
    let i = this.#pos;
    for (; i < s.length; i++) {
      const code = s.charCodeAt(i);
      if (code === 0x22) {
        const whole = s.slice(this.#pos, i);
        this.#pos = i + 1;
        return whole;
      }
      if (code === 0x5c || code < 0x20) break;
    }
    let out = s.slice(this.#pos, i);
    this.#pos = i;
    for (;;) {
      if (this.#pos >= this.#s.length) throw this.#eof();
      const c = this.#s[this.#pos] as string;
      if (c === '"') {
        this.#pos++;
        return out;
      }
      if (c === "\\") {
        this.#pos++;
        if (this.#pos >= this.#s.length) throw this.#eof();
        const e = this.#s[this.#pos] as string;
        this.#pos++;
        switch (e) {
          case '"':
          case "\\":
          case "/":
            out += e;
            break;
          case "b":
            out += "\b";
            break;
          case "f":
            out += "\f";
            break;
          case "n":
            out += "\n";
            break;
          case "r":
            out += "\r";
            break;
          case "t":
            out += "\t";
            break;
          case "u": {
            let hex = "";
            for (let i = 0; i < 4; i++) {
              if (this.#pos >= this.#s.length) throw this.#eof();
              const h = this.#s[this.#pos] as string;
              if (!/[0-9a-fA-F]/.test(h)) {
                throw new JsonSyntaxError(`invalid character ${goQuoteChar(h)} in \\u hexadecimal character escape`);
              }
              hex += h;
              this.#pos++;
            }
            out += String.fromCharCode(Number.parseInt(hex, 16));
            break;
          }
          default:
            throw new JsonSyntaxError(`invalid character ${goQuoteChar(e)} in string escape code`);
        }
        continue;
      }
      if (c < " ") throw new JsonSyntaxError(`invalid character ${goQuoteChar(c)} in string literal`);
      out += c;
      this.#pos++;
    }
  }

  /** Entering an object or array at `this.#pos` (Go's pushParseState, whose error names the bracket). */
  #enter(): void {
    if (++this.#depth > MAX_JSON_DEPTH) {
      throw new JsonSyntaxError(`invalid character ${goQuoteChar(this.#s[this.#pos] as string)} exceeded max depth`);
    }
  }
}

function digit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= "0" && ch <= "9";
}

/** Go's name for a JSON value kind in `json: cannot unmarshal <kind> into ...` errors. */
export function goValueKind(node: JsonNode): string {
  return node.kind === "bool" ? "bool" : node.kind;
}

/** Pre-encoded JSON spliced into the output (Go `json.RawMessage`); compacted and HTML-escaped on write. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * JSON this writer produced earlier (encodeJson output), spliced in unchanged: lets a route keep the
 * encoded form of an answer that only changes with the chain (status between blocks).
 */
export class EncodedJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A value the writer accepts: what encoders build for the wire. `undefined` object members are left out. */
export type WireValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | RawJson
  | EncodedJson
  | readonly WireValue[]
  | ReadonlyMap<string, WireValue>
  | { readonly [key: string]: WireValue | undefined };

const HEX = "0123456789abcdef";

/** Characters Go's encoder (HTML escaping on) writes escaped, and lone-surrogate candidates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what Go escapes.
const NEEDS_ESCAPE = /[\u0000-\u001f"\\<>&\u2028\u2029\ud800-\udfff]/;

/** Writes a JSON string the way Go's encoder does with HTML escaping on. */
export function encodeGoString(s: string): string {
  // Nearly every string on the wire (hex, base64, numbers as strings, names) needs no escape.
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  return escapeGoString(s);
}

function escapeGoString(s: string): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    let esc: string | undefined;
    if (code < 0x20) {
      if (code === 0x0a) esc = "\\n";
      else if (code === 0x0d) esc = "\\r";
      else if (code === 0x09) esc = "\\t";
      else if (code === 0x08) esc = "\\b";
      else if (code === 0x0c) esc = "\\f";
      else esc = `\\u00${HEX[code >> 4]}${HEX[code & 0xf]}`;
    } else if (code === 0x22) esc = '\\"';
    else if (code === 0x5c) esc = "\\\\";
    else if (code === 0x3c) esc = "\\u003c";
    else if (code === 0x3e) esc = "\\u003e";
    else if (code === 0x26) esc = "\\u0026";
    else if (code === 0x2028) esc = "\\u2028";
    else if (code === 0x2029) esc = "\\u2029";
    else if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate is invalid UTF-8 on the Go side, written as U+FFFD.
      const next = s.charCodeAt(i + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      esc = "\ufffd";
    }
    if (esc !== undefined) {
      out += s.slice(runStart, i) + esc;
      runStart = i + 1;
    }
  }
  return `${out}${s.slice(runStart)}"`;
}

/** Object keys recur on every answer; their encoded form (with the colon) is kept. */
const keyCache = new Map<string, string>();
const KEY_CACHE_LIMIT = 4096;

function encodeKey(k: string): string {
  let e = keyCache.get(k);
  if (e === undefined) {
    e = `${encodeGoString(k)}:`;
    if (keyCache.size < KEY_CACHE_LIMIT) keyCache.set(k, e);
  }
  return e;
}

/** Go `json.Compact` with HTML escaping: drops insignificant whitespace, escapes <, >, &, U+2028/9 in strings. */
export function compactGoJson(text: string): string {
  let out = "";
  let inString = false;
  let runStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      if (c === "\\") {
        i++;
        continue;
      }
      let esc: string | undefined;
      if (c === '"') inString = false;
      else if (c === "<") esc = "\\u003c";
      else if (c === ">") esc = "\\u003e";
      else if (c === "&") esc = "\\u0026";
      else if (c === "\u2028") esc = "\\u2028";
      else if (c === "\u2029") esc = "\\u2029";
      if (esc !== undefined) {
        out += text.slice(runStart, i) + esc;
        runStart = i + 1;
      }
      continue;
    }
    if (c === '"') inString = true;
    else if (WS.has(c)) {
      out += text.slice(runStart, i);
      runStart = i + 1;
    }
  }
  return out + text.slice(runStart);
}

/** Compact JSON text for a wire value, Go-escaped, object keys in insertion order. */
export function encodeJson(value: WireValue): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) return "null";
      return String(value);
    case "bigint":
      return value.toString();
    case "string":
      return encodeGoString(value);
  }
  if (value instanceof EncodedJson) return value.text;
  if (value instanceof RawJson) return compactGoJson(value.text);
  if (Array.isArray(value)) {
    const items = value as readonly WireValue[];
    if (items.length === 0) return "[]";
    let out = `[${encodeJson(items[0] as WireValue)}`;
    for (let i = 1; i < items.length; i++) out += `,${encodeJson(items[i] as WireValue)}`;
    return `${out}]`;
  }
  let out = "{";
  let first = true;
  if (value instanceof Map) {
    for (const [k, v] of value as ReadonlyMap<string, WireValue>) {
      out += `${first ? "" : ","}${encodeKey(k)}${encodeJson(v)}`;
      first = false;
    }
    return `${out}}`;
  }
  const obj = value as { readonly [key: string]: WireValue | undefined };
  for (const k in obj) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${first ? "" : ","}${encodeKey(k)}${encodeJson(v)}`;
    first = false;
  }
  return `${out}}`;
}
