import { RLP } from "@ethereumjs/rlp";
import { bigintToBytes } from "./bytes.js";
import { keccak256, publicKeyToAddress, recoverPublicKey } from "./crypto.js";
import type { Authorization } from "./types.js";
import { wordToBytes } from "./words.js";

/**
 * EIP-7702 authority recovery: the signer of keccak256(0x05 ‖ rlp([chain_id, address, nonce])). A tuple
 * whose signature cannot name a signer keeps `authority: undefined` and is skipped when applied (geth's
 * SetCodeAuthorization.Authority: y_parity 0 or 1, r and s in [1, n), s in the lower half (EIP-2)).
 */

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;
const MAGIC = Uint8Array.of(0x05);

/** A signed tuple as a transaction or an eth_call carries it. */
export interface SignedAuthorization {
  chainId: bigint;
  address: Uint8Array;
  nonce: bigint;
  yParity: bigint;
  r: bigint;
  s: bigint;
}

export function recoverAuthorization(a: SignedAuthorization): Authorization {
  return { chainId: a.chainId, address: a.address, nonce: a.nonce, authority: recoverAuthority(a) };
}

function recoverAuthority(a: SignedAuthorization): Uint8Array | undefined {
  if (a.yParity > 1n || a.r === 0n || a.s === 0n || a.r >= SECP256K1_N || a.s > HALF_N) return undefined;
  if (a.address.length !== 20) return undefined;
  const payload = RLP.encode([bigintToBytes(a.chainId), a.address, bigintToBytes(a.nonce)]);
  const msg = new Uint8Array(payload.length + 1);
  msg.set(MAGIC);
  msg.set(payload, 1);
  try {
    const pub = recoverPublicKey(keccak256(msg), Number(a.yParity), wordToBytes(a.r), wordToBytes(a.s));
    return publicKeyToAddress(pub);
  } catch {
    return undefined;
  }
}
