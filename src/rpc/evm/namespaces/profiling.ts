import { writeFile } from "node:fs/promises";
import type { Session } from "node:inspector";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import type * as V8 from "node:v8";
import { runInNewContext } from "node:vm";
import type { WireValue } from "../../jsonrpc/index.js";
import type { EvmCallContext, ProfilerState } from "../context.js";
import { serverError } from "../errors.js";

/** node:inspector and node:v8, loaded when a profiling method is called (start-up time, docs/dev-chain.md "Start-up"). */
const nodeRequire = createRequire(import.meta.url);
const inspector = (): typeof import("node:inspector") => nodeRequire("node:inspector");
const v8 = (): typeof V8 => nodeRequire("node:v8");

/**
 * debug profiling on Node.js: CPU profiles through the inspector (.cpuprofile JSON, opened by
 * Chrome DevTools), heap snapshots through v8, GC statistics from perf_hooks, the GC percent as
 * V8's heap growth. Go-only knobs (block and mutex profile rates) are remembered and echoed; Go-only
 * profiles (block, mutex, execution traces) answer that Node.js has no such profiler. Every method
 * needs `enable-profiling = true`.
 */

/** V8's `--heap-growing-percent` this process started with (bin/cometh.js sets 80), if any. */
export function startingHeapGrowthPercent(execArgv: readonly string[] = process.execArgv): number | undefined {
  let found: number | undefined;
  for (const a of execArgv) {
    const m = /^--heap[-_]growing[-_]percent=(\d+)$/.exec(a);
    if (m !== null) found = Number(m[1]);
  }
  return found !== undefined && found > 0 ? found : undefined;
}

export function newProfilerState(): ProfilerState {
  return {
    gcPercent: startingHeapGrowthPercent() ?? 100,
    blockProfileRate: 0,
    mutexProfileFraction: 0,
    stopCpuProfile: undefined,
  };
}

/**
 * debug_setGCPercent. Go's GOGC lets the heap grow to live × (1 + percent/100) before the next
 * collection; V8's `--heap-growing-percent` is the same factor for its old generation, and V8 reads
 * it at every full GC, so it is set on the running process. V8 cannot turn its collector off: a
 * negative percent (GOGC=off) hands the factor back to V8's own choice (up to 4x), and 0 (collect
 * continuously) becomes the smallest factor V8 takes, 1%. Returns the previous percent, as geth.
 */
export function setGcPercent(
  state: ProfilerState,
  percent: number,
  setV8Flags: (flags: string) => void = (flags) => v8().setFlagsFromString(flags),
): number {
  const previous = state.gcPercent;
  setV8Flags(`--heap-growing-percent=${percent < 0 ? 0 : Math.max(1, percent)}`);
  state.gcPercent = percent;
  return previous;
}

export function requireProfiling(ctx: EvmCallContext): ProfilerState {
  if (!ctx.runtime.settings.enableProfiling) throw serverError("profiling disabled in the debug namespace");
  return ctx.runtime.profiler;
}

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((ok, fail) => {
    session.post(method, (err, result) => (err === null ? ok(result as T) : fail(err)));
  });
}

/** Starts a CPU profile written to `file` when stopped. */
export async function startCpuProfile(state: ProfilerState, file: string): Promise<void> {
  if (state.stopCpuProfile !== undefined) throw serverError("CPU profiling already in progress");
  const path = resolve(file);
  const session = new (inspector().Session)();
  session.connect();
  await post(session, "Profiler.enable");
  await post(session, "Profiler.start");
  state.stopCpuProfile = async () => {
    state.stopCpuProfile = undefined;
    try {
      const { profile } = await post<{ profile: unknown }>(session, "Profiler.stop");
      await writeFile(path, JSON.stringify(profile));
      return path;
    } finally {
      session.disconnect();
    }
  };
}

export async function stopCpuProfile(state: ProfilerState): Promise<string> {
  if (state.stopCpuProfile === undefined) throw serverError("CPU profiling not in progress");
  return state.stopCpuProfile();
}

export function writeMemProfile(file: string): void {
  v8().writeHeapSnapshot(resolve(file));
}

/** runtime.MemStats-like numbers from V8 and the process. */
export function memStats(): WireValue {
  const mem = process.memoryUsage();
  const heap = v8().getHeapStatistics();
  return {
    Alloc: mem.heapUsed,
    TotalAlloc: heap.total_heap_size,
    Sys: mem.rss,
    HeapAlloc: mem.heapUsed,
    HeapSys: mem.heapTotal,
    HeapIdle: mem.heapTotal - mem.heapUsed,
    HeapInuse: mem.heapUsed,
    HeapReleased: 0,
    ExternalAlloc: mem.external,
    ArrayBuffers: mem.arrayBuffers,
    HeapSizeLimit: heap.heap_size_limit,
    MallocedMemory: heap.malloced_memory,
    NumGC: gcStatsCollector.count,
    PauseTotalNs: Math.round(gcStatsCollector.pauseTotalMs * 1e6),
  };
}

const gcStatsCollector = { started: false, count: 0, pauseTotalMs: 0, lastGcMs: 0, pauses: [] as number[] };

/** Starts counting GC pauses (first call of gcStats/memStats). */
export function observeGc(): void {
  if (gcStatsCollector.started) return;
  gcStatsCollector.started = true;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcStatsCollector.count++;
      gcStatsCollector.pauseTotalMs += e.duration;
      gcStatsCollector.lastGcMs = performance.timeOrigin + e.startTime;
      gcStatsCollector.pauses.unshift(Math.round(e.duration * 1e6));
      gcStatsCollector.pauses.length = Math.min(gcStatsCollector.pauses.length, 256);
    }
  });
  // Lives as long as the process; an observer keeps no handle open.
  obs.observe({ entryTypes: ["gc"] });
}

/** debug.GCStats-like counts since the first profiling call. */
export function gcStats(): WireValue {
  return {
    LastGC:
      gcStatsCollector.lastGcMs === 0 ? "0001-01-01T00:00:00Z" : new Date(gcStatsCollector.lastGcMs).toISOString(),
    NumGC: gcStatsCollector.count,
    PauseTotal: Math.round(gcStatsCollector.pauseTotalMs * 1e6),
    Pause: gcStatsCollector.pauses,
  };
}

/** Runs a full garbage collection (debug.FreeOSMemory). */
export function freeOsMemory(): void {
  v8().setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
}

/** The current JavaScript stack and process summary (debug.Stacks). */
export function stacks(): string {
  const report = process.report.getReport() as unknown as {
    javascriptStack?: { message?: string; stack?: string[] };
  };
  const js = report.javascriptStack;
  return [js?.message ?? "", ...(js?.stack ?? [])].join("\n");
}

export const NO_GO_PROFILER = "Node.js has no equivalent of Go's block, mutex and execution-trace profilers";
