import { toBech32 } from "@cosmjs/encoding";
import { genTransactionsTrieRoot } from "@ethereumjs/block";
import { createTxFromRLP } from "@ethereumjs/tx";
import { p256 } from "@noble/curves/nist.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Interface, Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { vmErrorText } from "../../../test/evm/referenceExecutor.js";
import { P256_PRECOMPILE } from "../../../test/evm/referencePrecompiles.js";
import { bytesToHex } from "../../util/bytes.js";
import { BECH32_PRECOMPILE_ADDRESS } from "./bech32Precompile.js";
import { ecrecoverNative, ecrecoverNoble, keccak256, keccakBackend } from "./crypto.js";
import { EvmCallTimeoutError, StateUnavailableError } from "./errors.js";
import { blockRetentionHeight } from "./evmApplication.js";
import { createTxCommon, logsBloom } from "./executor.js";
import { baseFeeForHeight, calcGasBaseFee, DEC_ONE, defaultFeeMarketParams, formatDec, parseDec } from "./feeMarket.js";
import { parseEvmGenesis } from "./genesis.js";
import { P256_PRECOMPILE_ADDRESS, P256_VERIFY_GAS, verifyP256 } from "./p256Precompile.js";
import { bytesToBigint, EMPTY_TRIE_ROOT } from "./records.js";
import {
  deployErc20,
  erc20BalanceSlot,
  hexBytes as hex,
  erc20Interface as iface,
  runBlock,
  TestChains,
} from "./testing.js";
import { createCallTracer, createStructLogger, word } from "./tracer.js";
import { orderedTrieRoot } from "./trieRoot.js";

const chains = new TestChains();
const keccakHex = (b: Uint8Array) => bytesToHex(keccak256(b));
afterEach(() => chains.closeAll());

describe("vmErrorText", () => {
  test("args: ethereumjs' texts become geth's, with or without ethereumjs' location suffix", () => {
    expect(vmErrorText("invalid JUMP")).toBe("invalid jump destination");
    expect(vmErrorText("invalid JUMP at pc 12 (code 0x5600)")).toBe("invalid jump destination");
    expect(vmErrorText("revert")).toBe("execution reverted");
    expect(vmErrorText("out of gas")).toBe("out of gas");
    expect(vmErrorText(undefined)).toBe("");
  });
});

describe("fee market", () => {
  test("default: Cosmos EVM CalcGasBaseFee on 18-decimal Decs", () => {
    const p = defaultFeeMarketParams();
    // Empty parent, 15M target: -1/8.
    expect(calcGasBaseFee(0n, 15_000_000n, 8n, p.baseFee, 0n)).toBe((p.baseFee * 7n) / 8n);
    // Full parent (2× target): +1/8.
    expect(calcGasBaseFee(30_000_000n, 15_000_000n, 8n, p.baseFee, 0n)).toBe((p.baseFee * 9n) / 8n);
    // At least 1 wei up, never below min_gas_price.
    expect(calcGasBaseFee(15_000_001n, 15_000_000n, 8n, 5n, 0n)).toBe(5n + DEC_ONE);
    expect(calcGasBaseFee(0n, 15_000_000n, 8n, 100n * DEC_ONE, 90n * DEC_ONE)).toBe(90n * DEC_ONE);
    expect(baseFeeForHeight(0, p, { baseFee: p.baseFee, blockGasWanted: 0n }, -1n)).toBe(p.baseFee);
    expect(
      baseFeeForHeight(1, { ...p, noBaseFee: true }, { baseFee: p.baseFee, blockGasWanted: 0n }, -1n),
    ).toBeUndefined();
    expect(formatDec(875_000_000n * DEC_ONE)).toBe("875000000.000000000000000000");
    expect(parseDec("0.5")).toBe(DEC_ONE / 2n);
  });

  test("args: genesis feemarket params and accounts", () => {
    const g = parseEvmGenesis(
      new TextEncoder().encode(
        JSON.stringify({
          evm: {
            alloc: { "0x00000000000000000000000000000000000000aa": { balance: "0x10", storage: { "0x01": "0x02" } } },
          },
          feemarket: { params: { base_fee: "7", min_gas_multiplier: "0", no_base_fee: false } },
        }),
      ),
      [],
    );
    expect(g.accounts[0]?.balance).toBe(16n);
    expect(g.accounts[0]?.storage[0]?.value.at(-1)).toBe(2);
    expect(g.feeMarket.baseFee).toBe(7n * DEC_ONE);
    expect(g.feeMarket.minGasMultiplier).toBe(0n);
    expect(() =>
      parseEvmGenesis(new TextEncoder().encode('{"evm":{"accounts":[{"address":"0x12"}]}}'), []),
    ).toThrowErrorMatchingInlineSnapshot(
      `[EvmConfigError: genesis app_state: evm.accounts[0].address has 1 bytes, expected 20. Check the value]`,
    );
  });
});

describe("crypto and roots", () => {
  test("behavior: native and noble ecrecover agree", async () => {
    const w = Wallet.createRandom();
    const hash = hex("0x".padEnd(66, "ab"));
    const sig = w.signingKey.sign(hash);
    const a = ecrecoverNative(hash, BigInt(sig.v), hex(sig.r), hex(sig.s));
    const b = ecrecoverNoble(hash, BigInt(sig.v), hex(sig.r), hex(sig.s));
    expect(a).toEqual(b);
    expect(`0x${bytesToHex(a)}`).toBe(`0x${w.signingKey.publicKey.slice(4)}`);
  });

  test("behavior: keccak256 (WASM, wherever Node runs WebAssembly) agrees with noble for every length across the rate", () => {
    expect(keccakBackend()).toBe("wasm");
    const data = new Uint8Array(400).map((_, i) => (i * 131 + 7) & 0xff);
    const results: Uint8Array[] = [];
    for (let n = 0; n <= 300; n++) {
      // subarrays at an odd offset: the binding must read the view, not its whole buffer
      const input = data.subarray(3, 3 + n);
      const h = keccak256(input);
      expect(h).toEqual(keccak_256(input));
      results.push(h);
    }
    // each result is its own 32 bytes, not a view into a reused output buffer
    expect(results[0]).toEqual(keccak_256(new Uint8Array(0)));
    expect(new Set(results.map((r) => bytesToHex(r))).size).toBe(results.length);
    expect(bytesToHex(keccak256(new TextEncoder().encode("abc")))).toBe(
      "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45",
    );
  });

  test("behavior: keccak256 agrees with noble on inputs longer than the WebAssembly module takes at once", () => {
    // The module absorbs 478 blocks (65 008 bytes) per call; lengths around one and two chunks, and past them.
    const data = new Uint8Array(200_000).map((_, i) => (i * 13 + 5) & 0xff);
    for (const n of [65_007, 65_008, 65_009, 65_143, 65_144, 130_016, 130_017, 199_999]) {
      expect(bytesToHex(keccak256(data.subarray(1, 1 + n)))).toBe(bytesToHex(keccak_256(data.subarray(1, 1 + n))));
    }
  });

  test("behavior: a logs bloom is the yellow paper's, also when its values' bits are remembered", () => {
    const reference = (values: Uint8Array[]) => {
      const bloom = new Uint8Array(256);
      for (const v of values) {
        const h = keccak_256(v);
        for (let i = 0; i < 6; i += 2) {
          const bit = (((h[i] as number) << 8) | (h[i + 1] as number)) & 2047;
          bloom[255 - Math.floor(bit / 8)] = (bloom[255 - Math.floor(bit / 8)] as number) | (1 << (bit % 8));
        }
      }
      return bytesToHex(bloom);
    };
    const token = new Uint8Array(20).fill(0xc0);
    const topic = (b: number) => new Uint8Array(32).fill(b);
    const logs = [
      { address: token, topics: [topic(1), topic(2), topic(3)], data: new Uint8Array(0) },
      { address: new Uint8Array(20).fill(0xde), topics: [], data: new Uint8Array(0) },
    ];
    const expected = reference([token, topic(1), topic(2), topic(3), new Uint8Array(20).fill(0xde)]);
    // Twice: the second time every value's bits come from the memo.
    expect(bytesToHex(logsBloom(logs))).toBe(expected);
    expect(bytesToHex(logsBloom(logs))).toBe(expected);
    expect(bytesToHex(logsBloom([logs[0] as (typeof logs)[0]]))).toBe(reference([token, topic(1), topic(2), topic(3)]));
    expect(logsBloom([]).every((b) => b === 0)).toBe(true);
  });

  test("behavior: transactionsRoot matches ethereumjs's trie", async () => {
    const w = Wallet.createRandom();
    const common = createTxCommon(262144n);
    for (const n of [1, 2, 17, 130]) {
      const raws: Uint8Array[] = [];
      for (let i = 0; i < n; i++) {
        raws.push(
          hex(
            await w.signTransaction({
              type: 2,
              chainId: 262144n,
              nonce: i,
              to: w.address,
              gasLimit: 21000n,
              maxFeePerGas: 1n,
              maxPriorityFeePerGas: 1n,
            }),
          ),
        );
      }
      const expected = await genTransactionsTrieRoot(raws.map((r) => createTxFromRLP(r, { common })));
      expect(orderedTrieRoot(raws)).toEqual(expected);
    }
    expect(orderedTrieRoot([])).toEqual(EMPTY_TRIE_ROOT);
  });
});

describe("P256 precompile (0x100, Cosmos EVM's RIP-7212)", () => {
  const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  function signed(): { input: Uint8Array; hash: Uint8Array } {
    const key = p256.utils.randomSecretKey();
    const pub = p256.getPublicKey(key, false); // 04 ‖ x ‖ y
    const hash = keccak_256(new TextEncoder().encode("passkey challenge"));
    const sig = p256.sign(hash, key, { prehash: false });
    return { input: Uint8Array.from([...hash, ...sig, ...pub.subarray(1)]), hash };
  }

  test("behavior: verifies a signature through eth_call; invalid input answers empty, not an error", async () => {
    const c = await chains.open();
    const to = hex(P256_PRECOMPILE_ADDRESS);
    const { input } = signed();
    const ok = await c.app.reader.call({ to, data: input });
    expect(ok.status).toBe("success");
    expect(bytesToHex(ok.returnData)).toBe(`${"0".repeat(63)}1`);
    // Go's ecdsa.Verify takes the high-s twin too (no malleability rule in RIP-7212)
    const s = bytesToBigint(input.subarray(64, 96));
    const twin = Uint8Array.from(input);
    twin.set(word(N - s), 64);
    expect(bytesToHex((await c.app.reader.call({ to, data: twin })).returnData)).toBe(`${"0".repeat(63)}1`);
    const tampered = Uint8Array.from(input);
    tampered[0] = (tampered[0] as number) ^ 1;
    const offCurve = Uint8Array.from(input);
    offCurve[159] = (offCurve[159] as number) ^ 1;
    const zeroR = Uint8Array.from(input);
    zeroR.fill(0, 32, 64);
    for (const data of [tampered, offCurve, zeroR, input.subarray(0, 159), new Uint8Array(0)]) {
      const r = await c.app.reader.call({ to, data });
      expect(r.status).toBe("success");
      expect(r.returnData).toHaveLength(0);
    }
  });

  test("behavior: costs 3450 gas whatever the outcome; less gas fails out of gas", () => {
    const run = P256_PRECOMPILE as {
      function: (o: object) => { executionGasUsed: bigint; exceptionError?: { error: string } };
    };
    const { input } = signed();
    expect(verifyP256(input)).toBe(true);
    for (const data of [input, input.subarray(1)]) {
      expect(run.function({ data, gasLimit: 10_000n }).executionGasUsed).toBe(P256_VERIFY_GAS);
    }
    const oog = run.function({ data: input, gasLimit: P256_VERIFY_GAS - 1n });
    expect(oog.exceptionError?.error).toBe("out of gas");
  });
});

describe("Bech32 precompile (0x400, Cosmos EVM's)", () => {
  const bech = new Interface([
    "function hexToBech32(address addr, string prefix) returns (string)",
    "function bech32ToHex(string bech32Address) returns (address)",
  ]);
  const to = hex(BECH32_PRECOMPILE_ADDRESS);
  const addr = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

  test("behavior: hex <-> bech32 both ways, checked against CosmJS's encoder", async () => {
    const c = await chains.open();
    const expected = toBech32("cosmos", hex(addr));
    const r = await c.app.reader.call({ to, data: hex(bech.encodeFunctionData("hexToBech32", [addr, "cosmos"])) });
    expect(r.status).toBe("success");
    expect(bech.decodeFunctionResult("hexToBech32", r.returnData)[0]).toBe(expected);
    const back = await c.app.reader.call({
      to,
      data: hex(bech.encodeFunctionData("bech32ToHex", [toBech32("evmosvaloper", hex(addr))])),
    });
    expect(bech.decodeFunctionResult("bech32ToHex", back.returnData)[0]).toBe(addr);
  });

  test("error: bad input fails with the Go precompile's text and all the gas; no selector reverts", async () => {
    const c = await chains.open();
    const gas = 100_000n;
    const bad = await c.app.reader.call({ to, gas, data: hex(bech.encodeFunctionData("bech32ToHex", ["not-bech32"])) });
    expect([bad.status, bad.vmError]).toEqual(["failed", "invalid bech32 address: not-bech32"]);
    const noPrefix = await c.app.reader.call({
      to,
      gas,
      data: hex(bech.encodeFunctionData("hexToBech32", [addr, " "])),
    });
    expect(noPrefix.status).toBe("failed");
    expect(noPrefix.vmError).toMatch(/^invalid bech32 human readable prefix \(HRP\)/);
    const unknown = await c.app.reader.call({ to, gas, data: hex("0x12345678") });
    expect(unknown.vmError).toBe("no method with id: 0x12345678");
    const short = await c.app.reader.call({ to, gas, data: hex("0x1234") });
    expect(short.status).toBe("reverted");
    // a failure keeps none of the gas; a revert returns what the 6000 base cost left
    expect(short.gasUsed).toBeLessThan(bad.gasUsed);
  });
});

describe("state history, pruning, calls and tracing", () => {
  test("behavior: pruning keeps a window of heights", async () => {
    const c = await chains.open({ pruning: 2 });
    const [w0, w1] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
    for (let i = 0; i < 4; i++) {
      const tx = hex(
        await w0.signTransaction({
          type: 2,
          chainId: 262144n,
          nonce: i,
          to: w1.address,
          value: 1n,
          gasLimit: 21000n,
          maxFeePerGas: 10n ** 10n,
          maxPriorityFeePerGas: 1n,
        }),
      );
      await runBlock(c, [tx]);
    }
    expect(c.app.reader.earliestStateHeight()).toBe(3);
    expect(c.app.reader.nonce(hex(w0.address), 3)).toBe(3n);
    expect(c.app.reader.nonce(hex(w0.address), 4)).toBe(4n);
    expect(() => c.app.reader.nonce(hex(w0.address), 2)).toThrow(StateUnavailableError);
    expect(() => c.app.reader.nonce(hex(w0.address), 9)).toThrow(/height in the future/);
    // An account untouched since genesis keeps its genesis version.
    expect(c.app.reader.balance(hex(c.app.devAccounts()[5]?.address ?? ""), 3)).toBe(10_000n * 10n ** 18n);
  });

  test("args: blockRetentionHeight follows the Cosmos SDK's GetBlockRetentionHeight", () => {
    const o = { minRetainBlocks: 10, evidenceMaxAgeNumBlocks: 0n, snapshotRetainBlocks: 0 };
    expect(blockRetentionHeight(100, { ...o, minRetainBlocks: 0 })).toBe(0);
    expect(blockRetentionHeight(100, o)).toBe(90);
    expect(blockRetentionHeight(5, o)).toBe(0);
    // Evidence and snapshots can only keep more blocks.
    expect(blockRetentionHeight(100, { ...o, evidenceMaxAgeNumBlocks: 30n })).toBe(70);
    expect(blockRetentionHeight(100, { ...o, evidenceMaxAgeNumBlocks: 5n })).toBe(90);
    expect(blockRetentionHeight(100, { ...o, snapshotRetainBlocks: 50 })).toBe(50);
    expect(blockRetentionHeight(100, { ...o, evidenceMaxAgeNumBlocks: 100_000n })).toBe(0);
  });

  test("behavior: min-retain-blocks gives the retain height and drops older blocks, receipts and state", async () => {
    const c = await chains.open({ minRetainBlocks: 3, evidenceMaxAgeNumBlocks: 2n });
    const [w0, w1] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
    const hashes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const signed = await w0.signTransaction({
        type: 2,
        chainId: 262144n,
        nonce: i,
        to: w1.address,
        value: 1n,
        gasLimit: 21000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
      hashes.push(keccakHex(hex(signed)));
      await runBlock(c, [hex(signed)]);
    }
    // Commit of height 8 returned 8 − 3 = 5: blocks 1..4 are gone, with their receipts and lookups.
    for (let h = 1; h <= 4; h++) {
      expect(c.app.db.block(h), `block ${h}`).toBeUndefined();
      expect(c.app.db.receipts(h)).toEqual([]);
      expect(c.app.db.txLocation(hex(hashes[h - 1] as string))).toBeUndefined();
    }
    for (let h = 5; h <= 8; h++) {
      expect(c.app.db.block(h)?.height, `block ${h}`).toBe(h);
      expect(c.app.db.txLocation(hex(hashes[h - 1] as string))?.height).toBe(h);
    }
    // State: from the parent of the oldest kept block on.
    expect(c.app.reader.earliestStateHeight()).toBe(4);
    expect(c.app.reader.nonce(hex(w0.address), 4)).toBe(4n);
    expect(() => c.app.reader.nonce(hex(w0.address), 3)).toThrow(StateUnavailableError);
    expect(await c.app.commit()).toEqual({ retainHeight: 0 }); // nothing pending: nothing to say
  });

  test("error: a call that loops without touching state stops at its timeout, not at its gas cap", async () => {
    const c = await chains.open();
    const loop = hex("0x00000000000000000000000000000000000010af");
    // JUMPDEST PUSH1 0 JUMP: ~11 gas a turn, so 25M gas would run for seconds
    const overrides = [{ address: loop, code: hex("0x5b600056") }];
    await expect(c.app.reader.call({ to: loop }, { overrides, timeoutMs: 30 })).rejects.toThrow(EvmCallTimeoutError);
    // with a small gas limit the same loop ends out of gas, as before
    const r = await c.app.reader.call({ to: loop, gas: 50_000n }, { overrides, timeoutMs: 30 });
    expect(r.status).toBe("failed");
  });

  test("behavior: eth_call with state overrides, from a contract, and traces", async () => {
    const c = await chains.open();
    const [w0, w1] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
    const token = await deployErc20(c, w0, 0);
    const transfer = iface.encodeFunctionData("transfer", [w1.address, 5n]);
    // w1 has no tokens; an override of its balance slot (keccak(addr . 0)) makes the call succeed.
    const slot = erc20BalanceSlot(hex(w1.address));
    const plain = await c.app.reader.call({ from: hex(w1.address), to: token, data: hex(transfer) });
    expect(plain.status).toBe("reverted");
    const overridden = await c.app.reader.call(
      { from: hex(w1.address), to: token, data: hex(transfer) },
      { overrides: [{ address: token, stateDiff: [{ slot, value: hex("0x64") }] }] },
    );
    expect(overridden.status).toBe("success");
    expect(overridden.logs).toHaveLength(1);
    // From the token contract itself (geth skips the EOA check for calls).
    const fromContract = await c.app.reader.call({
      from: token,
      to: token,
      data: hex(iface.encodeFunctionData("totalSupply")),
    });
    expect(fromContract.status).toBe("success");

    const tx = hex(
      await w0.signTransaction({
        type: 2,
        chainId: 262144n,
        nonce: 1,
        to: bytesToHex(token).replace(/^/, "0x"),
        data: transfer,
        gasLimit: 80_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      }),
    );
    await runBlock(c, [tx]);
    const receipt = c.app.reader.receipts(2)[0];
    const structs = await c.app.reader.traceTransaction(receipt?.txHash as Uint8Array, createStructLogger());
    expect(structs.failed).toBe(false);
    expect(structs.gas).toBe(receipt?.gasUsed);
    expect(structs.structLogs.some((l) => l.op === "SSTORE")).toBe(true);
    expect(structs.structLogs[0]?.depth).toBe(1);
    const calls = await c.app.reader.traceTransaction(receipt?.txHash as Uint8Array, createCallTracer());
    expect(calls?.type).toBe("CALL");
    expect(calls?.to).toEqual(token);
    const traced = await c.app.reader.traceCall(
      { from: hex(w0.address), to: token, data: hex(transfer) },
      createCallTracer(),
    );
    expect(traced?.error).toBeUndefined();
  });
});

describe("EIP-7702", () => {
  test("behavior: a set-code tx delegates an EOA, which can still send txs", async () => {
    const c = await chains.open();
    const [w0, w1] = c.app.devAccounts().map((a) => new Wallet(a.privateKey)) as [Wallet, Wallet];
    const target = "0x4e59b44847b379578588920ca78fbf26c0b4956c";
    const auth = await w1.authorize({ address: target, nonce: 0n, chainId: 262144n });
    const raw = hex(
      await w0.signTransaction({
        type: 4,
        chainId: 262144n,
        nonce: 0,
        to: w0.address,
        gasLimit: 100_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
        authorizationList: [auth],
      }),
    );
    expect((await c.app.checkTx({ tx: raw, type: 0 })).code).toBe(0);
    await runBlock(c, [raw]);
    expect(c.app.reader.receipts(1)[0]?.status).toBe(1);
    expect(bytesToHex(c.app.reader.code(hex(w1.address)))).toBe(`ef0100${target.slice(2)}`);
    expect(c.app.reader.nonce(hex(w1.address))).toBe(1n);
    const fromDelegated = hex(
      await w1.signTransaction({
        type: 2,
        chainId: 262144n,
        nonce: 1,
        to: w0.address,
        value: 1n,
        gasLimit: 50_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      }),
    );
    expect((await c.app.checkTx({ tx: fromDelegated, type: 0 })).code).toBe(0);
  });
});
