import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type {
  CallOptions as AppCallOptions,
  CallResult as AppCallResult,
  CallArgs,
  EvmReadPool,
} from "../../app/evm/index.js";
import {
  closeTestChain,
  deployErc20,
  hexBytes,
  erc20Interface as iface,
  openTestChain,
  type TestChain,
} from "../../app/evm/testing.js";
import type { CallOptions, CallRequest } from "../../rpc/evm/index.js";
import { CallCosts, EXPENSIVE_GAS, MAIN_THREAD_MAX_GAS } from "./callCosts.js";
import { EvmExecutionAdapter } from "./execution.js";

/**
 * eth_call's dispatch when the node has read workers (callCosts.ts): cheap targets run on the main
 * thread, targets whose calls used much gas go to the pool, and both give the in-process answer.
 */

/** Init code that loops `n` times (26 gas each) and stops; `tag` follows the STOP (distinct calls, same target). */
function loopInit(n: number, tag: number): Uint8Array {
  const hex = `61${n.toString(16).padStart(4, "0")}5b6001900380600357` + `00${tag.toString(16).padStart(8, "0")}`;
  return hexBytes(`0x${hex}`);
}

describe("CallCosts", () => {
  test("behavior: a target is sent away once its execution gas passes the bound, and comes back when cheap", () => {
    const costs = new CallCosts();
    const to = hexBytes("0x00000000000000000000000000000000000000aa");
    const sel = hexBytes("0x70a08231");
    const key = CallCosts.key(to, sel);
    expect(CallCosts.key(to, hexBytes("0xa9059cbb"))).not.toBe(key);
    expect(CallCosts.key(undefined, sel)).not.toBe(key);
    expect(costs.placement(key)).toBe("here");
    costs.record(key, to, sel, 21_000n + 64n + BigInt(EXPENSIVE_GAS) + 1000n);
    expect(costs.placement(key)).toBe("either");
    for (let i = 0; i < 10; i++) costs.record(key, to, sel, 24_000n);
    expect(costs.placement(key)).toBe("here");
    costs.recordTimeout(key);
    expect(costs.placement(key)).toBe("away");
    costs.record(key, to, sel, 21_000n + 64n + BigInt(MAIN_THREAD_MAX_GAS) * 2n);
    expect(costs.placement(key)).toBe("away");
  });

  test("behavior: calldata and a creation's gas are intrinsic, not execution", () => {
    const costs = new CallCosts();
    // 8 KiB of non-zero calldata: 131 072 gas of calldata, none of execution.
    const data = new Uint8Array(8192).fill(1);
    const key = CallCosts.key(hexBytes("0x00000000000000000000000000000000000000aa"), data);
    costs.record(key, hexBytes("0x00000000000000000000000000000000000000aa"), data, 21_000n + 131_072n + 100n);
    expect(costs.cost(key)).toBe(100);
    const init = loopInit(1, 0); // 17 bytes: 11 non-zero, 6 zero
    const ckey = CallCosts.key(undefined, init);
    costs.record(ckey, undefined, init, 53_000n + 2n + 16n * 11n + 4n * 6n + 50n);
    expect(costs.cost(ckey)).toBe(50);
  });
});

describe("EvmExecutionAdapter with read workers", () => {
  let chain: TestChain;
  let token: Uint8Array;
  let pooled = 0;
  /** What the pool says it has queued per worker. */
  let backlog = 0;
  let adapter: EvmExecutionAdapter;
  let plain: EvmExecutionAdapter;

  beforeAll(async () => {
    chain = await openTestChain();
    const [wallet] = chain.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet];
    token = await deployErc20(chain, wallet, 0);
    const reader = chain.app.reader;
    // The pool's side as the adapter sees it: the same reader's answers, counted (readPool.test.ts checks
    // that the workers' answers are the reader's).
    const pool = {
      call: (args: CallArgs, opts: AppCallOptions): Promise<AppCallResult> => {
        pooled++;
        return reader.call(args, opts);
      },
      backlog: () => backlog,
    } as unknown as EvmReadPool;
    adapter = new EvmExecutionAdapter(reader, pool);
    plain = new EvmExecutionAdapter(reader, undefined);
  });

  afterAll(async () => {
    if (chain !== undefined) await closeTestChain(chain);
  });

  const opts = (): CallOptions => ({
    height: chain.height,
    gasCap: 25_000_000n,
    timeoutMs: 5000,
    signal: new AbortController().signal,
  });

  test("behavior: cheap calls run on the main thread, never through the pool", () => {
    expect(adapter.callNow).toBeUndefined();
    for (let i = 0; i < 20; i++) {
      const holder = `0x${(i + 1).toString(16).padStart(40, "0")}`;
      const req: CallRequest = { to: token, data: hexBytes(iface.encodeFunctionData("balanceOf", [holder])) };
      const here = adapter.callNowIfCheap?.(req, opts());
      expect(here).toEqual(plain.callNow?.(req, opts()));
    }
    expect(pooled).toBe(0);
  });

  test("behavior: a target whose calls used much gas goes to the pool, with the in-process answer", async () => {
    const first: CallRequest = { data: loopInit(2500, 0) };
    // Never seen: runs here, and is learned.
    const here = adapter.callNowIfCheap?.(first, opts());
    expect(here?.status).toBe("success");
    expect(Number(here?.gasUsed)).toBeGreaterThan(53_000 + EXPENSIVE_GAS);
    for (let tag = 1; tag <= 3; tag++) {
      const req: CallRequest = { data: loopInit(2500, tag) };
      expect(adapter.callNowIfCheap?.(req, opts())).toBeUndefined();
      const before = pooled;
      const away = await adapter.call(req, opts());
      expect(pooled).toBe(before + 1);
      expect(away).toEqual(plain.callNow?.(req, opts()));
    }
    // Workers with a queue: an expensive call runs here too, a call too long for the main thread never does.
    backlog = 5;
    const busy: CallRequest = { data: loopInit(2500, 50) };
    expect(adapter.callNowIfCheap?.(busy, opts())).toEqual(plain.callNow?.(busy, opts()));
    backlog = 0;
    // A short loop from the same target is learned from the pool's answers and comes back.
    for (let tag = 10; tag < 16; tag++) await adapter.call({ data: loopInit(10, tag) }, opts());
    const req: CallRequest = { data: loopInit(10, 99) };
    expect(adapter.callNowIfCheap?.(req, opts())).toEqual(plain.callNow?.(req, opts()));
  });

  test("behavior: a call that ran out of time on the main thread goes to the workers even when they are busy", async () => {
    backlog = 5;
    // A creation that loops forever (JUMPDEST PUSH1 0 JUMP), with a short evm-timeout.
    const forever: CallRequest = { data: hexBytes("0x5b600056") };
    const short = { ...opts(), timeoutMs: 20 };
    expect(() => adapter.callNowIfCheap?.(forever, short)).toThrow(/timeout|aborted/i);
    expect(adapter.callNowIfCheap?.({ data: hexBytes("0x5b60005601") }, short)).toBeUndefined();
    backlog = 0;
  });
});
