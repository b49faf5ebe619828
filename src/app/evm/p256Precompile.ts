import { p256 } from "@noble/curves/nist.js";
import { bytesToBigint } from "./records.js";

/**
 * Cosmos EVM's P256 precompile (precompiles/p256, RIP-7212), which evmd's genesis enables: secp256r1
 * signature verification for passkey (WebAuthn) wallets. Input hash ‖ r ‖ s ‖ x ‖ y (160 bytes);
 * output 32 bytes ending in 1 when the signature verifies, empty otherwise (wrong length, r or s
 * outside [1, n), a public key off the curve or at infinity); 3450 gas, charged in every case.
 * Ethereum's Osaka version (EIP-7951, in @ethereumjs/evm behind EIP 7951) costs 6900, so it is
 * given to the engine (engine/precompiles/cosmos.ts) with Cosmos EVM's price instead.
 */

export const P256_PRECOMPILE_ADDRESS = "0x0000000000000000000000000000000000000100";
/** precompiles/p256 VerifyGas. */
export const P256_VERIFY_GAS = 3450n;

const INPUT_LENGTH = 160;
/** The curve's group order n. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const word = (d: Uint8Array, at: number): bigint => bytesToBigint(d.subarray(at, at + 32));

/** Go's crypto/ecdsa.Verify over P-256 with the key checks of Cosmos EVM's crypto/secp256r1. */
export function verifyP256(input: Uint8Array): boolean {
  if (input.length !== INPUT_LENGTH) return false;
  const r = word(input, 32);
  const s = word(input, 64);
  const x = word(input, 96);
  const y = word(input, 128);
  if (r === 0n || s === 0n || r >= N || s >= N) return false;
  if (x === 0n && y === 0n) return false;
  try {
    const key = p256.Point.fromAffine({ x, y });
    key.assertValidity(); // coordinates in the field and on the curve
    return p256.verify(input.subarray(32, 96), input.subarray(0, 32), key.toBytes(false), {
      prehash: false,
      lowS: false,
    });
  } catch {
    return false;
  }
}
