import { pino } from "pino";

/** The logger every subsystem takes; pino's shape so the node can hand out child loggers. */
export type Logger = pino.Logger;

export function createLogger(opts: { level?: string; format?: "plain" | "json"; destination?: number } = {}): Logger {
  return pino(
    { level: opts.level ?? "info", base: undefined },
    pino.destination({ dest: opts.destination ?? 2, sync: false }),
  );
}

/** A logger that drops everything, for tests. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
