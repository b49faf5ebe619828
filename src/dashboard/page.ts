import type { IncomingMessage, ServerResponse } from "node:http";
import { type DashboardAssets, dashboardAssets } from "./assets.js";

/**
 * `/dashboard` on the node RPC: one HTML page with its script and styles inline. The page talks
 * only to the server it came from (JSON-RPC on `/`, WebSocket on `/websocket`); its
 * Content-Security-Policy forbids any other origin, so it also works offline.
 */

function escapeForTag(text: string, tag: "script" | "style"): string {
  return text.replaceAll(`</${tag}`, `<\\/${tag}`);
}

/** The whole page for these assets. */
export function renderPage(a: DashboardAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cometh dashboard</title>
<style>${escapeForTag(a.css, "style")}</style>
</head>
<body>
<div id="app"></div>
<script>${escapeForTag(a.js, "script")}</script>
</body>
</html>
`;
}

let page: Promise<Buffer> | undefined;

function pageBytes(): Promise<Buffer> {
  page ??= dashboardAssets().then(
    (a) => Buffer.from(renderPage(a), "utf8"),
    (err: unknown) => {
      page = undefined;
      throw err;
    },
  );
  return page;
}

const CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Answers GET/HEAD /dashboard. */
export function serveDashboard(req: IncomingMessage, res: ServerResponse): void {
  pageBytes().then(
    (body) => {
      if (res.headersSent || res.writableEnded) return;
      res.writeHead(200, {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Length": body.length,
        "Cache-Control": "no-cache",
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
      });
      res.end(req.method === "HEAD" ? undefined : body);
    },
    (err: unknown) => {
      if (res.headersSent || res.writableEnded) return;
      const text = `dashboard unavailable: ${err instanceof Error ? err.message : String(err)}\n`;
      res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    },
  );
}

/** The paths the node RPC serves the dashboard on. */
export function dashboardPages(): ReadonlyMap<string, (req: IncomingMessage, res: ServerResponse) => void> {
  return new Map([
    ["/dashboard", serveDashboard],
    ["/dashboard/", serveDashboard],
  ]);
}
