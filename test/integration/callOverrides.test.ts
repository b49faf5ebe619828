import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InProcessEvmNode, startInProcessEvmNode } from "./inProcessNode.js";

/**
 * Calls with state overrides while blocks commit: every answer must equal the quiet chain's. A call
 * that ran across a commit used to lose its override (issue: eth_call answered "0x", as for an
 * address without code).
 */

const TARGET = "0x00000000000000000000000000000000c0ffee01";
/** PUSH1 42 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN */
const RETURNS_42 = "0x602a60005260206000f3";
const FORTY_TWO = `0x${"2a".padStart(64, "0")}`;
const OVERRIDE = { [TARGET]: { code: RETURNS_42 } };
const MULTICALL3 = "0xca11bde05977b3631167028862be2a173976ca11";
/** getChainId() */
const GET_CHAIN_ID = "0x3408e470";
/** getBlockNumber() */
const GET_BLOCK_NUMBER = "0x42cbb15c";
const FROM = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

function word(v: number): string {
  return `0x${v.toString(16).padStart(64, "0")}`;
}

function toQuantity(v: number): string {
  return `0x${v.toString(16)}`;
}

let n: InProcessEvmNode;
let id = 0;

async function rpc(method: string, params: unknown[]): Promise<{ result?: unknown; error?: { message: string } }> {
  const res = await fetch(n.evmHttpUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { message: string } };
}

async function blockNumber(): Promise<number> {
  return Number((await rpc("eth_blockNumber", [])).result);
}

beforeAll(async () => {
  // A block every ~20 ms: many commits land while calls run.
  n = await startInProcessEvmNode("eth,net,web3,debug", { "--consensus.timeout_commit": "10ms" });
});

afterAll(async () => {
  await n?.close();
});

/**
 * Runs `clients` loops of at least `rounds` requests each, concurrently, while the chain keeps
 * committing; a loop goes on (up to 20× `rounds`) until two blocks have committed since the start.
 */
async function underCommits(clients: number, rounds: number, one: (client: number, i: number) => Promise<void>) {
  const start = await blockNumber();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < rounds * 20; i++) {
        if (i >= rounds && (await blockNumber()) - start >= 2) break;
        await one(c, i);
      }
    }),
  );
  // The point of the test: blocks were committed while the calls ran.
  expect((await blockNumber()) - start).toBeGreaterThanOrEqual(2);
}

describe("state overrides while blocks commit", () => {
  test("eth_call: every overridden call answers what it answers on a quiet chain", async () => {
    const wrong: unknown[] = [];
    await underCommits(8, 150, async (c, i) => {
      // Distinct plain calls (never memoized) interleave with the overridden ones.
      const pad = (c * 1000 + i).toString(16).padStart(64, "0");
      const plain = await rpc("eth_call", [{ to: MULTICALL3, data: `${GET_CHAIN_ID}${pad}` }, "latest"]);
      expect(plain.result).toBe(word(262144));
      const r = await rpc("eth_call", [{ to: TARGET, data: `0x${pad}` }, "latest", OVERRIDE]);
      if (r.result !== FORTY_TWO) wrong.push(r);
    });
    expect(wrong).toEqual([]);
  });

  test("eth_estimateGas, eth_createAccessList, debug_traceCall and pending calls keep their overrides", async () => {
    const quiet = {
      estimate: (await rpc("eth_estimateGas", [{ from: FROM, to: TARGET, data: "0x01" }, "latest", OVERRIDE])).result,
      access: (await rpc("eth_createAccessList", [{ from: FROM, to: TARGET, data: "0x01" }, "latest", OVERRIDE]))
        .result,
    };
    // More than 21000 + 16 for one non-zero byte: the override's code ran.
    expect(BigInt(quiet.estimate as string)).toBeGreaterThan(21016n + 17n);
    const fixed = (await blockNumber()) - 1;
    const wrong: unknown[] = [];
    await underCommits(4, 60, async (_c, i) => {
      const [est, acc, trace, pending] = await Promise.all([
        rpc("eth_estimateGas", [{ from: FROM, to: TARGET, data: "0x01" }, "latest", OVERRIDE]),
        rpc("eth_createAccessList", [{ from: FROM, to: TARGET, data: "0x01" }, "latest", OVERRIDE]),
        // Cosmos EVM's debug_traceCall takes no overrides: it must see the block it names.
        rpc("debug_traceCall", [
          { from: FROM, to: MULTICALL3, data: `${GET_BLOCK_NUMBER}${i.toString(16).padStart(64, "0")}` },
          toQuantity(fixed),
          { tracer: "callTracer" },
        ]),
        rpc("eth_call", [{ to: TARGET, data: `0x${i.toString(16).padStart(4, "0")}` }, "pending", OVERRIDE]),
      ]);
      if (est.result !== quiet.estimate) wrong.push({ est });
      if (JSON.stringify(acc.result) !== JSON.stringify(quiet.access)) wrong.push({ acc });
      if ((trace.result as { output?: string } | undefined)?.output !== word(fixed)) wrong.push({ trace });
      if (pending.result !== FORTY_TWO) wrong.push({ pending });
    });
    expect(wrong).toEqual([]);
  });
});
