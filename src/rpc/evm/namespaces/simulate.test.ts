import { RLP } from "@ethereumjs/rlp";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { toData, toQuantity } from "../encode/hex.js";
import { rpcCall } from "../testing/evmClient.js";
import {
  ECHO,
  type EvmTestChain,
  type EvmTestRpc,
  FAILER,
  LOGGER,
  REVERTER,
  SLOW,
  startEvmTestChain,
  TRANSFER_TOPIC,
} from "../testing/realChain.js";
import { CHAIN_ID } from "../testing/signing.js";

/**
 * eth_simulateV1 on a real dev chain in process (realChain.ts): multi-block simulation with block
 * and state overrides, validation, traceTransfers, returnFullTransactions, geth's limits and error
 * codes (docs/ethereum-rpc.md "eth_simulateV1").
 */

const A = "0xc000000000000000000000000000000000000000";
const B = "0xc100000000000000000000000000000000000000";
const C = "0xc200000000000000000000000000000000000000";
const TRANSFER_ADDRESS = "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
const TOPIC = toData(TRANSFER_TOPIC);
const pad = (addr: string) => `0x${addr.slice(2).padStart(64, "0")}`;

let chain: EvmTestChain;
let rpc: EvmTestRpc;
beforeAll(async () => {
  chain = await startEvmTestChain();
  rpc = await chain.startRpc();
});
afterAll(() => chain.close());

describe("eth_simulateV1 precompile overrides", () => {
  const IDENTITY = "0x0000000000000000000000000000000000000004";
  const MOVED = "0x00000000000000000000000000000000000000c4";
  test("behavior: an overridden precompile runs the override's code; a moved one runs at its new address and is gone from the old", async () => {
    // PUSH1 0x2a PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: returns the word 42.
    const [overridden] = await ok({
      blockStateCalls: [
        {
          stateOverrides: { [IDENTITY]: { code: "0x602a60005260206000f3" } },
          calls: [{ from: A, to: IDENTITY, input: "0xdeadbeef" }],
        },
      ],
    });
    expect(overridden.calls[0].returnData).toBe(`0x${"00".repeat(31)}2a`);
    const [moved] = await ok({
      blockStateCalls: [
        {
          stateOverrides: { [IDENTITY]: { movePrecompileToAddress: MOVED } },
          calls: [
            { from: A, to: MOVED, input: "0xdeadbeef" },
            { from: A, to: IDENTITY, input: "0xdeadbeef" },
          ],
        },
      ],
    });
    expect(moved.calls.map((c: { returnData: string }) => c.returnData)).toEqual(["0xdeadbeef", "0x"]);
    // Each block starts from the chain's own precompiles again.
    const [fresh] = await ok({ blockStateCalls: [{ calls: [{ from: A, to: IDENTITY, input: "0xdeadbeef" }] }] });
    expect(fresh.calls[0].returnData).toBe("0xdeadbeef");
  });
});

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
async function simulate(opts: unknown, block: unknown = "latest"): Promise<any> {
  return rpcCall(rpc.url, "eth_simulateV1", [opts, block]);
}

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
async function ok(opts: unknown, block?: unknown): Promise<any[]> {
  const reply = await simulate(opts, block);
  expect(reply.error).toBeUndefined();
  return reply.result;
}

async function fails(opts: unknown, code: number, message: string | RegExp): Promise<void> {
  const reply = await simulate(opts);
  expect(reply.result).toBeUndefined();
  expect(reply.error.code).toBe(code);
  if (typeof message === "string") expect(reply.error.message).toBe(message);
  else expect(reply.error.message).toMatch(message);
}

function keccak(hex: string): string {
  return toData(keccak_256(Buffer.from(hex.slice(2), "hex")));
}

describe("eth_simulateV1", () => {
  test("default: a transfer block on top of the latest block", async () => {
    const head = chain.block(chain.services.chain.latestHeight() as number);
    const [b] = await ok({
      blockStateCalls: [
        {
          stateOverrides: { [A]: { balance: "0x3e8" } },
          calls: [
            { from: A, to: B, value: "0x3e8" },
            { from: B, to: C, value: "0x3e8" },
          ],
        },
      ],
    });
    expect(b.number).toBe(toQuantity(head.number + 1));
    expect(b.parentHash).toBe(toData(head.hash));
    expect(b.timestamp).toBe(toQuantity(head.timestamp + 12));
    expect(b.baseFeePerGas).toBe("0x0");
    expect(b.gasUsed).toBe(toQuantity(42000));
    expect(b.calls).toEqual([
      { returnData: "0x", logs: [], gasUsed: "0x5208", maxUsedGas: "0x5208", status: "0x1" },
      { returnData: "0x", logs: [], gasUsed: "0x5208", maxUsedGas: "0x5208", status: "0x1" },
    ]);
    expect(b.transactions).toHaveLength(2);
    expect(b.withdrawals).toEqual([]);
    expect(b.uncles).toEqual([]);
    expect(b.requestsHash).toBe("0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // geth's key order (a Go map): sorted.
    expect(Object.keys(b)).toEqual([...Object.keys(b)].sort());
    // The chain did not move.
    expect(chain.services.chain.latestHeight()).toBe(head.number);
  });

  test("behavior: the transaction hash is geth's unsigned dynamic-fee transaction's", async () => {
    // geth's fixture (execution-apis ethSimulate-simple) on chain 3503995874084926 gives another
    // hash; here the rule is checked on our chain id: keccak(0x02 ‖ rlp([chainId, 0, 0, 0, gas, to, value, 0x, [], 0, 0, 0])).
    const [b] = await ok({
      blockStateCalls: [
        { stateOverrides: { [A]: { balance: "0x3e8" } }, calls: [{ from: A, to: B, value: "0x3e8", gas: "0x5208" }] },
      ],
    });
    const big = (n: bigint) => {
      if (n === 0n) return new Uint8Array(0);
      const h = n.toString(16);
      return Buffer.from(h.length % 2 === 0 ? h : `0${h}`, "hex");
    };
    const body = RLP.encode([
      big(CHAIN_ID),
      big(0n),
      big(0n),
      big(0n),
      big(21000n),
      Buffer.from(B.slice(2), "hex"),
      big(1000n),
      new Uint8Array(0),
      [],
      new Uint8Array(0),
      new Uint8Array(0),
      new Uint8Array(0),
    ]);
    expect(b.transactions[0]).toBe(keccak(`0x02${Buffer.from(body).toString("hex")}`));
  });

  test("behavior: several blocks chain their hashes, numbers and timestamps; state carries over", async () => {
    const res = await ok({
      blockStateCalls: [
        { stateOverrides: { [A]: { balance: "0x10000" } }, calls: [{ from: A, to: B, value: "0x100" }] },
        { calls: [{ from: B, to: C, value: "0x80" }] },
        { blockOverrides: { number: "0x40", time: "0xffffff00" }, calls: [] },
      ],
    });
    const head = chain.services.chain.latestHeight() as number;
    // Blocks head+3 … 0x3f fill the gap to 0x40.
    expect(res).toHaveLength(0x40 - head);
    for (let i = 1; i < res.length; i++) {
      expect(res[i].parentHash).toBe(res[i - 1].hash);
      expect(BigInt(res[i].number)).toBe(BigInt(res[i - 1].number) + 1n);
      expect(BigInt(res[i].timestamp) > BigInt(res[i - 1].timestamp)).toBe(true);
    }
    expect(res[2].timestamp).toBe(toQuantity(BigInt(res[1].timestamp) + 12n));
    expect(res.at(-1).timestamp).toBe("0xffffff00");
    expect(res[1].calls[0].status).toBe("0x1");
  });

  test("behavior: block overrides reach the EVM (NUMBER, TIMESTAMP, COINBASE, BASEFEE, PREVRANDAO, GASLIMIT)", async () => {
    // Returns NUMBER, TIMESTAMP, COINBASE, BASEFEE, PREVRANDAO, GASLIMIT as six words.
    const code = "0x43600052426020524160405248606052446080524560a05260c06000f3";
    const number = (chain.services.chain.latestHeight() as number) + 100;
    const res = await ok({
      blockStateCalls: [
        {
          blockOverrides: {
            number: toQuantity(number),
            time: "0x70000000",
            feeRecipient: C,
            baseFeePerGas: "0x7",
            prevRandao: `0x${"ab".repeat(32)}`,
            gasLimit: "0x1c9c380",
          },
          stateOverrides: { [B]: { code } },
          calls: [{ from: A, to: B }],
        },
      ],
    });
    // Blocks before `number` fill the gap, empty.
    expect(res).toHaveLength(100);
    expect(res[0].calls).toEqual([]);
    const out = res.at(-1).calls[0].returnData.slice(2);
    const words = out.match(/.{64}/g) as string[];
    expect(BigInt(`0x${words[0]}`)).toBe(BigInt(number));
    expect(BigInt(`0x${words[1]}`)).toBe(0x70000000n);
    expect(`0x${(words[2] as string).slice(24)}`).toBe(C);
    expect(BigInt(`0x${words[3]}`)).toBe(7n);
    expect(words[4]).toBe("ab".repeat(32));
    expect(BigInt(`0x${words[5]}`)).toBe(30_000_000n);
    const last = res.at(-1);
    expect(last.miner).toBe(C);
    expect(last.mixHash).toBe(`0x${"ab".repeat(32)}`);
    expect(last.baseFeePerGas).toBe("0x7");
    expect(last.gasLimit).toBe("0x1c9c380");
  });

  test("behavior: state overrides (balance, nonce, code, state, stateDiff) and BLOCKHASH of simulated blocks", async () => {
    // SLOAD(0) SLOAD(1) as two words.
    const reader = "0x5f5460005260015460205260406000f3";
    const res = await ok({
      blockStateCalls: [
        {
          stateOverrides: {
            [B]: { code: reader, state: { [`0x${"00".repeat(32)}`]: `0x${"00".repeat(31)}05` } },
            [A]: { nonce: "0x7" },
          },
          calls: [{ from: A, to: B }],
        },
        {
          stateOverrides: { [B]: { stateDiff: { [`0x${"00".repeat(31)}01`]: `0x${"00".repeat(31)}09` } } },
          calls: [{ from: A, to: B }],
        },
        {
          // BLOCKHASH(NUMBER - 1): the previous simulated block's hash.
          stateOverrides: { [C]: { code: "0x60014303405f5260205ff3" } },
          calls: [{ from: A, to: C }],
        },
      ],
      returnFullTransactions: true,
    });
    expect(res[0].calls[0].returnData).toBe(`0x${"00".repeat(31)}05${"00".repeat(32)}`);
    expect(res[1].calls[0].returnData).toBe(`0x${"00".repeat(31)}05${"00".repeat(31)}09`);
    expect(res[2].calls[0].returnData).toBe(res[1].hash);
    // The nonce override is the first call's nonce; the next block's call follows it.
    expect(res[0].transactions[0].nonce).toBe("0x7");
    expect(res[1].transactions[0].nonce).toBe("0x8");
  });

  test("behavior: the EIP-4788 beacon root and the EIP-2935 parent hash are stored before the calls", async () => {
    // Returns SLOAD(calldata word): stands in for both system contracts, whose storage geth's system calls fill.
    const reader = "0x5f35545f5260205ff3";
    const beacon = "0x000f3df6d732807ef1319fb7b8bb8522d0beac02";
    const history = "0x0000f90827f1c53a10cb7a02335b175320002935";
    const root = `0x${"cd".repeat(32)}`;
    const time = 0x70000000n;
    const slot = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;
    const head = chain.services.chain.latestHeight() as number;
    const res = await ok({
      blockStateCalls: [
        {
          blockOverrides: { time: toQuantity(time), beaconRoot: root },
          stateOverrides: { [beacon]: { code: reader }, [history]: { code: reader } },
          calls: [
            { from: A, to: beacon, input: slot(time % 8191n) },
            { from: A, to: beacon, input: slot((time % 8191n) + 8191n) },
            { from: A, to: history, input: slot(BigInt(head) % 8191n) },
          ],
        },
      ],
    });
    const [b] = res;
    expect(b.parentBeaconBlockRoot).toBe(root);
    expect(b.calls.map((c: { returnData: string }) => c.returnData)).toEqual([
      slot(time),
      root,
      toData(chain.block(head).hash),
    ]);
  });

  test("behavior: returnFullTransactions gives transaction objects with their sender", async () => {
    const [b] = await ok({
      blockStateCalls: [
        {
          blockOverrides: { baseFeePerGas: "0xf" },
          stateOverrides: { [A]: { balance: "0xe8d4a51000" } },
          calls: [
            { from: A, to: B, maxFeePerGas: "0x10", value: "0x1" },
            { from: A, to: B, gasPrice: "0x20" },
          ],
        },
      ],
      validation: true,
      returnFullTransactions: true,
    });
    const [t0, t1] = b.transactions;
    expect(t0).toMatchObject({
      blockHash: b.hash,
      blockNumber: b.number,
      blockTimestamp: b.timestamp,
      from: A,
      to: B,
      gasPrice: "0xf",
      maxFeePerGas: "0x10",
      maxPriorityFeePerGas: "0x0",
      nonce: "0x0",
      transactionIndex: "0x0",
      value: "0x1",
      type: "0x2",
      accessList: [],
      chainId: toQuantity(CHAIN_ID),
      v: "0x0",
      r: "0x0",
      s: "0x0",
      yParity: "0x0",
    });
    // gasPrice makes it a legacy transaction, unsigned: no chain id.
    expect(t1).toMatchObject({ type: "0x0", gasPrice: "0x20", nonce: "0x1", transactionIndex: "0x1" });
    expect(t1.chainId).toBeUndefined();
  });

  test("behavior: blob calls: BLOBHASH, blob gas, the blob fee and its checks", async () => {
    const blobHash = `0x01${"ab".repeat(31)}`;
    // BLOBHASH(0) BLOBBASEFEE as two words.
    const code = "0x5f495f524a60205260405ff3";
    const res = await ok({
      blockStateCalls: [
        {
          blockOverrides: { blobBaseFee: "0x3", baseFeePerGas: "0x0" },
          stateOverrides: { [A]: { balance: "0x100000000000" }, [B]: { code } },
          calls: [{ from: A, to: B, maxFeePerBlobGas: "0x5", blobVersionedHashes: [blobHash] }],
        },
      ],
      validation: true,
      returnFullTransactions: true,
    });
    const [b] = res;
    expect(b.calls[0].returnData).toBe(`${blobHash}${"3".padStart(64, "0")}`);
    expect(b.blobGasUsed).toBe(toQuantity(131072));
    expect(b.transactions[0]).toMatchObject({ type: "0x3", maxFeePerBlobGas: "0x5", blobVersionedHashes: [blobHash] });
    await fails(
      {
        blockStateCalls: [
          {
            blockOverrides: { blobBaseFee: "0x9", baseFeePerGas: "0x0" },
            calls: [{ from: A, to: B, maxFeePerBlobGas: "0x5", blobVersionedHashes: [blobHash] }],
          },
        ],
        validation: true,
      },
      -32603,
      /^err: max fee per blob gas less than block blob gas fee: address 0xC000000000000000000000000000000000000000 blobGasFeeCap: 5, blobBaseFee: 9/,
    );
    await fails(
      { blockStateCalls: [{ calls: [{ from: A, to: B, blobVersionedHashes: [`0x02${"ab".repeat(31)}`] }] }] },
      -32000,
      /^err: blob 0 has invalid hash version/,
    );
  });

  test("behavior: traceTransfers reports ETH moves as ERC-7528 Transfer logs, next to the contract's logs", async () => {
    const [b] = await ok({
      blockStateCalls: [
        {
          stateOverrides: { [A]: { balance: "0x100000" } },
          calls: [
            { from: A, to: B, value: "0x3e8" },
            { from: A, to: toData(LOGGER), value: "0x5", input: C },
          ],
        },
      ],
      traceTransfers: true,
    });
    const [c0, c1] = b.calls;
    expect(c0.logs).toEqual([
      {
        address: TRANSFER_ADDRESS,
        topics: [TOPIC, pad(A), pad(B)],
        data: `0x${"3e8".padStart(64, "0")}`,
        blockNumber: b.number,
        transactionHash: b.transactions[0],
        transactionIndex: "0x0",
        blockHash: b.hash,
        blockTimestamp: b.timestamp,
        logIndex: "0x0",
        removed: false,
      },
    ]);
    // The ETH transfer into LOGGER, then LOGGER's own Transfer event; log indexes count across the block.
    expect(c1.logs.map((l: { address: string; logIndex: string }) => [l.address, l.logIndex])).toEqual([
      [TRANSFER_ADDRESS, "0x1"],
      [toData(LOGGER), "0x2"],
    ]);
    // The block's bloom holds the contract's log, not the traced transfers (they are not in receipts).
    expect(b.logsBloom).not.toBe(`0x${"00".repeat(256)}`);
  });

  test("behavior: without traceTransfers a transfer has no logs; reverted frames drop their logs", async () => {
    const [b] = await ok({
      blockStateCalls: [
        {
          stateOverrides: { [A]: { balance: "0x100000" } },
          calls: [{ from: A, to: B, value: "0x3e8" }],
        },
      ],
    });
    expect(b.calls[0].logs).toEqual([]);
    expect(b.logsBloom).toBe(`0x${"00".repeat(256)}`);
  });

  test("behavior: reverts and VM errors are call results with geth's codes", async () => {
    const [b] = await ok({
      blockStateCalls: [
        {
          calls: [
            { from: A, to: toData(REVERTER) },
            { from: A, to: toData(FAILER), gas: "0x10000" },
            { from: A, to: toData(ECHO), input: "0x1234" },
          ],
        },
      ],
    });
    const [rev, oog, echo] = b.calls;
    expect(rev.status).toBe("0x0");
    expect(rev.error).toMatchObject({ code: 3, message: "execution reverted: boom" });
    // geth keeps a failed call's output out of returnData: the revert data is the error's.
    expect(rev.returnData).toBe("0x");
    expect(rev.error.data).toBe(
      `0x08c379a0${"20".padStart(64, "0")}${"4".padStart(64, "0")}${Buffer.from("boom").toString("hex").padEnd(64, "0")}`,
    );
    expect(oog).toMatchObject({ status: "0x0", gasUsed: "0x10000", error: { code: -32015, message: "out of gas" } });
    expect(echo).toMatchObject({ status: "0x1", returnData: "0x1234" });
  });

  test("behavior: validation checks nonces, funds and the base fee; without it the base fee is 0", async () => {
    await fails(
      { blockStateCalls: [{ calls: [{ from: A, to: B, nonce: "0x5" }] }], validation: true },
      -38011,
      /^err: nonce too high: address 0xC000000000000000000000000000000000000000, tx: 5 state: 0 \(supplied gas \d+\)$/,
    );
    await fails(
      {
        blockStateCalls: [{ stateOverrides: { [A]: { nonce: "0x3" } }, calls: [{ from: A, to: B, nonce: "0x1" }] }],
        validation: true,
      },
      -38010,
      /^err: nonce too low: address 0xC000000000000000000000000000000000000000, tx: 1 state: 3/,
    );
    await fails(
      {
        blockStateCalls: [{ blockOverrides: { baseFeePerGas: "0xa" }, calls: [{ from: A, to: B }] }],
        validation: true,
      },
      -38012,
      /^err: max fee per gas less than block base fee: address 0xC000000000000000000000000000000000000000, maxFeePerGas: 0, baseFee: 10/,
    );
    await fails(
      { blockStateCalls: [{ calls: [{ from: A, to: B, value: "0x3e8" }] }] },
      -38014,
      /^err: insufficient funds for gas \* price \+ value: address 0xC000000000000000000000000000000000000000 have 0 want 1000 \(supplied gas \d+\)$/,
    );
    await fails(
      { blockStateCalls: [{ calls: [{ from: A, to: B, gas: "0x0" }] }] },
      -38013,
      "err: intrinsic gas too low: have 0, want 21000 (supplied gas 0)",
    );
    // Without validation: base fee 0, any nonce, zero-fee calls.
    const [b] = await ok({ blockStateCalls: [{ calls: [{ from: A, to: B, nonce: "0x9" }] }] });
    expect(b.baseFeePerGas).toBe("0x0");
    expect(b.calls[0].status).toBe("0x1");
    // With validation the base fee is the chain's next one.
    const next = (await chain.services.fees.nextBaseFee()) ?? 0n;
    const [v] = await ok({
      blockStateCalls: [
        {
          stateOverrides: { [A]: { balance: "0x100000000000000000000" } },
          calls: [{ from: A, to: B, maxFeePerGas: "0x10000000000" }],
        },
      ],
      validation: true,
    });
    expect(v.baseFeePerGas).toBe(toQuantity(next));
  });

  test("behavior: withdrawals are paid after the calls (gwei) and make the withdrawals root", async () => {
    // BALANCE(C) as a word.
    const code = `0x73${C.slice(2)}315f5260205ff3`;
    const res = await ok({
      blockStateCalls: [
        {
          blockOverrides: { withdrawals: [{ index: "0x0", validatorIndex: "0x1", address: C, amount: "0x2" }] },
          stateOverrides: { [B]: { code } },
          calls: [{ from: A, to: B }],
        },
        { calls: [{ from: A, to: B }] },
      ],
    });
    expect(res[0].calls[0].returnData).toBe(`0x${"0".repeat(64)}`);
    expect(BigInt(res[1].calls[0].returnData)).toBe(2n * 10n ** 9n);
    expect(res[0].withdrawals).toEqual([{ index: "0x0", validatorIndex: "0x1", address: C, amount: "0x2" }]);
    expect(res[0].withdrawalsRoot).not.toBe(res[1].withdrawalsRoot);
    expect(res[1].withdrawalsRoot).toBe("0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");
  });

  test("error: a simulation past evm-timeout is stopped", async () => {
    // 1 ms against a loop of the whole gas cap (25M gas, about two million jumps).
    const quick = await chain.startRpc({ evmTimeoutMs: 1 });
    try {
      const reply = await rpcCall(quick.url, "eth_simulateV1", [
        { blockStateCalls: [{ calls: [{ from: A, to: toData(SLOW) }] }] },
      ]);
      expect(reply.error.code).toBe(-32000);
      expect(reply.error.message).toMatch(/^execution aborted \(timeout = 1ms\)/);
    } finally {
      await quick.close();
    }
  });

  test("error: block numbers and timestamps must increase; 256 blocks at most", async () => {
    const head = chain.services.chain.latestHeight() as number;
    await fails(
      {
        blockStateCalls: [
          { blockOverrides: { number: toQuantity(head + 10) } },
          { blockOverrides: { number: toQuantity(head + 5) } },
        ],
      },
      -38020,
      `block numbers must be in order: ${head + 5} <= ${head + 10}`,
    );
    await fails(
      { blockStateCalls: [{ blockOverrides: { time: "0x7fffffff" } }, { blockOverrides: { time: "0x7ffffff0" } }] },
      -38021,
      `block timestamps must be in order: ${0x7ffffff0} <= ${0x7fffffff}`,
    );
    await fails(
      { blockStateCalls: [{ blockOverrides: { number: toQuantity(head + 257) } }] },
      -38026,
      "too many blocks",
    );
    await fails({ blockStateCalls: Array.from({ length: 257 }, () => ({})) }, -38026, "too many blocks");
    await fails({ blockStateCalls: [] }, -32602, "empty input");
    await fails(
      { blockStateCalls: [{ calls: Array.from({ length: 5001 }, () => ({})) }] },
      -38026,
      "too many calls in block: 5001 > 5000",
    );
    // 256 past the base is allowed.
    const res = await ok({ blockStateCalls: [{ blockOverrides: { number: toQuantity(head + 256) } }] });
    expect(res).toHaveLength(256);
  });

  test("error: the block gas limit and the gas cap", async () => {
    await fails(
      { blockStateCalls: [{ blockOverrides: { gasLimit: "0x10000" }, calls: [{ from: A, to: B, gas: "0x20000" }] }] },
      -38015,
      "block gas limit reached: remaining: 65536, required: 131072",
    );
    // A call without gas gets what is left of the block, capped by gas-cap.
    const [b] = await ok({
      blockStateCalls: [
        {
          calls: [
            { from: A, to: B },
            { from: A, to: B },
          ],
        },
      ],
      returnFullTransactions: true,
    });
    expect(BigInt(b.transactions[0].gas)).toBe(25_000_000n);
    expect(BigInt(b.transactions[1].gas)).toBe(25_000_000n - 21000n);
  });

  test("error: bad params and state overrides that cannot apply", async () => {
    const reply = await simulate({ blockStateCalls: [{ blockOverrides: { number: "12" } }] });
    expect(reply.error.code).toBe(-32602);
    await fails(
      { blockStateCalls: [{ stateOverrides: { [A]: { movePrecompileToAddress: B } } }] },
      -32000,
      "account 0xC000000000000000000000000000000000000000 is not a precompile",
    );
    await fails(
      {
        blockStateCalls: [
          {
            stateOverrides: {
              "0x0000000000000000000000000000000000000001": { movePrecompileToAddress: B },
              [B]: { balance: "0x1" },
            },
          },
        ],
      },
      -32000,
      // EIP-55: this address's checksum keeps the c lowercase.
      "account 0xc100000000000000000000000000000000000000 is already overridden",
    );
    const unknown = await simulate({ blockStateCalls: [{}] }, `0x${"ab".repeat(32)}`);
    expect(unknown.error.code).toBe(-32000);
    await fails(
      { blockStateCalls: [{ calls: [{ from: A, to: B, gasPrice: "0x1", maxFeePerGas: "0x1" }] }] },
      -32000,
      "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified",
    );
    await fails(
      { blockStateCalls: [{ calls: [{ from: A, to: B, chainId: "0x1" }] }] },
      -32000,
      `chainId does not match node's (have=1, want=${CHAIN_ID})`,
    );
  });
});
