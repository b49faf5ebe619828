import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Logger } from "../../util/logger.js";
import { EvmAppError } from "./errors.js";
import type { CallArgs, CallOptions, CallResult, EvmLogView, EvmReader, LogFilter } from "./readerTypes.js";
import {
  cancel,
  createTracer,
  detachBytes,
  errorFromWire,
  type FromWorker,
  newCancelBoard,
  type ReadRequest,
  type ReadWorkerSetup,
  type ToWorker,
  type TracerSpec,
} from "./readWire.js";

/**
 * eth_call, eth_estimateGas, debug_traceCall and eth_getLogs on worker threads (`[json-rpc]
 * read-workers`), so that reads use the other cores while the main thread keeps consensus, CheckTx and
 * the RPC's I/O. Each worker (readWorker.ts) opens the app's LMDB environment again and runs its own
 * EvmReaderImpl: the answers are the main thread's, computed elsewhere.
 *
 * - Heights are resolved here: a request carries the height the main thread saw as latest (or the one
 *   asked), and the worker reads exactly that height from a snapshot that includes it.
 * - The main thread's call memo is asked first (`peekCall`) and learns every worker result (`keepCall`).
 * - One request per worker at a time, the others queued here: a long call occupies one worker, the
 *   next request goes to the next idle one. Each worker enforces the call's evm-timeout itself.
 * - Errors come back as their own classes with their messages and fields (readWire.ts).
 * - Workers start at the first read. Until one is ready, and whenever none is running (all crashed),
 *   reads run on the main thread as without a pool. A worker that dies fails the request it was
 *   answering with EvmReadWorkerError and is started again (after repeated failures to start, it is
 *   left stopped and logged).
 * - Not for dev chains (console.log, rollbacks) or anything that needs the mempool: the node keeps
 *   those on the main thread.
 */

/** A read worker stopped (crashed, or the node is stopping) before answering. */
export class EvmReadWorkerError extends EvmAppError {}

export const MAX_READ_WORKERS = 64;

export interface EvmReadPoolOptions {
  /** Worker threads, 1..64. */
  size: number;
  setup: ReadWorkerSetup;
  /** The main thread's reader: heights, the call memo, and the reads while no worker runs. */
  reader: EvmReader;
  log: Logger;
  /** The worker script (tests); default readWorker beside this module (its .ts through tsx when run from sources). */
  workerScript?: URL;
}

/** Counters for tests and logs. */
export interface EvmReadPoolStats {
  /** Answered by a worker. */
  workers: number;
  /** Run on the main thread because no worker was running. */
  mainThread: number;
  /** Answered by the main thread's call memo. */
  memo: number;
  /** Workers that stopped unexpectedly (startFailures included). */
  crashes: number;
  /** Of those, workers that stopped before they were ready (restarted the same way). */
  startFailures: number;
  /** Workers running now (ready or answering). */
  running: number;
}

interface Job {
  readonly req: ReadRequest;
  readonly local: () => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  settled: boolean;
  /** The id it was last posted under (0 while queued here). */
  id: number;
}

type SlotState = "off" | "starting" | "ready" | "stopped";

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  state: SlotState;
  /** Posted and not answered, in the order the worker runs them (the first is running). */
  readonly inflight: Job[];
  /** When the first of `inflight` started (about: when the answer before it arrived). */
  headSince: number;
  /** Requests taken back before the worker started them (readWire.ts). */
  readonly cancelled: Int32Array;
  /** Armed while requests wait behind a running one: takes them back if it runs too long. */
  stallTimer: NodeJS.Timeout | undefined;
  /** Its running request passed STALL_MS: nothing more is posted to it until it answers. */
  stalled: boolean;
  /** Consecutive exits before the worker said ready. */
  failedStarts: number;
  lastError: string | undefined;
  restart: NodeJS.Timeout | undefined;
  exited: Promise<void> | undefined;
}

/**
 * Requests posted to one worker at once. One would leave the worker idle for a round trip through the
 * main thread's event loop after each answer (~2/3 of its time at 32 connections); CPU per call at 32
 * concurrent distinct balanceOf calls, 1 worker: depth 1 ~125 µs, 4 ~115, 8 ~107, 16 ~98 (main thread
 * alone ~60). Deeper queues more requests behind a long call until STALL_MS takes them back.
 */
const PIPELINE_DEPTH = 8;
/**
 * A request running longer than this in a worker is a long one: the requests posted behind it are
 * taken back and go to another worker (or wait here for one), so a long call holds up nobody else.
 */
const STALL_MS = 20;
/** After this many failed starts in a row a worker is left stopped. */
const MAX_FAILED_STARTS = 5;
/** A worker asked to close and still running after this long is terminated. */
const CLOSE_GRACE_MS = 2000;

export class EvmReadPool {
  readonly #opts: EvmReadPoolOptions;
  readonly #reader: EvmReader;
  readonly #slots: Slot[];
  /** Waiting for a worker, oldest first. */
  readonly #queue: Job[] = [];
  #started = false;
  #closing: Promise<void> | undefined;
  #nextId = 0;
  readonly #stats = { workers: 0, mainThread: 0, memo: 0, crashes: 0, startFailures: 0 };

  constructor(opts: EvmReadPoolOptions) {
    if (!Number.isInteger(opts.size) || opts.size < 1 || opts.size > MAX_READ_WORKERS) {
      throw new RangeError(`a read pool has 1 to ${MAX_READ_WORKERS} workers; got ${opts.size}`);
    }
    this.#opts = opts;
    this.#reader = opts.reader;
    this.#slots = Array.from({ length: opts.size }, (_, index) => ({
      index,
      worker: undefined,
      state: "off" as SlotState,
      inflight: [],
      headSince: 0,
      cancelled: newCancelBoard(),
      stallTimer: undefined,
      stalled: false,
      failedStarts: 0,
      lastError: undefined,
      restart: undefined,
      exited: undefined,
    }));
  }

  get size(): number {
    return this.#slots.length;
  }

  stats(): EvmReadPoolStats {
    return { ...this.#stats, running: this.#slots.filter(isRunning).length };
  }

  /**
   * Requests taken and not answered per running worker (queued here or posted); Infinity while no
   * worker runs (a request would run on the main thread anyway).
   */
  backlog(): number {
    let running = 0;
    let posted = 0;
    for (const s of this.#slots) {
      if (!isRunning(s)) continue;
      running++;
      posted += s.inflight.length;
    }
    return running === 0 ? Number.POSITIVE_INFINITY : (posted + this.#queue.length) / running;
  }

  /** Starts the workers now instead of at the first read; resolves once each is ready or stopped. */
  async start(): Promise<void> {
    this.#start();
    const deadline = Date.now() + 60_000;
    while (this.#slots.some((s) => s.state === "starting" || (s.state === "off" && s.restart !== undefined))) {
      if (Date.now() > deadline || this.#closing !== undefined) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** eth_call at `opts.height` (default: the latest height now). */
  call(args: CallArgs, opts: CallOptions = {}, signal?: AbortSignal): Promise<CallResult> {
    const o = this.#resolved(opts);
    const kept = this.#reader.peekCall(args, o);
    if (kept !== undefined) {
      this.#stats.memo++;
      return Promise.resolve(kept);
    }
    return this.#submit(
      { op: "call", args, opts: o },
      () => this.#reader.call(args, o),
      signal,
      (r: CallResult) => this.#reader.keepCall(args, o, r),
    );
  }

  estimateGas(args: CallArgs, opts: CallOptions = {}, signal?: AbortSignal): Promise<bigint> {
    const o = this.#resolved(opts);
    return this.#submit({ op: "estimateGas", args, opts: o }, () => this.#reader.estimateGas(args, o), signal);
  }

  /** debug_traceCall with the tracer `spec` names; resolves with that tracer's result. */
  traceCall(args: CallArgs, spec: TracerSpec, opts: CallOptions = {}, signal?: AbortSignal): Promise<unknown> {
    const o = this.#resolved(opts);
    return this.#submit(
      { op: "traceCall", args, opts: o, tracer: spec },
      () => this.#reader.traceCall(args, createTracer(spec), o),
      signal,
    );
  }

  /** eth_getLogs over [fromHeight, min(toHeight, latest height now)]. */
  logs(filter: LogFilter): Promise<EvmLogView[]> {
    const f = { ...filter, toHeight: Math.min(filter.toHeight, this.#reader.latestHeight()) };
    if (f.fromHeight > f.toHeight) return Promise.resolve([]);
    return this.#submit({ op: "logs", filter: f }, async () => this.#reader.logs(f), undefined);
  }

  /** Fails what is queued, stops every worker (terminating one still busy after 2 s); idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    for (const job of this.#queue.splice(0)) this.#settle(job, false, stopping());
    const exits: Promise<void>[] = [];
    for (const s of this.#slots) {
      if (s.restart !== undefined) clearTimeout(s.restart);
      s.restart = undefined;
      this.#disarm(s);
      const w = s.worker;
      if (w === undefined || s.exited === undefined) {
        s.state = "stopped";
        continue;
      }
      w.postMessage({ op: "close" } satisfies ToWorker);
      const grace = setTimeout(() => void w.terminate(), CLOSE_GRACE_MS);
      exits.push(s.exited.finally(() => clearTimeout(grace)));
    }
    await Promise.all(exits);
  }

  #resolved(opts: CallOptions): CallOptions {
    // Only what the reader reads (no AbortSignal: it cannot be cloned).
    const o: CallOptions = { height: opts.height ?? this.#reader.latestHeight() };
    if (opts.gasCap !== undefined) o.gasCap = opts.gasCap;
    if (opts.timeoutMs !== undefined) o.timeoutMs = opts.timeoutMs;
    if (opts.overrides !== undefined) o.overrides = opts.overrides;
    if (opts.block !== undefined) o.block = opts.block;
    if (opts.quietConsole !== undefined) o.quietConsole = opts.quietConsole;
    return o;
  }

  #submit<T>(
    req: ReadRequest,
    local: () => Promise<T>,
    signal: AbortSignal | undefined,
    onResult?: (value: T) => void,
  ): Promise<T> {
    if (this.#closing !== undefined) return Promise.reject(stopping());
    this.#start();
    if (!this.#slots.some(isRunning)) {
      this.#stats.mainThread++;
      return local();
    }
    const p = new Promise<unknown>((resolve, reject) => {
      const job: Job = { req, local, resolve, reject, signal, onAbort: undefined, settled: false, id: 0 };
      if (signal !== undefined) {
        if (signal.aborted) {
          reject(abortError(signal));
          return;
        }
        job.onAbort = () => this.#abort(job, signal);
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.#queue.push(job);
      this.#pump();
    });
    return onResult === undefined
      ? (p as Promise<T>)
      : (p as Promise<T>).then((v) => {
          onResult(v);
          return v;
        });
  }

  /**
   * The caller gave up (the RPC's evm-timeout): a request still queued here, or waiting in a worker
   * behind another, is dropped; a running one is stopped by the worker's own deadline.
   */
  #abort(job: Job, signal: AbortSignal): void {
    const i = this.#queue.indexOf(job);
    if (i >= 0) {
      this.#queue.splice(i, 1);
      this.#settle(job, false, abortError(signal));
      return;
    }
    for (const slot of this.#slots) {
      const k = slot.inflight.indexOf(job);
      if (k < 1) continue;
      slot.inflight.splice(k, 1);
      cancel(slot.cancelled, job.id);
      if (slot.inflight.length < 2) this.#disarm(slot);
      this.#settle(job, false, abortError(signal));
      this.#pump();
      return;
    }
  }

  #settle(job: Job, ok: boolean, value: unknown): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort !== undefined) job.signal?.removeEventListener("abort", job.onAbort);
    if (ok) job.resolve(value);
    else job.reject(value);
  }

  /** Posts queued requests to the least loaded ready workers, up to PIPELINE_DEPTH each. */
  #pump(): void {
    while (this.#queue.length > 0) {
      let slot: Slot | undefined;
      for (const s of this.#slots) {
        if (s.state !== "ready" || s.stalled || s.inflight.length >= PIPELINE_DEPTH) continue;
        if (slot === undefined || s.inflight.length < slot.inflight.length) slot = s;
        if (s.inflight.length === 0) break;
      }
      if (slot === undefined) return;
      const job = this.#queue.shift() as Job;
      if (job.settled) continue;
      this.#nextId = this.#nextId >= 0x7fffffff ? 1 : this.#nextId + 1;
      const id = this.#nextId;
      const w = slot.worker as Worker;
      try {
        w.postMessage({ ...detachBytes(job.req), id } satisfies ToWorker);
      } catch (err) {
        // Not cloneable: nothing was sent.
        this.#settle(job, false, err);
        continue;
      }
      job.id = id;
      if (slot.inflight.length === 0) {
        slot.headSince = performance.now();
        w.ref();
      }
      slot.inflight.push(job);
      if (slot.inflight.length === 2) this.#arm(slot);
    }
  }

  /** Watches the running request of a worker that has others waiting behind it. */
  #arm(slot: Slot): void {
    if (slot.stallTimer !== undefined) return;
    const wait = Math.max(1, slot.headSince + STALL_MS - performance.now());
    slot.stallTimer = setTimeout(() => this.#checkStall(slot), wait);
    slot.stallTimer.unref();
  }

  #disarm(slot: Slot): void {
    if (slot.stallTimer !== undefined) clearTimeout(slot.stallTimer);
    slot.stallTimer = undefined;
  }

  #checkStall(slot: Slot): void {
    slot.stallTimer = undefined;
    if (slot.inflight.length < 2) return;
    if (performance.now() - slot.headSince < STALL_MS) {
      this.#arm(slot);
      return;
    }
    // A long request: the ones behind it go back to the front of the queue, in order, and this
    // worker gets nothing new until it answers.
    slot.stalled = true;
    const waiting = slot.inflight.splice(1);
    for (const job of waiting) cancel(slot.cancelled, job.id);
    this.#queue.unshift(...waiting);
    this.#pump();
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    for (const s of this.#slots) this.#spawn(s);
  }

  #spawn(slot: Slot): void {
    slot.restart = undefined;
    if (this.#closing !== undefined) return;
    let w: Worker;
    try {
      w = startWorker(this.#opts.workerScript, this.#opts.setup, slot.cancelled, slot.index);
    } catch (err) {
      slot.lastError = (err as Error).message;
      this.#exited(slot, undefined, -1);
      return;
    }
    slot.worker = w;
    slot.state = "starting";
    slot.lastError = undefined;
    // Idle workers do not keep the process alive; one answering a request does (ref'd in #pump).
    w.unref();
    w.on("message", (m: FromWorker) => this.#message(slot, w, m));
    w.on("error", (err) => {
      slot.lastError = err.message;
    });
    slot.exited = new Promise((resolve) => {
      w.once("exit", (code) => {
        this.#exited(slot, w, code);
        resolve();
      });
    });
  }

  #message(slot: Slot, w: Worker, m: FromWorker): void {
    if (slot.worker !== w) return;
    switch (m.kind) {
      case "ready":
        slot.state = "ready";
        slot.failedStarts = 0;
        this.#pump();
        return;
      case "failed":
        slot.lastError = m.error.message;
        return;
      case "done":
      case "error": {
        // Answers come in posting order; one taken back (cancelled) may still answer if it had started.
        const i = slot.inflight.findIndex((j) => j.id === m.id);
        if (i < 0) return;
        const job = slot.inflight[i] as Job;
        // Posted before it yet unanswered: cannot happen (a worker answers in order, skipping only
        // what was taken back); sent again rather than left waiting.
        const skipped = slot.inflight.splice(0, i + 1).slice(0, i);
        if (skipped.length > 0) this.#queue.unshift(...skipped);
        slot.headSince = performance.now();
        slot.stalled = false;
        this.#disarm(slot);
        if (slot.inflight.length >= 2) this.#arm(slot);
        if (slot.inflight.length === 0) w.unref();
        this.#stats.workers++;
        if (m.kind === "done") this.#settle(job, true, m.value);
        else this.#settle(job, false, errorFromWire(m.error));
        this.#pump();
        return;
      }
    }
  }

  #exited(slot: Slot, w: Worker | undefined, code: number): void {
    if (w !== undefined && slot.worker !== w) return;
    const wasStarting = slot.state === "starting" || w === undefined;
    slot.worker = undefined;
    this.#disarm(slot);
    slot.stalled = false;
    const lost = slot.inflight.splice(0);
    if (this.#closing !== undefined) {
      slot.state = "stopped";
      for (const job of lost) this.#settle(job, false, stopping());
      return;
    }
    this.#stats.crashes++;
    if (wasStarting) this.#stats.startFailures++;
    const why = `${slot.lastError ?? "no error reported"}; exit code ${code}`;
    // The request it was running fails (it may be what crashed it); the ones waiting behind it are
    // sent again.
    const [running, ...waiting] = lost;
    if (running !== undefined) {
      this.#settle(
        running,
        false,
        new EvmReadWorkerError(
          `read worker ${slot.index} stopped while answering ${opName(running.req)} (${why}); it is being restarted. Send the request again`,
        ),
      );
    }
    this.#queue.unshift(...waiting);
    slot.failedStarts = wasStarting ? slot.failedStarts + 1 : 0;
    if (slot.failedStarts >= MAX_FAILED_STARTS) {
      slot.state = "stopped";
      this.#opts.log.error(
        { worker: slot.index, attempts: slot.failedStarts, reason: why },
        "a read worker keeps failing to start; it is left stopped (its reads go to the other workers, or the main thread)",
      );
    } else {
      slot.state = "off";
      const delay = Math.min(5000, 100 * 2 ** slot.failedStarts);
      this.#opts.log.error(
        { worker: slot.index, reason: why, restartInMs: delay },
        "a read worker stopped; restarting it",
      );
      slot.restart = setTimeout(() => this.#spawn(slot), delay);
      slot.restart.unref();
    }
    if (this.#slots.some(isRunning)) {
      this.#pump();
      return;
    }
    // Nothing running to take the queue: the main thread answers it.
    for (const queued of this.#queue.splice(0)) {
      if (queued.settled) continue;
      this.#stats.mainThread++;
      queued.local().then(
        (v) => this.#settle(queued, true, v),
        (e: unknown) => this.#settle(queued, false, e),
      );
    }
  }
}

function isRunning(s: Slot): boolean {
  return s.state === "ready";
}

function stopping(): EvmReadWorkerError {
  return new EvmReadWorkerError("the node is stopping");
}

function opName(req: ReadRequest): string {
  switch (req.op) {
    case "call":
      return "eth_call";
    case "estimateGas":
      return "eth_estimateGas";
    case "traceCall":
      return "debug_traceCall";
    case "logs":
      return "eth_getLogs";
  }
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new EvmReadWorkerError("the request was aborted before a read worker took it");
}

/**
 * The worker thread: readWorker.mjs beside this module in the bundle (bin/build.mjs builds it as its
 * own entry), or readWorker.ts through tsx's loader when running from the TypeScript sources (tsx
 * registered in the main thread does not reach workers, so the worker registers it first).
 */
function startWorker(script: URL | undefined, setup: ReadWorkerSetup, cancelled: Int32Array, index: number): Worker {
  const opts = { workerData: { setup, cancelled }, name: `cometh-read-${index}` };
  const here = import.meta.url;
  const target = script ?? new URL(here.endsWith(".ts") ? "./readWorker.ts" : "./readWorker.mjs", here);
  if (!target.pathname.endsWith(".ts")) return new Worker(target, opts);
  const boot = `import(${JSON.stringify(tsxApiUrl())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(target.href)}); });`;
  return new Worker(boot, { ...opts, eval: true });
}

let tsxApi: string | undefined;

/** tsx's ES module API (its package exports' `./esm/api` import entry), as a file URL. */
function tsxApiUrl(): string {
  if (tsxApi !== undefined) return tsxApi;
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve("tsx/package.json");
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { exports: Record<string, { import: { default: string } }> };
  const entry = pkg.exports["./esm/api"]?.import.default ?? "./dist/esm/api/index.mjs";
  tsxApi = pathToFileURL(join(dirname(pkgFile), entry)).href;
  return tsxApi;
}
