import { createServer as createHttpServer, type Server } from "node:http";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { type FastHttpOptions, serveFastHttp, simpleAnswer } from "./fastHttp.js";

/**
 * The fast path against a raw socket: what it answers itself, and that everything else reaches
 * the node:http server behind it with the bytes the fast path had read.
 */

interface Harness {
  readonly port: number;
  /** The server side of each connection. */
  readonly sockets: Set<Socket>;
  /** Bodies the fast path answered, in order. */
  readonly fastBodies: string[];
  /** Requests node:http served (method, url, body). */
  readonly fallbackSeen: string[];
  readonly errors: unknown[];
  close(): Promise<void>;
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** The handler's answer text as a 200 JSON answer. */
function ok(text: string): string {
  return simpleAnswer("200 OK", "application/json", text);
}

async function start(overrides: Partial<FastHttpOptions> = {}): Promise<Harness> {
  const fastBodies: string[] = [];
  const fallbackSeen: string[] = [];
  const errors: unknown[] = [];
  const fallback: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      fallbackSeen.push(`${req.method} ${req.url} ${body}`);
      const text = `node:${body}`;
      res.writeHead(299, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  const opts: FastHttpOptions = {
    accepts: (method, target) => method === "POST" && target === "/",
    acceptsMediaType: (m) => m === "application/json",
    maxBodyBytes: 1 << 20,
    requestTimeoutMs: 0,
    idleTimeoutMs: 0,
    handle: (_method, _target, body) => {
      const text = body.toString();
      fastBodies.push(text);
      if (text === "throw") throw new Error("boom");
      if (text.startsWith("slow")) return new Promise((r) => setTimeout(() => r(ok(`fast:${text}`)), 30));
      return ok(`fast:${text}`);
    },
    onError: (err) => {
      errors.push(err);
      return simpleAnswer("500 Internal Server Error", "text/plain; charset=utf-8", "internal server error\n");
    },
    fallback,
    ...overrides,
  };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    serveFastHttp(socket, opts);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const h: Harness = {
    port: (server.address() as AddressInfo).port,
    sockets,
    fastBodies,
    fallbackSeen,
    errors,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  open.push(h);
  return h;
}

function post(body: string, extra = "", type = "application/json"): string {
  return `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Parsed responses (status, body) read from a socket until `count` arrived. */
class Client {
  readonly socket: Socket;
  #buf = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  closed = false;

  constructor(port: number) {
    this.socket = connect(port, "127.0.0.1");
    this.socket.on("data", (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      for (const w of this.#waiters.splice(0)) w();
    });
    this.socket.on("close", () => {
      this.closed = true;
      for (const w of this.#waiters.splice(0)) w();
    });
    this.socket.on("error", () => undefined);
  }

  #take(): { status: number; headers: string; body: string } | undefined {
    const end = this.#buf.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const head = this.#buf.toString("latin1", 0, end);
    const cl = /content-length: (\d+)/i.exec(head);
    const chunked = /transfer-encoding: chunked/i.test(head);
    let body: string;
    let total: number;
    if (cl !== null) {
      total = end + 4 + Number(cl[1]);
      if (this.#buf.length < total) return undefined;
      body = this.#buf.toString("utf8", end + 4, total);
    } else if (chunked) {
      const term = this.#buf.indexOf("0\r\n\r\n", end + 4);
      if (term < 0) return undefined;
      total = term + 5;
      body = this.#buf
        .toString("utf8", end + 4, term)
        .split("\r\n")
        .filter((_, i) => i % 2 === 1)
        .join("");
    } else return undefined;
    this.#buf = this.#buf.subarray(total);
    return { status: Number(head.slice(9, 12)), headers: head, body };
  }

  async read(count: number): Promise<{ status: number; headers: string; body: string }[]> {
    const out: { status: number; headers: string; body: string }[] = [];
    while (out.length < count) {
      const r = this.#take();
      if (r !== undefined) {
        out.push(r);
        continue;
      }
      if (this.closed) throw new Error(`closed after ${out.length} of ${count} responses`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return out;
  }

  async waitClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

describe("fast HTTP path", () => {
  test("answers a JSON POST itself with status, type, length and date", async () => {
    const h = await start();
    const c = new Client(h.port);
    c.socket.write(post('{"a":1}'));
    const [r] = await c.read(1);
    expect(r?.status).toBe(200);
    expect(r?.body).toBe('fast:{"a":1}');
    expect(r?.headers).toMatch(/\r\nContent-Type: application\/json\r\n/);
    expect(r?.headers).toMatch(/\r\nDate: \w{3}, \d\d \w{3} \d{4} /);
    expect(h.fallbackSeen).toEqual([]);
    c.socket.destroy();
  });

  test("pipelined requests are answered in order, a slow answer holding back later ones", async () => {
    const h = await start();
    const c = new Client(h.port);
    c.socket.write(post("slow-1") + post("two") + post("slow-3") + post("four"));
    const rs = await c.read(4);
    expect(rs.map((r) => r.body)).toEqual(["fast:slow-1", "fast:two", "fast:slow-3", "fast:four"]);
    c.socket.destroy();
  });

  test("a request arriving a byte at a time, and a multi-chunk body, are assembled", async () => {
    const h = await start();
    const c = new Client(h.port);
    const bytes = Buffer.from(post('{"x":"é"}'));
    for (const b of bytes) {
      c.socket.write(Buffer.from([b]));
      await new Promise((r) => setImmediate(r));
    }
    const big = "y".repeat(300_000);
    const req = Buffer.from(post(big));
    for (let at = 0; at < req.length; at += 7_000) c.socket.write(req.subarray(at, at + 7_000));
    const rs = await c.read(2);
    expect(rs[0]?.body).toBe('fast:{"x":"é"}');
    expect(rs[1]?.body.length).toBe(big.length + 5);
    c.socket.destroy();
  });

  test("other methods, paths, CORS, chunked and oversized requests go to node:http with their bytes", async () => {
    const h = await start({ maxBodyBytes: 100 });
    const cases: [string, number, string][] = [
      ["GET / HTTP/1.1\r\nHost: x\r\n\r\n", 299, "GET / "],
      [post("{}").replace("POST / ", "POST /other "), 299, "POST /other {}"],
      [post("{}", "Origin: http://a.example\r\n"), 299, "POST / {}"],
      [post("{}", "", "text/plain"), 299, "POST / {}"],
      [post("z".repeat(101)), 299, `POST / ${"z".repeat(101)}`],
      [
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        299,
        "POST / {}",
      ],
      [post("{}").replace("HTTP/1.1", "HTTP/1.0"), 299, "POST / {}"],
    ];
    // No Host: node:http refuses it (400) rather than the fast path answering.
    const noHost = new Client(h.port);
    noHost.socket.write(post("{}").replace("Host: x\r\n", ""));
    const [refused] = await noHost.read(1);
    expect(refused?.status).toBe(400);
    noHost.socket.destroy();
    for (const [raw, status, seen] of cases) {
      const c = new Client(h.port);
      c.socket.write(raw);
      const [r] = await c.read(1);
      expect(r?.status, raw).toBe(status);
      expect(h.fallbackSeen.at(-1), raw).toBe(seen);
      c.socket.destroy();
    }
    expect(h.fastBodies).toEqual([]);
  });

  test("a connection leaves the fast path mid-stream: answers stay in order, node:http serves the rest", async () => {
    const h = await start();
    const c = new Client(h.port);
    c.socket.write(post("slow-a") + post("b") + post("c", "Origin: http://x\r\n") + post("d"));
    const rs = await c.read(4);
    expect(rs.map((r) => `${r.status} ${r.body}`)).toEqual([
      "200 fast:slow-a",
      "200 fast:b",
      "299 node:c",
      "299 node:d",
    ]);
    expect(h.fastBodies).toEqual(["slow-a", "b"]);
    c.socket.destroy();
  });

  test("a function fallback gets the socket, paused and unlistened, with every byte not answered", async () => {
    const handed: { socket: Socket; pending: string }[] = [];
    const h = await start({ fallback: (socket, pending) => handed.push({ socket, pending: pending.toString() }) });
    const c = new Client(h.port);
    const rest = post("c", "Origin: http://x\r\n") + post("d");
    c.socket.write(post("a") + post("slow-b") + rest);
    const rs = await c.read(2);
    expect(rs.map((r) => `${r.status} ${r.body}`)).toEqual(["200 fast:a", "200 fast:slow-b"]);
    expect(handed).toHaveLength(1);
    const [{ socket, pending }] = handed as [{ socket: Socket; pending: string }];
    expect(pending).toBe(rest);
    expect(socket.isPaused()).toBe(true);
    expect(socket.listenerCount("data")).toBe(0);
    // The new owner answers on the same connection.
    socket.end(ok("elsewhere"));
    const [after] = await c.read(1);
    expect(after?.body).toBe("elsewhere");
    expect(h.fallbackSeen).toEqual([]);
  });

  test("a throwing handler answers 500 and the connection keeps working", async () => {
    const h = await start();
    const c = new Client(h.port);
    c.socket.write(post("throw") + post("after"));
    const rs = await c.read(2);
    expect(rs.map((r) => r.status)).toEqual([500, 200]);
    expect(rs[1]?.body).toBe("fast:after");
    expect(h.errors).toHaveLength(1);
    c.socket.destroy();
  });

  test("an idle kept-alive connection is closed after the idle timeout", async () => {
    const h = await start({ idleTimeoutMs: 150 });
    const c = new Client(h.port);
    c.socket.write(post("1"));
    await c.read(1);
    await c.waitClosed();
    expect(c.closed).toBe(true);
  });

  test("a client that pipelines requests and never reads: answers stop at the unsent limit, reading stops", async () => {
    const answer = "a".repeat(4000);
    const h = await start({
      handle: (_m, _t, body) => ok(`${answer}${body.toString()}`),
    });
    const c = new Client(h.port);
    c.socket.pause();
    // Requests whose answers (≈ 4 KB each) outgrow the kernel's buffers many times over, written until
    // the server stops taking them (or 40 MB of answers were asked for).
    const burst = Buffer.from(post("x").repeat(1000));
    for (let i = 0; i < 10; i++) {
      if (c.socket.write(burst)) continue;
      const drained = await Promise.race([
        new Promise((r) => c.socket.once("drain", () => r(true))),
        new Promise((r) => setTimeout(() => r(false), 500)),
      ]);
      if (!drained) break;
    }
    await new Promise((r) => setTimeout(r, 200));
    const [server] = [...h.sockets];
    expect(server?.isPaused()).toBe(true);
    // Unsent answers stay around the 1 MiB limit (one answer past it), not the tens of MB asked for.
    expect(server?.writableLength ?? 0).toBeLessThan(1024 * 1024 + 8192);
    const answered = h.fastBodies.length;
    expect(answered).toBeLessThan(10_000);
    // Reading the answers lets the rest through, in order.
    c.socket.resume();
    const rs = await c.read(answered + 10);
    expect(rs.every((r) => r.status === 200 && r.body === `${answer}x`)).toBe(true);
    c.socket.destroy();
  });

  test("a client that stops reading its answers is cut after the request timeout", async () => {
    const h = await start({ requestTimeoutMs: 300, idleTimeoutMs: 10_000, handle: () => ok("z".repeat(8_000_000)) });
    const c = new Client(h.port);
    c.socket.pause();
    c.socket.write(post("1") + post("2") + post("3") + post("4"));
    const [server] = await new Promise<Socket[]>((resolve) => {
      const poll = () => (h.sockets.size > 0 ? resolve([...h.sockets]) : setTimeout(poll, 10));
      poll();
    });
    await new Promise((resolve) => server?.once("close", resolve));
    expect(h.fastBodies.length).toBeLessThan(4);
    c.socket.destroy();
  });

  test("a request that does not complete within the request timeout gets 408 and a close", async () => {
    const h = await start({ requestTimeoutMs: 150, idleTimeoutMs: 10_000 });
    const c = new Client(h.port);
    c.socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n12");
    const [r] = await c.read(1);
    expect(r?.status).toBe(408);
    await c.waitClosed();
    expect(h.fastBodies).toEqual([]);
  });

  test("a GET the server takes is answered here with an empty body; other GETs and methods go to node:http", async () => {
    const seen: string[] = [];
    const h = await start({
      accepts: (method, target) => (method === "POST" ? target === "/" : target.startsWith("/fast")),
      handle: (method, target, body) => {
        seen.push(`${method} ${target} ${body.length}`);
        return ok(`fast:${method}:${target}`);
      },
    });
    const c = new Client(h.port);
    c.socket.write(
      "GET /fast?a=1 HTTP/1.1\r\nHost: x\r\n\r\n" +
        "GET /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n" +
        post("p"),
    );
    const rs = await c.read(3);
    expect(rs.map((r) => r.body)).toEqual(["fast:GET:/fast?a=1", "fast:GET:/fast", "fast:POST:/"]);
    expect(seen).toEqual(["GET /fast?a=1 0", "GET /fast 0", "POST / 1"]);
    c.socket.destroy();
    for (const [raw, fallback] of [
      ["GET /other HTTP/1.1\r\nHost: x\r\n\r\n", "GET /other "],
      ["GET /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", "GET /fast {}"],
      ["OPTIONS /fast HTTP/1.1\r\nHost: x\r\n\r\n", "OPTIONS /fast "],
    ] as const) {
      const d = new Client(h.port);
      d.socket.write(raw);
      const [r] = await d.read(1);
      expect(r?.status, raw).toBe(299);
      expect(h.fallbackSeen.at(-1), raw).toBe(fallback);
      d.socket.destroy();
    }
    expect(seen).toHaveLength(3);
  });

  test("an empty POST, a head over maxHeadBytes and a form go to node:http when the server says so", async () => {
    const h = await start({
      emptyPostToFallback: true,
      maxHeadBytes: 200,
      acceptsMediaType: (m) => m !== "application/x-www-form-urlencoded",
    });
    const cases = [
      post(""),
      post("{}", `X-Pad: ${"p".repeat(300)}\r\n`),
      post("a=1", "", "application/x-www-form-urlencoded"),
      // No Content-Type at all is the server's to accept.
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
    ];
    const statuses: number[] = [];
    for (const raw of cases) {
      const c = new Client(h.port);
      c.socket.write(raw);
      const [r] = await c.read(1);
      statuses.push(r?.status ?? 0);
      c.socket.destroy();
    }
    expect(statuses).toEqual([299, 299, 299, 200]);
    expect(h.fastBodies).toEqual(["{}"]);
  });

  test("an answer still being made past the write timeout cuts the connection", async () => {
    const h = await start({
      writeTimeoutMs: 100,
      idleTimeoutMs: 10_000,
      handle: () => new Promise<string>(() => undefined),
    });
    const c = new Client(h.port);
    const started = Date.now();
    c.socket.write(post("hang"));
    await c.waitClosed();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test("a handler failure the server answers with nothing cuts the connection", async () => {
    const h = await start({ onError: () => undefined });
    const c = new Client(h.port);
    c.socket.write(post("throw"));
    await c.waitClosed();
    expect(c.closed).toBe(true);
  });
});
