/** What the program needs from the outside world; tests pass their own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  /** Ends the process (process.exit in production). */
  exit(code: number): never;
}
