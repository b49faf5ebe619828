import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../../util/logger.js";
import {
  batchLimitError,
  DeadlineSweeper,
  type DispatchResult,
  dispatchRequest,
  dispatchUri,
  EncodedJson,
  encodeResponse,
  encodeResponses,
  errorResponse,
  errorText,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  isFailure,
  isPromise,
  type JsonRpcResponse,
  type MaybePromise,
  MethodNotFoundError,
  type ParsedPayload,
  ParseError,
  parseRequestPayload,
  RequestDecodeError,
  type Route,
  type RouteTable,
  routeParamNames,
  runBatch,
} from "../../jsonrpc/index.js";
import type { CometCallContext, CometRuntime } from "../context.js";
import { toCometRpcError } from "../errors.js";
import type { CometServices } from "../services.js";
import type { Cors } from "./cors.js";

/**
 * The HTTP side of the node RPC (rpc/jsonrpc/server): pre-checks (body limit, batch limit), then
 * X-Server-Time, CORS and the mux: `/<route>` URI calls, `/` JSON-RPC, `/websocket` (upgrades are
 * handled by the WebSocket transport), anything else 404.
 */

/** CometBFT's parse error message (types.RPCParseError). */
export const PARSE_ERROR_MESSAGE = "Parse error. Invalid JSON";
/** The id of URI answers (URIClientRequestID). */
const URI_ID = -1n;
const CACHE_CONTROL = "public, max-age=86400";

export interface HttpHandlerDeps {
  readonly routes: RouteTable<CometServices, CometCallContext>;
  readonly services: CometServices;
  readonly runtime: CometRuntime;
  readonly cors: Cors | undefined;
  readonly maxBodyBytes: number;
  readonly maxRequestBatchSize: number;
  readonly writeTimeoutMs: number;
  readonly log: Logger;
  readonly remoteAddr: (req: IncomingMessage) => string;
  /** Pages served on their exact path beside the routes (the dashboard); GET and HEAD only. */
  readonly pages?: ReadonlyMap<string, PageHandler>;
}

/** Answers a GET or HEAD of a page path (the whole answer: status, headers, body). */
export type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

type Body = { ok: true; bytes: Buffer } | { ok: false };

/** Reads the whole body, or reports that it passed `limit` (after draining what the client sends). */
function readBody(req: IncomingMessage, limit: number): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (tooLarge) {
        // Drain a little to let the client read our answer; give up on very large uploads.
        if (size > limit * 4 + 16 * 1024 * 1024) req.destroy();
        return;
      }
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(tooLarge ? { ok: false } : { ok: true, bytes: Buffer.concat(chunks) }));
    req.on("error", () => resolve(tooLarge ? { ok: false } : { ok: true, bytes: Buffer.concat(chunks) }));
    req.on("close", () => resolve(tooLarge ? { ok: false } : { ok: true, bytes: Buffer.concat(chunks) }));
  });
}

function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers?: Record<string, string>,
): void {
  if (res.headersSent || res.writableEnded) return;
  // Encoded once: Buffer.byteLength and a string write would each walk the text.
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  // One writeHead with every header (setHeader validates and stores each one separately).
  const all: Record<string, string | number> = { "Content-Type": contentType, "Content-Length": bytes.length };
  if (headers !== undefined) Object.assign(all, headers);
  res.writeHead(status, all);
  res.end(bytes);
}

const CACHEABLE_HEADERS = { "Cache-Control": CACHE_CONTROL };

function sendJson(res: ServerResponse, status: number, body: string | Buffer, cacheable = false): void {
  sendText(res, status, "application/json", body, cacheable ? CACHEABLE_HEADERS : undefined);
}

function bodyTooLarge(res: ServerResponse): void {
  res.setHeader("Connection", "close");
  const err = new InvalidRequestError("error reading request body: http: request body too large");
  sendJson(res, 400, encodeResponse(errorResponse(undefined, err)));
}

function notFound(res: ServerResponse): void {
  sendText(res, 404, "text/plain; charset=utf-8", "404 page not found\n", { "X-Content-Type-Options": "nosniff" });
}

/** The page an empty JSON-RPC body gets (writeListOfEndpoints; every route lands under "require arguments"). */
function endpointList(host: string, routes: RouteTable<CometServices, CometCallContext>): string {
  let html = "<html><body><br>Available endpoints:<br><br>Endpoints that require arguments:<br>";
  for (const name of Object.keys(routes).sort()) {
    const route = routes[name];
    if (route === undefined) continue;
    const link = `//${host}/${name}?${routeParamNames(route)
      .map((a) => `${a}=_`)
      .join("&")}`;
    html += `<a href="${link}">${link}</a></br>`;
  }
  return `${html}</body></html>`;
}

/** Whether the request can carry a body (Content-Length above 0 or a Transfer-Encoding). */
function hasBody(req: IncomingMessage): boolean {
  const h = req.headers;
  if (h["transfer-encoding"] !== undefined) return true;
  const cl = h["content-length"];
  return cl !== undefined && cl !== "0";
}

/** `/<route>` with an optional query: the common shape, split without the WHATWG URL parser. */
const SIMPLE_PATH = /^\/[A-Za-z0-9_]*(?:\?|$)/;

const EMPTY_QUERY = new URLSearchParams();

/** The path and query of a request target; unusual targets go through the URL parser as before. */
function splitTarget(target: string): { path: string; query: URLSearchParams } {
  if (SIMPLE_PATH.test(target)) {
    const q = target.indexOf("?");
    if (q < 0) return { path: target, query: EMPTY_QUERY };
    return { path: target.slice(0, q), query: new URLSearchParams(target.slice(q + 1)) };
  }
  const url = new URL(target, "http://localhost");
  return { path: url.pathname, query: url.searchParams };
}

/** Go: r.URL.Query().Get, then r.FormValue; "" when absent. */
function uriArgs(query: URLSearchParams, form: URLSearchParams | undefined): (name: string) => string {
  if (form === undefined) return (name) => query.get(name) || "";
  return (name) => query.get(name) || form.get(name) || "";
}

let serverTimeSecond = -1;
let serverTimeText = "";

/** X-Server-Time: Unix seconds, formatted once per second. */
function serverTime(): string {
  const now = Math.floor(Date.now() / 1000);
  if (now !== serverTimeSecond) {
    serverTimeSecond = now;
    serverTimeText = now.toString();
  }
  return serverTimeText;
}

/** Whole URI answers (id -1) around a kept result (status between blocks), encoded once. */
const uriAnswers = new WeakMap<EncodedJson, Buffer>();

function uriAnswer(response: JsonRpcResponse): string | Buffer {
  if (isFailure(response) || !(response.result instanceof EncodedJson)) return encodeResponse(response);
  let bytes = uriAnswers.get(response.result);
  if (bytes === undefined) {
    bytes = Buffer.from(encodeResponse(response), "utf8");
    uriAnswers.set(response.result, bytes);
  }
  return bytes;
}

function sendUriResult(res: ServerResponse, r: DispatchResult): void {
  const failed = isFailure(r.response);
  sendJson(res, failed ? 500 : 200, uriAnswer(r.response), !failed && r.cacheable);
}

function isFormRequest(req: IncomingMessage): boolean {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  return ["POST", "PUT", "PATCH"].includes(req.method ?? "GET") && type === "application/x-www-form-urlencoded";
}

/** Answers up to this size are handed to the socket at once; larger ones are watched until written. */
const LARGE_ANSWER_BYTES = 64 * 1024;

/** A request handler that may answer synchronously. */
type Serve = (req: IncomingMessage, res: ServerResponse) => MaybePromise<void>;

/**
 * The node RPC's HTTP handler, CometBFT's chain from the outside in: the write deadline
 * (http.Server WriteTimeout), PreChecksHandler (body and batch limits), then RecoverAndLogHandler,
 * X-Server-Time, CORS and the mux, whose `/` goes to JSON-RPC and `/<route>` to URI calls.
 */
export function createHttpHandler(deps: HttpHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const mux = createMux(deps, createJsonRpcHandler(deps), createUriHandler(deps));
  return withWriteDeadline(deps, withPreChecks(deps, mux));
}

const paramsError = (d: string) => new InvalidParamsError(d);
const HTTP_OPTS = { transport: "http", paramsError, mapError: toCometRpcError } as const;
const URI_OPTS = { transport: "uri", paramsError, mapError: toCometRpcError } as const;

function callContext(
  deps: HttpHandlerDeps,
  req: IncomingMessage,
  transport: "uri" | "http",
  requestId: CometCallContext["requestId"],
): CometCallContext {
  return { transport, remoteAddr: deps.remoteAddr(req), requestId, runtime: deps.runtime, ws: undefined };
}

type JsonRpcHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer | undefined) => Promise<void>;

/** POST `/`: a JSON-RPC request or batch (an empty body gets the endpoint list). */
function createJsonRpcHandler(deps: HttpHandlerDeps): JsonRpcHandler {
  const { routes, services } = deps;
  return async (req, res, body) => {
    let bytes = body;
    if (bytes === undefined) {
      const read = await readBody(req, deps.maxBodyBytes);
      if (!read.ok) return bodyTooLarge(res);
      bytes = read.bytes;
    }
    if (bytes.length === 0) {
      sendText(res, 200, "text/html", endpointList(req.headers.host ?? "", routes));
      return;
    }
    let payload: ParsedPayload;
    try {
      payload = parseRequestPayload(bytes.toString("utf8"));
    } catch (err) {
      if (!(err instanceof RequestDecodeError)) throw err;
      const parseError = new ParseError(`error unmarshaling request: ${err.message}`, { message: PARSE_ERROR_MESSAGE });
      sendJson(res, 500, encodeResponse(errorResponse(undefined, parseError)));
      return;
    }
    const outcome = await runBatch(payload, (r) =>
      dispatchRequest(routes, r, services, callContext(deps, req, "http", r.id), HTTP_OPTS),
    );
    if (outcome.responses.length === 0) {
      res.statusCode = 200;
      res.setHeader("Content-Length", 0);
      res.end();
      return;
    }
    sendJson(res, 200, encodeResponses(outcome.responses, { unwrapSingle: true }), outcome.cacheable);
  };
}

type UriHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  query: URLSearchParams,
  body: Buffer | undefined,
) => MaybePromise<void>;

/** `/<route>?args`: a URI call, its arguments from the query (and a form body); id -1. */
function createUriHandler(deps: HttpHandlerDeps): UriHandler {
  const { routes, services } = deps;

  function runUri(
    req: IncomingMessage,
    res: ServerResponse,
    route: Route<CometServices, CometCallContext>,
    query: URLSearchParams,
    formBody: Buffer | undefined,
  ): MaybePromise<void> {
    const form =
      formBody !== undefined && isFormRequest(req) ? new URLSearchParams(formBody.toString("utf8")) : undefined;
    const result = dispatchUri(
      route,
      URI_ID,
      uriArgs(query, form),
      services,
      callContext(deps, req, "uri", URI_ID),
      URI_OPTS,
    );
    if (!isPromise(result)) return sendUriResult(res, result);
    return result.then((r) => sendUriResult(res, r));
  }

  return (req, res, name, query, body) => {
    const route = routes[name];
    if (route === undefined) return notFound(res);
    if (route.transport === "ws") {
      sendJson(res, 404, encodeResponse(errorResponse(URI_ID, new MethodNotFoundError())));
      return;
    }
    if (body === undefined && isFormRequest(req)) {
      return readBody(req, deps.maxBodyBytes).then((read) =>
        runUri(req, res, route, query, read.ok ? read.bytes : Buffer.alloc(0)),
      );
    }
    return runUri(req, res, route, query, body);
  };
}

type Mux = (req: IncomingMessage, res: ServerResponse, body: Buffer | undefined) => MaybePromise<void>;

/** RecoverAndLogHandler, X-Server-Time, CORS and the mux. */
function createMux(deps: HttpHandlerDeps, handleJsonRpc: JsonRpcHandler, handleUri: UriHandler): Mux {
  const { routes, log } = deps;

  function recover(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    log.error({ err, url: req.url }, "panic in RPC HTTP handler");
    const failure: JsonRpcResponse = errorResponse(URI_ID, new InternalError(errorText(err), { cause: err }));
    sendJson(res, 500, encodeResponse(failure));
  }

  return (req, res, body) => {
    res.setHeader("X-Server-Time", serverTime());
    try {
      if (deps.cors?.handle(req, res) === true) return;
      const { path, query } = splitTarget(req.url ?? "/");
      let handled: MaybePromise<void>;
      if (path === "/") handled = handleJsonRpc(req, res, body);
      else if (path === "/websocket") {
        refuseWebsocketRequest(req, res);
        return;
      } else {
        const page = deps.pages?.get(path);
        if (page !== undefined) {
          servePage(page, req, res);
          return;
        }
        const name = path.slice(1);
        if (name.includes("/") || !Object.hasOwn(routes, name)) return notFound(res);
        handled = handleUri(req, res, name, query, body);
      }
      if (!isPromise(handled)) return handled;
      return handled.catch((err: unknown) => recover(req, res, err));
    } catch (err) {
      recover(req, res, err);
    }
  };
}

/** A plain request on the WebSocket path: gorilla's Upgrade refusal. */
function refuseWebsocketRequest(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== "GET") sendText(res, 405, "text/plain; charset=utf-8", "Method Not Allowed\n");
  else sendText(res, 400, "text/plain; charset=utf-8", "Bad Request\n", { "Sec-Websocket-Version": "13" });
}

/** A page path: GET and HEAD only. */
function servePage(page: PageHandler, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendText(res, 405, "text/plain; charset=utf-8", "Method Not Allowed\n", { Allow: "GET, HEAD" });
  } else page(req, res);
}

/** PreChecksHandler (outermost, before X-Server-Time): body limit and batch limit. */
function withPreChecks(deps: HttpHandlerDeps, mux: Mux): Serve {
  return (req, res) => {
    // A request without a body (every URI GET) has nothing to pre-check.
    if (deps.maxRequestBatchSize <= 0 || !hasBody(req)) return mux(req, res, undefined);
    return readBody(req, deps.maxBodyBytes).then((read) => {
      if (!read.ok) return bodyTooLarge(res);
      const body = read.bytes;
      let payload: ParsedPayload | undefined;
      try {
        payload = body.length === 0 ? undefined : parseRequestPayload(body.toString("utf8"));
      } catch {
        payload = undefined;
      }
      const limitError = payload === undefined ? undefined : batchLimitError(payload, deps.maxRequestBatchSize);
      if (limitError !== undefined) {
        sendJson(res, 200, encodeResponse(errorResponse(undefined, limitError)));
        return;
      }
      return mux(req, res, body);
    });
  };
}

/**
 * http.Server WriteTimeout: a connection whose answer is not written in time is cut. An answer
 * still being made is watched until it is done; one written at once is watched only when too large
 * to sit in the socket buffer. A handler that fails is logged and its connection cut.
 */
function withWriteDeadline(deps: HttpHandlerDeps, serve: Serve): (req: IncomingMessage, res: ServerResponse) => void {
  const deadlines = new DeadlineSweeper<ServerResponse>(
    Math.max(5, Math.min(1000, Math.floor(deps.writeTimeoutMs / 10))),
  );
  const watchWrite = (res: ServerResponse) =>
    deadlines.watch(res, Date.now() + deps.writeTimeoutMs, () => res.socket?.destroy());

  function handlerFailed(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    deps.log.error({ err, url: req.url }, "RPC HTTP handler failed");
    deadlines.unwatch(res);
    if (!res.writableEnded) res.destroy();
  }

  return (req, res) => {
    let handled: MaybePromise<void>;
    try {
      handled = serve(req, res);
    } catch (err) {
      handlerFailed(req, res, err);
      return;
    }
    if (isPromise(handled)) {
      // Still being answered: the write deadline runs until the handler is done.
      watchWrite(res);
      handled.then(
        () => deadlines.unwatch(res),
        (err: unknown) => handlerFailed(req, res, err),
      );
    } else if (res.writableLength > LARGE_ANSWER_BYTES) {
      // Answered, but too large to sit in the socket buffer: a client that does not read is cut.
      watchWrite(res);
      res.once("finish", () => deadlines.unwatch(res));
    }
  };
}
