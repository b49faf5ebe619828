import { describe, expect, test } from "vitest";
import { CallMemo } from "./callMemo.js";
import type { CallArgs, CallResult } from "./readerTypes.js";

/** The call memo's admission: kept from a call's second asking at a height, exact keys, nothing across heights. */

function args(n: number, extra: Partial<CallArgs> = {}): CallArgs {
  const data = new Uint8Array(36);
  new DataView(data.buffer).setUint32(32, n);
  return { to: new Uint8Array(20).fill(7), data, ...extra };
}

function result(n: number): CallResult {
  return { status: "success", returnData: Uint8Array.of(n), gasUsed: 21_000n, vmError: "", logs: [] };
}

/** What a caller does: admit, answer from the memo or run (here: `run`) and keep. */
function ask(memo: CallMemo, a: CallArgs, height: number, run: () => CallResult): CallResult {
  const key = memo.admit(a, {}, height);
  if (key === undefined) return run();
  const kept = memo.get(key);
  if (kept !== undefined) return kept;
  const r = run();
  memo.set(key, r);
  return r;
}

describe("CallMemo", () => {
  test("behavior: a call is kept from its second asking and answered from its third", () => {
    const memo = new CallMemo();
    let runs = 0;
    const run = () => result(++runs);
    expect(ask(memo, args(1), 5, run)).toEqual(result(1));
    expect(memo.peek(args(1), {}, 5)).toBeUndefined();
    expect(ask(memo, args(1), 5, run)).toEqual(result(2));
    expect(memo.peek(args(1), {}, 5)).toEqual(result(2));
    expect(ask(memo, args(1), 5, run)).toEqual(result(2));
    expect(runs).toBe(2);
  });

  test("behavior: calls that all differ keep nothing", () => {
    const memo = new CallMemo();
    for (let i = 0; i < 1000; i++) {
      expect(memo.admit(args(i), {}, 5)).toBeUndefined();
      expect(memo.peek(args(i), {}, 5)).toBeUndefined();
    }
  });

  test("behavior: never across heights or between calls that differ in any field; cleared by clear()", () => {
    const memo = new CallMemo();
    const run = () => result(9);
    ask(memo, args(1), 5, run);
    ask(memo, args(1), 5, run);
    expect(memo.peek(args(1), {}, 5)).toEqual(result(9));
    expect(memo.peek(args(1), {}, 6)).toBeUndefined();
    expect(memo.admit(args(1), {}, 6)).toBeUndefined();
    // Fields the doorkeeper's hash leaves out still tell results apart (the key has every field).
    for (const extra of [{ gasPrice: 1n }, { maxFeePerGas: 2n }, { maxPriorityFeePerGas: 3n }]) {
      expect(memo.peek(args(1, extra), {}, 5)).toBeUndefined();
      const key = memo.admit(args(1, extra), {}, 5);
      expect(key === undefined || memo.get(key) === undefined).toBe(true);
    }
    expect(memo.peek(args(1), { gasCap: 1n }, 5)).toBeUndefined();
    memo.clear();
    expect(memo.peek(args(1), {}, 5)).toBeUndefined();
    expect(memo.admit(args(1), {}, 5)).toBeUndefined();
  });

  test("behavior: calls with overrides, block overrides or access lists are never kept", () => {
    const memo = new CallMemo();
    const overrides = [{ address: new Uint8Array(20), nonce: 1n }];
    const cases: [CallArgs, object][] = [
      [args(1), { overrides }],
      [args(2), { block: { number: 1n } }],
      [args(3, { accessList: [] }), {}],
      [args(4, { authorizationList: [] }), {}],
    ];
    for (const [a, o] of cases) {
      expect(memo.admit(a, o, 5)).toBeUndefined();
      expect(memo.admit(a, o, 5)).toBeUndefined();
    }
  });
});
