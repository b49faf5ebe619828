import { RLP } from "@ethereumjs/rlp";
import { TypedDataEncoder } from "ethers";
import { describe, expect, test } from "vitest";
import { parseJson } from "../../jsonrpc/index.js";
import { toData } from "../encode/hex.js";
import { decodeRevertReason } from "../errors.js";
import { ECHO } from "../testing/contracts.js";
import { devAccount, GWEI, signTx, signUnprotectedLegacy } from "../testing/signing.js";
import { signTransaction } from "./buildTx.js";
import { TypedDataError, typedDataHash } from "./eip712.js";
import { RawTxDecodeError, summarizeRawTx } from "./rawTx.js";
import { keccak256, personalMessageHash, recoverAddress } from "./signatures.js";

const key = devAccount("tx-test");

describe("eip712", () => {
  test("default: the digest equals ethers' TypedDataEncoder", () => {
    const types = {
      Person: [
        { name: "name", type: "string" },
        { name: "wallet", type: "address" },
      ],
      Mail: [
        { name: "from", type: "Person" },
        { name: "to", type: "Person[]" },
        { name: "contents", type: "string" },
        { name: "amount", type: "uint256" },
        { name: "delta", type: "int8" },
        { name: "tag", type: "bytes4" },
        { name: "blob", type: "bytes" },
        { name: "ok", type: "bool" },
      ],
    };
    const domain = { name: "Ether Mail", version: "1", chainId: 262144, verifyingContract: `0x${"cc".repeat(20)}` };
    const message = {
      from: { name: "Cow", wallet: `0x${"cd".repeat(20)}` },
      to: [{ name: "Bob", wallet: `0x${"bb".repeat(20)}` }],
      contents: "Hello, Bob!",
      amount: "12345678901234567890",
      delta: -5,
      tag: "0x01020304",
      blob: "0xdeadbeef",
      ok: true,
    };
    const typed = {
      types: {
        EIP712Domain: [
          { name: "name", type: "string" },
          { name: "version", type: "string" },
          { name: "chainId", type: "uint256" },
          { name: "verifyingContract", type: "address" },
        ],
        ...types,
      },
      primaryType: "Mail",
      domain,
      message,
    };
    expect(toData(typedDataHash(parseJson(JSON.stringify(typed))))).toBe(TypedDataEncoder.hash(domain, types, message));
  });

  test("error: bad typed data", () => {
    const bad = (v: unknown) => () => typedDataHash(parseJson(JSON.stringify(v)));
    expect(bad({ types: { EIP712Domain: [] }, primaryType: "X" })).toThrow(TypedDataError);
    expect(
      bad({ types: { EIP712Domain: [], M: [{ name: "a", type: "uint8" }] }, primaryType: "M", message: { a: 300 } }),
    ).toThrow("uint8 value 300 is out of range");
  });
});

describe("raw transactions", () => {
  test("default: summaries of each type", () => {
    const legacy = signTx({ type: 0, nonce: 1n, gasPrice: GWEI, gasLimit: 21000n, to: ECHO }, key);
    expect(summarizeRawTx(legacy.raw)).toMatchObject({ type: 0, chainId: 262144n, gasLimit: 21000n, feeCap: GWEI });
    const dynamic = signTx(
      { type: 2, nonce: 1n, maxFeePerGas: 3n, maxPriorityFeePerGas: 1n, gasLimit: 50000n, to: ECHO },
      key,
    );
    expect(summarizeRawTx(dynamic.raw)).toMatchObject({ type: 2, chainId: 262144n, gasLimit: 50000n, feeCap: 3n });
    const unprotected = signUnprotectedLegacy({ nonce: 0n, gasPrice: 1n, gasLimit: 21000n, to: ECHO, value: 0n }, key);
    expect(summarizeRawTx(unprotected).chainId).toBeUndefined();
  });

  test("error: undecodable bytes", () => {
    expect(() => summarizeRawTx(Uint8Array.from([0x03, 0xc0]))).toThrow("transaction type not supported");
    expect(() => summarizeRawTx(Uint8Array.from([0x02]))).toThrow("typed transaction too short");
    expect(() => summarizeRawTx(Uint8Array.from([0x02, 0xc0]))).toThrow(/expected 12 fields/);
    expect(() => summarizeRawTx(RLP.encode([1, 2, 3]))).toThrow(RawTxDecodeError);
    expect(() => summarizeRawTx(Uint8Array.from([0x80]))).toThrow(/expected input list/);
  });

  test("default: keyring-style signing round-trips", async () => {
    const { secp256k1 } = await import("@noble/curves/secp256k1.js");
    const sign = (d: Uint8Array) => {
      const s = secp256k1.sign(d, key.privateKey, { prehash: false, format: "recovered" });
      return Uint8Array.from([...s.subarray(1), s[0] as number]);
    };
    for (const type of [0, 1, 2] as const) {
      const raw = await signTransaction(
        {
          type,
          chainId: 262144n,
          nonce: 3n,
          gasLimit: 21000n,
          to: ECHO,
          value: 5n,
          data: new Uint8Array(0),
          gasPrice: GWEI,
          maxFeePerGas: GWEI,
          maxPriorityFeePerGas: 1n,
          accessList: [],
        },
        sign,
      );
      expect(summarizeRawTx(raw)).toMatchObject({ type, chainId: 262144n });
    }
    const digest = personalMessageHash(Buffer.from("hello"));
    expect(toData(recoverAddress(digest, sign(digest)) as Uint8Array)).toBe(toData(key.address));
    expect(recoverAddress(digest, new Uint8Array(64))).toBeUndefined();
    expect(toData(keccak256(new Uint8Array(0)))).toBe(
      "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
    );
  });
  test("default: the encodings equal @ethereumjs/tx's for every type, with access lists, creations and short r/s", async () => {
    const { createCustomCommon, Hardfork, Mainnet } = await import("@ethereumjs/common");
    const { createTx } = await import("@ethereumjs/tx");
    const common = createCustomCommon({ chainId: 262144 }, Mainnet, { hardfork: Hardfork.Prague });
    // A fixed "signature" with leading zero bytes in r and s (trimmed in the encoding).
    const sig = new Uint8Array(65);
    sig.set([0, 0, 7, 1], 0);
    sig.set([0, 9, 2], 32);
    sig[64] = 1;
    const accessList = [{ address: ECHO, storageKeys: [new Uint8Array(32).fill(3), new Uint8Array(32)] }];
    const cases = [
      { type: 0, to: ECHO, accessList: [] },
      { type: 1, to: undefined, accessList },
      { type: 2, to: ECHO, accessList },
      { type: 2, to: undefined, accessList: [] },
    ] as const;
    for (const c of cases) {
      const u = {
        type: c.type,
        chainId: 262144n,
        nonce: c.type === 2 ? 0n : 300n,
        gasLimit: 21000n,
        to: c.to,
        value: c.to === undefined ? 0n : 10n ** 18n,
        data: c.to === undefined ? Uint8Array.from([0x60, 0x00]) : new Uint8Array(0),
        gasPrice: 7n * GWEI,
        maxFeePerGas: 9n * GWEI,
        maxPriorityFeePerGas: 0n,
        accessList: c.accessList,
      };
      let digest: Uint8Array | undefined;
      const raw = await signTransaction(u, (d) => {
        digest = d;
        return sig;
      });
      const base = {
        nonce: u.nonce,
        gasLimit: u.gasLimit,
        value: u.value,
        data: u.data,
        ...(u.to ? { to: u.to } : {}),
      };
      const list = u.accessList.map((e) => [e.address, [...e.storageKeys]] as [Uint8Array, Uint8Array[]]);
      const tx =
        u.type === 0
          ? createTx({ ...base, type: 0, gasPrice: u.gasPrice }, { common })
          : u.type === 1
            ? createTx({ ...base, type: 1, chainId: 262144n, gasPrice: u.gasPrice, accessList: list }, { common })
            : createTx(
                {
                  ...base,
                  type: 2,
                  chainId: 262144n,
                  maxFeePerGas: u.maxFeePerGas,
                  maxPriorityFeePerGas: 0n,
                  accessList: list,
                },
                { common },
              );
      expect(toData(digest as Uint8Array)).toBe(toData(tx.getHashedMessageToSign()));
      const r = BigInt(toData(sig.subarray(0, 32)));
      const s = BigInt(toData(sig.subarray(32, 64)));
      const signed = u.type === 0 ? tx.addSignature(1n + 262144n * 2n + 35n, r, s, false) : tx.addSignature(1n, r, s);
      expect(toData(raw)).toBe(toData(signed.serialize()));
    }
  });
});

describe("revert reasons", () => {
  test("default: Error(string), Panic(uint256), and undecodable data", () => {
    const err = Buffer.from(
      `08c379a0${"20".padStart(64, "0")}${"4".padStart(64, "0")}${Buffer.from("boom").toString("hex").padEnd(64, "0")}`,
      "hex",
    );
    expect(decodeRevertReason(err)).toBe("boom");
    expect(decodeRevertReason(Buffer.from(`4e487b71${"1".padStart(64, "0")}`, "hex"))).toBe("assert(false)");
    expect(decodeRevertReason(Buffer.from(`4e487b71${"99".padStart(64, "0")}`, "hex"))).toBe(
      "unknown panic code: 0x99",
    );
    expect(decodeRevertReason(Buffer.from("deadbeef", "hex"))).toBeUndefined();
    expect(decodeRevertReason(new Uint8Array(0))).toBeUndefined();
  });
});
