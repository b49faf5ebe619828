import { ComethError } from "../../../util/errors.js";

/**
 * A YAML reader for the subset the execution-apis OpenRPC files use: block mappings and
 * sequences, plain (multi-line), single- and double-quoted scalars, literal and folded block
 * scalars, and small flow collections ([], [a, b], {}). Test support only.
 */

export class YamlError extends ComethError {}

interface Line {
  indent: number;
  text: string;
  no: number;
}

const KEY_RE = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#\-[{][^:]*?|-[^\s:][^:]*?):(?:\s+|$)/;

function isSeqItem(text: string): boolean {
  return text === "-" || text.startsWith("- ");
}

class Reader {
  private readonly raw: string[];
  private lines: Line[];
  private pos = 0;

  constructor(text: string) {
    this.raw = text.replace(/\r\n/g, "\n").split("\n");
    this.lines = [];
    this.raw.forEach((l, no) => {
      const trimmed = l.trim();
      if (trimmed === "" || trimmed.startsWith("#")) return;
      this.lines.push({ indent: l.length - l.trimStart().length, text: l.trimStart().replace(/\s+$/, ""), no });
    });
  }

  private peek(): Line | undefined {
    return this.lines[this.pos];
  }

  parseDocument(): unknown {
    const first = this.peek();
    if (first === undefined) return null;
    const v = this.parseNode(first.indent);
    if (this.peek() !== undefined) throw new YamlError(`unexpected content at line ${(this.peek() as Line).no + 1}`);
    return v;
  }

  private parseNode(indent: number): unknown {
    const line = this.peek();
    if (line === undefined || line.indent < indent) return null;
    return isSeqItem(line.text) ? this.parseSequence(line.indent) : this.parseMapping(line.indent);
  }

  private parseSequence(indent: number): unknown[] {
    const out: unknown[] = [];
    for (;;) {
      const line = this.peek();
      if (line === undefined || line.indent !== indent || !isSeqItem(line.text)) return out;
      const after = line.text === "-" ? "" : line.text.slice(2).trimStart();
      if (after === "") {
        this.pos++;
        const next = this.peek();
        out.push(next !== undefined && next.indent > indent ? this.parseNode(next.indent) : null);
        continue;
      }
      const innerIndent = indent + (line.text.length - after.length);
      if (isSeqItem(after) || KEY_RE.test(after)) {
        // The item's content starts on this line: re-read it as a line of its own.
        this.lines[this.pos] = { indent: innerIndent, text: after, no: line.no };
        out.push(this.parseNode(innerIndent));
        continue;
      }
      this.pos++;
      out.push(this.scalarWithContinuation(after, indent));
    }
  }

  private parseMapping(indent: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (;;) {
      const line = this.peek();
      if (line === undefined || line.indent !== indent || isSeqItem(line.text)) return out;
      const m = KEY_RE.exec(line.text);
      if (m === null) throw new YamlError(`expected "key:" at line ${line.no + 1}: ${line.text}`);
      const key = String(parseScalar((m[1] as string).trim()));
      const rest = line.text.slice(m[0].length);
      this.pos++;
      if (rest === "") {
        const next = this.peek();
        if (next !== undefined && (next.indent > indent || (next.indent === indent && isSeqItem(next.text)))) {
          out[key] = this.parseNode(next.indent);
        } else out[key] = null;
      } else if (/^[|>][+-]?$/.test(rest)) {
        out[key] = this.blockScalar(rest, line, indent);
      } else {
        out[key] = this.scalarWithContinuation(rest, indent);
      }
    }
  }

  /** A scalar, folding more-indented continuation lines of a plain scalar. */
  private scalarWithContinuation(first: string, indent: number): unknown {
    if (first.startsWith("'") || first.startsWith('"') || first.startsWith("[") || first.startsWith("{")) {
      return parseScalar(first);
    }
    let text = first;
    for (;;) {
      const next = this.peek();
      if (next === undefined || next.indent <= indent) break;
      text += ` ${next.text}`;
      this.pos++;
    }
    return parseScalar(text);
  }

  private blockScalar(header: string, line: Line, indent: number): string {
    const literal = header.startsWith("|");
    const chomp = header.slice(1);
    const body: string[] = [];
    let blockIndent: number | undefined;
    let rawNo = line.no + 1;
    for (; rawNo < this.raw.length; rawNo++) {
      const l = this.raw[rawNo] as string;
      if (l.trim() === "") {
        body.push("");
        continue;
      }
      const ind = l.length - l.trimStart().length;
      if (ind <= indent) break;
      blockIndent ??= ind;
      body.push(l.slice(blockIndent));
    }
    while (this.peek() !== undefined && (this.peek() as Line).no < rawNo) this.pos++;
    while (body.length > 0 && body[body.length - 1] === "") body.pop();
    let text: string;
    if (literal) text = body.join("\n");
    else {
      text = "";
      body.forEach((b, i) => {
        if (i === 0) text = b;
        else if (b === "") text += "\n";
        else text += text.endsWith("\n") || text === "" ? b : ` ${b}`;
      });
    }
    return chomp === "-" ? text : `${text}\n`;
  }
}

function splitFlow(inner: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let cur = "";
  for (const c of inner) {
    if (quote !== undefined) {
      cur += c;
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    if (c === "[" || c === "{") depth++;
    if (c === "]" || c === "}") depth--;
    if (c === "," && depth === 0) {
      parts.push(cur.trim());
      cur = "";
      continue;
    }
    cur += c;
  }
  if (cur.trim() !== "") parts.push(cur.trim());
  return parts;
}

/** One scalar or flow collection. */
export function parseScalar(text: string): unknown {
  const t = text.trim();
  if (t.startsWith("'")) {
    if (!t.endsWith("'") || t.length < 2) throw new YamlError(`unterminated quoted scalar: ${t}`);
    return t.slice(1, -1).replace(/''/g, "'");
  }
  if (t.startsWith('"')) return JSON.parse(t) as string;
  if (t.startsWith("[")) {
    if (!t.endsWith("]")) throw new YamlError(`unterminated flow sequence: ${t}`);
    return splitFlow(t.slice(1, -1)).map(parseScalar);
  }
  if (t.startsWith("{")) {
    if (!t.endsWith("}")) throw new YamlError(`unterminated flow mapping: ${t}`);
    const out: Record<string, unknown> = {};
    for (const part of splitFlow(t.slice(1, -1))) {
      const i = part.indexOf(":");
      out[String(parseScalar(part.slice(0, i)))] = parseScalar(part.slice(i + 1));
    }
    return out;
  }
  if (t === "null" || t === "~" || t === "") return null;
  if (t === "true") return true;
  if (t === "false") return false;
  if (/^-?(0|[1-9]\d*)$/.test(t)) return Number(t);
  if (/^-?(0|[1-9]\d*)?(\.\d+)?([eE][+-]?\d+)?$/.test(t) && /\d/.test(t)) return Number(t);
  return t;
}

export function parseYaml(text: string): unknown {
  return new Reader(text).parseDocument();
}
