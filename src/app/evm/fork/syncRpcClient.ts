import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { ForkConfigError, ForkSourceError } from "./errors.js";

/**
 * A JSON-RPC client whose calls return synchronously: the EVM engine reads state synchronously
 * (src/evm/types.ts), and a forked chain's state is read from the source the first time a key is
 * touched. A worker thread does the HTTP request (fetch with a per-attempt timeout, the URLs tried in
 * order); the calling thread blocks on `Atomics.wait` until the worker has posted the answer, then
 * takes it with `receiveMessageOnPort`. Every wait is bounded: attempts × timeout, plus a margin.
 */

/** One JSON-RPC request of a batch. */
export interface RpcRequest {
  method: string;
  params: unknown[];
}

/** One answer: `result`, or the source's JSON-RPC `error`. */
export type RpcAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

export interface SyncRpcClientOptions {
  /** Source URLs, tried in order on each request until one answers (failover). */
  urls: readonly string[];
  /** Per attempt; default 10 000 ms. */
  timeoutMs?: number;
  /** Rounds over every URL after the first failed one; default 0. */
  retries?: number;
}

interface WorkerAnswer {
  ok: boolean;
  /** The URL that answered (its index in `urls`). */
  index?: number;
  text?: string;
  errors?: string[];
}

// The worker is plain JavaScript evaluated as a script (eval: true), so it runs the same from the
// TypeScript sources (tsx) and from the bundle, with no entry of its own.
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const { port, signal } = workerData;
port.on("message", async (req) => {
  const errors = [];
  let answer;
  for (let round = 0; round <= req.retries && answer === undefined; round++) {
    for (let k = 0; k < req.urls.length; k++) {
      const index = (req.first + k) % req.urls.length;
      const url = req.urls[index];
      try {
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: req.body,
          signal: AbortSignal.timeout(req.timeoutMs),
        });
        const text = await res.text();
        if (res.status !== 200 && !text.trimStart().startsWith("{") && !text.trimStart().startsWith("[")) {
          errors.push(url + ": HTTP " + res.status);
          continue;
        }
        answer = { ok: true, index, text };
        break;
      } catch (err) {
        const cause = err && err.cause && err.cause.code ? " (" + err.cause.code + ")" : "";
        const what = err && err.name === "TimeoutError" ? "no answer within " + req.timeoutMs + " ms" : String(err && err.message) + cause;
        errors.push(url + ": " + what);
      }
    }
  }
  port.postMessage(answer ?? { ok: false, errors });
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
});
`;

const DEFAULT_TIMEOUT_MS = 10_000;

export class SyncRpcClient {
  readonly urls: readonly string[];
  readonly timeoutMs: number;
  readonly retries: number;
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #signal = new Int32Array(new SharedArrayBuffer(4));
  /** The URL that answered last: tried first next time. */
  #preferred = 0;
  #nextId = 1;
  #closed = false;

  constructor(opts: SyncRpcClientOptions) {
    if (opts.urls.length === 0) throw new ForkConfigError("no fork URL given. Pass --fork-url http://host:port");
    for (const url of opts.urls) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new ForkConfigError(`fork URL "${url}" is not a URL. Use http://host:port or https://…`);
      }
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
        throw new ForkConfigError(`fork URL "${url}" is not http(s). Give the source's HTTP JSON-RPC address`);
      }
    }
    this.urls = [...opts.urls];
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retries = opts.retries ?? 0;
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { port: port2, signal: this.#signal },
      transferList: [port2],
      name: "cometh-fork-rpc",
      // Plain JavaScript: no loader (tsx) to start in the thread.
      execArgv: [],
    });
    // The worker never keeps the process alive; the port only carries answers taken synchronously.
    this.#worker.unref();
    this.#port.unref();
  }

  /** One request; throws ForkSourceError when no URL answers or the source answers with an error. */
  call(method: string, params: unknown[]): unknown {
    const [answer] = this.batch([{ method, params }]);
    return unwrap(method, answer as RpcAnswer);
  }

  /** Several requests in one HTTP batch; each answer is a result or the source's error. */
  batch(requests: readonly RpcRequest[]): RpcAnswer[] {
    if (this.#closed) throw new ForkSourceError("the fork source client is closed (the chain is stopping)");
    const firstId = this.#nextId;
    this.#nextId += requests.length;
    const body = JSON.stringify(
      requests.map((r, i) => ({ jsonrpc: "2.0", id: firstId + i, method: r.method, params: r.params })),
    );
    const text = this.#post(body, requests[0]?.method ?? "batch");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ForkSourceError(`the fork source answered with something that is not JSON: ${text.slice(0, 120)}`);
    }
    // A server that refuses batches answers one error object.
    if (!Array.isArray(parsed)) {
      const err = (parsed as { error?: { message?: string } } | null)?.error;
      throw new ForkSourceError(
        `the fork source refused a batch request: ${err?.message ?? text.slice(0, 120)}. Use a source that accepts JSON-RPC batches`,
      );
    }
    const byId = new Map<number, RpcAnswer>();
    for (const item of parsed as { id?: unknown; result?: unknown; error?: unknown }[]) {
      if (typeof item?.id !== "number") continue;
      if (item.error !== undefined && item.error !== null) {
        byId.set(item.id, { error: item.error as { code: number; message: string } });
      } else {
        byId.set(item.id, { result: item.result ?? null });
      }
    }
    return requests.map((r, i) => {
      const a = byId.get(firstId + i);
      if (a === undefined) throw new ForkSourceError(`the fork source's batch answer has no answer to ${r.method}`);
      return a;
    });
  }

  #post(body: string, what: string): string {
    Atomics.store(this.#signal, 0, 0);
    this.#port.postMessage({
      urls: this.urls,
      first: this.#preferred,
      body,
      timeoutMs: this.timeoutMs,
      retries: this.retries,
    });
    // Attempts × timeout bounds the worker; the margin covers reading a large answer.
    const boundMs = this.urls.length * (this.retries + 1) * this.timeoutMs + 5_000;
    const waited = Atomics.wait(this.#signal, 0, 0, boundMs);
    const msg = receiveMessageOnPort(this.#port)?.message as WorkerAnswer | undefined;
    if (msg === undefined) {
      throw new ForkSourceError(
        `the fork source did not answer ${what} within ${boundMs} ms (${waited}). Check that ${this.urls.join(", ")} is up`,
      );
    }
    if (!msg.ok) {
      throw new ForkSourceError(
        `the fork source cannot be reached for ${what}: ${(msg.errors ?? []).join("; ")}. Start it again, or restart the fork with a reachable --fork-url`,
      );
    }
    this.#preferred = msg.index ?? 0;
    return msg.text ?? "";
  }

  /** Stops the worker; later calls throw ForkSourceError. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#port.close();
    await this.#worker.terminate();
  }
}

/** The result of an answer, or ForkSourceError naming the method and the source's message. */
export function unwrap(method: string, answer: RpcAnswer): unknown {
  if ("error" in answer) {
    throw new ForkSourceError(
      `the fork source answered ${method} with error ${answer.error.code}: ${answer.error.message}`,
    );
  }
  return answer.result;
}

/** JSON-RPC's "method not found" (and what sources that lack a method answer instead). */
export function isMethodMissing(answer: RpcAnswer): boolean {
  if (!("error" in answer)) return false;
  const { code, message } = answer.error;
  return code === -32601 || /not (found|supported|available|implemented)|does not exist|unknown method/i.test(message);
}
