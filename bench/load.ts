// Load generation shared by the benchmarks: a minimal HTTP/1.1 keep-alive client over node:net,
// `connections` sockets with one request in flight each (no pipelining). node:http's Agent saturates
// its own core near 20-25k req/s on this machine, so it would measure itself instead of a fast server.
import { connect, type Socket } from "node:net";

export interface LoadTarget {
  host: string;
  port: number;
  /** Request path (and query) for the request line. */
  path: string;
}

export interface LoadRequest {
  method: "GET" | "POST";
  /** JSON body for POST. */
  body?: string;
  /**
   * A different JSON body for every request (`i` counts the requests sent, across connections), so no
   * memo on the server can answer it: replaces `body`.
   */
  bodyAt?: (i: number) => string;
  /** Whether a 200 response's text counts as a success (default: any 200). */
  ok?: (text: string) => boolean;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

class LoadError extends Error {}

/**
 * Length of the complete HTTP/1.1 response at the start of `buf` (Content-Length or chunked body), 0 while
 * incomplete, -1 when it has neither (the server would close to end it).
 */
function responseLength(buf: Buffer): number {
  const headerEnd = buf.indexOf("\r\n\r\n");
  if (headerEnd < 0) return 0;
  const head = buf.toString("latin1", 0, headerEnd);
  const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (cl?.[1] !== undefined) {
    const total = headerEnd + 4 + Number(cl[1]);
    return buf.length >= total ? total : 0;
  }
  if (!/\r\ntransfer-encoding:\s*chunked/i.test(head)) return -1;
  let at = headerEnd + 4;
  for (;;) {
    const eol = buf.indexOf("\r\n", at);
    if (eol < 0) return 0;
    const size = Number.parseInt(buf.toString("latin1", at, eol), 16);
    if (size === 0) {
      const end = buf.indexOf("\r\n\r\n", eol);
      return end < 0 ? 0 : end + 4;
    }
    at = eol + 2 + size + 2;
    if (at > buf.length) return 0;
  }
}

/** Sends `request` to `target` on `connections` keep-alive sockets for `seconds`; latencies in ms. */
export async function loadRaw(
  target: LoadTarget,
  request: LoadRequest,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  const body = Buffer.from(request.body ?? "");
  const head =
    `${request.method} ${target.path} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\n` +
    (request.method === "POST" ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : "") +
    "\r\n";
  const req = Buffer.concat([Buffer.from(head, "latin1"), body]);
  const bodyAt = request.bodyAt;
  let counter = 0;
  const nextRequest = (): Buffer => {
    if (bodyAt === undefined) return req;
    const b = Buffer.from(bodyAt(counter++));
    return Buffer.from(
      `${request.method} ${target.path} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n${b.toString("latin1")}`,
      "latin1",
    );
  };
  const ok = request.ok ?? (() => true);
  const latencies: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  const lane = () =>
    new Promise<void>((done) => {
      let sent = 0;
      let buf: Buffer = Buffer.alloc(0);
      let socket: Socket;
      const finish = () => {
        socket.destroy();
        done();
      };
      const fire = () => {
        if (performance.now() >= deadline) {
          finish();
          return;
        }
        const next = nextRequest();
        sent = performance.now();
        socket.write(next);
      };
      const open = () => {
        buf = Buffer.alloc(0);
        sent = 0;
        // A connection refused or reset before any answer is an error too (else a dead server reads as 0 errors).
        let answered = false;
        socket = connect({ host: target.host, port: target.port, noDelay: true }, fire);
        socket.setTimeout(10_000, () => socket.destroy(new LoadError("timed out")));
        socket.on("data", (d: Buffer) => {
          buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
          const n = responseLength(buf);
          if (n === 0) return;
          if (n < 0) {
            socket.destroy(new LoadError("response without length"));
            return;
          }
          answered = true;
          const success = buf.subarray(9, 12).toString("latin1") === "200" && ok(buf.toString("utf8", 0, n));
          if (success) latencies.push(performance.now() - sent);
          else errors++;
          const close = /\r\nconnection:\s*close/i.test(buf.toString("latin1", 0, buf.indexOf("\r\n\r\n")));
          buf = buf.subarray(n);
          sent = 0;
          if (close) {
            socket.removeAllListeners("close");
            socket.destroy();
            if (performance.now() < deadline) open();
            else done();
          } else fire();
        });
        socket.on("error", () => undefined);
        socket.on("close", () => {
          if (sent !== 0 || !answered) errors++;
          if (performance.now() < deadline) setTimeout(open, 10);
          else done();
        });
      };
      open();
    });
  await Promise.all(Array.from({ length: connections }, lane));
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}
