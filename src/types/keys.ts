import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from "node:crypto";
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ripemd160 } from "@noble/hashes/legacy.js";
import { bytesEqual } from "../util/bytes.js";
import { ComethError } from "../util/errors.js";
import { sodiumSign } from "./ed25519Native.js";
import { sha256 } from "./merkle.js";

/** Key types a validator or node can hold. Only Ed25519 is produced by cometh; secp256k1 is decoded. */
export const KEY_TYPES = { ed25519: "ed25519", secp256k1: "secp256k1" } as const;
export type KeyType = (typeof KEY_TYPES)[keyof typeof KEY_TYPES];

export interface PubKey {
  type: KeyType;
  bytes: Uint8Array;
}

export interface PrivKey {
  type: KeyType;
  /** Ed25519: 64 bytes (32-byte seed followed by the 32-byte public key), as CometBFT stores it. */
  bytes: Uint8Array;
}

/** crypto.AddressSize: validator and node addresses are 20 bytes. */
export const ADDRESS_SIZE = 20;
export const ED25519_PUBKEY_SIZE = 32;
export const ED25519_SIGNATURE_SIZE = 64;
export const SECP256K1_PUBKEY_SIZE = 33;

/** Thrown for key material of the wrong type or size. */
export class InvalidKeyError extends ComethError {}

// DER wrappers that let node:crypto (OpenSSL) load raw Ed25519 keys (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

// KeyObjects are costly to build; validator sets and privvals keep their key byte arrays alive, so
// caching by array identity makes repeated verification cheap without pinning memory.
const publicKeyObjects = new WeakMap<Uint8Array, KeyObject>();
const privateKeyObjects = new WeakMap<Uint8Array, KeyObject>();
const addresses = new WeakMap<Uint8Array, Uint8Array>();

function ed25519PrivateKeyObject(priv: PrivKey): KeyObject {
  let key = privateKeyObjects.get(priv.bytes);
  if (!key) {
    const der = Buffer.concat([ED25519_PKCS8_PREFIX, priv.bytes.subarray(0, 32)]);
    key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
    privateKeyObjects.set(priv.bytes, key);
  }
  return key;
}

const signingPublicKeys = new WeakMap<Uint8Array, Uint8Array>();

/** The public key an Ed25519 private key's signatures verify under (from its seed). */
function signingPublicKey(priv: PrivKey): Uint8Array {
  let pub = signingPublicKeys.get(priv.bytes);
  if (pub === undefined) {
    const spki = createPublicKey(ed25519PrivateKeyObject(priv)).export({ format: "der", type: "spki" });
    pub = new Uint8Array(spki.subarray(spki.length - 32));
    signingPublicKeys.set(priv.bytes, pub);
  }
  return pub;
}

function ed25519PublicKeyObject(pub: Uint8Array): KeyObject {
  let key = publicKeyObjects.get(pub);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, pub]), format: "der", type: "spki" });
    publicKeyObjects.set(pub, key);
  }
  return key;
}

function ed25519PubFromSeed(seed: Uint8Array): Uint8Array {
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, seed]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({
    format: "der",
    type: "spki",
  });
  return new Uint8Array(spki.subarray(ED25519_SPKI_PREFIX.length));
}

/** ed25519.GenPrivKeyFromSecret uses sha256(secret) as the seed; pass a 32-byte seed here, or none for a random key. */
export function generateEd25519PrivKey(seed?: Uint8Array): PrivKey {
  const s = seed ?? new Uint8Array(randomBytes(32));
  if (s.length !== 32) throw new InvalidKeyError(`ed25519 seed must be 32 bytes, got ${s.length}`);
  const bytes = new Uint8Array(64);
  bytes.set(s, 0);
  bytes.set(ed25519PubFromSeed(s), 32);
  return { type: KEY_TYPES.ed25519, bytes };
}

export function pubKeyFromPrivKey(pk: PrivKey): PubKey {
  if (pk.type === KEY_TYPES.ed25519) {
    if (pk.bytes.length !== 64)
      throw new InvalidKeyError(`ed25519 private key must be 64 bytes, got ${pk.bytes.length}`);
    // CometBFT's PrivKey.PubKey() trusts the public half stored after the seed.
    return { type: KEY_TYPES.ed25519, bytes: pk.bytes.slice(32) };
  }
  if (pk.bytes.length !== 32)
    throw new InvalidKeyError(`secp256k1 private key must be 32 bytes, got ${pk.bytes.length}`);
  return { type: KEY_TYPES.secp256k1, bytes: secp256k1.getPublicKey(pk.bytes, true) };
}

/**
 * Ed25519: first 20 bytes of sha256(pubkey). secp256k1: RIPEMD160(SHA256(33-byte compressed key)),
 * as crypto/secp256k1 (docs/cometbft-hashes.md "Keys and addresses").
 */
export function addressFromPubKey(pk: PubKey): Uint8Array {
  let addr = addresses.get(pk.bytes);
  if (!addr) {
    addr = pk.type === KEY_TYPES.secp256k1 ? ripemd160(sha256(pk.bytes)) : sha256(pk.bytes).slice(0, ADDRESS_SIZE);
    addresses.set(pk.bytes, addr);
  }
  return addr.slice();
}

export function pubKeyEquals(a: PubKey, b: PubKey): boolean {
  return a.type === b.type && bytesEqual(a.bytes, b.bytes);
}

/**
 * Ed25519 (key, message, signature) triples known to be valid: ones verified, and ones this process
 * signed. A vote is verified when it is added and again inside the next block's LastCommit, and a
 * validator verifies its own votes; Ed25519 verification is deterministic, so the exact triple seen
 * valid before is valid again. Keyed by signature, checked byte for byte; the oldest go first.
 */
const VERIFIED_MAX = 4096;
const verified = new Map<string, { readonly pub: Uint8Array; readonly msg: Uint8Array }>();

function sigKey(sig: Uint8Array): string {
  return Buffer.from(sig.buffer, sig.byteOffset, sig.byteLength).toString("latin1");
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

function wasVerified(pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  const seen = verified.get(sigKey(sig));
  return seen !== undefined && sameBytes(seen.pub, pub) && sameBytes(seen.msg, msg);
}

function rememberVerified(pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): void {
  const key = sigKey(sig);
  if (verified.has(key)) return;
  verified.set(key, { pub: Uint8Array.from(pub), msg: Uint8Array.from(msg) });
  if (verified.size > VERIFIED_MAX) verified.delete(verified.keys().next().value as string);
}

/** Signs msg. Ed25519 signs the bytes; secp256k1 signs sha256(msg) with a low-S 64-byte r‖s, as CometBFT. */
export function signBytes(priv: PrivKey, msg: Uint8Array): Uint8Array {
  if (priv.type === KEY_TYPES.ed25519) {
    if (priv.bytes.length !== 64)
      throw new InvalidKeyError(`ed25519 private key must be 64 bytes, got ${priv.bytes.length}`);
    const sig = sodiumSign(priv.bytes, msg) ?? new Uint8Array(sign(null, msg, ed25519PrivateKeyObject(priv)));
    // Our own signature is valid by construction under the key it was made with (derived from the
    // seed, not the stored public half): consensus verifying our vote again costs nothing.
    rememberVerified(signingPublicKey(priv), msg, sig);
    return sig;
  }
  return secp256k1.sign(msg, priv.bytes, { prehash: true, lowS: true });
}

/**
 * CometBFT verifies Ed25519 with ZIP-215 rules (curve25519-voi). OpenSSL's RFC 8032 check accepts
 * a subset of those, so a signature it rejects gets a second, ZIP-215 check before it is refused;
 * honest signatures take only the fast path.
 */
export function verifySignature(pub: PubKey, msg: Uint8Array, sig: Uint8Array): boolean {
  if (pub.type === KEY_TYPES.ed25519) {
    if (pub.bytes.length !== ED25519_PUBKEY_SIZE || sig.length !== ED25519_SIGNATURE_SIZE) return false;
    if (wasVerified(pub.bytes, msg, sig)) return true;
    let ok = false;
    try {
      ok = verify(null, msg, ed25519PublicKeyObject(pub.bytes), sig);
    } catch {
      // OpenSSL refuses some encodings outright; ZIP-215 below decides.
    }
    if (!ok) {
      try {
        ok = ed25519.verify(sig, msg, pub.bytes, { zip215: true });
      } catch {
        ok = false;
      }
    }
    if (ok) rememberVerified(pub.bytes, msg, sig);
    return ok;
  }
  if (pub.bytes.length !== SECP256K1_PUBKEY_SIZE || sig.length !== 64) return false;
  try {
    // lowS rejects malleable signatures, as CometBFT's secp256k1 VerifySignature does.
    return secp256k1.verify(sig, msg, pub.bytes, { prehash: true, lowS: true });
  } catch {
    return false;
  }
}
