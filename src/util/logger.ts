import { Writable } from "node:stream";
import { pino } from "pino";

/** The logger every subsystem takes; pino's shape so the node can hand out child loggers. */
export type Logger = pino.Logger;

export interface LoggerOptions {
  level?: string;
  /** `json`: one JSON object per line. `plain`: CometBFT-like text, `I[2026-01-02|15:04:05.000] msg key=value`. */
  format?: "plain" | "json";
  /** File descriptor (default 2, stderr). */
  destination?: number;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? "info";
  const fd = opts.destination ?? 2;
  if (opts.format === "json") {
    return pino({ level, base: null }, pino.destination({ dest: fd, sync: false }));
  }
  const out = pino.destination({ dest: fd, sync: false });
  return pino({ level, base: null, timestamp: pino.stdTimeFunctions.epochTime }, plainStream(out));
}

/** A logger that drops everything, for tests. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
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
