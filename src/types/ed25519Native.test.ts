import { createPrivateKey, randomBytes, sign } from "node:crypto";
import { describe, expect, test } from "vitest";
import { ed25519SignerBackend, sodiumSign } from "./ed25519Native.js";
import { generateEd25519PrivKey, pubKeyFromPrivKey, signBytes, verifySignature } from "./keys.js";

const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** node:crypto's (OpenSSL's) Ed25519 signature of msg by the key whose seed starts `key`. */
function opensslSign(key: Uint8Array, msg: Uint8Array): Uint8Array {
  const der = Buffer.concat([PKCS8_PREFIX, key.subarray(0, 32)]);
  return new Uint8Array(sign(null, msg, createPrivateKey({ key: der, format: "der", type: "pkcs8" })));
}

describe("Ed25519 signing with libsodium", () => {
  test("behavior: libsodium loads on this machine (sodium-native's prebuilt addon)", () => {
    expect(ed25519SignerBackend()).toBe("libsodium");
  });

  test("behavior: libsodium's signatures are OpenSSL's, byte for byte, for any seed and message", () => {
    for (let i = 0; i < 50; i++) {
      const priv = generateEd25519PrivKey();
      const msg = randomBytes(i * 7);
      const ours = sodiumSign(priv.bytes, msg);
      expect(ours).toEqual(opensslSign(priv.bytes, msg));
      expect(signBytes(priv, msg)).toEqual(ours);
      expect(verifySignature(pubKeyFromPrivKey(priv), msg, ours as Uint8Array)).toBe(true);
    }
  });

  test("behavior: the public half is derived from the seed, not read from the key's last 32 bytes", () => {
    const priv = generateEd25519PrivKey();
    const wrongHalf = Uint8Array.from(priv.bytes);
    wrongHalf.fill(9, 32);
    const msg = new TextEncoder().encode("vote");
    expect(sodiumSign(wrongHalf, msg)).toEqual(opensslSign(priv.bytes, msg));
  });
});
