import { createRequire } from "node:module";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { type DevAccount, keccak256 } from "../../app/evm/index.js";
import type { DevKeyring } from "../../rpc/evm/index.js";
import { NodeServiceError } from "../errors.js";

/** What the signer uses of the `secp256k1` package's native binding (libsecp256k1). */
interface NativeSigner {
  ecdsaSign(msg32: Uint8Array, secretKey: Uint8Array): { signature: Uint8Array; recid: number };
}

/**
 * libsecp256k1 (the binding the EVM engine recovers senders with) when it loads, else undefined and
 * @noble/curves signs. Both make RFC 6979 signatures with a low s, so they sign a digest alike
 * (keyring.test.ts compares them); measured on the busy 2-core machine, one signature took ~0.2 ms
 * natively and ~6 ms in noble's JavaScript, inside every eth_sendTransaction.
 */
function loadNativeSigner(): NativeSigner | undefined {
  try {
    // `secp256k1/bindings` is the N-API build alone; the package root silently falls back to elliptic (JS).
    return createRequire(import.meta.url)("secp256k1/bindings") as NativeSigner;
  } catch {
    return undefined;
  }
}

const nativeSigner = loadNativeSigner();

/** Which implementation signs: "native" (libsecp256k1) or "noble" (pure JS). */
export function signerBackend(): "native" | "noble" {
  return nativeSigner === undefined ? "noble" : "native";
}

/** r ‖ s ‖ yParity of `digest` under `key`: natively when the binding loaded, else with noble. */
export function signDigestWith(
  key: Uint8Array,
  digest: Uint8Array,
  backend: "native" | "noble" = "native",
): Uint8Array {
  const out = new Uint8Array(65);
  if (backend === "native" && nativeSigner !== undefined) {
    const { signature, recid } = nativeSigner.ecdsaSign(digest, key);
    out.set(signature, 0);
    out[64] = recid;
    return out;
  }
  const sig = secp256k1.sign(digest, key, { prehash: false, format: "recovered" });
  // noble's recovered format is recovery ‖ r ‖ s; the RPC wants r ‖ s ‖ yParity.
  out.set(sig.subarray(1, 65), 0);
  out[64] = sig[0] as number;
  return out;
}

/** The RPC's `keyring`: the dev accounts' keys (and keys imported through personal_*), held in memory by this node. */
export class DevKeys implements DevKeyring {
  readonly #keys = new Map<string, Uint8Array>();

  constructor(accounts: readonly DevAccount[]) {
    for (const a of accounts) this.#keys.set(hexKey(a.addressBytes), Buffer.from(a.privateKey.slice(2), "hex"));
  }

  accounts(): Uint8Array[] {
    return [...this.#keys.keys()].map((k) => Buffer.from(k, "hex"));
  }

  signDigest(address: Uint8Array, digest: Uint8Array): Uint8Array {
    const key = this.#keys.get(hexKey(address));
    if (key === undefined) throw new NodeServiceError(`unknown account 0x${hexKey(address)}`);
    return signDigestWith(key, digest);
  }

  importRawKey(privateKey: Uint8Array): Uint8Array {
    const pub = secp256k1.getPublicKey(privateKey, false);
    const address = keccak256(pub.subarray(1)).subarray(12);
    this.#keys.set(hexKey(address), Uint8Array.from(privateKey));
    return address;
  }

  newAccount(): Uint8Array {
    return this.importRawKey(secp256k1.utils.randomSecretKey());
  }
}

function hexKey(b: Uint8Array): string {
  return Buffer.from(b).toString("hex");
}
