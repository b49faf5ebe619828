import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../../../util/logger.js";
import {
  type CallOutcome,
  type CallRunner,
  type Cors,
  callMethod,
  DeadlineSweeper,
  encodeResponse,
  errorResponse,
  errorText,
  type FastAnswer,
  type FastHttpOptions,
  type FastMethod,
  InternalError,
  InvalidRequestError,
  isPromise,
  type JsonRpcResponse,
  type MaybePromise,
  MethodNotFoundError,
  nodeHttpAnswer,
  type PayloadAnswer,
  type PayloadRules,
  type RpcPayload,
  readBody,
  runPayload,
  sendText,
} from "../../jsonrpc/index.js";
import type { CometCallContext, CometRuntime } from "../context.js";
import { parseErrorOf } from "../errors.js";
import { batchLimitError, parseRequestPayload, RequestDecodeError } from "../request.js";
import type { CometServices } from "../services.js";
import {
  type CometCalls,
  type CometRequest,
  cometCalls,
  encodeCometFailure,
  type RouteTable,
  routeParamNames,
  URI_ID,
  uriMessage,
} from "../table.js";

/**
 * The HTTP side of the node RPC (CometBFT's rpc/jsonrpc/server) on the shared core: pre-checks
 * (body limit, batch limit), then X-Server-Time, CORS and the mux: `/<route>` URI calls, `/`
 * JSON-RPC, `/websocket` (upgrades are handled by the WebSocket transport), anything else 404.
 * The node:http handler serves every request; the fast path's options ({@link fastPathOptions})
 * answer the common JSON-RPC POSTs and URI GETs with the same bytes.
 */

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
  readonly calls: HttpCalls;
  /** Pages served on their exact path beside the routes (the dashboard); GET and HEAD only. */
  readonly pages?: ReadonlyMap<string, PageHandler>;
}

/** Answers a GET or HEAD of a page path (the whole answer: status, headers, body). */
export type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

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

/** The node RPC's calls over HTTP: JSON-RPC and URI, on the shared core. */
export interface HttpCalls {
  readonly uri: CometCalls;
  readonly runner: CallRunner<CometRequest>;
}

/** CometBFT's batch rules: notifications are skipped, an empty batch answers nothing, one answer is unwrapped. */
const COMET_RULES: PayloadRules = {
  emptyBatch: undefined,
  // max_request_batch_size is PreChecksHandler's, before anything else.
  batchTooLarge: undefined,
  batchLimit: 0,
  responseLimit: undefined,
  // The node RPC gives calls no deadline (the write timeout cuts the connection instead).
  timedOut: () => new InternalError("request timed out"),
  unwrapSingle: true,
};

export function httpCalls(
  routes: RouteTable<CometServices, CometCallContext>,
  services: CometServices,
  runtime: CometRuntime,
): HttpCalls {
  const http = cometCalls(routes, services, runtime, "http");
  return {
    uri: cometCalls(routes, services, runtime, "uri"),
    runner: {
      call: (msg, request) => callMethod(http, msg, request),
      // CometBFT's request decoding leaves no invalid messages (it fails the whole payload).
      invalid: (msg) => encodeCometFailure(msg.idJson, new InvalidRequestError()),
      failure: encodeCometFailure,
    },
  };
}

function httpRequest(remoteAddr: string): CometRequest {
  return { remoteAddr, ws: undefined, uriArg: undefined };
}

/** A JSON-RPC payload's answer (the batch pre-check already passed). */
function runJsonRpc(deps: HttpHandlerDeps, payload: RpcPayload, remoteAddr: string): MaybePromise<PayloadAnswer> {
  return runPayload(payload, deps.calls.runner, httpRequest(remoteAddr), COMET_RULES, undefined);
}

/** A URI call of `route` with its arguments. */
function runUriCall(
  deps: HttpHandlerDeps,
  route: string,
  uriArg: (name: string) => string,
  remoteAddr: string,
): MaybePromise<CallOutcome> {
  return callMethod(deps.calls.uri, uriMessage(route), { remoteAddr, ws: undefined, uriArg });
}

function sendUriResult(res: ServerResponse, r: CallOutcome): void {
  sendJson(res, r.failed ? 500 : 200, r.text, !r.failed && r.cacheable);
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

/** `parsed`: the payload the batch pre-check already parsed from `body` (parsed once). */
type JsonRpcHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  parsed: RpcPayload | undefined,
) => Promise<void>;

/** POST `/`: a JSON-RPC request or batch (an empty body gets the endpoint list). */
function createJsonRpcHandler(deps: HttpHandlerDeps): JsonRpcHandler {
  return async (req, res, body, parsed) => {
    let bytes = body;
    if (bytes === undefined) {
      const read = await readBody(req, deps.maxBodyBytes);
      if (read === undefined) return bodyTooLarge(res);
      bytes = read;
    }
    if (bytes.length === 0) {
      sendText(res, 200, "text/html", endpointList(req.headers.host ?? "", deps.routes));
      return;
    }
    let payload = parsed;
    if (payload === undefined) {
      try {
        payload = parseRequestPayload(bytes.toString("utf8"));
      } catch (err) {
        if (!(err instanceof RequestDecodeError)) throw err;
        sendJson(res, 500, encodeResponse(errorResponse(undefined, parseErrorOf(err))));
        return;
      }
    }
    const answer = await runJsonRpc(deps, payload, deps.remoteAddr(req));
    if (answer.text === undefined) {
      res.statusCode = 200;
      res.setHeader("Content-Length", 0);
      res.end();
      return;
    }
    sendJson(res, 200, answer.text, answer.cacheable);
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
  function runUri(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    query: URLSearchParams,
    formBody: Buffer | undefined,
  ): MaybePromise<void> {
    const form =
      formBody !== undefined && isFormRequest(req) ? new URLSearchParams(formBody.toString("utf8")) : undefined;
    const result = runUriCall(deps, name, uriArgs(query, form), deps.remoteAddr(req));
    if (!isPromise(result)) return sendUriResult(res, result);
    return result.then((r) => sendUriResult(res, r));
  }

  return (req, res, name, query, body) => {
    const route = deps.routes[name];
    if (route === undefined) return notFound(res);
    if (route.wsOnly === true) {
      sendJson(res, 404, encodeResponse(errorResponse(URI_ID, new MethodNotFoundError())));
      return;
    }
    if (body === undefined && isFormRequest(req)) {
      return readBody(req, deps.maxBodyBytes).then((read) => runUri(req, res, name, query, read ?? Buffer.alloc(0)));
    }
    return runUri(req, res, name, query, body);
  };
}

type Mux = (
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  parsed: RpcPayload | undefined,
) => MaybePromise<void>;

/** RecoverAndLogHandler, X-Server-Time, CORS and the mux. */
function createMux(deps: HttpHandlerDeps, handleJsonRpc: JsonRpcHandler, handleUri: UriHandler): Mux {
  const { routes, log } = deps;

  function recover(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    log.error({ err, url: req.url }, "panic in RPC HTTP handler");
    const failure: JsonRpcResponse = errorResponse(URI_ID, new InternalError(errorText(err), { cause: err }));
    sendJson(res, 500, encodeResponse(failure));
  }

  return (req, res, body, parsed) => {
    res.setHeader("X-Server-Time", serverTime());
    try {
      if (deps.cors?.handle(req, res) === true) return;
      const { path, query } = splitTarget(req.url ?? "/");
      let handled: MaybePromise<void>;
      if (path === "/") handled = handleJsonRpc(req, res, body, parsed);
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
    if (deps.maxRequestBatchSize <= 0 || !hasBody(req)) return mux(req, res, undefined, undefined);
    return readBody(req, deps.maxBodyBytes).then((read) => {
      if (read === undefined) return bodyTooLarge(res);
      const body = read;
      let payload: RpcPayload | undefined;
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
      return mux(req, res, body, payload);
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

/** node:http's keepAliveTimeout on the node RPC (node's default), also the fast path's idle timeout. */
export const KEEP_ALIVE_MS = 5000;
const KEEP_ALIVE_SECONDS = KEEP_ALIVE_MS / 1000;
const CACHE_LINE = `Cache-Control: ${CACHE_CONTROL}\r\n`;
/** Set by the CORS handler on every answer when CORS is on (the fast path never sees an Origin). */
const VARY_LINE = "Vary: Origin\r\n";
/** node:http's 408 as the node RPC sends it ({@link onClientError} in server.ts). */
export const REQUEST_TIMEOUT_ANSWER = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";

export interface FastPathDeps extends HttpHandlerDeps {
  readonly readTimeoutMs: number;
  readonly maxHeaderBytes: number;
  readonly socketAddr: (socket: Socket) => string;
}

/** X-Server-Time (and Vary when CORS is on) as node:http writes them, the headers set before the answer's own. */
function firstLines(deps: FastPathDeps): string {
  const line = `X-Server-Time: ${serverTime()}\r\n`;
  return deps.cors === undefined ? line : line + VARY_LINE;
}

function fastJson(deps: FastPathDeps, failed: boolean, body: string | Buffer, cacheable: boolean): FastAnswer {
  return nodeHttpAnswer(
    failed ? "500 Internal Server Error" : "200 OK",
    firstLines(deps),
    "application/json",
    body,
    cacheable ? CACHE_LINE : "",
    KEEP_ALIVE_SECONDS,
  );
}

/** Whether `GET <target>` is a URI call the fast path answers: a route (not WebSocket-only) on a simple target. */
function fastUriTarget(deps: FastPathDeps, target: string): boolean {
  if (!SIMPLE_PATH.test(target)) return false;
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  if (deps.pages?.has(path) === true) return false;
  const name = path.slice(1);
  if (!Object.hasOwn(deps.routes, name)) return false;
  return deps.routes[name]?.wsOnly !== true;
}

function fastUriAnswer(deps: FastPathDeps, r: CallOutcome): FastAnswer {
  return fastJson(deps, r.failed, r.text, !r.failed && r.cacheable);
}

/** `GET /<route>?args` on the fast path: what the URI handler answers, with node:http's bytes. */
function fastUri(deps: FastPathDeps, target: string, socket: Socket): MaybePromise<FastAnswer> {
  const q = target.indexOf("?");
  const name = target.slice(1, q < 0 ? target.length : q);
  const query = q < 0 ? EMPTY_QUERY : new URLSearchParams(target.slice(q + 1));
  const result = runUriCall(deps, name, uriArgs(query, undefined), deps.socketAddr(socket));
  if (!isPromise(result)) return fastUriAnswer(deps, result);
  return result.then((r) => fastUriAnswer(deps, r));
}

function fastPayloadAnswer(deps: FastPathDeps, answer: PayloadAnswer): FastAnswer {
  if (answer.text === undefined) {
    return nodeHttpAnswer("200 OK", firstLines(deps), undefined, "", "", KEEP_ALIVE_SECONDS);
  }
  return fastJson(deps, false, answer.text, answer.cacheable);
}

/**
 * `POST /` on the fast path: the batch pre-check, then the JSON-RPC handler, parsing the body once
 * (node:http's chain parses it in both).
 */
function fastJsonRpc(deps: FastPathDeps, body: Buffer, socket: Socket): MaybePromise<FastAnswer> {
  let payload: RpcPayload;
  try {
    payload = parseRequestPayload(body.toString("utf8"));
  } catch (err) {
    if (!(err instanceof RequestDecodeError)) throw err;
    return fastJson(deps, true, encodeResponse(errorResponse(undefined, parseErrorOf(err))), false);
  }
  const limitError = deps.maxRequestBatchSize > 0 ? batchLimitError(payload, deps.maxRequestBatchSize) : undefined;
  if (limitError !== undefined) {
    // PreChecksHandler answers before X-Server-Time and CORS.
    const text = encodeResponse(errorResponse(undefined, limitError));
    return nodeHttpAnswer("200 OK", "", "application/json", text, "", KEEP_ALIVE_SECONDS);
  }
  const answer = runJsonRpc(deps, payload, deps.socketAddr(socket));
  if (!isPromise(answer)) return fastPayloadAnswer(deps, answer);
  return answer.then((a) => fastPayloadAnswer(deps, a));
}

/**
 * The node RPC's fast path (rpc/jsonrpc/fastHttp.ts): JSON-RPC POSTs to `/` and URI GETs of routes,
 * answered with the bytes node:http would send; the write timeout, read timeout, body and header
 * limits hold as on node:http (larger requests go to it). CORS preflights, forms, pages,
 * `/websocket` and anything unusual go to node:http.
 */
export function fastPathOptions(deps: FastPathDeps): Omit<FastHttpOptions, "fallback"> {
  return {
    accepts: (method: FastMethod, target: string) => (method === "POST" ? target === "/" : fastUriTarget(deps, target)),
    // JSON-RPC POSTs are served whatever their content type; a form goes to node:http.
    acceptsMediaType: (media) => media !== "application/x-www-form-urlencoded",
    emptyPostToFallback: true,
    maxHeadBytes: deps.maxHeaderBytes,
    maxBodyBytes: deps.maxBodyBytes,
    requestTimeoutMs: deps.readTimeoutMs,
    idleTimeoutMs: KEEP_ALIVE_MS,
    writeTimeoutMs: deps.writeTimeoutMs,
    timeoutAnswer: REQUEST_TIMEOUT_ANSWER,
    handle: (method, target, body, _started, socket) =>
      method === "POST" ? fastJsonRpc(deps, body, socket) : fastUri(deps, target, socket),
    onError: (err) => {
      deps.log.error({ err }, "panic in RPC HTTP handler");
      const failure = errorResponse(URI_ID, new InternalError(errorText(err), { cause: err }));
      return fastJson(deps, true, encodeResponse(failure), false);
    },
  };
}
