/**
 * Raw JSON helpers for genesis.json's app_state, which is a json.RawMessage in CometBFT: its text is
 * kept as written (big numbers stay exact) rather than parsed into JS values.
 */

/**
 * The raw text of each member of the top-level object, keyed by member name. The text must already be
 * valid JSON (call JSON.parse first); returns undefined when the top level is not an object.
 */
export function topLevelRawMembers(text: string): Map<string, string> | undefined {
  let i = skipWs(text, 0);
  if (text[i] !== "{") return undefined;
  i++;
  const out = new Map<string, string>();
  for (;;) {
    i = skipWs(text, i);
    if (text[i] === "}") return out;
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    i++; // ':'
    i = skipWs(text, i);
    const valueEnd = valueEndAt(text, i);
    out.set(key, text.slice(i, valueEnd));
    i = skipWs(text, valueEnd);
    if (text[i] === ",") i++;
    else return out;
  }
}

/** Go's json.Indent: re-indents compact or pretty JSON text without touching scalars. */
export function indentJson(text: string, prefix: string, indent: string): string {
  let out = "";
  let depth = 0;
  let i = 0;
  const newline = () => `\n${prefix}${indent.repeat(depth)}`;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      const j = skipWs(text, i + 1);
      if (text[j] === close) {
        out += c + close;
        i = j + 1;
        continue;
      }
      depth++;
      out += c + newline();
      i++;
      continue;
    }
    if (c === "}" || c === "]") {
      depth--;
      out += newline() + c;
      i++;
      continue;
    }
    if (c === ",") {
      out += `,${newline()}`;
      i++;
      continue;
    }
    if (c === ":") {
      out += ": ";
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

function skipWs(text: string, i: number): number {
  let j = i;
  while (j < text.length && /\s/.test(text[j] as string)) j++;
  return j;
}

/** Index just past the string literal starting at i. */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    const c = text[j];
    if (c === "\\") j += 2;
    else if (c === '"') return j + 1;
    else j++;
  }
  return j;
}

/** Index just past the JSON value starting at i. */
function valueEndAt(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    let j = i;
    while (j < text.length) {
      const d = text[j];
      if (d === '"') {
        j = stringEnd(text, j);
        continue;
      }
      if (d === "{" || d === "[") depth++;
      else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return j;
  }
  let j = i;
  while (j < text.length && !/[\s,}\]]/.test(text[j] as string)) j++;
  return j;
}
