import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * CORS as rs/cors applies it, for both servers' policies: the node RPC's from `cors_allowed_origins`,
 * `_methods` and `_headers` (on only when origins are configured; docs/cometbft-rpc.md §1.7), the
 * EVM server's rs/cors Default (any origin; GET, POST, HEAD; Origin, Accept, Content-Type,
 * X-Requested-With; no credentials). Preflights always answer 204 and never reach the handler.
 */

export interface CorsOptions {
  readonly allowedOrigins: readonly string[];
  readonly allowedMethods: readonly string[];
  readonly allowedHeaders: readonly string[];
  /**
   * How a granted preflight names the allowed headers: `echo` repeats the request's
   * Access-Control-Request-Headers value, `list` the requested names trimmed and joined with ", ".
   */
  readonly allowHeadersAs: "echo" | "list";
  /** Whether an actual (not preflight) OPTIONS request gets Access-Control-Allow-Origin. */
  readonly actualOptionsAllowed: boolean;
}

const PREFLIGHT_VARY = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";

export interface Cors {
  /** Adds CORS headers; returns true when the request was a preflight and has been answered. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** The EVM server's policy (rs/cors Default, as Cosmos EVM wraps its HTTP server). */
export const DEFAULT_CORS: CorsOptions = {
  allowedOrigins: ["*"],
  allowedMethods: ["GET", "POST", "HEAD"],
  allowedHeaders: ["Origin", "Accept", "Content-Type", "X-Requested-With"],
  allowHeadersAs: "list",
  actualOptionsAllowed: false,
};

/** Undefined when no origin is configured (CORS disabled, OPTIONS routed like any method). */
export function createCors(opts: CorsOptions): Cors | undefined {
  if (opts.allowedOrigins.length === 0) return undefined;
  const originsAll = opts.allowedOrigins.includes("*");
  const exact = new Set<string>();
  const wildcards: { prefix: string; suffix: string }[] = [];
  for (const o of opts.allowedOrigins) {
    const lower = o.toLowerCase();
    const star = lower.indexOf("*");
    if (star >= 0) wildcards.push({ prefix: lower.slice(0, star), suffix: lower.slice(star + 1) });
    else exact.add(lower);
  }
  const methods = new Set(opts.allowedMethods.map((m) => m.toUpperCase()));
  // rs/cors always allows the Origin header.
  const headerList = [...opts.allowedHeaders, "Origin"];
  const headersAll = headerList.includes("*");
  const headers = new Set(headerList.map((h) => h.toLowerCase()));

  const originAllowed = (origin: string) => {
    if (originsAll) return true;
    const o = origin.toLowerCase();
    if (exact.has(o)) return true;
    return wildcards.some(
      (w) => o.length >= w.prefix.length + w.suffix.length && o.startsWith(w.prefix) && o.endsWith(w.suffix),
    );
  };
  const methodAllowed = (method: string, preflight: boolean) => {
    if (methods.size === 0) return false;
    const m = method.toUpperCase();
    return (m === "OPTIONS" && (preflight || opts.actualOptionsAllowed)) || methods.has(m);
  };
  const headersAllowed = (requested: string[]) => headersAll || requested.every((h) => headers.has(h.toLowerCase()));

  return {
    handle(req, res) {
      const origin = firstHeader(req, "origin");
      const reqMethod = firstHeader(req, "access-control-request-method");
      if (req.method === "OPTIONS" && reqMethod !== "") {
        res.setHeader("Vary", PREFLIGHT_VARY);
        const rawHeaders = req.headers["access-control-request-headers"];
        const requested = (Array.isArray(rawHeaders) ? rawHeaders.join(",") : (rawHeaders ?? ""))
          .split(",")
          .map((h) => h.trim())
          .filter((h) => h !== "");
        if (origin !== "" && originAllowed(origin) && methodAllowed(reqMethod, true) && headersAllowed(requested)) {
          res.setHeader("Access-Control-Allow-Origin", originsAll ? "*" : origin);
          res.setHeader("Access-Control-Allow-Methods", reqMethod.toUpperCase());
          if (requested.length > 0 && rawHeaders !== undefined) {
            res.setHeader(
              "Access-Control-Allow-Headers",
              opts.allowHeadersAs === "echo" ? rawHeaders : requested.join(", "),
            );
          }
        }
        res.statusCode = 204;
        res.end();
        return true;
      }
      res.setHeader("Vary", "Origin");
      if (origin !== "" && originAllowed(origin) && methodAllowed(req.method ?? "", false)) {
        res.setHeader("Access-Control-Allow-Origin", originsAll ? "*" : origin);
      }
      return false;
    },
  };
}

function firstHeader(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  if (Array.isArray(v)) return v[0] ?? "";
  return v ?? "";
}
