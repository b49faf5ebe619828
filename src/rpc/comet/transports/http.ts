import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../../util/logger.js";
import {
  batchLimitError,
  dispatchRequest,
  dispatchUri,
  encodeResponse,
  encodeResponses,
  errorResponse,
  errorText,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  isFailure,
  type JsonRpcResponse,
  MethodNotFoundError,
  type ParsedPayload,
  ParseError,
  parseRequestPayload,
  RequestDecodeError,
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
}

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
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.writableEnded) return;
  res.statusCode = status;
  res.setHeader("Content-Type", contentType);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader("Content-Length", Buffer.byteLength(body, "utf8"));
  // A string body goes out in one write together with the headers (a Buffer costs a writev).
  res.end(body, "utf8");
}

function sendJson(res: ServerResponse, status: number, body: string, cacheable = false): void {
  sendText(res, status, "application/json", body, cacheable ? { "Cache-Control": CACHE_CONTROL } : {});
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

function isFormRequest(req: IncomingMessage): boolean {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  return ["POST", "PUT", "PATCH"].includes(req.method ?? "GET") && type === "application/x-www-form-urlencoded";
}

export function createHttpHandler(deps: HttpHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { routes, services, runtime, log } = deps;

  const context = (req: IncomingMessage, transport: "uri" | "http", requestId: CometCallContext["requestId"]) =>
    ({ transport, remoteAddr: deps.remoteAddr(req), requestId, runtime, ws: undefined }) satisfies CometCallContext;

  const dispatchOpts = {
    mapError: toCometRpcError,
  } as const;

  async function handleJsonRpc(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): Promise<void> {
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
      dispatchRequest(routes, r, services, context(req, "http", r.id), {
        transport: "http",
        paramsError: (d) => new InvalidParamsError(d),
        ...dispatchOpts,
      }),
    );
    if (outcome.responses.length === 0) {
      res.statusCode = 200;
      res.setHeader("Content-Length", 0);
      res.end();
      return;
    }
    sendJson(res, 200, encodeResponses(outcome.responses, { unwrapSingle: true }), outcome.cacheable);
  }

  async function handleUri(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    url: URL,
    body: Buffer | undefined,
  ): Promise<void> {
    const route = routes[name];
    if (route === undefined) return notFound(res);
    if (route.transport === "ws") {
      sendJson(res, 404, encodeResponse(errorResponse(URI_ID, new MethodNotFoundError())));
      return;
    }
    let formBody = body;
    if (formBody === undefined && isFormRequest(req)) {
      const read = await readBody(req, deps.maxBodyBytes);
      formBody = read.ok ? read.bytes : Buffer.alloc(0);
    }
    const form =
      formBody !== undefined && isFormRequest(req) ? new URLSearchParams(formBody.toString("utf8")) : undefined;
    // Go: r.URL.Query().Get, then r.FormValue.
    const get = (argName: string): string => url.searchParams.get(argName) || form?.get(argName) || "";
    const result = await dispatchUri(route, URI_ID, get, services, context(req, "uri", URI_ID), {
      transport: "uri",
      paramsError: (d) => new InvalidParamsError(d),
      ...dispatchOpts,
    });
    const failed = isFailure(result.response);
    sendJson(res, failed ? 500 : 200, encodeResponse(result.response), !failed && result.cacheable);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // PreChecksHandler (outermost, before X-Server-Time): body limit and batch limit.
    let body: Buffer | undefined;
    if (deps.maxRequestBatchSize > 0) {
      const read = await readBody(req, deps.maxBodyBytes);
      if (!read.ok) return bodyTooLarge(res);
      body = read.bytes;
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
    }
    // RecoverAndLogHandler
    res.setHeader("X-Server-Time", Math.floor(Date.now() / 1000).toString());
    try {
      if (deps.cors?.handle(req, res) === true) return;
      const url = new URL(req.url ?? "/", "http://localhost");
      const path = url.pathname;
      if (path === "/") return await handleJsonRpc(req, res, body);
      if (path === "/websocket") {
        // A plain request on the WebSocket path: gorilla's Upgrade refusal.
        if (req.method !== "GET") sendText(res, 405, "text/plain; charset=utf-8", "Method Not Allowed\n");
        else sendText(res, 400, "text/plain; charset=utf-8", "Bad Request\n", { "Sec-Websocket-Version": "13" });
        return;
      }
      const name = path.slice(1);
      if (!name.includes("/") && Object.hasOwn(routes, name)) return await handleUri(req, res, name, url, body);
      notFound(res);
    } catch (err) {
      log.error({ err, url: req.url }, "panic in RPC HTTP handler");
      const failure: JsonRpcResponse = errorResponse(URI_ID, new InternalError(errorText(err), { cause: err }));
      sendJson(res, 500, encodeResponse(failure));
    }
  }

  return (req, res) => {
    // http.Server WriteTimeout: the connection is cut when the answer is not written in time.
    const timer = setTimeout(() => req.socket.destroy(), deps.writeTimeoutMs);
    res.once("close", () => clearTimeout(timer));
    serve(req, res).catch((err: unknown) => {
      log.error({ err }, "RPC HTTP handler failed");
      if (!res.writableEnded) res.destroy();
    });
  };
}
