import { ripemd160 as nobleRipemd160 } from "@noble/hashes/legacy.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { keccak256, recoverPublicKey } from "../crypto.js";
import type { PrecompileResult } from "../types.js";
import { outOfGas, padRight, success, toBigint, words } from "./result.js";

/** 0x01–0x04: ecrecover, sha256, ripemd160, identity (Frontier gas, unchanged since). */

const ECRECOVER_GAS = 3000n;
/** secp256k1's group order: r and s must lie in [1, n) (geth's ValidateSignatureValues, not homestead). */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const EMPTY = new Uint8Array(0);

/** 0x01: the address that signed hash ‖ v ‖ r ‖ s; empty output (not a failure) when none does. */
export function ecrecover(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < ECRECOVER_GAS) return outOfGas();
  const data = padRight(input, 128);
  // v is a whole word: 27 or 28 in its last byte, zeros before (geth allZero(input[32:63]))
  for (let i = 32; i < 63; i++) if (data[i] !== 0) return success(ECRECOVER_GAS, EMPTY);
  const v = data[63] as number;
  if (v !== 27 && v !== 28) return success(ECRECOVER_GAS, EMPTY);
  const r = data.subarray(64, 96);
  const s = data.subarray(96, 128);
  const rn = toBigint(r);
  const sn = toBigint(s);
  if (rn === 0n || sn === 0n || rn >= SECP256K1_N || sn >= SECP256K1_N) return success(ECRECOVER_GAS, EMPTY);
  let publicKey: Uint8Array;
  try {
    publicKey = recoverPublicKey(data.subarray(0, 32), v - 27, r, s);
  } catch {
    return success(ECRECOVER_GAS, EMPTY);
  }
  const out = new Uint8Array(32);
  out.set(keccak256(publicKey).subarray(12), 12);
  return success(ECRECOVER_GAS, out);
}

/** 0x02: 60 + 12 per word. */
export function sha256(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const gas = 60n + 12n * words(input.length);
  if (gasLimit < gas) return outOfGas();
  return success(gas, nobleSha256(input));
}

/** 0x03: 600 + 120 per word; the 20-byte digest left-padded to a word. */
export function ripemd160(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const gas = 600n + 120n * words(input.length);
  if (gasLimit < gas) return outOfGas();
  const out = new Uint8Array(32);
  out.set(nobleRipemd160(input), 12);
  return success(gas, out);
}

/** 0x04: 15 + 3 per word; a copy of the input (the caller may write to its memory afterwards). */
export function identity(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const gas = 15n + 3n * words(input.length);
  if (gasLimit < gas) return outOfGas();
  return success(gas, input.slice());
}
