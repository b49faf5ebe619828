import { RLP } from "@ethereumjs/rlp";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Transaction, Wallet } from "ethers";
import { afterEach, describe, expect, test } from "vitest";
import { bytesToHex } from "../../util/bytes.js";
import { CHECK_TX_CODES } from "./errors.js";
import { SenderRecovery } from "./senderRecovery.js";
import { closeTestChain, openTestChain, type TestChain } from "./testing.js";

const CHAIN_ID = 262144n;
const GWEI = 1_000_000_000n;
const wallet = new Wallet("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const to = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

function bytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex.slice(2), "hex"));
}

async function signedOfEveryType(): Promise<{ name: string; raw: Uint8Array }[]> {
  const common = { to, value: 5n, gasLimit: 50_000n, data: "0xabcdef", nonce: 7 };
  const authorization = await wallet.authorize({ address: to, nonce: 9, chainId: CHAIN_ID });
  const unprotected = Transaction.from({ ...common, type: 0, gasPrice: 2n * GWEI });
  unprotected.signature = wallet.signingKey.sign(unprotected.unsignedHash);
  return [
    {
      name: "legacy EIP-155",
      raw: bytes(await wallet.signTransaction({ ...common, type: 0, chainId: CHAIN_ID, gasPrice: 2n * GWEI })),
    },
    { name: "legacy unprotected", raw: bytes(unprotected.serialized) },
    {
      name: "EIP-2930",
      raw: bytes(
        await wallet.signTransaction({
          ...common,
          type: 1,
          chainId: CHAIN_ID,
          gasPrice: 2n * GWEI,
          accessList: [{ address: to, storageKeys: [`0x${"11".repeat(32)}`] }],
        }),
      ),
    },
    {
      name: "EIP-1559",
      raw: bytes(
        await wallet.signTransaction({
          ...common,
          type: 2,
          chainId: CHAIN_ID,
          maxFeePerGas: 3n * GWEI,
          maxPriorityFeePerGas: GWEI,
        }),
      ),
    },
    {
      name: "EIP-7702",
      raw: bytes(
        await wallet.signTransaction({
          ...common,
          type: 4,
          chainId: CHAIN_ID,
          maxFeePerGas: 3n * GWEI,
          maxPriorityFeePerGas: GWEI,
          authorizationList: [authorization],
        }),
      ),
    },
  ];
}

const pools: SenderRecovery[] = [];
const chains: TestChain[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
  for (const c of chains.splice(0)) await closeTestChain(c);
});

function pool(): SenderRecovery {
  const p = new SenderRecovery();
  pools.push(p);
  return p;
}

describe("sender recovery on a worker", () => {
  test("default: every tx type gives ethers' sender and the keccak256 tx hash, in request order", async () => {
    const p = pool();
    expect(p.available).toBe(true);
    const txs = await signedOfEveryType();
    // Requested in one turn: one batch to the worker.
    const answers = await Promise.all(txs.map((t) => p.recover(t.raw)));
    answers.forEach((a, i) => {
      const t = txs[i] as { name: string; raw: Uint8Array };
      const parsed = Transaction.from(`0x${bytesToHex(t.raw)}`);
      expect(a, t.name).toBeDefined();
      expect(`0x${bytesToHex(a?.from ?? new Uint8Array())}`, t.name).toBe(wallet.address.toLowerCase());
      expect(parsed.from, t.name).toBe(wallet.address);
      expect(a?.hash, t.name).toEqual(keccak_256(t.raw));
    });
  });

  test("invalid: a high-s signature, garbage and an empty tx are left to the caller (undefined)", async () => {
    const p = pool();
    const raw = bytes(
      await wallet.signTransaction({
        to,
        type: 2,
        chainId: CHAIN_ID,
        maxFeePerGas: GWEI,
        maxPriorityFeePerGas: 1n,
        gasLimit: 21000n,
      }),
    );
    // The same signature with s' = n - s and the other parity: valid for secp256k1, refused by EIP-2.
    const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt(`0x${bytesToHex(fields[11] as Uint8Array)}`);
    fields[9] = (fields[9] as Uint8Array).length === 0 ? Uint8Array.of(1) : new Uint8Array(0);
    fields[11] = bytes(`0x${(n - s).toString(16).padStart(64, "0")}`);
    const high = { serialized: `0x02${bytesToHex(RLP.encode(fields))}` };
    expect(Transaction.from(`0x${bytesToHex(raw)}`).from).toBe(wallet.address);
    expect(await p.recover(bytes(high.serialized))).toBeUndefined();
    expect(await p.recover(Uint8Array.of(0x02, 0xc1, 0x80))).toBeUndefined();
    expect(await p.recover(new Uint8Array(0))).toBeUndefined();
    expect(await p.recover(Uint8Array.of(0x07, 0xc0))).toBeUndefined();
  });

  test("behavior: after close every request is answered undefined", async () => {
    const p = pool();
    const [first] = await signedOfEveryType();
    await p.close();
    expect(p.available).toBe(false);
    expect(await p.recover(first?.raw ?? new Uint8Array())).toBeUndefined();
  });

  test("behavior: CheckTx with the worker admits and refuses exactly as without it", async () => {
    const withWorker = await openTestChain({ senderWorker: true });
    const without = await openTestChain();
    chains.push(withWorker, without);
    const dev = new Wallet(withWorker.app.devAccounts()[0]?.privateKey ?? "");
    const fields = {
      to,
      type: 2,
      chainId: CHAIN_ID,
      maxFeePerGas: 2n * GWEI,
      maxPriorityFeePerGas: GWEI,
      gasLimit: 21000n,
    };
    const good = bytes(await dev.signTransaction({ ...fields, nonce: 0, value: 1n }));
    const poor = bytes(await wallet.signTransaction({ ...fields, nonce: 0, value: 1n }));
    const lowGas = bytes(await dev.signTransaction({ ...fields, nonce: 1, gasLimit: 20_000n }));
    const wrongChain = bytes(await dev.signTransaction({ ...fields, nonce: 1, chainId: 1n }));
    for (const raw of [good, poor, lowGas, wrongChain, Uint8Array.of(0x02, 0xc1, 0x80)]) {
      const a = await withWorker.app.checkTx({ tx: raw, type: 0 });
      const b = await without.app.checkTx({ tx: raw, type: 0 });
      expect({ code: a.code, log: a.log, gasWanted: a.gasWanted }).toEqual({
        code: b.code,
        log: b.log,
        gasWanted: b.gasWanted,
      });
    }
    expect((await withWorker.app.checkTx({ tx: good, type: 0 })).code).toBe(CHECK_TX_CODES.ok);
    expect(withWorker.app.pendingNonce(bytes(dev.address))).toBe(1n);
  });
});
