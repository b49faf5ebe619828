import { secp256k1 } from "@noble/curves/secp256k1.js";
import { type DevAccount, keccak256 } from "../../app/evm/index.js";
import type { DevKeyring } from "../../rpc/evm/index.js";
import { NodeServiceError } from "../errors.js";

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
    const sig = secp256k1.sign(digest, key, { prehash: false, format: "recovered" });
    // noble's recovered format is recovery ‖ r ‖ s; the RPC wants r ‖ s ‖ yParity.
    const out = new Uint8Array(65);
    out.set(sig.subarray(1, 65), 0);
    out[64] = sig[0] as number;
    return out;
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
