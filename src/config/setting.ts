import { isAbsolute, join, resolve } from "node:path";
import { ComethError } from "../util/errors.js";
import { DURATION_UNITS, nsToMs, parseGoDuration } from "./duration.js";
import { parseListenAddress } from "./listenAddress.js";

/** A value as it is written in a TOML file (and how defaults are kept, so the template prints them verbatim). */
export type TomlInput = string | number | bigint | boolean | readonly string[];

/** How the value is written and how a flag's text becomes a value. */
export type SettingKind = "string" | "integer" | "boolean" | "duration" | "list" | "float";

/** A value the parser refused; config/loadNodeConfig adds the file (or flag) and the key. */
export class SettingValueError extends ComethError {
  constructor(problem: string) {
    super(problem);
  }
}

/** One config.toml/app.toml key: its default (file form), parser and comment. */
export interface Setting<T> {
  readonly key: string;
  /** Other keys read for the same value (app.toml `rpc-gas-cap` for `gas-cap`). */
  readonly aliases: readonly string[];
  readonly kind: SettingKind;
  readonly default: TomlInput;
  /** Comment lines written above the key in the generated file. */
  readonly doc: string;
  /** False for keys that are not flags (`version`). */
  readonly flag: boolean;
  /** The accepted values, for settings that take one of a fixed set. */
  readonly valid?: readonly string[];
  /** Turns the raw TOML value into the typed one, or throws SettingValueError naming the valid values. */
  parse(raw: unknown): T;
  /** Resolves paths against the home directory. */
  resolve?(value: T, home: string): T;
}

interface Common {
  doc: string;
  aliases?: readonly string[];
  flag?: boolean;
}

function make<T>(key: string, kind: SettingKind, def: TomlInput, c: Common, parse: (raw: unknown) => T): Setting<T> {
  return { key, kind, default: def, doc: c.doc, aliases: c.aliases ?? [], flag: c.flag ?? true, parse };
}

/** JSON-ish rendering of a bad value for messages: strings quoted, the TOML type named. */
export function describeValue(raw: unknown): string {
  if (typeof raw === "string") return JSON.stringify(raw);
  if (typeof raw === "bigint") return raw.toString();
  if (Array.isArray(raw)) return `an array`;
  if (raw !== null && typeof raw === "object") return raw instanceof Date ? "a date" : "a table";
  return String(raw);
}

function typeName(raw: unknown): string {
  if (typeof raw === "string") return "a string";
  if (typeof raw === "number") return Number.isInteger(raw) ? "an integer" : "a float";
  if (typeof raw === "bigint") return "an integer";
  if (typeof raw === "boolean") return "a boolean";
  if (Array.isArray(raw)) return "an array";
  if (raw instanceof Date) return "a date";
  return "a table";
}

function wrongType(expected: string, raw: unknown): SettingValueError {
  return new SettingValueError(`must be ${expected}; got ${describeValue(raw)} (${typeName(raw)})`);
}

export function quoteList(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

/** A free string; `check` returns a problem text when the value is not acceptable. */
export function str(
  key: string,
  def: string,
  c: Common & { check?: (s: string) => string | undefined },
): Setting<string> {
  return make(key, "string", def, c, (raw) => {
    if (typeof raw !== "string") throw wrongType("a string", raw);
    const problem = c.check?.(raw);
    if (problem !== undefined) throw new SettingValueError(problem);
    return raw;
  });
}

/** One of a fixed set of strings; the error lists them. */
export function oneOf<const V extends string>(
  key: string,
  def: V,
  valid: readonly V[],
  c: Common & { hint?: string },
): Setting<V> {
  const s = make(key, "string", def, c, (raw) => {
    if (typeof raw !== "string") throw wrongType(`one of ${quoteList(valid)}`, raw);
    if (!(valid as readonly string[]).includes(raw)) {
      const hint = c.hint === undefined ? "" : `. ${c.hint}`;
      throw new SettingValueError(`must be one of ${quoteList(valid)}; got ${JSON.stringify(raw)}${hint}`);
    }
    return raw as V;
  });
  return { ...s, valid };
}

/** An integer that fits a JS number; negative values are refused unless `min` says otherwise. */
export function int(key: string, def: number, c: Common & { min?: number; max?: number }): Setting<number> {
  const min = c.min ?? 0;
  return make(key, "integer", def, c, (raw) => {
    let v = raw;
    // cometbft writes statesync chunk_fetchers quoted ("4"); viper accepts numeric strings.
    if (typeof v === "string" && /^-?\d+$/.test(v.trim())) v = Number(v.trim());
    if (typeof v === "bigint") throw new SettingValueError(`is too large; got ${v}`);
    if (typeof v !== "number" || !Number.isInteger(v)) throw wrongType("an integer", raw);
    if (v < min) {
      throw new SettingValueError(
        min === 0 ? `can't be negative; got ${v}. Use 0 or a positive integer` : `must be at least ${min}; got ${v}`,
      );
    }
    if (c.max !== undefined && v > c.max) throw new SettingValueError(`must be at most ${c.max}; got ${v}`);
    return v;
  });
}

/** An unsigned 64-bit integer (gas, wei), kept as bigint. */
export function uint64(key: string, def: bigint, c: Common): Setting<bigint> {
  return make(key, "integer", def, c, (raw) => {
    let v: bigint;
    if (typeof raw === "bigint") v = raw;
    else if (typeof raw === "number" && Number.isInteger(raw)) v = BigInt(raw);
    else if (typeof raw === "string" && /^-?\d+$/.test(raw.trim())) v = BigInt(raw.trim());
    else throw wrongType("an integer", raw);
    if (v < 0n) throw new SettingValueError(`can't be negative; got ${v}. Use 0 or a positive integer`);
    if (v >= 1n << 64n) throw new SettingValueError(`must fit in 64 bits; got ${v}`);
    return v;
  });
}

/** A non-negative number (fractions allowed). */
export function float(key: string, def: number, c: Common): Setting<number> {
  return make(key, "float", def, c, (raw) => {
    let v = raw;
    if (typeof v === "bigint") v = Number(v);
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) v = Number(v);
    if (typeof v !== "number" || !Number.isFinite(v)) throw wrongType("a number", raw);
    if (v < 0) throw new SettingValueError(`can't be negative; got ${v}. Use 0 or a positive number`);
    return v;
  });
}

export function bool(key: string, def: boolean, c: Common): Setting<boolean> {
  return make(key, "boolean", def, c, (raw) => {
    if (typeof raw === "boolean") return raw;
    throw new SettingValueError(`must be true or false; got ${describeValue(raw)} (${typeName(raw)})`);
  });
}

/**
 * A Go duration string ("3s", "500ms", "1m0s"), kept in milliseconds. Negative durations are refused
 * (CometBFT ValidateBasic: "... can't be negative"); `positive` also refuses zero.
 */
export function duration(key: string, def: string, c: Common & { positive?: boolean }): Setting<number> {
  const expected = `a duration such as "500ms", "3s" or "1m0s" (units: ${DURATION_UNITS.join(", ")})`;
  return make(key, "duration", def, c, (raw) => {
    if (typeof raw !== "string") throw wrongType(expected, raw);
    const ns = parseGoDuration(raw.trim());
    if (ns === undefined) throw new SettingValueError(`must be ${expected}; got ${JSON.stringify(raw)}`);
    if (ns < 0n) throw new SettingValueError(`can't be negative; got ${JSON.stringify(raw)}`);
    if (c.positive && ns === 0n) throw new SettingValueError(`must be positive; got ${JSON.stringify(raw)}`);
    return nsToMs(ns);
  });
}

/** A TOML array of strings (flags: comma-separated). */
export function list(key: string, def: readonly string[], c: Common): Setting<string[]> {
  return make(key, "list", def, c, (raw) => {
    if (!Array.isArray(raw) || !raw.every((x) => typeof x === "string")) throw wrongType("an array of strings", raw);
    return [...(raw as string[])];
  });
}

/**
 * A path; relative paths are resolved against the home directory (or its config/ directory for the
 * TLS files, as CometBFT does). An empty string stays empty (feature off).
 */
export function path(key: string, def: string, c: Common & { base?: "home" | "config" }): Setting<string> {
  const s = str(key, def, c);
  return {
    ...s,
    resolve(value: string, home: string): string {
      if (value === "" || isAbsolute(value)) return value;
      return c.base === "config" ? resolve(join(home, "config"), value) : resolve(home, value);
    },
  };
}

/** A listen address: "tcp://host:port", "unix:///path" or "host:port"; empty only when `optional`. */
export function listenAddr(
  key: string,
  def: string,
  c: Common & { optional?: boolean; scheme?: boolean },
): Setting<string> {
  return str(key, def, {
    ...c,
    check: (s) => {
      if (s === "") return c.optional ? undefined : 'must not be empty; use an address such as "tcp://127.0.0.1:26657"';
      const parsed = parseListenAddress(s);
      if (typeof parsed === "string") return `is not a valid listen address (${parsed}); got ${JSON.stringify(s)}`;
      if (c.scheme === false && s.includes("://"))
        return `must be host:port without a scheme; got ${JSON.stringify(s)}`;
      return undefined;
    },
  });
}

/** Converts a command-line flag's text to the raw value the setting's parser expects. */
export function flagToRaw(setting: Setting<unknown>, value: string | boolean): unknown {
  if (typeof value === "boolean") {
    if (setting.kind === "boolean") return value;
    throw new SettingValueError(`needs a value`);
  }
  switch (setting.kind) {
    case "boolean":
      if (value === "true") return true;
      if (value === "false") return false;
      return value;
    case "integer":
      if (!/^-?\d+$/.test(value.trim())) return value;
      return Number.isSafeInteger(Number(value.trim())) ? Number(value.trim()) : BigInt(value.trim());
    case "float":
      return value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
    case "list":
      return value === "" ? [] : value.split(",").map((s) => s.trim());
    default:
      return value;
  }
}
