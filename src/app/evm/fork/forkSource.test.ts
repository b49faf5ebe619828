import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ForkSourceError } from "./errors.js";
import { ForkSource } from "./forkSource.js";
import { SyncRpcClient } from "./syncRpcClient.js";

/**
 * The source client and the lazy source against a JSON-RPC server on 127.0.0.1 that knows no
 * eth_getAccountInfo (as geth and Cosmos EVM). The server runs on a worker thread: the client blocks
 * the test's thread while it waits, as it blocks the node's.
 */

const SERVER = `
const http = require("node:http");
const { parentPort } = require("node:worker_threads");
const counts = {};
const ADDR = "0x00000000000000000000000000000000000000aa";
function answer(req) {
  counts[req.method] = (counts[req.method] ?? 0) + 1;
  const ok = (result) => ({ jsonrpc: "2.0", id: req.id, result });
  switch (req.method) {
    case "eth_chainId": return ok("0x1092");
    case "eth_blockNumber": return ok("0x10");
    case "eth_getBlockByNumber": return ok({ hash: "0x" + "ab".repeat(32), timestamp: "0x64" });
    case "eth_getBalance": return ok(req.params[0] === ADDR ? "0x1234" : "0x0");
    case "eth_getTransactionCount": return ok(req.params[0] === ADDR ? "0x7" : "0x0");
    case "eth_getCode": return ok(req.params[0] === ADDR ? "0x6000" : "0x");
    case "eth_getStorageAt": return ok("0x" + "0".repeat(62) + "2a");
    case "x_counts": return ok(counts);
    default: return { jsonrpc: "2.0", id: req.id, error: { code: -32601, message: "the method " + req.method + " does not exist/is not available" } };
  }
}
const server = http.createServer((req, res) => {
  if (req.url === "/hang") return;
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    const parsed = JSON.parse(body);
    const out = Array.isArray(parsed) ? parsed.map(answer) : answer(parsed);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(out));
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));
parentPort.on("message", () => server.close(() => process.exit(0)));
`;

let server: Worker;
let url: string;
let dir: string;
const ADDR = new Uint8Array(20);
ADDR[19] = 0xaa;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cometh-forksrc-"));
  server = new Worker(SERVER, { eval: true });
  const port = await new Promise<number>((resolve) => server.once("message", resolve));
  url = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.postMessage("stop");
  await new Promise((resolve) => server.once("exit", resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("SyncRpcClient", () => {
  test("behavior: URLs are tried in order; the one that answered is asked first next time", async () => {
    const client = new SyncRpcClient({ urls: ["http://127.0.0.1:9", url] });
    try {
      expect(client.call("eth_chainId", [])).toBe("0x1092");
      expect(client.call("eth_blockNumber", [])).toBe("0x10");
    } finally {
      await client.close();
    }
  });

  test("error: no URL answers within the timeout, the source answers an error, a URL that is not http", async () => {
    const client = new SyncRpcClient({ urls: [`${url}/hang`], timeoutMs: 200 });
    try {
      expect(() => client.call("eth_chainId", [])).toThrow(/no answer within 200 ms/);
    } finally {
      await client.close();
    }
    const plain = new SyncRpcClient({ urls: [url] });
    try {
      expect(() => plain.call("eth_nothing", [])).toThrow(ForkSourceError);
      expect(() => plain.call("eth_nothing", [])).toThrow(/answered eth_nothing with error -32601/);
    } finally {
      await plain.close();
    }
    expect(() => new SyncRpcClient({ urls: ["ws://127.0.0.1:1"] })).toThrow(/is not http\(s\)/);
  });
});

describe("ForkSource", () => {
  test("default: the head as fork block; accounts by balance/nonce/code when eth_getAccountInfo is missing; reads kept", async () => {
    const fork = ForkSource.open({ urls: [url], cacheRoot: dir });
    try {
      expect(fork.point).toEqual({
        chainId: 4242n,
        blockNumber: 16n,
        blockHash: `0x${"ab".repeat(32)}`,
        timestamp: 100n,
      });
      const a = fork.account(ADDR);
      expect(a?.balance).toBe(0x1234n);
      expect(a?.nonce).toBe(7n);
      expect(a?.code).toEqual(Uint8Array.of(0x60, 0x00));
      expect(fork.code(a?.codeHash as Uint8Array)).toEqual(Uint8Array.of(0x60, 0x00));
      expect(fork.account(new Uint8Array(20))).toBeUndefined();
      expect(fork.storage(ADDR, new Uint8Array(32))).toEqual(Uint8Array.of(0x2a));
      fork.account(ADDR);
      fork.storage(ADDR, new Uint8Array(32));
      const counts = fork.client.call("x_counts", []) as Record<string, number>;
      // One eth_getAccountInfo that learned it is missing, then one batch per account.
      expect(counts.eth_getAccountInfo).toBe(1);
      expect(counts.eth_getBalance).toBe(2);
      expect(counts.eth_getStorageAt).toBe(1);
    } finally {
      await fork.close();
    }
  });

  test("behavior: -N forks N blocks before the head; the disk cache answers a second source offline", async () => {
    const fork = ForkSource.open({ urls: [url], cacheRoot: dir, blockNumber: -6n });
    expect(fork.point.blockNumber).toBe(10n);
    fork.account(ADDR);
    await fork.close();
    const offline = ForkSource.open({ urls: ["http://127.0.0.1:9"], cacheRoot: dir, blockNumber: 10n, chainId: 4242n });
    try {
      expect(offline.point.blockHash).toBe(`0x${"ab".repeat(32)}`);
      expect(offline.account(ADDR)?.balance).toBe(0x1234n);
      expect(() => offline.storage(ADDR, new Uint8Array(32))).toThrow(/cannot be reached for eth_getStorageAt/);
    } finally {
      await offline.close();
    }
  });

  test("behavior: chain id 31337 is not cached on disk; error: a distance past the first block", async () => {
    const local = ForkSource.open({ urls: [url], cacheRoot: dir, chainId: 31337n, blockNumber: 3n });
    expect(local.cacheFile).toBeUndefined();
    await local.close();
    expect(() => ForkSource.open({ urls: [url], blockNumber: -17n })).toThrow(/before the source's first block/);
  });
});
