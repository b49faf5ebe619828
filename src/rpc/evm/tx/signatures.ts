import { secp256k1 } from "@noble/curves/secp256k1.js";
import { keccak256 } from "../../../evm/index.js";

/**
 * Keccak-256 is the EVM engine's (WebAssembly, ~0.6 µs for 64 bytes against ~12 µs for @noble/hashes;
 * src/evm/crypto.ts), so that signing a dev account's tx hashes it as fast as the engine does.
 */
export { keccak256 };

/** EIP-191 personal messages and signature recovery (eth_sign, personal_sign, personal_ecRecover). */

/** keccak256("\x19Ethereum Signed Message:\n" + len(data) + data). */
export function personalMessageHash(data: Uint8Array): Uint8Array {
  const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${data.length}`, "utf8");
  return keccak256(Buffer.concat([prefix, data]));
}

/** The 20-byte address of an uncompressed secp256k1 public key (65 bytes, 0x04 prefix). */
export function publicKeyToAddress(pub: Uint8Array): Uint8Array {
  return keccak256(pub.subarray(1)).subarray(12);
}

/** Recovers the signer of `digest` from r‖s‖recovery (recovery 0/1). Undefined when invalid. */
export function recoverAddress(digest: Uint8Array, sig: Uint8Array): Uint8Array | undefined {
  if (sig.length !== 65) return undefined;
  const recovery = sig[64] as number;
  if (recovery > 1) return undefined;
  try {
    const s = secp256k1.Signature.fromBytes(sig.subarray(0, 64), "compact").addRecoveryBit(recovery);
    const point = s.recoverPublicKey(digest);
    return publicKeyToAddress(point.toBytes(false));
  } catch {
    return undefined;
  }
}
