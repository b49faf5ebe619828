/** Log levels accepted in `log_level` (CometBFT: debug, info, error, none; cometh adds warn). */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "none"] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

export interface LogLevels {
  /** The level for modules without their own entry ("*" or the bare level). */
  default: LogLevelName;
  /** Per-module levels, e.g. { consensus: "debug" } from "consensus:debug,*:info". */
  modules: Record<string, LogLevelName>;
}

/**
 * Parses CometBFT's log_level syntax: a bare level ("info") or module:level pairs
 * ("consensus:debug,p2p:none,*:error"). Returns a problem text when malformed.
 */
export function parseLogLevel(text: string, fallback: LogLevelName = "info"): LogLevels | string {
  const valid = `valid levels: ${LOG_LEVELS.join(", ")}; as "info" or "consensus:debug,*:error"`;
  const s = text.trim();
  if (s === "") return `must not be empty; ${valid}`;
  if (!s.includes(":")) {
    return isLevel(s) ? { default: s, modules: {} } : `has unknown level ${JSON.stringify(s)}; ${valid}`;
  }
  const out: LogLevels = { default: fallback, modules: {} };
  for (const item of s.split(",")) {
    const parts = item.trim().split(":");
    const [mod, level] = parts;
    if (parts.length !== 2 || mod === undefined || mod === "" || level === undefined) {
      return `has a malformed entry ${JSON.stringify(item)}; ${valid}`;
    }
    if (!isLevel(level)) return `has unknown level ${JSON.stringify(level)} for module "${mod}"; ${valid}`;
    if (mod === "*") out.default = level;
    else out.modules[mod] = level;
  }
  return out;
}

function isLevel(s: string): s is LogLevelName {
  return (LOG_LEVELS as readonly string[]).includes(s);
}
