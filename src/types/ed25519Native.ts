import { createRequire } from "node:module";
import { dirname } from "node:path";

/** What the signer uses of libsodium's binding (the `sodium-native` package). */
interface Sodium {
  crypto_sign_seed_keypair(pk: Uint8Array, sk: Uint8Array, seed: Uint8Array): void;
  crypto_sign_detached(sig: Uint8Array, msg: Uint8Array, sk: Uint8Array): void;
}

/**
 * libsodium's Ed25519 signing, loaded on first use; undefined when it does not load, and node:crypto
 * (OpenSSL) signs instead (keys.ts). Ed25519 signatures are deterministic (RFC 8032), so both give the
 * same bytes for the same seed and message (ed25519Native.test.ts compares them).
 *
 * Why: a block costs one signature (the precommit), and OpenSSL 3's one-shot sign, as node:crypto
 * calls it, sets up a signing context and looks the algorithm up in its provider on every call:
 * measured on the 2-core machine, 42–70 µs a signature against libsodium's 20–38 µs, and 80–130 µs
 * against ~40–60 inside a dev chain mining blocks (docs/dev-chain.md "Mining").
 *
 * Verification stays with node:crypto: CometBFT's rules for which signatures are valid are ZIP 215's,
 * and libsodium's verifier is stricter.
 */
let sodium: Sodium | null | undefined;

/** libsodium's binding, loaded on the first call; null when it does not load. */
function loadedSodium(): Sodium | null {
  if (sodium === undefined) sodium = loadSodium();
  return sodium;
}

function loadSodium(): Sodium | null {
  const require = createRequire(import.meta.url);
  try {
    // The prebuilt addon by its path takes ~2 ms to load; the package's own resolver (require-addon) ~12.
    const dir = dirname(require.resolve("sodium-native/package.json"));
    return require(`${dir}/prebuilds/${process.platform}-${process.arch}/sodium-native.node`) as Sodium;
  } catch {
    try {
      return require("sodium-native") as Sodium;
    } catch {
      return null;
    }
  }
}

/** libsodium's secret keys (seed ‖ public key, the public half derived from the seed), by seed array. */
const secretKeys = new WeakMap<Uint8Array, Uint8Array>();

/**
 * The Ed25519 signature of `msg` by the key whose 32-byte seed starts `key` (a CometBFT private key:
 * seed ‖ public key), or undefined when libsodium is not available.
 */
export function sodiumSign(key: Uint8Array, msg: Uint8Array): Uint8Array | undefined {
  const lib = loadedSodium();
  if (lib === null) return undefined;
  let sk = secretKeys.get(key);
  if (sk === undefined) {
    sk = new Uint8Array(64);
    lib.crypto_sign_seed_keypair(new Uint8Array(32), sk, key.subarray(0, 32));
    secretKeys.set(key, sk);
  }
  const sig = new Uint8Array(64);
  lib.crypto_sign_detached(sig, msg, sk);
  return sig;
}

/** Which implementation signs Ed25519: "libsodium", or "openssl" (node:crypto) when it did not load. */
export function ed25519SignerBackend(): "libsodium" | "openssl" {
  return loadedSodium() === null ? "openssl" : "libsodium";
}
