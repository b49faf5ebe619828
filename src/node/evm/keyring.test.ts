import { randomBytes } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { describe, expect, test } from "vitest";
import { deriveDevAccounts, keccak256 } from "../../app/evm/index.js";
import { DevKeys, signDigestWith, signerBackend } from "./keyring.js";

describe("dev keyring", () => {
  test("behavior: the native signer makes noble's signature (RFC 6979, low s) for every key and digest", () => {
    expect(signerBackend()).toBe("native");
    for (let i = 0; i < 50; i++) {
      const key = secp256k1.utils.randomSecretKey();
      const digest = randomBytes(32);
      expect(Buffer.from(signDigestWith(key, digest, "native")).toString("hex")).toBe(
        Buffer.from(signDigestWith(key, digest, "noble")).toString("hex"),
      );
    }
  });

  test("default: a dev account's signature recovers to its address", () => {
    const accounts = deriveDevAccounts();
    const keys = new DevKeys(accounts);
    const account = accounts[3];
    if (account === undefined) throw new RangeError("no dev account 3");
    const digest = keccak256(new TextEncoder().encode("cometh"));
    const sig = keys.signDigest(account.addressBytes, digest);
    expect(sig).toHaveLength(65);
    const recovered = secp256k1.Signature.fromBytes(sig.subarray(0, 64), "compact")
      .addRecoveryBit(sig[64] as number)
      .recoverPublicKey(digest)
      .toBytes(false);
    expect(Buffer.from(keccak256(recovered.subarray(1)).subarray(12))).toEqual(Buffer.from(account.addressBytes));
  });

  test("error: an account the keyring does not hold", () => {
    const keys = new DevKeys([]);
    expect(() => keys.signDigest(new Uint8Array(20), new Uint8Array(32))).toThrowErrorMatchingInlineSnapshot(
      `[NodeServiceError: unknown account 0x0000000000000000000000000000000000000000]`,
    );
  });
});
