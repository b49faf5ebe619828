import { writeFileSync } from "node:fs";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import { missingBinaries } from "../interop/binaries.js";
import { compareCall, found, type Params } from "./compare.js";
import { type Difference, describe as describeDiffs, diffValues, type MustDiffer, unexpected } from "./diff.js";
import { CHAIN_ID, DEV_ADDRESS, DEV_KEY, type NodePair, startPair } from "./nodes.js";
import { verifyProof } from "./proof.js";
import { RECIPIENT, runScenario, type Scenario, sendAll } from "./scenario.js";

/**
 * The differential against geth: the same signed txs on `geth --dev` and `cometh dev` (same genesis),
 * then the JSON-RPC answers compared field by field (test/gethdiff/diff.ts names what must differ).
 */

const missing = missingBinaries("geth");
let pair: NodePair;
let s: Scenario;

const hexN = (n: number) => `0x${n.toString(16)}`;

/** Collects the unexpected differences of several calls; fails once with all of them. */
class Check {
  readonly #bad: { label: string; diffs: Difference[] }[] = [];
  async call(
    method: string,
    params: Params = [],
    opts: { extra?: readonly MustDiffer[]; label?: string; map?: (v: unknown) => unknown } = {},
  ) {
    const r = await compareCall(pair, method, params, opts);
    if (r.unexpected.length > 0) {
      this.#bad.push({ label: opts.label ?? `${method} ${JSON.stringify(params)}`, diffs: r.unexpected });
    }
    return r;
  }
  /** Compares two values already in hand (notifications). */
  record(label: string, geth: unknown, cometh: unknown): void {
    const diffs = diffValues(geth, cometh, label.split(" ")[0] as string);
    if (diffs.length > 0) found.push({ label, diffs });
    const bad = unexpected(diffs, label);
    if (bad.length > 0) this.#bad.push({ label, diffs: bad });
  }
  done(): void {
    const text = this.#bad.map((b) => `${b.label}\n${describeDiffs(b.diffs)}`).join("\n\n");
    expect(text, text).toBe("");
  }
}

/** Per node: the block hash of `n` on that node. */
const ownHash = (n: number) => async (e: NodePair["geth"]) =>
  (await e.result<{ hash: string }>("eth_getBlockByNumber", [hexN(n), false])).hash;

describe.skipIf(missing !== undefined)(`geth differential ${missing ?? ""}`, () => {
  beforeAll(async () => {
    pair = await startPair();
    s = await runScenario(pair);
  }, 240_000);

  afterAll(async () => {
    await pair?.stop();
    // GETH_DIFF_DUMP=file: every difference seen, as JSON (for looking into a run).
    if (process.env.GETH_DIFF_DUMP) writeFileSync(process.env.GETH_DIFF_DUMP, JSON.stringify(found, null, 1));
    if (found.length > 0) {
      const lines = found.map((f) => `${f.label}\n${describeDiffs(f.diffs)}`);
      console.log(`geth differential, every difference seen (expected ones included):\n\n${lines.join("\n\n")}`);
    }
  }, 60_000);

  test("the scenario: same tx hashes, same block numbers on both", async () => {
    for (const { name, hash } of s.txs) {
      const [g, c] = await Promise.all(
        pair.both.map((e) => e.result<{ blockNumber: string; status: string }>("eth_getTransactionReceipt", [hash])),
      );
      expect(c?.blockNumber, name).toBe(g?.blockNumber);
      expect(c?.status, name).toBe(g?.status);
    }
    expect(await pair.cometh.result("eth_blockNumber")).toBe(await pair.geth.result("eth_blockNumber"));
  });

  test("blocks: eth_getBlockByNumber (hashes and full txs), eth_getBlockByHash, tx counts", async () => {
    const c = new Check();
    for (let n = 0; n <= s.lastBlock; n++) {
      await c.call("eth_getBlockByNumber", [hexN(n), true]);
      await c.call("eth_getBlockByNumber", [hexN(n), false]);
      await c.call("eth_getBlockByHash", async (e) => [await ownHash(n)(e), true], {
        label: `eth_getBlockByHash ${n}`,
      });
      await c.call("eth_getBlockTransactionCountByNumber", [hexN(n)]);
    }
    for (const tag of ["latest", "earliest", "pending", "safe", "finalized"]) {
      await c.call("eth_getBlockByNumber", [tag, false], { label: `eth_getBlockByNumber ${tag}` });
    }
    c.done();
  });

  test("transactions and receipts: by hash, by block and index, eth_getBlockReceipts", async () => {
    const c = new Check();
    for (const { hash } of s.txs) {
      await c.call("eth_getTransactionByHash", [hash]);
      await c.call("eth_getTransactionReceipt", [hash]);
    }
    for (let n = 1; n <= s.lastBlock; n++) {
      await c.call("eth_getBlockReceipts", [hexN(n)]);
      await c.call("eth_getTransactionByBlockNumberAndIndex", [hexN(n), "0x0"]);
    }
    await c.call("eth_getBlockReceipts", [hexN(0)]);
    await c.call("eth_getBlockReceipts", async (e) => [await ownHash(s.lastBlock)(e)], {
      label: "eth_getBlockReceipts by hash",
    });
    await c.call("eth_getTransactionByBlockHashAndIndex", async (e) => [await ownHash(s.lastBlock)(e), "0x1"], {
      label: "eth_getTransactionByBlockHashAndIndex",
    });
    await c.call("eth_getBlockTransactionCountByHash", async (e) => [await ownHash(s.lastBlock)(e)], {
      label: "eth_getBlockTransactionCountByHash",
    });
    await c.call("eth_getUncleCountByBlockNumber", [hexN(s.lastBlock)]);
    await c.call("eth_getTransactionByBlockNumberAndIndex", [hexN(s.lastBlock), "0x1"]);
    await c.call("eth_getTransactionByBlockNumberAndIndex", [hexN(s.lastBlock), "0x2"]);
    c.done();
  });

  test("logs: eth_getLogs over ranges, by address, by topics, by block hash", async () => {
    const c = new Check();
    const topic = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
    const last = hexN(s.lastBlock);
    await c.call("eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]);
    await c.call("eth_getLogs", [{ fromBlock: "0x0", toBlock: last, address: s.contracts.logger }]);
    await c.call("eth_getLogs", [{ fromBlock: "0x0", toBlock: last, address: [s.contracts.logger, s.authority] }]);
    await c.call("eth_getLogs", [{ fromBlock: "0x1", toBlock: last, topics: [topic(1)] }]);
    await c.call("eth_getLogs", [{ fromBlock: "0x1", toBlock: last, topics: [null, topic(2)] }]);
    await c.call("eth_getLogs", [
      { fromBlock: "0x1", toBlock: last, topics: [[topic(1), topic(9)], null, [topic(3)]] },
    ]);
    await c.call("eth_getLogs", [{ fromBlock: last, toBlock: last }]);
    await c.call("eth_getLogs", [{ fromBlock: "0x2", toBlock: "0x5" }]);
    await c.call("eth_getLogs", [{ fromBlock: "earliest", toBlock: "0x0" }]);
    await c.call("eth_getLogs", async (e) => [{ blockHash: await ownHash(s.lastBlock)(e) }], {
      label: "eth_getLogs by block hash",
    });
    c.done();
  });

  test("state reads: balances, nonces, code, storage at each height", async () => {
    const c = new Check();
    const accounts = [
      DEV_ADDRESS,
      RECIPIENT,
      s.authority,
      ...Object.values(s.contracts),
      "0x0000000000000000000000000000000000000004",
    ];
    for (const n of [0, Math.floor(s.lastBlock / 2), s.lastBlock]) {
      for (const a of accounts) {
        await c.call("eth_getBalance", [a, hexN(n)]);
        await c.call("eth_getTransactionCount", [a, hexN(n)]);
        await c.call("eth_getCode", [a, hexN(n)]);
      }
      await c.call("eth_getStorageAt", [s.contracts.store, "0x0", hexN(n)]);
      await c.call("eth_getStorageAt", [s.contracts.store, "0x1", hexN(n)]);
    }
    c.done();
  });

  test("eth_call, eth_estimateGas and eth_createAccessList, with and without state overrides", async () => {
    const c = new Check();
    const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
    const from = DEV_ADDRESS;
    const calls: Record<string, unknown>[] = [
      { from, to: s.contracts.store, data: word(5) },
      { from, to: s.contracts.logger, data: word(1) },
      { from, to: RECIPIENT, value: "0x1" },
      { from, to: s.contracts.revertReason },
      { from, to: s.contracts.revertEmpty },
      { from, to: s.contracts.loop, gas: "0xc350" },
      { from, to: s.contracts.factory, data: word(99), value: "0x3" },
      { from, data: `0x${"00"}` },
      { to: s.contracts.store, data: word(1) },
      { from, to: s.authority, data: word(3) },
      { from, to: "0x0000000000000000000000000000000000000004", data: "0xdeadbeef" },
      { from, to: s.contracts.store, data: word(5), maxFeePerGas: "0x77359400", maxPriorityFeePerGas: "0x1" },
      { from, to: s.contracts.store, data: word(5), gasPrice: "0x77359400" },
    ];
    for (const call of calls) {
      for (const block of ["latest", hexN(s.lastBlock - 1)]) {
        await c.call("eth_call", [call, block]);
        await c.call("eth_estimateGas", [call, block]);
        await c.call("eth_createAccessList", [call, block]);
      }
    }
    const overrides = {
      [s.contracts.store]: { stateDiff: { [word(1)]: word(100) } },
      [DEV_ADDRESS]: { balance: "0x1000" },
      "0x00000000000000000000000000000000000000c1": { code: "0x5f355f5260205ff3" },
    };
    for (const call of [
      { from, to: s.contracts.store, data: word(5) },
      { from, to: "0x00000000000000000000000000000000000000c1", data: word(77) },
      { from, to: RECIPIENT, value: "0x1" },
      { from, to: RECIPIENT, value: "0x100000" },
    ]) {
      await c.call("eth_call", [call, "latest", overrides]);
      await c.call("eth_estimateGas", [call, "latest", overrides]);
    }
    await c.call("eth_call", [
      { from, to: s.contracts.store, data: word(5) },
      "latest",
      { [s.contracts.store]: { state: { [word(0)]: word(1) } } },
    ]);
    await c.call("eth_call", [
      { from, to: s.contracts.store, data: word(5) },
      "latest",
      { [s.contracts.store]: { code: `0x${"5b5f56"}` } },
    ]);
    await c.call(
      "eth_call",
      [{ from, to: s.contracts.store, data: word(5) }, "latest", {}, { number: "0x1000", time: "0x100000000" }],
      { label: "eth_call with block overrides" },
    );
    c.done();
  });

  test("eth_getProof: same values and storage proofs; every proof verifies against its root", async () => {
    const c = new Check();
    const extra: MustDiffer[] = [
      {
        path: /\.accountProof\[\]$/,
        reason: "account proofs are paths in each chain's state trie, whose other accounts differ",
      },
    ];
    const queries: [string, string[]][] = [
      [DEV_ADDRESS, []],
      [RECIPIENT, []],
      [s.contracts.store, ["0x0", "0x1", "0x2"]],
      [s.contracts.logger, ["0x0"]],
      ["0x00000000000000000000000000000000000000ee", ["0x0"]],
    ];
    for (const [address, keys] of queries) {
      for (const block of ["latest", hexN(s.lastBlock - 1)]) {
        const r = await c.call("eth_getProof", [address, keys, block], { extra });
        for (const [e, a] of [
          [pair.geth, r.geth],
          [pair.cometh, r.cometh],
        ] as const) {
          if (a.error !== undefined) continue;
          const header = await e.result<{ stateRoot: string }>("eth_getBlockByNumber", [block, false]);
          const problems = await verifyProof(a.result as never, e.name === "geth" ? header.stateRoot : undefined);
          expect(problems, `${e.name} eth_getProof ${address} ${block}`).toEqual([]);
        }
      }
    }
    c.done();
  });

  test("eth_feeHistory, eth_gasPrice, eth_maxPriorityFeePerGas, eth_blobBaseFee", async () => {
    const c = new Check();
    const last = hexN(s.lastBlock);
    await c.call("eth_feeHistory", ["0x4", last, []]);
    await c.call("eth_feeHistory", [hexN(s.lastBlock + 1), last, [10, 50, 90]]);
    await c.call("eth_feeHistory", ["0x2", "latest", [0, 100]]);
    await c.call("eth_feeHistory", ["0x1", "0x0", [50]]);
    await c.call("eth_feeHistory", ["0x3", "0x5", [25, 75]]);
    await c.call("eth_feeHistory", ["0x0", "latest", []]);
    await c.call("eth_gasPrice");
    await c.call("eth_maxPriorityFeePerGas");
    await c.call("eth_blobBaseFee");
    c.done();
  });

  const tracerConfigs: [string, Record<string, unknown>][] = [
    ["struct logger", {}],
    ["struct logger, memory and return data", { enableMemory: true, enableReturnData: true }],
    ["struct logger, no stack and no storage", { disableStack: true, disableStorage: true }],
    ["callTracer", { tracer: "callTracer" }],
    ["callTracer withLog", { tracer: "callTracer", tracerConfig: { withLog: true } }],
    ["callTracer onlyTopCall", { tracer: "callTracer", tracerConfig: { onlyTopCall: true } }],
    ["prestateTracer", { tracer: "prestateTracer" }],
    ["prestateTracer diffMode", { tracer: "prestateTracer", tracerConfig: { diffMode: true } }],
    [
      "prestateTracer disableCode/disableStorage",
      { tracer: "prestateTracer", tracerConfig: { disableCode: true, disableStorage: true } },
    ],
    ["4byteTracer", { tracer: "4byteTracer" }],
    ["noopTracer", { tracer: "noopTracer" }],
  ];

  test("debug_traceTransaction with the struct logger and every tracer cometh serves", async () => {
    const c = new Check();
    for (const { name, hash } of s.txs) {
      for (const [what, cfg] of tracerConfigs) {
        await c.call("debug_traceTransaction", [hash, cfg], { label: `debug_traceTransaction ${name}, ${what}` });
      }
    }
    c.done();
  });

  test("debug_traceCall and debug_traceBlockByNumber with every tracer", async () => {
    const c = new Check();
    const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
    const calls = [
      { from: DEV_ADDRESS, to: s.contracts.store, data: word(5) },
      { from: DEV_ADDRESS, to: s.contracts.factory, data: word(8), value: "0x2" },
      { from: DEV_ADDRESS, to: s.contracts.revertReason },
      { from: DEV_ADDRESS, to: s.contracts.loop, gas: "0x7530" },
    ];
    for (const call of calls) {
      for (const [what, cfg] of tracerConfigs) {
        await c.call("debug_traceCall", [call, "latest", cfg], { label: `debug_traceCall ${call.to} ${what}` });
      }
    }
    await c.call("debug_traceCall", [
      calls[0],
      "latest",
      { tracer: "callTracer", stateOverrides: { [s.contracts.store]: { stateDiff: { [word(1)]: word(9) } } } },
    ]);
    for (const n of [1, 9, s.lastBlock]) {
      for (const [what, cfg] of tracerConfigs) {
        await c.call("debug_traceBlockByNumber", [hexN(n), cfg], { label: `debug_traceBlockByNumber ${n} ${what}` });
      }
    }
    c.done();
  });

  test("debug_traceCall with blockOverrides: every overridden field reaches the EVM as geth applies it", async () => {
    const c = new Check();
    // Returns NUMBER, TIMESTAMP, COINBASE, GASLIMIT, PREVRANDAO, BASEFEE and BLOBBASEFEE as 7 words.
    const env = "0x00000000000000000000000000000000000000e7";
    const code = `0x${["43", "42", "41", "45", "44", "48", "4a"].map((op, i) => `${op}60${(i * 32).toString(16).padStart(2, "0")}52`).join("")}60e06000f3`;
    const stateOverrides = { [env]: { code } };
    const all = {
      number: "0x1234",
      time: "0x7000000",
      feeRecipient: "0x00000000000000000000000000000000000000fe",
      gasLimit: "0x2000000",
      prevRandao: `0x${"5a".repeat(32)}`,
      baseFeePerGas: "0x7",
      blobBaseFee: "0x3",
    };
    const call = { from: DEV_ADDRESS, to: env, gas: "0x186a0" };
    for (const [what, cfg] of tracerConfigs) {
      await c.call("debug_traceCall", [call, "latest", { ...cfg, stateOverrides, blockOverrides: all }], {
        label: `debug_traceCall blockOverrides (all fields) ${what}`,
      });
    }
    // A priced call pays the overridden base fee (geth zeroes it only for a call without a price).
    await c.call("debug_traceCall", [
      { ...call, maxFeePerGas: "0x9", maxPriorityFeePerGas: "0x1" },
      "latest",
      { tracer: "callTracer", stateOverrides, blockOverrides: all },
    ]);
    // Each field alone on top of the latest block (the others are the node's own: only what is
    // overridden is compared word by word).
    for (const [field, value] of Object.entries(all)) {
      await c.call(
        "debug_traceCall",
        [call, "latest", { tracer: "callTracer", stateOverrides, blockOverrides: { [field]: value } }],
        {
          label: `debug_traceCall blockOverrides ${field}`,
          map: (v: unknown) => {
            const out = (v as { output?: string }).output ?? "";
            const i = Object.keys(all).indexOf(field);
            return out.slice(2 + i * 64, 2 + (i + 1) * 64);
          },
        },
      );
    }
    // What a single call cannot take, and bad values.
    await c.call("debug_traceCall", [call, "latest", { blockOverrides: { beaconRoot: `0x${"11".repeat(32)}` } }]);
    await c.call("debug_traceCall", [call, "latest", { blockOverrides: { withdrawals: [] } }]);
    await c.call("debug_traceCall", [call, "latest", { blockOverrides: { number: "12" } }]);
    await c.call("debug_traceCall", [call, "latest", { blockOverrides: { feeRecipient: "0x12" } }]);
    c.done();
  });

  test("eth_simulateV1: multi-block, overrides, validation, traceTransfers, full transactions, and its errors", async () => {
    const c = new Check();
    const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
    const from = DEV_ADDRESS;
    const echo = "0x00000000000000000000000000000000000000c1";
    const requests: [string, Record<string, unknown>][] = [
      [
        "two blocks: a store, a logging call, a transfer, then a read of the store",
        {
          blockStateCalls: [
            {
              calls: [
                { from, to: s.contracts.store, data: word(11) },
                { from, to: s.contracts.logger, data: word(2) },
                { from, to: RECIPIENT, value: "0x5" },
              ],
            },
            {
              calls: [
                { from, to: s.contracts.store, data: word(11) },
                { from, to: s.contracts.revertReason },
              ],
            },
          ],
        },
      ],
      [
        "block overrides: a gap of block numbers, fee recipient, prevRandao, gas limit",
        {
          blockStateCalls: [
            {
              blockOverrides: {
                number: hexN(s.lastBlock + 5),
                feeRecipient: "0x00000000000000000000000000000000000000fe",
                prevRandao: `0x${"5a".repeat(32)}`,
                gasLimit: "0x1000000",
              },
              calls: [{ from, to: s.contracts.logger, data: word(3) }],
            },
          ],
        },
      ],
      [
        "state overrides: balance, code, stateDiff, a precompile moved",
        {
          blockStateCalls: [
            {
              stateOverrides: {
                [from]: { balance: "0xde0b6b3a7640000" },
                [echo]: { code: "0x5f355f5260205ff3" },
                [s.contracts.store]: { stateDiff: { [word(1)]: word(100) } },
                "0x0000000000000000000000000000000000000004": {
                  movePrecompileToAddress: "0x00000000000000000000000000000000000000d4",
                },
              },
              calls: [
                { from, to: echo, data: word(77) },
                { from, to: s.contracts.store, data: word(5) },
                { from, to: "0x00000000000000000000000000000000000000d4", data: "0xdeadbeef" },
                { from, to: "0x0000000000000000000000000000000000000004", data: "0xdeadbeef" },
              ],
            },
          ],
        },
      ],
      [
        "traceTransfers and returnFullTransactions",
        {
          traceTransfers: true,
          returnFullTransactions: true,
          blockStateCalls: [
            {
              calls: [
                { from, to: RECIPIENT, value: "0x7" },
                { from, to: s.contracts.factory, data: word(8), value: "0x2" },
              ],
            },
          ],
        },
      ],
      [
        "validation: nonces and fees checked",
        {
          validation: true,
          blockStateCalls: [
            {
              blockOverrides: { baseFeePerGas: "0x9" },
              calls: [{ from, to: RECIPIENT, value: "0x1", maxFeePerGas: "0xa", maxPriorityFeePerGas: "0x1" }],
            },
          ],
        },
      ],
      [
        "validation: fee cap below the base fee",
        {
          validation: true,
          blockStateCalls: [
            { blockOverrides: { baseFeePerGas: "0x9" }, calls: [{ from, to: RECIPIENT, maxFeePerGas: "0x1" }] },
          ],
        },
      ],
      [
        "validation: nonce too high",
        {
          validation: true,
          blockStateCalls: [{ calls: [{ from, to: RECIPIENT, nonce: "0x999", maxFeePerGas: "0x0" }] }],
        },
      ],
      [
        "error: block numbers not increasing",
        {
          blockStateCalls: [
            { blockOverrides: { number: hexN(s.lastBlock + 3) } },
            { blockOverrides: { number: hexN(s.lastBlock + 2) } },
          ],
        },
      ],
      ["error: too many blocks", { blockStateCalls: [{ blockOverrides: { number: hexN(s.lastBlock + 300) } }] }],
      [
        "error: time going backwards",
        {
          blockStateCalls: [{ blockOverrides: { time: "0x1" } }],
        },
      ],
      [
        "error: state and stateDiff together",
        {
          blockStateCalls: [{ stateOverrides: { [echo]: { state: {}, stateDiff: {} } } }],
        },
      ],
      [
        "error: a call that runs out of the gas budget",
        {
          blockStateCalls: [{ calls: [{ from, to: s.contracts.loop, gas: "0x5f5e100" }] }],
        },
      ],
      ["error: insufficient funds", { blockStateCalls: [{ calls: [{ from: echo, to: RECIPIENT, value: "0x1" }] }] }],
    ];
    // Its text names the base block's time, which each chain stamps itself; the code and the rest are compared.
    const ownTime: MustDiffer[] = [
      {
        path: /^eth_simulateV1\.error\.message$/,
        label: /time going backwards$/,
        reason: "the message names the base block's timestamp (block times differ, above)",
      },
    ];
    for (const [what, req] of requests) {
      await c.call("eth_simulateV1", [req, "latest"], { label: `eth_simulateV1 ${what}`, extra: ownTime });
    }
    // The same refusal, its text compared up to that timestamp.
    const backwards = { blockStateCalls: [{ blockOverrides: { time: "0x1" } }] };
    const texts = await Promise.all(
      pair.both.map(async (e) => (await e.call("eth_simulateV1", [backwards, "latest"])).error?.message),
    );
    expect(texts.map((t) => t?.replace(/\d+$/, "T"))).toEqual([
      "block timestamps must be in order: 1 <= T",
      "block timestamps must be in order: 1 <= T",
    ]);
    c.done();
  });

  test("eth_subscribe newHeads and logs: the notifications of the same block", async () => {
    const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
    const streams = await Promise.all(
      pair.both.map((e) => openSubscriptions(e.ws, [["newHeads"], ["logs", { address: s.contracts.logger }]])),
    );
    try {
      const nonce = Number(await pair.geth.result<string>("eth_getTransactionCount", [DEV_ADDRESS, "latest"]));
      const raw = await new Wallet(DEV_KEY).signTransaction({
        chainId: CHAIN_ID,
        nonce,
        type: 2,
        to: s.contracts.logger,
        data: word(0x5b5),
        gasLimit: 100_000,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      const [hash] = await sendAll(pair, [raw]);
      const receipt = await pair.geth.result<{ blockNumber: string }>("eth_getTransactionReceipt", [hash]);
      const [g, c] = await Promise.all(
        streams.map((st) =>
          Promise.all([
            st.next(0, (h) => (h as { number: string }).number === receipt.blockNumber),
            ...[0, 1, 2, 3, 4].map(() => st.next(1, () => true)),
          ]),
        ),
      );
      const check = new Check();
      check.record("newHeads notification", g?.[0], c?.[0]);
      check.record("logs notifications", g?.slice(1), c?.slice(1));
      check.done();
    } finally {
      for (const st of streams) st.close();
    }
  });
});

/** Subscriptions on one WebSocket: `next(i, match)` resolves with the next notification of subscription i that matches (10 s). */
async function openSubscriptions(
  url: string,
  params: unknown[][],
): Promise<{ next(i: number, match: (v: unknown) => boolean): Promise<unknown>; close(): void }> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const ids: string[] = [];
  const queues = new Map<string, unknown[]>();
  const waiters: { sub: string; match: (v: unknown) => boolean; resolve: (v: unknown) => void }[] = [];
  const pending = new Map<number, (id: string) => void>();
  ws.on("message", (data) => {
    const m = JSON.parse(data.toString()) as {
      id?: number;
      result?: string;
      params?: { subscription: string; result: unknown };
    };
    if (m.id !== undefined && m.result !== undefined) pending.get(m.id)?.(m.result);
    if (m.params === undefined) return;
    const w = waiters.findIndex((x) => x.sub === m.params?.subscription && x.match(m.params.result));
    if (w >= 0) waiters.splice(w, 1)[0]?.resolve(m.params.result);
    else queues.get(m.params.subscription)?.push(m.params.result);
  });
  for (const [i, p] of params.entries()) {
    const id = await new Promise<string>((resolve) => {
      pending.set(i + 1, resolve);
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "eth_subscribe", params: p }));
    });
    ids.push(id);
    queues.set(id, []);
  }
  return {
    next(i, match) {
      const sub = ids[i] as string;
      const q = queues.get(sub) as unknown[];
      const at = q.findIndex(match);
      if (at >= 0) return Promise.resolve(q.splice(at, 1)[0]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${url}: no notification on ${sub} in 10 s`)), 10_000);
        waiters.push({
          sub,
          match,
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v);
          },
        });
      });
    },
    close: () => ws.close(),
  };
}
