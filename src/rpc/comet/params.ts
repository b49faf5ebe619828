import { ComethError } from "../../util/errors.js";
import { goQuote, goValueKind, type JsonNode, JsonSyntaxError, parseJson } from "../jsonrpc/index.js";

/**
 * Param codecs: how one route argument is read from a JSON-RPC `params` value (cmtjson rules:
 * 64-bit integers as JSON strings, []byte as base64, HexBytes as hex without 0x, pointers accept
 * null) and from a URI query value (integers, 0x-hex, "quoted" strings, JSON fallback). Errors carry
 * Go's wording so that clients see the texts CometBFT sends.
 */

/** A value that does not decode into an argument; the text is Go's error text. */
export class ParamDecodeError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}

/** Which URI shortcut applies to an argument (Go reflect kind of the target). */
export type UriForm = "int" | "string" | "bytes" | "json";

export interface ParamCodec<T> {
  /** Go reflect kind, named in `got a hex string arg, but expected '<kind>'`. */
  readonly goKind: string;
  readonly uriForm: UriForm;
  /** The value when the argument is absent (Go zero value; undefined for pointers). */
  readonly zero: T;
  /** Decodes a JSON value (cmtjson rules). Throws {@link ParamDecodeError}. */
  decode(node: JsonNode): T;
  /** Builds the value from raw bytes (URI 0x-hex or "quoted" forms); only for string and byte-slice kinds. */
  fromBytes?(bytes: Uint8Array): T;
  /** Whether the value counts as unset (Go reflect IsZero), for cache decisions. */
  isZero(value: T): boolean;
  /**
   * cmtjson checks some kinds on the raw bytes before any JSON parsing (int64 and HexBytes must be
   * quoted); a URI argument that falls through to JSON decoding gets that check first.
   */
  checkRaw?(text: string): void;
}

const isQuotedRaw = (text: string) =>
  text === "null" || (text.length >= 2 && text.startsWith('"') && text.endsWith('"'));

export type ParamValue<C> = C extends ParamCodec<infer T> ? T : never;

function typeError(node: JsonNode, goType: string): ParamDecodeError {
  return new ParamDecodeError(`json: cannot unmarshal ${goValueKind(node)} into Go value of type ${goType}`);
}

function parseInner(text: string): JsonNode {
  try {
    return parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new ParamDecodeError(err.message, { cause: err });
    throw err;
  }
}

const INT_RANGES = {
  int64: [-(1n << 63n), (1n << 63n) - 1n],
  int: [-(1n << 63n), (1n << 63n) - 1n],
  uint64: [0n, (1n << 64n) - 1n],
  uint: [0n, (1n << 64n) - 1n],
} as const;

type IntType = keyof typeof INT_RANGES;

/** cmtjson int64/int/uint64/uint: a JSON string holding a decimal integer. */
function intCodec(goType: IntType): ParamCodec<bigint> {
  return {
    goKind: goType,
    uriForm: "int",
    zero: 0n,
    isZero: (v) => v === 0n,
    checkRaw(text) {
      if (!isQuotedRaw(text))
        throw new ParamDecodeError(`invalid 64-bit integer encoding ${goQuote(text)}, expected string`);
    },
    decode(node) {
      if (node.kind === "null") return 0n;
      if (node.kind !== "string") {
        throw new ParamDecodeError(`invalid 64-bit integer encoding ${goQuote(node.raw)}, expected string`);
      }
      // cmtjson strips the quotes from the raw bytes without unescaping, then decodes a JSON number.
      const inner = parseInner(node.raw.slice(1, -1));
      if (inner.kind === "null") return 0n;
      if (inner.kind !== "number") throw typeError(inner, goType);
      const [min, max] = INT_RANGES[goType];
      if (!/^-?\d+$/.test(inner.raw)) {
        throw new ParamDecodeError(`json: cannot unmarshal number ${inner.raw} into Go value of type ${goType}`);
      }
      const v = BigInt(inner.raw);
      if (v < min || v > max) {
        throw new ParamDecodeError(`json: cannot unmarshal number ${inner.raw} into Go value of type ${goType}`);
      }
      return v;
    },
  };
}

const boolCodec: ParamCodec<boolean> = {
  goKind: "bool",
  uriForm: "json",
  zero: false,
  isZero: (v) => !v,
  decode(node) {
    if (node.kind === "null") return false;
    if (node.kind !== "bool") throw typeError(node, "bool");
    return node.value;
  },
};

const stringCodec: ParamCodec<string> = {
  goKind: "string",
  uriForm: "string",
  zero: "",
  isZero: (v) => v === "",
  decode(node) {
    if (node.kind === "null") return "";
    if (node.kind !== "string") throw typeError(node, "string");
    return node.value;
  },
  fromBytes: (b) => Buffer.from(b).toString("utf8"),
};

const EMPTY = new Uint8Array(0);

/** Go `[]byte`: a base64 (std, padded) JSON string. */
const bytesCodec: ParamCodec<Uint8Array> = {
  goKind: "slice",
  uriForm: "bytes",
  zero: EMPTY,
  isZero: (v) => v.length === 0,
  decode(node) {
    if (node.kind === "null") return EMPTY;
    if (node.kind !== "string") throw typeError(node, "[]uint8");
    return goBase64Decode(new Uint8Array(Buffer.from(node.value, "utf8")));
  },
  fromBytes: (b) => b,
};

/** CometBFT `HexBytes`: a hex JSON string without 0x (the raw text between the quotes, not unescaped). */
const hexBytesCodec: ParamCodec<Uint8Array> = {
  goKind: "slice",
  uriForm: "bytes",
  zero: EMPTY,
  isZero: (v) => v.length === 0,
  checkRaw(text) {
    if (!isQuotedRaw(text)) throw new ParamDecodeError(`invalid hex string: ${text}`);
  },
  decode(node) {
    if (node.kind === "null") return EMPTY;
    if (node.kind !== "string") throw new ParamDecodeError(`invalid hex string: ${node.raw}`);
    return goHexDecode(node.raw.slice(1, -1));
  },
  fromBytes: (b) => b,
};

/** Go `[]string`: a JSON array of strings; an empty array becomes nil. */
const stringListCodec: ParamCodec<readonly string[]> = {
  goKind: "slice",
  uriForm: "json",
  zero: [],
  isZero: (v) => v.length === 0,
  decode(node) {
    if (node.kind === "null") return [];
    if (node.kind !== "array") throw typeError(node, "[]json.RawMessage");
    return node.items.map((item) => stringCodec.decode(item));
  },
};

/** A Go pointer: JSON null (or absence) means "use the default", shown as undefined. */
function optional<T>(inner: ParamCodec<T>): ParamCodec<T | undefined> {
  const codec: ParamCodec<T | undefined> = {
    goKind: inner.goKind,
    uriForm: inner.uriForm,
    zero: undefined,
    isZero: (v) => v === undefined,
    decode: (node) => (node.kind === "null" ? undefined : inner.decode(node)),
  };
  const { fromBytes, checkRaw } = inner;
  const withRaw = checkRaw === undefined ? codec : { ...codec, checkRaw: (t: string) => checkRaw(t) };
  if (fromBytes !== undefined) return { ...withRaw, fromBytes: (b) => fromBytes(b) };
  return withRaw;
}

/** A codec for a value with its own JSON decoder (e.g. an interface type such as Evidence). */
function custom<T>(opts: {
  goKind: string;
  zero: T;
  decode(node: JsonNode): T;
  isZero?(v: T): boolean;
}): ParamCodec<T> {
  return {
    goKind: opts.goKind,
    uriForm: "json",
    zero: opts.zero,
    decode: (node) => opts.decode(node),
    isZero: opts.isZero ?? ((v) => v === opts.zero),
  };
}

/** The param codecs routes are declared with. */
export const p = {
  int64: intCodec("int64"),
  int: intCodec("int"),
  uint: intCodec("uint"),
  uint64: intCodec("uint64"),
  bool: boolCodec,
  string: stringCodec,
  bytes: bytesCodec,
  hexBytes: hexBytesCodec,
  stringList: stringListCodec,
  optional,
  custom,
};

const HEX_VALUES = new Map<number, number>();
for (let i = 0; i < 16; i++) {
  HEX_VALUES.set("0123456789abcdef".charCodeAt(i), i);
  HEX_VALUES.set("0123456789ABCDEF".charCodeAt(i), i);
}

function goRuneDescription(b: number): string {
  const u = `U+${b.toString(16).toUpperCase().padStart(4, "0")}`;
  const printable = b >= 0x20 && b !== 0x7f && !(b >= 0x80 && b < 0xa0) && b !== 0xad;
  return printable ? `${u} '${String.fromCharCode(b)}'` : u;
}

/** Go `hex.DecodeString` with its error texts. */
export function goHexDecode(text: string): Uint8Array {
  const src = Buffer.from(text, "utf8");
  const out = new Uint8Array(src.length >> 1);
  let j = 1;
  for (; j < src.length; j += 2) {
    const p0 = src[j - 1] as number;
    const q0 = src[j] as number;
    const a = HEX_VALUES.get(p0);
    if (a === undefined) throw new ParamDecodeError(`encoding/hex: invalid byte: ${goRuneDescription(p0)}`);
    const b = HEX_VALUES.get(q0);
    if (b === undefined) throw new ParamDecodeError(`encoding/hex: invalid byte: ${goRuneDescription(q0)}`);
    out[(j - 1) >> 1] = (a << 4) | b;
  }
  if (src.length % 2 === 1) {
    const last = src[j - 1] as number;
    if (!HEX_VALUES.has(last)) throw new ParamDecodeError(`encoding/hex: invalid byte: ${goRuneDescription(last)}`);
    throw new ParamDecodeError("encoding/hex: odd length hex string");
  }
  return out;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_VALUES = new Map<number, number>();
for (let i = 0; i < B64.length; i++) B64_VALUES.set(B64.charCodeAt(i), i);
const PAD = 0x3d;
const NL = 0x0a;
const CR = 0x0d;

function corrupt(offset: number): ParamDecodeError {
  return new ParamDecodeError(`illegal base64 data at input byte ${offset}`);
}

/** Go `base64.StdEncoding.Decode` (padded, newlines skipped) with its error offsets. */
export function goBase64Decode(src: Uint8Array): Uint8Array {
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const dbuf = [0, 0, 0, 0];
    let dlen = 4;
    let trailingError: number | undefined;
    for (let j = 0; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return new Uint8Array(out);
        throw corrupt(si - j);
      }
      const c = src[si] as number;
      si++;
      const v = B64_VALUES.get(c);
      if (v !== undefined) {
        dbuf[j] = v;
        continue;
      }
      if (c === NL || c === CR) {
        j--;
        continue;
      }
      if (c !== PAD) throw corrupt(si - 1);
      if (j === 0 || j === 1) throw corrupt(si - 1);
      if (j === 2) {
        while (si < src.length && (src[si] === NL || src[si] === CR)) si++;
        if (si === src.length) throw corrupt(src.length);
        if (src[si] !== PAD) throw corrupt(si - 1);
        si++;
      }
      while (si < src.length && (src[si] === NL || src[si] === CR)) si++;
      if (si < src.length) trailingError = si;
      dlen = j;
      break;
    }
    const val =
      ((dbuf[0] as number) << 18) | ((dbuf[1] as number) << 12) | ((dbuf[2] as number) << 6) | (dbuf[3] as number);
    const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    for (let k = 0; k < dlen - 1; k++) out.push(bytes[k] as number);
    if (trailingError !== undefined) throw corrupt(trailingError);
  }
  return new Uint8Array(out);
}

/** A route's arguments in declaration order: name → codec. */
export type ParamShape = { readonly [name: string]: ParamCodec<unknown> };

export type ParamValues<P extends ParamShape> = { -readonly [K in keyof P]: ParamValue<P[K]> };

function zeroValues<P extends ParamShape>(shape: P): ParamValues<P> {
  const out: Record<string, unknown> = {};
  for (const name in shape) out[name] = (shape[name] as ParamCodec<unknown>).zero;
  return out as ParamValues<P>;
}

/** Go `%v` of a []json.RawMessage: each item as its list of byte values. */
function goRawList(items: readonly JsonNode[]): string {
  return `[${items.map((n) => `[${[...Buffer.from(n.raw, "utf8")].join(" ")}]`).join(" ")}]`;
}

/**
 * Decodes JSON-RPC `params` (absent, null, an object by name, or an array of exactly one item per
 * argument). Throws {@link ParamDecodeError} with Go's text.
 */
export function decodeJsonParams<P extends ParamShape>(shape: P, params: JsonNode | undefined): ParamValues<P> {
  const values = zeroValues(shape);
  const out = values as Record<string, unknown>;
  if (params === undefined || params.kind === "null") return values;
  const names = Object.keys(shape);
  if (params.kind === "object") {
    const byName = new Map<string, JsonNode>();
    for (const [k, v] of params.entries) byName.set(k, v);
    for (const name of names) {
      const node = byName.get(name);
      if (node !== undefined) out[name] = (shape[name] as ParamCodec<unknown>).decode(node);
    }
    return values;
  }
  if (params.kind === "array") {
    if (params.items.length !== names.length) {
      throw new ParamDecodeError(
        `expected ${names.length} parameters ([${names.join(" ")}]), got ${params.items.length} (${goRawList(params.items)})`,
      );
    }
    names.forEach((name, i) => {
      out[name] = (shape[name] as ParamCodec<unknown>).decode(params.items[i] as JsonNode);
    });
    return values;
  }
  throw new ParamDecodeError(
    `unknown type for JSON params: json: cannot unmarshal ${goValueKind(params)} into Go value of type []json.RawMessage. Expected map or array`,
  );
}

/** Decodes one URI query value (non-empty) by the rules of CometBFT's http_uri_handler.go. */
export function decodeUriParam<T>(codec: ParamCodec<T>, arg: string): T {
  const isInt = /^-?[0-9]+$/.test(arg);
  const isQuoted = arg.startsWith('"') && arg.endsWith('"');
  const isHex = arg.toLowerCase().startsWith("0x");
  if (isInt && codec.uriForm === "int") return codec.decode(parseInner(`"${arg}"`));
  if (isHex) {
    if ((codec.uriForm !== "string" && codec.uriForm !== "bytes") || codec.fromBytes === undefined) {
      throw new ParamDecodeError(`got a hex string arg, but expected '${codec.goKind}'`);
    }
    return codec.fromBytes(goHexDecode(arg.slice(2)));
  }
  if (isQuoted && codec.uriForm === "bytes" && codec.fromBytes !== undefined) {
    const node = parseInner(arg);
    return codec.fromBytes(new Uint8Array(Buffer.from(stringCodec.decode(node), "utf8")));
  }
  codec.checkRaw?.(arg);
  return codec.decode(parseInner(arg));
}

/** Decodes URI arguments; `get` returns "" for an absent argument (which takes the zero value). */
export function decodeUriParams<P extends ParamShape>(shape: P, get: (name: string) => string): ParamValues<P> {
  const values = zeroValues(shape);
  const out = values as Record<string, unknown>;
  for (const name in shape) {
    const arg = get(name);
    if (arg === "") continue;
    out[name] = decodeUriParam(shape[name] as ParamCodec<unknown>, arg);
  }
  return values;
}
