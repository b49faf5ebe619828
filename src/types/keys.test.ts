import { describe, expect, test } from "vitest";
import { utf8ToBytes } from "../util/bytes.js";
import {
  ADDRESS_SIZE,
  addressFromPubKey,
  decodePubKey,
  encodePubKey,
  generateEd25519PrivKey,
  InvalidKeyError,
  KEY_TYPES,
  pubKeyFromPrivKey,
  sha256,
  signBytes,
  verifySignature,
} from "./index.js";

describe("ed25519", () => {
  test("default: sign and verify", () => {
    const priv = generateEd25519PrivKey();
    expect(priv.bytes.length).toBe(64);
    const pub = pubKeyFromPrivKey(priv);
    const msg = utf8ToBytes("hello");
    const sig = signBytes(priv, msg);
    expect(sig.length).toBe(64);
    expect(verifySignature(pub, msg, sig)).toBe(true);
    // Ed25519 is deterministic.
    expect(signBytes(priv, msg)).toEqual(sig);
  });

  test("behavior: a seed gives the same key", () => {
    const seed = sha256(utf8ToBytes("seed"));
    expect(generateEd25519PrivKey(seed)).toEqual(generateEd25519PrivKey(seed));
    expect(generateEd25519PrivKey()).not.toEqual(generateEd25519PrivKey());
  });

  test("error: wrong message, signature or key is rejected", () => {
    const priv = generateEd25519PrivKey();
    const pub = pubKeyFromPrivKey(priv);
    const msg = utf8ToBytes("hello");
    const sig = signBytes(priv, msg);
    expect(verifySignature(pub, utf8ToBytes("hellp"), sig)).toBe(false);
    expect(
      verifySignature(
        pub,
        msg,
        sig.map((b, i) => (i === 10 ? b ^ 1 : b)),
      ),
    ).toBe(false);
    expect(verifySignature(pubKeyFromPrivKey(generateEd25519PrivKey()), msg, sig)).toBe(false);
    expect(verifySignature(pub, msg, sig.subarray(0, 63))).toBe(false);
    expect(verifySignature({ type: KEY_TYPES.ed25519, bytes: new Uint8Array(31) }, msg, sig)).toBe(false);
    // Not a point on the curve: both verifiers refuse it without throwing.
    expect(verifySignature({ type: KEY_TYPES.ed25519, bytes: new Uint8Array(32).fill(0xff) }, msg, sig)).toBe(false);
  });

  test("behavior: a signature made or verified here is recognized again, only for the exact key, message and bytes", () => {
    const priv = generateEd25519PrivKey();
    const pub = pubKeyFromPrivKey(priv);
    const msg = utf8ToBytes("vote");
    const sig = signBytes(priv, msg);
    expect(verifySignature(pub, msg, sig)).toBe(true);
    expect(verifySignature(pub, msg, sig)).toBe(true);
    expect(verifySignature(pub, utf8ToBytes("votf"), sig)).toBe(false);
    expect(verifySignature(pubKeyFromPrivKey(generateEd25519PrivKey()), msg, sig)).toBe(false);
    // A key file whose stored public half is not its seed's: its signatures verify only under the real key.
    const forged = {
      type: KEY_TYPES.ed25519,
      bytes: Uint8Array.from([...priv.bytes.subarray(0, 32), ...new Uint8Array(32).fill(7)]),
    };
    const forgedSig = signBytes(forged, msg);
    expect(forgedSig).toEqual(sig);
    expect(verifySignature(pubKeyFromPrivKey(forged), msg, forgedSig)).toBe(false);
    expect(verifySignature(pub, msg, forgedSig)).toBe(true);
  });

  test("error: bad seed length", () => {
    expect(() => generateEd25519PrivKey(new Uint8Array(31))).toThrow(InvalidKeyError);
  });

  test("default: address and proto round trip", () => {
    const pub = pubKeyFromPrivKey(generateEd25519PrivKey());
    const addr = addressFromPubKey(pub);
    expect(addr.length).toBe(ADDRESS_SIZE);
    expect(addr).toEqual(sha256(pub.bytes).slice(0, 20));
    expect(decodePubKey(encodePubKey(pub))).toEqual(pub);
  });
});

describe("secp256k1", () => {
  test("default: sign and verify (sha256 prehash, low-S r||s)", () => {
    const priv = { type: KEY_TYPES.secp256k1, bytes: sha256(utf8ToBytes("secp")) };
    const pub = pubKeyFromPrivKey(priv);
    expect(pub.bytes.length).toBe(33);
    const msg = utf8ToBytes("hello");
    const sig = signBytes(priv, msg);
    expect(sig.length).toBe(64);
    expect(verifySignature(pub, msg, sig)).toBe(true);
    expect(verifySignature(pub, utf8ToBytes("x"), sig)).toBe(false);
    expect(decodePubKey(encodePubKey(pub))).toEqual(pub);
  });
});
