import { DeadlineSweeper } from "./deadlineSweeper.js";
import { isPromise, type MaybePromise } from "./dispatch.js";
import type { RpcMessage, RpcPayload } from "./envelope.js";
import type { RpcError } from "./errors.js";

/**
 * Running a decoded payload, for both servers: a single call or a batch, in request order, one
 * call at a time; synchronous answers stay synchronous (no promise, no timer). What differs
 * between the servers is in {@link PayloadRules}: whether notifications run, what an empty or an
 * oversized batch answers, whether one answer of a batch is unwrapped, and the limits on answered
 * bytes and on time (geth's batch-response-max-size and http-timeout).
 */

/** One call's answer. */
export interface CallOutcome {
  /** The answer object's JSON text. */
  readonly text: string;
  /** Bytes of the result JSON (0 for a failure): counted against the batch response limit. */
  readonly resultBytes: number;
  /** The answer may be cached (the node RPC's Cache-Control). */
  readonly cacheable: boolean;
  /** The answer is an error. */
  readonly failed: boolean;
}

/** The answer to a payload. */
export interface PayloadAnswer {
  /** The body to send; undefined when nothing is answered (only notifications, or CometBFT's empty batch). */
  readonly text: string | undefined;
  /** Every answered call is cacheable (and at least one was answered). */
  readonly cacheable: boolean;
}

/** The server that runs the calls: `T` is what it needs of the request (its connection, its context). */
export interface CallRunner<T> {
  /** Runs a call (`msg.kind` is "call") and encodes its answer. Must not throw for a failing method. */
  call(msg: RpcMessage, request: T): MaybePromise<CallOutcome>;
  /** Runs a notification; failures are the runner's to log. Absent: notifications are skipped (CometBFT). */
  notify?(msg: RpcMessage, request: T): MaybePromise<void>;
  /** The answer text of a message that is not a valid call (geth: -32600 "invalid request"). */
  invalid(msg: RpcMessage): string;
  /** The failure answer text for `id` (JSON text; undefined = no id). */
  failure(idJson: string | undefined, err: RpcError): string;
}

export interface PayloadRules {
  /** An empty batch's error (answered without id); undefined: an empty batch answers nothing. */
  readonly emptyBatch: (() => RpcError) | undefined;
  /**
   * The answer to a batch longer than `batchLimit` (0 = unlimited) before anything runs;
   * undefined: the caller checks the limit (CometBFT's pre-check).
   */
  readonly batchTooLarge: ((payload: RpcPayload) => string) | undefined;
  readonly batchLimit: number;
  /** Once the answered result bytes pass `maxBytes`, the rest of the batch gets `error`; undefined = unlimited. */
  readonly responseLimit: { readonly maxBytes: number; readonly error: () => RpcError } | undefined;
  /** A call still running at the deadline answers this error, and so does the rest of the batch. */
  readonly timedOut: () => RpcError;
  /** A batch with exactly one answer is sent as that answer alone (CometBFT). */
  readonly unwrapSingle: boolean;
}

/** Absolute deadline (ms since epoch) after which unanswered calls time out; undefined = none. */
export type Deadline = number | undefined;

const TIMED_OUT = Symbol("timed out");
type Settled = CallOutcome | typeof TIMED_OUT;

/** Calls still running past their start, with their deadlines (one sweep timer for all). */
const deadlines = new DeadlineSweeper<Promise<unknown>>(25);

function beforeDeadline(work: Promise<CallOutcome>, deadline: Deadline): Promise<Settled> {
  if (deadline === undefined) return work;
  if (deadline - Date.now() <= 0) return Promise.resolve(TIMED_OUT);
  return new Promise((resolve, reject) => {
    deadlines.watch(work, deadline, () => resolve(TIMED_OUT));
    work.then(
      (v) => {
        deadlines.unwatch(work);
        resolve(v);
      },
      (err: unknown) => {
        deadlines.unwatch(work);
        reject(err);
      },
    );
  });
}

/** One call, raced against the deadline when it does not answer at once. */
function callOne<T>(msg: RpcMessage, runner: CallRunner<T>, request: T, deadline: Deadline): MaybePromise<Settled> {
  if (msg.kind === "invalid") return { text: runner.invalid(msg), resultBytes: 0, cacheable: false, failed: true };
  const out = runner.call(msg, request);
  return isPromise(out) ? beforeDeadline(out, deadline) : out;
}

function nothing(): PayloadAnswer {
  return NOTHING;
}

const NOTHING: PayloadAnswer = { text: undefined, cacheable: false };

function singleAnswer<T>(msg: RpcMessage, runner: CallRunner<T>, rules: PayloadRules, out: Settled): PayloadAnswer {
  if (out === TIMED_OUT) return { text: runner.failure(msg.idJson, rules.timedOut()), cacheable: false };
  return { text: out.text, cacheable: out.cacheable };
}

/** Runs a payload and returns what to send (see the module comment). */
export function runPayload<T>(
  payload: RpcPayload,
  runner: CallRunner<T>,
  request: T,
  rules: PayloadRules,
  deadline: Deadline,
): MaybePromise<PayloadAnswer> {
  if (!payload.batch) {
    const msg = payload.requests[0];
    if (msg === undefined) return NOTHING;
    if (msg.kind === "notification") {
      if (runner.notify === undefined) return NOTHING;
      const ran = runner.notify(msg, request);
      return isPromise(ran) ? ran.then(nothing) : NOTHING;
    }
    const out = callOne(msg, runner, request, deadline);
    return isPromise(out)
      ? out.then((o) => singleAnswer(msg, runner, rules, o))
      : singleAnswer(msg, runner, rules, out);
  }
  if (payload.requests.length === 0 && rules.emptyBatch !== undefined) {
    return { text: runner.failure(undefined, rules.emptyBatch()), cacheable: false };
  }
  if (rules.batchTooLarge !== undefined && rules.batchLimit > 0 && payload.requests.length > rules.batchLimit) {
    return { text: rules.batchTooLarge(payload), cacheable: false };
  }
  const batch: BatchState<T> = {
    requests: payload.requests,
    runner,
    request,
    rules,
    deadline,
    answers: [],
    resultBytes: 0,
    cacheable: true,
    cutOff: undefined,
  };
  return runFrom(batch, 0);
}

interface BatchState<T> {
  readonly requests: readonly RpcMessage[];
  readonly runner: CallRunner<T>;
  readonly request: T;
  readonly rules: PayloadRules;
  readonly deadline: Deadline;
  readonly answers: string[];
  resultBytes: number;
  cacheable: boolean;
  /** Set once the batch ran out of time or answer bytes: the rest answer this error. */
  cutOff: RpcError | undefined;
}

/** Runs requests[start..] in order, one at a time; synchronous answers stay synchronous. */
function runFrom<T>(b: BatchState<T>, start: number): MaybePromise<PayloadAnswer> {
  const { requests, runner, request } = b;
  for (let i = start; i < requests.length; i++) {
    const msg = requests[i] as RpcMessage;
    if (msg.kind === "notification") {
      if (b.cutOff !== undefined || runner.notify === undefined) continue;
      const ran = runner.notify(msg, request);
      if (isPromise(ran)) return ran.then(() => runFrom(b, i + 1));
      continue;
    }
    if (b.cutOff !== undefined) {
      b.answers.push(runner.failure(msg.idJson, b.cutOff));
      b.cacheable = false;
      continue;
    }
    const out = callOne(msg, runner, request, b.deadline);
    if (isPromise(out)) {
      return out.then((o) => {
        record(b, msg, o);
        return runFrom(b, i + 1);
      });
    }
    record(b, msg, out);
  }
  return batchAnswer(b);
}

function record<T>(b: BatchState<T>, msg: RpcMessage, out: Settled): void {
  if (out === TIMED_OUT) {
    b.cutOff = b.rules.timedOut();
    b.answers.push(b.runner.failure(msg.idJson, b.cutOff));
    b.cacheable = false;
    return;
  }
  b.answers.push(out.text);
  b.cacheable &&= out.cacheable;
  b.resultBytes += out.resultBytes;
  const limit = b.rules.responseLimit;
  if (limit !== undefined && b.resultBytes > limit.maxBytes) b.cutOff = limit.error();
}

function batchAnswer<T>(b: BatchState<T>): PayloadAnswer {
  const { answers } = b;
  if (answers.length === 0) return NOTHING;
  const cacheable = b.cacheable;
  if (b.rules.unwrapSingle && answers.length === 1) return { text: answers[0], cacheable };
  return { text: `[${answers.join(",")}]`, cacheable };
}
