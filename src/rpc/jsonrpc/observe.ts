import { isPromise, type MaybePromise, type MethodTable, type RpcMethod } from "./dispatch.js";
import type { WireValue } from "./json.js";

/**
 * Per-method request counts and latencies for both RPC servers (node/ records them as Prometheus
 * metrics when `[instrumentation] prometheus` is on). Only methods a server knows are observed, so the
 * set of method names stays bounded whatever clients send.
 */
export interface RpcObserver {
  /** The recorder of one method; servers resolve it once per route, or once per call by name. */
  method(name: string): RpcMethodObserver;
}

export interface RpcMethodObserver {
  /** A call that started at `startMs` (performance.now()) has ended; `failed` when it threw or rejected. */
  done(startMs: number, failed: boolean): void;
}

/** Records the outcome of a call that started at `startMs` and returned `result` (a value or a promise). */
export function observeResult<T>(m: RpcMethodObserver, startMs: number, result: MaybePromise<T>): MaybePromise<T> {
  if (!isPromise(result)) {
    m.done(startMs, false);
    return result;
  }
  return result.then(
    (v) => {
      m.done(startMs, false);
      return v;
    },
    (err: unknown) => {
      m.done(startMs, true);
      throw err;
    },
  );
}

function observedMethod<S, C, M extends RpcMethod<S, C>>(method: M, m: RpcMethodObserver): M {
  return {
    ...method,
    run(args: unknown, services: S, ctx: C) {
      const start = performance.now();
      let result: MaybePromise<WireValue>;
      try {
        result = method.run(args, services, ctx);
      } catch (err) {
        m.done(start, true);
        throw err;
      }
      return observeResult(m, start, result);
    },
  };
}

/** The same table with every method's calls recorded under its name. */
export function observeTable<S, C, M extends RpcMethod<S, C>>(
  table: MethodTable<M>,
  observer: RpcObserver,
): MethodTable<M> {
  const out: Record<string, M> = {};
  for (const [name, method] of Object.entries(table))
    out[name] = observedMethod<S, C, M>(method, observer.method(name));
  return out;
}
