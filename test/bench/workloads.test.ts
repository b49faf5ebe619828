// The bench:evm workloads (bench/workloads/) run in @ethereumjs/evm, the reference EVM of the differential
// tests: each answers what its Solidity says, so the bench's "same answers on every node" compares real work.
import { Common, Hardfork, Mainnet } from "@ethereumjs/common";
import { createEVM, type EVM } from "@ethereumjs/evm";
import { Account, createAddressFromString, hexToBytes } from "@ethereumjs/util";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { describe, expect, it } from "vitest";
import {
  CALL_GAS,
  compareAnswers,
  describeAnswer,
  gasOfAnswer,
  selectWorkloads,
  WORKLOADS,
  type Workload,
  type WorkloadResult,
  workloadCalldata,
  workloadStats,
} from "../../bench/workloads/workloads.js";
import compiled from "../../bench/workloads/workloads.json" with { type: "json" };

const CALLER = createAddressFromString("0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
const ADDRESS = {
  TokenLoops: createAddressFromString("0x00000000000000000000000000000000000b0001"),
  KeccakLoop: createAddressFromString("0x00000000000000000000000000000000000b0002"),
  RayTracer: createAddressFromString("0x00000000000000000000000000000000000b0003"),
};

async function evm(): Promise<EVM> {
  const e = await createEVM({ common: new Common({ chain: Mainnet, hardfork: Hardfork.Shanghai }) });
  await e.stateManager.putAccount(CALLER, new Account(0n, 10n ** 18n));
  for (const [name, address] of Object.entries(ADDRESS)) {
    await e.stateManager.putAccount(address, new Account());
    await e.stateManager.putCode(
      address,
      hexToBytes(compiled.contracts[name as keyof typeof ADDRESS].deployedBytecode as `0x${string}`),
    );
  }
  return e;
}

/** One eth_call: on a fresh state, as an eth_call's writes are dropped. */
async function call(w: Workload, seed: bigint, args?: unknown[]): Promise<{ answer: string; gas: bigint }> {
  const e = await evm();
  const data = args === undefined ? workloadCalldata(w, seed) : workloadCalldata({ ...w, args: () => args }, seed);
  const r = await e.runCall({
    caller: CALLER,
    to: ADDRESS[w.contract],
    data: hexToBytes(data as `0x${string}`),
    gasLimit: CALL_GAS,
  });
  expect(r.execResult.exceptionError).toBeUndefined();
  return { answer: `0x${Buffer.from(r.execResult.returnValue).toString("hex")}`, gas: r.execResult.executionGasUsed };
}

const byKey = (key: string) => WORKLOADS.find((w) => w.key === key) as Workload;

/**
 * The token loops (5 000 iterations each in their Solidity, ~40M gas in ethereumjs: ~11 s of CPU on 2
 * cores, most of this file's) run in `npm run test:workloads` (WORKLOADS_TOKEN_LOOPS=1), which
 * .ci/run runs after `npm test`; the keccak loop and the ray tracer run in both.
 */
const TOKEN_LOOPS = process.env.WORKLOADS_TOKEN_LOOPS === "1";

describe("bench workloads", () => {
  it.runIf(TOKEN_LOOPS)(
    "behavior: the token loops answer what 5 000 mints or transfers of 1..5 000 add up to",
    async () => {
      const sum = (5000n * 5001n) / 2n;
      const mint = await call(byKey("mint"), 1234n);
      expect(describeAnswer(byKey("mint"), mint.answer)).toBe(
        `supply=${sum + 5000n * 234n}, balance=${sum + 5000n * 234n}, gasUsed=${gasOfAnswer(mint.answer)}`,
      );
      expect(Number(mint.gas)).toBeGreaterThan(12e6);
      const transfer = await call(byKey("transfer"), 7n);
      expect(describeAnswer(byKey("transfer"), transfer.answer)).toBe(
        `senderBalance=${10n ** 27n + 7n - sum}, recipientBalance=${sum}, gasUsed=${gasOfAnswer(transfer.answer)}`,
      );
      const approve = await call(byKey("approve"), 7n);
      expect(describeAnswer(byKey("approve"), approve.answer)).toBe(
        `recipientBalance=${sum}, left=1, gasUsed=${gasOfAnswer(approve.answer)}`,
      );
      expect(Number(approve.gas)).toBeGreaterThan(25e6);
      // The gas a body reports is the call's execution gas but for the ABI dispatch around it.
      for (const x of [mint, transfer, approve]) {
        expect(gasOfAnswer(x.answer)).toBeLessThan(x.gas);
        expect(gasOfAnswer(x.answer)).toBeGreaterThan(x.gas - 2000n);
      }
    },
    180_000,
  );

  it("behavior: the keccak loop answers 10 000 chained keccak256 of (hash, index)", async () => {
    let h = new Uint8Array(32);
    h[31] = 9;
    for (let i = 0; i < 10000; i++) {
      const buf = new Uint8Array(64);
      buf.set(h);
      buf[62] = i >> 8;
      buf[63] = i & 0xff;
      h = keccak_256(buf);
    }
    const { answer } = await call(byKey("keccak"), 9n);
    expect(answer.slice(0, 66)).toBe(`0x${Buffer.from(h).toString("hex")}`);
  });

  it("behavior: the ray tracer's answer depends on the seed and the image size", async () => {
    const w = byKey("raytrace");
    const a = await call(w, 1n, [1n, 6, 4]);
    const b = await call(w, 1n, [1n, 6, 4]);
    const c = await call(w, 999n, [999n, 6, 4]);
    expect(a.answer).toBe(b.answer);
    expect(a.answer).not.toBe(c.answer);
    expect(describeAnswer(w, a.answer)).toMatch(/^digest=0x[0-9a-f]{64}, sum=[1-9]\d*, gasUsed=[1-9]\d*$/);
  });

  it("behavior: answers that differ between nodes are reported", () => {
    const r = (answers: string[]): WorkloadResult => ({ key: "keccak", times: [1, 2, 3], gas: [1n, 1n, 1n], answers });
    const gas = `${"00".repeat(31)}05`;
    const h1 = `0x${"11".repeat(32)}${gas}`;
    const h2 = `0x${"22".repeat(32)}${gas}`;
    expect(
      compareAnswers([
        { name: "a", results: [r([h1, h2])] },
        { name: "b", results: [r([h1])] },
      ]).same,
    ).toBe(true);
    const odd = compareAnswers([
      { name: "a", results: [r([h1, h2])] },
      { name: "b", results: [r([h1, h1])] },
    ]);
    expect(odd.same).toBe(false);
    expect(odd.lines[0]).toContain("seed 2: b differ from a");
  });

  it("default: the median, min, max and Mgas/s of the measured calls", () => {
    const st = workloadStats({
      key: "mint",
      times: [30, 10, 20, 40],
      answers: [],
      gas: [10_000_000n, 9_000_000n, 11_000_000n, 10_000_000n],
    });
    expect(st).toEqual({ median: 25, min: 10, max: 40, gas: 10_000_000n, mgasPerSec: 400 });
  });

  it("error: an unknown workload is named with the valid ones", () => {
    expect(() => selectWorkloads("mint,bogus")).toThrowErrorMatchingInlineSnapshot(
      `[RangeError: --workloads: unknown bogus; choose from all, none, mint, transfer, approve, keccak, raytrace]`,
    );
    expect(() => gasOfAnswer("0x12")).toThrowErrorMatchingInlineSnapshot(
      `[RangeError: not an ABI-encoded answer: 0x12]`,
    );
    expect(selectWorkloads("keccak,mint").map((w) => w.key)).toEqual(["mint", "keccak"]);
  });
});
