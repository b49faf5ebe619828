import { bn254 as curve } from "@noble/curves/bn254.js";
import { ComethError } from "../../util/errors.js";
import type { PrecompileResult } from "../types.js";
import { failure, fixedBytes, outOfGas, padRight, success, toBigint } from "./result.js";

/**
 * 0x06–0x08: alt_bn128 (bn254) addition, scalar multiplication and pairing check (EIP-196/197, gas of
 * EIP-1108), over @noble/curves. Coordinates are 32-byte big-endian words below the field modulus;
 * (0, 0) is the point at infinity; a G2 coordinate is imaginary part first (EIP-197).
 */

const ADD_GAS = 150n;
const MUL_GAS = 6000n;
const PAIRING_BASE_GAS = 45000n;
const PAIRING_PER_PAIR_GAS = 34000n;

const { Fp, Fp2, Fp12, Fr } = curve.fields;
type G1 = InstanceType<typeof curve.G1.Point>;
type G2 = InstanceType<typeof curve.G2.Point>;

/** geth's errors (crypto/bn256). */
class CurveInputError extends ComethError {}

function coordinate(input: Uint8Array, at: number): bigint {
  const v = toBigint(input.subarray(at, at + 32));
  if (v >= Fp.ORDER) throw new CurveInputError("bn256: coordinate exceeds modulus");
  return v;
}

function decodeG1(input: Uint8Array, at: number): G1 {
  const x = coordinate(input, at);
  const y = coordinate(input, at + 32);
  if (x === 0n && y === 0n) return curve.G1.Point.ZERO;
  const p = curve.G1.Point.fromAffine({ x, y });
  try {
    p.assertValidity();
  } catch {
    throw new CurveInputError("bn256: malformed point");
  }
  return p;
}

function decodeG2(input: Uint8Array, at: number): G2 {
  const xIm = coordinate(input, at);
  const xRe = coordinate(input, at + 32);
  const yIm = coordinate(input, at + 64);
  const yRe = coordinate(input, at + 96);
  if (xIm === 0n && xRe === 0n && yIm === 0n && yRe === 0n) return curve.G2.Point.ZERO;
  const p = curve.G2.Point.fromAffine({
    x: Fp2.create({ c0: xRe, c1: xIm }),
    y: Fp2.create({ c0: yRe, c1: yIm }),
  });
  try {
    p.assertValidity(); // on the twist and in the r-torsion subgroup
  } catch {
    throw new CurveInputError("bn256: malformed point");
  }
  return p;
}

function encodeG1(p: G1): Uint8Array {
  const out = new Uint8Array(64);
  if (p.is0()) return out;
  const { x, y } = p.toAffine();
  out.set(fixedBytes(x, 32), 0);
  out.set(fixedBytes(y, 32), 32);
  return out;
}

function run(gas: bigint, compute: () => Uint8Array): PrecompileResult {
  try {
    return success(gas, compute());
  } catch (err) {
    return failure(err instanceof CurveInputError ? err.message : "bn256: invalid input");
  }
}

/** 0x06: the input right-padded (or cut) to two points. */
export function bn254Add(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < ADD_GAS) return outOfGas();
  const data = padRight(input, 128);
  return run(ADD_GAS, () => encodeG1(decodeG1(data, 0).add(decodeG1(data, 64))));
}

/** 0x07: a point and a 256-bit scalar (any value: G1 has prime order, so it acts modulo r). */
export function bn254Mul(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < MUL_GAS) return outOfGas();
  const data = padRight(input, 96);
  return run(MUL_GAS, () => {
    const p = decodeG1(data, 0);
    const k = toBigint(data.subarray(64, 96)) % Fr.ORDER;
    return encodeG1(k === 0n || p.is0() ? curve.G1.Point.ZERO : p.multiplyUnsafe(k));
  });
}

const PAIRING_TRUE = fixedBytes(1n, 32);
const PAIRING_FALSE = new Uint8Array(32);

/** 0x08: k (G1, G2) pairs, 192 bytes each; 1 when the product of their pairings is 1. */
export function bn254Pairing(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (input.length % 192 !== 0) return failure("bad elliptic curve pairing size");
  const k = input.length / 192;
  const gas = PAIRING_BASE_GAS + PAIRING_PER_PAIR_GAS * BigInt(k);
  if (gasLimit < gas) return outOfGas();
  return run(gas, () => {
    const pairs: { g1: G1; g2: G2 }[] = [];
    for (let i = 0; i < k; i++) {
      const g1 = decodeG1(input, i * 192);
      const g2 = decodeG2(input, i * 192 + 64);
      // e(O, Q) = e(P, O) = 1: the pair drops out (noble refuses the point at infinity)
      if (!g1.is0() && !g2.is0()) pairs.push({ g1, g2 });
    }
    const product = curve.pairingBatch(pairs);
    return Fp12.eql(product, Fp12.ONE) ? PAIRING_TRUE.slice() : PAIRING_FALSE.slice();
  });
}
