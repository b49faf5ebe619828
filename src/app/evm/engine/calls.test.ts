import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { EvmCallError, EvmCallTimeoutError } from "../errors.js";
import type { CallArgs, CallOptions, CallResult } from "../readerTypes.js";
import { deployErc20, erc20Interface, hexBytes, runBlock, signTestTx, TestChains } from "../testing.js";

/**
 * eth_call through the app's reader on both EVMs (`engine: "ethereumjs"` and `"cometh"`), on two
 * chains made by the same blocks: every answer — return data, gas used, status, error text, logs —
 * must be the same, thrown errors included.
 */

const chains = new TestChains();
afterEach(() => chains.closeAll());

const KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const FROM = hexBytes("f39fd6e51aad88f6f4ce6ab8827279cfffb92266");

/** acc = calldata[0]; 2500 × (acc·7 + 3); returns acc (bench:evm's compute loop). */
const LOOP = hexBytes(
  "60003561" + "09c4" + "5b" + "90600702" + "600301" + "90" + "60019003" + "80600657" + "5060005260206000f3",
);
/** An infinite loop that touches no state: only the deadline stops it. */
const SPIN = hexBytes("5b600056");

type Outcome = { ok: CallResult } | { threw: string };

async function outcome(run: () => Promise<CallResult>): Promise<Outcome> {
  try {
    return { ok: await run() };
  } catch (err) {
    return { threw: `${(err as Error).constructor.name}: ${(err as Error).message}` };
  }
}

describe("calls on cometh's EVM and on @ethereumjs/vm", () => {
  test("behavior: the same answers for token calls, loops, reverts, failures and bad requests", async () => {
    const wallet = new Wallet(KEY);
    const opened = await Promise.all(
      (["ethereumjs", "cometh"] as const).map((engine) =>
        chains.open({
          engine,
          appState: {
            evm: {
              accounts: [
                { address: `0x${Buffer.from(FROM).toString("hex")}`, balance: "1000000000000000000000" },
                {
                  address: "0x00000000000000000000000000000000000c0de1",
                  code: `0x${Buffer.from(LOOP).toString("hex")}`,
                },
              ],
            },
          },
        }),
      ),
    );
    const tokens = await Promise.all(opened.map((c) => deployErc20(c, wallet, 0)));
    expect(Buffer.compare(tokens[0] as Uint8Array, tokens[1] as Uint8Array)).toBe(0);
    const token = tokens[0] as Uint8Array;
    const loopAddr = hexBytes("00000000000000000000000000000000000c0de1");
    const data = (fn: string, args: unknown[]) => hexBytes(erc20Interface.encodeFunctionData(fn, args));
    const cases: [string, CallArgs, CallOptions?][] = [
      ["balanceOf", { to: token, data: data("balanceOf", [`0x${Buffer.from(FROM).toString("hex")}`]) }],
      [
        "transfer",
        { from: FROM, to: token, data: data("transfer", ["0x00000000000000000000000000000000000000aa", 5n]) },
      ],
      [
        "transfer over balance (revert with reason)",
        {
          from: hexBytes("00000000000000000000000000000000000000bb"),
          to: token,
          data: data("transfer", ["0x00000000000000000000000000000000000000aa", 5n]),
        },
      ],
      ["compute loop", { to: loopAddr, data: new Uint8Array(32).fill(7) }],
      ["out of gas", { to: loopAddr, data: new Uint8Array(32), gas: 30_000n }],
      ["plain transfer", { from: FROM, to: hexBytes("00000000000000000000000000000000000000cc"), value: 1n }],
      ["create", { from: FROM, data: hexBytes("600a600c600039600a6000f3602a60005260206000f3") }],
      ["intrinsic gas too low", { to: token, data: data("totalSupply", []), gas: 21_000n }],
      [
        "insufficient funds",
        { from: hexBytes("00000000000000000000000000000000000000dd"), to: token, value: 1n, gasPrice: 1n },
      ],
      [
        "timeout",
        { to: hexBytes("00000000000000000000000000000000000000ee"), gas: 10_000_000n },
        { overrides: [{ address: hexBytes("00000000000000000000000000000000000000ee"), code: SPIN }], timeoutMs: 50 },
      ],
    ];
    for (const [name, args, opts] of cases) {
      const [a, b] = await Promise.all(opened.map((c) => outcome(() => c.app.reader.call(args, opts ?? {}))));
      expect({ name, ...b }).toEqual({ name, ...a });
    }
    // The thrown errors keep their classes.
    const timedOut = await outcome(() =>
      (opened[1] as (typeof opened)[number]).app.reader.call(cases[9]?.[1] as CallArgs, cases[9]?.[2]),
    );
    expect("threw" in timedOut && timedOut.threw.startsWith(EvmCallTimeoutError.name)).toBe(true);
    const low = await outcome(() => (opened[1] as (typeof opened)[number]).app.reader.call(cases[7]?.[1] as CallArgs));
    expect("threw" in low && low.threw.startsWith(EvmCallError.name)).toBe(true);
  });
});

describe("block txs on cometh's EVM and on @ethereumjs/vm", () => {
  test("behavior: the same blocks give the same app hashes, receipts, logs and blooms", async () => {
    const wallet = new Wallet(KEY);
    const opened = await Promise.all((["ethereumjs", "cometh"] as const).map((engine) => chains.open({ engine })));
    const token = (await Promise.all(opened.map((c) => deployErc20(c, wallet, 0))))[0] as Uint8Array;
    const transfer = (to: string, amount: bigint) => erc20Interface.encodeFunctionData("transfer", [to, amount]);
    const txs = [
      await signTestTx(wallet, {
        nonce: 1,
        to: token,
        data: transfer("0x00000000000000000000000000000000000000a1", 7n),
        gasLimit: 100_000n,
      }),
      // More than the sender holds: reverts with a reason, gas still charged.
      await signTestTx(wallet, {
        nonce: 2,
        to: token,
        data: transfer("0x00000000000000000000000000000000000000a2", 10n ** 40n),
        gasLimit: 100_000n,
      }),
      await signTestTx(wallet, {
        nonce: 3,
        to: hexBytes("00000000000000000000000000000000000000a3"),
        value: 5n,
        gasLimit: 21_000n,
      }),
      // Out of gas inside the token.
      await signTestTx(wallet, {
        nonce: 4,
        to: token,
        data: transfer("0x00000000000000000000000000000000000000a4", 1n),
        gasLimit: 25_000n,
      }),
      // A creation whose init code reverts.
      await signTestTx(wallet, { nonce: 5, data: "0x60006000fd", gasLimit: 60_000n }),
    ];
    const responses = await Promise.all(opened.map((c) => runBlock(c, txs)));
    const [a, b] = responses.map((r) => r.response);
    expect(Buffer.from(b?.appHash ?? []).toString("hex")).toBe(Buffer.from(a?.appHash ?? []).toString("hex"));
    expect(b?.txResults.map((t) => [t.code, t.gasUsed, t.log])).toEqual(
      a?.txResults.map((t) => [t.code, t.gasUsed, t.log]),
    );
    const receipts = opened.map((c) => c.app.reader.receipts(c.height));
    const view = (rs: (typeof receipts)[number]) =>
      rs.map((r) => ({
        status: r.status,
        gasUsed: r.gasUsed,
        cumulative: r.cumulativeGasUsed,
        logs: r.logs.length,
        bloom: Buffer.from(r.logsBloom).toString("hex"),
        vmError: r.vmError,
        contract: r.contractAddress === undefined ? "" : Buffer.from(r.contractAddress).toString("hex"),
      }));
    expect(view(receipts[1] ?? [])).toEqual(view(receipts[0] ?? []));
    expect(receipts[0]?.map((r) => r.status)).toEqual([1, 0, 1, 0, 0]);
    expect(receipts[0]?.[0]?.logs).toHaveLength(1);
  });
});
