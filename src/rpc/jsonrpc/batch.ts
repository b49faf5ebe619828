import { type DispatchResult, isPromise, type MaybePromise } from "./dispatch.js";
import type { JsonRpcRequest, JsonRpcResponse } from "./envelope.js";
import { InvalidRequestError } from "./errors.js";
import type { ParsedPayload } from "./request.js";

/**
 * Batch execution: requests run in order, notifications are skipped and unanswered, and the
 * batch is cacheable only when every answered call is.
 */

export interface BatchOutcome {
  /** Answers in request order; empty when every request was a notification (or the batch was empty). */
  readonly responses: readonly JsonRpcResponse[];
  readonly cacheable: boolean;
}

export function runBatch(
  payload: ParsedPayload,
  call: (req: JsonRpcRequest) => MaybePromise<DispatchResult>,
): MaybePromise<BatchOutcome> {
  return runFrom(payload.requests, 0, call, { responses: [], cacheable: true });
}

/** Runs requests[start..] in order, one at a time; synchronous answers stay synchronous. */
function runFrom(
  requests: readonly JsonRpcRequest[],
  start: number,
  call: (req: JsonRpcRequest) => MaybePromise<DispatchResult>,
  acc: { responses: JsonRpcResponse[]; cacheable: boolean },
): MaybePromise<BatchOutcome> {
  for (let i = start; i < requests.length; i++) {
    const req = requests[i] as JsonRpcRequest;
    if (req.id === undefined) continue;
    const result = call(req);
    if (isPromise(result)) {
      return result.then((r) => {
        acc.responses.push(r.response);
        acc.cacheable &&= r.cacheable;
        return runFrom(requests, i + 1, call, acc);
      });
    }
    acc.responses.push(result.response);
    acc.cacheable &&= result.cacheable;
  }
  return { responses: acc.responses, cacheable: acc.cacheable && acc.responses.length > 0 };
}

/** The error for a batch longer than `max` items (0 = unlimited), or undefined when it fits. */
export function batchLimitError(payload: ParsedPayload, max: number): InvalidRequestError | undefined {
  if (max <= 0 || !payload.batch || payload.requests.length <= max) return undefined;
  return new InvalidRequestError(`batch request exceeds maximum (${max}) allowed number of requests`);
}
