import { encodeJson, type RpcError, type WireValue } from "../../jsonrpc/index.js";
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
import { decodeArgs } from "../method.js";
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

async function beforeDeadline<T>(work: Promise<T>, deadline: number | undefined): Promise<T | typeof TIMED_OUT> {
  if (deadline === undefined) return work;
  const left = deadline - Date.now();
  if (left <= 0) return TIMED_OUT;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), left);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function runMessage(msg: EvmMessage, opts: PayloadOptions): Promise<WireValue> {
  const m = findMethod(msg.method, opts.runtime.settings.namespaces);
  if (m.wsOnly === true && opts.transport !== "ws") throw notificationsUnsupported();
  const args = decodeArgs(m, msg.params);
  const ctx: EvmCallContext = { method: msg.method, transport: opts.transport, runtime: opts.runtime, sink: opts.sink };
  return m.run(args, opts.services, ctx);
}

function failure(id: string, err: RpcError): CallOutcome {
  return { text: encodeFailure(id, err), resultBytes: 0 };
}

/** Runs one call; resolves to its answer text, or TIMED_OUT. */
async function answer(msg: EvmMessage, opts: PayloadOptions): Promise<CallOutcome | typeof TIMED_OUT> {
  if (msg.kind === "invalid") return failure(msg.id, invalidRequest());
  const work = (async (): Promise<CallOutcome> => {
    let result: WireValue;
    try {
      result = await runMessage(msg, opts);
    } catch (err) {
      const rpcErr = toEvmRpcError(err);
      if (rpcErr.code === -32000 || rpcErr.code === -32603) {
        opts.runtime.log.debug({ method: msg.method, err }, "EVM RPC call failed");
      }
      return failure(msg.id, rpcErr);
    }
    try {
      const json = encodeJson(result);
      return { text: encodeSuccessText(msg.id, json), resultBytes: json.length };
    } catch (err) {
      return failure(msg.id, internalError(`could not encode the result: ${(err as Error).message}`, err));
    }
  })();
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
export async function handlePayload(text: string, opts: PayloadOptions): Promise<string | undefined> {
  let payload: ReturnType<typeof parsePayload>;
  try {
    payload = parsePayload(text);
  } catch (err) {
    if (err instanceof PayloadParseError) return encodeFailure(NULL_ID, parseError());
    throw err;
  }
  if (!payload.batch) {
    const msg = payload.messages[0] as EvmMessage;
    if (msg.kind === "notification") {
      await runNotification(msg, opts);
      return undefined;
    }
    const out = await answer(msg, opts);
    return out === TIMED_OUT ? encodeFailure(msg.id, requestTimedOut()) : out.text;
  }
  const messages = payload.messages;
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
