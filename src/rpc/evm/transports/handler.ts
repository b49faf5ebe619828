import {
  DeadlineSweeper,
  encodeJson,
  isPromise,
  type MaybePromise,
  observeResult,
  type RpcError,
  type WireValue,
} from "../../jsonrpc/index.js";
import type { EvmCallContext, EvmRuntime, SubscriptionSink } from "../context.js";
import {
  internalError,
  invalidRequest,
  notificationsUnsupported,
  parseError,
  requestTimedOut,
  responseTooLarge,
  toEvmRpcError,
} from "../errors.js";
import { decodeArgs, type Method } from "../method.js";
import { findMethod } from "../namespaces/index.js";
import type { EvmServices } from "../services.js";
import {
  type EvmMessage,
  encodeFailure,
  encodeSuccessText,
  NULL_ID,
  PayloadParseError,
  parsePayload,
} from "./envelope.js";

/**
 * Runs one HTTP body or WebSocket frame (geth handler.handleBatch/handleMsg): batches answer in
 * request order without the notifications; an empty batch is one "empty batch" error; more than
 * batch-request-limit items is one "batch too large" error carrying the first call's id. Once the
 * answered results pass batch-response-max-size, the remaining calls get -32003; once the
 * deadline passes, they get -32002.
 */

export interface PayloadOptions {
  readonly services: EvmServices;
  readonly runtime: EvmRuntime;
  readonly transport: "http" | "ws";
  readonly sink: SubscriptionSink | undefined;
  /** 0 = unlimited. */
  readonly batchRequestLimit: number;
  /** 0 = unlimited. */
  readonly batchResponseMaxSize: number;
  /** Absolute deadline (ms since epoch) after which unanswered calls time out; undefined = none. */
  readonly deadline: number | undefined;
}

type CallOutcome = { readonly text: string; readonly resultBytes: number };

const TIMED_OUT = Symbol("timed out");

/** Calls still running past their start, with their deadlines (one sweep timer for all). */
const deadlines = new DeadlineSweeper<Promise<unknown>>(25);

function beforeDeadline<T>(work: Promise<T>, deadline: number | undefined): Promise<T | typeof TIMED_OUT> {
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

function runMessage(msg: EvmMessage, opts: PayloadOptions): WireValue | Promise<WireValue> {
  // A dev chain logs each method, as Anvil does.
  opts.services.dev?.onRequest(msg.method);
  const m = findMethod(msg.method, opts.runtime.settings.namespaces);
  const observer = opts.runtime.observer;
  if (observer === undefined) return runMethod(m, msg, opts);
  // Only methods the server serves are observed: the names stay bounded.
  const mo = observer.method(msg.method);
  const start = performance.now();
  let result: WireValue | Promise<WireValue>;
  try {
    result = runMethod(m, msg, opts);
  } catch (err) {
    mo.done(start, true);
    throw err;
  }
  return observeResult(mo, start, result);
}

function runMethod(m: Method, msg: EvmMessage, opts: PayloadOptions): WireValue | Promise<WireValue> {
  if (m.wsOnly === true && opts.transport !== "ws") throw notificationsUnsupported();
  const ctx: EvmCallContext = { method: msg.method, transport: opts.transport, runtime: opts.runtime, sink: opts.sink };
  m.guard?.(opts.services, ctx);
  const args = decodeArgs(m, msg.params);
  return m.run(args, opts.services, ctx);
}

function failure(id: string, err: RpcError): CallOutcome {
  return { text: encodeFailure(id, err), resultBytes: 0 };
}

function succeeded(msg: EvmMessage & { kind: "call" }, result: WireValue): CallOutcome {
  try {
    const json = encodeJson(result);
    return { text: encodeSuccessText(msg.id, json), resultBytes: json.length };
  } catch (err) {
    return failure(msg.id, internalError(`could not encode the result: ${(err as Error).message}`, err));
  }
}

function failed(msg: EvmMessage & { kind: "call" }, opts: PayloadOptions, err: unknown): CallOutcome {
  const rpcErr = toEvmRpcError(err);
  if (rpcErr.code === -32000 || rpcErr.code === -32603) {
    opts.runtime.log.debug({ method: msg.method, err }, "EVM RPC call failed");
  }
  return failure(msg.id, rpcErr);
}

/**
 * Runs one call; its answer text, or TIMED_OUT. A method that answers synchronously (most reads)
 * is answered without promises or a deadline timer: it cannot outlive the deadline.
 */
function answer(
  msg: EvmMessage,
  opts: PayloadOptions,
): CallOutcome | typeof TIMED_OUT | Promise<CallOutcome | typeof TIMED_OUT> {
  if (msg.kind === "invalid") return failure(msg.id, invalidRequest());
  const call = msg as EvmMessage & { kind: "call" };
  let result: WireValue | Promise<WireValue>;
  try {
    result = runMessage(call, opts);
  } catch (err) {
    return failed(call, opts, err);
  }
  if (!isPromise(result)) return succeeded(call, result);
  const work = result.then(
    (r) => succeeded(call, r),
    (err: unknown) => failed(call, opts, err),
  );
  return beforeDeadline(work, opts.deadline);
}

/** Runs a notification (no answer); failures are only logged. */
async function runNotification(msg: EvmMessage, opts: PayloadOptions): Promise<void> {
  try {
    await runMessage(msg, opts);
  } catch (err) {
    opts.runtime.log.debug({ method: msg.method, err }, "EVM RPC notification failed");
  }
}

/** The answer text for a payload, or undefined when there is nothing to send (notifications only). */
export function handlePayload(text: string, opts: PayloadOptions): MaybePromise<string | undefined> {
  let payload: ReturnType<typeof parsePayload>;
  try {
    payload = parsePayload(text);
  } catch (err) {
    if (err instanceof PayloadParseError) return encodeFailure(NULL_ID, parseError());
    throw err;
  }
  if (!payload.batch) {
    const msg = payload.messages[0] as EvmMessage;
    if (msg.kind === "notification") return runNotification(msg, opts).then(nothing);
    const out = answer(msg, opts);
    return isPromise(out) ? out.then((o) => singleAnswer(msg, o)) : singleAnswer(msg, out);
  }
  return runBatchPayload(payload.messages, opts);
}

function nothing(): undefined {
  return undefined;
}

function singleAnswer(msg: EvmMessage, out: CallOutcome | typeof TIMED_OUT): string {
  return out === TIMED_OUT ? encodeFailure(msg.id, requestTimedOut()) : out.text;
}

async function runBatchPayload(messages: readonly EvmMessage[], opts: PayloadOptions): Promise<string | undefined> {
  if (messages.length === 0) return encodeFailure(NULL_ID, invalidRequest("empty batch"));
  if (opts.batchRequestLimit > 0 && messages.length > opts.batchRequestLimit) {
    const firstCall = messages.find((m) => m.kind === "call");
    return `[${encodeFailure(firstCall?.id ?? NULL_ID, invalidRequest("batch too large"))}]`;
  }
  const answers: string[] = [];
  let resultBytes = 0;
  let cutOff: RpcError | undefined;
  for (const msg of messages) {
    if (msg.kind === "notification") {
      if (cutOff === undefined) await runNotification(msg, opts);
      continue;
    }
    if (cutOff !== undefined) {
      answers.push(encodeFailure(msg.id, cutOff));
      continue;
    }
    const out = await answer(msg, opts);
    if (out === TIMED_OUT) {
      cutOff = requestTimedOut();
      answers.push(encodeFailure(msg.id, cutOff));
      continue;
    }
    answers.push(out.text);
    resultBytes += out.resultBytes;
    if (opts.batchResponseMaxSize > 0 && resultBytes > opts.batchResponseMaxSize) cutOff = responseTooLarge();
  }
  if (answers.length === 0) return undefined;
  return `[${answers.join(",")}]`;
}
