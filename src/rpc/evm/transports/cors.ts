import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Cosmos EVM wraps its HTTP server in rs/cors' Default handler: any origin, methods GET, POST
 * and HEAD, headers Origin, Accept, Content-Type and X-Requested-With, no credentials.
 * Preflights answer 204 and never reach the JSON-RPC handler.
 */

const ALLOWED_METHODS = new Set(["GET", "POST", "HEAD"]);
const ALLOWED_HEADERS = new Set(["origin", "accept", "content-type", "x-requested-with"]);
const PREFLIGHT_VARY = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";

function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? (v[0] ?? "") : (v ?? "");
}

/** Adds CORS headers; true when the request was a preflight and has been answered. */
export function applyCors(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = header(req, "origin");
  const requestedMethod = header(req, "access-control-request-method");
  if (req.method === "OPTIONS" && requestedMethod !== "") {
    res.setHeader("Vary", PREFLIGHT_VARY);
    const requestedHeaders = header(req, "access-control-request-headers")
      .split(",")
      .map((h) => h.trim())
      .filter((h) => h !== "");
    const method = requestedMethod.toUpperCase();
    const methodOk = method === "OPTIONS" || ALLOWED_METHODS.has(method);
    const headersOk = requestedHeaders.every((h) => ALLOWED_HEADERS.has(h.toLowerCase()));
    if (origin !== "" && methodOk && headersOk) {
      res.setHeader("Access-Control-Allow-Origin", "*");
      res.setHeader("Access-Control-Allow-Methods", method);
      if (requestedHeaders.length > 0) res.setHeader("Access-Control-Allow-Headers", requestedHeaders.join(", "));
    }
    res.statusCode = 204;
    res.end();
    return true;
  }
  res.setHeader("Vary", "Origin");
  if (origin !== "" && ALLOWED_METHODS.has((req.method ?? "").toUpperCase())) {
    res.setHeader("Access-Control-Allow-Origin", "*");
  }
  return false;
}
