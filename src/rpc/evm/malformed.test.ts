import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { NAMESPACES } from "./namespaces/index.js";
import { httpPost, WsClient } from "./testing/evmClient.js";
import { type FakeEvmRpc, startFakeEvmRpc } from "./testing/startFakeEvmRpc.js";
import { EVM_TRANSPORTS, type EvmTransport } from "./testing/transports.js";

/**
 * Generated malformed requests over both transports: bad hex, odd-length data, leading zeros,
 * wrong arity, unknown block tags, bad envelopes, garbage and oversized batches. Each must get
 * the right JSON-RPC error code, and the server must keep answering afterwards.
 */

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  readonly name: string;
  /** A request object/array, or raw text. */
  readonly payload: unknown;
  readonly code: number;
  /** Message pattern, when the case pins one. */
  readonly message?: RegExp;
}

const ADDR = `0x${"11".repeat(20)}`;
const HASH = `0x${"22".repeat(32)}`;
const BATCH_LIMIT = 20;

const BAD_ADDRESSES: unknown[] = [
  "0x12",
  "abc",
  `0x${"g".repeat(40)}`,
  `0x${"0".repeat(39)}`,
  `0x${"0".repeat(42)}`,
  `${"1".repeat(40)}`,
  "",
  "0x",
  12,
  true,
  {},
  [],
  null,
];
const BAD_HASHES: unknown[] = [
  "0x12",
  "0xabc",
  HASH.slice(2),
  `0x${"zz".repeat(32)}`,
  `${HASH}00`,
  `0x${"2".repeat(63)}`,
  "",
  42,
  false,
  null,
  { hash: HASH },
];
const BAD_DATA: unknown[] = ["0x1", "0xabc", "abcd", "0xzz", "0x 0", 5, true, {}, [], null];
const BAD_QUANTITIES: unknown[] = ["0x00", "0x01", "0x0001", "0x", "1", "0xg", 1, `0x${"f".repeat(17)}`, null, {}];
const BAD_BLOCKS: unknown[] = [
  "newest",
  "Latest",
  "LATEST",
  "head",
  "",
  "0x00",
  "0x01",
  "1",
  1,
  true,
  [],
  `0x${"f".repeat(17)}`,
  "safe ",
  "0x",
  "0xq",
];
const BAD_BLOCK_OBJECTS: unknown[] = [
  {},
  { blockNumber: "0x01" },
  { blockNumber: "latest!" },
  { blockHash: "0x12" },
  { blockHash: HASH, blockNumber: "0x1" },
  { blockHash: 7 },
];

function buildCases(): Case[] {
  const cases: Case[] = [];
  const add = (name: string, method: string, params: unknown, code = -32602, message?: RegExp) =>
    cases.push({
      name,
      payload: { jsonrpc: "2.0", id: cases.length + 1, method, params },
      code,
      ...(message ? { message } : {}),
    });

  const paramCase = (method: string, template: unknown[], pos: number, values: unknown[], tag: string) => {
    for (const v of values) {
      const params = [...template];
      params[pos] = v;
      add(
        `${tag} ${method}[${pos}]=${JSON.stringify(v)}`,
        method,
        params,
        -32602,
        new RegExp(`^(invalid argument ${pos}: |missing value)`),
      );
    }
  };

  // Bad addresses.
  const addressMethods: [string, unknown[], number][] = [
    ["eth_getBalance", [ADDR, "latest"], 0],
    ["eth_getCode", [ADDR, "latest"], 0],
    ["eth_getTransactionCount", [ADDR, "latest"], 0],
    ["eth_getStorageAt", [ADDR, "0x0", "latest"], 0],
    ["eth_getProof", [ADDR, [], "latest"], 0],
    ["txpool_contentFrom", [ADDR], 0],
    ["eth_sign", [ADDR, "0x00"], 0],
    ["personal_lockAccount", [ADDR], 0],
    ["personal_sign", ["0x00", ADDR, "pw"], 1],
    ["miner_setEtherbase", [ADDR], 0],
    ["eth_signTypedData", [ADDR, {}], 0],
  ];
  for (const [m, t, pos] of addressMethods) paramCase(m, t, pos, BAD_ADDRESSES, "address");

  // Bad hashes.
  const hashMethods: [string, unknown[], number][] = [
    ["eth_getBlockByHash", [HASH, false], 0],
    ["eth_getTransactionByHash", [HASH], 0],
    ["eth_getTransactionReceipt", [HASH], 0],
    ["eth_getBlockTransactionCountByHash", [HASH], 0],
    ["eth_getUncleCountByBlockHash", [HASH], 0],
    ["eth_getTransactionByBlockHashAndIndex", [HASH, "0x0"], 0],
    ["eth_getUncleByBlockHashAndIndex", [HASH, "0x0"], 0],
    ["eth_getTransactionLogs", [HASH], 0],
    ["eth_getHeaderByHash", [HASH], 0],
    ["debug_traceTransaction", [HASH], 0],
    ["debug_traceBlockByHash", [HASH], 0],
  ];
  for (const [m, t, pos] of hashMethods) paramCase(m, t, pos, BAD_HASHES, "hash");

  // Odd-length and otherwise bad data.
  const dataMethods: [string, unknown[], number][] = [
    ["eth_sendRawTransaction", ["0xc0"], 0],
    ["web3_sha3", ["0x00"], 0],
    ["eth_sign", [ADDR, "0x00"], 1],
    ["personal_ecRecover", ["0x00", "0x00"], 0],
    ["personal_ecRecover", ["0x00", "0x00"], 1],
    ["debug_traceBlock", ["0xc0"], 0],
  ];
  for (const [m, t, pos] of dataMethods) paramCase(m, t, pos, BAD_DATA, "data");

  // Quantities with leading zeros and other bad numbers.
  const quantityMethods: [string, unknown[], number][] = [
    ["eth_getTransactionByBlockNumberAndIndex", ["0x1", "0x0"], 1],
    ["eth_getTransactionByBlockHashAndIndex", [HASH, "0x0"], 1],
    ["eth_getUncleByBlockNumberAndIndex", ["0x1", "0x0"], 1],
    ["eth_getUncleByBlockHashAndIndex", [HASH, "0x0"], 1],
    ["debug_printBlock", ["0x1"], 0],
  ];
  for (const [m, t, pos] of quantityMethods) paramCase(m, t, pos, BAD_QUANTITIES, "quantity");
  // 256-bit quantities: 17 hex digits are fine there, 65 are not.
  const bigValues = [...BAD_QUANTITIES.filter((v) => v !== `0x${"f".repeat(17)}`), `0x1${"0".repeat(64)}`];
  for (const m of ["miner_setGasPrice", "miner_setGasLimit"]) paramCase(m, ["0x1"], 0, bigValues, "quantity");

  // Unknown tags and bad block numbers (rpc.BlockNumber).
  const blockMethods: [string, unknown[], number][] = [
    ["eth_getBlockByNumber", ["latest", false], 0],
    ["eth_getBlockTransactionCountByNumber", ["latest"], 0],
    ["eth_getUncleCountByBlockNumber", ["latest"], 0],
    ["eth_getHeaderByNumber", ["latest"], 0],
    ["eth_getTransactionByBlockNumberAndIndex", ["latest", "0x0"], 0],
    ["eth_getUncleByBlockNumberAndIndex", ["latest", "0x0"], 0],
    ["eth_feeHistory", ["0x1", "latest", []], 1],
    ["debug_traceBlockByNumber", ["latest"], 0],
  ];
  for (const [m, t, pos] of blockMethods) paramCase(m, t, pos, [...BAD_BLOCKS, { blockNumber: "0x1" }, null], "block");

  // Block number-or-hash parameters (EIP-1898 objects included).
  const refMethods: [string, unknown[], number][] = [
    ["eth_getBalance", [ADDR, "latest"], 1],
    ["eth_getCode", [ADDR, "latest"], 1],
    ["eth_getTransactionCount", [ADDR, "latest"], 1],
    ["eth_getStorageAt", [ADDR, "0x0", "latest"], 2],
    ["eth_getProof", [ADDR, [], "latest"], 2],
    ["eth_call", [{}, "latest"], 1],
    ["eth_estimateGas", [{}, "latest"], 1],
    ["eth_createAccessList", [{}, "latest"], 1],
    ["eth_getBlockReceipts", ["latest"], 0],
    ["debug_traceCall", [{}, "latest"], 1],
  ];
  for (const [m, t, pos] of refMethods) paramCase(m, t, pos, [...BAD_BLOCKS, ...BAD_BLOCK_OBJECTS], "ref");

  // Transaction-argument fields.
  const fields: [string, unknown[]][] = [
    ["from", ["0x12", 1, `0x${"0".repeat(41)}`, "zz"]],
    ["to", ["0x12", true, `0x${"g".repeat(40)}`]],
    ["gas", ["0x05", "5", "0x", 21000, `0x${"f".repeat(17)}`]],
    ["nonce", ["0x00", "1", {}]],
    ["gasPrice", ["0x01", "100", 100]],
    ["maxFeePerGas", ["0x0a", "gwei"]],
    ["maxPriorityFeePerGas", ["0x00"]],
    ["value", ["0x00ff", `0x1${"0".repeat(64)}`, -1]],
    ["data", ["0x1", "0xabc", "abc", 12]],
    ["input", ["0x123", "zz"]],
    ["chainId", ["0x0001", "262144"]],
    ["accessList", [{}, "x", [{ address: "0x12" }], [{ storageKeys: ["0x1"] }]]],
  ];
  for (const method of ["eth_call", "eth_estimateGas", "eth_createAccessList", "debug_traceCall"]) {
    for (const [field, values] of fields) {
      for (const v of values) {
        add(
          `args ${method}.${field}=${JSON.stringify(v)}`,
          method,
          [{ [field]: v }, "latest"],
          -32602,
          /^invalid argument 0: /,
        );
      }
    }
    for (const v of ["x", 5, true, []]) add(`args ${method}=${JSON.stringify(v)}`, method, [v, "latest"]);
  }
  for (const v of [
    { [ADDR]: { balance: "0x01" } },
    { "0x12": {} },
    { [ADDR]: { state: {}, stateDiff: {} } },
    { [ADDR]: { code: "0x1" } },
    7,
  ]) {
    add(`overrides ${JSON.stringify(v)}`, "eth_call", [{}, "latest", v], -32602, /^invalid argument 2: /);
  }

  // Filter criteria.
  const badFilters: unknown[] = [
    { address: "0x12" },
    { address: ["0x12"] },
    { address: [1] },
    { address: 5 },
    { topics: ["0x12"] },
    { topics: [[`0x${"1".repeat(63)}`]] },
    { topics: [5] },
    { topics: [null, null, null, null, null] },
    { topics: "x" },
    { fromBlock: "newest" },
    { toBlock: "0x01" },
    { blockHash: "0x12" },
    { blockHash: HASH, fromBlock: "0x1" },
    { blockHash: HASH, toBlock: "latest" },
    "x",
    5,
    [],
  ];
  for (const method of ["eth_getLogs", "eth_newFilter"]) {
    for (const fc of badFilters)
      add(`filter ${method} ${JSON.stringify(fc)}`, method, [fc], -32602, /^invalid argument 0: /);
  }

  // Wrong arity: one argument too many, and each missing required argument.
  for (const [ns, table] of Object.entries(NAMESPACES)) {
    for (const [short, m] of Object.entries(table)) {
      // A guarded method this node cannot serve (a dev chain's) answers -32601 before its params are read.
      if (m.ignoresParams === true || m.wsOnly === true || m.guard !== undefined) continue;
      const name = `${ns}_${short}`;
      const extra = Array.from({ length: m.params.length + 1 }, () => null);
      add(`arity ${name} +1`, name, extra, -32602, new RegExp(`^too many arguments, want at most ${m.params.length}$`));
      const required = m.params.filter((p) => !p.optional).length;
      if (required > 0) {
        add(`arity ${name} none`, name, [], -32602, /^missing value for required argument 0$/);
      }
    }
  }

  // Envelopes.
  const id = () => cases.length + 1;
  const raw = (name: string, payload: unknown, code: number) => cases.push({ name, payload, code });
  raw("jsonrpc 1.0", { jsonrpc: "1.0", id: id(), method: "eth_chainId" }, -32600);
  raw("jsonrpc missing", { id: id(), method: "eth_chainId" }, -32600);
  raw("jsonrpc number", { jsonrpc: 2, id: id(), method: "eth_chainId" }, -32700);
  raw("method empty", { jsonrpc: "2.0", id: id(), method: "" }, -32600);
  raw("method missing", { jsonrpc: "2.0", id: id() }, -32600);
  raw("method number", { jsonrpc: "2.0", id: id(), method: 7 }, -32700);
  raw("method object", { jsonrpc: "2.0", id: id(), method: {} }, -32700);
  raw("id object", { jsonrpc: "2.0", id: { a: 1 }, method: "eth_chainId" }, -32600);
  raw("id array", { jsonrpc: "2.0", id: [1], method: "eth_chainId" }, -32600);
  for (const params of [{}, "x", 5, true]) {
    raw(`params ${JSON.stringify(params)}`, { jsonrpc: "2.0", id: id(), method: "eth_blockNumber", params }, -32602);
  }
  for (const top of ["5", '"x"', "true"]) raw(`top-level ${top}`, top, -32700);
  // geth decodes a top-level null into an empty message: invalid request.
  raw("top-level null", "null", -32600);

  // Garbage and truncated JSON.
  const valid = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [ADDR, "latest"] });
  for (let cut = 1; cut < valid.length; cut += 3) raw(`truncated@${cut}`, valid.slice(0, cut), -32700);
  const rand = rng(0xe7e7);
  const alphabet = '{}[]":,0123456789abcdefxyz \\ntrue-null';
  for (let i = 0; i < 80; i++) {
    let s = "";
    const len = 1 + Math.floor(rand() * 40);
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(rand() * alphabet.length)];
    try {
      JSON.parse(s);
    } catch {
      raw(`garbage ${JSON.stringify(s)}`, s, -32700);
    }
  }

  // Oversized batches.
  for (const size of [BATCH_LIMIT + 1, BATCH_LIMIT + 2, BATCH_LIMIT * 2, BATCH_LIMIT * 10, 1000]) {
    const batch = Array.from({ length: size }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "eth_chainId" }));
    raw(`batch of ${size}`, batch, -32600);
  }
  return cases;
}

const CASES = buildCases();

describe.each(EVM_TRANSPORTS)("malformed requests over %s", (transport: EvmTransport) => {
  let f: FakeEvmRpc;
  beforeAll(async () => {
    f = await startFakeEvmRpc({ batchRequestLimit: BATCH_LIMIT, wsMaxMessageBytes: 5 * 1024 * 1024 });
  });
  afterAll(() => f.close());

  test("behavior: at least 1000 generated cases", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(1000);
  });

  test("error: every malformed request gets the right JSON-RPC error", async () => {
    const ws = transport === "ws" ? await WsClient.connect(f.wsUrl) : undefined;
    const failures: string[] = [];
    try {
      for (const c of CASES) {
        const text = typeof c.payload === "string" ? c.payload : JSON.stringify(c.payload);
        // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
        let body: any;
        if (ws === undefined) {
          const reply = await httpPost(f.url, text);
          if (reply.status !== 200) {
            failures.push(`${c.name}: HTTP ${reply.status}`);
            continue;
          }
          body = reply.body;
        } else {
          ws.send(text);
          body = await ws.next();
        }
        const answer = Array.isArray(body) ? body[0] : body;
        const error = answer?.error;
        if (error?.code !== c.code) {
          failures.push(`${c.name}: expected ${c.code}, got ${JSON.stringify(body).slice(0, 200)}`);
        } else if (c.message !== undefined && !c.message.test(error.message)) {
          failures.push(`${c.name}: message ${JSON.stringify(error.message)} does not match ${c.message}`);
        } else if (Array.isArray(body) && body.length !== 1) {
          failures.push(`${c.name}: expected a one-element batch answer`);
        }
      }
      // Still serving.
      const check =
        ws === undefined
          ? (await httpPost(f.url, { jsonrpc: "2.0", id: 1, method: "eth_chainId" })).body
          : await ws.call("eth_chainId");
      expect(check.result).toBe("0x40000");
    } finally {
      await ws?.close();
    }
    expect(failures).toEqual([]);
  });
});
