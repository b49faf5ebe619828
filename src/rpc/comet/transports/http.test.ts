import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { rawHttp } from "../testing/rpcTestClient.js";
import { type FakeRpc, startFakeRpc } from "../testing/startFakeRpc.js";

const post = (f: FakeRpc, body: string | Buffer, headers: Record<string, string> = {}) =>
  rawHttp(f.base, { method: "POST", path: "/", body, headers: { "content-type": "application/json", ...headers } });

describe("JSON-RPC over HTTP: envelope, errors and batches (docs/cometbft-rpc.md §1.3, §1.4)", () => {
  let f: FakeRpc;
  beforeAll(async () => {
    f = await startFakeRpc();
  });
  afterAll(() => f.close());

  test("default: success envelope is compact, keys in order, JSON content type", async () => {
    const r = await post(f, '{"jsonrpc":"2.0","id":7,"method":"health","params":{}}');
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"jsonrpc":"2.0","id":7,"result":{}}');
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["x-server-time"]).toMatch(/^\d+$/);
    expect(Math.abs(Number(r.headers["x-server-time"]) - Date.now() / 1000)).toBeLessThan(5);
  });

  test("error: parse error is HTTP 500 without id", async () => {
    const r = await post(f, "{not json");
    expect(r.status).toBe(500);
    expect(r.text).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error. Invalid JSON","data":"error unmarshaling request: invalid character \'n\' looking for beginning of object key string"}}',
    );
  });

  test("error: unknown method is -32601 without data, HTTP 200", async () => {
    const r = await post(f, '{"jsonrpc":"2.0","id":"abc","method":"nope"}');
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"Method not found"}}');
  });

  test("error: int64 params must be JSON strings", async () => {
    const r = await post(f, '{"jsonrpc":"2.0","id":1,"method":"block","params":{"height":5}}');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32602,
        message: "Invalid params",
        data: 'error converting json params to arguments: invalid 64-bit integer encoding "5", expected string',
      },
    });
  });

  test("error: array params need exactly one item per argument", async () => {
    const r = await post(f, '{"jsonrpc":"2.0","id":1,"method":"block","params":["5","6"]}');
    expect(r.body.error.data).toBe(
      "error converting json params to arguments: expected 1 parameters ([height]), got 2 ([[34 53 34] [34 54 34]])",
    );
    const ok = await post(f, '{"jsonrpc":"2.0","id":1,"method":"block","params":["5"]}');
    expect(ok.body.result.block.header.height).toBe("5");
    const none = await post(f, '{"jsonrpc":"2.0","id":1,"method":"health","params":[]}');
    expect(none.body.result).toEqual({});
    const wrong = await post(f, '{"jsonrpc":"2.0","id":1,"method":"blockchain","params":[]}');
    expect(wrong.body.error.data).toBe(
      "error converting json params to arguments: expected 2 parameters ([minHeight maxHeight]), got 0 ([])",
    );
  });

  test("error: params of another JSON type", async () => {
    const r = await post(f, '{"jsonrpc":"2.0","id":1,"method":"block","params":"5"}');
    expect(r.body.error.data).toBe(
      "error converting json params to arguments: unknown type for JSON params: json: cannot unmarshal string into Go value of type []json.RawMessage. Expected map or array",
    );
  });

  test("args: ids — strings echo, numbers truncate, null is a notification, bool is a parse error", async () => {
    expect((await post(f, '{"id":"x-1","method":"health"}')).text).toBe('{"jsonrpc":"2.0","id":"x-1","result":{}}');
    expect((await post(f, '{"id":1.9,"method":"health"}')).text).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect((await post(f, '{"id":-2.5,"method":"health"}')).text).toBe('{"jsonrpc":"2.0","id":-2,"result":{}}');
    expect((await post(f, '{"id":0,"method":"health"}')).text).toBe('{"jsonrpc":"2.0","id":0,"result":{}}');
    const notification = await post(f, '{"id":null,"method":"health"}');
    expect(notification.status).toBe(200);
    expect(notification.text).toBe("");
    const absent = await post(f, '{"method":"health"}');
    expect(absent.text).toBe("");
    const bool = await post(f, '{"id":true,"method":"health"}');
    expect(bool.status).toBe(500);
    expect(bool.body.error).toEqual({
      code: -32700,
      message: "Parse error. Invalid JSON",
      data: "error unmarshaling request: json-rpc ID (true) is of unknown type (bool)",
    });
    expect((await post(f, '{"id":{"a":1},"method":"health"}')).status).toBe(500);
  });

  test("args: field names match case-insensitively and jsonrpc is not checked", async () => {
    expect((await post(f, '{"ID":3,"Method":"health","jsonrpc":"1.0"}')).text).toBe(
      '{"jsonrpc":"2.0","id":3,"result":{}}',
    );
  });

  test("behavior: batches answer in order; one answer is unwrapped; none is an empty body", async () => {
    const two = await post(f, '[{"id":1,"method":"health"},{"id":2,"method":"nope"}]');
    expect(two.text).toBe(
      '[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}]',
    );
    const one = await post(f, '[{"id":1,"method":"health"},{"method":"health"}]');
    expect(one.text).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    const empty = await post(f, "[]");
    expect(empty.status).toBe(200);
    expect(empty.text).toBe("");
    const onlyNotifications = await post(f, '[{"method":"health"},null]');
    expect(onlyNotifications.text).toBe("");
    const badItem = await post(f, '[{"id":1,"method":"health"},5]');
    expect(badItem.status).toBe(500);
    expect(badItem.body.error.code).toBe(-32700);
  });

  test("error: batch size limit", async () => {
    const items = Array.from({ length: 11 }, (_, i) => ({ id: i, method: "health" }));
    const r = await post(f, JSON.stringify(items));
    expect(r.status).toBe(200);
    expect(r.text).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"batch request exceeds maximum (10) allowed number of requests"}}',
    );
    const ten = await post(f, JSON.stringify(items.slice(0, 10)));
    expect(ten.body).toHaveLength(10);
  });

  test("error: body larger than max_body_bytes is HTTP 400", async () => {
    const r = await post(f, `{"id":1,"method":"health","params":{"x":"${"a".repeat(1_000_100)}"}}`);
    expect(r.status).toBe(400);
    expect(r.text).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":"error reading request body: http: request body too large"}}',
    );
  });

  test("error: header larger than max_header_bytes is HTTP 431", async () => {
    const status = await new Promise<string>((resolve, reject) => {
      const addr = new URL(f.base);
      const sock = connect(Number(addr.port), addr.hostname, () => {
        sock.write(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(1_100_000)}\r\n\r\n`);
      });
      let data = "";
      sock.on("data", (d) => {
        data += d.toString();
      });
      sock.on("close", () => resolve(data.split("\r\n")[0] ?? ""));
      sock.on("error", (e) => (data === "" ? reject(e) : resolve(data.split("\r\n")[0] ?? "")));
    });
    expect(status).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect((await rawHttp(f.base, { path: "/health" })).status).toBe(200);
  });

  test("error: requests that do not parse get net/http's plain-text 431 and 400", async () => {
    const exchange = (bytes: string) =>
      new Promise<string>((resolve) => {
        const addr = new URL(f.base);
        const sock = connect(Number(addr.port), addr.hostname, () => sock.write(bytes, () => undefined));
        let data = "";
        sock.on("data", (d) => {
          data += d.toString("latin1");
        });
        sock.on("error", () => undefined);
        sock.on("close", () => resolve(data));
      });
    const goError = (status: string) =>
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`;
    expect(await exchange(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(1_500_000)}\r\n\r\n`)).toBe(
      goError("431 Request Header Fields Too Large"),
    );
    expect(await exchange("GARBAGE\r\n\r\n")).toBe(goError("400 Bad Request"));
    expect(await exchange("GET /health HTTP/1.1\r\nNo Colon Here\r\n\r\n")).toBe(goError("400 Bad Request"));
    expect(await exchange("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")).toBe(
      goError("400 Bad Request: missing required Host header"),
    );
    expect(await exchange("GET /health HTTP/1.1\r\n\r\n")).toBe(
      goError("400 Bad Request: missing required Host header"),
    );
    expect((await rawHttp(f.base, { path: "/health" })).status).toBe(200);
  });

  test("error: bytes that do not parse after a whole request: the request is answered first (Go's server reads one request at a time)", async () => {
    const exchange = (bytes: string) =>
      new Promise<string>((resolve) => {
        const addr = new URL(f.base);
        const sock = connect(Number(addr.port), addr.hostname, () => sock.write(bytes, () => undefined));
        let data = "";
        sock.on("data", (d) => {
          data += d.toString("latin1");
        });
        sock.on("error", () => undefined);
        sock.on("close", () => resolve(data));
      });
    // A GET whose body was not declared: the root page, then (the request asked for a close) nothing.
    const closed = await exchange('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n{"jsonrpc":"2.0"}');
    expect(closed).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Available endpoints/);
    expect(closed).not.toContain("400 Bad Request");
    // Kept alive: the answer, then Go's 400 for the bytes after it.
    const kept = await exchange('GET / HTTP/1.1\r\nHost: x\r\n\r\n{"jsonrpc":"2.0"}\r\n\r\n');
    expect(kept).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Available endpoints[\s\S]*HTTP\/1\.1 400 Bad Request\r\n/);
  });

  test("behavior: empty body lists the endpoints as HTML", async () => {
    const r = await rawHttp(f.base, { method: "POST", path: "/", body: "" });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("text/html");
    expect(r.text.startsWith("<html><body><br>Available endpoints:<br>")).toBe(true);
    expect(r.text).toContain("/block?height=_</a>");
    expect(r.text).toContain("/tx_search?query=_&prove=_&page=_&per_page=_&order_by=_");
    const get = await rawHttp(f.base, { path: "/" });
    expect(get.headers["content-type"]).toBe("text/html");
  });

  test("error: unknown paths are 404 text", async () => {
    const r = await rawHttp(f.base, { path: "/nope" });
    expect(r.status).toBe(404);
    expect(r.text).toBe("404 page not found\n");
    expect(r.headers["x-server-time"]).toBeDefined();
    expect((await rawHttp(f.base, { method: "POST", path: "/health/x", body: "{}" })).status).toBe(404);
  });

  test("error: a plain request on /websocket gets gorilla's refusal", async () => {
    const get = await rawHttp(f.base, { path: "/websocket" });
    expect(get.status).toBe(400);
    expect(get.text).toBe("Bad Request\n");
    const postWs = await rawHttp(f.base, { method: "POST", path: "/websocket", body: "{}" });
    expect(postWs.status).toBe(405);
  });

  test("behavior: Cache-Control on cacheable routes only", async () => {
    const cc = async (path: string) => (await rawHttp(f.base, { path })).headers["cache-control"];
    expect(await cc("/block?height=2")).toBe("public, max-age=86400");
    expect(await cc("/block")).toBeUndefined();
    expect(await cc("/genesis")).toBe("public, max-age=86400");
    expect(await cc("/status")).toBeUndefined();
    expect(await cc("/block?height=99")).toBeUndefined();
    const batch = await post(f, '[{"id":1,"method":"genesis"},{"id":2,"method":"block","params":{"height":"3"}}]');
    expect(batch.headers["cache-control"]).toBe("public, max-age=86400");
    const mixed = await post(f, '[{"id":1,"method":"genesis"},{"id":2,"method":"status"}]');
    expect(mixed.headers["cache-control"]).toBeUndefined();
  });

  test("behavior: JSON output escapes <, > and & like Go", async () => {
    const r = await rawHttp(f.base, { path: "/genesis" });
    expect(r.text).toContain('"name":"\\u003calice\\u003e"');
    const blk = await rawHttp(f.base, { path: "/block_results?height=4" });
    expect(blk.text).not.toMatch(/[<>&]/);
  });

  test("args: URI argument forms", async () => {
    const quoted = await rawHttp(f.base, { path: `/broadcast_tx_sync?tx=${encodeURIComponent('"name=uri"')}` });
    expect(quoted.body.result.code).toBe(0);
    const hex = await rawHttp(f.base, { path: "/check_tx?tx=0x6e616d65" });
    expect(hex.body.result.code).toBe(0);
    const unquoted = await rawHttp(f.base, { path: "/tx_search?query=tx.height=2" });
    expect(unquoted.status).toBe(500);
    expect(unquoted.body.error).toEqual({
      code: -32602,
      message: "Invalid params",
      data: "error converting http params to arguments: invalid character 'x' in literal true (expecting 'r')",
    });
    const hexInt = await rawHttp(f.base, { path: "/block?height=0x10" });
    expect(hexInt.body.error.data).toBe(
      "error converting http params to arguments: got a hex string arg, but expected 'int64'",
    );
    const quotedInt = await rawHttp(f.base, { path: '/block?height="3"' });
    expect(quotedInt.body.result.block.header.height).toBe("3");
    const badHex = await rawHttp(f.base, { path: "/check_tx?tx=0xzz" });
    expect(badHex.body.error.data).toBe(
      "error converting http params to arguments: encoding/hex: invalid byte: U+007A 'z'",
    );
    const form = await rawHttp(f.base, {
      method: "POST",
      path: "/block",
      body: "height=4",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.body.result.block.header.height).toBe("4");
    const bools = await rawHttp(f.base, { path: `/tx?hash=0x${"00".repeat(32)}&prove=yes` });
    expect(bools.body.error.data).toBe(
      "error converting http params to arguments: invalid character 'y' looking for beginning of value",
    );
  });
});

describe("CORS (docs/cometbft-rpc.md §1.7)", () => {
  let f: FakeRpc;
  beforeAll(async () => {
    f = await startFakeRpc({ corsAllowedOrigins: ["https://app.example", "https://*.wild.example"] });
  });
  afterAll(() => f.close());

  test("default: preflight from an allowed origin", async () => {
    const r = await rawHttp(f.base, {
      method: "OPTIONS",
      path: "/",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "post",
        "access-control-request-headers": "Content-Type",
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(r.headers["access-control-allow-methods"]).toBe("POST");
    expect(r.headers["access-control-allow-headers"]).toBe("Content-Type");
    expect(r.headers.vary).toBe("Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    expect(r.headers["x-server-time"]).toBeDefined();
  });

  test("error: preflight from other origins, methods or headers gets only Vary", async () => {
    for (const headers of [
      { origin: "https://evil.example", "access-control-request-method": "POST" },
      { origin: "https://app.example", "access-control-request-method": "DELETE" },
      {
        origin: "https://app.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "X-Custom",
      },
    ]) {
      const r = await rawHttp(f.base, { method: "OPTIONS", path: "/status", headers });
      expect(r.status).toBe(204);
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
      expect(r.headers.vary).toBe("Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
    }
  });

  test("default: actual requests echo the origin, wildcards match", async () => {
    const r = await rawHttp(f.base, { path: "/health", headers: { origin: "https://a.wild.example" } });
    expect(r.headers["access-control-allow-origin"]).toBe("https://a.wild.example");
    expect(r.headers.vary).toBe("Origin");
    const other = await rawHttp(f.base, { path: "/health", headers: { origin: "https://evil.example" } });
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    expect(other.status).toBe(200);
  });

  test("default: without configured origins CORS is off and OPTIONS is routed", async () => {
    const plain = await startFakeRpc();
    try {
      const r = await rawHttp(plain.base, {
        method: "OPTIONS",
        path: "/health",
        headers: { origin: "https://app.example", "access-control-request-method": "GET" },
      });
      expect(r.status).toBe(200);
      expect(r.body.result).toEqual({});
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  test("args: a star allows any origin", async () => {
    const star = await startFakeRpc({ corsAllowedOrigins: ["*"] });
    try {
      const r = await rawHttp(star.base, { path: "/health", headers: { origin: "https://x.example" } });
      expect(r.headers["access-control-allow-origin"]).toBe("*");
    } finally {
      await star.close();
    }
  });
});

describe("listeners and connection limits", () => {
  test("default: several addresses, including a unix socket", async () => {
    const path = `/tmp/cometh-rpc-${process.pid}-${Date.now()}.sock`;
    const f = await startFakeRpc({ laddr: `tcp://127.0.0.1:0,unix://${path}` });
    try {
      expect(f.rpc.addresses).toHaveLength(2);
      expect(f.rpc.addresses[0]).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
      expect(f.rpc.addresses[1]).toBe(`unix://${path}`);
      const body = await new Promise<string>((resolve, reject) => {
        const s = connect(path, () => s.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        let data = "";
        s.on("data", (d) => {
          data += d.toString();
        });
        s.on("end", () => resolve(data));
        s.on("error", reject);
      });
      expect(body).toContain('{"jsonrpc":"2.0","id":-1,"result":{}}');
    } finally {
      await f.close();
    }
  });

  test("error: malformed laddr", async () => {
    await expect(startFakeRpc({ laddr: "127.0.0.1:0" })).rejects.toThrow(
      "invalid listening address 127.0.0.1:0 (use fully formed addresses, including the tcp:// or unix:// prefix)",
    );
  });

  test("behavior: a client that never finishes its headers is cut after the read timeout", async () => {
    const f = await startFakeRpc({ readTimeoutMs: 300 });
    try {
      const addr = new URL(f.base);
      const started = Date.now();
      const first = await new Promise<string>((resolve) => {
        const s = connect(Number(addr.port), addr.hostname, () => s.write("GET /health HTTP/1.1\r\nHost: x\r\n"));
        let data = "";
        s.on("data", (d) => {
          data += d.toString();
        });
        s.on("close", () => resolve(data.split("\r\n")[0] ?? ""));
      });
      expect(first).toBe("HTTP/1.1 408 Request Timeout");
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await f.close();
    }
  });

  test("behavior: an answer not written within WriteTimeout cuts the connection", async () => {
    const f = await startFakeRpc({ writeTimeoutMs: 200, timeoutBroadcastTxCommitMs: 100 });
    try {
      const started = Date.now();
      await expect(rawHttp(f.base, { path: '/abci_query?path="/hang"' })).rejects.toThrow(/socket hang up|ECONNRESET/);
      expect(Date.now() - started).toBeLessThan(3000);
      expect((await rawHttp(f.base, { path: "/health" })).status).toBe(200);
    } finally {
      await f.close();
    }
  });

  test("args: max_request_batch_size 0 means unlimited batches; the body limit still holds", async () => {
    const f = await startFakeRpc({ maxRequestBatchSize: 0, maxBodyBytes: 2000 });
    try {
      const items = Array.from({ length: 25 }, (_, i) => ({ id: i, method: "health" }));
      const r = await post(f, JSON.stringify(items));
      expect(r.body).toHaveLength(25);
      const big = await post(f, `{"id":1,"method":"health","params":{"x":"${"a".repeat(3000)}"}}`);
      expect(big.status).toBe(400);
      expect(big.body.error.data).toBe("error reading request body: http: request body too large");
      // Here the JSON-RPC handler read the body, inside the recover middleware: X-Server-Time is set.
      expect(big.headers["x-server-time"]).toBeDefined();
    } finally {
      await f.close();
    }
  });

  test("behavior: max_open_connections makes extra connections wait, not fail", async () => {
    const f = await startFakeRpc({ maxOpenConnections: 1 });
    try {
      const addr = new URL(f.base);
      const first = connect(Number(addr.port), addr.hostname);
      await new Promise((r) => first.once("connect", r));
      let answered = false;
      const second = rawHttp(f.base, { path: "/health" }).then((r) => {
        answered = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(answered).toBe(false);
      first.destroy();
      expect((await second).body.result).toEqual({});
    } finally {
      await f.close();
    }
  });
});

describe("fast path (rpc/jsonrpc/fastHttp.ts): the same bytes as node:http", () => {
  /** Sends raw requests on one connection and returns the answers, each cut at its Content-Length. */
  function exchange(f: FakeRpc, requests: string[]): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const addr = new URL(f.base);
      const sock = connect(Number(addr.port), addr.hostname, () => sock.write(requests.join("")));
      let data = Buffer.alloc(0);
      const answers: string[] = [];
      sock.on("data", (d: Buffer) => {
        data = Buffer.concat([data, d]);
        for (;;) {
          const end = data.indexOf("\r\n\r\n");
          if (end < 0) break;
          const length = Number(/\r\nContent-Length: (\d+)/.exec(data.toString("latin1", 0, end))?.[1] ?? "0");
          if (data.length < end + 4 + length) break;
          answers.push(data.toString("utf8", 0, end + 4 + length));
          data = data.subarray(end + 4 + length);
        }
        if (answers.length === requests.length) {
          sock.destroy();
          resolve(answers);
        }
      });
      sock.on("error", reject);
    });
  }

  /** The answer with the clock-dependent header values blanked. */
  const timeless = (answer: string) =>
    answer.replace(/\r\nX-Server-Time: \d+/, "\r\nX-Server-Time: T").replace(/\r\nDate: [^\r]+/, "\r\nDate: D");

  const body = (text: string) =>
    `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
  const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`;
  /** The same request with an Origin header: CORS is off, so node:http answers it as it would without. */
  const viaNodeHttp = (request: string) => request.replace("Host: x\r\n", "Host: x\r\nOrigin: http://o.example\r\n");

  test("behavior: URI GETs and JSON-RPC POSTs, successes and failures, cacheable or not", async () => {
    const { subscribe, unsubscribe } = await import("node:diagnostics_channel");
    let nodeHttpRequests = 0;
    const count = () => {
      nodeHttpRequests++;
    };
    const f = await startFakeRpc();
    subscribe("http.server.request.start", count);
    try {
      const items = Array.from({ length: 11 }, (_, i) => ({ id: i, method: "health" }));
      const requests = [
        get("/health"),
        get("/block?height=1"),
        get("/block?height=999999"),
        get("/block?height=x"),
        get("/status"),
        body('{"jsonrpc":"2.0","id":1,"method":"health","params":{}}'),
        body('{"jsonrpc":"2.0","id":"a","method":"block","params":{"height":"1"}}'),
        body('{"jsonrpc":"2.0","id":2,"method":"nope"}'),
        body("{bad"),
        body(JSON.stringify(items)),
        body(JSON.stringify(items.slice(0, 2))),
        body('[{"method":"health"}]'),
      ];
      const fast = await exchange(f, requests);
      expect(nodeHttpRequests).toBe(0);
      const slow = await exchange(f, requests.map(viaNodeHttp));
      expect(nodeHttpRequests).toBe(requests.length);
      expect(fast.map(timeless)).toEqual(slow.map(timeless));
      expect(fast[1]).toMatch(/\r\nCache-Control: public, max-age=86400\r\n/);
      expect(fast[2]).toMatch(/^HTTP\/1.1 500 Internal Server Error\r\nX-Server-Time: \d+\r\n/);
      expect(fast[9]).not.toMatch(/X-Server-Time/);
    } finally {
      unsubscribe("http.server.request.start", count);
      await f.close();
    }
  });

  test("behavior: with CORS on, answers carry Vary as node:http's do; pages and /websocket stay node:http's", async () => {
    const f = await startFakeRpc({ corsAllowedOrigins: ["http://a.example"] });
    try {
      const [fast] = await exchange(f, [get("/health")]);
      // An Origin the policy does not allow gets no CORS header: node:http's answer to the request without Origin.
      const [slow] = await exchange(f, [viaNodeHttp(get("/health"))]);
      expect(timeless(fast ?? "")).toBe(timeless(slow ?? ""));
      expect(fast).toMatch(/\r\nVary: Origin\r\n/);
      const [ws] = await exchange(f, [get("/websocket")]);
      expect(ws).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/);
      const [unknown] = await exchange(f, [get("/nope")]);
      expect(unknown).toMatch(/^HTTP\/1.1 404 Not Found\r\n/);
    } finally {
      await f.close();
    }
  });
});
