import { createRequire } from "node:module";
import { Writable } from "node:stream";
import type { pino as Pino } from "pino";

/** The logger every subsystem takes; pino's shape so the node can hand out child loggers. */
export type Logger = Pino.Logger;

export interface LoggerOptions {
  level?: string;
  /** `json`: one JSON object per line. `plain`: CometBFT-like text, `I[2026-01-02|15:04:05.000] msg key=value`. */
  format?: "plain" | "json";
  /** File descriptor (default 2, stderr). */
  destination?: number;
}

/**
 * pino, loaded the first time a logger writes a line (or is used beyond its level methods, child and
 * flush): loading it and the Node modules it needs (streams, worker threads) was ~5% of `cometh dev`'s
 * start-up, and a dev chain logs at "error", so usually never (docs/dev-chain.md "Start-up").
 */
let pinoModule: typeof Pino | undefined;
function loadPino(): typeof Pino {
  pinoModule ??= (createRequire(import.meta.url)("pino") as { pino: typeof Pino }).pino;
  return pinoModule;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? "info";
  const fd = opts.destination ?? 2;
  return lazyLogger(level, () => {
    const pino = loadPino();
    if (opts.format === "json") {
      return pino({ level, base: null }, pino.destination({ dest: fd, sync: false }));
    }
    const out = pino.destination({ dest: fd, sync: false });
    return pino({ level, base: null, timestamp: pino.stdTimeFunctions.epochTime }, plainStream(out));
  });
}

/** A logger that drops everything, for tests. */
export function silentLogger(): Logger {
  return lazyLogger("silent", () => loadPino()({ level: "silent" }));
}

/** pino's level values; "silent" is above all. */
const LEVEL_VALUES: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
};

function levelValue(level: string): number {
  return level === "silent" ? Number.POSITIVE_INFINITY : (LEVEL_VALUES[level] ?? LEVEL_VALUES.info ?? 30);
}

const noop = () => {};

/**
 * A pino logger made by `make` when first needed. Until then, a level method under `level` is a
 * no-op (as pino's own are), `child` is another such logger (made from this one's when needed),
 * `flush` has nothing to flush, and `level` / `isLevelEnabled` answer from `level`; anything else
 * (a line to write, a level change) makes the logger and goes to it, methods bound to it.
 */
function lazyLogger(level: string, make: () => Logger): Logger {
  let real: Logger | undefined;
  const get = () => {
    real ??= make();
    return real;
  };
  const threshold = levelValue(level);
  const bound = new Map<PropertyKey, unknown>();
  const early: Record<string, unknown> = {
    child: (bindings: Pino.Bindings, options?: Pino.ChildLoggerOptions) =>
      lazyLogger(typeof options?.level === "string" ? options.level : level, () => get().child(bindings, options)),
    flush: (cb?: (err?: Error) => void) => cb?.(),
    level,
    isLevelEnabled: (l: string) => levelValue(l) >= threshold,
  };
  return new Proxy({} as Logger, {
    get(_target, prop) {
      if (real === undefined && typeof prop === "string") {
        const value = LEVEL_VALUES[prop];
        if (value !== undefined && value < threshold) return noop;
        if (prop in early) return early[prop];
      }
      const r = get();
      const v = Reflect.get(r, prop, r) as unknown;
      if (typeof v !== "function") return v;
      let b = bound.get(prop);
      if (b === undefined || (b as { target?: unknown }).target !== v) {
        const fn = (v as (...args: unknown[]) => unknown).bind(r);
        b = Object.assign(fn, { target: v });
        bound.set(prop, b);
      }
      return b;
    },
    set(_target, prop, value) {
      return Reflect.set(get(), prop, value);
    },
    has(_target, prop) {
      return Reflect.has(get(), prop);
    },
  });
}

const LEVEL_LETTER: Record<number, string> = { 10: "T", 20: "D", 30: "I", 40: "W", 50: "E", 60: "F" };

/** Rewrites pino's JSON lines as `L[date|time] msg key=value ...` (CometBFT's plain log format). */
function plainStream(out: { write(s: string): unknown }): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      let text = "";
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line === "") continue;
        text += `${formatPlainLine(line)}\n`;
      }
      out.write(text);
      cb();
    },
  });
}

export function formatPlainLine(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, ...rest } = rec;
  const letter = LEVEL_LETTER[typeof level === "number" ? level : 30] ?? "I";
  const iso = new Date(typeof time === "number" ? time : Date.now()).toISOString();
  const stamp = `${iso.slice(0, 10)}|${iso.slice(11, 23)}`;
  let s = `${letter}[${stamp}] ${typeof msg === "string" ? msg : ""}`;
  for (const [k, v] of Object.entries(rest)) {
    s += ` ${k}=${formatPlainValue(v)}`;
  }
  return s;
}

function formatPlainValue(v: unknown): string {
  if (typeof v === "string") return /[\s="]/.test(v) ? JSON.stringify(v) : v;
  if (
    v !== null &&
    typeof v === "object" &&
    "message" in v &&
    typeof (v as { message: unknown }).message === "string"
  ) {
    return JSON.stringify((v as { message: string }).message);
  }
  return JSON.stringify(v);
}
