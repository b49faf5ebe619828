import {
  EvmAppError,
  EvmAppSequenceError,
  EvmCallError,
  EvmCallTimeoutError,
  EvmConfigError,
  EvmNotSupportedError,
  EvmStateCorruptionError,
  GasEstimationError,
  InvalidEthTxError,
  StateUnavailableError,
} from "./errors.js";
import { createPrestateTracer, type PrestateTracerOptions } from "./prestateTracer.js";
import type { CallArgs, CallOptions, LogFilter } from "./readerTypes.js";
import {
  type CallTracerOptions,
  createCallTracer,
  createFourByteTracer,
  createNoopTracer,
  createStructLogger,
  type EvmTracer,
  type StructLoggerOptions,
} from "./tracer.js";
import { createVmTracer } from "./vmTracer.js";

/**
 * What the main thread and the read workers (readPool.ts, readWorker.ts) send each other. Values
 * cross by structured clone (bigints, bytes, Maps survive it); errors and tracers do not, so they
 * cross as descriptions: a tracer as its name and options (TracerSpec), an error as its class name,
 * message and fields (WireError), revived as the same class on the other side.
 */

/** How a read worker opens what the app opened (EvmApplication.readWorkerSetup). */
export interface ReadWorkerSetup {
  /** The app's LMDB file (`<dbDir>/data.mdb`). */
  readonly dbFile: string;
  readonly noSync: boolean;
  readonly chainId: bigint;
  readonly allowUnprotectedTxs: boolean;
}

/** A built-in tracer by name and options: a tracer object cannot cross threads, its description can. */
export type TracerSpec =
  | { readonly kind: "noop" }
  | { readonly kind: "fourByte" }
  | { readonly kind: "prestate"; readonly options: PrestateTracerOptions }
  | { readonly kind: "call"; readonly options: CallTracerOptions }
  | { readonly kind: "struct"; readonly options: StructLoggerOptions }
  | { readonly kind: "vm" };

/** The tracer a spec names (the same one on either thread). */
export function createTracer(spec: TracerSpec): EvmTracer<unknown> {
  switch (spec.kind) {
    case "noop":
      return createNoopTracer();
    case "fourByte":
      return createFourByteTracer();
    case "prestate":
      return createPrestateTracer(spec.options);
    case "call":
      return createCallTracer(spec.options);
    case "struct":
      return createStructLogger(spec.options);
    case "vm":
      return createVmTracer();
  }
}

/** A read the main thread hands a worker; `opts.height` and `filter.toHeight` are already resolved heights. */
export type ReadRequest =
  | { readonly op: "call"; readonly args: CallArgs; readonly opts: CallOptions }
  | { readonly op: "estimateGas"; readonly args: CallArgs; readonly opts: CallOptions }
  | { readonly op: "traceCall"; readonly args: CallArgs; readonly opts: CallOptions; readonly tracer: TracerSpec }
  | { readonly op: "logs"; readonly filter: LogFilter };

/** Main thread → worker. */
export type ToWorker = (ReadRequest & { readonly id: number }) | { readonly op: "close" };

/** Worker → main thread. */
export type FromWorker =
  | { readonly kind: "ready" }
  | { readonly kind: "failed"; readonly error: WireError }
  | { readonly kind: "done"; readonly id: number; readonly value: unknown }
  | { readonly kind: "error"; readonly id: number; readonly error: WireError };

/**
 * Requests the pool took back from a worker before it started them (they waited behind a long one):
 * a board shared with that worker, request id `id` cancelled when slot `id % size` holds `id`.
 */
export const CANCEL_BOARD_SLOTS = 1024;

export function newCancelBoard(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(CANCEL_BOARD_SLOTS * 4));
}

export function cancel(board: Int32Array, id: number): void {
  Atomics.store(board, id % CANCEL_BOARD_SLOTS, id);
}

export function isCancelled(board: Int32Array, id: number): boolean {
  return Atomics.load(board, id % CANCEL_BOARD_SLOTS) === id;
}

/** The height whose state a request reads (its snapshot must include it). */
export function heightOf(req: ReadRequest): number {
  return req.op === "logs" ? req.filter.toHeight : (req.opts.height ?? 0);
}

export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  /** The error's own fields (StateUnavailableError.height, GasEstimationError.revertData, InvalidEthTxError.code). */
  readonly fields: Record<string, unknown>;
  readonly cause: string | undefined;
}

/** The classes revived by name; anything else comes back as an Error with the same name and message. */
const ERROR_CLASSES: Record<string, { prototype: Error }> = {
  Error,
  RangeError,
  TypeError,
  EvmAppError,
  EvmAppSequenceError,
  EvmCallError,
  EvmCallTimeoutError,
  EvmConfigError,
  EvmNotSupportedError,
  EvmStateCorruptionError,
  GasEstimationError,
  InvalidEthTxError,
  StateUnavailableError,
};

export function errorToWire(err: unknown): WireError {
  if (!(err instanceof Error)) {
    return { name: "Error", message: String(err), stack: undefined, fields: {}, cause: undefined };
  }
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (k === "name" || k === "message" || k === "stack" || k === "cause") continue;
    if (v === undefined || typeof v === "bigint" || typeof v === "number" || typeof v === "string") fields[k] = v;
    else if (typeof v === "boolean") fields[k] = v;
    else if (v instanceof Uint8Array) fields[k] = copyBytes(v);
  }
  const cause =
    err.cause instanceof Error ? err.cause.message : err.cause === undefined ? undefined : String(err.cause);
  return { name: err.name, message: err.message, stack: err.stack, fields, cause };
}

/** The error a worker threw, as the same class with the same message and fields. */
export function errorFromWire(w: WireError): Error {
  const cls = ERROR_CLASSES[w.name];
  const err: Error = cls === undefined ? new Error(w.message) : (Object.create(cls.prototype) as Error);
  const hidden = (key: string, value: unknown) =>
    Object.defineProperty(err, key, { value, writable: true, configurable: true, enumerable: false });
  hidden("message", w.message);
  // EvmAppError's constructor sets name as an own, enumerable field; built-in errors inherit theirs.
  if (err instanceof EvmAppError || cls === undefined) {
    Object.defineProperty(err, "name", { value: w.name, writable: true, configurable: true, enumerable: true });
  }
  if (w.stack !== undefined) hidden("stack", w.stack);
  if (w.cause !== undefined) hidden("cause", new Error(w.cause));
  Object.assign(err, w.fields);
  return err;
}

/**
 * A copy of `v` whose byte arrays own exactly their bytes. A Uint8Array is often a view into a larger
 * buffer (Node's 8 KiB Buffer pool, an LMDB read buffer), and structured clone copies the whole
 * buffer behind a view: thousands of views per answer would copy megabytes.
 */
export function detachBytes<T>(v: T): T {
  return detach(v) as T;
}

/** A plain Uint8Array owning a copy of the bytes (a Buffer's `slice` would be a view again). */
function copyBytes(v: Uint8Array): Uint8Array {
  const out = new Uint8Array(v.byteLength);
  out.set(v);
  return out;
}

function detach(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (v instanceof Uint8Array) return v.byteLength === v.buffer.byteLength ? v : copyBytes(v);
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      const y = detach(x);
      if (y !== x) {
        out ??= v.slice();
        out[i] = y;
      }
    }
    return out ?? v;
  }
  if (v instanceof Map) {
    const out = new Map();
    for (const [k, x] of v) out.set(detach(k), detach(x));
    return out;
  }
  if (v instanceof Set) {
    const out = new Set();
    for (const x of v) out.add(detach(x));
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  let out: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v)) {
    const y = detach(x);
    if (y !== x) {
      out ??= { ...(v as Record<string, unknown>) };
      out[k] = y;
    }
  }
  return out ?? v;
}
