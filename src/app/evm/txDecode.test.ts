import { RLP } from "@ethereumjs/rlp";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { Transaction, Wallet } from "ethers";
import { describe, expect, test } from "vitest";
import { bytesToHex } from "../../util/bytes.js";
import { CHECK_TX_CODES, InvalidEthTxError } from "./errors.js";
import { createTxCommon } from "./executor.js";
import { type DecodeContext, DecodedTxCache, decodeEthTx, recoverTxSender, txKey } from "./txDecode.js";

/** The sender decodeEthTx recovers from the RLP fields against ethers, for every accepted tx type. */

const CHAIN_ID = 262144n;
const GWEI = 1_000_000_000n;
const wallet = new Wallet("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const to = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const ctx: DecodeContext = { common: createTxCommon(CHAIN_ID), chainId: CHAIN_ID, allowUnprotectedTxs: true };

function bytes(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex.slice(2), "hex"));
}

async function signedOfEveryType(): Promise<{ name: string; raw: Uint8Array }[]> {
  const common = { to, value: 5n, gasLimit: 50_000n, data: "0xabcdef", nonce: 7 };
  const authorization = await wallet.authorize({ address: to, nonce: 9, chainId: CHAIN_ID });
  const unprotected = Transaction.from({ ...common, type: 0, gasPrice: 2n * GWEI });
  unprotected.signature = wallet.signingKey.sign(unprotected.unsignedHash);
  const fees = { maxFeePerGas: 3n * GWEI, maxPriorityFeePerGas: GWEI };
  const accessList = [{ address: to, storageKeys: [`0x${"11".repeat(32)}`] }];
  return [
    {
      name: "legacy EIP-155",
      raw: bytes(await wallet.signTransaction({ ...common, type: 0, chainId: CHAIN_ID, gasPrice: 2n * GWEI })),
    },
    { name: "legacy unprotected", raw: bytes(unprotected.serialized) },
    {
      name: "EIP-2930",
      raw: bytes(
        await wallet.signTransaction({ ...common, type: 1, chainId: CHAIN_ID, gasPrice: 2n * GWEI, accessList }),
      ),
    },
    { name: "EIP-1559", raw: bytes(await wallet.signTransaction({ ...common, type: 2, chainId: CHAIN_ID, ...fees })) },
    {
      name: "EIP-1559 with an access list and nonce 0",
      raw: bytes(
        await wallet.signTransaction({ ...common, nonce: 0, type: 2, chainId: CHAIN_ID, ...fees, accessList }),
      ),
    },
    {
      name: "EIP-7702",
      raw: bytes(
        await wallet.signTransaction({
          ...common,
          type: 4,
          chainId: CHAIN_ID,
          ...fees,
          authorizationList: [authorization],
        }),
      ),
    },
  ];
}

/** A plain EIP-1559 transfer signed by `wallet`. */
async function signedTransfer(): Promise<Uint8Array> {
  const fees = { maxFeePerGas: GWEI, maxPriorityFeePerGas: 1n };
  return bytes(await wallet.signTransaction({ to, type: 2, chainId: CHAIN_ID, ...fees, gasLimit: 21000n }));
}

describe("decodeEthTx sender recovery", () => {
  test("default: every tx type's sender and hash are ethers'", async () => {
    for (const t of await signedOfEveryType()) {
      const d = decodeEthTx(t.raw, ctx);
      expect(`0x${bytesToHex(d.from)}`, t.name).toBe(wallet.address.toLowerCase());
      expect(Transaction.from(`0x${bytesToHex(t.raw)}`).from, t.name).toBe(wallet.address);
      expect(d.hash, t.name).toEqual(keccak_256(t.raw));
    }
  });

  test("invalid: a high-s signature (same key, other parity) is refused (ethereumjs: at construction)", async () => {
    const raw = await signedTransfer();
    expect(decodeEthTx(raw, ctx).fromHex).toBe(wallet.address.slice(2).toLowerCase());
    const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt(`0x${bytesToHex(fields[11] as Uint8Array)}`);
    fields[9] = (fields[9] as Uint8Array).length === 0 ? Uint8Array.of(1) : new Uint8Array(0);
    fields[11] = bytes(`0x${(n - s).toString(16).padStart(64, "0")}`);
    const high = Uint8Array.from([2, ...RLP.encode(fields)]);
    expect(() => decodeEthTx(high, ctx)).toThrow(InvalidEthTxError);
    try {
      decodeEthTx(high, ctx);
    } catch (err) {
      expect((err as InvalidEthTxError).code).toBe(CHECK_TX_CODES.txDecode);
      expect((err as Error).message).toMatch(/s-values greater than secp256k1n\/2/);
    }
  });

  test("invalid: a tampered field recovers another sender, never the signer", async () => {
    const raw = await signedTransfer();
    const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
    fields[1] = Uint8Array.of(5);
    const tampered = Uint8Array.from([2, ...RLP.encode(fields)]);
    let from = "";
    try {
      from = decodeEthTx(tampered, ctx).fromHex;
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidEthTxError);
    }
    expect(from).not.toBe(wallet.address.slice(2).toLowerCase());
  });
});

describe("the tx Common", () => {
  test("behavior: every decoded tx shares the one Common, which keeps the chain id and the tx params", async () => {
    const txs = (await signedOfEveryType()).map((t) => decodeEthTx(t.raw, ctx));
    for (const d of txs) {
      expect(d.tx.common).toBe(ctx.common);
      expect(d.tx.common.chainId()).toBe(CHAIN_ID);
    }
    // The intrinsic gas reads the tx params (EIP-2028 calldata, EIP-2930 access list costs).
    expect(txs[2]?.tx.getIntrinsicGas()).toBe(21_000n + 16n * 3n + 2400n + 1900n);
    expect(txs[2]?.minGas).toBe(21_000n + 16n * 3n + 2400n + 1900n);
    // EIP-7623's floor (10 gas a calldata token) is above the intrinsic gas of the plain transfers.
    expect(txs[3]?.minGas).toBe(21_000n + 10n * 4n * 3n);
  });
});

describe("DecodedTxCache", () => {
  test("behavior: a retired (committed) decode answers the same bytes again without decoding; a deleted one is decoded anew", async () => {
    const [a, b, c] = (await signedOfEveryType()).filter((t) => t.name.startsWith("EIP-")).map((t) => t.raw) as [
      Uint8Array,
      Uint8Array,
      Uint8Array,
    ];
    const cache = new DecodedTxCache(100, 2);
    const da = cache.decode(a, ctx);
    const db = cache.decode(b, ctx);
    cache.retire(txKey(a));
    cache.delete(txKey(b));
    expect(cache.get(txKey(a))).toBeUndefined();
    // evm_revert made `a` sendable again: the very decode comes back (no second sender recovery).
    expect(cache.decode(a, ctx)).toBe(da);
    expect(cache.get(txKey(a))).toBe(da);
    const db2 = cache.decode(b, ctx);
    expect(db2).not.toBe(db);
    expect(bytesToHex(db2.from)).toBe(bytesToHex(db.from));
    // At most `retiredMax` retired decodes are kept, the oldest leaving first.
    const dc = cache.decode(c, ctx);
    for (const raw of [a, b, c]) cache.retire(txKey(raw));
    expect(cache.decode(a, ctx)).not.toBe(da);
    expect(cache.decode(c, ctx)).toBe(dc);
    // clear() (a fork reset) forgets the retired decodes too.
    cache.retire(txKey(c));
    cache.clear();
    expect(cache.decode(c, ctx)).not.toBe(dc);
  });

  test("behavior: a sender hint replaces the recovery of those bytes once; every other field and check is the decode's own", async () => {
    const other = bytes("0x00000000000000000000000000000000000000aa");
    for (const t of await signedOfEveryType()) {
      const plain = decodeEthTx(t.raw, ctx);
      const cache = new DecodedTxCache(100);
      // The hint is what the decode takes: a wrong one (never given by the node) shows it was not recovered.
      cache.hintSender(txKey(t.raw), other);
      const hinted = cache.decode(t.raw, ctx);
      expect(hinted.from, t.name).toEqual(other);
      const { from: _a, fromHex: _b, tx: _c, ...rest } = hinted;
      const { from: _d, fromHex: _e, tx: _f, ...plainRest } = plain;
      expect(rest, t.name).toEqual(plainRest);
      // Used once: after the decode leaves the cache, the same bytes are recovered again.
      cache.delete(txKey(t.raw));
      expect(cache.decode(t.raw, ctx).from, t.name).toEqual(plain.from);
    }
  });

  test("invalid: a hint is not 20 bytes, or names bytes already decoded: ignored; a hinted tx still fails the checks made without the curve", async () => {
    const raw = await signedTransfer();
    const cache = new DecodedTxCache(100);
    cache.hintSender(txKey(raw), new Uint8Array(19));
    expect(cache.decode(raw, ctx).fromHex).toBe(wallet.address.slice(2).toLowerCase());
    cache.hintSender(txKey(raw), new Uint8Array(20));
    expect(cache.decode(raw, ctx).fromHex).toBe(wallet.address.slice(2).toLowerCase());
    // y-parity 2 is refused before any recovery, hint or not.
    const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
    fields[9] = Uint8Array.of(2);
    const badParity = Uint8Array.from([2, ...RLP.encode(fields)]);
    const fresh = new DecodedTxCache(100);
    fresh.hintSender(txKey(badParity), new Uint8Array(20).fill(1));
    expect(() => fresh.decode(badParity, ctx)).toThrow(InvalidEthTxError);
  });

  test("behavior: recoverTxSender gives decodeEthTx's sender for every type, and nothing for bytes the envelope or signature refuses", async () => {
    for (const t of await signedOfEveryType()) {
      expect(recoverTxSender(t.raw, ctx), t.name).toEqual(decodeEthTx(t.raw, ctx).from);
      // Another chain id: refused wherever decodeEthTx refuses it (not for an unprotected legacy tx).
      const other = { ...ctx, chainId: ctx.chainId + 1n };
      let expected: Uint8Array | undefined;
      try {
        expected = decodeEthTx(t.raw, other).from;
      } catch {
        expected = undefined;
      }
      expect(recoverTxSender(t.raw, other), t.name).toEqual(expected);
    }
    const raw = await signedTransfer();
    const fields = RLP.decode(raw.subarray(1)) as Uint8Array[];
    fields[9] = Uint8Array.of(2);
    expect(recoverTxSender(Uint8Array.from([2, ...RLP.encode(fields)]), ctx)).toBeUndefined();
    expect(recoverTxSender(new Uint8Array(0), ctx)).toBeUndefined();
    expect(recoverTxSender(Uint8Array.of(0x02, 0xc0), ctx)).toBeUndefined();
  });
});
