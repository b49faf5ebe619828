import { pippenger } from "@noble/curves/abstract/curve.js";
import { bls12_381 as curve } from "@noble/curves/bls12-381.js";
import { ComethError } from "../../util/errors.js";
import type { PrecompileResult } from "../types.js";
import { failure, fixedBytes, outOfGas, success, toBigint } from "./result.js";

/**
 * 0x0b–0x11: BLS12-381 operations (EIP-2537 as activated in Prague), over @noble/curves.
 *
 * Encoding: a base-field element is 64 bytes, big-endian, its top 16 bytes zero and its value below
 * p; an Fp2 element is c0 ‖ c1; a G1 point is x ‖ y (128 bytes), a G2 point x ‖ y over Fp2 (256
 * bytes); all zeros is the point at infinity; a scalar is 32 bytes, any value. Points must be on
 * their curve; MSM and pairing inputs must also be in the r-order subgroup (addition's need not).
 */

const G1ADD_GAS = 375n;
const G2ADD_GAS = 600n;
const G1MUL_GAS = 12000n;
const G2MUL_GAS = 22500n;
const PAIRING_BASE_GAS = 37700n;
const PAIRING_PER_PAIR_GAS = 32600n;
const MAP_G1_GAS = 5500n;
const MAP_G2_GAS = 23800n;

/** EIP-2537's MSM discounts (per mille) by number of pairs k (index k − 1; the last for k > 128). */
const G1_MSM_DISCOUNT = [
  1000, 949, 848, 797, 764, 750, 738, 728, 719, 712, 705, 698, 692, 687, 682, 677, 673, 669, 665, 661, 658, 654, 651,
  648, 645, 642, 640, 637, 635, 632, 630, 627, 625, 623, 621, 619, 617, 615, 613, 611, 609, 608, 606, 604, 603, 601,
  599, 598, 596, 595, 593, 592, 591, 589, 588, 586, 585, 584, 582, 581, 580, 579, 577, 576, 575, 574, 573, 572, 570,
  569, 568, 567, 566, 565, 564, 563, 562, 561, 560, 559, 558, 557, 556, 555, 554, 553, 552, 551, 550, 549, 548, 547,
  547, 546, 545, 544, 543, 542, 541, 540, 540, 539, 538, 537, 536, 536, 535, 534, 533, 532, 532, 531, 530, 529, 528,
  528, 527, 526, 525, 525, 524, 523, 522, 522, 521, 520, 520, 519,
];
const G2_MSM_DISCOUNT = [
  1000, 1000, 923, 884, 855, 832, 812, 796, 782, 770, 759, 749, 740, 732, 724, 717, 711, 704, 699, 693, 688, 683, 679,
  674, 670, 666, 663, 659, 655, 652, 649, 646, 643, 640, 637, 634, 632, 629, 627, 624, 622, 620, 618, 615, 613, 611,
  609, 607, 606, 604, 602, 600, 598, 597, 595, 593, 592, 590, 589, 587, 586, 584, 583, 582, 580, 579, 578, 576, 575,
  574, 573, 571, 570, 569, 568, 567, 566, 565, 563, 562, 561, 560, 559, 558, 557, 556, 555, 554, 553, 552, 552, 551,
  550, 549, 548, 547, 546, 545, 545, 544, 543, 542, 541, 541, 540, 539, 538, 537, 537, 536, 535, 535, 534, 533, 532,
  532, 531, 530, 530, 529, 528, 528, 527, 526, 526, 525, 524, 524,
];

const { Fp, Fp2, Fp12, Fr } = curve.fields;
const G1 = curve.G1.Point;
const G2 = curve.G2.Point;
type G1Point = InstanceType<typeof G1>;
type G2Point = InstanceType<typeof G2>;
type Fp2Element = ReturnType<typeof Fp2.create>;

/**
 * The hashers' mapToCurve (map_to_curve then clear_cofactor). Its declared type (affine point from
 * bigint[]) is not what it does: for G1 (m = 1) it takes one bigint, and both return a projective point.
 */
const mapToG1 = curve.G1.mapToCurve as unknown as (u: bigint) => G1Point;
const mapToG2 = curve.G2.mapToCurve as unknown as (u: bigint[]) => G2Point;

const B1 = 4n;
const B2 = Fp2.create({ c0: 4n, c1: 4n });

/** An input that EIP-2537 rejects; the message is geth's. */
class BlsInputError extends ComethError {}

function fp(input: Uint8Array, at: number): bigint {
  for (let i = at; i < at + 16; i++) {
    if (input[i] !== 0) throw new BlsInputError("invalid field element top bytes");
  }
  const v = toBigint(input.subarray(at + 16, at + 64));
  if (v >= Fp.ORDER) throw new BlsInputError("invalid fp.Element encoding");
  return v;
}

function fp2(input: Uint8Array, at: number): Fp2Element {
  return Fp2.create({ c0: fp(input, at), c1: fp(input, at + 64) });
}

function decodeG1(input: Uint8Array, at: number, subgroup: boolean): G1Point {
  const x = fp(input, at);
  const y = fp(input, at + 64);
  if (x === 0n && y === 0n) return G1.ZERO;
  if (Fp.sqr(y) !== Fp.add(Fp.mul(Fp.sqr(x), x), B1)) throw new BlsInputError("invalid point: not on curve");
  const p = G1.fromAffine({ x, y });
  if (subgroup && !p.isTorsionFree()) throw new BlsInputError("g1 point is not on correct subgroup");
  return p;
}

function decodeG2(input: Uint8Array, at: number, subgroup: boolean): G2Point {
  const x = fp2(input, at);
  const y = fp2(input, at + 128);
  if (Fp2.is0(x) && Fp2.is0(y)) return G2.ZERO;
  if (!Fp2.eql(Fp2.sqr(y), Fp2.add(Fp2.mul(Fp2.sqr(x), x), B2))) {
    throw new BlsInputError("invalid point: not on curve");
  }
  const p = G2.fromAffine({ x, y });
  if (subgroup && !p.isTorsionFree()) throw new BlsInputError("g2 point is not on correct subgroup");
  return p;
}

function encodeG1(p: G1Point): Uint8Array {
  const out = new Uint8Array(128);
  if (p.is0()) return out;
  const { x, y } = p.toAffine();
  out.set(fixedBytes(x, 64), 0);
  out.set(fixedBytes(y, 64), 64);
  return out;
}

function encodeG2(p: G2Point): Uint8Array {
  const out = new Uint8Array(256);
  if (p.is0()) return out;
  const { x, y } = p.toAffine();
  out.set(fixedBytes(x.c0, 64), 0);
  out.set(fixedBytes(x.c1, 64), 64);
  out.set(fixedBytes(y.c0, 64), 128);
  out.set(fixedBytes(y.c1, 64), 192);
  return out;
}

function scalar(input: Uint8Array, at: number): bigint {
  return toBigint(input.subarray(at, at + 32)) % Fr.ORDER;
}

function run(gas: bigint, compute: () => Uint8Array): PrecompileResult {
  try {
    return success(gas, compute());
  } catch (err) {
    return failure(err instanceof BlsInputError ? err.message : "invalid input");
  }
}

/** geth's msmGas: k pairs at `perPair` each, discounted. */
function msmGas(k: number, perPair: bigint, discounts: number[]): bigint {
  if (k === 0) return 0n;
  const discount = discounts[Math.min(k, discounts.length) - 1] as number;
  return (BigInt(k) * perPair * BigInt(discount)) / 1000n;
}

/** 0x0b: two G1 points (no subgroup check). */
export function blsG1Add(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < G1ADD_GAS) return outOfGas();
  if (input.length !== 256) return failure("invalid input length");
  return run(G1ADD_GAS, () => encodeG1(decodeG1(input, 0, false).add(decodeG1(input, 128, false))));
}

/** 0x0d: two G2 points (no subgroup check). */
export function blsG2Add(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < G2ADD_GAS) return outOfGas();
  if (input.length !== 512) return failure("invalid input length");
  return run(G2ADD_GAS, () => encodeG2(decodeG2(input, 0, false).add(decodeG2(input, 256, false))));
}

/** 0x0c: k (G1 point, scalar) pairs of 160 bytes; the sum of the products. */
export function blsG1Msm(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const k = Math.floor(input.length / 160);
  const gas = msmGas(k, G1MUL_GAS, G1_MSM_DISCOUNT);
  if (gasLimit < gas) return outOfGas();
  if (input.length === 0 || input.length % 160 !== 0) return failure("invalid input length");
  return run(gas, () => {
    const points: G1Point[] = [];
    const scalars: bigint[] = [];
    for (let i = 0; i < k; i++) {
      const p = decodeG1(input, i * 160, true);
      const s = scalar(input, i * 160 + 128);
      if (p.is0() || s === 0n) continue;
      points.push(p);
      scalars.push(s);
    }
    if (points.length === 0) return encodeG1(G1.ZERO);
    if (points.length === 1) return encodeG1((points[0] as G1Point).multiplyUnsafe(scalars[0] as bigint));
    return encodeG1(pippenger(G1, points, scalars));
  });
}

/** 0x0e: k (G2 point, scalar) pairs of 288 bytes; the sum of the products. */
export function blsG2Msm(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const k = Math.floor(input.length / 288);
  const gas = msmGas(k, G2MUL_GAS, G2_MSM_DISCOUNT);
  if (gasLimit < gas) return outOfGas();
  if (input.length === 0 || input.length % 288 !== 0) return failure("invalid input length");
  return run(gas, () => {
    const points: G2Point[] = [];
    const scalars: bigint[] = [];
    for (let i = 0; i < k; i++) {
      const p = decodeG2(input, i * 288, true);
      const s = scalar(input, i * 288 + 256);
      if (p.is0() || s === 0n) continue;
      points.push(p);
      scalars.push(s);
    }
    if (points.length === 0) return encodeG2(G2.ZERO);
    if (points.length === 1) return encodeG2((points[0] as G2Point).multiplyUnsafe(scalars[0] as bigint));
    return encodeG2(pippenger(G2, points, scalars));
  });
}

const PAIRING_TRUE = fixedBytes(1n, 32);

/** 0x0f: k (G1, G2) pairs of 384 bytes; 1 when the product of their pairings is 1. */
export function blsPairing(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  const k = Math.floor(input.length / 384);
  const gas = PAIRING_BASE_GAS + PAIRING_PER_PAIR_GAS * BigInt(k);
  if (gasLimit < gas) return outOfGas();
  if (input.length === 0 || input.length % 384 !== 0) return failure("invalid input length");
  return run(gas, () => {
    const pairs: { g1: G1Point; g2: G2Point }[] = [];
    for (let i = 0; i < k; i++) {
      const g1 = decodeG1(input, i * 384, true);
      const g2 = decodeG2(input, i * 384 + 128, true);
      // e(O, Q) = e(P, O) = 1: the pair drops out (noble refuses the point at infinity)
      if (!g1.is0() && !g2.is0()) pairs.push({ g1, g2 });
    }
    return Fp12.eql(curve.pairingBatch(pairs), Fp12.ONE) ? PAIRING_TRUE.slice() : new Uint8Array(32);
  });
}

/** 0x10: an Fp element to G1 (RFC 9380 simplified SWU, 11-isogeny, cofactor cleared). */
export function blsMapFpToG1(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < MAP_G1_GAS) return outOfGas();
  if (input.length !== 64) return failure("invalid input length");
  return run(MAP_G1_GAS, () => encodeG1(mapToG1(fp(input, 0))));
}

/** 0x11: an Fp2 element to G2 (RFC 9380 simplified SWU, 3-isogeny, cofactor cleared). */
export function blsMapFp2ToG2(input: Uint8Array, gasLimit: bigint): PrecompileResult {
  if (gasLimit < MAP_G2_GAS) return outOfGas();
  if (input.length !== 128) return failure("invalid input length");
  return run(MAP_G2_GAS, () => encodeG2(mapToG2([fp(input, 0), fp(input, 64)])));
}
