import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { silentLogger } from "../../../util/logger.js";
import { toData } from "../encode/hex.js";
import { EvmRpcConfigError } from "../errors.js";
import { httpPost, rpcCall, WsClient } from "../testing/evmClient.js";
import { createFakeNode, SLOW } from "../testing/fakeServices.js";
import { type FakeEvmRpc, startFakeEvmRpc, TEST_EVM_CONFIG } from "../testing/startFakeEvmRpc.js";
import { startEvmRpc } from "./server.js";

/** HTTP and WebSocket transports: envelope, batches, limits, CORS, timeouts, connection limits. */

const req = (id: unknown, method: string, params: unknown[] = []) => ({ jsonrpc: "2.0", id, method, params });

describe("http transport", () => {
  let f: FakeEvmRpc;
  beforeAll(async () => {
    f = await startFakeEvmRpc({ batchRequestLimit: 5, batchResponseMaxSize: 2000 });
  });
  afterAll(() => f.close());

  test("default: port 0 reports the bound ports", () => {
    expect(f.rpc.httpAddress).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(f.rpc.wsAddress).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(f.rpc.wsAddress).not.toBe(f.rpc.httpAddress);
  });

  test("default: ids are echoed verbatim; Content-Type application/json", async () => {
    for (const id of [1, "abc", null, 1.5, -7, "", 2 ** 60]) {
      const r = await httpPost(f.url, req(id, "eth_chainId"));
      expect(r.status).toBe(200);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.body).toEqual({ jsonrpc: "2.0", id, result: "0x40000" });
    }
    const big = await httpPost(f.url, '{"jsonrpc":"2.0","id":12345678901234567890,"method":"eth_chainId"}');
    expect(big.text).toBe('{"jsonrpc":"2.0","id":12345678901234567890,"result":"0x40000"}');
  });

  test("error: envelope problems", async () => {
    expect((await httpPost(f.url, "{")).body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "parse error" },
    });
    expect((await httpPost(f.url, { jsonrpc: "1.0", id: 3, method: "eth_chainId" })).body).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32600, message: "invalid request" },
    });
    expect((await httpPost(f.url, { id: 3, method: "eth_chainId" })).body.error.code).toBe(-32600);
    expect((await httpPost(f.url, { jsonrpc: "2.0", id: { a: 1 }, method: "eth_chainId" })).body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "invalid request" },
    });
    expect((await httpPost(f.url, { jsonrpc: "2.0", id: 1, method: 5 })).body.error.code).toBe(-32700);
    expect(
      (await httpPost(f.url, { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: { a: 1 } })).body.error,
    ).toEqual({
      code: -32602,
      message: "non-array args",
    });
  });

  test("default: notifications get no answer", async () => {
    const r = await httpPost(f.url, { jsonrpc: "2.0", method: "eth_chainId" });
    expect(r.status).toBe(200);
    expect(r.text).toBe("");
    const batch = await httpPost(f.url, [{ jsonrpc: "2.0", method: "eth_chainId" }]);
    expect(batch.text).toBe("");
  });

  test("default: batches answer in order without notifications", async () => {
    const r = await httpPost(f.url, [
      req(1, "eth_chainId"),
      { jsonrpc: "2.0", method: "eth_blockNumber" },
      req("two", "eth_nope"),
      { jsonrpc: "2.0", id: 3 },
      req(4, "net_version"),
    ]);
    expect(r.body).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0x40000" },
      {
        jsonrpc: "2.0",
        id: "two",
        error: { code: -32601, message: "the method eth_nope does not exist/is not available" },
      },
      { jsonrpc: "2.0", id: 3, error: { code: -32600, message: "invalid request" } },
      { jsonrpc: "2.0", id: 4, result: "262144" },
    ]);
  });

  test("error: empty batch, batch too large, response too large", async () => {
    expect((await httpPost(f.url, "[]")).body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "empty batch" },
    });
    const tooMany = await httpPost(f.url, [
      { jsonrpc: "2.0", method: "x" },
      ...[7, 8, 9, 10, 11].map((i) => req(i, "eth_chainId")),
    ]);
    expect(tooMany.body).toEqual([{ jsonrpc: "2.0", id: 7, error: { code: -32600, message: "batch too large" } }]);
    const blocks = await httpPost(
      f.url,
      [1, 2, 3, 4].map((i) => req(i, "eth_getBlockByNumber", ["0x1", true])),
    );
    const [first, ...rest] = blocks.body as { error?: { code: number; message: string }; result?: unknown }[];
    expect(first?.result).toBeDefined();
    expect(rest.every((r) => r.error?.code === -32003 && r.error.message === "response too large")).toBe(true);
  });

  test("error: HTTP methods, paths, content types and body size", async () => {
    expect((await httpPost(f.url, undefined, { method: "GET" })).status).toBe(405);
    expect((await httpPost(f.url, req(1, "eth_chainId"), { path: "/rpc" })).status).toBe(404);
    const text = await httpPost(f.url, req(1, "eth_chainId"), { headers: { "Content-Type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(text.text).toBe("invalid content type, only application/json is supported\n");
    for (const ct of ["application/json; charset=utf-8", "application/json-rpc", "application/jsonrequest"]) {
      expect((await httpPost(f.url, req(1, "eth_chainId"), { headers: { "Content-Type": ct } })).status).toBe(200);
    }
    const huge = `[${Array.from({ length: 120_000 }, () => JSON.stringify(req(1, "eth_chainId"))).join(",")}]`;
    const big = await httpPost(f.url, huge);
    expect(big.status).toBe(413);
    expect(big.text).toMatch(/^content length too large \(\d+>5242880\)\n$/);
  });

  test("error: a chunked body over the limit", async () => {
    const small = await startFakeEvmRpc({ maxBodyBytes: 1000 });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const r = httpRequest(
          `${small.url}/`,
          { method: "POST", headers: { "Content-Type": "application/json" } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        r.on("error", reject);
        r.write(JSON.stringify([req(1, "eth_chainId")]).repeat(1));
        r.write(" ".repeat(2000));
        r.end();
      });
      expect(status).toBe(413);
    } finally {
      await small.close();
    }
  });

  test("default: CORS like Cosmos EVM (any origin, GET/POST/HEAD)", async () => {
    const pre = await httpPost(f.url, undefined, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
    expect(pre.headers["access-control-allow-methods"]).toBe("POST");
    expect(pre.headers["access-control-allow-headers"]).toBe("content-type");
    const refused = await httpPost(f.url, undefined, {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "DELETE" },
    });
    expect(refused.status).toBe(204);
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined();
    const actual = await httpPost(f.url, req(1, "eth_chainId"), { headers: { Origin: "https://app.example" } });
    expect(actual.headers["access-control-allow-origin"]).toBe("*");
    expect(actual.headers.vary).toBe("Origin");
  });

  test("error: the HTTP port refuses WebSocket upgrades; the WS port refuses plain HTTP", async () => {
    await expect(WsClient.connect(`ws://${f.rpc.httpAddress}`)).rejects.toThrow();
    expect((await httpPost(`http://${f.rpc.wsAddress}`, req(1, "eth_chainId"))).status).toBe(400);
  });
});

describe("timeouts and connection limits", () => {
  let f: FakeEvmRpc | undefined;
  afterEach(async () => {
    await f?.close();
    f = undefined;
  });

  test("error: calls past http-timeout answer -32002", async () => {
    f = await startFakeEvmRpc({ httpTimeoutMs: 400, evmTimeoutMs: 0 });
    const single = await rpcCall(f.url, "eth_call", [{ to: toData(SLOW) }, "latest"]);
    expect(single.error).toEqual({ code: -32002, message: "request timed out" });
    const batch = await httpPost(f.url, [
      req(1, "eth_chainId"),
      req(2, "eth_call", [{ to: toData(SLOW) }, "latest"]),
      req(3, "eth_chainId"),
    ]);
    expect(batch.body).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0x40000" },
      { jsonrpc: "2.0", id: 2, error: { code: -32002, message: "request timed out" } },
      { jsonrpc: "2.0", id: 3, error: { code: -32002, message: "request timed out" } },
    ]);
  });

  test("behavior: max-open-connections makes extra connections wait", async () => {
    f = await startFakeEvmRpc({ maxOpenConnections: 1 });
    const [host, port] = f.rpc.httpAddress.split(":") as [string, string];
    const holder: Socket = connect(Number(port), host);
    await new Promise((r) => holder.once("connect", r));
    await new Promise((r) => setTimeout(r, 50));
    let answered = false;
    const pending = rpcCall(f.url, "eth_chainId").then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(answered).toBe(false);
    holder.destroy();
    expect((await pending).result).toBe("0x40000");
  });

  test("behavior: idle keep-alive connections close after http-idle-timeout", async () => {
    f = await startFakeEvmRpc({ httpIdleTimeoutMs: 200 });
    const [host, port] = f.rpc.httpAddress.split(":") as [string, string];
    const socket = connect(Number(port), host);
    const body = JSON.stringify(req(1, "eth_chainId"));
    socket.write(
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const closed = new Promise<number>((resolve) => {
      const start = Date.now();
      socket.on("close", () => resolve(Date.now() - start));
    });
    socket.resume();
    expect(await closed).toBeLessThan(5000);
  });
});

describe("websocket transport", () => {
  let f: FakeEvmRpc;
  beforeAll(async () => {
    f = await startFakeEvmRpc({ wsMaxMessageBytes: 64 * 1024 });
  });
  afterAll(() => f.close());

  test("default: every method, batches and ids over the socket", async () => {
    const ws = await WsClient.connect(f.wsUrl);
    expect(await ws.call("eth_chainId")).toEqual({ jsonrpc: "2.0", id: 1, result: "0x40000" });
    ws.send({ jsonrpc: "2.0", id: "x", method: "net_version" });
    expect(await ws.next((m) => m.id === "x")).toEqual({ jsonrpc: "2.0", id: "x", result: "262144" });
    ws.send([req(10, "eth_blockNumber"), req(11, "eth_chainId")]);
    const batch = await ws.next((m) => Array.isArray(m));
    expect(batch.map((m: { id: number }) => m.id)).toEqual([10, 11]);
    ws.ws.send(Buffer.from(JSON.stringify(req(12, "eth_chainId"))), { binary: true });
    expect((await ws.next((m) => m.id === 12)).result).toBe("0x40000");
    await ws.close();
  });

  test("error: garbage frames get parse errors and the socket stays open", async () => {
    const ws = await WsClient.connect(f.wsUrl);
    for (const garbage of ["{", "not json", "\u0000\u0001", "[1,", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"']) {
      ws.send(garbage);
      expect(await ws.next()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
    }
    expect((await ws.call("eth_chainId")).result).toBe("0x40000");
    await ws.close();
  });

  test("error: a frame over the read limit closes the connection", async () => {
    const ws = await WsClient.connect(f.wsUrl);
    ws.send("x".repeat(70 * 1024));
    await expect(ws.next(() => true, 2000)).rejects.toThrow(/socket closed \(1009\)/);
  });

  test("error: origins and paths", async () => {
    await expect(WsClient.connect(f.wsUrl, { Origin: "https://evil.example" })).rejects.toThrow(/403/);
    const local = await WsClient.connect(f.wsUrl, { Origin: "http://localhost:3000" });
    await local.close();
    await expect(WsClient.connect(`${f.wsUrl}/other`)).rejects.toThrow(/404/);
    const any = await startFakeEvmRpc({ wsOrigins: ["*"] });
    try {
      const ok = await WsClient.connect(any.wsUrl, { Origin: "https://evil.example" });
      await ok.close();
    } finally {
      await any.close();
    }
  });

  test("behavior: close() says goodbye to WebSocket clients", async () => {
    const g = await startFakeEvmRpc();
    const ws = await WsClient.connect(g.wsUrl);
    const code = new Promise<number>((resolve) => ws.ws.once("close", (c: number) => resolve(c)));
    await g.close();
    expect(await code).toBe(1001);
  });
});

describe("one address for HTTP and WebSocket", () => {
  test("default: a unix socket serving both", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cometh-evm-"));
    const path = join(dir, "rpc.sock");
    const node = createFakeNode();
    const rpc = await startEvmRpc(
      { ...TEST_EVM_CONFIG, address: `unix://${path}`, wsAddress: `unix://${path}` },
      node.services,
      silentLogger(),
    );
    try {
      expect(rpc.httpAddress).toBe(path);
      expect(rpc.wsAddress).toBe(path);
      const body = await new Promise<string>((resolve, reject) => {
        const r = httpRequest(
          { socketPath: path, path: "/", method: "POST", headers: { "Content-Type": "application/json" } },
          (res) => {
            let text = "";
            res.on("data", (c: Buffer) => {
              text += c.toString();
            });
            res.on("end", () => resolve(text));
          },
        );
        r.on("error", reject);
        r.end(JSON.stringify(req(1, "eth_chainId")));
      });
      expect(JSON.parse(body).result).toBe("0x40000");
      const ws = new WebSocket(`ws+unix://${path}:/`);
      await new Promise((r, j) => {
        ws.once("open", r);
        ws.once("error", j);
      });
      const answer = new Promise<string>((r) => ws.once("message", (d) => r(d.toString())));
      ws.send(JSON.stringify(req(2, "net_version")));
      expect(JSON.parse(await answer).result).toBe("262144");
      ws.close();
    } finally {
      await rpc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("config", () => {
  test("error: invalid settings fail at startup naming the key", async () => {
    const node = createFakeNode();
    const start = (over: Partial<typeof TEST_EVM_CONFIG>) =>
      startEvmRpc({ ...TEST_EVM_CONFIG, ...over }, node.services, silentLogger());
    await expect(start({ api: ["eth", "bogus"] })).rejects.toThrow(
      '[json-rpc] api has unknown namespace "bogus"; valid namespaces: eth, web3, net, txpool, debug, personal, admin, miner',
    );
    await expect(start({ filterCap: -1 })).rejects.toThrow("[json-rpc] filter-cap can't be negative (got -1)");
    await expect(start({ feehistoryCap: 0 })).rejects.toThrow("[json-rpc] feehistory-cap must be positive (got 0)");
    await expect(start({ address: "nowhere" })).rejects.toBeInstanceOf(EvmRpcConfigError);
  });

  test("behavior: the node's JsonRpcConfig fits EvmRpcConfig", async () => {
    const { loadNodeConfig } = await import("../../../config/index.js");
    const dir = mkdtempSync(join(tmpdir(), "cometh-cfg-"));
    try {
      const config = loadNodeConfig(dir, { "json-rpc.address": "127.0.0.1:0", "json-rpc.ws-address": "127.0.0.1:0" });
      const rpc = await startEvmRpc(config.jsonRpc, createFakeNode().services, silentLogger());
      expect(rpc.httpAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      await rpc.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
