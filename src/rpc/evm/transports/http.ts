import type { IncomingMessage, ServerResponse } from "node:http";
import type { MaybePromise } from "../../jsonrpc/index.js";
import type { EvmRuntime } from "../context.js";
import type { EvmServices } from "../services.js";
import { applyCors } from "./cors.js";
import { handlePayload } from "./handler.js";

/**
 * JSON-RPC over HTTP as Cosmos EVM serves it (gorilla mux with only `POST /`, geth's
 * rpc.Server.ServeHTTP checks): other paths 404, other methods 405, a Content-Length over the
 * body limit 413, a content type other than application/json(-rpc)/jsonrequest 415. Each request
 * gets http-timeout − 100 ms before its unfinished calls answer -32002 (geth).
 */

/** geth's defaultBodyLimit. */
export const DEFAULT_BODY_LIMIT = 5 * 1024 * 1024;
const ACCEPTED_TYPES = new Set(["application/json", "application/json-rpc", "application/jsonrequest"]);

export interface HttpHandlerDeps {
  readonly services: EvmServices;
  readonly runtime: EvmRuntime;
  readonly maxBodyBytes: number;
  readonly batchRequestLimit: number;
  readonly batchResponseMaxSize: number;
  readonly httpTimeoutMs: number;
}

function sendText(res: ServerResponse, status: number, text: string, contentType = "text/plain; charset=utf-8"): void {
  if (res.headersSent || res.writableEnded) return;
  // Encoded once (Buffer.byteLength and a string write would each walk the text); one writeHead.
  const bytes = Buffer.from(text, "utf8");
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": bytes.length });
  res.end(bytes);
}

/** Reads the body, or undefined once it passes `limit` bytes. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) return;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    // One listener per outcome, no named closure per request (tsx keeps function names at a cost).
    req.on("end", () => resolve(tooLarge ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
    req.on("close", () => resolve(tooLarge ? undefined : Buffer.concat(chunks)));
  });
}

/** Whether a lower-cased media type (no parameters) is one geth accepts. */
export function acceptedMediaType(media: string): boolean {
  return ACCEPTED_TYPES.has(media);
}

function contentTypeOk(req: IncomingMessage): boolean {
  const raw = req.headers["content-type"];
  if (raw === undefined) return false;
  return acceptedMediaType(raw.split(";")[0]?.trim().toLowerCase() ?? "");
}

/**
 * The JSON answer for one POST body whose first byte arrived at `started` (the node:http handler
 * and the fast path both end here); synchronous when every call is.
 */
export function answerBody(deps: HttpHandlerDeps, body: Buffer, started: number): MaybePromise<string | undefined> {
  return handlePayload(body.toString("utf8"), {
    services: deps.services,
    runtime: deps.runtime,
    transport: "http",
    sink: undefined,
    batchRequestLimit: deps.batchRequestLimit,
    batchResponseMaxSize: deps.batchResponseMaxSize,
    deadline: deps.httpTimeoutMs > 0 ? started + Math.max(deps.httpTimeoutMs - 100, 1) : undefined,
  });
}

export function createHttpHandler(deps: HttpHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handleHttpRequest(deps, req, res).catch((err: unknown) => {
      deps.runtime.log.error({ err }, "EVM RPC HTTP handler failed");
      sendText(res, 500, "internal server error\n");
    });
  };
}

/** One request: CORS, geth's checks, then the body's JSON answer. */
async function handleHttpRequest(deps: HttpHandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (applyCors(req, res)) return;
  if (refused(deps, req, res)) return;
  const started = Date.now();
  const body = await readBody(req, deps.maxBodyBytes);
  if (body === undefined) {
    res.setHeader("Connection", "close");
    sendText(res, 413, `content length too large (>${deps.maxBodyBytes})\n`);
    return;
  }
  const answer = await answerBody(deps, body, started);
  sendText(res, 200, answer ?? "", "application/json");
}

/** geth's checks before the body is read (path, method, declared length, content type); true when it answered. */
function refused(deps: HttpHandlerDeps, req: IncomingMessage, res: ServerResponse): boolean {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== "/") {
    sendText(res, 404, "404 page not found\n");
    return true;
  }
  if (req.method !== "POST") {
    sendText(res, 405, "method not allowed\n");
    return true;
  }
  const declared = Number(req.headers["content-length"] ?? "0");
  if (Number.isFinite(declared) && declared > deps.maxBodyBytes) {
    res.setHeader("Connection", "close");
    sendText(res, 413, `content length too large (${declared}>${deps.maxBodyBytes})\n`);
    req.resume();
    return true;
  }
  if (!contentTypeOk(req)) {
    sendText(res, 415, "invalid content type, only application/json is supported\n");
    req.resume();
    return true;
  }
  return false;
}
