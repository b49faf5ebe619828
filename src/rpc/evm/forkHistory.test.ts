import { describe, expect, test } from "vitest";
import { EncodedJson, parseJson, type RpcMessage, type WireValue } from "../jsonrpc/index.js";
import { forkHistoryCall } from "./forkHistory.js";
import { decodeArgs } from "./method.js";
import { findMethod } from "./namespaces/index.js";
import type { EvmServices } from "./services.js";

/**
 * Which requests of a forked chain go to its source (forkHistory.ts): the boundary between the fork
 * block and the chain's own blocks, tags, and eth_getLogs split across it. The chain here answers
 * only what routing asks (its head, its fork block, which hashes it holds); the source records what
 * it was asked. test/integration/fork.test.ts runs the same against real nodes.
 */

const TOP = 10;
const HEAD = 12;
const LOCAL_HASH = `0x${"11".repeat(32)}`;

function chain(fork: boolean): { services: EvmServices; asked: [string, unknown[]][] } {
  const asked: [string, unknown[]][] = [];
  const services = {
    dev: {},
    chain: {
      latestHeight: () => HEAD,
      forkBlock: () => (fork ? TOP : undefined),
      blockByHash: (h: Uint8Array) => (Buffer.from(h).toString("hex") === LOCAL_HASH.slice(2) ? {} : undefined),
      fromForkSource: (method: string, params: unknown[]) => {
        asked.push([method, params]);
        return method === "eth_getLogs" ? [{ from: "source" }] : "from source";
      },
    },
  } as unknown as EvmServices;
  return { services, asked };
}

function call(
  services: EvmServices,
  method: string,
  params: unknown[],
  here: (args: readonly unknown[]) => WireValue = () => "here",
): unknown {
  const msg: RpcMessage = {
    kind: "call",
    idJson: "1",
    id: undefined,
    method,
    params: parseJson(JSON.stringify(params)),
  };
  const m = findMethod(method, new Set(["eth", "debug"]));
  return forkHistoryCall(msg, decodeArgs(m, msg.params), services, here);
}

describe("forkHistoryCall", () => {
  test("behavior: blocks at or below the fork block go to the source, with tags replaced by numbers", () => {
    const { services, asked } = chain(true);
    expect(call(services, "eth_getBlockByNumber", ["0xa", false])).toBe("from source");
    expect(call(services, "eth_getBlockByNumber", ["earliest", true])).toBe("from source");
    expect(call(services, "eth_getBlockByNumber", ["0xb", false])).toBeUndefined();
    expect(call(services, "eth_getBlockByNumber", ["latest", false])).toBeUndefined();
    expect(asked).toEqual([
      ["eth_getBlockByNumber", ["0xa", false]],
      ["eth_getBlockByNumber", ["0x0", true]],
    ]);
  });

  test("behavior: state below the fork block goes to the source; at the fork block (the genesis) and by hash it stays", () => {
    const { services, asked } = chain(true);
    const who = `0x${"aa".repeat(20)}`;
    expect(call(services, "eth_getBalance", [who, "0x9"])).toBe("from source");
    expect(call(services, "eth_getBalance", [who, "0xa"])).toBeUndefined();
    expect(call(services, "eth_getBalance", [who, { blockHash: LOCAL_HASH }])).toBeUndefined();
    expect(call(services, "eth_getTransactionCount", [who, "pending"])).toBeUndefined();
    expect(call(services, "eth_call", [{ to: who }])).toBeUndefined();
    expect(call(services, "eth_call", [{ to: who, data: "0x01" }, "0x1"])).toBe("from source");
    expect(asked).toEqual([
      ["eth_getBalance", [who, "0x9"]],
      ["eth_call", [{ to: who, data: "0x01" }, "0x1"]],
    ]);
  });

  test("behavior: eth_getLogs across the fork joins the source's part and the chain's, in that order", async () => {
    const { services, asked } = chain(true);
    const here = (args: readonly unknown[]) => {
      const from = (args[0] as { fromBlock?: { number: number } }).fromBlock?.number ?? null;
      return new EncodedJson(`[{"from":"here","fromBlock":${from}}]`);
    };
    const joined = call(services, "eth_getLogs", [{ fromBlock: "0x2", toBlock: "latest", topics: [] }], here);
    expect(JSON.parse((joined as EncodedJson).text)).toEqual([
      { from: "source" },
      { from: "here", fromBlock: TOP + 1 },
    ]);
    expect(asked).toEqual([["eth_getLogs", [{ fromBlock: "0x2", toBlock: "0xa", topics: [] }]]]);
    // Wholly before the fork: the source alone; wholly after: the chain alone.
    expect(call(services, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "0x3" }], here)).toEqual([{ from: "source" }]);
    expect(call(services, "eth_getLogs", [{ fromBlock: "0xb" }], here)).toBeUndefined();
    // Ranges the chain refuses stay with it (reversed, past the head, pending).
    expect(call(services, "eth_getLogs", [{ fromBlock: "0x5", toBlock: "0x2" }], here)).toBeUndefined();
    expect(call(services, "eth_getLogs", [{ fromBlock: "0x5", toBlock: "0x20" }], here)).toBeUndefined();
    expect(call(services, "eth_getLogs", [{ fromBlock: "0x5", toBlock: "pending" }], here)).toBeUndefined();
    // A block hash the chain holds is its own; another goes to the source.
    expect(call(services, "eth_getLogs", [{ blockHash: LOCAL_HASH }], here)).toBeInstanceOf(EncodedJson);
    expect(call(services, "eth_getLogs", [{ blockHash: `0x${"22".repeat(32)}` }], here)).toEqual([{ from: "source" }]);
  });

  test("behavior: a chain that is no fork answers everything itself", () => {
    const { services, asked } = chain(false);
    expect(call(services, "eth_getBlockByNumber", ["0x0", false])).toBeUndefined();
    expect(call(services, "eth_getLogs", [{ fromBlock: "0x0" }])).toBeUndefined();
    expect(asked).toEqual([]);
  });
});
