import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { silentLogger } from "../../util/logger.js";
import {
  EvmCallError,
  EvmCallTimeoutError,
  GasEstimationError,
  InvalidEthTxError,
  StateUnavailableError,
} from "./errors.js";
import { plainCallResult } from "./reader.js";
import type { CallArgs, CallResult } from "./readerTypes.js";
import { EvmReadPool, EvmReadWorkerError } from "./readPool.js";
import { createTracer, errorFromWire, errorToWire, type TracerSpec } from "./readWire.js";
import {
  closeTestChain,
  deployErc20,
  hexBytes,
  erc20Interface as iface,
  openTestChain,
  runBlock,
  signTestTx,
  type TestChain,
} from "./testing.js";

/**
 * The read pool against the in-process reader on one chain: the same answers (results, thrown error
 * classes and fields, traces, logs) at every height, including while blocks commit; timeouts, aborts,
 * a crashed worker and shutdown.
 */

let chain: TestChain;
let pool: EvmReadPool;
let token: Uint8Array;
let wallet: Wallet;
let other: Wallet;
let nonce = 0;

/** A contract that loops forever (JUMPDEST PUSH1 0 JUMP). */
const LOOP = hexBytes("0x5b600056");
const LOOP_ADDR = hexBytes("0x00000000000000000000000000000000000c0de1");

function bytes(hex: string): Uint8Array {
  return hexBytes(hex);
}

function addr(w: Wallet): Uint8Array {
  return hexBytes(w.address);
}

function balanceOf(who: Uint8Array): CallArgs {
  return {
    to: token,
    data: bytes(iface.encodeFunctionData("balanceOf", [`0x${Buffer.from(who).toString("hex")}`])),
  };
}

function transfer(from: Wallet, amount: bigint): CallArgs {
  return {
    from: addr(from),
    to: token,
    data: bytes(iface.encodeFunctionData("transfer", [other.address, amount])),
  };
}

async function sendTransfer(amount: bigint): Promise<void> {
  await runBlock(chain, [
    await signTestTx(wallet, {
      nonce: nonce++,
      to: token,
      data: iface.encodeFunctionData("transfer", [other.address, amount]),
      gasLimit: 100_000n,
    }),
  ]);
}

/**
 * What a promise settles to, errors as their class name, message and fields; a call's result as its
 * plain fields (the in-thread reader's CallOutcome has its logs as a getter).
 */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    const value = await p;
    return { value: isCallResult(value) ? plainCallResult(value) : value };
  } catch (err) {
    const e = err as Error;
    return { error: e.constructor.name, name: e.name, message: e.message, fields: { ...e } };
  }
}

function isCallResult(v: unknown): v is CallResult {
  return typeof v === "object" && v !== null && "status" in v && "returnData" in v && "gasUsed" in v;
}

beforeAll(async () => {
  chain = await openTestChain();
  [wallet, other] = chain.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
  token = await deployErc20(chain, wallet, nonce++);
  for (let i = 0; i < 3; i++) await sendTransfer(100n + BigInt(i));
  pool = new EvmReadPool({
    size: 2,
    setup: chain.app.readWorkerSetup(),
    reader: chain.app.reader,
    log: silentLogger(),
    // The real worker, which also crashes on request (the crash test).
    workerScript: new URL("./readWorkerCrash.fixture.ts", import.meta.url),
  });
  await pool.start();
  expect(pool.stats().running).toBe(2);
  expect(pool.backlog()).toBe(0);
});

afterAll(async () => {
  await pool?.close();
  if (chain !== undefined) await closeTestChain(chain);
});

describe("answers", () => {
  test("behavior: calls, estimates, traces and logs equal the main thread's at every height", async () => {
    const reader = chain.app.reader;
    const requests: [string, () => Promise<unknown>, () => Promise<unknown>][] = [];
    for (let h = 0; h <= chain.height; h++) {
      const opts = { height: h, gasCap: 25_000_000n, timeoutMs: 5000 };
      const cases: [string, CallArgs][] = [
        ["balanceOf", balanceOf(addr(other))],
        ["transfer", transfer(wallet, 5n)],
        ["transfer over balance (revert)", transfer(other, 10n ** 30n)],
        ["insufficient funds", { from: addr(other), to: token, value: 10n ** 40n }],
        ["out of gas", { ...transfer(wallet, 5n), gas: 22_000n }],
      ];
      for (const [name, args] of cases) {
        requests.push([
          `call ${name} @${h}`,
          () => reader.call(args, opts),
          () => pool.call(args, { ...opts, height: h }),
        ]);
        requests.push([
          `estimateGas ${name} @${h}`,
          () => reader.estimateGas(args, opts),
          () => pool.estimateGas(args, opts),
        ]);
      }
      const specs: TracerSpec[] = [
        { kind: "call", options: { withLog: true } },
        { kind: "struct", options: { limit: 20 } },
        { kind: "prestate", options: { diffMode: true } },
        { kind: "fourByte" },
        { kind: "noop" },
      ];
      for (const spec of specs) {
        const args = transfer(wallet, 7n);
        requests.push([
          `traceCall ${spec.kind} @${h}`,
          () => reader.traceCall(args, createTracer(spec), opts),
          () => pool.traceCall(args, spec, opts),
        ]);
      }
    }
    const filter = { fromHeight: 0, toHeight: chain.height, addresses: [token], limit: 100 };
    requests.push(["logs", async () => reader.logs(filter), () => pool.logs(filter)]);
    requests.push([
      "logs by topic, one block",
      async () => reader.logs({ ...filter, fromHeight: 3, toHeight: 3, addresses: [], topics: [null] }),
      () => pool.logs({ ...filter, fromHeight: 3, toHeight: 3, addresses: [], topics: [null] }),
    ]);
    requests.push([
      "a height after the latest",
      () => reader.call(balanceOf(addr(other)), { height: chain.height + 5 }),
      () => pool.call(balanceOf(addr(other)), { height: chain.height + 5 }),
    ]);
    const before = pool.stats().workers;
    for (const [name, local, pooled] of requests) {
      expect.soft(await outcome(pooled()), name).toEqual(await outcome(local()));
    }
    // Worker answers, not main-thread fallbacks (memoized calls are answered by the main memo).
    expect(pool.stats().workers - before).toBeGreaterThan(requests.length / 2);
    expect(pool.stats().mainThread).toBe(0);
  });

  test("behavior: a worker's call result is kept in the main thread's memo", async () => {
    const args = balanceOf(hexBytes("0x00000000000000000000000000000000000000aa"));
    const opts = { height: chain.height, gasCap: 25_000_000n, timeoutMs: 5000 };
    expect(chain.app.reader.peekCall(args, opts)).toBeUndefined();
    // Kept from its second asking (callMemo.ts).
    await pool.call(args, opts);
    expect(chain.app.reader.peekCall(args, opts)).toBeUndefined();
    const r = await pool.call(args, opts);
    expect(chain.app.reader.peekCall(args, opts)).toEqual(r);
    const memo = pool.stats().memo;
    await pool.call(args, opts);
    expect(pool.stats().memo).toBe(memo + 1);
  });

  test("behavior: under commits, a call at the new latest height sees the new state", async () => {
    const reader = chain.app.reader;
    for (let i = 0; i < 6; i++) {
      // Distinct arguments (never memoized) while the next block commits.
      const probe = (n: number) => ({ ...balanceOf(addr(other)), gas: 100_000n + BigInt(n) });
      const at = reader.latestHeight();
      const during = Array.from({ length: 8 }, (_, k) => pool.call(probe(i * 100 + k), { height: at }));
      const committing = sendTransfer(1000n);
      const results = await Promise.all([...during, committing]);
      // Asked at the height before the commit: that height's state, even from a newer snapshot.
      const then = await reader.call(probe(i * 100 + 99), { height: at });
      for (const r of results.slice(0, 8))
        expect((r as { returnData: Uint8Array }).returnData).toEqual(then.returnData);
      const latest = reader.latestHeight();
      const seen = await pool.call(probe(i * 100 + 50), { height: latest });
      const expected = await reader.call(probe(i * 100 + 51), { height: latest });
      expect(seen.returnData).toEqual(expected.returnData);
      // The balance moved with the block: the worker did not answer from an older snapshot.
      const previous = await reader.call(probe(i * 100 + 52), { height: latest - 1 });
      expect(seen.returnData).not.toEqual(previous.returnData);
      const logs = await pool.logs({ fromHeight: latest, toHeight: latest, addresses: [token] });
      expect(logs).toEqual(reader.logs({ fromHeight: latest, toHeight: latest, addresses: [token] }));
      expect(logs.length).toBe(1);
    }
  });
});

describe("timeouts and failures", () => {
  test("behavior: a call past its timeout fails in the worker while another worker answers", async () => {
    await runBlock(chain, [await signTestTx(wallet, { nonce: nonce++, to: LOOP_ADDR, value: 1n, gasLimit: 30_000n })]);
    const overrides = [{ address: LOOP_ADDR, code: LOOP }];
    const started = performance.now();
    let slowAt = 0;
    const slow = outcome(pool.call({ to: LOOP_ADDR, gas: 10n ** 15n }, { timeoutMs: 500, gasCap: 0n, overrides })).then(
      (r) => {
        slowAt = performance.now();
        return r;
      },
    );
    // The other worker keeps answering meanwhile, also what was posted behind the long call (taken
    // back from its worker after 20 ms).
    const quickCalls = Array.from({ length: 12 }, (_, i) =>
      pool.call({ ...balanceOf(addr(wallet)), gas: 90_001n + BigInt(i) }),
    );
    // 13 requests taken by 2 workers.
    expect(pool.backlog()).toBe(6.5);
    const quick = await Promise.all(quickCalls);
    const quickAt = performance.now();
    for (const q of quick) expect(q.status).toBe("success");
    const timedOut = await slow;
    expect(quickAt).toBeLessThan(slowAt);
    expect(slowAt - started).toBeGreaterThanOrEqual(500);
    expect(timedOut).toEqual({
      error: "EvmCallTimeoutError",
      name: "EvmCallTimeoutError",
      message: "execution aborted (timeout = 500ms). Raise the call timeout or lower the gas",
      fields: { name: "EvmCallTimeoutError" },
    });
  });

  test("behavior: a request still waiting (here or in a worker) when its signal aborts is dropped", async () => {
    const overrides = [{ address: LOOP_ADDR, code: LOOP }];
    const busy = [0, 1].map(() =>
      outcome(pool.call({ to: LOOP_ADDR, gas: 10n ** 15n }, { timeoutMs: 200, gasCap: 0n, overrides })),
    );
    const controller = new AbortController();
    const queued = outcome(pool.call({ ...balanceOf(addr(wallet)), gas: 95_000n }, {}, controller.signal));
    controller.abort(new Error("timed out in the RPC"));
    expect(await queued).toMatchObject({ error: "Error", message: "timed out in the RPC" });
    for (const b of await Promise.all(busy)) expect(b).toMatchObject({ error: "EvmCallTimeoutError" });
  });

  test("errors: classes, messages and fields survive the thread boundary", () => {
    const cases = [
      new EvmCallError("insufficient funds for gas * price + value: address 0x00 have 0 want 1"),
      new EvmCallTimeoutError(5000),
      new GasEstimationError("execution reverted", Uint8Array.of(8, 195, 121, 160)),
      new GasEstimationError("gas required exceeds allowance (100)"),
      new StateUnavailableError(9, 2, 7),
      new InvalidEthTxError(3, "nonce too low"),
      new RangeError("something else"),
    ];
    for (const err of cases) {
      const back = errorFromWire(structuredClone(errorToWire(err)));
      expect(back).toBeInstanceOf(err.constructor);
      expect(back.message).toBe(err.message);
      expect(back.name).toBe(err.name);
      expect({ ...back }).toEqual({ ...err });
    }
  });

  test("behavior: a crashed worker fails its request with a clear error and is restarted", async () => {
    const before = pool.stats();
    const r = await outcome(pool.call({ ...balanceOf(addr(wallet)), gas: 77_777n }, {}));
    expect(r).toMatchObject({ error: "EvmReadWorkerError" });
    expect((r as { message: string }).message).toMatch(
      /^read worker \d stopped while answering eth_call \(crash requested by the test; exit code 1\); it is being restarted/,
    );
    expect(pool.stats()).toMatchObject({ crashes: before.crashes + 1, running: 1 });
    // The other worker answers meanwhile; the crashed one comes back.
    expect((await pool.call({ ...balanceOf(addr(wallet)), gas: 77_778n })).status).toBe("success");
    await pool.start();
    expect(pool.stats()).toMatchObject({ running: 2, mainThread: 0 });
  });

  test("behavior: while no worker runs, reads run on the main thread; a closed pool fails at once", async () => {
    const broken = new EvmReadPool({
      size: 1,
      setup: chain.app.readWorkerSetup(),
      reader: chain.app.reader,
      log: silentLogger(),
      workerScript: new URL("./noSuchWorker.ts", import.meta.url),
    });
    try {
      const args = { ...balanceOf(addr(wallet)), gas: 66_666n };
      expect(await broken.call(args)).toEqual(await chain.app.reader.call(args));
      expect(broken.stats()).toMatchObject({ mainThread: 1, workers: 0, running: 0 });
      expect(broken.backlog()).toBe(Number.POSITIVE_INFINITY);
    } finally {
      await broken.close();
    }
    // Not memoized (it would have to run): refused.
    await expect(broken.call({ ...balanceOf(addr(wallet)), gas: 66_667n })).rejects.toBeInstanceOf(EvmReadWorkerError);
  });
});
