/**
 * Start-up phase marks for measuring how long `cometh start` / `cometh dev` take to serve
 * (docs/dev-chain.md "Start-up"). With COMETH_TRACE_STARTUP=1 each mark prints one stderr line:
 * milliseconds since the process started (Node's performance.timeOrigin), the CPU time the process
 * has used by then (all its threads: a loaded machine stretches the first, much less the second)
 * and the phase reached.
 * Otherwise a mark is one comparison.
 */
const enabled = process.env.COMETH_TRACE_STARTUP === "1";

export function startupMark(phase: string): void {
  if (!enabled) return;
  const cpu = process.cpuUsage();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  process.stderr.write(`cometh start-up: ${performance.now().toFixed(1)} ms (cpu ${cpuMs.toFixed(1)} ms) ${phase}\n`);
}
