import { Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { EvmCallError, EvmCallTimeoutError } from "./errors.js";
import type { CallArgs, CallOptions, CallResult } from "./readerTypes.js";
import { deployErc20, erc20Interface, hexBytes, runBlock, signTestTx, TestChains } from "./testing.js";

/**
 * eth_call through the app's reader: every answer — return data, gas used, status, error text, logs,
 * thrown errors — is the one recorded when @ethereumjs/vm ran calls (inline snapshots), and block
 * txs give the receipts recorded then.
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

/** An outcome as JSON-friendly text (bytes as hex, bigints as decimal). */
function view(o: Outcome): unknown {
  return JSON.parse(
    JSON.stringify(o, (_k, v) =>
      typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v,
    ),
  );
}

async function outcome(run: () => Promise<CallResult>): Promise<Outcome> {
  try {
    return { ok: await run() };
  } catch (err) {
    return { threw: `${(err as Error).constructor.name}: ${(err as Error).message}` };
  }
}

describe("calls on cometh's EVM", () => {
  test("behavior: the same answers for token calls, loops, reverts, failures and bad requests", async () => {
    const wallet = new Wallet(KEY);
    const opened = await Promise.all(
      (["cometh"] as const).map(() =>
        chains.open({
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
        { to: hexBytes("00000000000000000000000000000000000000ee"), gas: 1_000_000_000n },
        // 10^9 gas, uncapped: the loop runs for seconds, so the 50 ms deadline, not the gas, ends it.
        {
          overrides: [{ address: hexBytes("00000000000000000000000000000000000000ee"), code: SPIN }],
          timeoutMs: 50,
          gasCap: 0n,
        },
      ],
    ];
    const answers: unknown[] = [];
    for (const [name, args, opts] of cases) {
      const [a] = await Promise.all(opened.map((c) => outcome(() => c.app.reader.call(args, opts ?? {}))));
      answers.push({ name, ...(view(a as Outcome) as object) });
    }
    expect(answers).toMatchInlineSnapshot(`
      [
        {
          "name": "balanceOf",
          "ok": {
            "gasUsed": "23675",
            "logs": [],
            "returnData": "00000000000000000000000000000000000000000000d3c21bcecceda1000000",
            "status": "success",
            "vmError": "",
          },
        },
        {
          "name": "transfer",
          "ok": {
            "gasUsed": "50555",
            "logs": [
              {
                "address": "5fbdb2315678afecb367f032d93f642f64180aa3",
                "data": "0000000000000000000000000000000000000000000000000000000000000005",
                "topics": [
                  "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
                  "000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
                  "00000000000000000000000000000000000000000000000000000000000000aa",
                ],
              },
            ],
            "returnData": "0000000000000000000000000000000000000000000000000000000000000001",
            "status": "success",
            "vmError": "",
          },
        },
        {
          "name": "transfer over balance (revert with reason)",
          "ok": {
            "gasUsed": "23728",
            "logs": [],
            "returnData": "08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000000000002645524332303a207472616e7366657220616d6f756e7420657863656564732062616c616e63650000000000000000000000000000000000000000000000000000",
            "status": "reverted",
            "vmError": "execution reverted",
          },
        },
        {
          "name": "compute loop",
          "ok": {
            "gasUsed": "136538",
            "logs": [],
            "returnData": "f6db0beba96ae2a708d98a8db3151f1a65d1730c6f95a9e9dc4d91ecf75f6057",
            "status": "success",
            "vmError": "",
          },
        },
        {
          "name": "out of gas",
          "ok": {
            "gasUsed": "30000",
            "logs": [],
            "returnData": "",
            "status": "failed",
            "vmError": "out of gas",
          },
        },
        {
          "name": "plain transfer",
          "ok": {
            "gasUsed": "21000",
            "logs": [],
            "returnData": "",
            "status": "success",
            "vmError": "",
          },
        },
        {
          "name": "create",
          "ok": {
            "gasUsed": "55330",
            "logs": [],
            "returnData": "602a60005260206000f3",
            "status": "success",
            "vmError": "",
          },
        },
        {
          "name": "intrinsic gas too low",
          "threw": "EvmCallError: intrinsic gas too low: have 21000, want 21160",
        },
        {
          "name": "insufficient funds",
          "threw": "EvmCallError: insufficient funds for gas * price + value: address 0x00000000000000000000000000000000000000dd have 0 want 25000001",
        },
        {
          "name": "timeout",
          "threw": "EvmCallTimeoutError: execution aborted (timeout = 50ms). Raise the call timeout or lower the gas",
        },
      ]
    `);
    // The thrown errors keep their classes.
    const timedOut = await outcome(() =>
      (opened[0] as (typeof opened)[number]).app.reader.call(cases[9]?.[1] as CallArgs, cases[9]?.[2]),
    );
    expect("threw" in timedOut && timedOut.threw.startsWith(EvmCallTimeoutError.name)).toBe(true);
    const low = await outcome(() => (opened[0] as (typeof opened)[number]).app.reader.call(cases[7]?.[1] as CallArgs));
    expect("threw" in low && low.threw.startsWith(EvmCallError.name)).toBe(true);
  });
});

describe("block txs on cometh's EVM", () => {
  test("behavior: the same blocks give the same app hashes, receipts, logs and blooms", async () => {
    const wallet = new Wallet(KEY);
    const opened = await Promise.all((["cometh"] as const).map(() => chains.open()));
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
    const [a] = responses.map((r) => r.response);
    expect(
      view({
        threw: JSON.stringify([
          Buffer.from(a?.appHash ?? []).toString("hex"),
          a?.txResults.map((t) => [t.code, String(t.gasUsed), t.log]),
        ]),
      }),
    ).toMatchInlineSnapshot(`
      {
        "threw": "["6b1ae3303e2d8208340f535261b6153cbc99161d4b752e414723e67f34370c3d",[[0,"50555",""],[0,"50000",""],[0,"21000",""],[0,"25000",""],[0,"53064",""]]]",
      }
    `);
    const receipts = opened.map((c) => c.app.reader.receipts(c.height));
    const receiptView = (rs: (typeof receipts)[number]) =>
      rs.map((r) => ({
        status: r.status,
        gasUsed: r.gasUsed,
        cumulative: r.cumulativeGasUsed,
        logs: r.logs.length,
        bloom: Buffer.from(r.logsBloom).toString("hex"),
        vmError: r.vmError,
        contract: r.contractAddress === undefined ? "" : Buffer.from(r.contractAddress).toString("hex"),
      }));
    expect(receiptView(receipts[0] ?? [])).toMatchInlineSnapshot(`
      [
        {
          "bloom": "00000000000000000100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000008000000000000000000000000000000000000000000000040000000000000000100000000000000000000000000000010000000000000000000000000000000000000000000000000000000000000000200000000000000001000000000000000000000000000000000400000000000000000000000000042000000200000000000000000000000002000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
          "contract": "",
          "cumulative": 50555n,
          "gasUsed": 50555n,
          "logs": 1,
          "status": 1,
          "vmError": "",
        },
        {
          "bloom": "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
          "contract": "",
          "cumulative": 100555n,
          "gasUsed": 50000n,
          "logs": 0,
          "status": 0,
          "vmError": "execution reverted",
        },
        {
          "bloom": "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
          "contract": "",
          "cumulative": 121555n,
          "gasUsed": 21000n,
          "logs": 0,
          "status": 1,
          "vmError": "",
        },
        {
          "bloom": "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
          "contract": "",
          "cumulative": 146555n,
          "gasUsed": 25000n,
          "logs": 0,
          "status": 0,
          "vmError": "out of gas",
        },
        {
          "bloom": "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
          "contract": "5fc8d32690cc91d4c39d9d3abcbd16989f875707",
          "cumulative": 199619n,
          "gasUsed": 53064n,
          "logs": 0,
          "status": 0,
          "vmError": "execution reverted",
        },
      ]
    `);
    expect(receipts[0]?.map((r) => r.status)).toEqual([1, 0, 1, 0, 0]);
    expect(receipts[0]?.[0]?.logs).toHaveLength(1);
  });
});
